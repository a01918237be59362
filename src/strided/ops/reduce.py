"""Reductions: dims, keepdim and accumulator dtypes here, the loops in the backend's
``reduce`` family.

f16/bf16 sources are read in place and accumulate in f32 (only the result is
rounded); other sources that are not the accumulator's dtype (bool or u8
sums, integer means) are converted first.  A reduction keeps what it decided
under the op, the source layout and dtype and the dims (``caches``): a repeated
``a.sum(0)`` costs one lookup, the buffer check, the allocation and the kernel.
"""

from __future__ import annotations

import numpy as np

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS
from ..creation import empty
from ..core.errors import DTypeError, ShapeError, StridedIndexError
from ..layout.layout import norm_dim
from ..tensor import Tensor, fresh, record, trace_hook
from .copies import to_dtype
from .elementwise import binary
from .kept import Kept

_BOUND = caches.cache("ops.reduce", "op name, source layout serial, source dtype name, dim argument, keepdim, device",
                      2048, threads=True)

def reduce_dims(op: str, t: Tensor, dim) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(t.ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    norm = sorted({norm_dim(op, d, t.ndim) for d in dims}) if t.ndim else []
    if not t.ndim and dims not in ((0,), (-1,), ()):
        raise StridedIndexError(f"{op}: dim {dim} out of range for a rank-0 tensor")
    return tuple(norm)

def _keyable(dim) -> bool:
    """Whether a call's dim can be part of its kept key as given: None, an int or a tuple of
    ints, which equal only a dim that means the same (0.0 == 0 and True == 1 would let a
    dim the checked path refuses, or reads otherwise, find another's decision)."""
    t = type(dim)
    return t is int or dim is None or (t is tuple and all(type(d) is int for d in dim))


def reduce(op: str, t: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """``op`` (sum, mean, max, min) over ``dim`` (an int, a tuple of ints, or None for all)."""
    if not isinstance(t, Tensor):
        got = trace_hook("reduce", op, (t,), dim=dim, keepdim=keepdim)
        if got is not NotImplemented:
            return got
    if type(dim) is int or dim is None or _keyable(dim):  # ints first: most calls, no call
        s, lay = t._storage, t.layout
        e = _BOUND.get((op, lay._serial or lay.serial(), t.dtype.name, dim, keepdim, s.device))
        if e is not None:
            d = s.data
            if len(d) >= e.reach[0] and d.dtype is e.types[0]:
                out = e.result()
                e.run(d, out._storage.data)
                count, keep_layout, dims = e.extra
                if count is not None:
                    buf = out._storage.data
                    buf /= count  # in place, as [...] /= is, without making a view
                if t._is_var or t._op is not None:
                    # Recorded as the keepdim reduction plus a squeeze view, as the full path does.
                    res = record(fresh(out._storage, keep_layout, e.dtype), op, (t,), dims=dims, keepdim=True)
                    return res if keepdim or not dims else res.squeeze(dims)
                return out
    return _reduce(op, t, dim, keepdim)

def reduce_result(op: str, t, dims) -> "dt.DType":
    """The dtype of ``op`` over ``dims`` of ``t`` (anything with a shape and a dtype); the
    error of a reduction that has no answer."""
    if op in ("max", "min") and any(t.shape[d] == 0 for d in dims):
        raise ShapeError(f"{op}: cannot reduce over a zero-size dim (shape {t.shape}, dims {dims})")
    if op == "mean":
        return t.dtype if t.dtype.kind in "fc" else dt.f64
    if op == "sum":
        return dt.accumulated(t.dtype)
    if t.dtype.is_complex and op in ("max", "min"):
        raise DTypeError(f"{op}: complex numbers have no order, got a {t.dtype} tensor")
    return t.dtype

def _reduce(op: str, t: Tensor, dim, keepdim: bool) -> Tensor:
    dims = reduce_dims(op, t, dim)
    want = reduce_result(op, t, dims)
    acc = dt.kernel_dtype(want)
    src = t if t.dtype.compute is acc else to_dtype(t.detach(), acc)
    keep_shape = tuple(1 if d in dims else n for d, n in enumerate(t.shape))
    out = empty(keep_shape, acc, device=t.device)
    K = BACKENDS[t._storage.device]
    kop = "sum" if op == "mean" else op
    keep = src is t and want is acc and _keyable(dim)  # kept under (op, dim, ...)
    prepared = K.reduce.reduce(kop, src._storage.data, src.layout, dims, out._storage.data, out.layout, keep)
    keep_layout = out.layout
    count = None
    if op == "mean":
        count = 1
        for d in dims:
            count *= t.shape[d]
        count = count if count else np.nan
        if K.HOST_MEMORY:
            buf = out._storage.data
            buf /= count
        else:  # a device buffer is divided on the device (a scalar takes the tensor's dtype)
            out = binary("div", out, count)
    if prepared is not None:
        run, reach = prepared
        final = keep_layout if keepdim or not dims else keep_layout.squeeze(dims)
        _BOUND.put((op, t.layout.serial(), t.dtype.name, dim, keepdim, t._storage.device),
                   Kept(run, reach, [t._storage.data.dtype], final, want, t._storage.device, acc.np,
                        (count, keep_layout, dims)))
    if want is not acc:
        out = to_dtype(out, want)
    res = record(out, op, (t,), dims=dims, keepdim=True)
    return res if keepdim or not dims else res.squeeze(dims)

def arg_reduce(op: str, t: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The index of the max (argmax) or min (argmin) along ``dim`` (None: of the flattened tensor)."""
    if not isinstance(t, Tensor):
        got = trace_hook("arg_reduce", op, (t,), dim=dim, keepdim=keepdim)
        if got is not NotImplemented:
            return got
    if type(dim) is int:  # kept as a reduction is, under its op
        s, lay = t._storage, t.layout
        e = _BOUND.get((op, lay._serial or lay.serial(), t.dtype.name, dim, keepdim, s.device))
        if e is not None:
            d = s.data
            if len(d) >= e.reach[0] and d.dtype is e.types[0]:
                out = e.result()
                e.run(d, out._storage.data)
                return out
    if dim is None:
        flat = t.detach().reshape(-1)
        out = arg_reduce(op, flat, 0, False)
        return out.reshape((1,) * t.ndim) if keepdim else out
    d = norm_dim(op, dim, t.ndim)
    if t.shape[d] == 0:
        raise ShapeError(f"{op}: cannot reduce over a zero-size dim (shape {t.shape}, dim {d})")
    if t.dtype.is_complex:
        raise DTypeError(f"{op}: complex numbers have no order, got a {t.dtype} tensor")
    src = t
    if t.dtype in dt.WIDENED:  # read as half bits by the kernels (common.WIDENED): exact in 32 bits
        src = to_dtype(t.detach(), dt.WIDENED[t.dtype])
    keep_shape = tuple(1 if k == d else n for k, n in enumerate(t.shape))
    out = empty(keep_shape, dt.i64, device=t.device)
    prepared = BACKENDS[t._storage.device].reduce.arg_reduce(
        op, src._storage.data, src.layout, d, out._storage.data, out.layout, src is t and type(dim) is int)
    final = out.layout if keepdim else out.layout.squeeze(d)
    if prepared is not None:
        run, reach = prepared
        _BOUND.put((op, t.layout.serial(), t.dtype.name, dim, keepdim, t._storage.device),
                   Kept(run, reach, [t._storage.data.dtype], final, dt.i64, t._storage.device))
    return out if keepdim else Tensor(out._storage, final, dt.i64)
