"""NumPy itself on a tensor's memory: the NumPy functions and ufunc methods strided has no
kernel for (``strided.numpy_api`` calls this only after its own kernels declined).

``run(op, fn, args, kwargs)`` replaces every CPU tensor among the arguments (nested in
lists and tuples too, ``out=`` included) by the zero-copy ndarray view ``t.numpy()``,
calls NumPy, and gives the answer back:

* an ndarray that is one of those views (``out=``, or an input NumPy returned as is) is
  the tensor it viewed;
* an ndarray inside the buffer of an input tensor, of its dtype, is a view of that same
  Storage (``same_buffer`` holds, writes go through); any other ndarray of a strided dtype
  is a tensor over its memory (``from_numpy``, no copy); an ndarray of a dtype strided does
  not hold (object, str, datetime, longdouble) stays an ndarray;
* a NumPy scalar of a strided dtype is a rank-0 tensor, as strided's own reductions give;
  tuples, lists and named tuples are rebuilt around their converted items; anything else
  (bools, ints, dtypes, strings) is returned as NumPy gave it.

Writes: NumPy gets a read-only view of a tensor whose elements share memory (a broadcast,
an overlapping window view), so a NumPy function that would write through it fails as
strided's own writes do; ``out=`` such a tensor is refused up front.  NumPy's read-only
flag on the views it returns (``sliding_window_view``) is not kept: strided's overlap
rules guard those writes instead.

Errors: an exception NumPy raises is re-raised as a StridedError whose message starts with
``numpy.<name>:``; its class also derives from NumPy's exception class where callers catch
that class (TypeError, IndexError, ``numpy.exceptions.AxisError``,
``numpy.linalg.LinAlgError``, FloatingPointError), so ``except ValueError`` in SciPy or
pandas code keeps working; warnings (NumPy's or a filter's) pass unchanged.

Refused: a tensor on a device (NumPy reads host memory only: no silent transfer) and a tensor
autograd tracks (NumPy's answer would have no gradient).  ``REFUSED`` lists the functions that
do not give NumPy's answer for a tensor, each with its reason.
"""

from __future__ import annotations

import numpy as np

from ..core import dtype as dt
from ..creation import from_numpy
from ..core.errors import DTypeError, StridedError, StridedIndexError, TooHardError
from ..layout import Layout
from ..layout.analysis import is_non_overlapping
from ..tensor import Tensor

__all__ = ["run", "REFUSED", "NumPyTypeError", "NumPyAxisError", "NumPyLinAlgError", "NumPyFloatingPointError"]


# What does not give NumPy's answer for a tensor, and why (the scan's test calls each one and
# prints the table).  Every function NumPy dispatches runs, natively or here; the two below are
# functions NumPy never hands to ``__array_function__``, so strided cannot answer for them.
REFUSED = {
    "numpy.frombuffer": "its buffer argument needs the Python buffer protocol, which a pure-Python class "
                        "cannot export before Python 3.12 (PEP 688), and NumPy does not dispatch the call; "
                        "np.frombuffer(np.asarray(t)) or t.numpy() (zero-copy) instead",
    "numpy.isfortran": "NumPy does not dispatch it and reads ndarray.flags, which a Tensor does not have; "
                       "np.isfortran(np.asarray(t)) instead",
}


class NumPyTypeError(StridedError, TypeError):
    """NumPy's TypeError inside a fallback (also a StridedError)."""


class NumPyAxisError(StridedError, np.exceptions.AxisError):
    """NumPy's AxisError inside a fallback (also a StridedError, a ValueError and an IndexError)."""

    def __init__(self, message):  # AxisError's own takes (axis, ndim, prefix)
        BaseException.__init__(self, message)

    __str__ = BaseException.__str__


class NumPyLinAlgError(StridedError, np.linalg.LinAlgError):
    """NumPy's LinAlgError inside a fallback (a singular matrix, no convergence)."""


class NumPyFloatingPointError(StridedError, FloatingPointError):
    """A FloatingPointError NumPy raised under ``np.errstate(...='raise')``."""


# NumPy's exception class -> ours; the first of an exception's MRO found here wins.
_ERRORS = {np.exceptions.AxisError: NumPyAxisError, np.linalg.LinAlgError: NumPyLinAlgError,
           TypeError: NumPyTypeError, IndexError: StridedIndexError, FloatingPointError: NumPyFloatingPointError}


class _Call:
    """The views made for one call: which tensor each one shows."""

    __slots__ = ("op", "views", "tensors", "outs", "readonly")

    def __init__(self, op):
        self.op = op
        self.views = {}  # id(view) -> (view, tensor)
        self.tensors = []
        self.outs = []  # ndarrays passed as out=: returned as they are, as NumPy does
        self.readonly = False

    def view(self, t: Tensor, out: bool = False) -> np.ndarray:
        if t.device != "cpu":
            raise StridedError(f"{self.op}: NumPy computes this on host memory, but a tensor is on "
                               f"{t.device}; move it with t.to_device('cpu') (no silent transfer)")
        if t.track_op():
            raise StridedError(f"{self.op}: strided has no kernel for it and NumPy's answer would have no "
                               "gradient; call it on t.detach()")
        v = t.numpy()
        if not _non_overlapping(t.layout):
            if out:
                raise StridedError(f"{self.op}: the out= view {t.layout} has elements sharing memory; "
                                   "writing through it would be ambiguous")
            v.flags.writeable = False  # NumPy writing through it fails, as strided's writes do
            self.readonly = True
        self.views[id(v)] = (v, t)
        self.tensors.append(t)
        return v

    def args(self, x):
        if isinstance(x, Tensor):
            return self.view(x)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            items = [self.args(i) for i in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return items if isinstance(x, list) else tuple(items)
        return x

    def outputs(self, out):
        items = out if isinstance(out, tuple) else (out,)
        conv = tuple(self.view(o, out=True) if isinstance(o, Tensor) else o for o in items)
        self.outs += [o for o in items if isinstance(o, np.ndarray)]
        return conv if isinstance(out, tuple) else conv[0]

    def back(self, r):
        if isinstance(r, np.ndarray):
            hit = self.views.get(id(r))
            if hit is not None and hit[0] is r:
                return hit[1]
            if type(r) is not np.ndarray or any(r is o for o in self.outs):
                return r
            return self.tensor(r)
        if isinstance(r, np.generic):
            return self.tensor(np.asarray(r)) if _holds(r.dtype) else r
        if isinstance(r, tuple):
            items = [self.back(i) for i in r]
            return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
        if isinstance(r, list):
            return [self.back(i) for i in r]
        return r

    def tensor(self, r: np.ndarray):
        if not _holds(r.dtype):
            return r
        if r.size:
            item = r.itemsize
            addr = r.__array_interface__["data"][0]
            low = addr + sum((n - 1) * s for n, s in zip(r.shape, r.strides) if s < 0)
            high = addr + sum((n - 1) * s for n, s in zip(r.shape, r.strides) if s > 0) + item
            for t in self.tensors:
                data = t.storage.data
                base = data.__array_interface__["data"][0]
                if (data.dtype == r.dtype and base <= low and high <= base + data.nbytes
                        and (addr - base) % item == 0 and all(s % item == 0 for s in r.strides)):
                    lay = Layout(r.shape, tuple(s // item for s in r.strides), (addr - base) // item)
                    return Tensor(t.storage, lay, t.dtype)
        return from_numpy(r)

    def error(self, e: Exception) -> StridedError:
        cls = next((_ERRORS[k] for k in type(e).__mro__ if k in _ERRORS), StridedError)
        note = (" (a tensor argument has elements sharing memory, so NumPy was given it read-only)"
                if self.readonly and "read-only" in str(e) else "")
        return cls(f"{self.op}: {e}{note}")


def _holds(d: np.dtype) -> bool:
    if not d.isnative:
        return False
    try:
        dt.as_dtype(d)
    except DTypeError:
        return False
    return True


def _non_overlapping(lay: Layout) -> bool:
    try:
        return is_non_overlapping(lay)
    except TooHardError:
        return False  # unsure: read-only is the safe side


def run(op: str, fn, args, kwargs, out_key: str = "out"):
    """``fn(*args, **kwargs)`` computed by NumPy on views of the tensors among them."""
    call = _Call(op)
    np_args = [call.args(a) for a in args]
    np_kwargs = {k: (call.outputs(v) if k == out_key and v is not None else call.args(v)) for k, v in kwargs.items()}
    try:
        r = fn(*np_args, **np_kwargs)
    except (StridedError, Warning):
        raise
    except Exception as e:
        raise call.error(e) from None
    return call.back(r)
