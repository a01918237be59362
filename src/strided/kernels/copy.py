"""The copy family: write every element of a src view into a dst view.

``copy_into`` checks, then runs the path ``plan_copy`` chooses (``kernels.copy_plan``, the
pure planner, re-exported here); the table of paths is ``plan_copy``'s docstring.  The
kernels are small numba functions over flat 1-D buffers and integer layout arguments.
Each kernel is a ``_*_body(.., lo, hi)`` over a range of work units (elements, rows,
blocks or tile strips) with two thin drivers: ``_s`` runs the whole range on the calling
thread, ``_p`` cuts it into chunks under ``prange``.  Two compiled drivers rather than one
``parallel=True`` function, because entering a parallel region costs tens of microseconds
to milliseconds on this kind of machine even for one chunk.

Same-dtype copies move raw bits: the buffers are seen as elements of their
width (``MOVES``), so every dtype of one width shares one compiled kernel
(bool, u8, i8 as uint8; f16, bf16, i16, u16 as uint16; f32, u32, i32 as float32;
f64, i64, u64, c64 as float64; c128 as complex128), and f32 and f64 buffers go
as they are.  Conversions view f16 bits as
uint16 and bf16 bits as int16, so that ``_move`` can tell the two half formats
apart by type at compile time and pick the conversion with no per-element
branch; the int16 and uint16 dtypes, which those views take, convert through
32 bits (``_convert_16``).  complex to a real dtype is refused (the standard
leaves it out; NumPy drops the imaginary part with a warning).
"""

from __future__ import annotations

from .common import (
    BITS,
    BLOCK_MIN,
    BLOCK_TILES,
    COPY_PARALLEL_MIN,
    DENSE_MEMMOVE_MIN,
    DTYPES,
    MANY,
    RUN_PIECE_BYTES,
    WIDENED,
    check_buffer,
    check_conversion,
    check_layout,
    check_same_shape,
    reach,
)

from math import prod

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ..core import caches
from ..core.errors import ShapeError, StridedError
from ..layout.layout import Layout
from ..core.storage import alloc
from . import walk
from .copy_plan import CopyPlan, cached_plan, dense_in_order_of, dense_src_rows, plan_copy, tile_plan
from .walk import carry, chunk, direct, in_parallel, index_scratch, seek
from .half import (
    HALF_VIEW,
    bf16_bits_to_f16_bits,
    bf16_bits_to_f32,
    f16_bits_to_bf16_bits,
    f16_bits_to_f32,
    f16_bits_to_f64,
    f32_to_bf16_bits,
    f32_to_f16_bits,
    f64_to_f16_bits,
)

__all__ = [
    "copy_into", "copy_many_into", "ManyCopy", "plan_copy", "CopyPlan", "check_dst_layout", "check_views",
    "bits_view", "typed_view",
    "COPY_PARALLEL_MIN", "BLOCK_MIN", "tile_edge", "tile_plan", "dense_in_order_of",
]

# ---------------------------------------------------------------------------
# buffers
# ---------------------------------------------------------------------------


# What a same-dtype copy moves elements as, by itemsize: one kernel per width serves every
# dtype of that width.  4- and 8-byte elements move as f32 and f64, so the commonest
# buffers need no view (a view costs more than a small copy's kernel time), and a float
# load and store keep every bit, NaN payloads included.
MOVES = {size: np.dtype(bits) for size, bits in BITS.items()} | {4: np.dtype(np.float32), 8: np.dtype(np.float64)}


def bits_view(buf: np.ndarray) -> np.ndarray:
    """The buffer as a same-dtype copy moves it: elements of its width (``MOVES``)."""
    bits = MOVES[buf.itemsize]
    return buf if buf.dtype == bits else buf.view(bits)


def typed_view(buf: np.ndarray) -> np.ndarray:
    """The buffer as numba can type it for a conversion: f16 -> uint16, bf16 -> int16 bits."""
    v = HALF_VIEW.get(buf.dtype)
    return buf if v is None else buf.view(v)


# ---------------------------------------------------------------------------
# one element: the only place that knows about dtypes
# ---------------------------------------------------------------------------


# Every buffer index goes through _u: numba wraps a negative signed index around
# (a compare and an add per access), which also stops LLVM from vectorizing the
# loop; an unsigned index has no wraparound.  Positions are int64 while they
# are computed (strides may be negative) and are never negative once validated.
_u = np.uint64


def _move(dst, i, src, j):  # pragma: no cover - replaced by the overload inside numba
    raise NotImplementedError


_H = types.uint16  # f16 bits
_B = types.int16  # bf16 bits


@overload(_move)
def _move_impl(dst, i, src, j):
    sd, dd = src.dtype, dst.dtype
    if sd == dd:
        def f(dst, i, src, j):
            dst[_u(i)] = src[_u(j)]
    elif sd == _H:
        if dd == _B:
            def f(dst, i, src, j):
                dst[_u(i)] = f16_bits_to_bf16_bits(src[_u(j)])
        elif dd == types.float64:
            def f(dst, i, src, j):
                dst[_u(i)] = f16_bits_to_f64(src[_u(j)])
        elif dd == types.boolean:
            def f(dst, i, src, j):
                dst[_u(i)] = (src[_u(j)] & 0x7FFF) != 0
        else:  # f32 and the integers cast from the f32 value, as NumPy does
            def f(dst, i, src, j):
                dst[_u(i)] = f16_bits_to_f32(src[_u(j)])
    elif sd == _B:
        if dd == _H:
            def f(dst, i, src, j):
                dst[_u(i)] = bf16_bits_to_f16_bits(src[_u(j)])
        elif dd == types.boolean:
            def f(dst, i, src, j):
                dst[_u(i)] = (src[_u(j)] & 0x7FFF) != 0
        else:
            def f(dst, i, src, j):
                dst[_u(i)] = bf16_bits_to_f32(src[_u(j)])
    elif dd == _H:
        if sd == types.float64:
            def f(dst, i, src, j):
                dst[_u(i)] = f64_to_f16_bits(src[_u(j)])
        elif sd == types.boolean:
            def f(dst, i, src, j):
                dst[_u(i)] = 0x3C00 if src[_u(j)] else 0
        else:  # f32 directly; an integer is exact in f32 wherever its f16 is finite
            def f(dst, i, src, j):
                dst[_u(i)] = f32_to_f16_bits(np.float32(src[_u(j)]))
    elif dd == _B:
        if sd == types.boolean:
            def f(dst, i, src, j):
                dst[_u(i)] = 0x3F80 if src[_u(j)] else 0
        else:  # ml_dtypes rounds f64 and the integers through f32 too
            def f(dst, i, src, j):
                dst[_u(i)] = f32_to_bf16_bits(np.float32(src[_u(j)]))
    elif dd == types.boolean:
        def f(dst, i, src, j):
            dst[_u(i)] = src[_u(j)] != 0
    else:  # numeric to numeric: numba's casts are C's, as NumPy's astype
        def f(dst, i, src, j):
            dst[_u(i)] = src[_u(j)]
    return f


def _dense(dst, i, src, j, n):  # pragma: no cover - replaced by the overload inside numba
    raise NotImplementedError


@overload(_dense, inline="always")
def _dense_impl(dst, i, src, j, n):
    """A dense run of n elements: a memmove when no conversion is needed and the run is long,
    else a loop spelled with unit steps so that LLVM vectorises it."""
    if src.dtype == dst.dtype:
        def f(dst, i, src, j, n):
            if n >= DENSE_MEMMOVE_MIN:
                _memmove(dst, i, src, j, n)
            else:
                for t in range(n):
                    dst[_u(i + t)] = src[_u(j + t)]
    else:
        def f(dst, i, src, j, n):
            for t in range(n):
                _move(dst, i + t, src, j + t)
    return f


@intrinsic
def _memmove(typingctx, dst, di, src, si, n):
    """``dst[di:di+n] = src[si:si+n]`` as one libc memmove (same dtype, indices already validated).

    libc's copy is as fast as a vectorised loop on long runs and handles
    alignment and short tails better; numba's own slice assignment would
    check for overlap and may copy through a temporary."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype):
        return None
    sig = types.void(dst, di, src, si, n)

    def codegen(context, builder, sig, args):
        d, i, s, j, count = args
        i = context.cast(builder, i, sig.args[1], types.intp)
        j = context.cast(builder, j, sig.args[3], types.intp)
        count = context.cast(builder, count, sig.args[4], types.intp)
        da = context.make_array(sig.args[0])(context, builder, d)
        sa = context.make_array(sig.args[2])(context, builder, s)
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        cgutils.raw_memmove(builder, builder.gep(da.data, [i]), builder.gep(sa.data, [j]), count, itemsize)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def copy_run(dst, d, src, s, n):
    """``dst[d:d+n] = src[s:s+n]`` in memmoves of at most RUN_PIECE_BYTES (same dtype,
    indices already validated)."""
    piece = max(1, RUN_PIECE_BYTES // dst.itemsize)
    for k in range(0, n, piece):
        _memmove(dst, d + k, src, s + k, min(piece, n - k))


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------


# -- one dense run ------------------------------------------------------------
@njit(cache=True)
def _run_body(dst, doff, src, soff, lo, hi):
    copy_run(dst, doff + lo, src, soff + lo, hi - lo)


@njit(cache=True)
def _run_s(dst, doff, src, soff, n):
    _run_body(dst, doff, src, soff, 0, n)


@njit(cache=True, parallel=True)
def _run_p(dst, doff, src, soff, n, nchunks):
    for c in prange(nchunks):
        lo, hi = chunk(c, nchunks, n)
        _run_body(dst, doff, src, soff, lo, hi)


# -- copy2d: rows of `cols` elements, row strides of each side (0 = broadcast) --
@njit(cache=True)
def _rows_body(dst, doff, drow, src, soff, srow, cols, lo, hi):
    for r in range(lo, hi):
        copy_run(dst, doff + r * drow, src, soff + r * srow, cols)


@njit(cache=True)
def _rows_s(dst, doff, drow, src, soff, srow, rows, cols):
    _rows_body(dst, doff, drow, src, soff, srow, cols, 0, rows)


@njit(cache=True, parallel=True)
def _rows_p(dst, doff, drow, src, soff, srow, rows, cols, nchunks):
    for c in prange(nchunks):
        lo, hi = chunk(c, nchunks, rows)
        _rows_body(dst, doff, drow, src, soff, srow, cols, lo, hi)


# -- blocks: dense src runs whose starts come from an odometer; dst dense ------
# ``ost`` is the block starts' strides as one operand's row (shape (1, dims)).
@njit(cache=True)
def _blocks_body(dst, doff, src, soff, oshape, ost, blen, lo, hi):
    nd = oshape.shape[0]
    idx = index_scratch(nd)
    (s,) = seek(lo, oshape, ost, nd, idx, (soff,))
    d = doff + lo * blen
    for b in range(lo, hi):
        copy_run(dst, d, src, s, blen)
        d += blen
        (s,) = carry(oshape, ost, nd, idx, (s,))[1]


@njit(cache=True)
def _blocks_s(dst, doff, src, soff, oshape, ost, blen, nblocks):
    _blocks_body(dst, doff, src, soff, oshape, ost, blen, 0, nblocks)


@njit(cache=True, parallel=True)
def _blocks_p(dst, doff, src, soff, oshape, ost, blen, nblocks, nchunks):
    for c in prange(nchunks):
        lo, hi = chunk(c, nchunks, nblocks)
        _blocks_body(dst, doff, src, soff, oshape, ost, blen, lo, hi)


# -- general: an odometer over merged dims, the last one walked inline --------
# ``st`` has two rows: dst's strides, then src's.
@njit(cache=True)
def _nd_body(dst, doff, src, soff, st, shape, lo, hi):
    """Elements [lo, hi) in row-major order of ``shape`` (a chunk may start mid-row)."""
    last = shape.shape[0] - 1
    inner = shape[last]
    di = st[0, last]
    si = st[1, last]
    idx = index_scratch(last)
    row = lo // inner
    j = lo - row * inner
    bd, bs = seek(row, shape, st, last, idx, (doff, soff))
    e = lo
    while e < hi:
        n = min(inner - j, hi - e)
        d = bd + j * di
        s = bs + j * si
        if di == 1 and si == 1:
            _dense(dst, d, src, s, n)
        else:
            for t in range(n):
                _move(dst, d + t * di, src, s + t * si)
        e += n
        j = 0
        if e >= hi:
            break
        bd, bs = carry(shape, st, last, idx, (bd, bs))[1]


@njit(cache=True)
def _nd_s(dst, doff, src, soff, st, shape, n):
    _nd_body(dst, doff, src, soff, st, shape, 0, n)


@njit(cache=True, parallel=True)
def _nd_p(dst, doff, src, soff, st, shape, n, nchunks):
    for c in prange(nchunks):
        lo, hi = chunk(c, nchunks, n)
        _nd_body(dst, doff, src, soff, st, shape, lo, hi)


# -- tiled: the two innermost dims of dst and src disagree ---------------------
# Dims, outermost first: outer dims (an odometer), then P (src's innermost) and
# Q (dst's innermost).  The P x Q plane is cut into blocks of w x w (w =
# BLOCK_TILES tiles) and each block into b x b tiles copied through a small buffer, as
# PyTorch's copy_same_type_transpose_ does: b runs along P are read from src
# into the buffer, then b runs along Q are written to dst from it.  Every run
# is b elements of a dense line (b * itemsize >= 256 bytes), so each cache line
# is touched once per tile; writing straight from src to dst instead keeps b dst
# lines live at once, and with a power-of-two row pitch they all map to one
# cache set and evict each other.  Within a block the tiles go along P first,
# so src is read in runs of w elements (a 4 KiB page for f32) rather than b.
# Work unit: one block.  Same dtype only (raw bits): conversions that need
# tiling go through a scratch buffer (``convert_via_scratch``).


@njit(cache=True)
def _tile_body(dst, doff, dp, dq, src, soff, sp, sq, ost, oshape, P, Q, b, buf, lo, hi):
    nd = oshape.shape[0]
    w = b * BLOCK_TILES
    pblocks = (P + w - 1) // w
    qblocks = (Q + w - 1) // w
    idx = index_scratch(nd)
    for u in range(lo, hi):
        o = u // (pblocks * qblocks)
        r = u - o * (pblocks * qblocks)
        pw0 = (r // qblocks) * w
        qw0 = (r % qblocks) * w
        pw1 = min(pw0 + w, P)
        qw1 = min(qw0 + w, Q)
        d0, s0 = seek(o, oshape, ost, nd, idx, (doff, soff))
        for q0 in range(qw0, qw1, b):
            nq = min(b, qw1 - q0)
            for p0 in range(pw0, pw1, b):
                np_ = min(b, pw1 - p0)
                for q in range(nq):
                    sb = s0 + p0 * sp + (q0 + q) * sq
                    bb = q * b
                    if sp == 1:
                        for p in range(np_):
                            buf[_u(bb + p)] = src[_u(sb + p)]
                    else:
                        for p in range(np_):
                            buf[_u(bb + p)] = src[_u(sb + p * sp)]
                for p in range(np_):
                    db = d0 + (p0 + p) * dp + q0 * dq
                    if dq == 1:
                        for q in range(nq):
                            dst[_u(db + q)] = buf[_u(q * b + p)]
                    else:
                        for q in range(nq):
                            dst[_u(db + q * dq)] = buf[_u(q * b + p)]


@njit(cache=True)
def _tile_s(dst, doff, dp, dq, src, soff, sp, sq, ost, oshape, P, Q, b, units):
    buf = np.empty(b * b, src.dtype)
    _tile_body(dst, doff, dp, dq, src, soff, sp, sq, ost, oshape, P, Q, b, buf, 0, units)


@njit(cache=True, parallel=True)
def _tile_p(dst, doff, dp, dq, src, soff, sp, sq, ost, oshape, P, Q, b, units, nchunks):
    for c in prange(nchunks):
        lo, hi = chunk(c, nchunks, units)
        buf = np.empty(b * b, src.dtype)
        _tile_body(dst, doff, dp, dq, src, soff, sp, sq, ost, oshape, P, Q, b, buf, lo, hi)


def tile_edge(itemsize: int) -> int:
    """Tile edge: runs of 256 bytes (64 f32), at least 32 and at most 128 elements."""
    return min(128, max(32, 256 // itemsize))


def nchunks(units: int, numel: int) -> int:
    """How many parallel chunks to cut a copy's ``units`` into; below 2, run on this thread."""
    return walk.nchunks(units, numel, COPY_PARALLEL_MIN)


@caches.lru("copy.int_arrays", "tuple of ints", 4096)
def _i64(values: tuple) -> np.ndarray:
    """A tuple of ints as the int64 array a kernel takes; cached, and never written to."""
    return np.asarray(values, dtype=np.int64)


def check_dst_layout(op: str, layout: Layout) -> None:
    """A destination may not alias its own elements through a stride-0 dim."""
    for d, (n, s) in enumerate(zip(layout.shape, layout.stride)):
        if n > 1 and s == 0:
            raise ShapeError(
                f"{op}: the dst layout {layout} has a broadcast dim {d} (size {n}, stride 0); "
                f"writing through it would store {n} elements at one address"
            )


def check_views(op: str, dst_layout: Layout, dst_len: int, src_layout: Layout, src_len: int) -> int:
    """What every backend's copy checks of its two views once the buffers passed: each layout
    within its buffer's ``len``, one shape, a destination writing each element once.  Returns
    the number of elements."""
    check_layout(op, "dst_layout", dst_layout).validate(dst_len)
    check_layout(op, "src_layout", src_layout).validate(src_len)
    check_same_shape(op, dst_layout, src_layout)
    check_dst_layout(op, dst_layout)
    return dst_layout.numel


def copy_into(dst: np.ndarray, dst_layout: Layout, src: np.ndarray, src_layout: Layout, keep: bool = False):
    """Write every element of the src view into the dst view, in row-major correspondence.

    Shapes must be equal; src may broadcast (stride 0), dst may not.  Both
    layouts are validated against their buffers before any access.  Equal
    dtypes move raw bits; different dtypes convert like NumPy's ``astype``
    (``casting='unsafe'``), half precision bit-exactly; a float outside the
    range of an integer dst converts to whatever C's cast gives, as in NumPy.
    The caller handles src/dst memory overlap (copy src first).  The path
    taken is ``plan_copy``'s.  With ``keep``, returns the copy prepared to run
    again (``_prepared``), or None where it has no kept form.
    """
    op = "copy_into"
    check_buffer(op, "dst", dst, dtypes=DTYPES, writable=True)
    check_buffer(op, "src", src, dtypes=DTYPES)
    n = check_views(op, dst_layout, len(dst), src_layout, len(src))
    if n == 0:
        return None
    same = dst.dtype == src.dtype
    if not same:
        check_conversion(op, dst.dtype, src.dtype)
        if src.dtype in WIDENED or dst.dtype in WIDENED:
            return _convert_16(dst, dst_layout, src, src_layout)
    plan = cached_plan(dst_layout, src_layout, same)
    if plan.path == "convert_via_scratch":
        # Tile src's bits into a scratch buffer of its own dtype laid out in dst's
        # memory order (the same-dtype tiled kernel), then convert in that order.
        # A tiled kernel per dtype pair would double what conversions compile.
        scratch = alloc(n, src.dtype)
        lay = dense_in_order_of(dst_layout)
        copy_into(scratch.data, lay, src, src_layout)
        copy_into(dst, dst_layout, scratch.data, lay)
        return None
    d, s = (bits_view(dst), bits_view(src)) if same else (typed_view(dst), typed_view(src))
    _PREP[plan.path](n, s.itemsize, *plan.args)(d, s)
    if keep and (same or src.dtype.kind != "c"):  # a complex source converts through NumPy's rules each time
        return _prepared(plan, n, dst.dtype, src.dtype, dst_layout, src_layout)
    return None


def _convert_16(dst, dst_layout: Layout, src, src_layout: Layout) -> None:
    """A conversion from or to int16/uint16.  numba types those buffers as the half types'
    bit views (common.WIDENED), so ``_move`` would take them for halves: a 16-bit src is
    widened to 32 bits first (exact, only the span its layout reaches), and a 16-bit dst
    receives a 32-bit result that NumPy narrows, wrapping as a C cast does (so as NumPy's
    own ``astype``: floats reach 16 bits through a 32-bit integer there too)."""
    if src.dtype in WIDENED:
        lo, hi = reach(src_layout)
        wide = src[lo:hi].astype(WIDENED[src.dtype])
        copy_into(dst, dst_layout, wide, Layout(src_layout.shape, src_layout.stride, src_layout.offset - lo))
        return
    dense = Layout.contiguous(dst_layout.shape)
    scratch = np.empty(dense.numel, WIDENED[dst.dtype])
    copy_into(scratch, dense, src, src_layout)
    copy_into(dst, dst_layout, scratch.astype(dst.dtype), dense)


def _prepared(plan, n: int, dst_dtype, src_dtype, dst_layout: Layout, src_layout: Layout):
    """The copy ``copy_into`` has just checked and run, as ``(run, reach)``: ``run(dst, src)``
    copies again between buffers of these numpy dtypes once the caller has checked
    ``len(dst) >= reach[0]``, ``len(src) >= reach[1]`` and that dst is writable (made after
    the run: the kernel is compiled, so a calling-thread run calls its entry)."""
    same = dst_dtype == src_dtype
    # The dtypes the kernel sees: the moved bits of a same-dtype copy, the typed views of a
    # conversion; a serial run calls the kernel's compiled entry for them (``walk.direct``).
    if same:
        seen = (MOVES[dst_dtype.itemsize],) * 2
    else:
        seen = tuple(HALF_VIEW.get(d, d) for d in (dst_dtype, src_dtype))
    kernel = _PREP[plan.path](n, src_dtype.itemsize, *plan.args, bufs=tuple(np.empty(0, d) for d in seen))
    if same and dst_dtype == MOVES[dst_dtype.itemsize]:
        run = kernel
    elif same:
        bits = MOVES[dst_dtype.itemsize]

        def run(dst, src):
            kernel(dst.view(bits), src.view(bits))
    else:
        def run(dst, src):
            kernel(typed_view(dst), typed_view(src))
    return run, (reach(dst_layout)[1], reach(src_layout)[1])


# ---------------------------------------------------------------------------
# many copies in one call (cat)
# ---------------------------------------------------------------------------

# Copies batched into one kernel call: ``MANY`` src buffers, ``_many_s``'s s0..s7 (short
# batches padded with an empty buffer).  The buffers go as they are: a bit view of each
# would cost more than a small copy's kernel time.
_PATH_CODE = {"run": 0, "rows": 1, "blocks": 2, "tiled": 3, "general": 4}
# A copy's row in the table: path code, 9 slots of path integers, the src's reach (the
# length its buffer needs), the count k of dims of the path's dim arrays, then three
# arrays of k.  Rows of different k follow each other.
_HEAD = 12


@caches.lru("copy.table_rows", "dst layout, src layout, tile edge", 1024)
def _plan_row(dst_layout: Layout, src_layout: Layout, b: int) -> tuple:
    """``plan_copy``'s same-dtype plan as a row of ``_many_s``'s table (cached: a model's
    step cats the same layouts again and again)."""
    plan = plan_copy(dst_layout, src_layout, True)
    path, args = plan.path, plan.args
    dims: tuple = ()
    if path in ("run", "rows"):
        scalars = list(args)
    elif path == "blocks":
        doff, soff, bdims, strides, blen = args
        scalars, dims = [doff, soff, blen, prod(bdims)], (bdims, strides)
    elif path == "general":
        doff, dstr, soff, sstr, shape = args
        scalars, dims = [doff, soff, prod(shape)], (dstr, sstr, shape)
    else:  # tiled
        doff, odstr, dp, dq, soff, osstr, sp, sq, oshape, P, Q = args
        w = b * BLOCK_TILES
        units = prod(oshape) * ((P + w - 1) // w) * ((Q + w - 1) // w)
        scalars, dims = [doff, dp, dq, soff, sp, sq, P, Q, units], (odstr, osstr, oshape)
    return _table_row(path, scalars, reach(src_layout)[1], dims)


def _table_row(path: str, scalars, reach: int, dims: tuple = ()) -> tuple:
    k = len(dims[0]) if dims else 0
    row = [_PATH_CODE[path], *scalars] + [0] * (_HEAD - 3 - len(scalars)) + [reach, k]
    for a in range(3):
        row += list(dims[a]) if a < len(dims) else [0] * k
    return tuple(row)


def _many(dst, s0, s1, s2, s3, s4, s5, s6, s7, table, count, b):  # pragma: no cover - the overload runs
    raise NotImplementedError


@overload(_many)
def _many_impl(dst, s0, s1, s2, s3, s4, s5, s6, s7, table, count, b):
    """The first ``count`` copies of ``table`` (rows from ``_plan_row``), the i-th from src
    ``s<i>``; ``b`` is the tile edge of the tiled rows (0 when there are none).  Returns 0,
    or refuses (nonzero, nothing written) srcs that are not what the table was built for:
    told apart by type when numba compiles (not all 1-D contiguous arrays of dst's dtype),
    by length at run time (shorter than a row's reach).  So a caller that looks its table
    up by the layouts' identities checks no buffer in Python.  The srcs come as separate
    arguments: a tuple of them costs numba more to unpack."""
    fits = (
        isinstance(dst, types.Array) and dst.ndim == 1 and dst.layout == "C" and dst.mutable
        and isinstance(s0, types.Array) and s0.ndim == 1 and s0.layout == "C" and s0.dtype == dst.dtype
        and all(s == s0 for s in (s1, s2, s3, s4, s5, s6, s7))
    )
    if not fits:
        return lambda dst, s0, s1, s2, s3, s4, s5, s6, s7, table, count, b: -1

    def f(dst, s0, s1, s2, s3, s4, s5, s6, s7, table, count, b):
        srcs = (s0, s1, s2, s3, s4, s5, s6, s7)
        pos = 0
        for i in range(count):
            if len(srcs[i]) < table[pos + _HEAD - 2]:
                return i + 1
            pos += _HEAD + 3 * table[pos + _HEAD - 1]
        buf = np.empty(b * b, dst.dtype)  # the tiled rows' tile (b is 0 when there are none)
        pos = 0
        for i in range(count):
            src = srcs[i]
            path, k, t = table[pos], table[pos + _HEAD - 1], pos + 1  # t: where the path's integers start
            if path == 0:  # the usual paths read the table in place (a slice costs reference counting)
                _run_body(dst, table[t], src, table[t + 1], 0, table[t + 2])
            elif path == 1:
                _rows_body(dst, table[t], table[t + 1], src, table[t + 2], table[t + 3], table[t + 5], 0, table[t + 4])
            else:
                r = table[t : t + _HEAD - 3]
                a = pos + _HEAD  # the three dim arrays; the strides rows as one 2-D array
                if path == 2:
                    ost = table[a + k : a + 2 * k].reshape((1, k))
                    _blocks_body(dst, r[0], src, r[1], table[a : a + k], ost, r[2], 0, r[3])
                else:
                    st = table[a : a + 2 * k].reshape((2, k))
                    dims = table[a + 2 * k : a + 3 * k]
                    if path == 3:
                        _tile_body(dst, r[0], r[1], r[2], src, r[3], r[4], r[5], st, dims, r[6], r[7], b, buf, 0, r[8])
                    else:
                        _nd_body(dst, r[0], src, r[1], st, dims, 0, r[2])
            pos += _HEAD + 3 * k
        return 0
    return f


@njit(cache=True)
def _many_s(dst, s0, s1, s2, s3, s4, s5, s6, s7, table, count, b):
    return _many(dst, s0, s1, s2, s3, s4, s5, s6, s7, table, count, b)


def copy_many_into(dst: np.ndarray, dst_layouts, srcs, src_layouts) -> None:
    """``copy_into(dst, dst_layouts[i], srcs[i], src_layouts[i])`` for every i.

    Same-dtype copies below the parallel size run in one kernel call per ``MANY``
    copies, each with the path ``plan_copy`` chooses for it alone; the others (dtype
    conversions, read-only or unaligned buffers, big copies) go through ``copy_into``.
    Every layout is validated against its buffer before its copy (past ``MANY`` srcs,
    an error may leave the first batches written); dst views must not overlap each
    other or the srcs (the caller's guarantee, as for ``copy_into``).
    """
    op = "copy_many_into"
    check_buffer(op, "dst", dst, dtypes=DTYPES, writable=True)
    dst_layouts, srcs, src_layouts = tuple(dst_layouts), tuple(srcs), tuple(src_layouts)
    if not len(dst_layouts) == len(srcs) == len(src_layouts):
        raise StridedError(
            f"{op}: expected as many dst layouts, srcs and src layouts, got "
            f"{len(dst_layouts)}, {len(srcs)} and {len(src_layouts)}"
        )
    for src in srcs:
        check_buffer(op, "src", src, dtypes=DTYPES)
    # A model's step copies with the same layouts again and again: the program is looked up
    # by their values (a layout carries its hash, and a tuple compares the same objects by
    # identity first, so a repeat costs what an identity key did).
    key = (dst_layouts, src_layouts, len(dst), dst.dtype)
    try:
        many = _MANY.get(key)
    except TypeError:  # not layouts at all: ManyCopy's checks say what they are
        many = key = None
    if many is None or not many.run(dst, srcs):
        many = ManyCopy(op, dst, dst_layouts, srcs, src_layouts)
        _MANY.put(key, many)
        if not many.run(dst, srcs):
            raise StridedError(f"{op}: the copy kernel refused the buffers it was planned for")


class ManyCopy:
    """``copy_many_into``'s program for one dst buffer size and dtype, dst layouts and src
    layouts, built after every check on the buffers it is built with.  ``run`` takes other
    src buffers too: the kernel refuses those that are not what it was built for (see
    ``_many_impl``), so a caller that finds a program by the layouts' identities checks
    no buffer in Python.  ``dense_rows`` builds one from integers alone, for copies whose
    plan is known without layouts (cat of dense inputs)."""

    __slots__ = ("alone", "runs", "whole", "tile", "half", "dst_layouts", "src_layouts")

    def __init__(self, op: str, dst, dst_layouts: tuple, srcs: tuple, src_layouts: tuple):
        for src in srcs:
            check_buffer(op, "src", src, dtypes=DTYPES)
        for dl, sl in zip(dst_layouts, src_layouts):  # before they key a cache
            check_layout(op, "dst_layout", dl)
            check_layout(op, "src_layout", sl)
        lens, dtypes = tuple(len(s) for s in srcs), tuple(s.dtype for s in srcs)
        batched, solo, rows = _many_program(dst_layouts, src_layouts, len(dst), dst.dtype, lens, dtypes)
        # A read-only or unaligned array is another numba type: copied on its own.
        behaved = [bool(s.flags.behaved) for s in srcs]
        fast = [k for k, i in enumerate(batched) if behaved[i]]
        self._batch(dst, len(srcs), [batched[k] for k in fast], [rows[k] for k in fast])
        self.alone = solo + tuple(i for i in batched if not behaved[i])
        self.dst_layouts, self.src_layouts = dst_layouts, src_layouts

    @classmethod
    def dense_rows(cls, op: str, dst, srcs: tuple, specs) -> "ManyCopy | None":
        """Copy i moves dense src i (its elements from offset ``soff``) into ``rows`` rows of
        ``cols`` elements of dst, ``drow`` apart from ``doff``: ``specs[i] = (doff, drow,
        soff, rows, cols)``.  None when a src is not a behaved buffer of dst's dtype, does
        not hold its elements or is big enough to go parallel: the caller plans those with
        layouts (whose checks say what is wrong)."""
        for src in srcs:
            check_buffer(op, "src", src, dtypes=DTYPES)
        n_dst, rows_ = len(dst), []
        for src, (doff, drow, soff, rows, cols) in zip(srcs, specs):
            n = rows * cols
            if (src.dtype != dst.dtype or not src.flags.behaved or n >= COPY_PARALLEL_MIN
                    or soff < 0 or soff + n > len(src)):
                return None
            if n and (doff < 0 or drow < cols or doff + (rows - 1) * drow + cols > n_dst):
                raise StridedError(
                    f"{op}: {rows} rows of {cols} from {doff}, {drow} apart, do not fit a dst of {n_dst}"
                )
            plan = dense_src_rows(doff, drow, soff, rows, cols)
            rows_.append(_table_row(plan.path, plan.args, soff + n) if n else None)
        self = cls.__new__(cls)
        fast = [i for i, row in enumerate(rows_) if row is not None]
        self._batch(dst, len(srcs), fast, [rows_[i] for i in fast])
        self.alone, self.dst_layouts, self.src_layouts = (), (), ()
        return self

    def _batch(self, dst, n_srcs: int, fast: list, rows: list) -> None:
        """The kernel calls for srcs ``fast`` (``rows[k]`` is fast[k]'s table row), ``MANY`` a call."""
        self.half = _HALF_BITS.get(dst.dtype)
        pad = np.empty(0, dst.dtype if self.half is None else self.half)  # fills a short batch's tuple
        self.runs = tuple(
            (tuple(fast[lo : lo + MANY]), np.array([x for row in rows[lo : lo + MANY] for x in row], np.int64),
             (pad,) * (MANY - len(fast[lo : lo + MANY])))
            for lo in range(0, len(fast), MANY)
        )
        # The usual cat: every src in one kernel call, in the caller's order.
        self.whole = len(self.runs) == 1 and self.runs[0][0] == tuple(range(n_srcs))
        tiled = any(row[0] == _PATH_CODE["tiled"] for row in rows)
        self.tile = tile_edge(dst.itemsize) if tiled else 0  # 0: the kernel needs no tile buffer

    def run(self, dst: np.ndarray, srcs: tuple) -> bool:
        """The copies into ``dst`` (of the size and dtype it was built for) from ``srcs``;
        False when the kernel refuses a batch of srcs.  That batch wrote nothing, but the
        ones before it (past ``MANY`` srcs) did: the caller starts over."""
        bits, kin = dst, srcs
        if self.half is not None:  # numba moves the half types as their bits: f16 and bf16 alike
            bits, kin = dst.view(self.half), list(srcs)
            for idx, _, _ in self.runs:
                for i in idx:
                    if srcs[i].dtype != dst.dtype:
                        return False
                    kin[i] = srcs[i].view(self.half)
            kin = tuple(kin)
        if self.whole:
            idx, table, pads = self.runs[0]
            if _many_s(bits, *kin, *pads, table, len(idx), self.tile):
                return False
        else:
            for idx, table, pads in self.runs:
                if _many_s(bits, *[kin[i] for i in idx], *pads, table, len(idx), self.tile):
                    return False
        for i in self.alone:
            copy_into(dst, self.dst_layouts[i], srcs[i], self.src_layouts[i])
        return True


_MANY = caches.cache("copy.many_by_layouts", "dst and src layouts, dst length and dtype", 256)
_HALF_BITS = {d: np.dtype(np.uint16) for d in HALF_VIEW}  # f16 and bf16 bits alike


@caches.lru("copy.many_programs", "dst and src layouts, lengths, dtypes", 256)
def _many_program(dst_layouts: tuple, src_layouts: tuple, dst_len: int, dst_dtype, src_lens: tuple, src_dtypes: tuple):
    """(indices batched, indices copied alone, the batched ones' table rows), after every
    check ``copy_into`` makes on each pair."""
    op = "copy_many_into"
    b = tile_edge(dst_dtype.itemsize)
    batched, solo, rows = [], [], []
    for i, (dl, sl, n_src, sdt) in enumerate(zip(dst_layouts, src_layouts, src_lens, src_dtypes)):
        n = check_views(op, dl, dst_len, sl, n_src)
        if n == 0:
            continue
        if sdt != dst_dtype or n >= COPY_PARALLEL_MIN:
            solo.append(i)
            continue
        batched.append(i)
        rows.append(_plan_row(dl, sl, b))
    return tuple(batched), tuple(solo), tuple(rows)


# Each ``_prep_*`` turns a plan's integers into ``run(dst, src)``: the kernel with its
# arrays made, its chunks counted and its serial/parallel driver chosen, so that a kept
# plan runs with nothing left to decide.


def _enter(kernel, example, parallel: bool):
    """How a run calls ``kernel``: its compiled entry for arguments typed as ``example`` (a
    kept plan's, where ``bufs`` were given), entered as ``walk`` enters a parallel driver."""
    if parallel:
        return in_parallel(kernel, example or None)
    return direct(kernel, example) if example else kernel


def _prep_run(n, itemsize, doff, soff, count, bufs=()):
    chunks = nchunks(count, count)
    if chunks < 2:
        k = _enter(_run_s, bufs and (bufs[0], doff, bufs[1], soff, count), False)
        return lambda d, s: k(d, doff, s, soff, count)
    k = _enter(_run_p, bufs and (bufs[0], doff, bufs[1], soff, count, chunks), True)
    return lambda d, s: k(d, doff, s, soff, count, chunks)


def _prep_rows(n, itemsize, doff, drow, soff, srow, rows, cols, bufs=()):
    chunks = nchunks(rows, n)
    if chunks < 2:
        k = _enter(_rows_s, bufs and (bufs[0], doff, drow, bufs[1], soff, srow, rows, cols), False)
        return lambda d, s: k(d, doff, drow, s, soff, srow, rows, cols)
    k = _enter(_rows_p, bufs and (bufs[0], doff, drow, bufs[1], soff, srow, rows, cols, chunks), True)
    return lambda d, s: k(d, doff, drow, s, soff, srow, rows, cols, chunks)


def _prep_blocks(n, itemsize, doff, soff, dims, strides, blen, bufs=()):
    nblocks = prod(dims)
    oshape, ost = _i64(dims), _i64(strides).reshape(1, len(strides))
    chunks = nchunks(nblocks, n)
    if chunks < 2:
        k = _enter(_blocks_s, bufs and (bufs[0], doff, bufs[1], soff, oshape, ost, blen, nblocks), False)
        return lambda d, s: k(d, doff, s, soff, oshape, ost, blen, nblocks)
    k = _enter(_blocks_p, bufs and (bufs[0], doff, bufs[1], soff, oshape, ost, blen, nblocks, chunks), True)
    return lambda d, s: k(d, doff, s, soff, oshape, ost, blen, nblocks, chunks)


def _prep_general(n, itemsize, doff, dstr, soff, sstr, shape, bufs=()):
    st, shape = _i64(dstr + sstr).reshape(2, len(shape)), _i64(shape)
    chunks = nchunks(n, n)
    if chunks < 2:
        k = _enter(_nd_s, bufs and (bufs[0], doff, bufs[1], soff, st, shape, n), False)
        return lambda d, s: k(d, doff, s, soff, st, shape, n)
    k = _enter(_nd_p, bufs and (bufs[0], doff, bufs[1], soff, st, shape, n, chunks), True)
    return lambda d, s: k(d, doff, s, soff, st, shape, n, chunks)


def _prep_tiled(n, itemsize, doff, odstr, dp, dq, soff, osstr, sp, sq, oshape, P, Q, bufs=()):
    b = tile_edge(itemsize)
    w = b * BLOCK_TILES
    units = prod(oshape) * ((P + w - 1) // w) * ((Q + w - 1) // w)
    ost, oshape = _i64(odstr + osstr).reshape(2, len(oshape)), _i64(oshape)
    chunks = nchunks(units, n)
    if chunks < 2:
        k = _enter(_tile_s, bufs and (bufs[0], doff, dp, dq, bufs[1], soff, sp, sq, ost, oshape, P, Q, b, units),
                   False)
        return lambda d, s: k(d, doff, dp, dq, s, soff, sp, sq, ost, oshape, P, Q, b, units)
    k = _enter(_tile_p, bufs and (bufs[0], doff, dp, dq, bufs[1], soff, sp, sq, ost, oshape, P, Q, b, units,
                                  chunks), True)
    return lambda d, s: k(d, doff, dp, dq, s, soff, sp, sq, ost, oshape, P, Q, b, units, chunks)


_PREP = {"run": _prep_run, "rows": _prep_rows, "blocks": _prep_blocks, "general": _prep_general,
         "tiled": _prep_tiled}
