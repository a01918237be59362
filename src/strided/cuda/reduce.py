"""The reduce family on CUDA: the CPU planner's kept and reduced dims, a shared-memory tree per output.

``reduce`` and ``arg_reduce`` take ``strided.kernels.reduce``'s arguments (an op name,
device buffers and layouts, the output with keepdim shape, its dtype the accumulator).
``strided.kernels.reduce.plan`` merges and orders the dims as on the CPU (the source
decides the order; dims read backwards are flipped), and its integers drive one kernel:

* a work unit is one output element, or one part of its reduced points when the
  outputs are too few to fill the device (``split``): a block per unit, grid-stride
  over the units;
* each thread of the block folds every ``THREADS``-th reduced point (the odometer over
  the reduced dims), then the block combines the ``THREADS`` partial values by a tree
  in shared memory (``syncthreads`` between levels; no warp shuffles, which the
  simulator has not);
* a split reduction writes its parts to a scratch vector, and the same kernel reduces
  the parts of each output in a second launch;
* the planner's OUTER case with many outputs (a column sum) takes a thread per output
  instead (``column_kernel``), so that a warp reads neighbouring columns.

max and min propagate NaN as NumPy does; argmax and argmin keep the first index of the
extremum (a NaN wins, the first one), comparing (value, index) pairs in the tree.
f16/bf16 sources are read from their bits into the f32 accumulator, as on the CPU
(``cuda.half``), and the op layer rounds the f32 result back once.
"""

from __future__ import annotations


import numpy as np
from numba import cuda, from_dtype

from ..core import caches
from ..core.errors import DTypeError
from ..kernels.common import DTYPES, NATIVE, check_layout
from ..kernels.reduce import plan
from ..kernels.reduce_plan import (ARG_REDUCE_OPS, OUTER, REDUCE_OPS, check_arg_dim, check_dims, check_op, has_arg_work,
                                   has_work)
from ..layout.layout import Layout, contiguous_strides
from . import half, launch
from .checks import check_on_device
from .device import HALVES, kernel_view

__all__ = ["reduce", "arg_reduce", "REDUCE_OPS", "ARG_REDUCE_OPS", "DTYPES_REDUCED"]

# The accumulators: the CPU's native (unwidened, non-half) dtypes, ordered ones, whose
# values live in registers as numba-cuda types them.  The sources: those and the half
# types, which accumulate in f32 (arg_reduce compares them as f32).
DTYPES_ACC = frozenset(d for d in NATIVE if d.kind in "biuf")
DTYPES_REDUCED = DTYPES_ACC | HALVES
F32 = np.dtype(np.float32)

# How many threads fold one unit, a power of two for the tree.  On a GPU a unit with
# fewer reduced points than ``SPLIT_MIN`` per part is not split: its block is busy enough.
THREADS = launch.THREADS
SPLIT_MIN = 4 * THREADS
# A split aims at this many units in all: enough blocks for every SM several times over.
TARGET_UNITS = 4 * launch.MAX_BLOCKS

_COMBINE = {
    "sum": "a + b",
    "prod": "a * b",
    "max": "a if (a > b or a != a) else b",
    "min": "a if (a < b or a != a) else b",
}
# (value, index) pairs: ``better`` says whether (a, i) beats (b, j), the first NaN winning.
_BETTER = {
    "argmax": "(a != a and (b == b or i < j)) or (b == b and (a > b or (a == b and i < j)))",
    "argmin": "(a != a and (b == b or i < j)) or (b == b and (a < b or (a == b and i < j)))",
}



def _tree(step: str, write: str) -> str:
    """The end of a block's unit: the threads' values (in shared memory) combined in a tree,
    halving the threads that combine each round (``step``, one pair), thread 0 writing the
    result (``write``); then the block's next unit."""
    return ("""        cuda.syncthreads()
        w = T // 2
        while w > 0:
            if t < w:""" + step + """
            cuda.syncthreads()
            w //= 2
        if t == 0:
            """ + write + """
        cuda.syncthreads()
        u += cuda.gridDim.x
""")


_REDUCE_SRC = """
def kernel(src, soff, kshape, ksst, kost, rshape, rsst, out, ooff, jstep, nsplit, chunk, nr, units, ident):
    sh = cuda.shared.array(T, acc)
    t = cuda.threadIdx.x
    u = cuda.blockIdx.x
    while u < units:  # every thread of a block takes the same units: syncthreads is safe
        k = u // nsplit
        j = u - k * nsplit
        s0, o0 = point2(k, kshape, soff, ksst, ooff, kost)
        hi = min(nr, (j + 1) * chunk)
        a = ident
        for r in range(j * chunk + t, hi, T):
            b = acc_t({load})
            a = {combine}
        sh[t] = a
""" + _tree("""
                a = sh[t]
                b = sh[t + w]
                sh[t] = {combine}""", "out[o0 + j * jstep] = sh[0]")

_ARG_SRC = """
def kernel(src, soff, kshape, ksst, kost, n, rs, out, ooff, units):
    sv = cuda.shared.array(T, val)
    si = cuda.shared.array(T, idx)
    t = cuda.threadIdx.x
    u = cuda.blockIdx.x
    while u < units:
        s0, o0 = point2(u, kshape, soff, ksst, ooff, kost)
        a = {first}
        i = 0
        for r in range(t, n, T):
            b = {load}
            j = r
            if not ({better}):
                a = b
                i = j
        sv[t] = a
        si[t] = i
""" + _tree("""
                a = sv[t]
                i = si[t]
                b = sv[t + w]
                j = si[t + w]
                if not ({better}):
                    sv[t] = b
                    si[t] = j""", "out[o0] = si[0]")


# The planner's OUTER case (the innermost kept dim is the source's fast one, as in a column
# sum of a row-major matrix): a block per output would read down columns, one row per
# thread of a warp.  With outputs enough to fill the device (``COLUMN_MIN``) each thread
# folds one output's points in order instead, so a warp reads 32 neighbouring columns of
# one row at a time.
_COLUMN_SRC = """
def kernel(src, soff, kshape, ksst, kost, rshape, rsst, out, ooff, nr, units, ident):
    for k in range(cuda.grid(1), units, cuda.gridsize(1)):
        s0, o0 = point2(k, kshape, soff, ksst, ooff, kost)
        a = ident
        for r in range(nr):
            b = acc_t({load})
            a = {combine}
        out[o0] = a
"""
COLUMN_MIN = 2 * launch.THREADS if launch.SIMULATED else 4096
_COLUMN_KERNELS = caches.table("cuda.reduce.column_kernels", "op, dtypes")


_POINT = "src[point1(r, rshape, s0, rsst)]"


def column_kernel(op: str, acc: np.dtype, src_dtype=None):
    """The column kernel of ``op`` accumulating in ``acc`` from a ``src_dtype`` source (acc's
    own when None)."""
    key = (op, np.dtype(acc), np.dtype(src_dtype or acc))
    if key not in _COLUMN_KERNELS:
        nb = from_dtype(acc)
        _COLUMN_KERNELS[key] = _compile(_COLUMN_SRC.format(combine=_COMBINE[op], load=half.load(key[2], _POINT)),
                                        acc_t=nb)
    return _COLUMN_KERNELS[key]


def _compile(src: str, **scope):
    scope = {"cuda": cuda, "min": min, "point1": launch.point1, "point2": launch.point2, "T": THREADS, **half.SCOPE,
             **scope}
    exec(src, scope)  # our own templates
    return cuda.jit(scope["kernel"])


_REDUCE_KERNELS = caches.table("cuda.reduce.kernels", "op, dtypes")
_ARG_KERNELS = caches.table("cuda.reduce.arg_kernels", "op, dtypes")


def reduce_kernel(op: str, acc: np.dtype, src_dtype=None):
    """The kernel of ``op`` accumulating in ``acc`` from a ``src_dtype`` source (acc's own
    when None; the shared tree's type is fixed when numba compiles, so each accumulator
    dtype gets its own)."""
    key = (op, np.dtype(acc), np.dtype(src_dtype or acc))
    if key not in _REDUCE_KERNELS:
        nb = from_dtype(acc)
        _REDUCE_KERNELS[key] = _compile(_REDUCE_SRC.format(combine=_COMBINE[op], load=half.load(key[2], _POINT)),
                                        acc=nb, acc_t=nb)
    return _REDUCE_KERNELS[key]


def arg_kernel(op: str, dtype: np.dtype):
    key = (op, np.dtype(dtype))
    if key not in _ARG_KERNELS:
        # Every thread starts from index 0's pair, a real candidate: a thread with no points
        # of its own keeps it, and it loses only to a better value or an earlier NaN.
        val = F32 if key[1] in HALVES else key[1]
        _ARG_KERNELS[key] = _compile(_ARG_SRC.format(better=_BETTER[op], first=half.load(key[1], "src[s0]"),
                                                     load=half.load(key[1], "src[s0 + r * rs]")),
                                     val=from_dtype(val), idx=from_dtype(np.int64))
    return _ARG_KERNELS[key]


def identity(op: str, dtype: np.dtype):
    """The value a fold of ``op`` in ``dtype`` starts from (the empty reduction's result for
    sum and prod)."""
    dtype = np.dtype(dtype)
    if op == "sum":
        return dtype.type(0)
    if op == "prod":
        return dtype.type(1)
    if dtype.kind == "f":
        return dtype.type(-np.inf if op == "max" else np.inf)
    if dtype.kind == "b":
        return np.bool_(op == "min")
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


# ---------------------------------------------------------------------------
# checks


def _check(op: str, src, src_layout: Layout, dims, out, out_layout: Layout) -> tuple:
    check_on_device(op, "src", src)
    check_on_device(op, "out", out)
    if src.dtype not in DTYPES_REDUCED:
        raise DTypeError(f"{op}: a {DTYPES.get(src.dtype, src.dtype)} source is not reduced on CUDA yet "
                         f"(CUDA reduces {', '.join(sorted(DTYPES[d] for d in DTYPES_REDUCED))})")
    check_layout(op, "src_layout", src_layout).validate(len(src))
    check_layout(op, "out_layout", out_layout).validate(len(out))
    return check_dims(op, src_layout, dims, out_layout)


def _dims(shape, *strides) -> tuple:
    """Dims as the tuples of ints a kernel takes; none becomes one dim of size 1."""
    if not shape:
        return ((1,),) + ((0,),) * len(strides)
    return (tuple(map(int, shape)),) + tuple(tuple(map(int, s)) for s in strides)


def split(nk: int, nr: int) -> int:
    """Parts each output's reduced points are cut into: 1 unless the outputs are too few
    to give every SM blocks and each part keeps ``SPLIT_MIN`` points."""
    if nk >= TARGET_UNITS or nr < 2 * SPLIT_MIN:
        return 1
    return max(1, min(-(-TARGET_UNITS // nk), nr // SPLIT_MIN))


# ---------------------------------------------------------------------------
# entry points


def reduce(op: str, src, src_layout: Layout, dims, out, out_layout: Layout, keep: bool = False) -> None:
    """``out = op(src)`` over ``dims`` on device buffers; out (keepdim shape) has the
    accumulator's dtype.  ``op`` is one of sum, prod, max, min.  ``keep``: as on the CPU; CUDA
    keeps no decision yet (None)."""
    check_op(op)
    dims = _check(op, src, src_layout, dims, out, out_layout)
    if out.dtype not in DTYPES_ACC:
        raise DTypeError(f"{op}: a {DTYPES.get(out.dtype, out.dtype)} accumulator is not taken on CUDA")
    if not has_work(op, src.dtype, out.dtype, src_layout, dims, out_layout):
        return
    acc = out.dtype
    src_dtype = src.dtype
    kernel, ident = reduce_kernel(op, acc, src_dtype), identity(op, acc)
    src = kernel_view(src)
    if src_layout.numel == 0:  # sum/prod of nothing: the identity everywhere, a fold of no points
        kshape, ksst, kost = _dims(out_layout.shape, (0,) * out_layout.ndim, out_layout.stride)
        nk = out_layout.numel
        kernel[launch.grid(nk)[0], THREADS](src, 0, kshape, ksst, kost, (1,), (0,), out, out_layout.offset,
                                            0, 1, 0, 0, nk, ident)
        return
    p = plan(src_layout, dims, out_layout)
    nk, nr = p.nk, p.nr
    kshape, ksst, kost = _dims(p.kshape, *p.kstrides)
    rshape, rsst = _dims(p.rshape, p.rstrides)
    if p.case == OUTER and p.kstrides[0][-1] == 1 and nk >= COLUMN_MIN:
        column_kernel(op, acc, src_dtype)[launch.grid(nk)](src, p.src_offset, kshape, ksst, kost, rshape, rsst, out,
                                                p.out_offset, nr, nk, ident)
        return
    nsplit = split(nk, nr)
    blocks = lambda units: min(launch.MAX_BLOCKS, max(1, units))
    if nsplit == 1:
        kernel[blocks(nk), THREADS](src, p.src_offset, kshape, ksst, kost, rshape, rsst, out, p.out_offset,
                                    0, 1, nr, nr, nk, ident)
        return
    chunk = -(-nr // nsplit)
    part = cuda.device_array(nk * nsplit, acc)
    pst = tuple(s * nsplit for s in contiguous_strides(kshape))
    kernel[blocks(nk * nsplit), THREADS](src, p.src_offset, kshape, ksst, pst, rshape, rsst, part, 0,
                                         1, nsplit, chunk, nr, nk * nsplit, ident)
    reduce_kernel(op, acc)[blocks(nk), THREADS](part, 0, kshape, pst, kost, (nsplit,), (1,), out, p.out_offset,
                                0, 1, nsplit, nsplit, nk, ident)


def arg_reduce(op: str, src, src_layout: Layout, dim: int, out, out_layout: Layout, keep: bool = False) -> None:
    """Index of the max (argmax) or min (argmin) along ``dim``; out is int64 with keepdim
    shape.  Ties pick the first occurrence; a NaN wins over numbers (the first NaN).
    ``keep``: as on the CPU; CUDA keeps no decision yet (None)."""
    check_op(op, arg=True)
    (d,) = _check(op, src, src_layout, (check_arg_dim(op, dim),), out, out_layout)
    if not has_arg_work(op, out.dtype, src_layout, d, out_layout):
        return
    n = src_layout.shape[d]
    # The planner's kept dims; the arg dim keeps its own direction (its indices are
    # logical), so a flip the planner made of it is undone here.
    p = plan(src_layout, (d,), out_layout)
    rs, soff = src_layout.stride[d], p.src_offset
    if p.rstrides and p.rstrides[0] != rs:  # flipped: the planner started at the last element
        soff -= (n - 1) * rs
    kshape, ksst, kost = _dims(p.kshape, *p.kstrides)
    nk = p.nk
    units = min(launch.MAX_BLOCKS, max(1, nk))
    arg_kernel(op, src.dtype)[units, THREADS](kernel_view(src), soff, kshape, ksst, kost, n if p.rshape else 1, rs, out,
                                              p.out_offset, nk)
