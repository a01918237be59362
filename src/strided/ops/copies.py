"""Copies and writes: new buffers holding a view's elements (``contiguous``, ``copy``,
``to_dtype``) and writes through views (``copy_``, ``fill_``, ``t[i] = v``), all by
the backend's ``copy`` family.

A copy to a fresh dense buffer keeps what it decided under the source layout and
the two dtypes (``caches``), as the elementwise ops do: a repeated
``a.t().contiguous()`` costs one lookup, the buffer check against the kept
reach, the allocation and the kernel call.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS, alloc_on, common_device
from ..creation import from_numpy, tensor
from ..devices import to_device
from ..core.dtype import DType
from ..core.errors import ShapeError, StridedError, TooHardError
from ..layout import Layout
from ..layout.analysis import is_non_overlapping, overlaps
from ..core.storage import wrap
from ..tensor import Op, Tensor, same_buffer, trace_hook
from .kept import Kept

_BOUND = caches.cache("ops.copies", "source layout serial, source and result dtype names, device", 2048, threads=True)


def copy_to(t: Tensor, dtype: DType, name: str) -> Tensor:
    """A fresh row-major tensor of ``dtype`` holding ``t``'s elements, recorded as ``name``."""
    s, src = t._storage, t.layout
    e = _BOUND.get((src._serial or src.serial(), t.dtype.name, dtype.name, s.device))
    if e is not None:
        d = s.data
        if len(d) >= e.reach[0] and d.dtype is e.types[0]:
            out = e.result(Op(name, (t,), {}) if t._is_var or t._op is not None else None)
            e.run(out._storage.data, d)
            return out
    lay = Layout.contiguous(t.shape)
    # The CPU's allocation stays this module's ``alloc`` (the tests count what it hands out).
    store = alloc_on(s.device, lay.numel, dtype.np, name)
    out = Tensor(store, lay, dtype)
    K = BACKENDS[s.device]
    prepared = K.copy.copy_into(out._storage.data, lay, s.data, t.layout, keep=True)
    if prepared is not None:
        run, reach = prepared
        _BOUND.put((src.serial(), t.dtype.name, dtype.name, s.device),
                   Kept(run, reach[1:], [s.data.dtype], lay, dtype, s.device))
    out._op = Op(name, (t,), {}) if (t._is_var or t._op is not None) else None
    return out


def contiguous(t: Tensor) -> Tensor:
    """``t`` when already dense row-major (offset and size-1 dims ignored), else a copy."""
    if t.layout.is_contiguous():
        return t
    return copy_to(t, t.dtype, "copy")


def force_contiguous(t: Tensor) -> Tensor:
    """Always a fresh row-major buffer holding just these elements."""
    return copy_to(t, t.dtype, "copy")


def copy(t: Tensor) -> Tensor:
    """A fresh buffer holding only the viewed elements (candle's copy keeps the whole storage)."""
    return copy_to(t, t.dtype, "copy")


def clone(t: Tensor) -> Tensor:
    """Shares the buffer, like candle's clone (an Arc clone)."""
    return t._result(t._storage, t.layout, t.dtype, "clone", (t,))


def to_dtype(t: Tensor, dtype) -> Tensor:
    if not isinstance(t, Tensor):
        got = trace_hook("cast", "to_dtype", (t,), dtype=dtype)
        if got is not NotImplemented:
            return got
    dtype = dt.as_dtype(dtype)
    if dtype is t.dtype:
        return t
    return copy_to(t, dtype, "to_dtype")


# ---------------------------------------------------------------------------
# writes


def write(dst: Tensor, src, op: str, allow_overlap: bool = False) -> None:
    """ViewCopy: write src (broadcast, converted) into the dst view, safe under memory overlap."""
    data = dst._storage.data
    if isinstance(src, Tensor):  # before any buffer is looked at: a device buffer is no numpy array
        common_device(op, dst._storage, src._storage)
    device = dst._storage.device
    K = BACKENDS[device]
    if K.HOST_MEMORY and not data.flags.writeable:  # device buffers are always writable
        raise StridedError(f"{op}: the destination buffer is read-only")
    if isinstance(src, Tensor):
        src_t = src
    elif isinstance(src, np.ndarray):
        src_t = from_numpy(src)
    elif isinstance(src, (numbers.Number, np.generic)):
        src_t = Tensor(wrap(dt.scalar_array(op, src, dst.dtype)), Layout((), ()), dst.dtype)
    else:
        src_t = tensor(src, dtype=dst.dtype)
    if src_t.device != device:  # a scalar, array or list for a device tensor: moved there first
        src_t = to_device(src_t, device, op)
    src_lay = _source_layout(op, src_t, dst.shape)
    if dst.numel == 0:
        return
    if not allow_overlap and not _non_overlapping(dst.layout):
        raise StridedError(
            f"{op}: the destination view {dst.layout} has elements sharing memory; "
            "writing through it would be ambiguous (pass allow_overlap=True to write anyway)"
        )
    # Copy through a temporary only when source and destination really share memory
    # (NumPy does the same since 1.13: x[...] = x.T and x[1:] = x[:-1] come out right).
    if K.HOST_MEMORY:  # two storages may wrap one array's memory
        shared = same_buffer(src_t, dst) and (not _same_base(src_t, dst) or _overlap_exact(src_lay, dst.layout))
    else:  # device storages never alias one another: only views of one storage overlap
        shared = src_t._storage is dst._storage and _overlap_exact(src_lay, dst.layout)
    if shared:
        src_t = copy(src_t)
        src_lay = _source_layout(op, src_t, dst.shape)
    dst_lay = dst.layout
    if allow_overlap:
        # A broadcast destination stores one value per address: keep the last write, as a
        # row-major loop would, and leave the rest of the overlap to the kernel's order.
        for d, (n, st) in enumerate(zip(dst_lay.shape, dst_lay.stride)):
            if st == 0 and n > 1:
                dst_lay, src_lay = dst_lay.narrow(d, n - 1, 1), src_lay.narrow(d, n - 1, 1)
    K.copy.copy_into(data, dst_lay, src_t._storage.data, src_lay)


def _source_layout(op: str, src: Tensor, shape: tuple) -> Layout:
    """The source's layout broadcast to the destination's shape.  Assignment (``t[0] = v[None]``)
    drops leading size-1 dims of the source first, as NumPy and PyTorch do; ``copy_`` and
    in-place ops broadcast strictly, as PyTorch's ``copy_`` and NumPy's ``+=`` do."""
    lay = src.layout
    extra = lay.ndim - len(shape)
    if op == "setitem" and extra > 0 and all(n == 1 for n in lay.shape[:extra]):
        lay = Layout(lay.shape[extra:], lay.stride[extra:], lay.offset)
    try:
        return lay.broadcast_as(shape)
    except ShapeError:
        raise ShapeError(f"{op}: cannot broadcast source of shape {src.shape} to destination shape {shape}") from None


def _same_base(a: Tensor, b: Tensor) -> bool:
    pa, pb = a._storage.data, b._storage.data
    return (
        pa.__array_interface__["data"][0] == pb.__array_interface__["data"][0]
        and pa.itemsize == pb.itemsize
    )


def _non_overlapping(lay: Layout) -> bool:
    try:
        return is_non_overlapping(lay)
    except TooHardError:
        return False


def _overlap_exact(a: Layout, b: Layout) -> bool:
    try:
        return overlaps(a, b)
    except TooHardError:
        return True  # unsure: the temporary is always correct


def copy_(t: Tensor, src, *, allow_overlap: bool = False) -> Tensor:
    """Write ``src`` (tensor, array or scalar, broadcast to this shape) into this view.

    A destination whose elements share memory (a broadcast, an overlapping
    as_strided view) is refused unless ``allow_overlap=True``; then elements
    written more than once end with one of the values written to them."""
    write(t, src, "copy_", allow_overlap)
    return t


def fill_(t: Tensor, value, *, allow_overlap: bool = False) -> Tensor:
    write(t, value, "fill_", allow_overlap)
    return t


def zero_(t: Tensor) -> Tensor:
    return fill_(t, 0)


def setitem(t: Tensor, index, value) -> None:
    write(t[index], value, "setitem")
