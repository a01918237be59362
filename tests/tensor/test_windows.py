"""Sliding windows: sliding_window_view against NumPy's, Tensor.unfold against PyTorch's."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import view_chains

import strided as sd
from strided.errors import ShapeError, StridedError

swv = np.lib.stride_tricks.sliding_window_view


@st.composite
def windows_of(draw, shape):
    """(window_shape, axis) that NumPy accepts for an array of ``shape`` (repeats allowed)."""
    if not shape:
        return (), None
    axis = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=3))
    left = list(shape)
    ws = []
    for a in axis:
        w = draw(st.integers(0, left[a]))
        left[a] -= max(w - 1, 0) if w else -1  # a window of 0 leaves n + 1 starts
        ws.append(w)
    return tuple(ws), tuple(axis)


@given(view_chains(max_ops=4, max_rank=3), st.data())
@settings(max_examples=80, deadline=None)
def test_sliding_window_view_matches_numpy_on_any_view(chain, data):
    _, lay, arr, base = chain
    ws, axis = data.draw(windows_of(arr.shape))
    assume(ws)
    t = sd.as_strided(sd.from_numpy(base.reshape(-1)), lay.shape, lay.stride, lay.offset)
    got = sd.sliding_window_view(t, ws, axis)
    want = swv(arr, ws, axis)
    assert got.shape == want.shape
    assert np.array_equal(got.numpy(), want)  # values are buffer offsets: the same elements
    assert sd.same_buffer(got, t)


@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 5), st.integers(1, 5), st.data())
@settings(max_examples=60, deadline=None)
def test_steps_pick_every_step_th_window(m, n, sm, sn, data):
    x = np.arange(m * n).reshape(m, n)
    wm, wn = data.draw(st.integers(0, m)), data.draw(st.integers(0, n))
    got = sd.sliding_window_view(sd.from_numpy(x), (wm, wn), step=(sm, sn))
    want = swv(x, (wm, wn))[::sm, ::sn]
    assert got.shape == want.shape and np.array_equal(got.numpy(), want)
    one = sd.sliding_window_view(sd.from_numpy(x), wn, axis=-1, step=sn)
    assert np.array_equal(one.numpy(), swv(x, wn, axis=-1)[:, ::sn])


@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.data())
@settings(max_examples=60, deadline=None)
def test_unfold_matches_pytorch(shape, data):
    torch = pytest.importorskip("torch")
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = data.draw(st.integers(0, shape[dim]))
    step = data.draw(st.integers(1, 4))
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    got = sd.from_numpy(x).unfold(dim, size, step)
    want = torch.from_numpy(x).unfold(dim, size, step)
    assert got.shape == tuple(want.shape) and got.stride == want.stride()
    assert np.array_equal(got.numpy(), want.numpy())


def test_unfold_of_a_0d_tensor_is_pytorchs():
    torch = pytest.importorskip("torch")
    got = sd.tensor(5.0).unfold(0, 1, 1)
    want = torch.tensor(5.0).unfold(0, 1, 1)
    assert got.shape == tuple(want.shape) and got.tolist() == want.tolist()


def test_gradients_accumulate_per_element():
    w = sd.Var(sd.arange(6, dtype=sd.f32))
    grads = w.unfold(0, 3, 1).sum_all().backward()
    assert grads[w].tolist() == [1, 2, 3, 3, 2, 1]  # how many windows hold each element
    v = sd.Var(sd.arange(6, dtype=sd.f32))
    grads = sd.sliding_window_view(v, 3).sum_all().backward()
    assert grads[v].tolist() == [1, 2, 3, 3, 2, 1]


@given(st.integers(2, 7), st.integers(2, 7), st.data())
@settings(max_examples=30, deadline=None)
def test_gradients_match_pytorch(m, n, data):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = rng.standard_normal((m, n)).astype(np.float32)
    wm, wn = data.draw(st.integers(1, m)), data.draw(st.integers(1, n))
    sm, sn = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    tx = torch.from_numpy(x.copy()).requires_grad_()
    tw = tx.unfold(0, wm, sm).unfold(1, wn, sn)
    g = rng.standard_normal(tuple(tw.shape)).astype(np.float32)
    (tw * torch.from_numpy(g)).sum().backward()
    v = sd.Var(sd.from_numpy(x.copy()))
    out = sd.sliding_window_view(v, (wm, wn), step=(sm, sn))
    assert out.shape == tuple(tw.shape)
    grads = (out * sd.from_numpy(g)).sum_all().backward()
    assert np.allclose(grads[v].numpy(), tx.grad.numpy(), atol=1e-5)


def test_writes_into_overlapping_windows_are_refused_unless_allowed():
    x = sd.zeros(6, dtype=sd.f32)
    u = x.unfold(0, 3, 1)
    for write in (lambda: u.fill_(1.0), lambda: u.copy_(sd.ones((4, 3))), lambda: u.__setitem__(..., 2.0)):
        with pytest.raises(StridedError, match="sharing memory.*allow_overlap=True"):
            write()
    assert x.tolist() == [0] * 6
    u.fill_(7.0, allow_overlap=True)
    assert x.tolist() == [7] * 6
    u[1] = sd.tensor([1.0, 2.0, 3.0])  # one window does not overlap itself
    assert x.tolist() == [7, 1, 2, 3, 7, 7]
    apart = x.unfold(0, 2, 3)  # windows [0,1] and [3,4]: disjoint, so writable
    apart.fill_(0.0)
    assert x.tolist() == [0, 0, 2, 0, 0, 7]


@pytest.mark.parametrize("call, words", [
    (lambda x: sd.sliding_window_view(x, 7, axis=1), ["sliding_window_view", "window 7", "larger", "(2, 6)"]),
    (lambda x: sd.sliding_window_view(x, (2, -1)), ["sliding_window_view", "negative", "(2, -1)"]),
    (lambda x: sd.sliding_window_view(x, (2,), axis=(0, 1)), ["sliding_window_view", "one length"]),
    (lambda x: sd.sliding_window_view(x, 2), ["sliding_window_view", "one entry per dim"]),
    (lambda x: sd.sliding_window_view(x, 2, axis=1, step=0), ["sliding_window_view", "step must be >= 1"]),
    (lambda x: x.unfold(1, 7, 1), ["unfold", "window size 7", "dim 1 of size 6"]),
    (lambda x: x.unfold(0, 1, 0), ["unfold", "step must be >= 1, got 0"]),
    (lambda x: x.unfold(0, -1, 1), ["unfold", "must be >= 0, got -1"]),
    (lambda x: x.unfold(2, 1, 1), ["unfold", "dim 2 out of range"]),
])
def test_bad_windows_name_the_function_and_the_values(call, words):
    x = sd.zeros((2, 6))
    with pytest.raises(StridedError) as e:
        call(x)
    for w in words:
        assert w in str(e.value)


def test_sliding_window_view_wants_a_tensor():
    with pytest.raises(StridedError, match="sliding_window_view: expected a strided.Tensor"):
        sd.sliding_window_view(np.arange(4), 2)
    assert issubclass(ShapeError, StridedError)


def test_the_bench_row_computes_the_same_moving_sum_in_each_library():
    from strided.cli.bench.windows_bench import WINDOW, window_cases

    (case,) = window_cases(quick=True)
    runs = case.make()
    want = runs["numpy"]()
    assert want.shape == ((1 << 20) - WINDOW + 1,)
    assert np.allclose(runs["strided"]().numpy(), want, rtol=1e-4, atol=1e-3)
