"""The reduce family's planner, and the checks of its entry points that every backend makes.

``choose`` is the pure planner (``strided.kernels.reduce``'s docstring has its paths): the
source walked with ``NdIter`` against the output stretched back to its shape, merged
dims kept or reduced, the work split for the thread count.  The CUDA backend runs the
same plans.  The checks here raise what both backends raise, worded once: an unknown
op, a dim that is no integer, the reduced dims against the layouts, a half source's
accumulator, an argmax's output, and a reduction that has no answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from ..core import caches
from ..core.errors import DTypeError, ShapeError, StridedError, StridedIndexError
from ..layout.iterate import NdIter
from ..layout.layout import Layout
from .common import CHUNKS_PER_THREAD, DTYPES, MAX_WIDTH, SPLIT_MIN, SPLIT_ROWS, writes_twice
from .half import HALF_VIEW

__all__ = ["REDUCE_OPS", "ARG_REDUCE_OPS", "INNER", "OUTER", "ReducePlan", "choose", "plan_and_arrays",
           "check_op", "check_dims", "check_arg_dim", "has_work", "has_arg_work"]

REDUCE_OPS = ("sum", "prod", "max", "min")
ARG_REDUCE_OPS = ("argmax", "argmin")
INNER, OUTER = "inner", "outer"


# ---------------------------------------------------------------------------
# checks


def check_op(op: str, arg: bool = False) -> None:
    """A StridedError for an op the family does not have (``arg``: argmax/argmin)."""
    ops = ARG_REDUCE_OPS if arg else REDUCE_OPS
    if op not in ops:
        raise StridedError(f"{'arg_reduce' if arg else 'reduce'}: unknown op {op!r} (expected one of {', '.join(ops)})")


def check_arg_dim(op: str, dim) -> int:
    """argmax/argmin's one dim, as an int (its range is ``check_dims``'s)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise StridedError(f"{op}: expected an integer dim, got {dim!r}")
    return int(dim)


def check_dims(op: str, src_layout: Layout, dims, out_layout: Layout) -> tuple[int, ...]:
    """The reduced dims as a tuple of ints, checked against the layouts: sorted, distinct,
    in range, the output of the keepdim shape and writing each element once (what every
    backend's reduce checks before it plans)."""
    nd = src_layout.ndim
    try:
        dims = tuple(int(d) for d in dims)
    except TypeError:
        raise StridedError(f"{op}: expected a tuple of dims, got {dims!r}") from None
    if list(dims) != sorted(set(dims)) or any(not 0 <= d < nd for d in dims):
        raise StridedIndexError(
            f"{op}: expected sorted, distinct dims in [0, {nd}) for a source of shape {src_layout.shape}, got {dims}"
        )
    keep = tuple(1 if d in dims else n for d, n in enumerate(src_layout.shape))
    if out_layout.shape != keep:
        raise ShapeError(
            f"{op}: expected an output of shape {keep} (source {src_layout.shape} reduced over {dims} "
            f"with keepdim), got {out_layout.shape}"
        )
    if writes_twice(out_layout):
        raise StridedError(
            f"{op}: the output layout {out_layout} writes one element several times (a stride-0 dim of size > 1)"
        )
    return dims


def has_work(op: str, src_dtype, out_dtype, src_layout: Layout, dims: tuple, out_layout: Layout) -> bool:
    """After the buffer checks: whether ``reduce`` has anything to write (False: an empty
    output); a half source must accumulate in f32, and max/min of no elements have no answer."""
    if src_dtype in HALF_VIEW and out_dtype != np.float32:
        raise DTypeError(f"{op}: a {DTYPES[src_dtype]} source accumulates in float32, got a {out_dtype} output")
    if out_layout.numel == 0:
        return False
    if src_layout.numel == 0 and op in ("max", "min"):
        raise ShapeError(
            f"{op}: cannot reduce over a zero-size dim (shape {src_layout.shape}, dims {dims}): it has no identity"
        )
    return True


def has_arg_work(op: str, out_dtype, src_layout: Layout, d: int, out_layout: Layout) -> bool:
    """After the buffer checks: whether ``arg_reduce`` over dim ``d`` has anything to write;
    its output is int64, and a zero-size dim has no index to give."""
    if out_dtype != np.int64:
        raise DTypeError(f"{op}: expected an int64 output, got {out_dtype}")
    if out_layout.numel == 0:
        return False
    if src_layout.shape[d] == 0:
        raise ShapeError(f"{op}: cannot reduce over a zero-size dim (shape {src_layout.shape}, dim {d})")
    return True


# ---------------------------------------------------------------------------
# the plan


@dataclass(frozen=True)
class ReducePlan:
    """What ``choose`` decided: the loop, the kept and reduced dims (memory order) and the work split."""

    case: str
    kshape: tuple  # kept dims, outermost first; for OUTER the last one is the inner row
    kstrides: tuple  # (src strides, out strides)
    rshape: tuple  # reduced dims, outermost first; for INNER the last one is the inner run
    rstrides: tuple
    src_offset: int
    out_offset: int
    parallel: bool
    nchunks: int
    nsplit: int = 1  # INNER: parts each output's R points are split into
    width: int = 0  # OUTER: columns per work item
    ncol: int = 0  # OUTER: column blocks per outer K point
    nrsplit: int = 1  # OUTER: parts the rows are split into (each gives a partial vector)
    nk: int = 1  # kept points (outputs)
    nr: int = 1  # reduced points per output


@caches.lru("reduce.plans", "layouts, dims, thread count, thresholds", 1024)
def plan_and_arrays(src_layout, out_layout, dims, for_arg, nthreads, parallel_min):
    """The plan and the integer arrays the kernels take, cached per layouts (and settings)."""
    p = choose(src_layout, out_layout, dims, for_arg, nthreads, parallel_min)
    arrays = (
        np.array(p.kshape, dtype=np.int64),
        np.array(p.kstrides, dtype=np.int64).reshape(2, len(p.kshape)),
        np.array(p.rshape, dtype=np.int64),
        np.array(p.rstrides, dtype=np.int64).reshape(1, len(p.rshape)),
    )
    for a in arrays:
        a.flags.writeable = False
    return p, arrays


def choose(src_layout, out_layout, dims, for_arg, nthreads, parallel_min) -> ReducePlan:
    """The plan for ``nthreads`` threads, parallel from ``parallel_min`` source elements
    (see ``strided.kernels.reduce``'s docstring for the paths)."""
    nd = src_layout.ndim
    red = set(dims)
    ob = Layout(
        src_layout.shape,
        tuple(0 if d in red else s for d, s in enumerate(out_layout.stride)),
        out_layout.offset,
    )
    flips = [
        d
        for d in range(nd)
        if src_layout.stride[d] < 0 and ob.stride[d] <= 0 and not (for_arg and d in red)
    ]
    if flips:
        src_layout, ob = src_layout.flip(flips), ob.flip(flips)
    it = NdIter(src_layout, ob)
    shape, (ss, so) = it.shape, it.strides
    kd = [i for i in range(len(shape)) if so[i] != 0]
    rd = [i for i in range(len(shape)) if so[i] == 0]
    case = INNER if rd and rd[-1] == len(shape) - 1 else OUTER
    kshape = tuple(shape[i] for i in kd)
    kstrides = (tuple(ss[i] for i in kd), tuple(so[i] for i in kd))
    rshape = tuple(shape[i] for i in rd)
    rstrides = tuple(ss[i] for i in rd)
    numel = src_layout.numel
    parallel = numel >= parallel_min and nthreads > 1
    # Several chunks per thread, handed out dynamically: a thread that the OS
    # preempts on a busy machine does not hold the others up.
    want = CHUNKS_PER_THREAD * nthreads
    nk, nr = prod(kshape), prod(rshape)
    if case == INNER:
        nsplit = 1
        if parallel and nk < want:
            nsplit = max(1, min(-(-want // nk), nr // SPLIT_MIN))
        work = nk * nsplit
        nchunks = min(want, work) if parallel else 1
        return ReducePlan(case, kshape, kstrides, rshape, rstrides, it.offsets[0], it.offsets[1],
                          parallel and nchunks > 1, nchunks, nsplit=nsplit, nk=nk, nr=nr)
    n_in = kshape[-1]
    nko = nk // n_in
    width = min(n_in, MAX_WIDTH)
    nrsplit = 1
    if parallel and nko * -(-n_in // width) < want:
        if for_arg:
            # no partial vectors for arg reductions: split the columns finer instead
            width = max(1, min(width, -(-n_in // -(-want // nko))))
        elif nko * -(-n_in // width) < nthreads:
            # split the rows, one part a thread: each part reads whole rows forwards into its
            # own partial vector, and more parts than threads cost more than they balance
            nrsplit = max(1, min(-(-nthreads // (nko * -(-n_in // width))), nr // SPLIT_ROWS))
    ncol = -(-n_in // width)
    items = nko * ncol * nrsplit
    nchunks = min(want, items) if parallel else 1
    return ReducePlan(case, kshape, kstrides, rshape, rstrides, it.offsets[0], it.offsets[1],
                      parallel and nchunks > 1, nchunks, width=width, ncol=ncol, nrsplit=nrsplit, nk=nk, nr=nr)
