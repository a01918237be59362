"""Gathering and joining: ``index_select`` and ``cat``, by the backend's ``index`` and
``copy`` families."""

from __future__ import annotations

from math import prod

import numpy as np

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS, alloc_on, common_device
from ..creation import empty
from ..core.errors import DTypeError, ShapeError, StridedError, StridedIndexError
from ..layout import Layout
from ..layout.layout import norm_dim
from ..tensor import Op, Tensor, record, tracked
from .kept import Kept

_new = object.__new__

# A model cats the same layouts step after step: the whole plan is kept under the dim,
# the inputs' layouts, dtypes and device.  A call that finds it checks no buffer in
# Python: the copy kernel refuses buffers that are not what it was planned for, and the
# call then starts over on the checked path.
_CAT = caches.cache("ops.cat", "dim, input layouts, input dtypes, device", 256, threads=True)

def index_array(op: str, index) -> np.ndarray:
    if isinstance(index, Tensor):
        if index.dtype.is_float or index.dtype is dt.bool_:
            raise DTypeError(f"{op}: expected an integer index tensor, got {index.dtype}")
        arr = index.numpy()
    else:
        try:
            arr = np.asarray(index)
        except (TypeError, ValueError):  # ragged nesting
            raise ShapeError(f"{op}: expected a 1-D sequence of integer indices, got {index!r}") from None
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise DTypeError(f"{op}: expected integer indices, got {arr.dtype}")
        if arr.dtype == np.uint64 and arr.max() > np.iinfo(np.int64).max:  # would wrap to a valid negative index
            raise StridedIndexError(f"{op}: index {arr.max()} is out of range")
    if arr.ndim != 1:
        raise ShapeError(f"{op}: expected a 1-D index, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.int64)

def index_select(t: Tensor, index, dim=0) -> Tensor:
    """The slices of ``t`` at ``index`` along ``dim``, in a new tensor."""
    d = norm_dim("index_select", dim, t.ndim)
    idx = index_array("index_select", index)
    shape = t.shape[:d] + (len(idx),) + t.shape[d + 1 :]
    out = empty(shape, t.dtype, device=t.device)
    BACKENDS[t._storage.device].index.index_select(out._storage.data, out.layout, t._storage.data, t.layout, d, idx)
    return record(out, "index_select", (t,), dim=d, index=idx)

def cat(tensors, dim=0) -> Tensor:
    """Join tensors along ``dim``: every input copied into its narrowed slice of the output,
    all of them in one kernel call (the copy family's ``ManyCopy``), each by the path its
    layout needs."""
    if type(dim) is int and type(tensors) in (list, tuple):
        try:
            key = (dim, *[x.layout for x in tensors], *[x.dtype for x in tensors], tensors[0]._storage.device)
            hit = _CAT.get(key)
        except (AttributeError, TypeError, IndexError):  # not tensors: the checks below say so
            hit = None
        if hit is not None:
            d, sizes = hit.extra
            out = hit.result(Op("cat", tuple(tensors), {"dim": d, "sizes": sizes}) if tracked(tensors) else None)
            if hit.run is None or hit.run(out._storage.data, [x._storage.data for x in tensors]):
                return out
    if isinstance(tensors, Tensor) or not hasattr(tensors, "__iter__"):
        raise StridedError(f"cat: expected a sequence of tensors, got {type(tensors).__name__}")
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("cat: expected a non-empty sequence of tensors")
    for x in tensors:
        if not isinstance(x, Tensor):
            raise StridedError(f"cat: expected tensors, got {type(x).__name__}")
    device = common_device("cat", *[x._storage for x in tensors])
    K = BACKENDS[device]
    src_lays = tuple([x.layout for x in tensors])
    dtypes = tuple([x.dtype for x in tensors])
    d = norm_dim("cat", dim, src_lays[0].ndim)
    out_lay, want, sizes = _cat_plan(d, src_lays, dtypes)
    store = alloc_on(device, out_lay.numel, want.np, "cat")
    out = Tensor(store, out_lay, want)
    many = None
    if out_lay.numel:
        bufs = tuple([x._storage.data for x in tensors])
        many = _dense_cat(K, d, out_lay.shape, src_lays, sizes, out._storage.data, bufs) or K.copy.ManyCopy(
            "cat", out._storage.data, _cat_slices(out_lay, d, sizes), bufs, src_lays
        )
        if not many.run(out._storage.data, bufs):
            raise StridedError("cat: the copy kernel refused the buffers it was planned for")
    if type(dim) is int and K.HOST_MEMORY:  # only host copies are kept (a device's ManyCopy runs every call)
        # ManyCopy.run checks every buffer itself (False: take this full path), so no reach is kept.
        _CAT.put((dim, *src_lays, *dtypes, device), Kept(None if many is None else many.run, (), (), out_lay, want,
                                                         device, extra=(d, sizes)))
    return record(out, "cat", tensors, dim=d, sizes=sizes)

def _cat_plan(d: int, layouts: tuple, dtypes: tuple):
    """(output layout, output dtype, the sizes along dim ``d``)."""
    first = layouts[0]
    head, tail = first.shape[:d], first.shape[d + 1 :]
    for lay in layouts:
        shape = lay.shape
        if len(shape) != len(first.shape) or shape[:d] != head or shape[d + 1 :] != tail:
            raise ShapeError(
                f"cat: shapes must match except in dim {d}, got {' and '.join(str(l.shape) for l in layouts)}"
            )
    want = dtypes[0]
    for x in dtypes[1:]:
        want = dt.promote(want, x)
    sizes = tuple(lay.shape[d] for lay in layouts)
    return Layout.contiguous(head + (sum(sizes),) + tail), want, sizes

def _cat_slices(out: Layout, d: int, sizes: tuple) -> tuple:
    """Each input's slice of the output."""
    starts = [0]
    for n in sizes:
        starts.append(starts[-1] + n)
    return tuple(out.narrow(d, a, n) for a, n in zip(starts, sizes))

def _dense_cat(K, d: int, shape: tuple, layouts: tuple, sizes: tuple, dst, bufs):
    """cat of dense inputs as candle does it, with no layout arithmetic: input i is
    ``outer`` rows of ``sizes[i] * inner`` elements, one row in every output row of
    ``total * inner``.  This is what a growing KV cache pays every step, on new shapes
    that no cache has seen.  None when an input is not dense (the kernels' general
    planning takes it)."""
    for lay in layouts:
        if not lay.is_contiguous():
            return None
    outer, inner = prod(shape[:d]), prod(shape[d + 1 :])
    row = shape[d] * inner
    specs, start = [], 0
    for lay, n in zip(layouts, sizes):
        specs.append((start * inner, row, lay.offset, outer, n * inner))
        start += n
    return K.copy.ManyCopy.dense_rows("cat", dst, bufs, specs)
