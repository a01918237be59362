"""Tensor views and copies: seed 004's tables, buffer sharing, and indexing against NumPy."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import strided as sd
from strided import same_buffer


def _a34():
    return sd.arange(12, dtype=sd.f32).reshape(3, 4)


# Seed 004, "views and copies of a (3, 4) tensor": dims, stride, offset, contiguous, same buffer.
SEED_004_TABLE = [
    ("a", lambda a: a, [3, 4], [4, 1], 0, True, True),
    ("a.clone()", lambda a: a.clone(), [3, 4], [4, 1], 0, True, True),
    ("a.reshape((2, 6))", lambda a: a.reshape((2, 6)), [2, 6], [6, 1], 0, True, True),
    ("a.unsqueeze(0)", lambda a: a.unsqueeze(0), [1, 3, 4], [4, 4, 1], 0, True, True),
    ("a.t()", lambda a: a.t(), [4, 3], [1, 4], 0, False, True),
    ("a.t().contiguous()", lambda a: a.t().contiguous(), [4, 3], [3, 1], 0, True, False),
    ("a.t().reshape(12)", lambda a: a.t().reshape(12), [12], [1], 0, True, False),
    ("a.i((1.., 1..3))", lambda a: a[1:, 1:3], [2, 2], [4, 1], 5, False, True),
    ("a.i(2)", lambda a: a.i(2), [4], [1], 8, True, True),
    ("a.i((.., 2))", lambda a: a[:, 2], [3], [4], 2, False, True),
    ("a.broadcast_as((2, 3, 4))", lambda a: a.broadcast_as((2, 3, 4)), [2, 3, 4], [0, 4, 1], 0, False, True),
    ("a.to_dtype(F32)", lambda a: a.to_dtype(sd.f32), [3, 4], [4, 1], 0, True, True),
    ("a.detach()", lambda a: a.detach(), [3, 4], [4, 1], 0, True, True),
    ("a.copy()", lambda a: a.copy(), [3, 4], [4, 1], 0, True, False),
    ("(&a + 1.0)", lambda a: a + 1.0, [3, 4], [4, 1], 0, True, False),
]


@pytest.mark.parametrize("name,make,dims,stride,offset,contiguous,same", SEED_004_TABLE,
                         ids=[r[0] for r in SEED_004_TABLE])
def test_seed_004_fifteen_operations(name, make, dims, stride, offset, contiguous, same):
    a = _a34()
    t = make(a)
    assert list(t.shape) == dims
    assert list(t.stride) == stride
    assert t.offset == offset
    assert t.is_contiguous() is contiguous
    assert same_buffer(t, a) is same


def test_seed_004_view_and_copy_hold_the_same_values():
    t = sd.arange(12, dtype=sd.f32).reshape(3, 4).t()
    tc = t.contiguous()
    assert t.i(0).tolist() == [0.0, 4.0, 8.0] == tc.i(0).tolist()
    assert np.array_equal(t.numpy(), tc.numpy())


SEED_004_EXERCISE_1 = [
    ("a.permute((2, 0, 1))", lambda a: a.permute((2, 0, 1)), False, True),
    ("a.permute((2, 0, 1)).flatten_all()", lambda a: a.permute((2, 0, 1)).flatten_all(), True, False),
    ("a.flatten_all()", lambda a: a.flatten_all(), True, True),
    ("a.i((.., 1, ..))", lambda a: a[:, 1, :], False, True),
    ("a.i((.., 1, ..)).contiguous()", lambda a: a[:, 1, :].contiguous(), True, False),
    ("a.i((1, ..)).contiguous()", lambda a: a[1, ...].contiguous(), True, True),
    ("a.squeeze(0)", lambda a: a.squeeze(0), True, True),
    ("a.transpose(1, 1)", lambda a: a.transpose(1, 1), True, True),
]


@pytest.mark.parametrize("name,make,contiguous,same", SEED_004_EXERCISE_1, ids=[r[0] for r in SEED_004_EXERCISE_1])
def test_seed_004_exercise_1(name, make, contiguous, same):
    a = sd.arange(24, dtype=sd.f32).reshape((2, 3, 4))
    t = make(a)
    assert t.is_contiguous() is contiguous
    assert same_buffer(t, a) is same
    np.testing.assert_array_equal(t.numpy(), make_np(name))


def make_np(name):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    return {
        "a.permute((2, 0, 1))": a.transpose(2, 0, 1),
        "a.permute((2, 0, 1)).flatten_all()": a.transpose(2, 0, 1).reshape(-1),
        "a.flatten_all()": a.reshape(-1),
        "a.i((.., 1, ..))": a[:, 1, :],
        "a.i((.., 1, ..)).contiguous()": a[:, 1, :],
        "a.i((1, ..)).contiguous()": a[1],
        "a.squeeze(0)": a,
        "a.transpose(1, 1)": a,
    }[name]


def test_seed_004_exercise_2_memory_behind_a_broadcast():
    bias = sd.zeros(1000, dtype=sd.f32)
    wide = bias.broadcast_as((1000, 1000))
    copy = wide.contiguous()
    row = copy.i(0)
    small = row.copy()
    compact = row.force_contiguous()
    assert (wide.numel, wide.buffer_nbytes) == (1_000_000, 4000)
    assert copy.buffer_nbytes == 4_000_000
    assert (row.numel, row.buffer_nbytes) == (1000, 4_000_000)
    # The deliberate difference from candle: copy() holds only the viewed elements.
    assert small.buffer_nbytes == 4000
    assert compact.buffer_nbytes == 4000


def test_from_numpy_shares_memory_for_any_strides():
    base = np.arange(60, dtype=np.float64).reshape(5, 12)
    view = base[4:0:-2, 10:1:-3]  # negative strides in both dims
    t = sd.from_numpy(view)
    assert t.shape == view.shape
    assert t.stride == (-24, -3)
    np.testing.assert_array_equal(t.numpy(), view)
    assert t.numpy().__array_interface__["data"][0] == view.__array_interface__["data"][0]
    t.numpy()[0, 0] = -1.0
    assert base[4, 10] == -1.0
    base[2, 7] = -7.0
    assert t.numpy()[1, 1] == -7.0
    assert sd.from_numpy(np.zeros((3, 0))).shape == (3, 0)


def test_tensor_copies_and_clone_shares():
    src = [[1.0, 2.0], [3.0, 4.0]]
    t = sd.tensor(src)
    assert t.dtype is sd.f32  # PyTorch's default float dtype
    assert sd.tensor([1, 2]).dtype is sd.i64 and sd.tensor([True]).dtype is sd.bool
    a = np.ones(3)
    t = sd.tensor(a)
    assert t.dtype is sd.f64 and not same_buffer(t, sd.from_numpy(a))
    c = t.clone()
    assert same_buffer(c, t)


INDEX_PARTS = st.one_of(
    st.integers(-3, 2),
    st.builds(slice, st.none() | st.integers(-4, 4), st.none() | st.integers(-4, 4),
              st.sampled_from([None, 1, 2, -1, -2])),
    st.just(None),
    st.just(Ellipsis),
)


@given(st.lists(INDEX_PARTS, max_size=4))
def test_getitem_matches_numpy(parts):
    base = np.arange(3 * 4 * 3, dtype=np.int64).reshape(3, 4, 3)
    t = sd.from_numpy(base)
    index = tuple(parts)
    try:
        want = base[index]
    except IndexError:
        with pytest.raises(IndexError):
            t[index]
        return
    got = t[index]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    assert same_buffer(got, t)


def test_as_strided_validates_against_the_buffer():
    t = sd.arange(10, dtype=sd.f32)
    v = sd.as_strided(t, (3, 3), (3, 1), 1)
    np.testing.assert_array_equal(v.numpy(), np.arange(1, 10, dtype=np.float32).reshape(3, 3))
    v = sd.as_strided(t, (4,), (-3,), 9)
    assert v.tolist() == [9.0, 6.0, 3.0, 0.0]
    for shape, stride, offset in [((4,), (3,), 1), ((2,), (1,), -1), ((3,), (2**70,), 0), ((2, 2), (-5, 1), 2)]:
        with pytest.raises(sd.StridedError, match="out of bounds"):
            sd.as_strided(t, shape, stride, offset)
    assert sd.as_strided(t, (0, 5), (99, 99), 1000).numel == 0
