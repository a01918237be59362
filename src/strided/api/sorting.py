"""The Array API's sorting, searching, scan and set functions: ``sort``, ``argsort``,
``cumulative_sum``, ``cumulative_prod``, ``nonzero``, ``searchsorted`` and ``unique_*``
(the sort and scan kernel families through the op layer, and compositions of them with
gathers).  ``strided.array_api`` re-exports them as the namespace's.
"""

from __future__ import annotations

import collections
import numbers

import numpy as np

from .. import ops as _ops
from ..core import dtype as dt
from ..core.errors import ShapeError, StridedError
from ..creation import expect_tensor, full, int_arg
from ..tensor import Tensor
from .indexing import take



def _flag(op: str, what: str, value) -> bool:
    if value is False or value is True:
        return value
    if not isinstance(value, (bool, np.bool_)):
        raise StridedError(f"{op}: expected {what} to be a bool, got {value!r}")
    return bool(value)


def _sort_args(op: str, x, axis, descending, stable) -> tuple:
    x = expect_tensor(op, x)
    _flag(op, "stable", stable)  # every sort here is stable, which stable=False allows too
    return x, int_arg(op, "axis", axis), descending  # the op checks descending


def sort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """``x`` sorted along ``axis`` (stable, NaN last as NumPy; descending reverses it)."""
    x, axis, descending = _sort_args("sort", x, axis, descending, stable)
    return _ops.sort(x, axis, descending)


def argsort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The i64 positions that sort ``x`` along ``axis``; descending keeps equal elements in
    their original order (array_api_strict's rule)."""
    x, axis, descending = _sort_args("argsort", x, axis, descending, stable)
    return _ops.argsort(x, axis, descending)


def _cumulative(op: str, x, axis, dtype, include_initial) -> Tensor:
    name = "cumulative_" + op
    x = expect_tensor(name, x)
    if axis is None:
        if x.ndim != 1:
            raise ShapeError(f"{name}: axis is required for a tensor of rank {x.ndim} (shape {x.shape})")
        axis = 0
    axis = int_arg(name, "axis", axis)
    initial = _flag(name, "include_initial", include_initial)
    want = dt.as_dtype(dtype) if dtype is not None else dt.accumulated(x.dtype)
    return _ops.cumulate(op, x, axis, want, initial)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    return _cumulative("sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    return _cumulative("prod", x, axis, dtype, include_initial)


def nonzero(x, /) -> tuple:
    """The indices of the nonzero elements, one i64 tensor per dim, in row-major order."""
    x = expect_tensor("nonzero", x)
    if x.ndim == 0:
        raise ShapeError("nonzero: expected a tensor of rank >= 1, got a scalar (shape ())")
    return _ops.nonzero(x)


def searchsorted(x1, x2, /, *, side: str = "left", sorter=None) -> Tensor:
    """Where each element of ``x2`` goes into the sorted 1-D ``x1`` (``sorter``: the positions
    that sort x1, as argsort gives them)."""
    x1 = expect_tensor("searchsorted", x1)
    if side not in ("left", "right"):
        raise StridedError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if x1.ndim != 1:
        raise ShapeError(f"searchsorted: expected a 1-D x1, got shape {x1.shape}")
    if isinstance(x2, (numbers.Real, np.generic)) and not isinstance(x2, (bool, np.bool_)):
        x2 = full((), x2, dt.promote_scalar(x1.dtype, x2))
    x2 = expect_tensor("searchsorted", x2)
    if sorter is not None:
        sorter = expect_tensor("searchsorted", sorter)
        if sorter.shape != x1.shape or sorter.dtype.kind not in "iu":
            raise StridedError(f"searchsorted: sorter must be integers of x1's shape {x1.shape}, got "
                               f"{sorter.dtype} of shape {sorter.shape}")
        x1 = take(x1, sorter)
    return _ops.searchsorted(x1, x2, side == "right")


UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique(op: str, x) -> tuple:
    return _ops.unique(expect_tensor(op, x))


def unique_all(x, /) -> UniqueAllResult:
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x, /) -> UniqueCountsResult:
    values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /) -> UniqueInverseResult:
    values, _, inverse, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, inverse)


def unique_values(x, /) -> Tensor:
    return _unique("unique_values", x)[0]
