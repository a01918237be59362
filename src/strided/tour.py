"""``python -m strided tour``: the seed experiments, reproduced live from the library.

Each section prints what the library computes now, never stored text, with a
one-line note on what to look at.
"""

from __future__ import annotations

from .layout import Layout
from .printing import format_blocks, format_list


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
    print(f"(4,1).t(): dims={format_list(odd.shape)} stride={format_list(odd.stride)} contiguous={str(odd.is_contiguous()).lower()}")


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
        ("a @ w.narrow(1,0,16) (16 cols of 32x32)", sd.from_numpy(a16) @ sd.from_numpy(w).narrow(1, 0, 16).narrow(0, 0, 16), a16 @ w[:16, :16]),
        ("permuted batch matmul", sd.from_numpy(x).permute(1, 0, 2, 3) @ sd.from_numpy(y), x.transpose(1, 0, 2, 3) @ y),
    ]
    for name, got, want in cases:
        diff = float(np.max(np.abs(got.numpy() - want)))
        print(f"{name:>36}: ok {list(got.shape)}, max abs diff vs NumPy = {diff:.2g}")


def tour_cann() -> None:
    from .layout import Layout

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
        print(f"{name:<36} contiguous {str(t.is_contiguous()).lower():<5} same buffer {str(sd.same_buffer(t, a)).lower()}")

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


SECTIONS = [tour_layouts, tour_rank_limit, tour_matmul, tour_cann, tour_views_and_copies, tour_graph]


def main() -> int:
    print("strided tour: the seed experiments, computed live")
    for run in SECTIONS:
        run()
    return 0
