"""The index family: ``index_select`` and ``gather_offsets``.

``index_select`` copies, for each position k of a 1-D index, the slice
``src.select(dim, index[k])`` into ``dst.select(dim, k)``.  The dims before
``dim`` (outer) and after it (inner) are merged separately by NdIter, so an
embedding lookup (rows of a dense table into a dense result) is one loop per
selected row over a single dense run.  Bits are moved by itemsize, as in the
copy family.  Each slice takes one path (``_copy_block``), on its merged inner
dims:

=========  ==============================================  ==========================
path       when (on the merged inner dims)                 loop
=========  ==============================================  ==========================
run        one dim, stride 1 in dst and src (a row of an   one memmove (``copy_run``)
           embedding table into a dense result)
strided    one dim, any other strides                      one strided loop
general    several dims                                    odometer over the outer
                                                           ones, strided inner run
=========  ==============================================  ==========================

The (outer position, k) slices split into parallel chunks as copies do: from
``COPY_PARALLEL_MIN`` elements, ``CHUNKS_PER_THREAD`` a thread (``copy.nchunks``).
``gather_offsets`` is one odometer over the layout.
"""

from __future__ import annotations

from .common import DTYPES, check_buffer, check_layout  # (imports strided.threads before numba)


import numpy as np
from numba import njit, prange

from ..core import caches
from ..core.errors import DTypeError, ShapeError, StridedError, StridedIndexError
from ..layout.iterate import NdIter
from ..layout.layout import Layout, norm_dim
from .copy import bits_view, check_dst_layout, copy_run, nchunks
from .walk import carry, chunk, index_scratch, launch, seek

_u = np.uint64  # unsigned buffer indices, as in the copy kernels: no wraparound test per access

__all__ = ["index_select", "gather_offsets", "check_index", "check_select"]


# ---------------------------------------------------------------------------
# gather_offsets
# ---------------------------------------------------------------------------


@njit(cache=True)
def _offsets(shape, st, offset, out):
    nd = shape.shape[0]
    idx = index_scratch(nd)
    pos = offset
    for e in range(out.shape[0]):
        out[e] = pos
        (pos,) = carry(shape, st, nd, idx, (pos,))[1]


def gather_offsets(layout: Layout) -> np.ndarray:
    """The buffer offset of every element, in row-major order, as int64 (no memory is touched)."""
    check_layout("gather_offsets", "layout", layout)
    out = np.empty(layout.numel, np.int64)
    if layout.numel:
        st = np.asarray(layout.stride, np.int64).reshape(1, layout.ndim)
        _offsets(np.asarray(layout.shape, np.int64), st, layout.offset, out)
    return out


# ---------------------------------------------------------------------------
# index_select
# ---------------------------------------------------------------------------


@njit(cache=True)
def _copy_block(dst, db, src, sb, shape, st, idx):
    """One whole block of merged dims (``st``: dst's strides, then src's); ``idx`` is
    scratch for the odometer."""
    nd = shape.shape[0]
    last = nd - 1
    inner = shape[last]
    di = st[0, last]
    si = st[1, last]
    if nd == 1:
        if di == 1 and si == 1:  # a dense slice (a row of an embedding table): memmove
            copy_run(dst, db, src, sb, inner)
            return
        for t in range(inner):
            dst[_u(db + t * di)] = src[_u(sb + t * si)]
        return
    idx[:] = 0
    d, s = db, sb
    while True:
        for t in range(inner):
            dst[_u(d + t * di)] = src[_u(s + t * si)]
        k, (d, s) = carry(shape, st, last, idx, (d, s))
        if k < 0:
            return


@njit(cache=True)
def _isel_body(dst, doff, src, soff, oshape, ost, index, kd, ks, ishape, ist, lo, hi):
    """Units [lo, hi) of (outer position, k), k fastest; ``ost`` and ``ist`` are the outer
    and inner dims' strides, dst's row then src's."""
    K = index.shape[0]
    nd = oshape.shape[0]
    oidx = index_scratch(nd)
    scratch = index_scratch(ishape.shape[0])
    o = lo // K
    k = lo - o * K
    d, s = seek(o, oshape, ost, nd, oidx, (doff, soff))
    for u in range(lo, hi):
        _copy_block(dst, d + k * kd, src, s + index[k] * ks, ishape, ist, scratch)
        k += 1
        if k == K:
            k = 0
            d, s = carry(oshape, ost, nd, oidx, (d, s))[1]


@njit(cache=True)
def _isel_s(dst, doff, src, soff, oshape, ost, index, kd, ks, ishape, ist, units):
    _isel_body(dst, doff, src, soff, oshape, ost, index, kd, ks, ishape, ist, 0, units)


@njit(cache=True, parallel=True)
def _isel_p(dst, doff, src, soff, oshape, ost, index, kd, ks, ishape, ist, units, nchunks):
    for c in prange(nchunks):
        lo, hi = chunk(c, nchunks, units)
        _isel_body(dst, doff, src, soff, oshape, ost, index, kd, ks, ishape, ist, lo, hi)


def check_index(op: str, index, dim: int, size: int) -> np.ndarray:
    """A 1-D integer index with every value in [-size, size), as int64 with negatives wrapped."""
    if not isinstance(index, np.ndarray):
        raise StridedError(f"{op}: expected the index to be a 1-D numpy int64 array, got {type(index).__name__}")
    if index.ndim != 1:
        raise ShapeError(f"{op}: expected a 1-D index, got shape {index.shape}")
    if index.dtype.kind not in "iu":
        raise DTypeError(f"{op}: expected an integer index, got dtype {index.dtype}")
    if index.dtype.kind == "u" and index.size and int(index.max()) >= 1 << 63:
        bad = int(index.max())
        raise StridedIndexError(f"{op}: index {bad} is out of bounds for dim {dim} with size {size}")
    idx = index.astype(np.int64, copy=False)
    if idx.size:
        bad_mask = (idx < -size) | (idx >= size)
        if bad_mask.any():
            bad = int(idx[np.argmax(bad_mask)])
            raise StridedIndexError(
                f"{op}: index {bad} is out of bounds for dim {dim} with size {size} "
                f"(expected values in [{-size}, {size}))"
            )
        if (idx < 0).any():
            idx = np.where(idx < 0, idx + size, idx)
    return np.ascontiguousarray(idx)


@caches.lru("index.merged_dims", "shape, dst and src strides", 1024)
def _merged(shape, dst_stride, src_stride):
    """Merged (shape, strides: dst's row then src's) of a sub-block; rank 0 is one element.

    Cached (the arguments are tuples): planning costs more than a small copy."""
    it = NdIter(Layout(shape, dst_stride), Layout(shape, src_stride))
    return np.asarray(it.shape, np.int64), np.asarray(it.strides[:2], np.int64).reshape(2, len(it.shape))


def check_select(op: str, dst, dst_layout: Layout, src, src_layout: Layout, dim, index) -> tuple:
    """``(dim, index)`` of an index_select, normalised and checked against the layouts and
    buffers (equal dtypes, rank >= 1, every index in range, dst of the selected shape, both
    layouts inside their buffers, dst writing each element once); every backend's
    index_select checks this after its own buffer checks."""
    check_layout(op, "dst_layout", dst_layout)
    check_layout(op, "src_layout", src_layout)
    if dst.dtype != src.dtype:
        raise DTypeError(f"{op}: dst dtype {dst.dtype} and src dtype {src.dtype} must be equal")
    if src_layout.ndim == 0:
        raise ShapeError(f"{op}: expected a tensor of rank >= 1, got a scalar (shape ())")
    d = norm_dim(op, dim, src_layout.ndim)
    idx = check_index(op, index, d, src_layout.shape[d])
    want = src_layout.shape[:d] + (len(idx),) + src_layout.shape[d + 1:]
    if dst_layout.shape != want:
        raise ShapeError(
            f"{op}: expected dst shape {want} (src shape {src_layout.shape} with dim {d} of size {len(idx)}), "
            f"got {dst_layout.shape}"
        )
    dst_layout.validate(len(dst))
    src_layout.validate(len(src))
    check_dst_layout(op, dst_layout)
    return d, idx


def index_select(dst: np.ndarray, dst_layout: Layout, src: np.ndarray, src_layout: Layout, dim: int,
                 index: np.ndarray) -> None:
    """``dst[.., k, ..] = src[.., index[k], ..]`` along ``dim``; negative index values wrap.

    ``dst_layout.shape`` must be src's shape with ``dim`` replaced by
    ``len(index)``; dtypes must be equal.  Every index value and both layouts
    are checked before any memory is touched.
    """
    op = "index_select"
    check_buffer(op, "dst", dst, dtypes=DTYPES, writable=True)
    check_buffer(op, "src", src, dtypes=DTYPES)
    d, idx = check_select(op, dst, dst_layout, src, src_layout, dim, index)
    n = dst_layout.numel
    if n == 0:
        return
    db, sb = bits_view(dst), bits_view(src)
    ds, ss = dst_layout.stride, src_layout.stride
    oshape, ost = _merged(src_layout.shape[:d], ds[:d], ss[:d])
    ishape, ist = _merged(src_layout.shape[d + 1:], ds[d + 1:], ss[d + 1:])
    units = n // max(1, int(np.prod(ishape)))
    args = (db, dst_layout.offset, sb, src_layout.offset, oshape, ost, idx, ds[d], ss[d], ishape, ist, units)
    chunks = nchunks(units, n)
    if chunks < 2:
        launch(_isel_s, args, False)
    else:
        launch(_isel_p, (*args, chunks), True)
