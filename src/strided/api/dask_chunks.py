"""strided Tensors as Dask chunks (the optional extra ``strided[dask]``).

``dask.array.from_array(t, chunks=...)``, ``map_blocks``, ``blockwise`` and Dask's
reductions keep strided tensors as chunks: Dask slices a tensor into views, calls
NumPy's functions and ufuncs on them (``strided.numpy_api`` answers with strided's
own results) and joins them with ``np.concatenate``.  ``register()`` tells Dask the
rest: Tensor is a chunk type (so ``dask_array + tensor`` stays a Dask array), and
its lookups (concatenate, tensordot, empty, numel, divide, take) name strided's functions.

Dask is not imported by ``import strided``.  ``register()`` runs the first time Dask
tokenizes a tensor (``Tensor.__dask_tokenize__``, which every ``from_array`` calls), or
when ``strided`` is imported after ``dask.array``; calling it again does nothing.
Tokens are the buffer's identity and the view's layout, so two views of one buffer
that differ in layout are different Dask inputs and a view is never hashed by value.
"""

from __future__ import annotations

import importlib
import threading

import numpy as np

from . import array_api as xp
from ..core import dtype as dt
from ..creation import empty
from ..tensor import Tensor

__all__ = ["register", "registered", "tokenize"]

_lock = threading.Lock()
_done = []


def registered() -> bool:
    return bool(_done)


def register() -> bool:
    """Register Tensor with Dask (once).  False when Dask is not installed."""
    if _done:
        return True
    try:
        chunk_types = importlib.import_module("dask.array.chunk_types")
        dispatch = importlib.import_module("dask.array.dispatch")
    except ImportError:
        return False
    with _lock:
        if _done:
            return True
        chunk_types.register_chunk_type(Tensor)
        dispatch.concatenate_lookup.register(Tensor)(_concatenate)
        dispatch.tensordot_lookup.register(Tensor)(_tensordot)
        dispatch.empty_lookup.register(Tensor)(_empty)
        dispatch.numel_lookup.register(Tensor)(_numel)
        dispatch.nannumel_lookup.register(Tensor)(_nannumel)
        dispatch.divide_lookup.register(Tensor)(_divide)
        dispatch.take_lookup.register(Tensor)(_take)
        _done.append(True)
    return True


def tokenize(t: Tensor):
    """What Dask hashes for a tensor: its buffer's identity (address, size) and its layout."""
    register()
    data = t._storage.data
    lay = t.layout
    return ("strided.Tensor", data.__array_interface__["data"][0], data.nbytes, t.dtype.name, lay.shape,
            lay.stride, lay.offset)


def _concatenate(arrays, axis=0):
    return xp.concat([xp.asarray(a) for a in arrays], axis=axis)


def _tensordot(a, b, axes=2):
    return importlib.import_module("strided.api.linalg_api").tensordot(xp.asarray(a), xp.asarray(b), axes=axes)


def _empty(shape, dtype=None, **kwargs):
    return empty(shape, dt.f64 if dtype is None else dtype)


def _numel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """How many elements each reduction of ``x`` over ``axis`` sees (Dask's mean and var need it)."""
    shape = x.shape
    axes = axis if isinstance(axis, tuple) else (axis,)
    dims = range(len(shape)) if axis is None else [a % len(shape) for a in axes]
    n = 1
    for d in dims:
        n *= shape[d]
    want = dt.f64 if dtype is None else dtype
    if keepdims:
        out_shape = tuple(1 if d in dims else s for d, s in enumerate(shape))
    else:
        out_shape = tuple(s for d, s in enumerate(shape) if d not in dims)
    return xp.full(out_shape, n, dtype=want)


def _nannumel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    return xp.sum(xp.logical_not(xp.isnan(xp.asarray(x))), axis=axis, keepdims=keepdims,
                  dtype=dt.f64 if dtype is None else dtype)


def _divide(a, b, dtype=None):
    out = xp.divide(a if not isinstance(a, np.ndarray) else xp.asarray(a),
                    b if not isinstance(b, np.ndarray) else xp.asarray(b))
    return out if dtype is None else xp.astype(out, dt.as_dtype(dtype), copy=False)


def _take(a, indices, axis=0):
    return np.take(xp.asarray(a), indices, axis=axis)


def _dask_tokenize(self):
    return tokenize(self)


Tensor.__dask_tokenize__ = _dask_tokenize
