"""NumPy's ufuncs and functions on Tensors (NEP 13 / NEP 18) return Tensors computed by strided,
with NumPy's values; what strided does not implement is a TypeError naming it."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import strided as sd
from test_array_api_namespace import same, tensors

UNARY = ["negative", "positive", "absolute", "square", "exp", "sin", "cos", "tanh", "sign", "isnan", "isinf",
         "isfinite", "reciprocal"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal"]


@given(tensors(max_rank=3), tensors(max_rank=3))
def test_ufuncs_return_tensors_with_numpys_values(tx, ty):
    (t, a), (u, b) = tx, ty
    with np.errstate(all="ignore"):
        for name in UNARY:
            got = getattr(np, name)(t)
            assert isinstance(got, sd.Tensor), name
            same(got, getattr(np, name)(a), rtol=1e-12)
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            return
        for name in BINARY:
            x = np.abs(a) if name == "power" else a
            got = getattr(np, name)(np.abs(t) if name == "power" else t, u)
            assert isinstance(got, sd.Tensor), name
            same(got, getattr(np, name)(x, b), rtol=1e-12)
        # an ndarray operand is viewed, not copied, and the answer is still a tensor
        mixed = np.add(a, u)
        assert isinstance(mixed, sd.Tensor)
        same(mixed, a + b)
        assert isinstance(b + t if a.shape == b.shape else t, sd.Tensor)


def test_scalars_follow_numpy_2():
    t = sd.ones((3,), dtype=sd.f32)
    assert np.multiply(t, 2.0).dtype is sd.f32  # a Python float is weak
    assert np.multiply(np.float64(2), t).dtype is sd.f64  # a NumPy f64 scalar is not (NEP 50)
    assert np.add(np.float32(1), t).dtype is sd.f32
    assert (np.arange(3.0) * sd.ones((3,), sd.f64)).dtype is sd.f64


def test_ufunc_out_and_reduce():
    t = sd.asarray(np.arange(6.0).reshape(2, 3))
    out = sd.zeros((2, 3), dtype=sd.f64)
    r = np.add(t, 1, out=out)
    assert r is out
    same(out, np.arange(6.0).reshape(2, 3) + 1)
    nd = np.zeros((2, 3))
    assert np.multiply(t, 2, out=nd) is nd
    np.testing.assert_array_equal(nd, np.arange(6.0).reshape(2, 3) * 2)
    a = np.arange(6.0).reshape(2, 3)
    same(np.add.reduce(t), np.add.reduce(a))
    same(np.add.reduce(t, axis=None), np.add.reduce(a, axis=None))
    same(np.maximum.reduce(t, axis=1, keepdims=True), np.maximum.reduce(a, axis=1, keepdims=True))
    same(np.logical_or.reduce(t > 3, axis=0), np.logical_or.reduce(a > 3, axis=0))
    same(np.matmul(t, t.mT), a @ a.T)


@given(tensors(min_rank=1, max_rank=3), st.data())
def test_numpy_functions_on_tensors(tx, data):
    t, a = tx
    nd = a.ndim
    axis = data.draw(st.integers(-nd, nd - 1), label="axis")
    keep = data.draw(st.booleans(), label="keepdims")
    with np.errstate(all="ignore"):
        for name in ("sum", "mean", "std", "var", "prod", "all", "any"):
            got = getattr(np, name)(t, axis=axis, keepdims=keep)
            assert isinstance(got, sd.Tensor), name
            same(got, getattr(np, name)(a, axis=axis, keepdims=keep), rtol=1e-9, atol=1e-12)
        same(np.std(t, axis=axis, ddof=1), np.std(a, axis=axis, ddof=1), rtol=1e-9, atol=1e-12)
        if a.shape[axis]:
            for name in ("max", "min", "amax", "amin", "argmax", "argmin"):
                same(getattr(np, name)(t, axis=axis), getattr(np, name)(a, axis=axis))
    same(np.concatenate([t, a], axis=axis), np.concatenate([a, a], axis=axis))
    same(np.stack([t, t], axis=axis), np.stack([a, a], axis=axis))
    same(np.transpose(t), np.transpose(a))
    same(np.reshape(t, (-1,)), np.reshape(a, (-1,)))
    same(np.where(t > 0, t, -1.0), np.where(a > 0, a, -1.0))
    same(np.clip(t, -0.5, 0.5), np.clip(a, -0.5, 0.5))
    idx = (data.draw(st.lists(st.integers(0, max(a.shape[axis] - 1, 0)), max_size=4), label="idx")
           if a.shape[axis] else [])
    same(np.take(t, np.array(idx, dtype=np.int64), axis=axis), np.take(a, np.array(idx, dtype=np.int64), axis=axis))
    same(np.flip(t, axis), np.flip(a, axis))
    same(np.roll(t, 2, axis), np.roll(a, 2, axis))
    same(np.moveaxis(t, axis, 0), np.moveaxis(a, axis, 0))
    same(np.expand_dims(t, 0), np.expand_dims(a, 0))
    same(np.diff(t, axis=axis), np.diff(a, axis=axis))
    same(np.zeros_like(t), np.zeros_like(a))
    same(np.full_like(t, 7), np.full_like(a, 7))
    assert np.shape(t) == a.shape and np.ndim(t) == a.ndim and np.size(t) == a.size
    assert np.allclose(t, a) and np.array_equal(t, a)
    c = np.copy(t)
    assert isinstance(c, sd.Tensor) and not sd.same_buffer(c, t)


def test_linalg_through_numpy_names():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((4, 4))
    m = m @ m.T + 4 * np.eye(4)
    t = sd.asarray(m)
    for name in ("inv", "det", "cholesky"):
        got = getattr(np.linalg, name)(t)
        assert isinstance(got, sd.Tensor)
        same(got, getattr(np.linalg, name)(m), rtol=1e-10)
    same(np.dot(t, t), m @ m, rtol=1e-12)
    same(np.tensordot(t, t, axes=1), m @ m, rtol=1e-12)
    same(np.linalg.solve(t, sd.asarray(m[:, 0])), np.linalg.solve(m, m[:, 0]), rtol=1e-10)


def test_np_dtype_of_every_dtype():
    for d in (sd.f16, sd.bf16, sd.f32, sd.f64, sd.u8, sd.u32, sd.i64, sd.bool):
        assert np.dtype(d) == d.np
        assert np.dtype(sd.zeros((1,), d).dtype) == d.np
        assert np.zeros(2, dtype=d).dtype == d.np  # numpy accepts a strided dtype wherever it takes one


@pytest.mark.parametrize("call", [
    lambda t: np.median(t), lambda t: np.partition(t, 1), lambda t: np.ptp(t), lambda t: np.gcd(t.astype(int), 4),
    lambda t: np.add.accumulate(t), lambda t: np.sum(t, where=t > 1.5),
    lambda t: np.add(t, 1, where=t > 1.5, out=t * 0),
    lambda t: np.reshape(t, (3,), order="F"), lambda t: np.where(t > 1.5),
])
def test_what_strided_has_no_kernel_for_numpy_computes_on_views(call):
    # TypeErrors before issue 27; now NumPy's answer, as tensors
    a = np.array([3.0, 1.0, 2.0])
    got, want = call(sd.asarray(a)), call(a)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, sd.Tensor)
        same(g, w)


def test_internal_numpy_exchange_still_gives_ndarrays():
    t = sd.asarray(np.arange(6.0).reshape(2, 3)).mT
    a = np.asarray(t)
    assert type(a) is np.ndarray and np.shares_memory(a, t.numpy())
    assert type(np.array(t)) is np.ndarray
    assert type(np.ascontiguousarray(t)) is np.ndarray
    np.testing.assert_array_equal(t, np.arange(6.0).reshape(2, 3).T)  # testing helpers read it as an array
