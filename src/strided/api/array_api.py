"""strided as an Array API 2024.12 namespace: the standard's functions, built on the op layer.

Every function here is a view, a composition of ops declared in ``strided.ops``
(no kernel of its own), or, for LAPACK, a copy through NumPy (``linalg_api``).
The package re-exports them, so ``strided.concat`` or ``x.__array_namespace__().sum``
is what this module defines.  What the standard names but strided has no kernel for
yet is absent rather than emulated: ``hasattr(strided, name)`` tells the truth.

Promotion is the op layer's (``dtype.promote``: the standard's table for the dtypes
strided holds, NumPy 2's rules where the standard leaves a pair open, such as an
integer with a float).  Python scalars combine with tensors as the standard says: they
take the tensor's dtype, only widening its kind.

Complex.  ``complex64`` and ``complex128`` take the arithmetic, exp/log/sqrt, the
trigonometric and hyperbolic functions and their inverses, ``==``/``!=``, ``abs``
(real, of the part's precision), ``sign`` (z/|z|), ``sum``/``prod``/``mean``;
``real``/``imag`` are copies of the pairs' parts.  Ordering (``<``, ``maximum``,
``max``, ``argmax``, ...), rounding, ``floor_divide``, ``remainder`` and ``atan2``
raise a StridedError naming the op and the dtype, and ``astype`` to a real dtype is
refused (the standard leaves it out; NumPy drops the imaginary part with a warning).
A Python complex becomes ``complex64``, the complex of the default float ``float32``,
as a Python float becomes ``float32``.
"""

from __future__ import annotations

import builtins  # this module defines sum, max, min, all, any, abs and pow itself
import math
import numbers

import ml_dtypes
import numpy as np

from .. import devices
from ..core import dtype as dt
from ..creation import (
    check_device, expect_tensor, float_dtype, from_numpy, host_array, int_arg, ones, placed, shape_arg, tensor,
    zeros,
)
# the standard's *_like functions, exported by the __all__ that the end of this module builds from globals()
from ..creation import empty_like, full_like, ones_like, zeros_like  # noqa: F401
from ..creation import full  # noqa: F401  (the namespace's full: numpy_api and dask_chunks call xp.full)
from ..core.dtype import DType
from ..core.storage import check_size
from ..core.errors import DTypeError, ShapeError, StridedError
from ..interop import from_cuda_array_interface, from_dlpack
from ..layout.layout import as_int_tuple, broadcast_shapes as broadcast_shapes_of, norm_dim
from ..kernels.optable import on_new_op
from ..ops import binary, cat, copy as copy_tensor, index_select, reduce, to_dtype, unary, where
from ..ops.elementwise import complex_part
from ..tensor import Tensor, as_strided
# the namespace's functions written in their own modules, one job each, exported from here
from .indexing import gather_index, take, take_along_axis  # noqa: F401
from .sorting import (  # noqa: F401
    UniqueAllResult, UniqueCountsResult, UniqueInverseResult, argsort, cumulative_prod, cumulative_sum, nonzero,
    searchsorted, sort, unique_all, unique_counts, unique_inverse, unique_values,
)
from .statistics import (  # noqa: F401
    all, any, argmax, argmin, axes_arg as _axes, count_nonzero, diff, max, mean, min, prod, std, sum, var,
)

__array_api_version__ = "2024.12"

# constants
e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

DEVICE = "cpu"


# ---------------------------------------------------------------------------
# data type functions


def _dtype_value(op: str, d):
    """A strided dtype, or the NumPy dtype a NumPy dtype or scalar type (``np.dtype("f8")``,
    ``np.float32``) names, as a strided dtype where strided holds it; anything else (a name, a
    Python type) is refused, as NumPy's ``isdtype`` refuses it."""
    if isinstance(d, DType):
        return d
    npd = dt.numpy_dtype(d)
    if npd is None:
        raise DTypeError(f"{op}: expected a strided or NumPy dtype, got {d!r}")
    try:
        return dt.as_dtype(npd)
    except DTypeError:
        return npd  # one strided does not hold (a string, float128): its kind still answers


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` (strided's or NumPy's) is of ``kind``: a dtype, one of the standard's
    kind names, or a tuple of them."""
    dtype = _dtype_value("isdtype", dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType) or dt.numpy_dtype(kind) is not None:
        return dtype == _dtype_value("isdtype", kind)
    if not isinstance(kind, str):
        raise DTypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of them, got {kind!r}")
    tests = {
        "bool": dtype.kind == "b",
        "signed integer": dtype.kind == "i",
        "unsigned integer": dtype.kind == "u",
        "integral": dtype.kind in "iu",
        "real floating": dtype.kind == "f",
        "complex floating": dtype.kind == "c",
        "numeric": dtype.kind in "iufc",
    }
    if kind not in tests:
        raise DTypeError(f"isdtype: unknown kind {kind!r} (expected a dtype, one of {', '.join(tests)}, or a tuple)")
    return tests[kind]


def result_type(*arrays_and_dtypes):
    """The dtype an elementwise op gives these operands (tensors, dtypes and Python scalars).

    Python scalars only widen the kind of the tensors' dtype (NEP 50), as they do in the
    operators; at least one tensor or dtype is required."""
    if not arrays_and_dtypes:
        raise DTypeError("result_type: expected at least one tensor or dtype")
    typed, scalars = [], []
    for x in arrays_and_dtypes:
        if isinstance(x, Tensor):
            typed.append(x.dtype)
        elif isinstance(x, DType):
            typed.append(x)
        elif isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
            scalars.append(x)
        else:
            typed.append(dt.as_dtype(x))
    if not typed:
        raise DTypeError(f"result_type: expected at least one tensor or dtype, got only scalars {scalars!r}")
    out = typed[0]
    for d in typed[1:]:
        out = dt.promote(out, d)
    for s in scalars:
        out = dt.promote_scalar(out, s)
    return out


def can_cast(from_, to, /) -> bool:
    """Whether promotion of ``from_`` with ``to`` gives ``to`` (the standard's casting rule)."""
    src = from_.dtype if isinstance(from_, Tensor) else dt.as_dtype(from_)
    dst = dt.as_dtype(to)
    if src is dst:
        return True
    if src.kind == "b" or dst.kind == "b":
        return False  # bool casts to nothing else, nothing else to bool
    if src.kind == "c" and dst.kind != "c":
        return False
    if src.kind == "f" and dst.kind not in "fc":
        return False
    if src.kind in "iu" and dst.kind in "fc":
        return False  # the standard does not cast across kinds
    return dt.promote(src, dst) is dst


class finfo_object:
    """Machine limits of a float dtype (the standard's ``finfo_object``); a complex dtype's
    are those of its real parts, and so is its ``dtype`` (as array_api_strict's)."""

    def __init__(self, d: DType):
        d = d.real
        info = ml_dtypes.finfo(d.np)  # NumPy's finfo does not know bf16
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = d

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


class iinfo_object:
    """Machine limits of an integer dtype (the standard's ``iinfo_object``)."""

    def __init__(self, d: DType):
        info = np.iinfo(d.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def _dtype_of(op: str, type_) -> DType:
    return type_.dtype if isinstance(type_, Tensor) else dt.as_dtype(type_)


def finfo(type_, /) -> finfo_object:
    d = _dtype_of("finfo", type_)
    if d.kind not in "fc":
        raise DTypeError(f"finfo: expected a floating-point dtype, got {d}")
    return finfo_object(d)


def iinfo(type_, /) -> iinfo_object:
    d = _dtype_of("iinfo", type_)
    if d.kind not in "iu":
        raise DTypeError(f"iinfo: expected an integer dtype, got {d}")
    return iinfo_object(d)


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """``x`` converted to ``dtype``; with ``copy=False`` the same tensor when nothing changes."""
    x = expect_tensor("astype", x)
    device = x.device if device is None else check_device("astype", device)
    want = dt.as_dtype(dtype)
    if x.dtype.is_complex and want.kind not in "cb":
        raise DTypeError(f"astype: cannot cast {x.dtype} to the real {want}: it would drop the imaginary part "
                         "(the standard leaves it out; take real(x) first)")
    if device != x.device:
        x = devices.to_device(x, device, "astype")  # a fresh buffer: nothing left to share
        return to_dtype(x, want)
    if want is x.dtype and not copy:
        return x
    return to_dtype(x, want) if want is not x.dtype else copy_tensor(x)


# ---------------------------------------------------------------------------
# creation


def _copy_flag(op: str, copy) -> bool | None:
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise StridedError(f"{op}: copy must be None, True or False, got {copy!r}")
    return None if copy is None else bool(copy)


def asarray(obj, /, *, dtype=None, device=None, copy=None) -> Tensor:
    """A tensor from a tensor, a NumPy array, anything with ``__dlpack__`` or the buffer
    protocol, a Python scalar or nested sequences.

    ``copy=None`` shares memory when it can; ``copy=True`` always copies; ``copy=False``
    never does and raises (a StridedError, so also a ValueError) when a copy is needed.

    ``device`` None keeps a tensor's (or a CUDA array's) own device and puts everything
    else on the CPU; another device is reached by a copy, refused under ``copy=False``.

    A Python int that ``dtype`` cannot hold (``asarray(-1, dtype=uint8)``, ``[300]`` as
    uint8) raises a StridedError naming asarray, the value and the dtype, as NumPy 2 raises,
    rather than wrapping around."""
    target = None if device is None else check_device("asarray", device)
    copy = _copy_flag("asarray", copy)
    out = _asarray(obj, dtype, copy)
    if target is None or out.device == target:
        return out
    if copy is False:
        raise StridedError(
            f"asarray: moving a tensor on {out.device} to {target} needs a copy, but copy=False was given")
    return devices.to_device(out, target, "asarray")


def _asarray(obj, dtype, copy) -> Tensor:
    want = None if dtype is None else dt.as_dtype(dtype)
    if isinstance(obj, Tensor):
        src = obj
    elif isinstance(obj, np.ndarray):
        src = from_numpy(obj) if obj.dtype.isnative and obj.dtype in _NP_KNOWN else None
        if src is None:
            if copy is False:
                raise StridedError(f"asarray: a NumPy array of dtype {obj.dtype} cannot be shared (copy=False)")
            return tensor(obj, dtype=want)
    elif hasattr(obj, "__cuda_array_interface__"):
        # CUDA memory (a PyTorch or CuPy tensor, a numba device array): shared, on the device
        src = from_cuda_array_interface(obj)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic):
        # PyTorch tensors and other DLPack producers: shared memory, or the producer's copy
        src = from_dlpack(obj, copy=copy)
        copy = None if copy else copy  # a copy asked for was made by the exchange
    elif isinstance(obj, (memoryview, bytes, bytearray)) or (
        not isinstance(obj, (list, tuple, numbers.Number, np.generic)) and _has_buffer(obj)
    ):
        src = from_numpy(np.asarray(obj)) if copy is not True else None
        if src is None:
            return tensor(np.array(obj), dtype=want)
    else:
        if copy is False:
            raise StridedError(f"asarray: a {type(obj).__name__} cannot become a tensor without a copy (copy=False)")
        return _from_python("asarray", obj, want)
    if want is not None and want is not src.dtype:
        if copy is False:
            raise StridedError(f"asarray: converting {src.dtype} to {want} needs a copy, but copy=False was given")
        return to_dtype(src, want)
    return copy_tensor(src) if copy else src


_NP_KNOWN = frozenset(d.np for d in dt.ALL)


def _has_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _from_python(op: str, obj, want):
    if isinstance(obj, (list, tuple)) and _holds_tensors(obj):
        parts = [asarray(o) for o in obj]
        return stack(parts) if want is None else astype(stack(parts), want)
    return from_numpy(host_array(op, obj, want))


def _holds_tensors(seq) -> bool:
    return builtins.any(isinstance(o, Tensor) or (isinstance(o, (list, tuple)) and _holds_tensors(o)) for o in seq)


def eye(n_rows, n_cols=None, /, *, k: int = 0, dtype=None, device=None) -> Tensor:
    device = check_device("eye", device)
    n, m = shape_arg("eye", (n_rows, n_rows if n_cols is None else n_cols))
    k = int_arg("eye", "k", k)
    d = float_dtype(dtype)
    out = zeros((n, m), d, device=device)
    # The diagonal is a view of the buffer: start at column k (or row -k), step m + 1.
    start = k if k >= 0 else -k * m
    count = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    if count:
        as_strided(out, (count,), (m + 1,), start).fill_(1)
    return out


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint: bool = True) -> Tensor:
    device = check_device("linspace", device)
    for v in (start, stop):
        if isinstance(v, (complex, np.complexfloating)) or not isinstance(v, (numbers.Real, np.generic)):
            raise StridedError(f"linspace: expected real start and stop, got {start!r} and {stop!r}")
    (num,) = shape_arg("linspace", (int_arg("linspace", "num", num),))
    d = float_dtype(dtype)
    if not d.is_float:
        raise DTypeError(f"linspace: expected a floating-point dtype, got {d}")
    check_size("linspace", num, np.float64)
    try:
        start, stop = float(start), float(stop)
    except OverflowError:
        raise StridedError(f"linspace: start {start!r} or stop {stop!r} is beyond any float") from None
    # Computed in f64 and rounded once, so f32 endpoints are the nearest f32 to start and stop.
    return placed("linspace", from_numpy(np.linspace(start, stop, num, endpoint=bool(endpoint)).astype(d.np)), device)


def meshgrid(*arrays, indexing: str = "xy") -> list:
    if indexing not in ("xy", "ij"):
        raise StridedError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [expect_tensor("meshgrid", a) for a in arrays]
    for a in arrays:
        if a.ndim != 1:
            raise ShapeError(f"meshgrid: expected 1-D tensors, got shape {a.shape}")
    if arrays and len({a.dtype for a in arrays}) > 1:
        raise DTypeError(f"meshgrid: expected tensors of one dtype, got {', '.join(str(a.dtype) for a in arrays)}")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and len(arrays) > 1 and i < 2:
            pos = 1 - i
        view = a.reshape(tuple(-1 if j == pos else 1 for j in range(len(arrays))))
        # A fresh dense copy per output (as NumPy's meshgrid gives): broadcast views would
        # refuse writes.
        out.append(copy_tensor(view.broadcast_as(tuple(shape))))
    return out


def _triangle(op: str, x, k, upper: bool) -> Tensor:
    x = expect_tensor(op, x)
    if x.ndim < 2:
        raise ShapeError(f"{op}: expected a tensor with at least 2 dims, got shape {x.shape}")
    k = int_arg(op, "k", k)
    n, m = x.shape[-2:]
    rows = np.arange(n)[:, None]
    cols = np.arange(m)[None, :]
    keep = (cols - rows >= k) if upper else (cols - rows <= k)
    return where(from_numpy(keep), x, zeros((), x.dtype))


def tril(x, /, *, k: int = 0) -> Tensor:
    return _triangle("tril", x, k, upper=False)


def triu(x, /, *, k: int = 0) -> Tensor:
    return _triangle("triu", x, k, upper=True)


# ---------------------------------------------------------------------------
# manipulation


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """NumPy's ``broadcast_shapes``: each argument a shape (a tuple of ints, or one int)."""
    return broadcast_shapes_of("broadcast_shapes", *[as_int_tuple("broadcast_shapes", "shape", s) for s in shapes])


def broadcast_to(x, /, shape) -> Tensor:
    """``x`` viewed at ``shape`` (NumPy's and the standard's rule: every size given, none -1;
    ``Tensor.broadcast_as``/``expand`` take -1 for "keep this size", as PyTorch does)."""
    x = expect_tensor("broadcast_to", x)
    shape = as_int_tuple("broadcast_to", "shape", shape)
    if builtins.any(n < 0 for n in shape):
        raise ShapeError(f"broadcast_to: expected a shape of sizes >= 0, got {shape} for a tensor of shape {x.shape}")
    return x.broadcast_as(shape)


def broadcast_arrays(*arrays) -> list:
    arrays = [expect_tensor("broadcast_arrays", a) for a in arrays]
    shape = broadcast_shapes_of("broadcast_arrays", *[a.shape for a in arrays])
    return [a.broadcast_as(shape) for a in arrays]


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    arrays = _sequence("concat", arrays)
    if axis is None:
        return cat([a.reshape(-1) for a in arrays], 0)
    if arrays[0].ndim == 0:
        raise ShapeError("concat: rank-0 tensors cannot be joined along an axis (use axis=None)")
    return cat(arrays, axis)


def _sequence(op: str, arrays) -> list:
    if isinstance(arrays, Tensor) or not isinstance(arrays, (list, tuple)):
        raise StridedError(f"{op}: expected a list or tuple of tensors, got {type(arrays).__name__}")
    if not arrays:
        raise ShapeError(f"{op}: expected at least one tensor")
    return [expect_tensor(op, a) for a in arrays]


def stack(arrays, /, *, axis: int = 0) -> Tensor:
    arrays = _sequence("stack", arrays)
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ShapeError(f"stack: expected tensors of one shape, got {' and '.join(map(str, shapes))}")
    d = norm_dim("stack", axis, arrays[0].ndim, extra=1)
    return cat([a.unsqueeze(d) for a in arrays], d)


def unstack(x, /, *, axis: int = 0) -> tuple:
    x = expect_tensor("unstack", x)
    d = norm_dim("unstack", axis, x.ndim)
    return tuple(x.select(d, i) for i in range(x.shape[d]))


def expand_dims(x, /, axis=0) -> Tensor:
    x = expect_tensor("expand_dims", x)
    if isinstance(axis, (tuple, list)):
        n = x.ndim + len(axis)
        dims = sorted(norm_dim("expand_dims", a, n) for a in axis)
        if len(set(dims)) != len(dims):
            raise ShapeError(f"expand_dims: axis {axis} names a dim twice")
        for d in dims:
            x = x.unsqueeze(d)
        return x
    return x.unsqueeze(norm_dim("expand_dims", axis, x.ndim, extra=1))


def squeeze(x, /, axis) -> Tensor:
    x = expect_tensor("squeeze", x)
    dims = _axes("squeeze", x, axis)
    for d in dims:
        if x.shape[d] != 1:
            raise ShapeError(f"squeeze: dim {d} has size {x.shape[d]}, not 1 (shape {x.shape})")
    for d in reversed(dims):
        x = x.squeeze(d)
    return x


def flip(x, /, *, axis=None) -> Tensor:
    x = expect_tensor("flip", x)
    dims = _axes("flip", x, axis)
    return x.flip(dims) if dims else x


def permute_dims(x, /, axes) -> Tensor:
    return expect_tensor("permute_dims", x).permute(as_int_tuple("permute_dims", "axes", axes))


def moveaxis(x, source, destination, /) -> Tensor:
    x = expect_tensor("moveaxis", x)
    src = (source,) if not isinstance(source, (tuple, list)) else tuple(source)
    dst = (destination,) if not isinstance(destination, (tuple, list)) else tuple(destination)
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: source {source} and destination {destination} differ in length")
    src = [norm_dim("moveaxis", s, x.ndim) for s in src]
    dst = [norm_dim("moveaxis", s, x.ndim) for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"moveaxis: repeated dims in source {source} or destination {destination}")
    rest = [d for d in range(x.ndim) if d not in src]
    order = [None] * x.ndim
    for s, d in zip(src, dst):
        order[d] = s
    it = iter(rest)
    order = [o if o is not None else next(it) for o in order]
    return x.permute(tuple(order))


def reshape(x, /, shape, *, copy: bool | None = None) -> Tensor:
    """A view when the layout allows one; ``copy=True`` always copies, ``copy=False`` never does."""
    x = expect_tensor("reshape", x)
    copy = _copy_flag("reshape", copy)
    shape = as_int_tuple("reshape", "shape", shape)
    if copy:
        return copy_tensor(x).reshape(shape)
    lay = x.layout.reshape_view(shape)
    if lay is None and copy is False:
        raise StridedError(f"reshape: no view of layout {x.layout} has shape {shape}, and copy=False was given")
    return x.reshape(shape)


def roll(x, /, shift, *, axis=None) -> Tensor:
    x = expect_tensor("roll", x)
    if axis is None:
        if isinstance(shift, (tuple, list)):
            shift = builtins.sum(as_int_tuple("roll", "shift", shift))
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    shifts = as_int_tuple("roll", "shift", shift)
    axes = as_int_tuple("roll", "axis", axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ShapeError(f"roll: shift {shift} and axis {axis} differ in length")
    out = x
    for s, a in zip(shifts, axes):
        d = norm_dim("roll", a, x.ndim)
        n = x.shape[d]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out if out is not x else copy_tensor(x)


def repeat(x, repeats, /, *, axis=None) -> Tensor:
    x = expect_tensor("repeat", x)
    if axis is None:
        x, d = x.reshape(-1), 0
    else:
        d = norm_dim("repeat", axis, x.ndim)
    n = x.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.dtype.kind not in "iu":
            raise DTypeError(f"repeat: expected integer repeats, got {repeats.dtype}")
        reps = repeats.numpy().astype(np.int64)
    else:
        counts = as_int_tuple("repeat", "repeats", repeats)
        if builtins.any(c >= 2**62 for c in counts):
            raise StridedError(f"repeat: repeat counts {counts} are beyond any buffer")
        reps = np.asarray(counts, dtype=np.int64)
    if reps.ndim > 1 or reps.size not in (1, n):
        raise ShapeError(f"repeat: expected one repeat count or {n} of them, got {reps.size}")
    if (reps < 0).any():
        raise ShapeError(f"repeat: repeat counts must be >= 0, got {reps.tolist()}")
    check_size("repeat", int(reps.sum()) * (n if reps.size == 1 else 1) * (x.numel // n if n else 0),
               x.dtype.np)
    return index_select(x, np.repeat(np.arange(n), reps), d)


def tile(x, repetitions, /) -> Tensor:
    x = expect_tensor("tile", x)
    reps = as_int_tuple("tile", "repetitions", repetitions)
    if builtins.any(r < 0 for r in reps):
        raise ShapeError(f"tile: repetitions must be >= 0, got {reps}")
    nd = builtins.max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    x = x.reshape((1,) * (nd - x.ndim) + x.shape)
    # Each dim n becomes (r, n): a broadcast view, then one copy into the tiled shape.
    inter = x.reshape(tuple(v for n in x.shape for v in (1, n)))
    big = inter.broadcast_as(tuple(v for r, n in zip(reps, x.shape) for v in (r, n)))
    return copy_tensor(big).reshape(tuple(r * n for r, n in zip(reps, x.shape)))


# ---------------------------------------------------------------------------
# elementwise functions that are ops of the registry (or compositions of them)


def _binary_fn(name: str, op: str):
    def fn(x1, x2, /):
        return binary(op, x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``{name}``: the registry's ``{op}``."
    return fn


def _unary_fn(name: str, op: str):
    def fn(x, /):
        return unary(op, expect_tensor(name, x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``{name}``: the registry's ``{op}``."
    return fn


def _standard_fn(e) -> None:
    """The Array API function an op-table entry names (``api``), made as the entry comes."""
    if e.api:
        globals()[e.api] = (_unary_fn if e.arity == 1 else _binary_fn)(e.api, e.name)
        if "__all__" in globals() and e.api not in __all__:
            __all__.append(e.api)


on_new_op(_standard_fn)


def _rounding_fn(name: str):
    def fn(x, /):
        x = expect_tensor(name, x)
        if x.dtype.is_float:
            return unary(name, x)
        if x.dtype is dt.bool_ or x.dtype.is_complex:
            raise DTypeError(f"{name}: expected a real numeric tensor, got {x.dtype}")
        return copy_tensor(x)  # an integer is its own rounding (the standard keeps its dtype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``{name}``: the registry's ``{name}`` for floats, a copy for integers."
    return fn


ceil = _rounding_fn("ceil")
floor = _rounding_fn("floor")
trunc = _rounding_fn("trunc")
_round_real = _rounding_fn("round")


def round(x, /) -> Tensor:
    """Half to even; a complex number rounds its two parts (the standard's complex round)."""
    x = expect_tensor("round", x)
    if not x.dtype.is_complex:
        return _round_real(x)
    out = zeros(x.shape, x.dtype)
    for part in (0, 1):
        complex_part(out, part).copy_(_round_real(complex_part(x, part)))
    return out




def conj(x, /) -> Tensor:
    """The complex conjugate: the registry's ``conj`` for complex, a copy for real dtypes."""
    x = expect_tensor("conj", x)
    if x.dtype is dt.bool_:
        raise DTypeError("conj: expected a numeric tensor, got bool")
    return unary("conj", x) if x.dtype.is_complex else copy_tensor(x)


def real(x, /) -> Tensor:
    """The real parts (a copy of ``complex_part``'s view); a copy of a real numeric tensor
    (the 2024.12 text takes any numeric dtype)."""
    x = expect_tensor("real", x)
    if x.dtype.is_complex:
        return copy_tensor(complex_part(x, 0))
    if x.dtype is dt.bool_:
        raise DTypeError("real: expected a numeric tensor, got bool")
    return copy_tensor(x)


def imag(x, /) -> Tensor:
    """The imaginary parts (a copy of ``complex_part``'s view); zeros for a real float tensor."""
    x = expect_tensor("imag", x)
    if x.dtype.is_complex:
        return copy_tensor(complex_part(x, 1))
    if not x.dtype.is_float:
        raise DTypeError(f"imag: expected a floating-point tensor, got {x.dtype}")
    return zeros(x.shape, x.dtype)


def positive(x, /) -> Tensor:
    """``+x``: a copy (the standard gives a new array)."""
    x = expect_tensor("positive", x)
    if x.dtype is dt.bool_:
        raise DTypeError("positive: not defined for bool tensors")
    return copy_tensor(x)


def logical_xor(x1, x2, /) -> Tensor:
    """Inequality of bools (the compare kernel's ne); other dtypes are refused (``^`` on
    integers is ``bitwise_xor``)."""
    for x in (x1, x2):
        if isinstance(x, Tensor) and x.dtype is not dt.bool_:
            raise DTypeError(f"logical_xor: expected bool tensors, got {x.dtype}")
    return binary("ne", x1, x2)


def isnan(x, /) -> Tensor:
    x = expect_tensor("isnan", x)
    if x.dtype.is_complex:  # either part
        return binary("logical_or", isnan(complex_part(x, 0)), isnan(complex_part(x, 1)))
    if not x.dtype.is_float:
        return zeros(x.shape, dt.bool_)
    return binary("ne", x, x)  # NaN is the one value unequal to itself


def isinf(x, /) -> Tensor:
    x = expect_tensor("isinf", x)
    if x.dtype.is_complex:  # either part, even beside a NaN (the standard's special cases)
        return binary("logical_or", isinf(complex_part(x, 0)), isinf(complex_part(x, 1)))
    if not x.dtype.is_float:
        return zeros(x.shape, dt.bool_)
    return binary("eq", unary("abs", x), math.inf)


def isfinite(x, /) -> Tensor:
    x = expect_tensor("isfinite", x)
    if x.dtype.is_complex:
        return binary("logical_and", isfinite(complex_part(x, 0)), isfinite(complex_part(x, 1)))
    if not x.dtype.is_float:
        return ones(x.shape, dt.bool_)
    return unary("not", binary("logical_or", isnan(x), isinf(x)))


def clip(x, /, min=None, max=None) -> Tensor:  # noqa: F811  (the standard's names for the bounds)
    x = expect_tensor("clip", x)
    out = x
    if min is not None:
        out = binary("maximum", out, min)
    if max is not None:
        out = binary("minimum", out, max)
    if out.dtype is not x.dtype:
        out = to_dtype(out, x.dtype)  # the standard keeps x's dtype
    return out if out is not x else copy_tensor(x)


def signbit(x, /) -> Tensor:
    """True where the sign bit is set (-0.0 and negative NaNs too): copysign(1, x) < 0."""
    x = expect_tensor("signbit", x)
    if not x.dtype.is_float:
        raise DTypeError(f"signbit: expected a real floating-point tensor, got {x.dtype}")
    return binary("lt", binary("copysign", 1.0, x), 0)


def nextafter(x1, x2, /) -> Tensor:
    """The next representable value after x1 towards x2 (f32 and f64: a half type's next
    value is not its f32 one)."""
    for x in (x1, x2):
        if isinstance(x, Tensor) and (not x.dtype.is_float or x.dtype.itemsize < 4):
            raise DTypeError(f"nextafter: expected float32 or float64 tensors, got {x.dtype}")
    return binary("nextafter", x1, x2)


def _shift_fn(name: str):
    def fn(x1, x2, /):
        for x in (x1, x2):
            if isinstance(x, Tensor) and x.dtype.kind not in "iu":
                raise DTypeError(f"{name}: expected integer tensors, got {x.dtype}")
            if isinstance(x, (bool, float, complex)):
                raise DTypeError(f"{name}: expected an integer operand, got {x!r}")
        # array_api_strict refuses negative counts (NumPy's result, 0 or -1, is what the
        # operators << and >> give).
        neg = (x2 < 0 if isinstance(x2, numbers.Integral) else
               isinstance(x2, Tensor) and x2.dtype.kind == "i" and x2.numel
               and builtins.bool(reduce("min", x2).item() < 0))
        if neg:
            got = x2 if not isinstance(x2, Tensor) else "negative counts"
            raise StridedError(f"{name}: shift counts must be >= 0, got {got}")
        return binary(name, x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``{name}``: the registry's op, negative counts refused."
    return fn


bitwise_left_shift = _shift_fn("bitwise_left_shift")
bitwise_right_shift = _shift_fn("bitwise_right_shift")

# ---------------------------------------------------------------------------
# the inspection namespace


class Info:
    """What ``strided.__array_namespace_info__()`` returns: the standard's inspection API."""

    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return DEVICE

    def devices(self) -> list:
        return [DEVICE]

    def _check(self, device):
        check_device("__array_namespace_info__", device)

    def default_dtypes(self, *, device=None) -> dict:
        self._check(device)
        return {"real floating": dt.DEFAULT_FLOAT, "complex floating": dt.DEFAULT_COMPLEX,
                "integral": dt.DEFAULT_INT, "indexing": dt.i64}

    def dtypes(self, *, device=None, kind=None) -> dict:
        self._check(device)
        # The standard's names only: f16 and bf16 stay strided's extras.
        names = {n: d for n, d in dt.STANDARD_NAMES.items() if n not in ("float16", "bfloat16")}
        if kind is None:
            return dict(names)
        return {n: d for n, d in names.items() if isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    return Info()


# ---------------------------------------------------------------------------
# the array object's attributes the standard adds (tensor.py's docstring lists them)


def _size(self):
    return self.numel


def _mT(self):
    if self.ndim < 2:
        raise ShapeError(f"mT: expected a tensor with at least 2 dims, got shape {self.shape}")
    return self.transpose(-2, -1)


def _to_device(self, device, /, *, stream=None):
    if stream is not None:
        raise StridedError(f"to_device: streams are not taken yet; expected stream=None, got {stream!r}")
    return devices.to_device(self, device)  # "cpu", "cuda", "cuda:N" (strided.devices loads CUDA)


def _cpu(self):
    return devices.to_device(self, "cpu", "cpu")


def _index(self):
    if self.dtype.kind not in "iu" or self.ndim:
        # Python's protocol: a TypeError makes range(), slicing and operator.index refuse it.
        raise TypeError(f"__index__: only a rank-0 integer tensor is an index, got {self.dtype} of shape {self.shape}")
    return int(self.item())


def _complex(self):
    return complex(self.item())


def _pos(self):
    return positive(self)


Tensor.size = property(_size)
Tensor.mT = property(_mT)
Tensor.to_device = _to_device
Tensor.cpu = _cpu
Tensor.__index__ = _index
Tensor.__complex__ = _complex
Tensor.__pos__ = _pos

__all__ = [name for name in list(globals()) if not name.startswith("_") and name not in (
    "annotations", "builtins", "math", "ml_dtypes", "numbers", "operator", "np", "dt", "DType", "DTypeError",
    "ShapeError", "StridedError", "StridedIndexError", "Tensor", "GATHER_INDEX", "check_size", "from_dlpack",
    "from_cuda_array_interface", "as_strided", "as_int_tuple", "broadcast_shapes_of", "norm_dim", "arg_reduce",
    "binary", "cat", "copy_tensor", "index_select", "reduce", "to_dtype", "unary",
    "check_device", "expect_tensor", "int_arg", "float_dtype", "shape_arg", "tensor", "from_numpy", "DEVICE", "Info",
    "placed",
    "full", "ones", "zeros",
)]
