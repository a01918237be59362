"""Any array as an operand, on either side (issue 27, item 1): NumPy arrays of any layout
(0-d too), NumPy scalars, sequences and objects with ``__array__``, ``__array_interface__``
or ``__dlpack__`` go into every binary op, operator, in-place operator and ``where`` of a
tensor, with NumPy 2's promotion, and the result is a Tensor.  NumPy itself is the oracle."""

import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.interop import operand


def _views(base: np.ndarray):
    """The same values seen through layouts NumPy makes: dense, transposed, negative steps, broadcast, 0-d."""
    return {
        "dense": base,
        "transposed": np.ascontiguousarray(base.T).T,
        "flipped": np.ascontiguousarray(base[::-1, ::-1])[::-1, ::-1],
        "strided": np.repeat(base, 2, axis=1)[:, ::2],
        "row broadcast": np.broadcast_to(base[:1], base.shape),
        "0-d": np.array(base[1, 2]),
    }


OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow,
    "<": operator.lt, "==": operator.eq, "!=": operator.ne, ">=": operator.ge, "//": operator.floordiv,
    "%": operator.mod, "max": np.maximum,
}


def _check(got, want):
    assert type(got) is sd.Tensor, type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("sym", sorted(OPS))
def test_ndarray_of_any_layout_on_either_side(sym):
    fn = OPS[sym]
    a = np.arange(1.0, 13.0).reshape(3, 4)
    t32 = sd.asarray(a.astype(np.float32))
    t = sd.asarray(a)
    for name, v in _views(a[::-1] + 0.5).items():
        for tensor, arr in ((t, a), (t32, a.astype(np.float32))):
            if fn is np.maximum:
                _check(sd.maximum(tensor, v), np.maximum(arr, v))
                _check(sd.maximum(v, tensor), np.maximum(v, arr))
                continue
            _check(fn(tensor, v), fn(arr, v))  # Tensor.__op__ with an ndarray
            _check(fn(v, tensor), fn(v, arr))  # ndarray.__op__ defers to the tensor (NEP 13)


def test_numpy_scalars_and_zero_d_arrays_are_typed_as_in_numpy_2():
    t = sd.asarray(np.arange(3, dtype=np.float32))
    a = np.arange(3, dtype=np.float32)
    for v in (np.float64(2), np.array(2.0), np.float32(2), np.int64(3), np.array(3, np.int8), np.bool_(True),
              np.complex64(1j)):
        for fn in (operator.add, operator.mul, operator.truediv):
            _check(fn(t, v), fn(a, v))
            _check(fn(v, t), fn(v, a))
    # Python scalars stay weak, as before
    assert (t * 2.0).dtype is sd.f32 and (t + 1).dtype is sd.f32
    # an integer tensor with a typed NumPy integer scalar promotes as NumPy does
    i8 = sd.asarray(np.arange(3, dtype=np.int8))
    _check(i8 + np.int64(1), np.arange(3, dtype=np.int8) + np.int64(1))


def test_sequences_and_array_like_objects():
    a = np.arange(6.0).reshape(2, 3).astype(np.float32)
    t = sd.asarray(a)

    class WithArray:  # only __array__
        def __array__(self, dtype=None, copy=None):
            return np.full((2, 3), 2.0)

    class WithInterface:  # only __array_interface__ (a view of this array, no copy)
        def __init__(self, arr):
            self.arr = arr
            self.__array_interface__ = arr.__array_interface__

    inner = np.arange(3, dtype=np.int32)
    for v, ref in (([1, 2, 3], [1, 2, 3]), ([[1.5], [2.5]], [[1.5], [2.5]]), ((True, False, True), (True, False, True)),
                   (WithArray(), np.full((2, 3), 2.0)), (WithInterface(inner), inner)):
        _check(t + v, a + np.asarray(ref))
        _check(v - t, np.asarray(ref) - a)
        _check(t * v, a * np.asarray(ref))
    viewed = operand("add", WithInterface(inner[::-2]), "cpu")  # the interface's memory, no copy
    assert np.shares_memory(np.asarray(viewed), inner) and viewed.stride == (-2,)


def test_dlpack_operand_from_torch_is_viewed_without_copy():
    torch = pytest.importorskip("torch")
    a = torch.arange(6, dtype=torch.float64).reshape(2, 3).t()  # a transposed torch view
    t = sd.ones((3, 2), dtype=sd.f32)
    got = t + a
    _check(got, np.ones((3, 2), np.float32) + a.numpy())
    assert sd.same_buffer(operand("add", a, "cpu"), sd.from_dlpack(a))
    _check(a.numpy() - t, a.numpy() - np.ones((3, 2), np.float32))


def test_a_foreign_array_is_viewed_where_it_lies():
    base = np.arange(24.0).reshape(4, 6)
    view = base[::-1, 1::2].T  # transposed, negative and stepped: no copy
    v = operand("add", view, "cpu")
    assert np.shares_memory(np.asarray(v), base) and v.stride == (2, -6)
    zero_d = operand("add", np.array(3.0), "cpu")
    assert zero_d.shape == () and zero_d.dtype is sd.f64


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=0, max_size=3), st.integers(-2, 2).filter(bool),
       st.booleans(), st.booleans())
def test_drawn_layouts_against_numpy(shape, step, transpose, broadcast):
    rng = np.random.default_rng(len(shape) * 7 + step + 2)
    base = rng.uniform(-2, 2, [n * abs(step) for n in shape])
    v = base[tuple(slice(None, None, step) for _ in shape)]
    if transpose:
        v = v.T
    if broadcast and v.ndim:
        v = np.broadcast_to(v[:1], v.shape)
    t = sd.asarray(rng.uniform(-2, 2, v.shape).astype(np.float32))
    w = np.asarray(t)
    _check(t * v, w * v)
    _check(v - t, v - w)
    _check(sd.where(v > 0, t, v), np.where(v > 0, w, v))


def test_in_place_operators_take_arrays():
    a = np.arange(6.0).reshape(2, 3)
    t = sd.asarray(a.copy())
    t += np.arange(3.0)[::-1]
    t *= [[2.0], [3.0]]
    t -= np.float64(1)
    t /= np.array(2.0)
    want = (a + np.arange(3.0)[::-1]) * [[2.0], [3.0]]
    np.testing.assert_allclose(np.asarray(t), (want - 1) / 2)
    u = sd.asarray(np.arange(6, dtype=np.int64))
    u //= np.array([2])
    u %= [3]
    np.testing.assert_array_equal(np.asarray(u), (np.arange(6) // 2) % 3)


def test_where_takes_arrays_in_every_place():
    a = np.arange(6.0).reshape(2, 3)
    t = sd.asarray(a)
    cond = a > 2
    _check(sd.where(cond, t, 0.0), np.where(cond, a, 0.0))
    _check(sd.where(sd.asarray(cond), np.zeros(3, np.float32), t), np.where(cond, np.zeros(3, np.float32), a))
    _check(sd.where(t > 2, np.float32(1), [7, 8, 9]), np.where(cond, np.float32(1), [7, 8, 9]))
    _check(sd.where([True, False, True], t, np.int8(3)), np.where([True, False, True], a, np.int8(3)))


def test_eq_and_ne_with_non_arrays_follow_numpy():
    a = np.arange(6.0).reshape(2, 3)
    t = sd.asarray(a)
    for v in (None, "x", b"x", object(), [None, None, None], ["a", "b", "c"], {"a": 1}):
        _check(t == v, a == v)
        _check(t != v, a != v)
        _check(v == t, v == a)
    for v in (None, "x", object()):
        with pytest.raises(sd.StridedError, match="add: expected a tensor, a number or an array of numbers"):
            t + v
        with pytest.raises(sd.StridedError, match="lt"):
            t < v


def test_bad_operands_get_a_strided_error_naming_the_op():
    t = sd.ones(3)
    with pytest.raises(sd.StridedError, match="mul: cannot read the list operand as an array"):
        t * [[1], [2, 3]]
    with pytest.raises(sd.DTypeError, match="sub: the numpy.ndarray operand has dtype float128|longdouble"):
        t - np.ones(3, np.longdouble)
    with pytest.raises(sd.ShapeError):
        t + np.ones(4)
    torch = pytest.importorskip("torch")
    with pytest.raises(sd.StridedError, match="add: cannot read the torch.Tensor operand"):
        t + torch.ones(3, requires_grad=True)


def test_byte_swapped_arrays_compute():
    a = np.arange(3.0).astype(">f8")
    _check(sd.ones(3, dtype=sd.f64) + a, np.ones(3) + a)


def test_operators_defer_to_arrays_that_dispatch_themselves():
    """``t + x`` for an x with its own ``__array_ufunc__`` (Dask, xarray, pandas) is x's answer, as
    NumPy's ``ndarray + x`` is; the methods and the namespace's functions never defer."""
    seen = []

    class Dispatching:
        __array_ufunc__ = None  # NumPy's marker for "let my reflected operators answer"

        def __radd__(self, other):
            seen.append(type(other))
            return "mine"

        __rmul__ = __req__ = __radd__

        def __eq__(self, other):
            seen.append(type(other))
            return "mine"

    t = sd.ones(3)
    assert t + Dispatching() == "mine" and t * Dispatching() == "mine" and (t == Dispatching()) == "mine"
    assert seen == [sd.Tensor] * 3
    with pytest.raises(sd.StridedError):
        t.add(Dispatching())
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    got = t + masked
    assert isinstance(got, np.ma.MaskedArray) and got.mask.tolist() == [False, True, False]
    pd = pytest.importorskip("pandas")
    s = pd.Series([1.0, 2.0, 3.0])
    assert isinstance(t + s, pd.Series)


def test_kept_decisions_serve_numpy_operands_again():
    t = sd.ones((2, 3))
    first = t + np.ones(3)
    again = t + np.full(3, 2.0)
    np.testing.assert_array_equal(np.asarray(first), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(np.asarray(again), np.full((2, 3), 3.0))
