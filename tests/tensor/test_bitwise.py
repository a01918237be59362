"""& | ^ ~ are NumPy's bitwise operators (they were logical and/or on integers, a silent
wrong answer: 5 & 3 gave 1, NumPy gives 1 too, but 12 & 10 gave 1 where NumPy gives 8)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import strided as sd

INTS = {"u8": np.uint8, "u32": np.uint32, "i64": np.int64, "bool": np.bool_}


def _values(rng, dt, shape):
    if dt is np.bool_:
        return rng.random(shape) > 0.5
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -(2**40)), min(info.max, 2**40), shape, endpoint=True).astype(dt)


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor])
@pytest.mark.parametrize("da,db", [("u8", "u8"), ("u32", "u32"), ("i64", "i64"), ("u8", "i64"), ("bool", "bool"),
                                   ("bool", "u8"), ("u32", "i64")])
def test_bitwise_binary_matches_numpy_on_views(op, da, db):
    rng = np.random.default_rng(hash((op.__name__, da, db)) % 2**32)
    x = _values(rng, INTS[da], (6, 5))
    y = _values(rng, INTS[db], (5, 6))
    a, b = sd.tensor(x), sd.tensor(y)
    # a transposed operand, a flipped one, and a broadcast row
    for got, want in ((op(a, b.t()), op(x, y.T)), (op(a.flip(0), b.t()), op(x[::-1], y.T)),
                      (op(a, b[0, :5]), op(x, y[0, :5]))):
        assert got.dtype.name == want.dtype.name or np.dtype(got.dtype) == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_the_old_logical_answer_is_gone():
    a, b = sd.tensor([12, 5], dtype=sd.i64), sd.tensor([10, 3], dtype=sd.i64)
    assert (a & b).tolist() == [8, 1]
    assert (a | b).tolist() == [14, 7]
    assert (a ^ b).tolist() == [6, 6]


@pytest.mark.parametrize("dt", ["u8", "u32", "i64", "bool"])
def test_invert_matches_numpy(dt):
    x = _values(np.random.default_rng(1), INTS[dt], (4, 7))
    t = sd.tensor(x)
    np.testing.assert_array_equal((~t).numpy(), ~x)
    np.testing.assert_array_equal((~t.t()).numpy(), ~x.T)


def test_scalars_reflected_and_in_place():
    x = np.arange(10, dtype=np.int64)
    t = sd.tensor(x)
    np.testing.assert_array_equal((t & 6).numpy(), x & 6)
    np.testing.assert_array_equal((6 | t).numpy(), 6 | x)
    np.testing.assert_array_equal((3 ^ t).numpy(), 3 ^ x)
    v = t[::2]
    v &= 3  # writes through the view into t's buffer
    x[::2] &= 3
    np.testing.assert_array_equal(t.numpy(), x)
    t |= sd.tensor(np.full(10, 16, np.int64))
    np.testing.assert_array_equal(t.numpy(), x | 16)


def test_floats_are_refused_by_name():
    with pytest.raises(sd.StridedError, match="bitwise_and"):
        sd.tensor([1.5]) & 1
    with pytest.raises(sd.StridedError, match="bitwise_invert"):
        ~sd.tensor([1.5])
