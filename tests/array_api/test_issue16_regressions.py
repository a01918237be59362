"""Bugs found by external tests (issue 16, item 5), each pinned by a regression test."""

import numpy as np
import pytest

import strided as sd


def test_f64_tensor_from_python_floats_does_not_go_through_f32():
    t = sd.tensor([0.1], dtype=sd.f64)
    assert t.dtype is sd.f64
    assert t.tolist() == [0.1]  # 0.10000000149011612 when it went through f32
    assert sd.tensor([1e300], dtype=sd.f64).tolist() == [1e300]  # inf through f32
    assert sd.tensor([[0.1, 1e-320]], dtype="float64").tolist() == [[0.1, 1e-320]]
    # one rounding, not two: bf16 of a Python float is NumPy's bf16 of the double
    x = 1.0 + 2.0 ** -8 + 2.0 ** -30  # rounds up in one step, to even (down) through f32
    assert (sd.tensor([x], dtype=sd.bf16).numpy().view(np.uint16)[0]
            == np.array([x]).astype(sd.bf16.np).view(np.uint16)[0])
    # without a dtype, Python floats still default to f32
    assert sd.tensor([0.1]).dtype is sd.f32


@pytest.mark.parametrize("fn", [sd.zeros, sd.empty, sd.ones])
def test_explicit_dtype_none_is_the_default(fn):
    assert fn((2, 3), dtype=None).dtype is fn((2, 3)).dtype is sd.f32
    assert fn((2,), None).dtype is sd.f32


@pytest.mark.parametrize("fn", [sd.rand, sd.randn])
def test_random_dtype_none_is_the_default(fn):
    assert fn(2, 3, dtype=None).dtype is fn(2, 3).dtype is sd.f32


def test_ones_dtype_none_is_float_not_int():
    np.testing.assert_array_equal(sd.ones((2,), dtype=None).numpy(), np.ones(2, np.float32))


def test_none_is_not_a_dtype_for_conversions():
    # np.dtype(None) is float64; a conversion to None must not quietly mean that
    with pytest.raises(sd.StridedError, match="None"):
        sd.zeros((2,)).to_dtype(None)


@pytest.mark.parametrize("shapes", [
    ((2, 1), (1, 3)), ((3,), (2, 1)), ((), (4,)), ((5, 1, 2), (7, 1)), ((0, 1), (1, 4)),
])
def test_broadcast_shapes_is_numpys(shapes):
    assert sd.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_takes_ints_and_refuses_mismatches():
    assert sd.broadcast_shapes(3, (2, 1)) == np.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert sd.broadcast_shapes() == np.broadcast_shapes() == ()
    with pytest.raises(sd.ShapeError, match="broadcast_shapes"):
        sd.broadcast_shapes((2, 3), (4,))
    with pytest.raises(sd.StridedError, match="broadcast_shapes"):
        sd.broadcast_shapes(("a",))


def test_numpy_dtype_spellings_are_dtypes():
    for spelling, want in [("f8", sd.f64), ("<f4", sd.f32), ("?", sd.bool), ("u1", sd.u8), ("int64", sd.i64)]:
        assert sd.dtype.as_dtype(spelling) is want
    with pytest.raises(sd.DTypeError, match="unknown dtype name"):
        sd.dtype.as_dtype("f3")
    with pytest.raises(sd.DTypeError):
        sd.dtype.as_dtype("M8")  # datetime64: NumPy knows it, strided holds no such dtype


def test_full_names_its_value_as_the_standard_does():
    # the conformance suite's signature check: generic code calls full(shape, fill_value=...)
    import inspect

    import array_api_strict as xps

    assert list(inspect.signature(sd.full).parameters)[:2] == list(inspect.signature(xps.full).parameters)[:2]
    got = sd.full((2, 3), fill_value=2.5, dtype=sd.float64)
    np.testing.assert_array_equal(got.numpy(), np.asarray(xps.full((2, 3), fill_value=2.5, dtype=xps.float64)))
