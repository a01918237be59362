"""The fft extension (``strided.fft``) against NumPy's pocketfft and array_api_strict's fft, on
tensors of drawn layouts (gaps, flips, transposes, stride-0 broadcasts): the transforms read
the buffer through the view, so every layout must give the dense copy's answer.  f64/c128
carry the layouts; the dtype rules (c64 in, c64 out; f32 -> c64; the half types) are checked
on small dense inputs against array_api_strict, the standard's reference."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import array_api_strict as xps
import strided as sd
from strategies import layouts_of_shape, np_view, shapes

F = sd.fft
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MANY_AXES = ["fftn", "ifftn", "rfftn", "irfftn"]
REAL_IN = {"rfft", "ihfft", "rfftn"}
HALF_LENGTH = {"irfft", "hfft", "irfftn"}  # an input of M points makes 2 * (M - 1) by default


@st.composite
def viewed(draw, complex_: bool):
    """(tensor, the NumPy array it views) of rank 1..3 with no empty dim, under a drawn layout."""
    shape = draw(shapes(min_rank=1, max_rank=3, max_size=5, max_numel=60).filter(lambda s: min(s) >= 1))
    lay, n = draw(layouts_of_shape(shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    buf = rng.standard_normal(2 * n if complex_ else n)
    if complex_:
        buf = buf.view(np.complex128)
    return sd.as_strided(sd.from_numpy(buf), lay.shape, lay.stride, lay.offset), np_view(buf, lay)


def same(got, want, rtol=1e-12):
    want = np.asarray(want)
    assert isinstance(got, sd.Tensor), type(got)
    assert got.shape == want.shape and got.dtype.np == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol * scale)


@given(data=st.data(), name=st.sampled_from(ONE_AXIS))
def test_one_axis_transforms_match_numpy_on_any_layout(data, name):
    t, a = data.draw(viewed(complex_=name not in REAL_IN))
    axis = data.draw(st.integers(-t.ndim, t.ndim - 1))
    m = t.shape[axis]
    if name in HALF_LENGTH and m < 2:
        n = data.draw(st.integers(1, 8))
    else:
        n = data.draw(st.none() | st.integers(1, 2 * m + 2))
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    got = getattr(F, name)(t, n=n, axis=axis, norm=norm)
    same(got, getattr(np.fft, name)(np.ascontiguousarray(a), n=n, axis=axis, norm=norm))


@given(data=st.data(), name=st.sampled_from(MANY_AXES))
def test_many_axes_transforms_match_array_api_strict_on_any_layout(data, name):
    t, a = data.draw(viewed(complex_=name not in REAL_IN))
    axes = data.draw(st.none() | st.lists(st.integers(-t.ndim, t.ndim - 1), min_size=1, max_size=t.ndim,
                                           unique_by=lambda d: d % t.ndim))
    s = None
    if axes is not None and data.draw(st.booleans()):
        s = [data.draw(st.integers(1, 2 * t.shape[d] + 1)) for d in axes]
    last = t.shape[axes[-1] if axes else -1]
    if name in HALF_LENGTH and s is None and last < 2:
        return  # no default length (2 * (1 - 1) = 0 points): refused, as below
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    got = getattr(F, name)(t, s=s, axes=axes, norm=norm)
    ref = getattr(xps.fft, name)(xps.asarray(np.ascontiguousarray(a)), s=s, axes=axes, norm=norm)
    same(got, np.asarray(ref))


@pytest.mark.parametrize("name, dtype", [(n, d) for n in ONE_AXIS + MANY_AXES for d in (
    ("float32", "float64") if n in REAL_IN else ("complex64", "complex128"))])  # what array_api_strict takes
def test_result_dtypes_are_the_standards(name, dtype):
    a = (np.arange(12.0).reshape(3, 4) * (1 + 0.5j if dtype.startswith("complex") else 1)).astype(dtype)
    got = getattr(F, name)(sd.asarray(a)[:, ::-1])
    ref = getattr(xps.fft, name)(xps.asarray(np.ascontiguousarray(a[:, ::-1])))
    same(got, np.asarray(ref), rtol=1e-5 if dtype in ("float32", "complex64") else 1e-12)


def test_real_input_to_a_complex_transform_and_the_half_types():
    # NumPy takes a real float for the complex transforms; the precision is kept
    a = np.linspace(-1, 1, 8, dtype=np.float32)
    same(F.fft(sd.asarray(a)), np.fft.fft(a.astype(np.complex64)), rtol=1e-5)
    # half types compute in f32 (pocketfft has none) and give its complex
    h = sd.asarray(a).astype(sd.f16)
    same(F.rfft(h), np.fft.rfft(a.astype(np.float16).astype(np.float32)), rtol=1e-5)
    same(F.fftshift(h), np.fft.fftshift(a.astype(np.float16)))


@given(data=st.data(), inverse=st.booleans())
def test_shifts_match_numpy_on_any_layout(data, inverse):
    t, a = data.draw(viewed(complex_=False))
    axes = data.draw(st.none() | st.integers(-t.ndim, t.ndim - 1)
                     | st.lists(st.integers(-t.ndim, t.ndim - 1), max_size=t.ndim, unique_by=lambda d: d % t.ndim))
    name = "ifftshift" if inverse else "fftshift"
    same(getattr(F, name)(t, axes=axes), getattr(np.fft, name)(a, axes=axes))


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_match_numpy(name):
    for n in (1, 2, 7, 10):
        for d in (1.0, 0.25, 3):
            same(getattr(F, name)(n, d=d, dtype=sd.float64), getattr(np.fft, name)(n, d=d))
            same(getattr(F, name)(n, d=d), getattr(np.fft, name)(n, d=d).astype(np.float32), rtol=1e-6)
    default = sd.__array_namespace_info__().default_dtypes()["real floating"]
    assert getattr(F, name)(4).dtype is default
    assert getattr(F, name)(4, device="cpu").device == "cpu"


def test_the_namespace_has_the_extension():
    assert sd.fft is F and sd.zeros(1).__array_namespace__().fft is F
    assert sorted(F.__all__) == sorted(xps.fft.__all__)


def test_bad_arguments_raise_strided_errors_naming_the_function():
    x = sd.asarray(np.ones((3, 4), np.complex128))
    r = sd.asarray(np.ones((3, 4)))
    cases = [
        (lambda: F.fft(sd.arange(4)), "fft: expected a floating-point or complex"),
        (lambda: F.rfft(x), "rfft: expected a real floating-point"),
        (lambda: F.fft(x, n=0), "fft: n must be at least 1"),
        (lambda: F.fft(x, axis=2), "fft"),
        (lambda: F.fft(sd.asarray(1j)), "fft: expected at least 1 dim"),
        (lambda: F.ifft(x, norm="both"), "ifft: norm must be one of"),
        (lambda: F.irfft(x[:, :1]), "irfft: Invalid number of FFT data points \\(0\\)"),
        (lambda: F.fftn(x, s=(2, 2)), "fftn: s=\\(2, 2\\) needs axes"),
        (lambda: F.fftn(x, s=(2,), axes=(0, 1)), "fftn: s=\\(2,\\) and axes=\\(0, 1\\) differ in length"),
        (lambda: F.rfftn(r, axes=(1, -1)), "rfftn: axes \\(1, -1\\) name a dim twice"),
        (lambda: F.fft(x, n=2**50), "fft: cannot allocate"),
        (lambda: F.fftfreq(0), "fftfreq: n must be at least 1"),
        (lambda: F.rfftfreq(4, d=0), "rfftfreq: sample spacing d must be a nonzero number"),
        (lambda: F.fftfreq(4, dtype=sd.int32), "fftfreq: expected a real floating-point dtype"),
        (lambda: F.fftfreq(4, device="tpu"), "fftfreq: unknown device"),
        (lambda: F.fftshift(r, axes=(0, 5)), "fftshift"),
    ]
    for call, match in cases:
        with pytest.raises(sd.StridedError, match=match):
            call()


def test_a_tensor_on_a_device_is_refused_by_name():
    class OnDevice(sd.Storage):  # stands in for CudaStorage: only its device is asked
        __slots__ = ()
        device = "cuda:0"

    t = sd.Tensor(OnDevice(np.zeros(8, np.complex128)), sd.Layout.contiguous((8,)), sd.c128)
    for name in ONE_AXIS[:2] + MANY_AXES[:2]:
        with pytest.raises(sd.StridedError, match=f"{name}: the fft extension runs on the CPU .* on cuda:0"):
            getattr(F, name)(t)
