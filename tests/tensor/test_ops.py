"""Math on tensors against NumPy: any layout in, NumPy's values, dtypes and shapes out."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import strided as sd
from strategies import layouts_of_shape, shapes, view_chains

DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "u8": np.uint8}


def _values(n, np_dtype, rng):
    if np.dtype(np_dtype).kind == "f":
        return rng.uniform(-3, 3, size=n).astype(np_dtype)
    if np_dtype == np.uint8:
        return rng.integers(0, 255, size=n).astype(np_dtype)
    return rng.integers(-50, 50, size=n).astype(np_dtype)


@st.composite
def operand(draw, np_dtype=np.float32, shape=None):
    """(strided tensor, the same values as a numpy array) for a random view."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if shape is None:
        _, lay, offs, base = draw(view_chains())
        vals = _values(max(base.size, 1), np_dtype, rng)
        t = sd.as_strided(sd.from_numpy(vals), lay.shape, lay.stride, lay.offset)
        return t, vals[offs] if offs.size else np.empty(lay.shape, np_dtype)
    lay, buflen = draw(layouts_of_shape(tuple(shape)))
    vals = _values(buflen, np_dtype, rng)
    t = sd.as_strided(sd.from_numpy(vals), lay.shape, lay.stride, lay.offset)
    ref = np.array([vals[o] for o in lay.strided_index()], dtype=np_dtype).reshape(lay.shape)
    return t, ref


def _close(got, want, np_dtype):
    assert got.shape == want.shape
    if np.dtype(np_dtype).kind == "f":
        tol = 1e-5 if np.dtype(np_dtype) == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sqr": np.square, "abs": np.abs, "neg": np.negative,
    "relu": lambda x: np.maximum(x, 0), "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "sin": np.sin, "cos": np.cos,
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@given(st.sampled_from(sorted(UNARY)), operand())
def test_unary_f32_any_layout(op, case):
    t, ref = case
    got = getattr(t, op)()
    assert got.dtype is sd.f32
    _close(got.numpy(), UNARY[op](ref).astype(np.float32), np.float32)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
}


@given(st.sampled_from(sorted(BINARY)), st.sampled_from(["f32", "f64", "i64"]), st.data())
def test_binary_same_shape_any_layouts(op, dname, data):
    np_dtype = DTYPES[dname]
    shape = data.draw(shapes(max_rank=5))
    a, ra = data.draw(operand(np_dtype, shape))
    b, rb = data.draw(operand(np_dtype, shape))
    got = getattr(a, op)(b)
    want = BINARY[op](ra, rb)
    assert got.dtype.np == want.dtype
    _close(got.numpy(), want, np_dtype)


@given(st.data())
def test_binary_broadcasts_like_numpy(data):
    shape = data.draw(shapes(min_rank=1, max_rank=4))
    # the right operand drops leading dims and turns some dims to 1
    k = data.draw(st.integers(0, len(shape)))
    other = tuple(1 if data.draw(st.booleans()) else n for n in shape[k:])
    a, ra = data.draw(operand(np.float32, shape))
    b, rb = data.draw(operand(np.float32, other))
    if data.draw(st.booleans()):
        a, b, ra, rb = b, a, rb, ra
    _close((a + b).numpy(), ra + rb, np.float32)
    _close((a * b).numpy(), ra * rb, np.float32)


def test_binary_shape_error_names_both_shapes():
    with pytest.raises(sd.ShapeError, match=r"add.*\(2, 3\).*\(4,\)"):
        sd.zeros((2, 3)) + sd.zeros(4)


def test_scalars_and_promotion_follow_numpy():
    i = sd.tensor(np.array([1, 2, 3], dtype=np.int64))
    f = sd.tensor(np.array([1.5, 2.5, 3.5], dtype=np.float32))
    u = sd.tensor(np.array([250, 3, 7], dtype=np.uint8))
    for got, want in [
        (i + 1, np.array([1, 2, 3]) + 1),
        (i + 1.5, np.array([1, 2, 3]) + 1.5),
        (f * 2, np.array([1.5, 2.5, 3.5], np.float32) * 2),
        (i + f, np.array([1, 2, 3]) + np.array([1.5, 2.5, 3.5], np.float32)),
        (u + 10, np.array([250, 3, 7], np.uint8) + np.uint8(10)),
        (i / 2, np.array([1, 2, 3]) / 2),
        (2 - f, 2 - np.array([1.5, 2.5, 3.5], np.float32)),
        (1 / f, 1 / np.array([1.5, 2.5, 3.5], np.float32)),
    ]:
        assert got.dtype.np == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@given(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]), st.data())
def test_comparisons(op, data):
    shape = data.draw(shapes(max_rank=3))
    a, ra = data.draw(operand(np.int64, shape))
    b, rb = data.draw(operand(np.int64, shape))
    got = getattr(a, op)(b)
    assert got.dtype is sd.bool
    np_name = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
               "ge": "greater_equal"}[op]
    np.testing.assert_array_equal(got.numpy(), getattr(np, np_name)(ra, rb))


_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@pytest.mark.parametrize("np_dtype", [np.uint8, np.int64])
@pytest.mark.parametrize("v", [-1, 256, -(2**63) - 1, 2**64, 2**70])
def test_comparison_with_any_python_int_is_exact_like_numpy(np_dtype, v):
    """NumPy 2 compares with ints outside the dtype exactly; so do we, scalar on either side."""
    vals = np.array([0, 7, 255], dtype=np_dtype)
    env = {"t": sd.tensor(vals), "vals": vals, "v": v}
    for op, sym in _OPS.items():
        pairs = [(f"t {sym} v", f"vals {sym} v"), (f"v {sym} t", f"v {sym} vals")]
        for got, want in [(eval(g, env), eval(w, env)) for g, w in pairs]:
            assert got.dtype is sd.bool
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{op} {v}")


@pytest.mark.parametrize("call", [
    lambda t: t - (-1), lambda t: t + 256, lambda t: sd.where(t > 0, t, -1), lambda t: t.fill_(300),
    lambda t: t.__setitem__(0, -1), lambda t: t.copy_(2**64), lambda t: sd.full((2,), -1, "u8"),
])
def test_python_int_outside_the_dtype_is_refused(call):
    """NumPy 2 raises OverflowError on these; strided names the op and the range."""
    t = sd.tensor(np.array([0, 7, 255], dtype=np.uint8))
    with pytest.raises(sd.StridedError, match=r"out of range for strided.u8 \[0, 255\]"):
        call(t)


def test_huge_python_int_into_floats():
    """bf16 takes an int beyond int64 through float (ml_dtypes alone refuses it); an int beyond
    any float is refused, as NumPy's float conversion refuses it."""
    t = sd.zeros(3, "bf16")
    t.fill_(2**70)
    np.testing.assert_array_equal(t.numpy().astype(np.float64), np.full(3, float(2**70)))
    with pytest.raises(sd.StridedError, match="too large"):
        sd.zeros(3) + 10**400


@pytest.mark.parametrize("n", [4, 300 * 300])  # the small NumPy path and the kernels
def test_maximum_minimum_of_signed_zeros_match_numpy(n):
    a = np.where(np.arange(n) % 2 == 0, -0.0, 0.0).astype(np.float32)
    b = -a
    for op in ("maximum", "minimum"):
        got = getattr(sd.tensor(a), op)(sd.tensor(b)).numpy()
        want = getattr(np, op)(a, b)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=op)
        assert np.signbit(got).tolist() == (np.arange(n) % 2 == 1).tolist()  # the tie goes to b
        for half in ("f16", "bf16"):  # computed in f32: the same tie rule (NumPy's f16 loop gives it to a)
            got = getattr(sd.tensor(a).to_dtype(half), op)(sd.tensor(b).to_dtype(half)).numpy()
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"{op} {half}")


def test_reflected_logical_ops():
    b = sd.tensor([True, False, True])
    np.testing.assert_array_equal((False | b).numpy(), [True, False, True])
    np.testing.assert_array_equal((True & b).numpy(), [True, False, True])


@given(st.sampled_from(["sum", "max", "min", "mean"]), st.data())
def test_reductions_any_dims_any_layout(op, data):
    a, ra = data.draw(operand(np.float64))
    nd = a.ndim
    dims = (data.draw(st.none()
                      | st.lists(st.integers(-nd, nd - 1), unique_by=lambda d: d % nd, max_size=nd).map(tuple))
            if nd else None)
    keep = data.draw(st.booleans())
    axis = None if dims is None else tuple(d % nd for d in dims)
    if op in ("max", "min") and ra.size and any(ra.shape[d] == 0 for d in (axis if axis is not None else range(nd))):
        return
    if op in ("max", "min") and ra.size == 0:
        return
    got = getattr(a, op)(dims, keepdim=keep)
    with np.errstate(all="ignore"):
        want = getattr(np, op if op not in ("max", "min") else "a" + op)(ra, axis=axis, keepdims=keep)
    _close(got.numpy(), np.asarray(want), np.float64)


def test_sum_of_integers_and_argmax():
    a = np.array([[3, 9, 9], [7, 1, 2]], dtype=np.uint8)
    x = sd.tensor(a)
    # an unsigned sum accumulates in the default uint, as NumPy's and the Array API's
    assert x.sum().dtype.np == a.sum().dtype and x.sum().item() == 31
    assert x.argmax(1).tolist() == [1, 0]  # ties pick the first, as NumPy
    assert x.t().argmax(0).tolist() == [1, 0]
    assert x.argmax().item() == 1
    assert x.argmin(0, keepdim=True).tolist() == [[0, 1, 1]]


@given(st.data())
def test_cat_any_layouts(data):
    shape = data.draw(shapes(min_rank=1, max_rank=4))
    dim = data.draw(st.integers(0, len(shape) - 1))
    parts = []
    for _ in range(data.draw(st.integers(1, 4))):
        s = list(shape)
        s[dim] = data.draw(st.integers(0, 3))
        parts.append(data.draw(operand(np.float32, tuple(s))))
    got = sd.cat([p for p, _ in parts], dim)
    np.testing.assert_array_equal(got.numpy(), np.concatenate([r for _, r in parts], axis=dim))
    assert got.is_contiguous()


def test_cat_candle_kv_cache_case():
    # eight [4,128,64] tensors along dims 0 and 1, contiguous and from zeros(64,128,4).transpose(0,2)
    rng = np.random.default_rng(0)
    for make in (lambda a: sd.from_numpy(a),
                 lambda a: sd.from_numpy(np.ascontiguousarray(a.transpose(2, 1, 0))).transpose(0, 2)):
        arrays = [rng.standard_normal((4, 128, 64)).astype(np.float32) for _ in range(8)]
        ts = [make(a) for a in arrays]
        for dim in (0, 1):
            np.testing.assert_array_equal(sd.cat(ts, dim).numpy(), np.concatenate(arrays, dim))


@given(st.data())
def test_index_select_any_layout(data):
    a, ra = data.draw(operand(np.float32))
    if not a.ndim:
        return
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[dim]
    idx = data.draw(st.lists(st.integers(-n, n - 1), max_size=6)) if n else []
    got = a.index_select(sd.tensor(np.array(idx, dtype=np.int64)), dim)
    np.testing.assert_array_equal(got.numpy(), np.take(ra, np.array(idx, dtype=np.int64), axis=dim))


def test_index_select_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match="index_select"):
        sd.zeros((3, 4)).index_select(sd.tensor([0, 3]), 0)


@given(st.data())
def test_where_broadcasts(data):
    shape = data.draw(shapes(max_rank=3))
    c, rc = data.draw(operand(np.int64, shape))
    a, ra = data.draw(operand(np.float32, shape))
    got = sd.where(c > 0, a, 0.5)
    np.testing.assert_array_equal(got.numpy(), np.where(rc > 0, ra, np.float32(0.5)))
    got = (c > 0).where(a, a.neg())
    np.testing.assert_array_equal(got.numpy(), np.where(rc > 0, ra, -ra))


@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_half_precision_computes_in_f32_and_rounds_back(dname):
    import ml_dtypes

    np_dtype = np.float16 if dname == "f16" else ml_dtypes.bfloat16
    x = np.linspace(-2, 2, 24, dtype=np.float32).astype(np_dtype).reshape(4, 6)
    y = np.linspace(1, 3, 24, dtype=np.float32).astype(np_dtype).reshape(6, 4).T
    a, b = sd.from_numpy(x), sd.from_numpy(y)
    got = (a * b + a.exp()).numpy()
    assert got.dtype == np_dtype
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    # each op rounds to the half type, as PyTorch does
    want = ((xf * yf).astype(np_dtype).astype(np.float32)
            + np.exp(xf).astype(np_dtype).astype(np.float32)).astype(np_dtype)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    s = a.sum(1)
    np.testing.assert_allclose(s.numpy().astype(np.float32), xf.sum(1), rtol=1e-2)


def test_elementwise_outputs_follow_input_memory_order():
    a = sd.rand(5, 7)
    b = sd.rand(5, 7)
    assert (a + b).stride == (7, 1)
    c = a.t() + b.t()
    assert c.shape == (7, 5) and c.stride == (1, 7)  # written sequentially, transposed like its inputs
    np.testing.assert_allclose(c.numpy(), a.numpy().T + b.numpy().T)
    assert (a.t().exp()).stride == (1, 7)
