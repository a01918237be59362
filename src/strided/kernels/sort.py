"""The sort family: ``sort``, ``argsort`` (along one dim of any layout) and ``searchsorted``.

Lines.  A sort works on lines: the elements along ``axis`` with every other index fixed.
``plan_lines`` merges the other dims of dst and src (NdIter, dst's memory order, so
consecutive lines are neighbours in the output) and keeps each operand's stride along
the axis; a kernel seeks its first line with ``walk.seek`` and steps with ``walk.carry``.
The scan family (``kernels.scan``) walks its lines with the same plan.

Each line is gathered into scratch as integer keys (``_key``: signed, in ``_lt``'s
order) and sorted stably, then written out: the values (reversed when descending) or
the positions (i64).

=================================  ===================================================
line                               sort
=================================  ===================================================
key under 8 bytes, at least        key and position packed in one int64 (unique, so a
``RADIX_MIN`` x the key's bytes    tie falls to the position), radix sorted a byte a
                                   pass (LSD)
other lines of at most             each element's rank counted against all the others
``RANK_MAX`` elements              (a compare loop that vectorises; ties by position),
                                   the element stored at its rank
other lines                        insertion sort of runs of ``_RUN``, then merges
                                   that select, not branch: the packed keys, or 8-byte
                                   keys with their positions carried beside
=================================  ===================================================

One line per work unit; the lines of a chunk share the scratch.

Order.  NumPy's: ascending, NaN after every number (``_lt``), stable (equal keys keep
their order, so -0.0 and 0.0 stay as they came).  Descending follows array_api_strict:
``sort`` is the ascending result reversed; ``argsort`` sorts the reversed line and maps
positions back (``n - 1 - i``), so equal keys keep their original order.

``searchsorted`` walks the needles (NdIter over the output and x2) and bisects the 1-D
sorted ``x1`` read through its stride, with the same NaN-last order.

From ``PARALLEL_MIN`` elements the lines (or needles) are cut into chunks
(``walk.nchunks``) run under ``prange``.  Dtypes: every dtype of ``common.NATIVE`` that has
an order (complex has none); the op layer sorts f16/bf16 as f32, which is exact.
"""

from __future__ import annotations

import numpy as np

from .common import NATIVE, PARALLEL_MIN, check_buffer, check_in_buffer, check_layout, reach, writes_twice
from ..core import caches
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.iterate import NdIter
from ..layout.layout import Layout, norm_dim
from .walk import carry, chunk, direct, in_parallel, index_scratch, launch, nchunks, seek

from numba import njit, prange, types  # numba comes after strided.threads
from numba.extending import overload, register_jitable

__all__ = ["ORDERED", "plan_lines", "check_lines", "launch_lines", "sort", "argsort", "searchsorted"]

_jitable = register_jitable(error_model="numpy")
_JIT = dict(cache=True, error_model="numpy")

# The dtypes with an order (complex has none); new native dtypes flow in from common.
ORDERED = frozenset(d for d in NATIVE if d.kind != "c")
_I64 = np.dtype(np.int64)
# Insertion sort below this run length, merge passes above it.
_RUN = 8
_u = np.uint64  # unsigned scratch indices: no wraparound test per access
# A line of packed keys is radix sorted from this many elements per byte of its key (a
# pass each), merge sorted below; docs/benchmarks.md has the measurement that placed it.
RADIX_MIN = 32
# Lines up to this long that are not radix sorted are ranked: n^2 compares that run a
# vector at a time beat a merge sort's branches; docs/benchmarks.md has the crossing.
RANK_MAX = 128


@_jitable
def _lt(a, b):
    """NumPy's sort order: a NaN is above every number and equal to another NaN."""
    return a < b or (b != b and a == a)


def _key(v):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


@overload(_key, jit_options=dict(error_model="numpy"))
def _ov_key(v):
    """An element as a signed integer key of its width whose order is ``_lt``'s: -0.0 keys
    as 0.0, so that a stable sort keeps the two zeros as they came, and every NaN keys
    above inf.  A float's bits order its positive values; a negative float's order is
    reversed, which flipping all but its sign bit undoes."""
    if isinstance(v, types.Float):
        ity, fty = (np.int32, np.float32) if v.bitwidth == 32 else (np.int64, np.float64)
        top = ity(np.iinfo(ity).max)

        def f(v):
            if v != v:
                return top
            if v == 0:
                return ity(0)
            b = fty(v).view(ity)
            return b ^ top if b < 0 else b
        return f
    if isinstance(v, types.Boolean):
        return lambda v: np.int32(v)
    if isinstance(v, types.Integer):
        if v.signed:
            return lambda v: v
        if v.bitwidth == 64:
            return lambda v: np.uint64(v).view(np.int64) ^ np.int64(-(1 << 63))
        half = 1 << (v.bitwidth - 1)  # unsigned to signed of one width, order kept
        return lambda v: np.int64(v) - half
    return None


@_jitable
def _merge_sort(k, ix, tk, ti, n, carry_ix):
    """Stable sort of the keys ``k[:n]``, carrying ``ix`` when ``carry_ix``: insertion sort
    of runs, then merges whose choice of side is a select, not a branch.  Returns True when
    the result is in ``tk``/``ti``."""
    for s in range(0, n, _RUN):
        e = min(s + _RUN, n)
        for i in range(s + 1, e):
            kv = k[_u(i)]
            iv = ix[_u(i)] if carry_ix else 0
            j = i
            while j > s and kv < k[_u(j - 1)]:
                k[_u(j)] = k[_u(j - 1)]
                if carry_ix:
                    ix[_u(j)] = ix[_u(j - 1)]
                j -= 1
            k[_u(j)] = kv
            if carry_ix:
                ix[_u(j)] = iv
    a_k, a_i, b_k, b_i = k, ix, tk, ti
    moved = False
    w = _RUN
    while w < n:
        for s in range(0, n, 2 * w):
            m = min(s + w, n)
            e = min(s + 2 * w, n)
            i, j, o = s, m, s
            while i < m and j < e:
                right = a_k[_u(j)] < a_k[_u(i)]
                f = j if right else i
                b_k[_u(o)] = a_k[_u(f)]
                if carry_ix:
                    b_i[_u(o)] = a_i[_u(f)]
                j += right
                i += 1 - right
                o += 1
            for f in range(i, m):
                b_k[_u(o)] = a_k[_u(f)]
                if carry_ix:
                    b_i[_u(o)] = a_i[_u(f)]
                o += 1
            for f in range(j, e):
                b_k[_u(o)] = a_k[_u(f)]
                if carry_ix:
                    b_i[_u(o)] = a_i[_u(f)]
                o += 1
        a_k, a_i, b_k, b_i = b_k, b_i, a_k, a_i
        moved = not moved
        w *= 2
    return moved


@_jitable
def _radix_sort(k, tk, n, passes, count):
    """Stable LSD radix sort of packed keys ``k[:n]`` (``_sort_lines``) on the ``passes``
    bytes of their key, from byte 4 up; the top one orders with its sign bit flipped.  A
    byte that is one value throughout is skipped.  ``count`` is passes * 256 int64
    scratch.  Returns True when the result is in ``tk``."""
    top = passes - 1
    count[:passes * 256] = 0
    for i in range(n):
        kv = k[_u(i)]
        for p in range(passes):
            d = ((kv >> (32 + 8 * p)) & 255) ^ (128 if p == top else 0)
            count[_u(p * 256 + d)] += 1
    a, b = k, tk
    moved = False
    for p in range(passes):
        sh = 32 + 8 * p
        flip = 128 if p == top else 0
        base = p * 256
        if count[_u(base + (((a[0] >> sh) & 255) ^ flip))] == n:
            continue
        s = 0
        for d in range(base, base + 256):
            t = count[_u(d)]
            count[_u(d)] = s
            s += t
        for i in range(n):
            kv = a[_u(i)]
            d = _u(base + (((kv >> sh) & 255) ^ flip))
            o = count[d]
            count[d] = o + 1
            b[_u(o)] = kv
        a, b = b, a
        moved = not moved
    return moved


@_jitable
def _line_aligned_i64(n):
    """n int64 of scratch from a 64-byte line: the rank count's vector loads then never
    straddle two lines (np.empty's 16-byte alignment made some processes' counts twice as
    slow as others')."""
    buf = np.empty(n + 8, np.int64)
    h = ((64 - (buf.ctypes.data & 63)) & 63) // 8
    return buf[h:h + n]


@_jitable
def _sort_lines(dst, src, shape, st, offs, n, dax, sax, positions, descending, lo, hi, radix_min, rank_max):
    """Lines [lo, hi): sort each into dst (values, or positions when ``positions``).

    Each element becomes an integer key (``_key``).  A key under 8 bytes and a position
    under 2^31 pack into one int64 (key above, position below), unique, so the sorts move
    one array and a tie falls to the position; such lines of ``radix_min`` elements or
    more per key byte are radix sorted.  8-byte keys are merge sorted, their positions
    carried beside them.  Other lines of at most ``rank_max`` elements are ranked
    instead: an element's place is the count of keys below its own, and of equal keys
    before it."""
    nd = shape.shape[0]
    idx = index_scratch(nd)
    width = src.itemsize
    packed = width < 8 and n < (1 << 31)
    radix = packed and n >= radix_min * width
    rank = not radix and n <= rank_max
    carried = 0 if packed or rank else n  # positions beside the keys
    v = np.empty(n, src.dtype)
    k = _line_aligned_i64(n)
    tk = np.empty(0 if rank else n, np.int64)
    ix = np.empty(carried, np.int64)
    ti = np.empty(carried, np.int64)
    count = np.empty(256 * width if radix else 0, np.int64)
    back = descending and positions  # argsort descending sorts the reversed line
    pd, ps = seek(lo, shape, st, nd, idx, (offs[0], offs[1]))
    for _ in range(lo, hi):
        for i in range(n):
            e = src[ps + (n - 1 - i if back else i) * sax]
            v[i] = e
            if packed:
                k[i] = (np.int64(_key(e)) << 32) | i
            else:
                k[i] = _key(e)
                if carried:
                    ix[i] = i
        if rank:
            for i in range(n):
                kv = k[i]
                r = 0
                for j in range(n):
                    r += np.int64(k[j] < kv)
                if not packed:
                    for j in range(i):
                        r += np.int64(k[j] == kv)
                o = pd + (n - 1 - r if descending else r) * dax
                if positions:
                    dst[o] = n - 1 - i if back else i
                else:
                    dst[o] = v[i]
        else:
            if radix:
                moved = _radix_sort(k, tk, n, width, count)
            else:
                moved = _merge_sort(k, ix, tk, ti, n, not packed)
            rk, ri = (tk, ti) if moved else (k, ix)
            for i in range(n):
                j = rk[i] & 0xFFFFFFFF if packed else ri[i]
                o = pd + (n - 1 - i if descending else i) * dax
                if positions:
                    dst[o] = n - 1 - j if back else j
                else:
                    dst[o] = v[j]
        pd, ps = carry(shape, st, nd, idx, (pd, ps))[1]


@njit(**_JIT)
def _sort_s(dst, src, shape, st, offs, n, dax, sax, positions, descending, radix_min, rank_max, units):
    _sort_lines(dst, src, shape, st, offs, n, dax, sax, positions, descending, 0, units, radix_min, rank_max)


@njit(parallel=True, **_JIT)
def _sort_p(dst, src, shape, st, offs, n, dax, sax, positions, descending, radix_min, rank_max, units, count):
    for c in prange(count):
        lo, hi = chunk(c, count, units)
        _sort_lines(dst, src, shape, st, offs, n, dax, sax, positions, descending, lo, hi, radix_min, rank_max)


@caches.lru("sort.lines", "dst and src layouts, axis", 1024)
def plan_lines(dst_layout: Layout, src_layout: Layout, axis: int):
    """The lines along ``axis`` (normalised) of dst and src: (shape, strides, offsets) of the
    other dims merged (integer arrays, dst's row then src's), the number of lines, and each
    operand's stride along the axis.  A rank-1 layout is one line."""
    keep = [d for d in range(src_layout.ndim) if d != axis]
    rest = [Layout(tuple(lay.shape[d] for d in keep), tuple(lay.stride[d] for d in keep), lay.offset)
            for lay in (dst_layout, src_layout)]
    it = NdIter(*rest)
    shape = np.asarray(it.shape, np.int64)
    st = np.asarray(it.strides, np.int64).reshape(2, len(it.shape))
    offs = np.asarray(it.offsets, np.int64)
    for a in (shape, st, offs):
        a.flags.writeable = False
    lines = 1
    for n in it.shape:
        lines *= n
    return shape, st, offs, lines, dst_layout.stride[axis], src_layout.stride[axis]


def check_lines(op: str, dst, dst_layout: Layout, src, src_layout: Layout, axis: int, *, dst_dtypes, src_dtypes,
                same_shape: bool = True) -> int:
    """The checks every line kernel makes before touching memory; returns the axis, normalised."""
    check_buffer(op, "dst", dst, dtypes=dst_dtypes, writable=True)
    check_buffer(op, "src", src, dtypes=src_dtypes)
    check_layout(op, "dst_layout", dst_layout)
    check_layout(op, "src_layout", src_layout)
    if src_layout.ndim == 0:
        raise ShapeError(f"{op}: expected a tensor of rank >= 1, got a scalar (shape ())")
    d = norm_dim(op, axis, src_layout.ndim)
    if same_shape and dst_layout.shape != src_layout.shape:
        raise ShapeError(f"{op}: expected dst of src's shape {src_layout.shape}, got {dst_layout.shape}")
    check_in_buffer(op, "dst", dst, dst_layout)
    check_in_buffer(op, "src", src, src_layout)
    if writes_twice(dst_layout):
        raise StridedError(f"{op}: dst layout {dst_layout} writes one element several times (a stride-0 dim)")
    return d


def launch_lines(serial, parallel, args: tuple, src_layout: Layout, keep: bool = False):
    """Run a line kernel on ``args`` (dst, src, the plan, the line count last): on the calling
    thread, or from ``PARALLEL_MIN`` elements in chunks under ``prange``.  With ``keep``,
    return ``(run, reach)``: ``run(dst, src)`` makes the same call again on fresh buffers of
    these dtypes through the kernel's compiled entry (``walk.direct``, ``walk.in_parallel``),
    once the caller has checked that src is at least ``reach`` long."""
    count = nchunks(args[-1], src_layout.numel, PARALLEL_MIN)
    kernel = serial if count < 2 else parallel
    if count >= 2:
        args = (*args, count)
    launch(kernel, args, count >= 2)
    if not keep:
        return None
    dst, src, *rest = args
    example = (np.empty(0, dst.dtype), np.empty(0, src.dtype), *rest)
    k = direct(kernel, example) if count < 2 else in_parallel(kernel, example)

    def run(dst, src):
        k(dst, src, *rest)

    return run, reach(src_layout)[1]


def _run_lines(op: str, dst, dst_layout: Layout, src, src_layout: Layout, d: int, positions: bool,
               descending: bool, keep: bool):
    n = src_layout.shape[d]
    if src_layout.numel == 0:
        return None
    shape, st, offs, lines, dax, sax = plan_lines(dst_layout, src_layout, d)
    args = (dst, src, shape, st, offs, n, dax, sax, positions, bool(descending), RADIX_MIN, RANK_MAX, lines)
    return launch_lines(_sort_s, _sort_p, args, src_layout, keep)


def sort(dst, dst_layout: Layout, src, src_layout: Layout, axis: int, descending: bool = False,
         keep: bool = False):
    """``dst`` = ``src`` sorted along ``axis`` (stable, NaN last; reversed when descending).
    dst and src have one dtype of ``ORDERED`` and one shape.  With ``keep``, returns the
    call prepared to run again and the length src must have (``launch_lines``), or None for
    an empty src."""
    d = check_lines("sort", dst, dst_layout, src, src_layout, axis, dst_dtypes=ORDERED, src_dtypes=ORDERED)
    if dst.dtype != src.dtype:
        raise DTypeError(f"sort: dst dtype {dst.dtype} and src dtype {src.dtype} must be equal")
    return _run_lines("sort", dst, dst_layout, src, src_layout, d, False, descending, keep)


def argsort(dst, dst_layout: Layout, src, src_layout: Layout, axis: int, descending: bool = False,
            keep: bool = False):
    """``dst`` (i64) = the positions that sort ``src`` along ``axis``, as ``sort`` orders them;
    ``keep`` as ``sort``'s."""
    d = check_lines("argsort", dst, dst_layout, src, src_layout, axis, dst_dtypes=(_I64,), src_dtypes=ORDERED)
    return _run_lines("argsort", dst, dst_layout, src, src_layout, d, True, descending, keep)


# ---------------------------------------------------------------------------
# searchsorted


@_jitable
def _bisect(x1, o1, s1, n1, v, right):
    """How many of the sorted x1 lie below v (``right``: at or below v), in ``_lt``'s order."""
    lo, hi = 0, n1
    while lo < hi:
        mid = (lo + hi) >> 1
        a = x1[o1 + mid * s1]
        if (not _lt(v, a)) if right else _lt(a, v):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jitable
def _search_body(out, x1, o1, s1, n1, x2, shape, st, offs, right, lo, hi):
    nd = shape.shape[0]
    idx = index_scratch(nd)
    po, p2 = seek(lo, shape, st, nd, idx, (offs[0], offs[1]))
    for _ in range(lo, hi):
        out[po] = _bisect(x1, o1, s1, n1, x2[p2], right)
        po, p2 = carry(shape, st, nd, idx, (po, p2))[1]


@njit(**_JIT)
def _search_s(out, x1, o1, s1, n1, x2, shape, st, offs, right, units):
    _search_body(out, x1, o1, s1, n1, x2, shape, st, offs, right, 0, units)


@njit(parallel=True, **_JIT)
def _search_p(out, x1, o1, s1, n1, x2, shape, st, offs, right, units, count):
    for c in prange(count):
        lo, hi = chunk(c, count, units)
        _search_body(out, x1, o1, s1, n1, x2, shape, st, offs, right, lo, hi)


def searchsorted(out, out_layout: Layout, x1, x1_layout: Layout, x2, x2_layout: Layout, right: bool = False) -> None:
    """``out`` (i64, x2's shape) = where each element of x2 would go into the sorted 1-D x1
    to keep it sorted: before equal elements, or after them when ``right``."""
    op = "searchsorted"
    check_buffer(op, "out", out, dtypes=(_I64,), writable=True)
    check_buffer(op, "x1", x1, dtypes=ORDERED)
    check_buffer(op, "x2", x2, dtypes=ORDERED)
    for what, lay in (("out_layout", out_layout), ("x1_layout", x1_layout), ("x2_layout", x2_layout)):
        check_layout(op, what, lay)
    if x1.dtype != x2.dtype:
        raise DTypeError(f"{op}: x1 dtype {x1.dtype} and x2 dtype {x2.dtype} must be equal (promote first)")
    if x1_layout.ndim != 1:
        raise ShapeError(f"{op}: expected a 1-D x1, got shape {x1_layout.shape}")
    if out_layout.shape != x2_layout.shape:
        raise ShapeError(f"{op}: expected out of x2's shape {x2_layout.shape}, got {out_layout.shape}")
    for what, buf, lay in (("out", out, out_layout), ("x1", x1, x1_layout), ("x2", x2, x2_layout)):
        check_in_buffer(op, what, buf, lay)
    if writes_twice(out_layout):
        raise StridedError(f"{op}: out layout {out_layout} writes one element several times (a stride-0 dim)")
    n = out_layout.numel
    if n == 0:
        return
    it = NdIter(out_layout, x2_layout)
    shape = np.asarray(it.shape, np.int64)
    st = np.asarray(it.strides, np.int64).reshape(2, len(it.shape))
    offs = np.asarray(it.offsets, np.int64)
    args = (out, x1, x1_layout.offset, x1_layout.stride[0], x1_layout.shape[0], x2, shape, st, offs, bool(right), n)
    count = nchunks(n, n * 8, PARALLEL_MIN)  # a bisection costs some loads an element
    if count < 2:
        launch(_search_s, args, False)
    else:
        launch(_search_p, (*args, count), True)
