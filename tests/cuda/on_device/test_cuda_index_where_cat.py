"""where, index_select/take and cat on CUDA against NumPy on drawn layouts (negative
strides, broadcasts, zero-size dims): in numba-cuda's simulator on every run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.cuda import index as cuda_index
from strided.layout import Layout

from strategies import bits, layouts_of_shape, np_view, random_buffer, shapes

DTYPES = [np.float32, np.float64, np.int64, np.uint8, np.bool_, np.float16]
SMALL = settings(max_examples=30, deadline=None)


def on_cuda(host, lay=None):
    t = sd.from_numpy(host).to_device("cuda")
    return t if lay is None else sd.as_strided(t, lay.shape, lay.stride, lay.offset)


@SMALL
@given(st.data(), st.sampled_from([np.float32, np.float64, np.int64, np.uint8]), st.integers(0, 2**32 - 1))
def test_where_on_drawn_layouts_and_broadcasts_matches_numpy(data, dtype, seed):
    shape = data.draw(shapes(max_rank=3, max_size=8, max_numel=300))
    (lc, nc), (la, na), (lb, nb) = (data.draw(layouts_of_shape(shape)) for _ in range(3))
    rng = np.random.default_rng(seed)
    hc, ha, hb = rng.random(nc) < 0.5, rng.integers(0, 50, na).astype(dtype), rng.integers(0, 50, nb).astype(dtype)
    c, a, b = on_cuda(hc, lc), on_cuda(ha, la), on_cuda(hb, lb)
    vc, va, vb = np_view(hc, lc), np_view(ha, la), np_view(hb, lb)
    got = sd.where(c, a, b)
    assert got.device == "cuda:0"
    assert np.array_equal(got.numpy(), np.where(vc, va, vb))
    first = (slice(None, 1),) * len(shape)
    assert np.array_equal(sd.where(c, a[first], 7).numpy(), np.where(vc, va[first], dtype(7)))  # broadcast, scalar


@SMALL
@given(st.data(), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_index_select_on_drawn_layouts_matches_numpy_take(data, dtype, seed):
    shape = data.draw(shapes(min_rank=1, max_rank=3, max_size=8, max_numel=300))
    lay, n = data.draw(layouts_of_shape(shape))
    dim = data.draw(st.integers(0, len(shape) - 1))
    size = shape[dim]
    idx = data.draw(st.lists(st.integers(-size, size - 1), max_size=6)) if size else []
    host = random_buffer(np.random.default_rng(seed), dtype, n)
    g = on_cuda(host, lay)
    want = np.take(np_view(host, lay), np.array(idx, np.int64), axis=dim)
    got = g.index_select(idx, dim)
    assert got.device == "cuda:0" and got.shape == want.shape
    assert (bits(got.numpy()) == bits(want)).all()
    got = sd.take(g, sd.tensor(np.array(idx, np.int64), device="cuda"), axis=dim)  # a device index
    assert (bits(got.numpy()) == bits(want)).all()


def test_index_select_refuses_bad_indices_by_name():
    g = on_cuda(np.arange(6.0).reshape(2, 3))
    with pytest.raises(sd.StridedIndexError, match="index_select: index 3 is out of bounds for dim 1 with size 3"):
        g.index_select([0, 3], 1)
    with pytest.raises(sd.StridedError, match="index_select: expected src on the CUDA device, got a host numpy array"):
        cuda_index.index_select(g.storage.data, Layout((1, 3)), np.zeros(6), Layout((2, 3)), 0, np.array([0]))


@SMALL
@given(st.data(), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_cat_of_drawn_views_matches_numpy_concatenate(data, dtype, seed):
    shape = data.draw(shapes(min_rank=1, max_rank=3, max_size=6, max_numel=200))
    dim = data.draw(st.integers(0, len(shape) - 1))
    k = data.draw(st.integers(1, 3))
    rng = np.random.default_rng(seed)
    views, wants = [], []
    for _ in range(k):
        part = shape[:dim] + (data.draw(st.integers(0, 4)),) + shape[dim + 1:]
        lay, n = data.draw(layouts_of_shape(part))
        host = random_buffer(rng, dtype, n)
        views.append(on_cuda(host, lay))
        wants.append(np_view(host, lay))
    got = sd.cat(views, dim)
    want = np.concatenate(wants, axis=dim)
    assert got.device == "cuda:0" and got.shape == want.shape
    assert (bits(got.numpy()) == bits(want)).all()
    again = sd.cat(views, dim)  # a repeat: no host-side kept plan for a device
    assert again.device == "cuda:0" and (bits(again.numpy()) == bits(want)).all()


def test_cat_promotes_and_refuses_mixed_devices():
    a = on_cuda(np.arange(4, dtype=np.int64).reshape(2, 2))
    b = on_cuda(np.full((2, 1), 0.5))
    got = sd.cat([a, b], 1)
    assert got.device == "cuda:0" and got.numpy().tolist() == [[0.0, 1.0, 0.5], [2.0, 3.0, 0.5]]
    with pytest.raises(sd.StridedError, match=r"cat: .*'cuda:0' and 'cpu'"):
        sd.cat([a, sd.zeros((2, 2), dtype=sd.i64)], 0)
