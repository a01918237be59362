"""Sorting and searching: dtypes and shapes here, the loops in the backend's ``sort`` family.

``sort``/``argsort`` sort every line along one dim of any layout into a fresh row-major
result; ``searchsorted`` bisects a sorted 1-D tensor for every element of another.  Each
dtype is sorted in the one its kernels compute it in (``dtype.kernel_dtype``): f16 and bf16
as f32, int16 and uint16 as i32 and u32 (exact both ways, and the order is the same);
complex has no order and is refused, except by ``unique``, which orders it by (real, imag).
"""

from __future__ import annotations

import numpy as np

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS
from ..creation import arange, empty, full
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.layout import norm_dim
from ..tensor import Tensor, record
from .copies import to_dtype
from .elementwise import binary, complex_part
from .join import cat, index_select
from .kept import Kept
from .scan import cumulate, nonzero

__all__ = ["sort", "sort_back", "argsort", "searchsorted", "unique", "ordered"]


def ordered(op: str, x) -> Tensor:
    """``x`` as the sort kernels take it: a real tensor in its kernel dtype (``dtype.kernel_dtype``)."""
    if not isinstance(x, Tensor):
        raise StridedError(f"{op}: expected a tensor, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise DTypeError(f"{op}: complex tensors have no order, got {x.dtype}")
    want = dt.kernel_dtype(x.dtype)
    return x if want is x.dtype else to_dtype(x.detach(), want)


def _lines(op: str, x: Tensor, axis, descending) -> int:
    if not isinstance(descending, (bool, np.bool_)):
        raise StridedError(f"{op}: expected descending to be a bool, got {descending!r}")
    if x.ndim == 0:
        raise ShapeError(f"{op}: expected a tensor of rank >= 1, got a scalar (shape ())")
    return norm_dim(op, axis, x.ndim)


# A sort's or argsort's decision, kept as the other families keep theirs (``Kept``): only
# where the kernel reads x's own buffer (a dtype it sorts as it is).
_KEPT = caches.cache("ops.sort", "op name, source layout serial, source dtype name, axis argument, descending, "
                     "device", 1024, threads=True)


def _sorted(op: str, x: Tensor, axis, descending, out_dtype) -> tuple:
    """(kernel output, the axis): ``op`` ("sort" or "argsort") run on every line of x."""
    if type(axis) is int and type(descending) is bool and isinstance(x, Tensor):
        s, lay = x._storage, x.layout
        e = _KEPT.get((op, lay._serial or lay.serial(), x.dtype.name, axis, descending, s.device))
        if e is not None:
            d = s.data
            if len(d) >= e.reach[0] and d.dtype is e.types[0]:
                out = e.result()
                e.run(out._storage.data, d)
                return out, e.extra
    src = ordered(op, x)
    d = _lines(op, x, axis, descending)
    out = empty(x.shape, src.dtype if out_dtype is None else out_dtype)
    keep = src is x and type(axis) is int and type(descending) is bool
    got = getattr(BACKENDS[src._storage.device].sort, op)(out._storage.data, out.layout, src._storage.data,
                                                          src.layout, d, bool(descending), keep)
    if got is not None:
        run, reach = got
        _KEPT.put((op, x.layout.serial(), x.dtype.name, axis, descending, x._storage.device),
                  Kept(run, (reach,), (x._storage.data.dtype,), out.layout, out.dtype, x._storage.device, extra=d))
    return out, d


def sort(x: Tensor, axis: int = -1, descending: bool = False) -> Tensor:
    """``x`` sorted along ``axis``: stable, NaN last (first when descending), x's dtype."""
    out, d = _sorted("sort", x, axis, descending, None)
    if out.dtype is not x.dtype:
        out = to_dtype(out, x.dtype)
    return record(out, "sort", (x,), axis=d, descending=bool(descending))


def sort_back(node, op, g):
    """sort's gradient: g goes back to where each sorted element came from, a gather of g at
    the inverse permutation along the axis (positions in a row-major copy of g)."""
    (x,) = op.inputs
    d = op.ctx["axis"]
    inv = argsort(argsort(x.detach(), d, op.ctx["descending"]), d, False)
    g = g.detach().force_contiguous()
    step = g.stride[d]
    along = arange(x.shape[d], dtype=dt.i64).reshape(tuple(-1 if k == d else 1 for k in range(x.ndim)))
    pos = binary("add", arange(g.numel, dtype=dt.i64).reshape(g.shape), binary("mul", binary("sub", inv, along), step))
    return [index_select(g.reshape(-1), pos.reshape(-1), 0).reshape(x.shape)]


def argsort(x: Tensor, axis: int = -1, descending: bool = False) -> Tensor:
    """The i64 positions along ``axis`` that sort ``x`` (``sort``'s order)."""
    return _sorted("argsort", x, axis, descending, dt.i64)[0]


def searchsorted(x1: Tensor, x2: Tensor, right: bool = False) -> Tensor:
    """For each element of ``x2``, the i64 position in the sorted 1-D ``x1`` where it would go
    (before equal elements; after them when ``right``).  Both compare in their promoted dtype."""
    for x in (x1, x2):
        ordered("searchsorted", x)
    if x1.ndim != 1:
        raise ShapeError(f"searchsorted: expected a 1-D x1, got shape {x1.shape}")
    common = dt.kernel_dtype(dt.promote(x1.dtype, x2.dtype))
    a = x1 if x1.dtype is common else to_dtype(x1.detach(), common)
    b = x2 if x2.dtype is common else to_dtype(x2.detach(), common)
    out = empty(x2.shape, dt.i64)
    BACKENDS[a._storage.device].sort.searchsorted(out._storage.data, out.layout, a._storage.data, a.layout,
                                                  b._storage.data, b.layout, bool(right))
    return out


def unique(x: Tensor, equal_nan: bool = False) -> tuple:
    """(values, first positions, inverse indices, counts) of the flattened ``x``: a stable
    argsort, the positions where a sorted element differs from the one before (every NaN its
    own value, as the standard says, unless ``equal_nan``: NumPy's np.unique), and gathers
    and scans over those.  Inverse indices have x's shape.  Complex values, which have no
    order, are sorted by (real, imag) as NumPy sorts them: equal values end up side by side."""
    if not isinstance(x, Tensor):
        raise StridedError(f"unique: expected a tensor, got {type(x).__name__}")
    x = x.detach()
    flat = x.reshape(-1)
    n = flat.shape[0]
    if x.dtype.is_complex:  # stable sorts by imag, then by real
        by_imag = argsort(complex_part(flat, 1), 0, False)
        perm = index_select(by_imag, argsort(index_select(complex_part(flat, 0), by_imag, 0), 0, False), 0)
    else:
        perm = argsort(flat, 0, False)
    s = index_select(flat, perm, 0)
    new = empty((n,), dt.bool_)
    if n:
        new[0:1] = True
        lo, hi = s.narrow(0, 0, n - 1), s.narrow(0, 1, n - 1)
        step = binary("ne", hi, lo)
        if equal_nan and x.dtype.is_float:  # NaN != NaN: two NaNs in a row are one value here
            step = binary("logical_and", step, binary("eq", lo, lo))
        new[1:] = step
    starts = nonzero(new)[0]
    ends = cat([starts.narrow(0, 1, starts.shape[0] - 1), full((1,), n, dt.i64)], 0) if n else starts
    counts = binary("sub", ends, starts)
    group = binary("sub", cumulate("sum", new, 0, dt.i64), 1)  # each sorted element's value
    inverse = index_select(group, argsort(perm, 0, False), 0).reshape(x.shape)
    return index_select(s, starts, 0), index_select(perm, starts, 0), inverse, counts
