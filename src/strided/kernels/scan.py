"""The scan family: running sums and products along one dim, and the coordinates of the
nonzero elements.

=========  ==============================================  ==========================
entry      what it does                                    loop
=========  ==============================================  ==========================
cumulate   ``dst[.., k, ..] = src[.., 0, ..] op ... op     one line per work unit
           src[.., k, ..]`` (op: sum or prod), in dst's    (``sort.plan_lines``: any
           dtype, left to right (NumPy's cumsum order)     layout, lines in dst order);
                                                           strided lines four at a time
                                                           in lockstep
nonzero    the row-major coordinates of every true         one odometer over the
           element of a bool source, as (count, ndim)      source's logical dims
           int64 rows                                      (``count_true`` first)
=========  ==============================================  ==========================

Lines go parallel from ``PARALLEL_MIN`` elements as the sort family's do; nonzero runs on
the calling thread (its output position depends on every element before it).  Dtypes:
``cumulate`` takes any numeric dtype of ``common.NATIVE`` (src and dst alike; the op layer
converts bools and half types), ``nonzero`` bool only (the op layer compares with zero).
"""

from __future__ import annotations

import numpy as np

from .common import NATIVE, check_buffer, check_in_buffer, check_layout
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.layout import Layout
from .sort import check_lines, launch_lines, plan_lines
from .walk import carry, chunk, index_scratch, seek

from numba import njit, prange  # numba comes after strided.threads
from numba.extending import register_jitable

__all__ = ["SCAN_OPS", "NUMERIC", "cumulate", "count_true", "nonzero"]

_jitable = register_jitable(error_model="numpy")
_JIT = dict(cache=True, error_model="numpy")

SCAN_OPS = ("sum", "prod")
NUMERIC = frozenset(d for d in NATIVE if d.kind != "b")
_BOOL = (np.dtype(np.bool_),)
_u = np.uint64


@_jitable
def _scan_lines(dst, src, shape, st, offs, n, dax, sax, prod, lo, hi):
    """Lines [lo, hi), four at a time in lockstep while four are left: their four running
    values are chains that overlap, where one line's additions each wait for the last,
    and neighbouring strided lines (a scan down the columns) share each cache line they
    load.  Each line accumulates left to right, so the values are the one-line loop's.
    Positions index as unsigned integers: they are never negative, and a signed index
    costs a wraparound test per access (which made four unit-stride lines in lockstep
    slower than one at a time)."""
    nd = shape.shape[0]
    idx = index_scratch(nd)
    one = dst.dtype.type(1) if prod else dst.dtype.type(0)
    pd, ps = seek(lo, shape, st, nd, idx, (offs[0], offs[1]))
    t = lo
    while t + 4 <= hi:
        d0, s0 = pd, ps
        d1, s1 = carry(shape, st, nd, idx, (d0, s0))[1]
        d2, s2 = carry(shape, st, nd, idx, (d1, s1))[1]
        d3, s3 = carry(shape, st, nd, idx, (d2, s2))[1]
        a0 = a1 = a2 = a3 = one
        for i in range(n):
            v0, v1, v2, v3 = src[_u(s0 + i * sax)], src[_u(s1 + i * sax)], src[_u(s2 + i * sax)], src[_u(s3 + i * sax)]
            a0, a1, a2, a3 = (a0 * v0, a1 * v1, a2 * v2, a3 * v3) if prod else (a0 + v0, a1 + v1, a2 + v2, a3 + v3)
            dst[_u(d0 + i * dax)] = a0
            dst[_u(d1 + i * dax)] = a1
            dst[_u(d2 + i * dax)] = a2
            dst[_u(d3 + i * dax)] = a3
        pd, ps = carry(shape, st, nd, idx, (d3, s3))[1]
        t += 4
    for _ in range(t, hi):
        acc = one
        for i in range(n):
            v = src[_u(ps + i * sax)]
            acc = acc * v if prod else acc + v
            dst[_u(pd + i * dax)] = acc
        pd, ps = carry(shape, st, nd, idx, (pd, ps))[1]


@njit(**_JIT)
def _scan_s(dst, src, shape, st, offs, n, dax, sax, prod, units):
    _scan_lines(dst, src, shape, st, offs, n, dax, sax, prod, 0, units)


@njit(parallel=True, **_JIT)
def _scan_p(dst, src, shape, st, offs, n, dax, sax, prod, units, count):
    for c in prange(count):
        lo, hi = chunk(c, count, units)
        _scan_lines(dst, src, shape, st, offs, n, dax, sax, prod, lo, hi)


def cumulate(op: str, dst, dst_layout: Layout, src, src_layout: Layout, axis: int, keep: bool = False):
    """``dst`` = the running ``op`` (sum or prod) of ``src`` along ``axis``; one dtype, one shape.
    With ``keep``, returns the call prepared to run again and the length src must have
    (``sort.launch_lines``), or None for an empty src."""
    if op not in SCAN_OPS:
        raise StridedError(f"cumulate: unknown op {op!r} (expected one of {', '.join(SCAN_OPS)})")
    name = "cumulative_" + op
    d = check_lines(name, dst, dst_layout, src, src_layout, axis, dst_dtypes=NUMERIC, src_dtypes=NUMERIC)
    if dst.dtype != src.dtype:
        raise DTypeError(f"{name}: dst dtype {dst.dtype} and src dtype {src.dtype} must be equal")
    if src_layout.numel == 0:
        return None
    shape, st, offs, lines, dax, sax = plan_lines(dst_layout, src_layout, d)
    args = (dst, src, shape, st, offs, src_layout.shape[d], dax, sax, op == "prod", lines)
    return launch_lines(_scan_s, _scan_p, args, src_layout, keep)


# ---------------------------------------------------------------------------
# nonzero


@njit(**_JIT)
def _true(src, shape, st, offset, numel, out, write):
    """Count the true elements; with ``write``, put their coordinates in ``out`` as rows
    (-1 when out has fewer rows than there are true elements)."""
    nd = shape.shape[0]
    idx = index_scratch(nd)
    p = offset
    r = 0
    for _ in range(numel):
        if src[p]:
            if write:
                if r + nd > out.shape[0]:
                    return -1
                for d in range(nd):
                    out[r + d] = idx[d]
            r += nd
        (p,) = carry(shape, st, nd, idx, (p,))[1]
    return r // nd


def _check_bool(op: str, src, layout: Layout):
    check_buffer(op, "src", src, dtypes=_BOOL)
    check_layout(op, "layout", layout)
    check_in_buffer(op, "src", src, layout)
    # Logical dims, unmerged: the coordinates are row-major positions (rank 0 is one element).
    shape = np.asarray(layout.shape or (1,), np.int64)
    st = np.asarray(layout.stride or (0,), np.int64).reshape(1, len(shape))
    return shape, st


def count_true(src, layout: Layout) -> int:
    """How many elements of the bool ``src`` under ``layout`` are true."""
    shape, st = _check_bool("nonzero", src, layout)
    if not layout.numel:
        return 0
    return int(_true(src, shape, st, layout.offset, layout.numel, np.empty(0, np.int64), False))


def nonzero(src, layout: Layout, out) -> None:
    """``out`` (int64, ``count * max(ndim, 1)`` long) = the coordinates of the true elements
    of ``src``, one row of ``ndim`` per element in row-major order (``count`` from ``count_true``)."""
    shape, st = _check_bool("nonzero", src, layout)
    check_buffer("nonzero", "out", out, dtypes=(np.dtype(np.int64),), writable=True)
    rows = _true(src, shape, st, layout.offset, layout.numel, out, True) if layout.numel else 0
    if rows * len(shape) != len(out):
        raise ShapeError(f"nonzero: expected out of count x ndim elements ({len(shape)} a row), got {len(out)}")
