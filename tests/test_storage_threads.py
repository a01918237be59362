"""The buffer pool and the thread count."""

import os
import subprocess
import sys

import numpy as np
import pytest

import strided as sd
from strided import storage, threads


def _addr(t):
    return t.storage.data.__array_interface__["data"][0]


@pytest.fixture
def pool():
    old = storage._pool.max_bytes
    sd.set_buffer_pool(1 << 28)
    storage._pool.clear()
    yield storage._pool
    sd.set_buffer_pool(old)


def test_freed_buffers_are_recycled_and_zeros_still_zero(pool):
    t = sd.empty((2048, 2048))  # 16 MiB: the pool takes buffers from storage._MIN_POOLED
    t.fill_(7.0)
    addr = _addr(t)
    del t
    assert sd.pool_bytes() == 2048 * 2048 * 4
    z = sd.zeros((2048, 2048))
    assert _addr(z) == addr  # the same memory came back
    assert not z.numpy().any()  # and was zero-filled
    assert sd.pool_bytes() == 0


def test_a_buffer_with_a_live_view_is_never_recycled(pool):
    t = sd.ones((2048, 2048))
    view = t.t()[3:]  # a strided view keeps the storage alive
    arr = t.numpy()[::2]  # and so does an exported numpy view, after every tensor is gone
    addr = _addr(t)
    del t
    assert sd.pool_bytes() == 0
    del view
    assert sd.pool_bytes() == 0
    fresh = sd.zeros((2048, 2048))
    assert _addr(fresh) != addr
    assert (arr == 1).all()  # the exported view still reads its own data
    del arr, fresh


def test_pool_off_and_bounded(pool):
    sd.set_buffer_pool(0)
    t = sd.empty((2048, 2048))
    del t
    assert sd.pool_bytes() == 0
    sd.set_buffer_pool(20 << 20)
    a, b = sd.empty((2048, 2048)), sd.empty((2048, 2048))  # 16 MiB each
    del a, b
    assert sd.pool_bytes() == 16 << 20
    with pytest.raises(sd.StridedError, match="set_buffer_pool"):
        sd.set_buffer_pool(-1)


@pytest.mark.parametrize("make", [
    lambda: sd.empty((2**20, 2**20)),
    lambda: sd.zeros((1,)).expand((2**20, 2**20)) + 1,
    lambda: sd.zeros((2**21, 1)) @ sd.zeros((1, 2**21)),
])
def test_results_beyond_memory_are_refused_before_allocating(make):
    """4 TiB and 16 TiB results: a StridedError naming the op and the size, not a MemoryError."""
    with pytest.raises(sd.StridedError, match=r"cannot allocate \d+ elements of float32 \(\d+\.\d GiB\): more than"):
        make()


def test_default_threads_respect_affinity_and_quota(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7})
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: 2.5)
    assert threads.default_num_threads() == 3  # ceil of the quota, below the affinity
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: None)
    assert threads.default_num_threads() == 8


def test_set_num_threads_and_environment():
    n = sd.get_num_threads()
    try:
        sd.set_num_threads(1)
        assert sd.get_num_threads() == 1
        a = sd.rand(300, 300)
        np.testing.assert_allclose((a + a).numpy(), a.numpy() * 2)
    finally:
        sd.set_num_threads(n)
    with pytest.raises(sd.StridedError, match="set_num_threads"):
        sd.set_num_threads(0)
    out = subprocess.run(
        [sys.executable, "-c", "import strided; print(strided.get_num_threads())"],
        env={**os.environ, "STRIDED_NUM_THREADS": "3"}, capture_output=True, text=True, timeout=120,
    )
    assert out.stdout.strip() == "3", out.stderr
