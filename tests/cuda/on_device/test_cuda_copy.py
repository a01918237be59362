"""The copy family and the moves on CUDA against NumPy: in numba-cuda's simulator on
every run (``tests/cuda/test_cuda_backend.py``), on a real GPU with ``STRIDED_CUDA_DEVICE=1``.

Buffers hold random bits (NaN payloads included) or ``arange`` values, so a wrong
offset, order or stride shows in the result; expected values are NumPy's views of the
same host buffers.  The simulator moves about 0.1M elements/s: layouts stay near 10^3
elements and the example counts low.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.cuda import copy as cuda_copy
from strided.cuda.storage import CudaStorage
from strided.core.dtype import from_numpy_dtype
from strided.kernels.copy import plan_copy
from strided.layout import Layout
from strided.ops import binary, unary

from strategies import bits, dst_layouts, layouts_of_shape, np_view, random_buffer, shapes

DTYPES = [np.float32, np.float64, np.int64, np.uint8, np.uint32, np.bool_, np.float16]
SMALL = settings(max_examples=40, deadline=None)


def on_cuda(host: np.ndarray) -> sd.Tensor:
    t = sd.from_numpy(host).to_device("cuda")
    assert t.device == "cuda:0" and isinstance(t.storage, CudaStorage)
    return t


def device_buffer(host: np.ndarray):
    return on_cuda(host).storage.data


# -- moves -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_keeps_every_bit(dtype):
    host = random_buffer(np.random.default_rng(1), dtype, 257)
    t = on_cuda(host)
    back = t.to_device("cpu")
    assert back.device == "cpu" and back.dtype == t.dtype
    assert (bits(back.numpy()) == bits(host)).all()
    assert (bits(t.cpu().numpy()) == bits(host)).all()
    assert (bits(t.numpy()) == bits(host)).all()


def test_moves_name_the_devices_and_refuse_what_is_not_there():
    t = sd.arange(4)
    g = t.to_device("cuda:0")
    assert g.to_device("cuda") is g and g.to_device("cuda:0") is g and t.to_device("cpu") is t
    with pytest.raises(sd.StridedError, match=r"to_device: no device 'cuda:99'"):
        t.to_device("cuda:99")
    with pytest.raises(sd.StridedError, match=r"to_device: unknown device 'gpu'"):
        t.to_device("gpu")


def test_printing_copies_to_the_host_and_names_the_device():
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = on_cuda(host)
    cpu = repr(sd.from_numpy(host))
    assert repr(g) == cpu[: cpu.rindex(")")] + ", device='cuda:0')"
    assert "device='cuda:0'" in repr(g.t())
    assert g.t().tolist() == host.T.tolist()
    assert g[1, 2].item() == 5.0


def test_views_share_the_device_buffer():
    g = on_cuda(np.arange(12, dtype=np.int64).reshape(3, 4))
    for v in (g.t(), g[1:, ::-2], g.reshape(2, 6), g[None, :, 1].expand(2, 3)):
        assert v.storage is g.storage
    assert g[1:, ::-2].numpy().tolist() == np.arange(12).reshape(3, 4)[1:, ::-2].tolist()


def test_mixed_devices_are_refused_naming_both():
    g, c = on_cuda(np.ones(3, np.float32)), sd.ones((3,))
    with pytest.raises(sd.StridedError, match=r"add: .*'cuda:0' and 'cpu'"):
        g + c
    with pytest.raises(sd.StridedError, match=r"copy_: .*'cuda:0' and 'cpu'"):
        g.copy_(c)
    with pytest.raises(sd.StridedError,
                       match=r"copy_into: expected src on the CUDA device, got a host numpy array"):
        cuda_copy.copy_into(g.storage.data, g.layout, c.storage.data, c.layout)


# -- the copy family, path by path ---------------------------------------------------------------


def _case(shape, view):
    host = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return host, view(host), view(on_cuda(host))


PATH_CASES = {
    "run": ((4, 50), lambda a: a[1:3]),
    "rows": ((6, 50), lambda a: a[:, 3:40]),
    "blocks": ((3, 4, 40), lambda a: a[:, ::2, 1:39]),
    "tiled": ((40, 70), lambda a: a.T if isinstance(a, np.ndarray) else a.t()),
    "general": ((5, 6, 7), lambda a: a[::-1, :, ::2] if isinstance(a, np.ndarray) else a.flip(0)[:, :, ::2]),
}


@pytest.mark.parametrize("path", list(PATH_CASES))
def test_each_path_of_plan_copy_runs_on_cuda(path):
    shape, view = PATH_CASES[path]
    host, want, g = _case(shape, view)
    assert plan_copy(Layout.contiguous(g.shape), g.layout).path == path  # the case takes the path named
    got = g.contiguous()
    assert got.device == "cuda:0" and got.is_contiguous()
    assert np.array_equal(got.numpy(), want)
    assert np.array_equal(g.copy().to_device("cpu").numpy(), want)


def test_tiled_3d_permutes_and_widths():
    for dtype in (np.uint8, np.float16, np.float32, np.int64):
        host = random_buffer(np.random.default_rng(2), dtype, 2 * 17 * 19).reshape(2, 17, 19)
        g = on_cuda(host)
        for perm in ((0, 2, 1), (2, 1, 0)):
            v = g.permute(perm)
            assert plan_copy(Layout.contiguous(v.shape), v.layout).path == "tiled"
            assert (bits(v.contiguous().numpy()) == bits(host.transpose(perm))).all()


# -- drawn layouts -----------------------------------------------------------------------------


@st.composite
def src_views(draw, max_numel=600):
    shape = draw(shapes(max_rank=4, max_size=12, max_numel=max_numel))
    lay, n = draw(layouts_of_shape(shape))
    dtype = draw(st.sampled_from(DTYPES))
    return lay, n, dtype


@SMALL
@given(src_views(), st.integers(0, 2**32 - 1))
def test_contiguous_of_any_view_matches_numpy(view, seed):
    lay, n, dtype = view
    host = random_buffer(np.random.default_rng(seed), dtype, n)
    g = sd.as_strided(on_cuda(host), lay.shape, lay.stride, lay.offset)
    want = np_view(host, lay)
    got = g.contiguous()
    assert got.device == "cuda:0"
    assert got.shape == want.shape and (bits(got.numpy()) == bits(want)).all()
    assert (bits(g.numpy()) == bits(want)).all()  # to_host compacts on the device the same way


@SMALL
@given(st.data(), st.integers(0, 2**32 - 1))
def test_copy_into_any_destination_matches_numpy(data, seed):
    shape = data.draw(shapes(max_rank=4, max_size=10, max_numel=500))
    slay, sn = data.draw(layouts_of_shape(shape))
    dlay, dn = data.draw(dst_layouts(shape))
    dtype = data.draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(seed)
    src, dst = random_buffer(rng, dtype, sn), random_buffer(rng, dtype, dn)
    ddev = device_buffer(dst)
    cuda_copy.copy_into(ddev, dlay, device_buffer(src), slay)
    want = dst.copy()
    np_view(want, dlay)[...] = np_view(src, slay)
    assert (bits(ddev.copy_to_host()) == bits(want)).all()  # untouched elements kept too


CONVERT = [np.float32, np.float64, np.int64, np.uint8, np.uint32, np.bool_]


@SMALL
@given(src_views(max_numel=400), st.sampled_from(CONVERT), st.sampled_from(CONVERT), st.integers(0, 2**32 - 1))
def test_conversions_on_drawn_layouts_match_astype(view, src_dtype, dst_dtype, seed):
    lay = view[0]
    # values every one of these dtypes holds exactly, so the casts are defined in C and NumPy alike
    host = np.random.default_rng(seed).integers(0, 5, view[1]).astype(src_dtype)
    g = sd.as_strided(on_cuda(host), lay.shape, lay.stride, lay.offset)
    got = g.to_dtype(from_numpy_dtype(np.dtype(dst_dtype)))
    assert got.device == "cuda:0"
    assert np.array_equal(got.numpy(), np_view(host, lay).astype(dst_dtype))


def test_complex_to_real_conversions_are_refused_by_name():
    g = on_cuda(np.ones(4, np.complex64))
    with pytest.raises(sd.DTypeError, match="cannot convert complex64 to float32: it would drop the imaginary part"):
        g.to_dtype(sd.f32)


def test_bad_layouts_are_refused_before_any_launch():
    d = device_buffer(np.zeros(4, np.float32))
    with pytest.raises(sd.StridedError):
        cuda_copy.copy_into(d, Layout((5,), (1,), 0), d, Layout((5,), (1,), 0))
    with pytest.raises(sd.ShapeError, match="broadcast dim"):
        cuda_copy.copy_into(d, Layout((4,), (0,), 0), d, Layout((4,), (1,), 0))


# -- writes through views ----------------------------------------------------------------------


def test_writes_through_views_match_numpy():
    host = np.arange(30, dtype=np.float64).reshape(5, 6)
    g, want = on_cuda(host), host.copy()
    g[1] = 7.5
    want[1] = 7.5
    g[:, ::-2] = np.arange(15, dtype=np.float64).reshape(5, 3)
    want[:, ::-2] = np.arange(15).reshape(5, 3)
    g[2:, 1:4].fill_(-1.0)
    want[2:, 1:4] = -1.0
    g[:, 1:].copy_(g[:, :-1])  # overlapping views of one buffer: through a temporary, as NumPy
    want[:, 1:] = want[:, :-1].copy()
    g.t()[1:4, :3].copy_(g[:3, 1:4].t())  # a transposed block onto itself, overlapping
    want.T[1:4, :3] = want[:3, 1:4].T.copy()
    assert np.array_equal(g.numpy(), want)


def test_numpy_sees_a_cuda_tensor_only_through_a_host_copy():
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = on_cuda(host)
    a = np.asarray(g.t())  # no __array_interface__ on a device tensor: __array__, a host copy
    assert np.array_equal(a, host.T)
    a[0, 0] = 99.0
    assert g.numpy()[0, 0] == 0.0  # the copy is the host's own
    with pytest.raises(ValueError, match="cuda:0 reaches the host only as a copy"):
        np.asarray(g, copy=False)
    assert g.__dlpack_device__() == (2, 0)  # kDLCUDA: NumPy's from_dlpack refuses it rather than read it
    with pytest.raises((BufferError, RuntimeError, ValueError)):
        np.from_dlpack(g)


# -- elementwise (first ops, general path) -----------------------------------------------------

UNARY_NP = {"neg": np.negative, "abs": np.abs, "sqr": np.square, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
            "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
            "recip": np.reciprocal, "relu": lambda x: np.maximum(x, x.dtype.type(0)), "sign": np.sign,
            "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
            "atanh": np.arctanh, "cosh": np.cosh, "sinh": np.sinh, "tan": np.tan, "expm1": np.expm1,
            "log1p": np.log1p, "log2": np.log2, "log10": np.log10}
BINARY_NP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
             "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
             "gt": np.greater, "ge": np.greater_equal, "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot,
             "copysign": np.copysign, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
             "bitwise_xor": np.bitwise_xor}
_INT_OK = ("neg", "abs", "sqr", "relu", "sign")
_BINARY_FLOAT = ("div", "pow", "atan2", "hypot", "copysign")
_BINARY_INT = ("bitwise_and", "bitwise_or", "bitwise_xor")


def _close(got: sd.Tensor, want: np.ndarray):
    assert got.device == "cuda:0" and got.shape == want.shape
    a = got.numpy()
    assert a.dtype == want.dtype, (a.dtype, want.dtype)
    tol = 2e-6 if a.dtype == np.float32 else 1e-13
    assert np.allclose(a, want, rtol=tol, atol=0, equal_nan=True) if a.dtype.kind == "f" else np.array_equal(a, want)


@settings(max_examples=30, deadline=None)
@given(src_views(max_numel=300), st.sampled_from([np.float32, np.float64, np.int64]), st.sampled_from(sorted(UNARY_NP)),
       st.integers(0, 2**32 - 1))
def test_unary_ops_on_drawn_layouts_match_numpy(view, dtype, op, seed):
    lay, n = view[0], view[1]
    if dtype == np.int64 and op not in _INT_OK:
        dtype = np.float64  # the float functions of an integer compute in f64 (the op layer converts first)
    # each function's own domain: the simulator computes with Python's math, which raises outside it
    domains = {"acos": (1.8, -0.9), "asin": (1.8, -0.9), "atanh": (1.8, -0.9), "acosh": (4, 1.0)}
    scale, shift = domains.get(op, (4, 0.25))
    host = (np.random.default_rng(seed).random(n) * scale + shift).astype(dtype) if dtype != np.int64 else \
        np.random.default_rng(seed).integers(-50, 50, n)
    g = sd.as_strided(on_cuda(host), lay.shape, lay.stride, lay.offset)
    _close(unary(op, g), UNARY_NP[op](np_view(host, lay)))


@settings(max_examples=30, deadline=None)
@given(st.data(), st.sampled_from([np.float32, np.float64, np.int64]), st.sampled_from(sorted(BINARY_NP)),
       st.integers(0, 2**32 - 1))
def test_binary_ops_on_drawn_layouts_and_scalars_match_numpy(data, dtype, op, seed):
    if op in _BINARY_FLOAT and dtype == np.int64:
        dtype = np.float64
    if op in _BINARY_INT:
        dtype = np.int64
    shape = data.draw(shapes(max_rank=3, max_size=8, max_numel=300))
    (la, na), (lb, nb) = data.draw(layouts_of_shape(shape)), data.draw(layouts_of_shape(shape))
    rng = np.random.default_rng(seed)
    ha, hb = (rng.integers(-4, 5, n).astype(dtype) for n in (na, nb))  # ties and equal values for the comparisons
    hb[hb == 0] = 3  # no division by zero
    if op == "pow":
        ha[ha == 0] = 1  # nor 0 to a negative power (the simulator's Python math raises there)
    ga = sd.as_strided(on_cuda(ha), la.shape, la.stride, la.offset)
    gb = sd.as_strided(on_cuda(hb), lb.shape, lb.stride, lb.offset)
    va, vb = np_view(ha, la), np_view(hb, lb)
    _close(binary(op, ga, gb), BINARY_NP[op](va, vb))
    _close(binary(op, ga, 2), BINARY_NP[op](va, dtype(2)))  # a scalar travels with the launch
    _close(binary(op, ga[..., :1] if ga.ndim else ga, gb), BINARY_NP[op](va[..., :1] if va.ndim else va, vb))


def test_logical_and_bitwise_ops_on_bools_match_numpy():
    rng = np.random.default_rng(4)
    ha, hb = rng.random((5, 6)) < 0.5, rng.random((6, 5)) < 0.5
    a, b = on_cuda(ha), on_cuda(hb).t()
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("bitwise_and", np.bitwise_and),
                   ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)):
        _close(binary(op, a, b), fn(ha, hb.T))
    _close(unary("not", a[:, ::-1]), np.logical_not(ha[:, ::-1]))
    with pytest.raises(sd.DTypeError, match="tan: not defined for a int64 src"):
        from strided.cuda import elementwise as ew
        out = on_cuda(np.zeros(3, np.int64))
        ew.unary("tan", out.storage.data, out.layout, out.storage.data, out.layout)


def test_families_cuda_lacks_are_named():
    g = on_cuda(np.array([3.0, 1.0, 2.0], np.float32))
    with pytest.raises(sd.StridedError, match="sort: this kernel family is not done on CUDA yet"):
        sd.sort(g)
    with pytest.raises(sd.StridedError, match="scan: this kernel family is not done on CUDA yet"):
        sd.cumulative_sum(g)
