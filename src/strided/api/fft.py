"""The Array API's ``fft`` extension: NumPy's pocketfft on the host, over any layout.

As ``linalg`` hands LAPACK a NumPy view of the operand's buffer, the transforms hand
pocketfft one (any strides, negative and zero included: pocketfft copies each line it
transforms into its own scratch, so a strided copy here would only be a second one), and
the result comes back as a tensor over NumPy's fresh output buffer.  The half types
compute in f32, as LAPACK's callers do.

Dtypes follow the standard, not NumPy's upcasts: a complex transform keeps the input's
precision (``complex64`` in, ``complex64`` out), the real-input ones (``rfft``, ``rfftn``,
``ihfft``) give the complex of the input's precision, the real-output ones (``irfft``,
``irfftn``, ``hfft``) the real one.  Complex-input transforms take a real float too, as
NumPy does, reading it as complex of the same precision; integers and bools are refused.

Only the CPU transforms: a tensor on a CUDA device raises a StridedError naming the
function (``t.cpu()`` moves it), rather than a silent round trip through the host.
``fftshift``/``ifftshift`` are ``roll`` and run wherever roll does; ``fftfreq`` and
``rfftfreq`` are creation functions and take ``device=``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core import dtype as dt
from .array_api import roll
from ..creation import check_device, expect_tensor, from_numpy, int_arg, placed
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.layout import as_int_tuple, norm_dim
from ..core.storage import check_size
from ..tensor import Tensor

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_COMPLEX_OF = {"f": {4: dt.c64, 8: dt.c128}, "c": {8: dt.c64, 16: dt.c128}}


def _operand(op: str, x, real_in: bool) -> Tensor:
    x = expect_tensor(op, x)
    if x.device != "cpu":
        raise StridedError(f"{op}: the fft extension runs on the CPU (NumPy's pocketfft); the tensor is on "
                           f"{x.device}, t.cpu() moves it to the host")
    if real_in and not x.dtype.is_float:
        raise DTypeError(f"{op}: expected a real floating-point tensor, got {x.dtype}")
    if not (x.dtype.is_float or x.dtype.is_complex):
        raise DTypeError(f"{op}: expected a floating-point or complex tensor, got {x.dtype}")
    if x.ndim == 0:
        raise ShapeError(f"{op}: expected at least 1 dim, got a rank-0 tensor")
    return x


def _host(x: Tensor) -> np.ndarray:
    """The NumPy view pocketfft reads, widened to f32 for the half types (it has none)."""
    a = x.numpy()
    return a.astype(np.float32) if x.dtype.compute is not x.dtype else a


def _complex_of(x: Tensor) -> dt.DType:
    d = x.dtype.compute
    return _COMPLEX_OF[d.kind][d.itemsize]


def _norm(op: str, norm) -> str:
    if not isinstance(norm, str) or norm not in _NORMS:
        raise StridedError(f"{op}: norm must be one of {_NORMS}, got {norm!r}")
    return norm


def _length(op: str, what: str, n) -> int:
    n = int_arg(op, what, n)
    if n < 1:
        raise ShapeError(f"{op}: {what} must be at least 1, got {n}")
    return n


def _run(op: str, fn, a: np.ndarray, want: dt.DType, **kwargs) -> Tensor:
    try:
        with np.errstate(all="ignore"):
            out = fn(a, **kwargs)
    except (ValueError, TypeError) as e:
        raise StridedError(f"{op}: {e}") from None
    return from_numpy(np.ascontiguousarray(out, dtype=want.np))


def _fits(op: str, x: Tensor, sizes: dict, want: dt.DType) -> None:
    """Refuse up front a length that no memory holds (``n=2**40``), before pocketfft asks the OS."""
    numel = 1
    for d, m in enumerate(x.shape):
        numel *= sizes.get(d, m)
    check_size(op, numel, want.np)


def _one_axis(op: str, fn, x, n, axis, norm, real_in: bool, real_out: bool) -> Tensor:
    x = _operand(op, x, real_in)
    d = norm_dim(op, axis, x.ndim)
    kwargs = {"axis": d, "norm": _norm(op, norm)}
    want = _complex_of(x)
    if n is not None:
        kwargs["n"] = _length(op, "n", n)
        _fits(op, x, {d: kwargs["n"]}, want)
    return _run(op, fn, _host(x), want.real if real_out else want, **kwargs)


def _many_axes(op: str, fn, x, s, axes, norm, real_in: bool, real_out: bool) -> Tensor:
    x = _operand(op, x, real_in)
    norm = _norm(op, norm)
    if axes is None:
        if s is not None:
            raise StridedError(f"{op}: s={s!r} needs axes to say which dims it sizes (the standard leaves "
                               "axes=None with s undefined)")
        dims = tuple(range(x.ndim))
    else:
        dims = tuple(norm_dim(op, a, x.ndim) for a in as_int_tuple(op, "axes", axes))
        if len(set(dims)) != len(dims):
            raise ShapeError(f"{op}: axes {axes!r} name a dim twice (shape {x.shape})")
        if not dims:
            raise ShapeError(f"{op}: axes must name at least one dim, got {axes!r}")
    kwargs = {"axes": dims, "norm": norm}
    want = _complex_of(x)
    if s is not None:
        sizes = tuple(_length(op, "s", v) for v in as_int_tuple(op, "s", s))
        if len(sizes) != len(dims):
            raise ShapeError(f"{op}: s={s!r} and axes={axes!r} differ in length")
        kwargs["s"] = sizes
        _fits(op, x, dict(zip(dims, sizes)), want)
    return _run(op, fn, _host(x), want.real if real_out else want, **kwargs)


def _transform(name: str, real_in: bool, real_out: bool, many: bool):
    """The standard's ``fft.<name>``: NumPy's ``numpy.fft.<name>`` on the host, over one axis
    (``n``, ``axis``) or several (``s``, ``axes``), with the checks of ``_one_axis`` or
    ``_many_axes``; ``real_in``: the input is real, ``real_out``: the result is."""
    np_fn = getattr(np.fft, name)
    if many:
        def fn(x, /, *, s=None, axes=None, norm: str = "backward") -> Tensor:
            return _many_axes(name, np_fn, x, s, axes, norm, real_in, real_out)
    else:
        def fn(x, /, *, n=None, axis: int = -1, norm: str = "backward") -> Tensor:
            return _one_axis(name, np_fn, x, n, axis, norm, real_in, real_out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's ``fft.{name}`` (``numpy.fft.{name}`` on the host)."
    return fn


fft = _transform("fft", False, False, many=False)
ifft = _transform("ifft", False, False, many=False)
rfft = _transform("rfft", True, False, many=False)
irfft = _transform("irfft", False, True, many=False)
hfft = _transform("hfft", False, True, many=False)
ihfft = _transform("ihfft", True, False, many=False)
fftn = _transform("fftn", False, False, many=True)
ifftn = _transform("ifftn", False, False, many=True)
rfftn = _transform("rfftn", True, False, many=True)
irfftn = _transform("irfftn", False, True, many=True)


def _freq(op: str, fn, n, d, dtype, device) -> Tensor:
    device = check_device(op, device)
    n = _length(op, "n", n)
    check_size(op, n, np.float64)
    if isinstance(d, bool) or not isinstance(d, numbers.Real):
        raise StridedError(f"{op}: expected a real sample spacing d, got {d!r}")
    try:
        d = float(d)
    except OverflowError:
        raise StridedError(f"{op}: sample spacing d={d!r} is beyond any float") from None
    if d == 0 or d != d:
        raise StridedError(f"{op}: sample spacing d must be a nonzero number, got {d!r}")
    want = dt.DEFAULT_FLOAT if dtype is None else dt.as_dtype(dtype)
    if not want.is_float:
        raise DTypeError(f"{op}: expected a real floating-point dtype, got {want}")
    # In f64 and rounded once, as NumPy computes them, whatever the dtype asked for.
    with np.errstate(all="ignore"):
        out = fn(n, d=d).astype(want.np)
    return placed(op, from_numpy(out), device)


def fftfreq(n, /, *, d: float = 1.0, dtype=None, device=None) -> Tensor:
    return _freq("fftfreq", np.fft.fftfreq, n, d, dtype, device)


def rfftfreq(n, /, *, d: float = 1.0, dtype=None, device=None) -> Tensor:
    return _freq("rfftfreq", np.fft.rfftfreq, n, d, dtype, device)


def _shift(op: str, x, axes, sign: int) -> Tensor:
    x = expect_tensor(op, x)
    if axes is None:
        dims = tuple(range(x.ndim))
    else:
        one = not isinstance(axes, (tuple, list))
        dims = tuple(norm_dim(op, a, x.ndim) for a in as_int_tuple(op, "axes", (axes,) if one else tuple(axes)))
    if not dims:
        return roll(x, 0, axis=None)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in dims), axis=dims)


def fftshift(x, /, *, axes=None) -> Tensor:
    """The zero frequency moved to the middle: a roll by ``n // 2`` along each of ``axes``."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, /, *, axes=None) -> Tensor:
    """``fftshift``'s inverse: a roll by ``-(n // 2)`` (they differ for odd lengths)."""
    return _shift("ifftshift", x, axes, -1)
