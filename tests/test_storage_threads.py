"""The buffer pool and the thread count."""

import os
import subprocess
import sys

import numpy as np
import pytest

import strided as sd
from strided import threads
from strided.core import storage


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


_SPIN = (
    "import os, strided, numba\n"
    "from strided import threads\n"
    "x = strided.ones(1 << 20)\n"
    "x + x\n"  # a parallel kernel: numba starts its OpenMP runtime, which reads the variables now
    "print(os.environ.get('GOMP_SPINCOUNT'), threads.ENV_SET.get('GOMP_SPINCOUNT'), numba.threading_layer())\n"
)


@pytest.mark.parametrize("env, want", [
    ({}, f"{threads.SPIN_COUNT} {threads.SPIN_COUNT}"),
    ({"GOMP_SPINCOUNT": "5"}, "5 None"),  # the user's own setting decides
    ({"OMP_WAIT_POLICY": "ACTIVE"}, "None None"),
])
def test_idle_threads_wait_policy_never_overrides_the_user(env, want):
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", _SPIN], env={**base, **env}, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = out.stdout.split()
    assert " ".join(got[:-1]) == want
    assert got[-1] in ("omp", "tbb", "workqueue")


_VECTORS = (
    "import os, numba, numpy as np, strided\n"
    "from strided import threads\n"
    "@numba.njit\n"
    "def scale(x):\n"
    "    for i in range(x.size):\n"
    "        x[i] = x[i] * 3.0 + 1.0\n"
    "scale(np.ones(64, np.float32))\n"
    "asm = scale.inspect_asm(scale.signatures[0])\n"
    "print(os.environ.get('NUMBA_CPU_FEATURES'), 'NUMBA_CPU_FEATURES' in threads.ENV_SET, 'zmm' in asm)\n"
)


@pytest.mark.parametrize("user", [None, "+avx2", "name"])
def test_wide_vectors_on_avx512_unless_the_user_chose_the_cpu(user):
    import llvmlite.binding as llvm

    host = llvm.get_host_cpu_features()
    base = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CPU_FEATURES", "NUMBA_CPU_NAME", "NUMBA_ENABLE_AVX")}
    env = dict(base)
    if user == "name":
        env["NUMBA_CPU_NAME"] = "generic"
    elif user:
        env["NUMBA_CPU_FEATURES"] = user
    out = subprocess.run([sys.executable, "-c", _VECTORS], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    features, strided_set, zmm = out.stdout.split()
    if user is None and host.get("avx512f"):
        assert features == host.flatten() + ",-prefer-256-bit"
        assert (strided_set, zmm) == ("True", "True")  # the loop runs 512 bits wide
    else:
        assert features == (user if user and user != "name" else "None")
        assert strided_set == "False"
        if user == "name":
            assert zmm == "False"  # a generic x86-64 has no 512-bit registers



def test_pools_lists_strided_first_and_every_blas_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from strided.kernels import matmul  # noqa: F401  (loads the BLAS strided calls)

    rows = threads.pools()
    assert rows[0]["pool"] == "strided (numba)" and rows[0]["strided"] and rows[0]["threads"] == sd.get_num_threads()
    blas = {i["filepath"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}
    listed = {r["library"] for r in rows if r["api"] == "blas"}
    assert listed == {os.path.basename(p) for p in blas}
    text = threads.pools_report()
    assert text.splitlines()[1].startswith("strided (numba)")
    assert f"CPUs this process may use: {threads.default_num_threads()}" in text
    total = rows[0]["threads"] + sum(r["threads"] or 0 for r in rows[1:] if not r["strided"])
    assert ("warning:" in text) == (total > threads.default_num_threads())


def test_threads_command_prints_the_pools():
    out = subprocess.run([sys.executable, "-m", "strided", "threads"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines()[1].startswith("strided (numba)")
    assert "idle OpenMP threads: GOMP_SPINCOUNT=" in out.stdout
    assert "gemm: NumPy's OpenBLAS (pinned to one thread while strided's gemms run" in out.stdout or \
        "gemm: scipy's OpenBLAS" in out.stdout, out.stdout


def _slow_first_chunk_owners():
    """Which thread ran each of 8 prange iterations when the first one is slow: a static
    schedule gives thread 0 the first four whatever their cost, a dynamic one lets the
    other thread take the rest while thread 0 is busy."""
    import numba
    from numba import njit, prange
    from numba.np.ufunc.parallel import _iget_thread_id

    @njit(parallel=True)
    def owners(spin, out):
        for c in prange(8):
            s = 0.0
            for k in range(spin[c]):
                s += k * 1e-9
            out[c] = _iget_thread_id() + (s > 1e300)

    spin = np.array([50_000_000] + [1] * 7)
    out = np.zeros(8, np.int64)
    old = numba.set_parallel_chunksize(1)
    try:
        owners(spin, out)
    finally:
        numba.set_parallel_chunksize(old)
    return out.tolist()


def test_openmp_runs_a_prange_as_a_static_schedule_so_no_chunk_size_is_asked_for():
    # strided skips numba.set_parallel_chunksize on the OpenMP layer (two Python calls a
    # region) because that layer ignores it; if numba ever schedules dynamically there,
    # this fails and the skip in kernels.walk.in_parallel must go.
    import numba
    from strided.kernels.walk import in_parallel

    if threads.get_num_threads() < 2:
        pytest.skip("one thread: no parallel region is ever entered")
    x = sd.ones(1 << 20)
    x + x  # starts numba's threading layer
    seen = []
    in_parallel(lambda: seen.append(numba.get_parallel_chunksize()))()
    if numba.threading_layer() != "omp":
        assert not threads.static_chunks() and seen == [1]  # tbb, workqueue: one chunk at a time
        return
    assert threads.static_chunks() and seen == [0]
    assert _slow_first_chunk_owners() == [0, 0, 0, 0, 1, 1, 1, 1]


_FAULTS = r"""
import resource
import strided as sd
from strided.core import storage

def step():
    ts = [sd.zeros((64, 1024)) for _ in range(8)]  # 256 KiB each, zero-filled: every page touched
    del ts

step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, sorted(storage.MALLOC_SET))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings")
def test_freed_buffers_stay_warm_unless_the_user_chose_malloc_settings():
    # 2 MiB of buffers freed and allocated again 50 times: with strided's malloc thresholds
    # no step faults a page in again; with glibc's defaults each one does, hundreds of times.
    import ctypes

    if not hasattr(ctypes.CDLL(None), "gnu_get_libc_version"):
        pytest.skip("not glibc")

    # None of this process's own malloc settings: Dask's nanny puts MALLOC_TRIM_THRESHOLD_
    # into os.environ when it starts a worker process (the Dask tests here do).
    base = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"
            and k != "STRIDED_MALLOC"}

    def run(**env):
        out = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, timeout=300,
                             env={**base, **env})
        assert out.returncode == 0, out.stderr[-2000:]
        faults, _, names = out.stdout.partition(" ")
        return int(faults), names.strip()

    warm, names = run()
    assert names == "['M_MMAP_THRESHOLD', 'M_TRIM_THRESHOLD']"
    cold, names = run(STRIDED_MALLOC="default")
    assert names == "[]"
    assert warm * 20 < cold and cold > 50 * 100, (warm, cold)
    _, names = run(MALLOC_ARENA_MAX="4")  # one of glibc's own variables: the user decides
    assert names == "[]"
