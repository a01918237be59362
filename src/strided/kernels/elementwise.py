"""Elementwise kernels: unary ops, binary ops and ``where`` over any layouts.

Every call goes through one dispatcher, ``_plan``, which walks the operands
with ``NdIter(out, *inputs)`` (the output's memory order, dims merged where
every operand allows; dims that every operand walks backwards are flipped
first, as NumPy does) and picks one path:

=========  ==============================================  ==========================
path       when (on the merged dims)                       loop
=========  ==============================================  ==========================
DENSE      every operand's inner stride is 1               plain vectorised run
BCAST      out inner stride 1, inputs' inner strides 0/1   the stride-0 input is
                                                           hoisted out of the run
TILED      an operand prefers the other order of the two   the two innermost dims in
           innermost dims (``a + b.t()``)                  square tiles; an
                                                           operand that walks columns
                                                           goes through a scratch tile
GENERAL    anything else                                   odometer over the outer
                                                           dims, strided inner run
=========  ==============================================  ==========================

DENSE, BCAST and GENERAL share one driver, a loop over runs that switches on
the path once per run: a chunk of the iteration space is a range of flat
positions, so work splits evenly between threads whatever the shape.  Above
``PARALLEL_MIN`` elements the chunks run under ``prange`` (a few per thread,
handed out dynamically), below it on the calling thread.

The kernels are generated (``kernels.loops``, the loops written once for any number
of operands) per op and compute dtype from the op table's scalar function
(``kernels.optable``), which is inlined into the loop; each is compiled lazily, on
first use, and cached on disk (``kernels.codegen``).

Dtypes.  Operands arrive promoted to one compute dtype: ``a`` and ``b`` compute
in the same dtype and the output is stored in a dtype that computes in it too,
except comparisons (eq ne lt le gt ge) whose output is bool.  f16 and bf16
compute in f32: the kernels take their buffers as they are (seen as uint16 and
int16 bits, so the element type says which format), ``dec`` widens each
element to f32 in a register and ``enc`` rounds each result once (ties to
even) as it is stored, with the branch-free conversions of ``kernels.half``.
So ``f16 + f16`` reads and writes 2 bytes per element and makes no f32
temporaries, ``f16 * <f32 scalar>`` and ``f16 + bf16 -> f32`` mix freely, and
the results are NumPy's (f32 math rounded once).  ``where`` computes nothing:
it moves raw bits (both half types share its uint16 kernel).  Unary outputs
have the input's dtype.  Float-only ops (exp log sqrt tanh
sigmoid sin cos recip div) are not dispatched for integers: the caller converts
to a float dtype first.  Integer add/sub/mul/neg/sqr wrap like NumPy's.  Integer
``pow`` by a negative exponent gives the truncated C result (0 unless the base
is 1 or -1) instead of NumPy's error.  On bools, add is ``or`` and mul is
``and`` (NumPy's rules).

The scalar math, its accuracy and its special values are ``kernels.scalar``'s
(docstring there).  max/min propagate NaN like NumPy; relu(nan) is nan.

One rule set.  Each entry point (``unary``, ``binary``, ``where``) checks its buffers,
layouts and dtypes, raising on anything wrong, then prepares the kernel call for exactly
those layouts and buffer dtypes (``bind_kernels``: the plan, the integer arrays, numba's
compiled entry) and runs it; with ``keep=True`` it returns that call as ``(run, reach)``
(None for an empty output).  The op layer keeps the pair (``ops.kept.Kept``) and runs it
again on later calls with equal layouts once each buffer is at least ``reach[i]`` long:
first and kept calls run the same prepared call, so nothing is decided twice.  Every
family of every backend has this contract (``backend.Backend``).

Fused expressions.  ``expression_kernel`` is the family's entry point for ``strided.fuse``:
the loops of ``kernels.loops`` around a group's expression (``fusion.lower.Source``), bound
to the layouts of one call as an op's kernels are prepared (``bind_kernels``); ``refusal`` says which ops this
backend does not compute (none, on the CPU).  Every backend's elementwise family has both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import (
    CHUNKS_PER_THREAD,
    COMPUTE,
    DTYPES,
    LIGHT_OP_FACTOR,
    PARALLEL_MIN,
    TILE_BYTES,
    TILE_FLOOR,
    TILE_MAX,
    TILE_MIN,
    check_buffer,
    check_in_buffer,
    check_layout,
    check_operand_shape,
    reach as _reach,
    writes_twice,
)
from ..core import caches
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.iterate import NdIter
from ..layout.layout import Layout
from ..core.threads import get_num_threads
from .half import HALF_VIEW
from .loops import kernel_set
from .optable import OPS, on_new_op
from .walk import direct, in_parallel, pack

__all__ = [
    "UNARY_OPS",
    "BINARY_OPS",
    "OpSpec",
    "output_layout",
    "unary",
    "binary",
    "where",
    "bind_kernels",
    "plan",
    "expression_kernel",
    "ExpressionKernel",
    "refusal",
]

# Buffers may hold any of common.DTYPES; the half types are stored as themselves, read
# into f32 registers and rounded back on store (``half.dec``/``half.enc``).  An op is
# dispatched by the name of the dtype its operands compute in (common.COMPUTE), from the
# op table's dtype sets.

DENSE, BCAST, GENERAL, TILED = 0, 1, 2, 3
PATH_NAMES = {DENSE: "dense", BCAST: "bcast", GENERAL: "general", TILED: "tiled"}


@dataclass(frozen=True)
class OpSpec:
    """An op's name, the numpy dtype names it is dispatched for, and whether it yields bool."""

    name: str
    dtypes: frozenset
    bool_out: bool = False


UNARY_OPS: dict[str, OpSpec] = {}
BINARY_OPS: dict[str, OpSpec] = {}
# The ops whose work per element is a libm-sized function: they go parallel from
# PARALLEL_MIN; every other op from LIGHT_OP_FACTOR times that.
HEAVY_OPS: set = set()


def _dispatched(e) -> None:
    (UNARY_OPS if e.arity == 1 else BINARY_OPS)[e.name] = OpSpec(e.name, e.dtypes, e.bool_out)
    if e.heavy:
        HEAVY_OPS.add(e.name)


on_new_op(_dispatched)


_KERNELS = caches.table("elementwise.kernels", "op, compute dtype (a generated kernel set each)")
_WHERE = "def expr(a0, a1, a2):\n    return a1 if a0 else a2\n"


def _kernel_set(op: str, comp: str) -> dict:
    """The four kernels of ``op`` on operands computed in ``comp`` (``where``: any dtype,
    moved as bits), generated from the op table's scalar function (``kernels.loops``)."""
    key = (op, comp)
    ks = _KERNELS.get(key)
    if ks is None:
        if op == "where":
            ks = kernel_set(3, _WHERE, "where", mode="bits")
        else:
            e = OPS[op]
            args = ", ".join(f"a{i}" for i in range(e.arity))
            src = (f"from strided.kernels.optable import OPS\n\nF = OPS[{op!r}].fn({comp!r})\n\n\n"
                   f"def expr({args}):\n    return F({args})\n")
            ks = kernel_set(e.arity, src, f"{op}_{comp}", staged=e.heavy and comp in ("float32", "float64"))
        _KERNELS.put(key, ks)
    return ks

# ---------------------------------------------------------------------------
# checks and the dispatcher


def _check_operands(op: str, out, out_layout: Layout, named) -> None:
    """Buffers, shapes and bounds, all before any memory access."""
    check_buffer(op, "out", out, dtypes=DTYPES, writable=True)
    check_layout(op, "out_layout", out_layout)
    for what, buf, lay in named:
        check_buffer(op, what, buf, dtypes=DTYPES)
        check_layout(op, what + "_layout", lay)
        check_operand_shape(op, what, lay, out_layout)
    for what, buf, lay in (("out", out, out_layout),) + tuple(named):
        check_in_buffer(op, what, buf, lay)
    if writes_twice(out_layout):
        raise StridedError(
            f"{op}: the output layout {out_layout} writes one element several times (a stride-0 dim of size > 1)"
        )


def _flip_negative(layouts: list[Layout]) -> list[Layout]:
    """Reverse every dim on which no operand walks forwards (NumPy's order='K' does the same).

    Every operand is flipped alike, so the element pairs are unchanged; the
    runs then read memory forwards."""
    nd = layouts[0].ndim
    dims = [
        d
        for d in range(nd)
        if any(l.stride[d] < 0 for l in layouts) and all(l.stride[d] <= 0 for l in layouts)
    ]
    if not dims:
        return layouts
    return [l.flip(dims) for l in layouts]


@dataclass(frozen=True)
class Plan:
    """What ``_plan`` decided: the path, the merged dims and the work split."""

    path: int
    shape: tuple
    strides: tuple
    offsets: tuple
    work: int  # flat positions (runs) or tiles (TILED)
    parallel: bool
    nchunks: int
    tile: int = 0  # TILED: the tile side


def _plan(layouts, itemsize: int = 4) -> Plan:
    """The one place that chooses a path; ``layouts[0]`` is the output."""
    return _plan_and_pack(tuple(layouts), itemsize, get_num_threads(), PARALLEL_MIN, TILE_MIN, TILE_BYTES)[0]


@caches.lru("elementwise.plans", "layouts, itemsize, thread count, thresholds", 1024)
def _plan_and_pack(layouts: tuple, itemsize: int, nthreads: int, parallel_min: int, tile_min: int, tile_bytes: int):
    """The plan and the integers the kernels take (``walk.pack``), cached per layouts (and settings)."""
    p = _choose(list(layouts), itemsize, nthreads, parallel_min, tile_min, tile_bytes)
    return p, pack(p.shape, p.strides, p.offsets, p.tile if p.path == TILED else p.path)


def _choose(layouts: list, itemsize: int, nthreads: int, parallel_min: int, tile_min: int, tile_bytes: int) -> Plan:
    layouts = _flip_negative(layouts)
    it = NdIter(*layouts)
    shape, strides, offsets = it.shape, it.strides, it.offsets
    numel = 1
    for n in shape:
        numel *= n
    nd = len(shape)
    inner = [s[-1] for s in strides]
    if (
        nd >= 2
        and shape[-1] >= tile_min
        and shape[-2] >= tile_min
        and any(s[-1] != 0 and s[-2] != 0 and abs(s[-2]) < abs(s[-1]) for s in strides)
    ):
        path = TILED
    elif all(s == 1 for s in inner):
        path = DENSE
    elif inner[0] == 1 and all(s in (0, 1) for s in inner[1:]):
        path = BCAST
    else:
        path = GENERAL
    parallel = numel >= parallel_min and nthreads > 1
    tile = 0
    if path == TILED:
        outer = 1
        for n in shape[:-2]:
            outer *= n
        tile = min(TILE_MAX, max(TILE_FLOOR, tile_bytes // itemsize))  # a page-long row
        # No larger than the tiled dims: the scratch tiles are allocated at this side.
        tile = min(tile, max(shape[-1], shape[-2]))

        def ntiles(t):
            return outer * (-(-shape[-2] // t)) * (-(-shape[-1] // t))

        # Smaller when that leaves too few tiles to share between threads.
        while parallel and tile > TILE_FLOOR and ntiles(tile) < 2 * nthreads:
            tile //= 2
        work = ntiles(tile)
    else:
        work = numel
    # Several chunks per thread, handed out dynamically (``_launch``): a thread
    # that the OS preempts on a busy machine does not hold the others up.
    nchunks = min(CHUNKS_PER_THREAD * nthreads, work) if parallel else 1
    return Plan(path, shape, strides, offsets, work, parallel and nchunks > 1, nchunks, tile)


def plan(out_layout: Layout, *layouts: Layout, itemsize: int = 4) -> Plan:
    """The plan the dispatcher would run for operands of ``itemsize`` bytes (for tests and benchmarks)."""
    return _plan([out_layout, *layouts], itemsize)


def _parallel_min(op: str) -> int:
    return PARALLEL_MIN if op in HEAVY_OPS else PARALLEL_MIN * LIGHT_OP_FACTOR


def _run(op: str, ks: dict, bufs: tuple, layouts: tuple, keep: bool, views=None):
    """Prepare the call of kernel set ``ks`` on checked ``layouts`` (the output first), run it
    on ``bufs``, and return it prepared (``bind_kernels``) when the caller keeps it."""
    prepared = bind_kernels(ks, layouts, tuple(b.dtype for b in bufs), _parallel_min(op), views)
    if prepared is None:
        return None
    prepared[0](*bufs)
    if not keep:
        return None
    if not getattr(prepared[0], "settled", True):  # it compiled on that call: prepare again, to call its entry
        prepared = bind_kernels(ks, layouts, tuple(b.dtype for b in bufs), _parallel_min(op), views)
    return prepared


def bind_kernels(ks: dict, layouts: tuple, dtypes: tuple, parallel_min: int, views=None):
    """``(run, reach)`` for a kernel set of ``kernels.loops`` over checked layouts (output
    first), or None where a layout reaches below its buffer's start or the output would write
    an element twice or is empty.  ``views``: the dtype each buffer is seen as (default: the
    half types as their bits).  ``run(out, *inputs)`` runs the kernel on buffers of ``dtypes``
    once the caller has checked that each is at least ``reach[i]`` long (the layouts' lowest
    offsets are checked here)."""
    out_lay = layouts[0]
    reach = []
    for lay in layouts:
        lo, hi = _reach(lay)
        if lo < 0:
            return None
        reach.append(hi)
    if writes_twice(out_lay) or out_lay.numel == 0:
        return None
    if views is None:
        views = tuple(HALF_VIEW.get(np.dtype(d)) for d in dtypes)
    itemsize = max((np.dtype(d) if v is None else v).itemsize for d, v in zip(dtypes, views))
    p, packed = _plan_and_pack(tuple(layouts), itemsize, get_num_threads(), parallel_min, TILE_MIN, TILE_BYTES)
    k = ks[(p.path == TILED, p.parallel)]
    tail = (packed, p.work, p.nchunks) if p.parallel else (packed, 0, p.work)
    seen = tuple(np.empty(0, d if v is None else v) for d, v in zip(dtypes, views))
    # numba's compiled entry for these buffers (``direct``), entered as the path needs
    entry = in_parallel(k, (*seen, *tail)) if p.parallel else direct(k, (*seen, *tail))
    t0, t1, t2 = tail
    if any(v is not None for v in views):
        def run(*bufs):
            entry(*[b if v is None else b.view(v) for b, v in zip(bufs, views)], *tail)
    elif len(layouts) == 2:  # spelled out: a call with a starred tail builds a tuple first
        def run(o, x):
            entry(o, x, t0, t1, t2)
    elif len(layouts) == 3:
        def run(o, x, y):
            entry(o, x, y, t0, t1, t2)
    else:
        def run(*bufs):
            entry(*bufs, *tail)
    # False: through the dispatcher or the first parallel region's guard; prepare again once run
    run.settled = entry is not k and getattr(entry, "settled", True)
    return run, tuple(reach)


def _dtype_ok(op: str, spec_dtypes, dtype: np.dtype, what: str) -> None:
    if COMPUTE.get(dtype) not in spec_dtypes:
        raise DTypeError(
            f"{op}: not dispatched for {what} dtype {dtype} (expected one of {', '.join(sorted(spec_dtypes))})"
        )


# ---------------------------------------------------------------------------
# public entry points

_U16 = np.dtype(np.uint16)


def output_layout(shape, *layouts: Layout) -> Layout:
    """The dense layout of a result of ``shape`` that follows the inputs' memory order.

    Dims are ordered as ``NdIter(*layouts).perm`` orders them (NumPy's
    order='K'): contiguous inputs give a row-major output, ``a.t() + b.t()`` a
    column-major one, mixed orders follow the first operand with a say.
    """
    shape = tuple(int(n) for n in shape)
    lays = [l for l in layouts if l.shape == shape]
    if len(lays) != len(layouts):
        bad = [l.shape for l in layouts if l.shape != shape]
        raise ShapeError(f"output_layout: every layout must have shape {shape}, got {bad}")
    if not lays or 0 in shape or len(shape) < 2:
        return Layout.contiguous(shape)
    return _following(tuple(lays))


@caches.lru("elementwise.output_order", "operand layouts", 1024)
def _following(lays: tuple) -> Layout:
    # Cached: a model's step asks again for the same operand layouts, and NdIter's
    # ordering costs more than a small op's loop.
    shape = lays[0].shape
    perm = NdIter(*lays).perm
    stride = [0] * len(shape)
    acc = 1
    for d in reversed(perm):
        stride[d] = acc
        acc *= shape[d]
    dense = Layout.contiguous(shape)  # the cached object when the order is row-major
    return dense if tuple(stride) == dense.stride else Layout(shape, stride, 0)


def unary(op: str, src, src_layout: Layout, out, out_layout: Layout, keep: bool = False) -> tuple | None:
    """``out = op(src)`` elementwise; out has src's dtype (``not`` takes and gives bool)."""
    if op not in UNARY_OPS:
        raise StridedError(f"unary: unknown op {op!r} (expected one of {', '.join(UNARY_OPS)})")
    _check_operands(op, out, out_layout, (("src", src, src_layout),))
    _dtype_ok(op, UNARY_OPS[op].dtypes, src.dtype, "input")
    if out.dtype != src.dtype:
        raise DTypeError(f"{op}: expected an output of dtype {src.dtype}, got {out.dtype}")
    return _run(op, _kernel_set(op, COMPUTE[src.dtype]), (out, src), (out_layout, src_layout), keep)


def binary(op: str, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout,
           keep: bool = False) -> tuple | None:
    """``out = op(a, b)`` elementwise; a, b and out share a compute dtype (out is bool for comparisons).

    f16, bf16 and f32 all compute in f32, so a half operand may meet an f32 one
    (a half tensor and its f32 scalar) and the result may be stored as any of
    the three, rounded once."""
    spec = BINARY_OPS.get(op)
    if spec is None:
        raise StridedError(f"binary: unknown op {op!r} (expected one of {', '.join(BINARY_OPS)})")
    _check_operands(op, out, out_layout, (("a", a, a_layout), ("b", b, b_layout)))
    comp = COMPUTE[a.dtype]
    if COMPUTE[b.dtype] != comp:
        raise DTypeError(
            f"{op}: expected operands of one compute dtype (promote first), got {a.dtype} and {b.dtype}"
        )
    _dtype_ok(op, spec.dtypes, a.dtype, "input")
    if spec.bool_out:
        if out.dtype != np.bool_:
            raise DTypeError(f"{op}: expected an output of dtype bool, got {out.dtype}")
    elif COMPUTE[out.dtype] != comp:
        raise DTypeError(f"{op}: expected an output computed in {comp} (as {a.dtype}), got {out.dtype}")
    return _run(op, _kernel_set(op, comp), (out, a, b), (out_layout, a_layout, b_layout), keep)


def where(cond, cond_layout: Layout, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout,
          keep: bool = False) -> tuple | None:
    """``out = a if cond else b`` elementwise; cond is bool, a, b and out share a dtype.

    Nothing is computed, so elements move as raw bits: both half types share the
    uint16 kernel."""
    _check_operands(
        "where", out, out_layout, (("cond", cond, cond_layout), ("a", a, a_layout), ("b", b, b_layout))
    )
    if cond.dtype != np.bool_:
        raise DTypeError(f"where: expected a bool condition, got {cond.dtype}")
    if not (a.dtype == b.dtype == out.dtype):
        raise DTypeError(f"where: expected a, b and out of one dtype, got {a.dtype}, {b.dtype} and {out.dtype}")
    views = (None, None, None, None) if a.dtype not in HALF_VIEW else (_U16, None, _U16, _U16)  # moved as bits
    return _run("where", _kernel_set("where", ""), (out, cond, a, b), (out_layout, cond_layout, a_layout, b_layout),
                keep, views)


# ---------------------------------------------------------------------------
# fused expressions (strided.fuse)

# What a fused expression's body may call (``fusion.lower.Source``): numpy, the op table's
# functions (bound below by name) and the half conversions, the CPU's portable forms.
_EXPR_HEAD = """import numpy as np

from strided.kernels.half import (bf16_bits_as_f16_bits, bf16_bits_as_f32, f16_bits_as_f32, f32_as_bf16_bits,
                                  f32_as_f16_bits, f64_as_f16_bits)
from strided.kernels.optable import OPS
"""


class ExpressionKernel:
    """A backend's kernel for a fused expression over the layouts of one call
    (``expression_kernel``'s answer): ``run(out, *inputs)`` on buffers of the dtypes it was
    made for (None when there is nothing to write), ``reach`` (the length each buffer must
    have, the output first), ``module`` and ``path`` (what ``explain`` shows), and
    ``settle``: None, or a function giving the ``run`` to keep once the first call has
    compiled the kernel."""

    __slots__ = ("module", "path", "run", "reach", "settle")


def refusal(op: str, comp: str) -> str | None:
    """Why op-table ``op`` on operands computed in ``comp`` is not computed here: never, on
    the CPU (the table's dtypes are the CPU's)."""
    return None


def expression_kernel(source, out_layout: Layout, layouts: tuple, dtypes: tuple) -> ExpressionKernel | None:
    """The kernel writing ``expr`` of ``source`` (``fusion.lower.Source``) through
    ``out_layout`` from buffers read through ``layouts`` (``dtypes``: numpy dtypes of the
    buffers, the output first), or None where a layout reaches below its buffer's start.
    The loops are ``kernels.loops``' (the expression inlined; compiled on the first call,
    cached on disk by the source's text), bound as ``bind_kernels`` binds them."""
    ops = "".join(f"{f} = OPS[{op!r}].fn({comp!r})\n" for f, op, comp in source.ops)
    lays = (out_layout, *layouts)
    p = plan(*lays) if layouts and out_layout.numel else None
    # BCAST runs hoist the inputs they read at stride 0 (which ones is the plan's to say), and
    # a kernel made for these layouts is written with their one fast path (less to compile)
    zeros = tuple(s[-1] == 0 for s in p.strides[1:]) if p is not None and p.path == BCAST else None
    fast = (p.path,) if p is not None and p.path in (DENSE, BCAST) else ()
    # a heavy expression's strided runs gather their inputs in stages, as a heavy op's do, where
    # the stack buffers can hold them (integer and float bits; not bool or complex)
    staged = source.heavy and all(np.dtype(d).kind in "fiu" for d in dtypes[1:])
    ks = kernel_set(source.nuses, _EXPR_HEAD + ops + "\n\n" + source.body, f"fused{source.nuses}", zeros=zeros,
                    paths=fast, staged=staged)
    k = ExpressionKernel()
    k.module, k.settle = next(iter(ks.values())).py_func.__module__, None
    if not out_layout.numel:
        k.run, k.reach, k.path = None, (0,) * (len(layouts) + 1), "-"
        return k
    pmin = PARALLEL_MIN if source.heavy else PARALLEL_MIN * LIGHT_OP_FACTOR
    bound = bind_kernels(ks, lays, dtypes, pmin)
    if bound is None:
        return None
    k.run, k.reach = bound
    k.path = PATH_NAMES[p.path] if p is not None else "dense"
    k.settle = lambda: bind_kernels(ks, lays, dtypes, pmin)[0]
    return k
