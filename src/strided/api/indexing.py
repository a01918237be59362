"""The Array API's indexing functions (``take``, ``take_along_axis``) and indexing with
integer arrays (``t[idx]`` where idx holds integer or boolean arrays, installed on Tensor's
``__getitem__`` through ``tensor.GATHER_INDEX``): gathers through the index kernel's
``index_select``.  ``strided.array_api`` re-exports them as the namespace's.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import ops as _ops
from ..core import dtype as dt
from ..core.errors import ShapeError, StridedIndexError
from ..creation import expect_tensor, from_numpy, full
from ..layout.layout import broadcast_shapes as broadcast_shapes_of, norm_dim
from ..ops import binary, copy as copy_tensor, index_select, reduce, to_dtype, where
from ..tensor import GATHER_INDEX, Tensor, as_strided


def take(x, indices, /, *, axis=None) -> Tensor:
    """The slices of ``x`` at the 1-D integer ``indices`` along ``axis`` (the gather kernel's
    ``index_select``); ``axis`` may be left out only for a 1-D ``x``."""
    x = expect_tensor("take", x)
    if axis is None:
        if x.ndim != 1:
            raise ShapeError(f"take: axis is required for a tensor of rank {x.ndim}")
        axis = 0
    if isinstance(indices, Tensor) and indices.ndim != 1:
        raise ShapeError(f"take: expected 1-D indices, got shape {indices.shape}")
    return index_select(x, indices, norm_dim("take", axis, x.ndim))



def _index_tensor(x: Tensor, n: int, what: str) -> Tensor:
    """An integer index tensor checked against a dim of size ``n``, negatives wrapped."""
    if x.dtype.kind not in "iu":
        if x.dtype is dt.bool_:
            raise StridedIndexError(
                "getitem: a boolean mask must be the only index (the standard's rule), got it among others")
        raise StridedIndexError(f"getitem: expected integer index arrays, got {x.dtype} for {what}")
    x = x if x.dtype is dt.i64 else to_dtype(x, dt.i64)
    if x.numel:
        lo, hi = int(reduce("min", x).item()), int(reduce("max", x).item())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise StridedIndexError(f"getitem: index {bad} is out of range for {what} of size {n}")
        if lo < 0:
            x = where(binary("lt", x, 0), binary("add", x, n), x)
    return x


def _as_index_array(i):
    if isinstance(i, Tensor):
        return i
    try:
        a = np.asarray(i)
    except (TypeError, ValueError):
        raise StridedIndexError(f"getitem: cannot read {i!r} as an index array") from None
    if a.size == 0 and a.dtype.kind == "f":
        a = a.astype(np.int64)  # [] is an empty integer index, as in NumPy
    if a.dtype.kind not in "iub":
        raise StridedIndexError(f"getitem: expected integer index arrays, got {a.dtype}")
    return from_numpy(np.ascontiguousarray(a)) if a.ndim else from_numpy(a.reshape(1)).reshape(())


def gather_index(t: Tensor, index) -> Tensor:
    """``t[index]`` for an index holding integer arrays (NumPy's and the standard's rules for
    the cases below), as a gather; anything else is refused by name.

    - only integers and integer arrays (the standard's case): the arrays and integers
      broadcast together, and their shape replaces the dims they index;
    - one integer array among slices and ``...``: its shape replaces its dim."""
    idx = index if isinstance(index, tuple) else (index,)
    if len(idx) == 1 and ((type(idx[0]) is Tensor and idx[0].dtype is dt.bool_)
                          or (isinstance(idx[0], np.ndarray) and idx[0].dtype == np.bool_)):
        return _gather_mask(t, _as_index_array(idx[0]))
    is_array = [isinstance(i, (Tensor, np.ndarray, list)) for i in idx]
    if all(isinstance(i, (Tensor, np.ndarray, list, numbers.Integral)) and not isinstance(i, bool)
                    for i in idx):
        return _gather_all(t, [_as_index_array(i) if a else i for i, a in zip(idx, is_array)])
    if sum(is_array) == 1 and all(a or isinstance(i, slice) or i is Ellipsis
                                                    for i, a in zip(idx, is_array)):
        return _gather_one(t, idx, is_array.index(True))
    others = ", ".join(sorted({type(i).__name__ for i, a in zip(idx, is_array) if not a}))
    raise StridedIndexError(
        f"getitem: integer arrays mixed with {others} "
        "are not supported (use integers and arrays only, or one array among slices)")


def _gather_mask(t: Tensor, mask: Tensor) -> Tensor:
    """``t[mask]``: the elements (or slices) where the boolean ``mask`` over t's leading dims
    is true, in row-major order; a gather at nonzero's coordinates."""
    if mask.ndim == 0:  # a rank-0 mask adds a dim of length 1 (true) or 0 (false)
        one = copy_tensor(t.reshape((1,) + t.shape))
        return one if mask.item() else one.narrow(0, 0, 0)
    if mask.shape != t.shape[: mask.ndim]:
        raise StridedIndexError(
            f"getitem: a boolean mask must match the leading dims of the tensor, got mask {mask.shape} "
            f"for shape {t.shape}")
    return _gather_all(t, list(_ops.nonzero(mask)))


def _gather_all(t: Tensor, idx: list) -> Tensor:
    k = len(idx)
    if k > t.ndim:
        raise StridedIndexError(f"getitem: too many indices for a tensor of rank {t.ndim}: {k} given")
    parts = []
    for d, i in enumerate(idx):
        what = f"dim {d}"
        if isinstance(i, Tensor):
            parts.append(_index_tensor(i, t.shape[d], what))
        else:
            n = t.shape[d]
            if not -n <= i < n:
                raise StridedIndexError(f"getitem: index {i} is out of range for {what} of size {n}")
            parts.append(full((), i % n, dt.i64))
    batch = broadcast_shapes_of("getitem", *[p.shape for p in parts])
    rest, rest_stride = t.shape[k:], t.stride[k:]
    # The buffer position of every element read: the view's offset, plus each index times its
    # dim's stride, plus the trailing dims' offsets; bounds were checked dim by dim above.
    pos = full((), t.offset, dt.i64)
    for p, st in zip(parts, t.stride[:k]):
        pos = binary("add", pos, binary("mul", p, st))
    pos = pos.broadcast_as(batch).reshape(batch + (1,) * len(rest))
    for j, (n, st) in enumerate(zip(rest, rest_stride)):
        step = binary("mul", from_numpy(np.arange(n, dtype=np.int64)), st)
        pos = binary("add", pos, step.reshape((1,) * (len(batch) + j) + (n,) + (1,) * (len(rest) - j - 1)))
    flat = as_strided(t, (len(t.storage),), (1,), 0)
    return index_select(flat, pos.reshape(-1), 0).reshape(batch + rest)


def _gather_one(t: Tensor, idx: tuple, p: int) -> Tensor:
    # Identity tests only: == on a tensor in the index would compare elementwise.
    ells = [j for j, i in enumerate(idx) if i is Ellipsis]
    if len(ells) > 1:
        raise StridedIndexError("getitem: an index can only have a single ellipsis ('...')")
    if ells:
        e = ells[0]
        fill = t.ndim - (len(idx) - 1)
        if fill < 0:
            raise StridedIndexError(f"getitem: too many indices for a tensor of rank {t.ndim}")
        idx = idx[:e] + (slice(None),) * fill + idx[e + 1:]
        p = p if p < e else p + fill - 1
    if len(idx) > t.ndim:
        raise StridedIndexError(f"getitem: too many indices for a tensor of rank {t.ndim}: {len(idx)} given")
    view = t[tuple(slice(None) if j == p else i for j, i in enumerate(idx))]
    a = _index_tensor(_as_index_array(idx[p]), view.shape[p], f"dim {p}")
    out = index_select(view, a.reshape(-1), p)
    return out.reshape(view.shape[:p] + a.shape + view.shape[p + 1:])


GATHER_INDEX.append(gather_index)


def take_along_axis(x, indices, /, *, axis: int = -1) -> Tensor:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``: the other dims
    of ``x`` and ``indices`` broadcast, and the gather reads each element where it lies."""
    x = expect_tensor("take_along_axis", x)
    indices = expect_tensor("take_along_axis", indices)
    if indices.ndim != x.ndim:
        raise ShapeError(f"take_along_axis: indices must have x's rank {x.ndim}, got shape {indices.shape}")
    d = norm_dim("take_along_axis", axis, x.ndim)
    others = [x.shape[k] for k in range(x.ndim) if k != d]
    try:
        broadcast_shapes_of("take_along_axis", tuple(others), tuple(n for k, n in enumerate(indices.shape) if k != d))
    except ShapeError:
        raise ShapeError(f"take_along_axis: x {x.shape} and indices {indices.shape} do not broadcast "
                         f"outside axis {d}") from None
    parts = []
    for k in range(x.ndim):
        if k == d:
            parts.append(indices)
        else:  # this dim's own positions, broadcast along every other dim
            shape = tuple(x.shape[k] if j == k else 1 for j in range(x.ndim))
            parts.append(from_numpy(np.arange(x.shape[k], dtype=np.int64).reshape(shape)))
    return gather_index(x, tuple(parts))
