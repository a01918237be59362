"""The reduce family on CUDA against NumPy, on drawn layouts (negative strides, broadcasts,
zero-size dims) and every dim set: in numba-cuda's simulator on every run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.cuda import reduce as cuda_reduce
from strided.layout import Layout

from strategies import layouts_of_shape, np_view, shapes

NP = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean}


def on_cuda(host, lay):
    return sd.as_strided(sd.from_numpy(host).to_device("cuda"), lay.shape, lay.stride, lay.offset)


def _values(rng, dtype, n, op):
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if op == "prod":  # products of values near 1 stay finite and exact enough
        return (rng.choice([1, 1, 1, 2, -1], n)).astype(dtype) if dtype != np.uint8 and dtype != np.uint32 \
            else rng.choice([1, 1, 2], n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        return (rng.random(n) * 4 - 2).astype(dtype)
    return rng.integers(0, 9, n).astype(dtype)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(["sum", "prod", "max", "min", "mean"]),
       st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.bool_]), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_reductions_on_drawn_layouts_and_dims_match_numpy(data, op, dtype, keepdim, seed):
    shape = data.draw(shapes(max_rank=4, max_size=9, max_numel=500))
    lay, n = data.draw(layouts_of_shape(shape))
    if op in ("max", "min") and 0 in shape:
        shape = ()  # no identity: refused, checked below
        lay, n = Layout((), (), 0), 1
    if op == "mean" and np.dtype(dtype).kind != "f":
        dtype = np.float64
    nd = len(shape)
    dims = data.draw(st.one_of(st.none(), st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple)
                               if nd else st.none()))
    host = _values(np.random.default_rng(seed), dtype, n, op)
    g = on_cuda(host, lay)
    want = NP[op](np_view(host, lay), axis=dims, keepdims=keepdim)
    got = getattr(sd, op)(g, axis=dims, keepdims=keepdim)
    assert got.device == "cuda:0"
    a = got.numpy()
    assert a.shape == want.shape
    if np.dtype(dtype).kind == "f":
        assert a.dtype == want.dtype
        assert np.allclose(a, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5, equal_nan=True)
    else:
        assert np.array_equal(a, want.astype(a.dtype)), (a, want)


@settings(max_examples=30, deadline=None)
@given(st.data(), st.sampled_from(["argmax", "argmin"]), st.sampled_from([np.float32, np.float64, np.int64, np.uint8]),
       st.integers(0, 2**32 - 1))
def test_arg_reductions_pick_the_first_extremum_as_numpy(data, op, dtype, seed):
    shape = data.draw(shapes(min_rank=1, max_rank=3, max_size=9, max_numel=400).filter(lambda s: 0 not in s))
    lay, n = data.draw(layouts_of_shape(shape))
    dim = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(seed)
    host = rng.integers(0, 4, n).astype(dtype)  # ties everywhere
    if np.dtype(dtype).kind == "f" and n > 3:
        host[rng.integers(0, n, 2)] = np.nan  # the first NaN wins
    g = on_cuda(host, lay)
    got = getattr(sd, op)(g, axis=dim)
    assert got.device == "cuda:0"
    assert np.array_equal(got.numpy(), getattr(np, op)(np_view(host, lay), axis=dim))


def test_a_long_reduction_is_split_into_parts_and_combined():
    # few outputs, many points each: the parts path (two launches through a scratch vector)
    assert cuda_reduce.split(2, 8 * cuda_reduce.SPLIT_MIN) > 1
    host = np.arange(2 * 8 * cuda_reduce.SPLIT_MIN, dtype=np.int64).reshape(2, -1)
    g = sd.from_numpy(host).to_device("cuda")
    assert g.sum(1).tolist() == host.sum(1).tolist()
    assert g.t().max(0).tolist() == host.max(1).tolist()
    assert g.flip(1).argmax(1).tolist() == host[:, ::-1].argmax(1).tolist()


def test_empty_reductions_and_their_errors():
    g = sd.zeros((0, 3), device="cuda")
    assert g.sum(0).tolist() == [0.0, 0.0, 0.0] and sd.prod(g, axis=0).tolist() == [1.0, 1.0, 1.0]
    assert g.sum(1).shape == (0,)
    with pytest.raises(sd.ShapeError, match="max: cannot reduce over a zero-size dim"):
        g.max(0)
    with pytest.raises(sd.ShapeError, match="argmax: cannot reduce over a zero-size dim"):
        g.argmax(0)
    d = sd.ones((4,), device="cuda").storage.data
    with pytest.raises(sd.StridedError, match="sum: expected out on the CUDA device, got a host numpy array"):
        cuda_reduce.reduce("sum", d, Layout((4,)), (0,), np.zeros(1, np.float32), Layout((1,)))
    with pytest.raises(sd.ShapeError, match=r"sum: expected an output of shape \(1,\)"):
        cuda_reduce.reduce("sum", d, Layout((4,)), (0,), d, Layout((2,)))
    with pytest.raises(sd.StridedError, match="reduce: unknown op 'mode'"):
        cuda_reduce.reduce("mode", d, Layout((4,)), (0,), d, Layout((1,)))


def test_column_reductions_with_many_outputs_take_a_thread_per_output():
    from strided.kernels.reduce import OUTER, plan

    rng = np.random.default_rng(6)
    host = rng.random((9, 2 * cuda_reduce.COLUMN_MIN + 3))
    g = sd.from_numpy(host).to_device("cuda")
    p = plan(g.layout, (0,))
    assert p.case == OUTER and p.kstrides[0][-1] == 1 and p.nk >= cuda_reduce.COLUMN_MIN  # the column kernel's case
    assert np.allclose(g.sum(0).numpy(), host.sum(0), rtol=1e-12)
    assert np.array_equal(g.max(0).numpy(), host.max(0))
    assert np.allclose(sd.prod(g[::-1, ::2], axis=0).numpy(), host[::-1, ::2].prod(0), rtol=1e-12)
    h3 = rng.integers(0, 9, (3, 4, cuda_reduce.COLUMN_MIN))
    g3 = sd.from_numpy(h3).to_device("cuda")
    assert np.array_equal(g3.sum(1).numpy(), h3.sum(1)) and np.array_equal(g3.min((0, 1)).numpy(), h3.min((0, 1)))
