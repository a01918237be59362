"""Constructors: new tensors from shapes, values, ranges, random numbers and NumPy arrays.

Each allocates through ``storage.alloc`` (or wraps memory it is given) and
returns a dense tensor; ``from_numpy`` shares the array's memory whatever its
strides.
"""

from __future__ import annotations

import numbers
import operator
import reprlib
from math import ceil, isfinite, prod

import numpy as np

from .core import dtype as dt
from .core.dtype import DType
from .core.errors import DTypeError, ShapeError, StridedError
from .layout import Layout
from .backend import alloc_on, kernels_for
from .devices import canonical, load as load_backend, to_device
from .layout.layout import as_int_tuple as int_tuple, contiguous_strides
from .core.storage import alloc, check_size, wrap
from .tensor import Tensor, as_strided, same_buffer

__all__ = [
    "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "arange", "manual_seed",
    "rand", "randn",
    "tensor", "from_numpy", "as_strided", "same_buffer", "as_tensor_like", "rebuild", "rebuild_view",
    "pickled_parts", "expect_tensor", "int_arg", "check_device", "placed", "host_array",
]


def empty(shape, dtype=None, *, device=None) -> Tensor:
    return _empty("empty", shape, float_dtype(dtype), device)


def _empty(op: str, shape, dtype: DType, device) -> Tensor:
    device = check_device(op, device)
    shape = shape_arg(op, shape)
    lay = Layout.contiguous(shape)
    if device == "cpu":
        return Tensor(alloc(lay.numel, dtype.np), lay, dtype)
    load_backend(op, device)  # loads the backend, and refuses a device it does not see
    return Tensor(alloc_on(device, lay.numel, dtype.np, op), lay, dtype)


def _fill(op: str, t: Tensor, value) -> Tensor:
    """Every element of the fresh dense ``t`` set to ``value`` (a Python or NumPy scalar of
    its dtype): in place on the CPU; on a device one broadcast copy from a 1-element
    buffer moved there, so nothing of the size of ``t`` crosses to the device."""
    one = dt.scalar_array(op, value, t.dtype)
    if t.device == "cpu":
        t._storage.data.fill(one[0])
    elif t.numel:
        src = to_device(Tensor(wrap(one), Layout((1,)), t.dtype), t.device, op)
        kernels_for(t.device).copy.copy_into(t._storage.data, t.layout, src._storage.data,
                                             Layout(t.shape, (0,) * t.ndim))
    return t


def zeros(shape, dtype=None, *, device=None) -> Tensor:
    return _fill("zeros", _empty("zeros", shape, float_dtype(dtype), device), 0)


def ones(shape, dtype=None, *, device=None) -> Tensor:
    return full(shape, 1, float_dtype(dtype), device=device)


def full(shape, fill_value, dtype=None, *, device=None) -> Tensor:
    # ``fill_value`` is the standard's name: namespace-generic code passes it by keyword
    dtype = dt.as_dtype(dtype) if dtype is not None else _default_scalar_dtype(fill_value)
    return _fill("full", _empty("full", shape, dtype, device), fill_value)


def expect_tensor(op: str, t) -> Tensor:
    """``t`` when it is a Tensor, else a StridedError naming ``op`` and what it got."""
    if not isinstance(t, Tensor) and getattr(type(t), "__strided_trace__", None) is None:
        raise StridedError(f"{op}: expected a strided.Tensor, got {type(t).__name__}")
    return t  # a Tensor, or a value strided.fuse traces (the op it meets records itself)


def empty_like(t: Tensor, /, dtype=None, *, device=None) -> Tensor:
    t = expect_tensor("empty_like", t)
    return empty(t.shape, t.dtype if dtype is None else dtype, device=t.device if device is None else device)


def zeros_like(t: Tensor, /, dtype=None, *, device=None) -> Tensor:
    t = expect_tensor("zeros_like", t)
    return zeros(t.shape, t.dtype if dtype is None else dtype, device=t.device if device is None else device)


def ones_like(t: Tensor, /, dtype=None, *, device=None) -> Tensor:
    t = expect_tensor("ones_like", t)
    return ones(t.shape, t.dtype if dtype is None else dtype, device=t.device if device is None else device)


def full_like(t: Tensor, /, fill_value, *, dtype=None, device=None) -> Tensor:
    t = expect_tensor("full_like", t)
    return full(t.shape, fill_value, t.dtype if dtype is None else dtype, device=t.device if device is None else device)


def arange(start, stop=None, step=1, dtype=None, *, device=None) -> Tensor:
    return placed("arange", _arange(start, stop, step, dtype), check_device("arange", device))


def _arange(start, stop, step, dtype) -> Tensor:
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, numbers.Real) or not (isinstance(v, numbers.Integral) or isfinite(v)):
            raise StridedError(
                f"arange: expected finite real numbers, got start={start!r}, stop={stop!r}, step={step!r}")
    if step == 0:
        raise ShapeError("arange: step must be nonzero")
    ints = all(isinstance(v, numbers.Integral) for v in (start, stop, step))
    dtype = dt.as_dtype(dtype) if dtype is not None else (dt.i64 if ints else dt.f32)
    try:
        count = -((start - stop) // step) if ints else ceil((stop - start) / step)
    except OverflowError:  # the quotient is beyond any float
        raise StridedError(f"arange: [{start}, {stop}) by {step} holds more elements than any buffer") from None
    if count <= 0:
        return empty((0,), dtype)  # NumPy refuses some of these (a huge span the wrong way)
    check_size("arange", count, dtype.np)
    data = np.arange(start, stop, step, dtype=dtype.compute.np if dtype.is_float else dtype.np)
    return from_numpy(data.astype(dtype.np, copy=False))


_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator behind rand/randn."""
    global _rng
    _rng = np.random.default_rng(seed)


def rand(*shape, dtype=None, generator=None, device=None) -> Tensor:
    """Uniform in [0, 1), drawn on the host by the seedable generator (so a seed gives the
    same numbers on every device) and moved to ``device``."""
    device = check_device("rand", device)
    shape = shape_arg("rand", shape[0] if len(shape) == 1 else shape)
    check_size("rand", prod(shape), np.float64)
    g = generator if generator is not None else _rng
    return placed("rand", from_numpy(g.random(shape, dtype=np.float64).astype(float_dtype(dtype).np)), device)


def randn(*shape, dtype=None, generator=None, device=None) -> Tensor:
    device = check_device("randn", device)
    shape = shape_arg("randn", shape[0] if len(shape) == 1 else shape)
    check_size("randn", prod(shape), np.float64)
    g = generator if generator is not None else _rng
    return placed("randn", from_numpy(g.standard_normal(shape).astype(float_dtype(dtype).np)), device)


def float_dtype(dtype) -> DType:
    """The dtype asked for; None (left out or passed explicitly, the same thing) is f32, the default float."""
    return dt.DEFAULT_FLOAT if dtype is None else dt.as_dtype(dtype)


def check_device(op: str, device) -> str:
    """Creation takes ``device=``: None (the CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:N"``,
    returned as strided names it (``"cpu"``, ``"cuda:N"``); anything else is refused by
    name rather than ignored.  Whether a CUDA device is there is asked when it is used."""
    return canonical(op, device)


def placed(op: str, t: Tensor, device: str) -> Tensor:
    """``t`` (made on the host) on ``device``: itself for the CPU, else its elements moved."""
    return t if device == "cpu" else to_device(t, device, op)


def int_arg(op: str, what: str, value) -> int:
    """One integer argument (``k``, ``n``, ``offset``, ...): not a sequence, not a bool."""
    if type(value) is int:  # the common case, answered first: a call is a fair share of a small op
        return value
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise StridedError(f"{op}: expected an integer {what}, got {value!r}")


def shape_arg(op: str, shape) -> tuple[int, ...]:
    shape = int_tuple(op, "shape", shape)
    if any(n < 0 for n in shape):
        raise ShapeError(f"{op}: sizes must be >= 0, got shape {shape}")
    return shape


def _default_scalar_dtype(value) -> DType:
    if isinstance(value, (bool, np.bool_)):
        return dt.bool_
    if isinstance(value, (int, np.integer)):
        return dt.i64
    if isinstance(value, (complex, np.complexfloating)):
        return dt.DEFAULT_COMPLEX
    return dt.f32


def tensor(data, dtype=None, *, device=None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors).

    Python floats become f32 and ints i64 (PyTorch's defaults), Python complex numbers c64 (the
    complex of the default float); numpy arrays keep their dtype.
    ``device`` None keeps a tensor's own device (the CPU for everything else).
    """
    if isinstance(data, Tensor):
        out = data.copy()
        out = out if dtype is None else out.to_dtype(dtype)
        return out if device is None else placed("tensor", out, check_device("tensor", device))
    if device is not None and check_device("tensor", device) != "cpu":
        return placed("tensor", tensor(data, dtype), check_device("tensor", device))
    return from_numpy(host_array("tensor", data, None if dtype is None else dt.as_dtype(dtype)))


def host_array(op: str, data, want: DType | None) -> np.ndarray:
    """A fresh C-ordered NumPy array of ``data`` (nested lists, scalars, arrays) in ``want``,
    or in strided's defaults when None.

    A Python int that an integer ``want`` cannot hold raises a StridedError naming ``op``,
    the value and the dtype (NumPy 2's rule), rather than wrapping; so does one beyond
    64 bits with no dtype asked for.
    """
    try:
        if isinstance(data, np.ndarray):
            arr = np.array(data, copy=True)
        elif want is not None and want.kind in "iu":
            arr = np.array(data, dtype=want.np)  # NumPy 2 checks each Python int's range here
        else:
            arr = np.array(data)
            # Python floats default to f32 only when no dtype is asked for: with f64 asked
            # for, a detour through f32 would round 0.1 and turn 1e300 into inf.
            if want is None and arr.dtype == np.float64 and not _has_numpy(data, np.float64):
                arr = arr.astype(np.float32)
            elif want is None and arr.dtype == np.complex128 and not _has_numpy(data, np.complex128):
                arr = arr.astype(dt.DEFAULT_COMPLEX.np)
            elif want is None and arr.dtype == object and _has_int(data):
                raise OverflowError("an integer beyond int64 and uint64, which no strided dtype holds")
        if want is not None:
            arr = arr.astype(want.np)
    except (TypeError, ValueError, OverflowError) as e:  # ragged lists, strings, ints out of range
        raise StridedError(f"{op}: cannot make a tensor{'' if want is None else ' of ' + str(want)} "
                           f"from {reprlib.repr(data)}: {e}") from None
    return np.asarray(arr, order="C")  # ascontiguousarray would turn 0-d into 1-d


def _has_int(data) -> bool:
    if isinstance(data, int) and not isinstance(data, bool):
        return True
    return isinstance(data, (list, tuple)) and any(_has_int(x) for x in data)


def _has_numpy(data, scalar_type) -> bool:
    """Whether ``data`` (nested lists and tuples too) holds a NumPy scalar or array of ``scalar_type``."""
    if isinstance(data, scalar_type) or (isinstance(data, np.ndarray) and data.dtype == scalar_type):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_numpy(x, scalar_type) for x in data)
    return False


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor over ``a``'s memory (no copy), whatever its strides, negative included."""
    if not isinstance(a, np.ndarray):
        raise StridedError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    dtype = dt.as_dtype(a.dtype)
    if not a.dtype.isnative:
        raise DTypeError(f"from_numpy: byte-swapped arrays are not supported (dtype {a.dtype})")
    item = a.itemsize
    if any(s % item for s in a.strides):
        raise StridedError(
            f"from_numpy: byte strides {a.strides} are not multiples of the itemsize {item}"
        )
    strides = tuple(s // item for s in a.strides)
    if a.size == 0:
        return Tensor(wrap(np.empty(0, a.dtype)), Layout(a.shape, contiguous_strides(a.shape)), dtype)
    # Walk negative-stride dims backwards to reach the lowest address the array touches.
    # (the trailing ... keeps a 0-d result a view)
    low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides) + (Ellipsis,)]
    low_strides = [abs(s) for s in strides]
    span = 1 + sum((n - 1) * s for n, s in zip(a.shape, low_strides))
    flat = np.lib.stride_tricks.as_strided(low, shape=(span,), strides=(item,), writeable=a.flags.writeable)
    offset = sum((n - 1) * -s for n, s in zip(a.shape, strides) if s < 0)
    dense = Layout.contiguous(a.shape)  # the shared one per shape
    lay = dense if strides == dense.stride and not offset else Layout(a.shape, strides, offset)
    return Tensor(wrap(flat), lay, dtype)


def as_tensor_like(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    return tensor(value, dtype=dt.promote_scalar(like.dtype, value) if np.isscalar(value) else None)


def rebuild(arr: np.ndarray, dtype_name: str) -> Tensor:
    """A tensor from a compact copy (what pickles made before views kept their layout)."""
    t = from_numpy(np.array(arr, copy=True))
    return t if t.dtype.name == dtype_name else t.to_dtype(dtype_name)


def rebuild_view(buf: np.ndarray, shape, stride, offset: int, dtype_name: str) -> Tensor:
    """A pickled tensor: its reach of the buffer (a 1-D array) and its layout over it, validated
    against the buffer like any ``as_strided``.  A buffer that arrived out of band (pickle
    protocol 5) is shared as it is, read-only when its producer gave it read-only, as NumPy's
    own arrays come back."""
    if not isinstance(buf, np.ndarray) or buf.ndim != 1:
        raise StridedError(f"rebuild_view: expected a 1-D buffer, got {type(buf).__name__}")
    dtype = dt.as_dtype(dtype_name)
    if dtype is dt.bf16 and buf.dtype == np.uint16:
        buf = buf.view(dtype.np)  # bf16 travels as its bits (see _reduce)
    if buf.dtype != dtype.np:
        raise DTypeError(f"rebuild_view: the buffer holds {buf.dtype}, the layout is for {dtype}")
    return as_strided(from_numpy(buf), shape, stride, offset)


def pickled_parts(t: Tensor) -> tuple:
    """(buffer, shape, stride, offset): the smaller of the view's reach of its buffer (with its
    own strides: a broadcast keeps its stride-0 dims, a window view its overlap) and a compact
    copy of its elements (a sparse view such as ``x[::100]`` does not carry the gaps)."""
    lay = t.layout
    if lay.numel == 0:
        return np.empty(0, t.dtype.np), lay.shape, contiguous_strides(lay.shape), 0
    lo, hi = lay.span()
    if hi - lo <= lay.numel:
        return t._storage.data[lo:hi], lay.shape, lay.stride, lay.offset - lo
    return np.ascontiguousarray(t.numpy()).reshape(-1), lay.shape, contiguous_strides(lay.shape), 0


def _reduce(self):
    # A view pickles its reach and its layout, never the rest of the buffer, nor an expanded
    # copy of a broadcast.  The buffer is a NumPy array, which pickles out of band under
    # protocol 5 when the pickler takes a buffer_callback.
    buf, shape, stride, offset = pickled_parts(self)
    if self.dtype is dt.bf16:
        # NumPy sends ml_dtypes' bf16 arrays in band whatever the protocol; their bits go out of band.
        buf = buf.view(np.uint16)
    return (rebuild_view, (buf, shape, stride, offset, self.dtype.name))


def _deepcopy(self, memo):
    buf, shape, stride, offset = pickled_parts(self)
    return rebuild_view(buf.copy(), shape, stride, offset, self.dtype.name)


Tensor.__reduce__ = _reduce
Tensor.__deepcopy__ = _deepcopy
