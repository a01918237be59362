"""The shared odometer and launcher of the kernel families (``strided.kernels.walk``),
against NumPy's ``unravel_index`` and plain arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit, prange

from strided.core import threads
from strided.kernels import walk
from strided.kernels.walk import carry, chunk, seek


@njit(cache=True)
def _walk_all(start, shape, strides, nd, base0):
    """From flat point ``start`` of dims [0, nd), every point's positions and the dim
    ``carry`` reported, until it wraps (``base0``: a tuple of positions)."""
    idx = np.zeros(max(nd, 1), np.int64)
    pos = seek(start, shape, strides, nd, idx, base0)
    n = 1
    for d in range(nd):
        n *= shape[d]
    out = np.empty((n - start, len(base0)), np.int64)
    dims = np.empty(n - start, np.int64)
    for i in range(n - start):
        for k in range(len(base0)):
            out[i, k] = pos[k]
        dims[i], pos = carry(shape, strides, nd, idx, pos)
    end = np.empty(len(base0), np.int64)
    for k in range(len(base0)):
        end[k] = pos[k]
    return out, dims, idx[:nd].copy(), end


@njit(cache=True)
def _chunks(count, units):
    out = np.empty((count, 2), np.int64)
    for c in range(count):
        lo, hi = chunk(c, count, units)
        out[c, 0] = lo
        out[c, 1] = hi
    return out


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=5),
    nops=st.integers(1, 4),
    data=st.data(),
)
def test_seek_and_carry_visit_every_point_in_row_major_order(shape, nops, data):
    strides = np.array(
        [data.draw(st.lists(st.integers(-7, 7), min_size=len(shape), max_size=len(shape))) for _ in range(nops)],
        np.int64,
    )
    nd = data.draw(st.integers(0, len(shape)), label="nd")
    base0 = np.array(data.draw(st.lists(st.integers(-50, 50), min_size=nops, max_size=nops)), np.int64)
    n = int(np.prod(shape[:nd]))
    start = data.draw(st.integers(0, n - 1), label="start")
    sh = np.array(shape, np.int64)
    got, dims, idx_end, base_end = _walk_all(start, sh, strides, nd, tuple(int(b) for b in base0))
    if nd:
        coords = np.array(np.unravel_index(np.arange(start, n), shape[:nd])).T
    else:  # no dims walked: one point
        coords = np.zeros((1, 0), np.int64)
    want = base0 + coords @ strides[:, :nd].T
    np.testing.assert_array_equal(got, want)
    # carry names the dim that advanced: the last one whose coordinate changed
    for i in range(len(dims) - 1):
        changed = np.nonzero(coords[i + 1] != coords[i])[0]
        assert dims[i] == changed[0]
    assert dims[-1] == -1
    # a wrap leaves the odometer at the first point again
    np.testing.assert_array_equal(idx_end, np.zeros(nd, np.int64))
    np.testing.assert_array_equal(base_end, base0)


@pytest.mark.parametrize("count,units", [(1, 0), (1, 7), (3, 10), (8, 8), (8, 3), (5, 1 << 40)])
def test_chunks_cover_the_units_in_order(count, units):
    c = _chunks(count, units)
    assert c[0, 0] == 0 and c[-1, 1] == units
    assert (c[1:, 0] == c[:-1, 1]).all()
    sizes = c[:, 1] - c[:, 0]
    assert sizes.min() >= 0 and sizes.max() - sizes.min() <= 1


def test_nchunks(monkeypatch):
    monkeypatch.setattr(walk, "get_num_threads", lambda: 4)
    per = walk.CHUNKS_PER_THREAD
    assert walk.nchunks(10**6, 10**6, 1000) == 4 * per
    assert walk.nchunks(3, 10**6, 1000) == 3
    assert walk.nchunks(0, 10**6, 1000) == 1
    assert walk.nchunks(10**6, 999, 1000) == 1
    monkeypatch.setattr(walk, "get_num_threads", lambda: 1)
    assert walk.nchunks(10**6, 10**6, 1000) == 1


def test_launch_serial_and_parallel():
    calls = []
    walk.launch(lambda *a: calls.append(a), (1, 2), False)
    walk.launch(lambda *a: calls.append(a), (3,), True)
    assert calls == [(1, 2), (3,)]


@njit
def _scaled_sum(x, k):
    """A kernel compiled here only, so the test knows which signatures exist."""
    s = 0.0
    for v in x:
        s += v * k
    return s


def test_direct_finds_the_compiled_entry_or_keeps_the_dispatcher():
    x = np.arange(5.0)
    assert walk.direct(_scaled_sum, (np.empty(0, np.float64), 2)) is _scaled_sum  # nothing compiled yet
    assert _scaled_sum(x, 2) == 20.0
    entry = walk.direct(_scaled_sum, (np.empty(0, np.float64), 2))
    assert entry is not _scaled_sum and entry(x, 3) == 30.0
    # another type than the one compiled: the dispatcher, which compiles it when called
    assert walk.direct(_scaled_sum, (np.empty(0, np.float32), 2)) is _scaled_sum
    assert walk.direct(len, (x,)) is len  # not a numba dispatcher at all


@njit
def _through_stack(x, n):
    """Each dtype's scratch holds what is written to it, beside the others and beside a
    zeroed index scratch, in a frame entered once per row."""
    out = np.empty((n, 4))
    for r in range(n):
        out[r] = _stack_row(x, r)
    return out


@njit
def _stack_row(x, r):
    idx = walk.index_scratch(3)
    f = walk.stack_scratch(3, x.dtype)
    i = walk.stack_scratch(2, np.int32)
    u = walk.stack_scratch(2, np.uint8)
    for k in range(3):
        f[k] = x[r] * (k + 1)
    i[0], i[1] = -r, 2**31 - 1
    u[0], u[1] = r, 255
    return np.array([f[0] + f[1] + f[2], i[0] + (i[1] - 2147483647), u[0] + u[1], idx.sum()], np.float64)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_stack_scratch_holds_each_dtype(np_dtype):
    x = np.array([0.5, -2.0, 3.25, 7.0, 1e3], np_dtype)
    got = _through_stack(x, len(x))
    want = np.stack([6 * x.astype(np.float64), -np.arange(5.0), np.arange(5.0) + 255, np.zeros(5)], axis=1)
    np.testing.assert_array_equal(got, want)


@njit(parallel=True)
def _fill(out, v):
    for i in prange(out.shape[0]):
        out[i] = v


def test_in_parallel_enters_the_compiled_entry_once_the_layer_is_openmp():
    out = np.zeros(64)
    guarded = walk.in_parallel(_fill)  # no example: the guarded wrapper, which a keeper replaces
    assert guarded.settled is False
    guarded(out, 2.0)
    assert (out == 2.0).all()
    entry = walk.in_parallel(_fill, (np.empty(0), 3.0))
    if threads.static_chunks():  # the layer is known (the region above ran) and it is OpenMP's
        assert entry is walk.direct(_fill, (out, 3.0)) and entry is not _fill
        assert getattr(entry, "settled", True)
    else:
        assert entry.settled is False
    entry(out, 3.0)
    assert (out == 3.0).all()


def _kept_twice(fn, *arrays):
    """``fn`` on tensors over ``arrays``: a first call that keeps its decision, then a call
    on copies of the same layouts whose buffers are read-only and unaligned, the two flags a
    kept run's compiled entry does not check (``walk.direct``)."""
    import strided as sd

    first = fn(*[sd.from_numpy(a) for a in arrays]).numpy()
    odd = []
    for a in arrays:
        raw = np.zeros(a.nbytes + 1, np.uint8)
        u = raw[1:].view(a.dtype).reshape(a.shape)  # one byte past alignment
        u[...] = a
        u.flags.writeable = False
        assert not u.flags.aligned and not u.flags.writeable
        odd.append(sd.from_numpy(u))
        data = odd[-1]._storage.data  # the tensor reads that very buffer
        assert not data.flags.aligned and not data.flags.writeable
    return first, fn(*odd).numpy()


@pytest.mark.parametrize("name, fn, want", [
    ("add", lambda a, b: a + b, lambda a, b: a + b),
    ("add of a transpose", lambda a, b: a + b.t(), lambda a, b: a + b.T),
    ("exp", lambda a, b: a.exp(), lambda a, b: np.exp(a)),
    ("times a scalar", lambda a, b: a * 0.5, lambda a, b: a * np.float32(0.5)),
    ("sum(0)", lambda a, b: a.sum(0), lambda a, b: a.sum(0)),
    ("sum(1)", lambda a, b: a.sum(1), lambda a, b: a.sum(1)),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b),
    ("transposed copy", lambda a, b: a.t().contiguous(), lambda a, b: a.T),
])
@pytest.mark.parametrize("n", [12, 768])  # 768^2: every family's parallel path
def test_kept_runs_read_any_buffer_flags(name, fn, want, n):
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    first, again = _kept_twice(fn, a, b)
    np.testing.assert_allclose(first, want(a, b), rtol=2e-6 if n < 100 else 1e-5, atol=1e-5 if n < 100 else 1e-3)
    np.testing.assert_array_equal(again, first)
