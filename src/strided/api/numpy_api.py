"""NumPy's ufuncs and functions on Tensors (NEP 13 ``__array_ufunc__``, NEP 18
``__array_function__``): every one answers, with Tensors.

Natively first: ``np.add(t, 1)``, ``np.sum(t, axis=0)``, ``np.concatenate([t, u])``,
``np.add.outer(t, u)`` run the namespace's functions (``strided.array_api``,
``strided.linalg``), translated from NumPy's signatures (``UFUNCS``, ``FUNCTIONS``).  What
they do not cover goes to NumPy on zero-copy views of the tensors (``strided.numpy_fallback``):
a function or ufunc method with no translation, NumPy keywords a translation does not take
(``where=``, ``initial=``, ``order='F'``: the translation raises a TypeError, which sends the
call on), and a dtype the kernel lacks (its DTypeError; when NumPy refuses that dtype too, the
kernel's error is the one raised).  A fallback never replaces a kernel: a call the
translation takes is computed by strided, and its errors are strided's.

Operands: NumPy arrays among the inputs are viewed as tensors (no copy); NumPy scalars
become rank-0 tensors of their dtype (so ``np.float64(2) * f32_tensor`` is f64, as in
NumPy 2); Python scalars stay weak (they only widen the kind).  ``out=`` may be a tensor
or an ndarray: the result is written into it (converted to its dtype).
"""

from __future__ import annotations

import importlib

import numpy as np

from . import array_api as xp
from ..core import caches
from ..core import dtype as dt
from . import numpy_fallback
from ..creation import empty, ones, zeros
from ..core.errors import DTypeError, StridedError
from ..kernels.optable import on_new_op
from ..ops import elementwise as _ops
from ..ops import index_select, unique
from ..tensor import Tensor

__all__ = ["UFUNCS", "FUNCTIONS", "implemented"]


_NO = object()  # "not passed", for NumPy keywords strided does not take


def _linalg():
    # strided.linalg loads BLAS: only when a product is asked for.
    return importlib.import_module("strided.api.linalg_api")


def _operand(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return xp.asarray(x)
    if isinstance(x, np.generic):
        return xp.asarray(np.asarray(x))
    if isinstance(x, (list, tuple)):
        return xp.asarray(x)
    return x  # a Python scalar


class _NotNative(TypeError):
    """What strided's kernels do not compute (a function, a keyword): NumPy does, on views."""


def _not_implemented(what: str, why: str = "") -> TypeError:
    return _NotNative(f"strided: numpy.{what} has no strided kernel{why}")


def _matmul(a, b):
    return _linalg().matmul(a, b, promote=True)


# ufunc name -> the namespace function that computes it: the op table's entries (each names
# its ufunc and its Array API function), and the ufuncs the namespace composes from them
UFUNCS = {}
on_new_op(lambda e: e.ufunc and UFUNCS.__setitem__(e.ufunc, getattr(xp, e.api) if e.api else
                                                   _ops.install("unary" if e.arity == 1 else "binary", e.name)))
UFUNCS.update({
    "logical_xor": xp.logical_xor, "positive": xp.positive, "isnan": xp.isnan, "isinf": xp.isinf,
    "isfinite": xp.isfinite, "matmul": _matmul, "conjugate": xp.conj, "ceil": xp.ceil, "floor": xp.floor,
    "trunc": xp.trunc, "rint": xp.round, "signbit": xp.signbit, "nextafter": xp.nextafter,
    "left_shift": xp.bitwise_left_shift, "right_shift": xp.bitwise_right_shift,
})

# ufunc.reduce -> the reduction
_REDUCTIONS = {"add": xp.sum, "multiply": xp.prod, "maximum": xp.max, "minimum": xp.min,
               "logical_and": xp.all, "logical_or": xp.any}


def _write_out(out, result):
    if out is None:
        return result
    if isinstance(out, tuple):
        if len(out) != 1:
            raise _not_implemented("ufunc", f" with {len(out)} outputs")
        out = out[0]
    if isinstance(out, Tensor):
        out.copy_(result)
    elif isinstance(out, np.ndarray):
        np.copyto(out, result.numpy(), casting="unsafe")
    else:
        raise _not_implemented("ufunc", f" writing out= a {type(out).__name__}")
    return out


_RESULT_DTYPE = caches.cache("numpy_api.ufunc_dtype", "ufunc, operand dtypes", 4096)


def _numpys_dtype(ufunc, operands, result):
    """The kernel's answer in the dtype NumPy's loop gives (sin of u8 is f16 in NumPy, f64 in
    strided; square of bools is i8): a cast, the kernel still computes.  Tensor operands only:
    Python scalars follow NEP 50 in both already."""
    if not isinstance(result, Tensor) or not all(isinstance(x, Tensor) for x in operands):
        return result
    key = (ufunc, *(x.dtype for x in operands))
    want = _RESULT_DTYPE.get(key, _NO)
    if want is _NO:
        try:
            got = ufunc.resolve_dtypes(tuple(x.dtype.np for x in operands) + (None,) * ufunc.nout)
            want = dt.as_dtype(got[-1]) if ufunc.nout == 1 else None
        except (TypeError, ValueError):  # no loop: NumPy refuses, the kernel's answer stands
            want = None
        _RESULT_DTYPE.put(key, want)
    return result if want is None or result.dtype is want else xp.astype(result, want)


def _native_ufunc(ufunc, method, inputs, kwargs):
    name = ufunc.__name__
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    fn = UFUNCS.get(name)
    if method == "__call__" and fn is not None and not kwargs:
        operands = [_operand(x) for x in inputs]
        result = _numpys_dtype(ufunc, operands, fn(*operands))
    elif method == "outer" and fn is not None and not kwargs and ufunc.nin == 2 and ufunc.signature is None:
        a, b = (_operand(x) for x in inputs)
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            raise _not_implemented(f"{name}.outer", " of a Python scalar")
        result = _numpys_dtype(ufunc, (a, b), fn(xp.reshape(a, a.shape + (1,) * b.ndim), b))
    elif method == "reduce" and name in _REDUCTIONS and set(kwargs) <= {"axis", "keepdims"}:
        (x,) = inputs
        x = _operand(x)
        if dtype is not None:
            x = xp.astype(x, dt.as_dtype(dtype), copy=False)
            dtype = None
        result = _REDUCTIONS[name](x, axis=kwargs.get("axis", 0), keepdims=kwargs.get("keepdims", False))
    else:
        raise _not_implemented(name if method == "__call__" else f"{name}.{method}")
    if dtype is not None:
        result = xp.astype(result, dt.as_dtype(dtype), copy=False)
    return _write_out(out, result)


def _foreign(xs) -> bool:
    """Another array type with its own ufunc override: NEP 13 lets it answer (Dask, xarray)."""
    return any(not isinstance(x, (Tensor, np.ndarray)) and hasattr(type(x), "__array_ufunc__")
               and type(x).__array_ufunc__ is not None for x in xs)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if _foreign(inputs + tuple(kwargs.get("out", ()))):
        return NotImplemented
    return _native_or_numpy((ufunc, method), _native_ufunc, (ufunc, method, inputs, dict(kwargs)), {},
                            getattr(ufunc, method), inputs, kwargs)


# ---------------------------------------------------------------------------
# NumPy functions, in NumPy's signatures


def _refuse(name: str, **given):
    """TypeError for NumPy keywords passed with a value strided does not honour."""
    bad = [k for k, v in given.items() if v is not _NO and v is not None and v is not False]
    if bad:
        raise _not_implemented(name, f" with {', '.join(bad)}=")


def _float_for_stats(x: Tensor) -> Tensor:
    # NumPy's mean/var/std of integers compute in f64.
    return x if x.dtype.kind in "fc" else xp.astype(x, dt.f64)


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=_NO):
    _refuse("sum", initial=initial, where=where)
    return _write_out(out, xp.sum(_operand(a), axis=axis, dtype=dtype, keepdims=keepdims))


def _prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=_NO):
    _refuse("prod", initial=initial, where=where)
    return _write_out(out, xp.prod(_operand(a), axis=axis, dtype=dtype, keepdims=keepdims))


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO):
    _refuse("mean", where=where)
    x = _operand(a)
    x = xp.astype(x, dtype, copy=False) if dtype is not None else _float_for_stats(x)
    return _write_out(out, xp.mean(x, axis=axis, keepdims=keepdims))


def _stat(name):
    def fn(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO, mean=_NO, correction=_NO):
        _refuse(name, where=where, mean=mean)
        x = _operand(a)
        x = xp.astype(x, dtype, copy=False) if dtype is not None else _float_for_stats(x)
        c = ddof if correction is _NO else correction
        return _write_out(out, getattr(xp, name)(x, axis=axis, correction=c, keepdims=keepdims))

    return fn


def _extreme(name):
    def fn(a, axis=None, out=None, keepdims=False, initial=_NO, where=_NO):
        _refuse(name, initial=initial, where=where)
        return _write_out(out, getattr(xp, name)(_operand(a), axis=axis, keepdims=keepdims))

    return fn


def _arg(name):
    def fn(a, axis=None, out=None, *, keepdims=False):
        return _write_out(out, getattr(xp, name)(_operand(a), axis=axis, keepdims=keepdims))

    return fn


def _truth(name):
    def fn(a, axis=None, out=None, keepdims=False, *, where=_NO):
        _refuse(name, where=where)
        return _write_out(out, getattr(xp, name)(_operand(a), axis=axis, keepdims=keepdims))

    return fn


def _arrays(seq):
    return [_operand(x) for x in seq]


def _concatenate(arrays, axis=0, out=None, dtype=None, casting=_NO):
    _refuse("concatenate", casting=casting)
    res = xp.concat(_arrays(arrays), axis=axis)
    return _write_out(out, res if dtype is None else xp.astype(res, dtype, copy=False))


def _stack(arrays, axis=0, out=None, *, dtype=None, casting=_NO):
    _refuse("stack", casting=casting)
    res = xp.stack(_arrays(arrays), axis=axis)
    return _write_out(out, res if dtype is None else xp.astype(res, dtype, copy=False))


def _transpose(a, axes=None):
    x = _operand(a)
    return xp.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else axes)


def _reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise _not_implemented("reshape", f" with order={order!r}")
    return xp.reshape(_operand(a), shape if shape is not None else newshape, copy=copy)


def _where(condition, x=_NO, y=_NO):
    if x is _NO and y is _NO:
        return _nonzero(condition)  # NumPy's one-argument where is nonzero
    if x is _NO or y is _NO:
        raise _not_implemented("where", " with one of x and y")
    c = _operand(condition)
    if c.dtype is not dt.bool_:
        c = xp.not_equal(c, 0)
    return xp.where(c, _operand(x), _operand(y))


def _clip(a, a_min=_NO, a_max=_NO, out=None, *, min=_NO, max=_NO, **kw):
    if kw:
        raise _not_implemented("clip", f" with {', '.join(sorted(kw))}=")
    lo = a_min if a_min is not _NO else (None if min is _NO else min)
    hi = a_max if a_max is not _NO else (None if max is _NO else max)
    return _write_out(out, xp.clip(_operand(a), _operand(lo) if lo is not None else None,
                                   _operand(hi) if hi is not None else None))


def _take(a, indices, axis=None, out=None, mode="raise"):
    if mode != "raise":
        raise _not_implemented("take", f" with mode={mode!r}")
    x = _operand(a)
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    d = axis % x.ndim if x.ndim else 0
    idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    if idx.dtype.kind not in "iu":
        raise _not_implemented("take", f" of {idx.dtype} indices")
    flat = index_select(x, idx.reshape(-1), d)
    return _write_out(out, xp.reshape(flat, x.shape[:d] + idx.shape + x.shape[d + 1:]))


def _squeeze(a, axis=None):
    x = _operand(a)
    if axis is None:
        axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
    return xp.squeeze(x, axis)


def _dot(a, b, out=None):
    x, y = _operand(a), _operand(b)
    if not isinstance(x, Tensor) or not isinstance(y, Tensor) or x.ndim == 0 or y.ndim == 0:
        return _write_out(out, xp.multiply(x, y))
    if y.ndim > 2:  # NumPy's dot contracts with the second-to-last dim of b: tensordot
        return _write_out(out, _linalg().tensordot(x, y, axes=([-1], [-2])))
    return _write_out(out, _matmul(x, y))


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    x = _operand(a)
    if order not in ("K", "C", "A"):
        raise _not_implemented("full_like", f" with order={order!r}")
    return xp.full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype)


def _like_fn(name, fill):
    def fn(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        if fill is not None:
            return _full_like(a, fill, dtype, order, subok, shape)
        if order not in ("K", "C", "A"):
            raise _not_implemented(name, f" with order={order!r}")
        x = _operand(a)
        return empty(x.shape if shape is None else shape, x.dtype if dtype is None else dtype)

    fn.__name__ = name
    return fn


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # A Python bool: computed by NumPy on zero-copy views (it makes no array to return).
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def _array_equal(a1, a2, equal_nan=False):
    return bool(np.array_equal(np.asarray(a1), np.asarray(a2), equal_nan=equal_nan))


def _copy(a, order="K", subok=False):
    return xp.asarray(_operand(a), copy=True)


def _size(a, axis=None):
    x = _operand(a)
    return x.size if axis is None else x.shape[axis]


FUNCTIONS = {
    np.sum: _sum, np.prod: _prod, np.mean: _mean, np.var: _stat("var"), np.std: _stat("std"),
    np.max: _extreme("max"), np.min: _extreme("min"), np.amax: _extreme("max"), np.amin: _extreme("min"),
    np.argmax: _arg("argmax"), np.argmin: _arg("argmin"), np.all: _truth("all"), np.any: _truth("any"),
    np.concatenate: _concatenate, np.stack: _stack, np.transpose: _transpose, np.reshape: _reshape,
    np.where: _where, np.clip: _clip, np.take: _take, np.squeeze: _squeeze,
    np.expand_dims: lambda a, axis: xp.expand_dims(_operand(a), axis=axis),
    np.broadcast_to: lambda array, shape, subok=False: xp.broadcast_to(_operand(array), shape),
    np.broadcast_arrays: lambda *args, subok=False: xp.broadcast_arrays(*_arrays(args)),
    np.moveaxis: lambda a, source, destination: xp.moveaxis(_operand(a), source, destination),
    np.swapaxes: lambda a, axis1, axis2: _operand(a).transpose(axis1, axis2),
    np.flip: lambda m, axis=None: xp.flip(_operand(m), axis=axis),
    np.roll: lambda a, shift, axis=None: xp.roll(_operand(a), shift, axis=axis),
    np.repeat: lambda a, repeats, axis=None: xp.repeat(_operand(a), repeats, axis=axis),
    np.tile: lambda A, reps: xp.tile(_operand(A), reps if isinstance(reps, (tuple, list)) else (reps,)),
    np.diff: lambda a, n=1, axis=-1, prepend=None, append=None: xp.diff(
        _operand(a), n=n, axis=axis, prepend=None if prepend is None else _operand(prepend),
        append=None if append is None else _operand(append)),
    np.tril: lambda m, k=0: xp.tril(_operand(m), k=k), np.triu: lambda m, k=0: xp.triu(_operand(m), k=k),
    np.count_nonzero: lambda a, axis=None, *, keepdims=False: xp.count_nonzero(_operand(a), axis=axis,
                                                                                 keepdims=keepdims),
    np.dot: _dot,
    np.tensordot: lambda a, b, axes=2: _linalg().tensordot(_operand(a), _operand(b), axes=axes),
    np.outer: lambda a, b, out=None: _write_out(out, _linalg().outer(xp.reshape(_operand(a), (-1,)),
                                                                     xp.reshape(_operand(b), (-1,)))),
    np.zeros_like: _like_fn("zeros_like", 0), np.ones_like: _like_fn("ones_like", 1),
    np.empty_like: _like_fn("empty_like", None), np.full_like: _full_like,
    np.copy: _copy, np.shape: lambda a: _operand(a).shape, np.ndim: lambda a: _operand(a).ndim, np.size: _size,
    np.allclose: _allclose, np.array_equal: _array_equal,
    np.take_along_axis: lambda arr, indices, axis=-1: xp.take_along_axis(_operand(arr), _operand(indices), axis=axis),
    np.real: lambda val: xp.real(_operand(val)), np.imag: lambda val: xp.imag(_operand(val)),
    np.linalg.inv: lambda a: _linalg().inv(_operand(a)),
    np.linalg.det: lambda a: _linalg().det(_operand(a)),
    np.linalg.cholesky: lambda a, /, *, upper=False: _linalg().cholesky(_operand(a), upper=upper),
    np.linalg.solve: lambda a, b: _linalg().solve(_operand(a), _operand(b)),
    np.linalg.eigh: lambda a, UPLO="L": _linalg().eigh(_operand(a)),
    np.linalg.svd: lambda a, full_matrices=True, compute_uv=True, hermitian=False: (
        _linalg().svd(_operand(a), full_matrices=full_matrices) if compute_uv else _linalg().svdvals(_operand(a))),
    np.linalg.qr: lambda a, mode="reduced": _linalg().qr(_operand(a), mode=mode),
}


def _from_like(name):
    """NumPy's creation functions called with ``like=tensor``: strided's own."""
    def fn(*args, like=None, **kwargs):
        order = kwargs.pop("order", None)
        if order not in ("C", "K", "A", None):
            raise _not_implemented(name, f" with order={order!r}")
        if name in ("asarray", "asanyarray", "array"):
            obj, *rest = args
            dtype = rest[0] if rest else kwargs.pop("dtype", None)
            copy = kwargs.pop("copy", None if name != "array" else True)
            kwargs.pop("device", None), kwargs.pop("subok", None)
            if kwargs.pop("ndmin", 0):
                raise _not_implemented(name, " with ndmin=")
            if not isinstance(obj, (Tensor, np.ndarray)):  # NumPy's dtype for Python values (f64, not f32)
                obj = np.asarray(obj, dtype=dtype)
            return xp.asarray(obj, dtype=dtype, copy=copy)
        shape, *rest = args
        if name == "full":
            value, *rest = rest
            dtype = rest[0] if rest else kwargs.get("dtype")
            return xp.full(shape, value, dtype=np.asarray(value).dtype if dtype is None else dtype)
        dtype = rest[0] if rest else kwargs.get("dtype")
        # NumPy's default dtype here is f64 (np.zeros(3, like=t) must match np.zeros(3)).
        return {"empty": empty, "zeros": zeros, "ones": ones}[name](shape, dt.f64 if dtype is None else dtype)

    fn.__name__ = name
    return fn


def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO, where=_NO):
    _refuse("nansum", initial=initial, where=where)
    x = _operand(a)
    clean = xp.where(xp.isnan(x), xp.zeros((), x.dtype), x) if x.dtype.is_float else x
    return _write_out(out, xp.sum(clean, axis=axis, dtype=dtype, keepdims=keepdims))


def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO):
    _refuse("nanmean", where=where)
    x = _float_for_stats(_operand(a))
    total = _nansum(x, axis=axis, dtype=dtype, keepdims=keepdims)
    count = xp.sum(xp.logical_not(xp.isnan(x)), axis=axis, keepdims=keepdims)
    # the count in the sum's dtype: NumPy's nanmean of f32 is f32 (an i64 count made it f64)
    return _write_out(out, xp.divide(total, xp.astype(count, total.dtype)))


def _sort_fn(name):
    def fn(a, axis=-1, kind=None, order=None, *, stable=None):
        # Every strided sort is stable, which any kind NumPy takes allows.
        if order is not None:
            raise _not_implemented(name, " with order=")
        x = _operand(a)
        if axis is None:
            x, axis = xp.reshape(x, (-1,)), 0
        return getattr(xp, name)(x, axis=axis)

    return fn


def _cumulative(name):
    def fn(a, axis=None, dtype=None, out=None):
        x = _operand(a)
        if axis is None:  # NumPy flattens
            x, axis = xp.reshape(x, (-1,)), 0
        return _write_out(out, getattr(xp, name)(x, axis=axis, dtype=dtype))

    return fn


def _nonzero(a):
    x = _operand(a)
    if x.ndim == 0:
        raise _not_implemented("nonzero", " of a rank-0 array (NumPy deprecates it)")
    return xp.nonzero(x)


def _searchsorted(a, v, side="left", sorter=None):
    return xp.searchsorted(_operand(a), _operand(v), side=side, sorter=None if sorter is None else _operand(sorter))


def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
            sorted=True):
    if axis is not None:
        raise _not_implemented("unique", " with axis=")
    x = _operand(ar)
    values, index, inverse, counts = unique(x, equal_nan=bool(equal_nan))
    extra = [r for r, want in ((index, return_index), (inverse, return_inverse), (counts, return_counts)) if want]
    return (values, *extra) if extra else values


FUNCTIONS.update({
    np.asarray: _from_like("asarray"), np.asanyarray: _from_like("asanyarray"), np.array: _from_like("array"),
    np.empty: _from_like("empty"), np.zeros: _from_like("zeros"), np.ones: _from_like("ones"),
    np.full: _from_like("full"), np.nansum: _nansum, np.nanmean: _nanmean,
    np.sort: _sort_fn("sort"), np.argsort: _sort_fn("argsort"), np.cumsum: _cumulative("cumulative_sum"),
    np.cumprod: _cumulative("cumulative_prod"), np.nonzero: _nonzero, np.searchsorted: _searchsorted,
    np.unique: _unique,
    np.cumulative_sum: lambda x, /, *, axis=None, dtype=None, out=None, include_initial=False: _write_out(
        out, xp.cumulative_sum(_operand(x), axis=axis, dtype=dtype, include_initial=include_initial)),
    np.cumulative_prod: lambda x, /, *, axis=None, dtype=None, out=None, include_initial=False: _write_out(
        out, xp.cumulative_prod(_operand(x), axis=axis, dtype=dtype, include_initial=include_initial)),
})


def implemented() -> list[str]:
    """The NumPy functions ``__array_function__`` computes with strided (for docs and tests)."""
    return sorted(f"{getattr(f, '__module__', 'numpy')}.{f.__name__}" for f in FUNCTIONS)


def _native_or_numpy(op: tuple, native, native_args, native_kwargs, numpy_fn, args, kwargs):
    """strided's kernel where it has one; NumPy on views where it has none: no translation
    (``native`` None), arguments outside the translation's (a TypeError, or any other error
    that is not a StridedError: NumPy then answers or raises for them), or a dtype outside
    the kernel's (a DTypeError; should NumPy refuse it too, the kernel's error stands).  Any
    other StridedError is the kernel's answer to bad input and stands."""
    kernel_error = None
    if native is not None:
        try:
            return native(*native_args, **native_kwargs)
        except DTypeError as e:
            kernel_error = e
        except StridedError:
            raise
        except Exception:  # e.g. a keyword the translation lacks: NumPy's call
            pass
    try:
        return numpy_fallback.run(_name(*op), numpy_fn, args, kwargs)
    except StridedError:
        if kernel_error is not None:
            raise kernel_error from None
        raise


def _name(func, method="__call__") -> str:
    """``numpy.median``, ``numpy.linalg.norm``, ``numpy.add.outer``: what errors name."""
    name = f"{getattr(func, '__module__', None) or 'numpy'}.{getattr(func, '__name__', func)}"
    return name if method == "__call__" else f"{name}.{method}"


def array_function(self, func, types, args, kwargs):
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented  # another array type: let it (or NumPy) decide
    return _native_or_numpy((func,), FUNCTIONS.get(func), args, kwargs, getattr(func, "_implementation", func), args,
                            kwargs)


Tensor.__array_ufunc__ = array_ufunc
# Above ndarray's 0 (a tensor among arrays decides the result type where priority is asked,
# as in Dask's choice of a chunk type), below Dask's own 11.
Tensor.__array_priority__ = 1.0
Tensor.__array_function__ = array_function
