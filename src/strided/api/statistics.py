"""The Array API's statistical and utility functions: reductions over ``axis`` (``sum``,
``prod``, ``mean``, ``max``, ``min``, ``var``, ``std``, ``argmax``, ``argmin``,
``count_nonzero``, ``all``, ``any``) and ``diff``, each a composition of the op layer's
reductions and elementwise ops with the standard's argument checks.  ``strided.array_api``
re-exports them as the namespace's.
"""

from __future__ import annotations

import numbers


from .. import ops as _ops
from ..core import dtype as dt
from ..core.errors import DTypeError, ShapeError, StridedError
from ..creation import expect_tensor, int_arg
from ..layout.layout import as_int_tuple, norm_dim
from ..ops import arg_reduce, binary, cat, reduce, to_dtype, unary
from ..tensor import Tensor


def axes_arg(op: str, x: Tensor, axis) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints) as sorted distinct dims; a repeated dim is refused."""
    n = x.ndim
    if axis is None:
        return tuple(range(n))
    if type(axis) is int and -n <= axis < n:  # most calls: checked without a call
        return (axis % n,)
    one = not isinstance(axis, (tuple, list))
    dims = (axis,) if one else tuple(axis)
    if bool in {type(d) for d in dims}:  # True would read as 1; NumPy refuses it too
        raise ShapeError(f"{op}: expected an integer axis, got {axis!r}")
    dims = as_int_tuple(op, "axis", dims)
    norm = [norm_dim(op, d, n) for d in dims]
    if len(set(norm)) != len(norm):
        raise ShapeError(f"{op}: axis {axis} names a dim twice (shape {x.shape})")
    return tuple(sorted(norm))


def reduce_axis(op: str, x: Tensor, axis):
    """``axis`` checked as ``axes_arg`` checks it, in the form the op layer's ``reduce`` keys
    its kept calls under at least cost: None or an int as given (``reduce`` reads them as
    ``axes_arg`` does), else ``axes_arg``'s tuple (a tuple key costs a check per item)."""
    if axis is None or (type(axis) is int and -x.ndim <= axis < x.ndim):
        return axis
    return axes_arg(op, x, axis)


def sum(x, /, *, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    """Signed integers and bools sum in i64, unsigned in u64, floats and complex in their own
    dtype, or in ``dtype`` when given."""
    x = expect_tensor("sum", x)
    dims = reduce_axis("sum", x, axis)
    if dtype is None:
        return reduce("sum", x, dims, keepdims)
    want = dt.as_dtype(dtype)
    out = reduce("sum", to_dtype(x, want), dims, keepdims)
    # Integer sums accumulate in i64; the dtype asked for wraps them as NumPy's sum(dtype=) does.
    return out if out.dtype is want else to_dtype(out, want)


def prod(x, /, *, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    x = expect_tensor("prod", x)
    dims = reduce_axis("prod", x, axis)
    want = dt.as_dtype(dtype) if dtype is not None else dt.accumulated(x.dtype)
    src = to_dtype(x, want.compute)
    out = reduce("prod", src, dims, keepdims)
    return to_dtype(out, want)


def mean(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    x = expect_tensor("mean", x)
    if x.dtype.kind not in "fc":
        raise DTypeError(f"mean: expected a floating-point tensor, got {x.dtype}")
    return reduce("mean", x, reduce_axis("mean", x, axis), keepdims)


def max(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    x = expect_tensor("max", x)
    return reduce("max", x, reduce_axis("max", x, axis), keepdims)


def min(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    x = expect_tensor("min", x)
    return reduce("min", x, reduce_axis("min", x, axis), keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims: bool = False) -> Tensor:
    """``sum((x - mean)^2) / (N - correction)`` (``ops.composite.var``), with the standard's checks."""
    x = expect_tensor("var", x)
    if not x.dtype.is_float:
        raise DTypeError(f"var: expected a floating-point tensor, got {x.dtype}")
    if not isinstance(correction, numbers.Real) or isinstance(correction, bool):
        raise StridedError(f"var: correction must be a real number, got {correction!r}")
    return _ops.composite.var(x, axes_arg("var", x, axis), keepdims, correction=correction)


def std(x, /, *, axis=None, correction=0.0, keepdims: bool = False) -> Tensor:
    return unary("sqrt", var(x, axis=axis, correction=correction, keepdims=keepdims))


def _arg(op: str, x, axis, keepdims) -> Tensor:
    x = expect_tensor(op, x)
    if axis is None:
        if x.numel == 0:
            raise ShapeError(f"{op}: cannot reduce a zero-size tensor (shape {x.shape})")
        out = arg_reduce(op, x, None, False)
        return out.reshape((1,) * x.ndim) if keepdims else out
    return arg_reduce(op, x, norm_dim(op, axis, x.ndim), keepdims)


def argmax(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    return _arg("argmax", x, axis, keepdims)


def argmin(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    return _arg("argmin", x, axis, keepdims)


def count_nonzero(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    x = expect_tensor("count_nonzero", x)
    return reduce("sum", binary("ne", x, 0) if x.dtype is not dt.bool_ else x, reduce_axis("count_nonzero", x, axis),
                  keepdims)


def all(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """True where no element is zero (NaN counts as true): the count of zeros is 0."""
    x = expect_tensor("all", x)
    zeros_found = reduce("sum", binary("eq", x, 0) if x.dtype is not dt.bool_ else unary("not", x),
                         reduce_axis("all", x, axis), keepdims)
    return binary("eq", zeros_found, 0)


def any(x, /, *, axis=None, keepdims: bool = False) -> Tensor:
    x = expect_tensor("any", x)
    return binary("gt", count_nonzero(x, axis=axis, keepdims=keepdims), 0)


def diff(x, /, *, axis: int = -1, n: int = 1, prepend=None, append=None) -> Tensor:
    x = expect_tensor("diff", x)
    d = norm_dim("diff", axis, x.ndim)
    n = int_arg("diff", "n", n)
    if n < 0:
        raise ShapeError(f"diff: n must be >= 0, got {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = cat([expect_tensor("diff", p) for p in parts], d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = binary("ne", hi, lo) if x.dtype is dt.bool_ else binary("sub", hi, lo)
    return x
