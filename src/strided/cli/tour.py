"""``python -m strided tour``: the seed experiments, reproduced live from the library.

Each section prints what the library computes now, never stored text, with a
one-line note on what to look at.  Every seed has its sections: 000 (candle's
layouts, blocks, matmul layouts), 001 (ravel and unravel), 002 (CuTe layouts,
figure 7), 003 (CANN's views), 004 (views, copies, the graph, threads).  On a
first run the kernels compile (numba caches them for later runs): the tour
says so and times each section.
"""

from __future__ import annotations

import glob
import os
import time

from ..layout import Layout
from ..printing import format_blocks, format_list


def format_layout_row(name: str, lay: Layout) -> str:
    return (
        f"{name:>30}: dims={format_list(lay.shape)} stride={format_list(lay.stride)} off={lay.offset} "
        f"contiguous={str(lay.is_contiguous()).lower()} -> {format_blocks(lay.strided_blocks())}"
    )


def seed_layouts() -> list[tuple[str, Layout]]:
    """The views of seed 000's layout experiment on a (2, 3, 4) tensor."""
    x = Layout.contiguous((2, 3, 4))
    return [
        ("x (2,3,4)", x),
        ("x.narrow(2,1,2)", x.narrow(2, 1, 2)),
        ("x.narrow(1,1,2)", x.narrow(1, 1, 2)),
        ("x.transpose(1,2)", x.transpose(1, 2)),
        ("x.i(0).t()", x.select(0, 0).transpose(0, 1)),
        ("x.narrow(0,1,1).narrow(1,1,1)", x.narrow(0, 1, 1).narrow(1, 1, 1)),
        ("bcast (1,4)->(3,4)", Layout.contiguous((1, 4)).broadcast_as((3, 4))),
    ]


def section(title: str, note: str) -> None:
    print()
    print(f"== {title}")
    print(f"   {note}")


def tour_layouts() -> None:
    section(
        "seed 000: layouts of views of a (2,3,4) tensor, and their StridedBlocks",
        "views only change (shape, stride, offset); kernels walk the blocks on the right.",
    )
    for name, lay in seed_layouts():
        print(format_layout_row(name, lay))

    section("seed 000: the strided_index odometer", "row-major logical order, positions kept incrementally.")
    x = Layout.contiguous((2, 3, 4))
    print(f"strided_index of x.transpose(1,2): {format_list(x.transpose(1, 2).strided_index())}")

    section("seed 000: the (4,1).t() puzzle", "size-1 dims never affect addressing, so contiguity ignores them.")
    odd = Layout.contiguous((4, 1)).transpose(0, 1)
    print(f"(4,1).t(): dims={format_list(odd.shape)} stride={format_list(odd.stride)} "
          f"contiguous={str(odd.is_contiguous()).lower()}")


def tour_ravel() -> None:
    from .. import cute

    section(
        "seed 001: ravel and unravel on a [2,2,2] tensor",
        "row-major (last index fastest) is what tensors use; column-major is CuTe's default order.",
    )
    row = Layout.contiguous((2, 2, 2))
    for i in range(8):
        r = row.unravel(i)
        c = cute.idx2crd(i, (2, 2, 2))
        print(f"{i} -> row-major {list(r)} (ravel back: {row.offset_of(r)})   column-major {list(c)}")
    import strided as sd

    t = sd.arange(6, dtype=sd.f32).reshape(2, 3)
    print(f"t = arange(6) as [2,3]: t[1, 2] = {t[1, 2].item():g}, ravel_index([1,2]) = 1*3 + 2 = "
          f"{Layout.contiguous((2, 3)).offset_of((1, 2))}, strides {list(t.stride)}")


def tour_cute() -> None:
    from .. import cute

    section(
        "seed 002: one-dimensional CuTe layouts (figures 1-4)",
        "size counts the domain, cosize the span of the codomain (8:-1 reaches 8 elements, backwards).",
    )
    for stride in (1, 2, 0, -1):
        L = cute.Layout(8, stride)
        print(f"{str(L):>5}: offsets {[L(i) for i in range(8)]}  size {L.size} cosize {L.cosize}")

    section("seed 002: (3,4) column-major and row-major (figures 5, 6)", "the same shape, two strides.")
    for L in (cute.Layout((3, 4), (1, 3)), cute.Layout((3, 4), (4, 1))):
        print(cute.format_layout(L), end="")

    section(
        "seed 002: figure 7, hierarchical layouts",
        "(c) rows of 4 with columns split 2x4; (d) 2x2 blocks in a 2x4 grid of blocks.",
    )
    for L in (cute.Layout((4, (2, 4)), (2, (1, 8))), cute.Layout(((2, 2), (2, 4)), ((1, 4), (2, 8)))):
        print(cute.format_layout(L), end="")
    c = cute.Layout((4, (2, 4)), (2, (1, 8)))
    print(f"(c) at coordinate (1,(1,2)): {c((1, (1, 2)))}; at 1-D index 21: {c(21)}")

    section(
        "seed 002: static and dynamic ints",
        "make_shape(Int<2>{}, Int<3>{}) is known at compile time (printed _2), make_shape(2, 3) at run time.",
    )
    print(f"static:  {cute.Layout(cute.static((2, 3)))}   nested {cute.Layout(cute.static(((2, 3), 3)))}")
    print(f"dynamic: {cute.Layout((2, 3))}   nested {cute.Layout(((2, 3), 3))}")
    print(f"the same function either way: {str(cute.Layout(cute.static((2, 3))) == cute.Layout((2, 3))).lower()}")

    section(
        "beyond the seeds: a 32x32 f32 shared-memory tile read by columns",
        "one warp, thread i reads row i: shared-memory wavefronts (1 is conflict-free) and 32-byte sectors.",
    )
    tile = cute.Layout((32, 32), (32, 1))
    for name, L in (
        ("row-major (32,32):(32,1)", tile),
        ("padded (32,32):(33,1)", cute.Layout((32, 32), (33, 1))),
        ("swizzled Sw<5,0,5> o (32,32):(32,1)", cute.composition(cute.Swizzle(5, 0, 5), tile)),
    ):
        col = L(None, 0)
        sectors = cute.global_sectors(col)
        print(f"{name:>36}: {cute.bank_conflicts(col):>2} wavefronts; as global memory "
              f"{sectors.touched} sectors, {sectors.minimum} at least")


def tour_rank_limit() -> None:
    import numpy as np

    import strided as sd

    section(
        "seed 000: binary ops past candle's MAX_DIMS=8",
        "candle panics at rank 9; NdIter here has no rank limit (dims reversed, nothing merges).",
    )
    for rank in (8, 9, 16):
        base = np.arange(2**rank, dtype=np.float32).reshape((2,) * rank)
        a = sd.from_numpy(base).permute(tuple(reversed(range(rank))))
        b = sd.from_numpy(base)
        out = a + b
        ok = np.array_equal(out.numpy(), base.transpose(tuple(reversed(range(rank)))) + base)
        print(f"rank {rank:>2} permuted add: shape {list(out.shape)[:3]}... matches NumPy: {str(ok).lower()}")


def tour_matmul() -> None:
    import numpy as np

    import strided as sd

    section(
        "seed 000: the three matmul layouts candle disagrees on",
        "transposed, narrowed (row stride 32) and permuted-batch operands all go through, matching NumPy.",
    )
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 32), dtype=np.float32)
    a16 = rng.standard_normal((8, 16), dtype=np.float32)
    w = rng.standard_normal((32, 32), dtype=np.float32)
    x = rng.standard_normal((2, 3, 4, 5), dtype=np.float32)
    y = rng.standard_normal((3, 2, 5, 6), dtype=np.float32)
    cases = [
        ("a @ w.t()", sd.from_numpy(a) @ sd.from_numpy(w).t(), a @ w.T),
        ("a @ w.narrow(1,0,16) (16 cols of 32x32)",
         sd.from_numpy(a16) @ sd.from_numpy(w).narrow(1, 0, 16).narrow(0, 0, 16), a16 @ w[:16, :16]),
        ("permuted batch matmul", sd.from_numpy(x).permute(1, 0, 2, 3) @ sd.from_numpy(y), x.transpose(1, 0, 2, 3) @ y),
    ]
    for name, got, want in cases:
        diff = float(np.max(np.abs(got.numpy() - want)))
        print(f"{name:>36}: ok {list(got.shape)}, max abs diff vs NumPy = {diff:.2g}")


def tour_cann() -> None:
    from ..layout import Layout

    section(
        "seed 003: CANN's two non-contiguous views of a 10x10 buffer",
        "address = offset + sum(index * stride); the span must stay inside the buffer.",
    )
    for shape, stride in (((6, 5), (10, 1)), ((4, 3), (20, 2))):
        lay = Layout(shape, stride, 22)
        probe = (1, 3) if shape == (6, 5) else (1, 2)
        lay.validate(100)
        kinds = ", ".join(lay.classify().kinds)
        print(
            f"shape {shape} stride {stride} offset 22: {list(probe)} -> {lay.offset_of(probe)}, "
            f"span {lay.span()}, kinds: {kinds}, reduce fast path: {str(lay.supports_reduce_fast_path()).lower()}"
        )


def tour_views_and_copies() -> None:
    import strided as sd

    section(
        "seed 004: views and copies of a (3, 4) tensor",
        "views share the buffer; contiguous(), copy() and arithmetic allocate.",
    )
    a = sd.arange(12, dtype=sd.f32).reshape(3, 4)
    rows = [
        ("a", a), ("a.clone()", a.clone()), ("a.reshape((2, 6))", a.reshape((2, 6))),
        ("a.unsqueeze(0)", a.unsqueeze(0)), ("a.t()", a.t()), ("a.t().contiguous()", a.t().contiguous()),
        ("a.t().reshape(12)", a.t().reshape(12)), ("a.i((1.., 1..3))", a[1:, 1:3]), ("a.i(2)", a.i(2)),
        ("a.i((.., 2))", a[:, 2]), ("a.broadcast_as((2, 3, 4))", a.broadcast_as((2, 3, 4))),
        ("a.to_dtype(F32)", a.to_dtype(sd.f32)), ("a.detach()", a.detach()), ("a.copy()", a.copy()),
        ("(&a + 1.0)", a + 1.0),
    ]
    for name, t in rows:
        print(
            f"{name:<26} dims {format_list(t.shape):<10} stride {format_list(t.stride):<10} offset {t.offset} "
            f"contiguous {str(t.is_contiguous()).lower():<5} same buffer {str(sd.same_buffer(t, a)).lower()}"
        )

    section("seed 004, exercise 1: view or copy?", "reshape of a permuted tensor copies; a whole block stays a view.")
    a = sd.arange(24, dtype=sd.f32).reshape((2, 3, 4))
    for name, t in [
        ("a.permute((2, 0, 1))", a.permute((2, 0, 1))),
        ("a.permute((2, 0, 1)).flatten_all()", a.permute((2, 0, 1)).flatten_all()),
        ("a.flatten_all()", a.flatten_all()),
        ("a.i((.., 1, ..))", a[:, 1, :]),
        ("a.i((.., 1, ..)).contiguous()", a[:, 1, :].contiguous()),
        ("a.i((1, ..)).contiguous()", a[1].contiguous()),
        ("a.squeeze(0)", a.squeeze(0)),
        ("a.transpose(1, 1)", a.transpose(1, 1)),
    ]:
        print(f"{name:<36} contiguous {str(t.is_contiguous()).lower():<5} "
              f"same buffer {str(sd.same_buffer(t, a)).lower()}")

    section(
        "seed 004, exercise 2: the memory behind a broadcast",
        "unlike candle, copy() keeps only the viewed elements (4000 bytes, not 4000000).",
    )
    bias = sd.zeros(1000, dtype=sd.f32)
    wide = bias.broadcast_as((1000, 1000))
    copy = wide.contiguous()
    row = copy.i(0)
    for name, t in [("wide", wide), ("copy", copy), ("copy.i(0)", row), ("copy.i(0).copy()", row.copy()),
                    ("copy.i(0).force_contiguous()", row.force_contiguous())]:
        print(f"{name}: {t.numel} elements, buffer {t.buffer_nbytes} bytes")


def tour_graph() -> None:
    import strided as sd

    section(
        "seed 004: the graph of operations",
        "ops record their inputs only when a Var is involved; detach() cuts the link.",
    )
    x = sd.tensor([1.0, 2.0, 3.0])
    y = x.sqr().sum_all()
    w = sd.Var([1.0, 2.0, 3.0])
    h = w.broadcast_mul(x)
    z = h.sqr().sum(-1)
    zd = z.detach()
    nodes = sd.sorted_nodes(z)
    print(f"plain tensors: y.track_op() {str(y.track_op()).lower()}, nodes behind y {len(sd.sorted_nodes(y))}")
    print(f"with a Var:    z.track_op() {str(z.track_op()).lower()}, nodes behind z {len(nodes)}")
    print(f"their dims, from z to w: {[list(n.shape) for n in nodes]}")
    print(f"w.is_variable() {str(w.is_variable()).lower()}, h.is_variable() {str(h.is_variable()).lower()}")
    print(f"z.detach():    track_op() {str(zd.track_op()).lower()}, nodes behind {len(sd.sorted_nodes(zd))}")
    print(f"an op after detach: track_op() {str((zd + 1).track_op()).lower()}")
    print(f"gradient of z for w: {z.backward()[w].tolist()}  (2 * w * x^2)")


def tour_threads() -> None:
    from ..core import threads

    section(
        "seed 004: threads",
        "strided sizes its pool by what the process may run on; candle takes every physical core.",
    )
    r = threads.cpu_report()
    quota = r["cgroup_quota"]
    print(f"threads used here: {r['threads']}" + (f" (STRIDED_NUM_THREADS={r['env']})" if r["env"] else ""))
    print(f"read from: CPU affinity {r['affinity']} CPUs, cgroup quota "
          f"{'none' if quota is None else f'{quota:g} CPUs'} -> default {r['default']}")
    physical = r["physical_cores"]
    if physical is not None:
        more = f", {physical / r['default']:.1f}x what may run at once" if physical > r["default"] else ""
        print(f"a library taking all physical cores (candle's num_cpus::get_physical) would start {physical} "
              f"threads here" + more)
    print(f"logical CPUs the machine reports (what NumPy's OpenBLAS and numba see): {r['logical_cpus']}")


SECTIONS = [tour_layouts, tour_rank_limit, tour_matmul, tour_ravel, tour_cute, tour_cann, tour_views_and_copies,
            tour_graph, tour_threads]


def kernels_cached() -> bool:
    """Whether numba's cache already holds strided's kernels (so nothing compiles this run)."""
    from .. import kernels

    if os.environ.get("NUMBA_CACHE_DIR"):  # numba then caches there and only there
        pattern = os.path.join(os.environ["NUMBA_CACHE_DIR"], "kernels_*", "elementwise.*.nbi")
    else:
        pattern = os.path.join(os.path.dirname(kernels.__file__), "__pycache__", "elementwise.*.nbi")
    return bool(glob.glob(pattern))


def main() -> int:
    print("strided tour: the seed experiments, computed live")
    cold = not kernels_cached()
    if cold:
        print("first run: numba compiles strided's kernels once, as sections first use them, and caches "
              "them for later runs (see README for how long this takes); each section's time is shown.")
    for i, run in enumerate(SECTIONS, 1):
        start = time.perf_counter()
        run()
        if cold:
            print(f"   [{i}/{len(SECTIONS)} done in {time.perf_counter() - start:.1f} s]", flush=True)
    return 0
