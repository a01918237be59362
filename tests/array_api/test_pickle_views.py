"""Pickling keeps a view's span (issue 16, item 4): a view pickles its reach of the buffer and
its layout, not an expanded copy nor the rest of the buffer; protocol 5 carries large
contiguous data out of band."""

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given

import strided as sd
from test_array_api_namespace import tensors


def test_a_broadcast_pickles_its_buffer_not_its_expansion():
    t = sd.asarray(np.array([1.0, 2.0, 3.0], np.float32))  # 12 bytes
    b = sd.broadcast_to(t, (100000, 3))
    data = pickle.dumps(b)
    assert len(data) < 1024, len(data)
    back = pickle.loads(data)
    assert back.shape == (100000, 3) and back.stride == (0, 1) and back.dtype is sd.f32
    np.testing.assert_array_equal(back.numpy(), np.broadcast_to(np.array([1, 2, 3], np.float32), (100000, 3)))
    assert back.buffer_nbytes == 12


def test_a_window_view_keeps_its_overlap():
    base = sd.arange(1000, dtype=sd.f64)
    win = sd.as_strided(base, (991, 10), (1, 1))  # sliding windows: 9910 elements over 1000
    back = pickle.loads(pickle.dumps(win))
    assert back.stride == (1, 1) and back.buffer_nbytes == 1000 * 8
    np.testing.assert_array_equal(back.numpy(), win.numpy())


def test_a_view_carries_only_its_reach():
    base = sd.arange(10000, dtype=sd.f64)
    part = base[5000:5010].reshape((2, 5)).mT  # a transposed piece: its reach is 10 elements
    back = pickle.loads(pickle.dumps(part))
    assert back.buffer_nbytes == 80 and back.stride == part.stride
    np.testing.assert_array_equal(back.numpy(), part.numpy())
    sparse = base[::1000]  # 10 elements spread over the whole buffer: a compact copy
    back = pickle.loads(pickle.dumps(sparse))
    assert back.buffer_nbytes == 80 and back.is_contiguous()
    np.testing.assert_array_equal(back.numpy(), sparse.numpy())


@given(tensors(max_rank=4))
def test_any_layout_round_trips(tx):
    t, a = tx
    for proto in (2, 4, 5):
        back = pickle.loads(pickle.dumps(t, protocol=proto))
        assert back.shape == t.shape and back.dtype is t.dtype
        np.testing.assert_array_equal(back.numpy(), a)
        lo, hi = t.layout.span()
        assert back.numel == 0 or back.buffer_nbytes <= min(hi - lo, t.numel) * t.dtype.itemsize
    d = copy.deepcopy(t)
    np.testing.assert_array_equal(d.numpy(), a)
    assert not sd.same_buffer(d, t) or t.numel == 0


@pytest.mark.parametrize("dtype", [sd.f32, sd.bf16, sd.f16, sd.u8, sd.bool, sd.i64])
def test_protocol_5_sends_large_buffers_out_of_band(dtype):
    t = sd.zeros((512, 1024), dtype=dtype)
    t[1, 2] = 1
    view = t.mT[::-1]  # its reach is the whole buffer, walked in another order
    buffers = []
    data = pickle.dumps(view, protocol=5, buffer_callback=buffers.append)
    assert len(data) < 1024 and len(buffers) == 1
    assert buffers[0].raw().nbytes == t.buffer_nbytes
    back = pickle.loads(data, buffers=buffers)
    assert back.stride == view.stride and back.dtype is dtype
    np.testing.assert_array_equal(back.numpy(), view.numpy())
    # the out-of-band buffer is shared, not copied: the rebuilt tensor reads the sender's memory
    assert np.shares_memory(back.numpy(), t.numpy())


def test_rebuild_refuses_a_bad_layout():
    buf, shape, stride, offset = sd.creation.pickled_parts(sd.arange(4))
    with pytest.raises(sd.StridedError, match="out of bounds"):
        sd.creation.rebuild_view(buf, (5,), (1,), 0, "i64")
    with pytest.raises(sd.DTypeError, match="rebuild_view"):
        sd.creation.rebuild_view(buf, shape, stride, offset, "f32")
