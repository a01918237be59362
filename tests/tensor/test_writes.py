"""Writes through views (ViewCopy): setitem, copy_, fill_, in-place ops, memory overlap."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import strided as sd
from strategies import layouts_of_shape, shapes


def test_candle_slice_assign_literals():
    t = sd.arange(20, dtype=sd.u32).reshape((4, 5))
    src = sd.arange(6, dtype=sd.u32).reshape((3, 2))
    out = t.copy()
    out[1:4, 3:5] = src
    assert out.tolist() == [[0, 1, 2, 3, 4], [5, 6, 7, 0, 1], [10, 11, 12, 2, 3], [15, 16, 17, 4, 5]]
    out = t.copy()
    out[0:3, 0:2] = src
    assert out.tolist() == [[0, 1, 2, 3, 4], [2, 3, 7, 8, 9], [4, 5, 12, 13, 14], [15, 16, 17, 18, 19]]


def test_const_set_through_views():
    t = sd.zeros((2, 3), dtype=sd.f32)
    t.fill_(42.0)
    assert t.tolist() == [[42.0] * 3] * 2
    t[:, 1].fill_(-1)
    t.t()[2] = 7  # a strided row of the transpose is a column of t
    assert t.tolist() == [[42.0, -1.0, 7.0], [42.0, -1.0, 7.0]]
    t[...] = sd.tensor([1.0, 2.0, 3.0])  # broadcast source
    assert t.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_numpy_overlapping_assignment_cases():
    # NumPy's answers since 1.13: the source is read as it was before the write.
    x = np.arange(16, dtype=np.float64).reshape(4, 4)
    t = sd.tensor(x)
    want = x.copy()
    want[...] = want.T
    t[...] = t.T
    np.testing.assert_array_equal(t.numpy(), want)

    y = np.arange(10, dtype=np.int64)
    t = sd.tensor(y)
    t[1:] = t[:-1]
    want = y.copy()
    want[1:] = want[:-1]
    np.testing.assert_array_equal(t.numpy(), want)

    t = sd.tensor(y)
    t[:-1] = t[1:]
    want = y.copy()
    want[:-1] = want[1:]
    np.testing.assert_array_equal(t.numpy(), want)

    t = sd.tensor(y)
    t[::-1] = t
    np.testing.assert_array_equal(t.numpy(), y[::-1])

    x = np.arange(16, dtype=np.float64).reshape(4, 4)
    t = sd.tensor(x)
    t += t.T
    np.testing.assert_array_equal(t.numpy(), x + x.T)


def test_writing_into_an_overlapping_view_is_an_error():
    t = sd.zeros(4)
    wide = t.broadcast_as((3, 4))
    with pytest.raises(sd.StridedError, match="sharing memory"):
        wide.fill_(1.0)
    over = sd.as_strided(t, (3, 2), (1, 1), 0)
    with pytest.raises(sd.StridedError, match="sharing memory"):
        over.copy_(sd.ones((3, 2)))
    # explicitly allowed: a constant written through an overlapping view is well defined
    wide.fill_(2.0, allow_overlap=True)
    assert t.tolist() == [2.0] * 4
    over.copy_(sd.full((3, 2), 5.0), allow_overlap=True)
    assert t.tolist() == [5.0, 5.0, 5.0, 5.0]


def test_source_leading_size_one_dims_are_dropped_like_numpy():
    for dst_shape, src_shape, index in [((3, 4), (1, 4), 0), ((3, 4), (1, 1, 2, 4), slice(0, 2)), ((2,), (1, 1), ...)]:
        want = np.zeros(dst_shape, np.float32)
        src = np.arange(np.prod(src_shape), dtype=np.float32).reshape(src_shape) + 1
        want[index] = src
        t = sd.zeros(dst_shape)
        t[index] = sd.tensor(src)
        np.testing.assert_array_equal(t.numpy(), want)
    with pytest.raises(sd.ShapeError, match=r"cannot broadcast source of shape \(2, 4\)"):
        sd.zeros((3, 4))[0] = sd.zeros((2, 4))  # only size-1 leading dims go
    t = sd.zeros(4)
    with pytest.raises(sd.ShapeError, match="copy_"):
        t.copy_(sd.ones((1, 4)))  # PyTorch refuses this too
    with pytest.raises(sd.ShapeError, match="in-place add"):
        t += sd.ones((1, 4))  # NumPy: non-broadcastable output operand


@pytest.mark.parametrize("src", [sd.zeros((2, 1)), sd.zeros((5, 1, 1)), -1, [1, 2]])
def test_an_empty_destination_still_checks_the_source(src):
    """NumPy checks shape and value before it sees that nothing is written."""
    t = sd.zeros((3, 1), "u8")
    with pytest.raises(sd.StridedError):
        t[1:1] = src
    with pytest.raises(sd.StridedError):
        t[1:1].copy_(src)


def test_read_only_buffers_refuse_writes():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = sd.from_numpy(a)
    with pytest.raises(sd.StridedError, match="read-only"):
        t.fill_(0)


@given(st.data())
def test_copy_into_random_destination_views(data):
    shape = data.draw(shapes(max_rank=4))
    dst_lay, dst_len = data.draw(layouts_of_shape(shape, allow_broadcast=False))
    src_lay, src_len = data.draw(layouts_of_shape(shape))
    dst_buf = np.arange(dst_len, dtype=np.float64) * -1
    src_buf = np.arange(src_len, dtype=np.float64) + 1000
    dst = sd.as_strided(sd.from_numpy(dst_buf), dst_lay.shape, dst_lay.stride, dst_lay.offset)
    src = sd.as_strided(sd.from_numpy(src_buf), src_lay.shape, src_lay.stride, src_lay.offset)
    want = dst_buf.copy()
    for o_dst, o_src in zip(dst_lay.strided_index(), src_lay.strided_index()):
        want[o_dst] = src_buf[o_src]
    dst.copy_(src)
    np.testing.assert_array_equal(dst_buf, want)  # untouched elements stay, viewed ones take src


@given(st.data())
def test_self_overlapping_copies_match_numpy(data):
    n = data.draw(st.integers(1, 12))
    base = np.arange(n * 2, dtype=np.int64)
    t = sd.tensor(base)
    a0, a1 = sorted(data.draw(st.lists(st.integers(0, n * 2), min_size=2, max_size=2)))
    k = a1 - a0
    b0 = data.draw(st.integers(0, n * 2 - k))
    step = data.draw(st.sampled_from([1, -1]))
    want = base.copy()
    src_slice = slice(b0, b0 + k) if step == 1 or k == 0 else slice(b0 + k - 1, b0 - 1 if b0 else None, -1)
    want[a0:a1] = want[src_slice]
    t[a0:a1] = t[src_slice]
    np.testing.assert_array_equal(t.numpy(), want)
