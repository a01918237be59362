"""How many threads strided uses, and making numba and BLAS agree on it.

The default is what this process may really run on: the CPU affinity mask,
capped by the cgroup CPU quota (rounded up).  NumPy's OpenBLAS, numba and
PyTorch size their pools from the machine's core count instead, which in a
container with a CPU quota starts far more threads than can run at once.

This module must be imported before numba: it fixes numba's pool size and pins
a threading layer that tolerates concurrent calls from several Python threads
(omp, else tbb).  If only numba's workqueue layer exists, parallel kernels are
entered under a lock, because that layer aborts when entered concurrently.

One pool.  numba's pool runs every parallel region of strided: its kernels, and its
gemms, which run on the calling thread of each task with the BLAS pool pinned to one
thread for the call (``kernels.matmul``).  Its idle threads yield their cores quickly:
GNU OpenMP's workers spin 300,000 rounds (several milliseconds) after a region before
they sleep, and a spinning worker holds the core that another pool's thread (BLAS's,
PyTorch's, the next strided kernel's) is waiting for.  So strided sets
``GOMP_SPINCOUNT`` (``SPIN_COUNT`` rounds, about a tenth of a millisecond: enough to catch
the next kernel of a chain without a wake-up) before numba's OpenMP runtime starts, unless
the user set ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY``, which then decide.  PyTorch's
own GNU OpenMP reads the same variable when it loads, so importing strided first
gives both libraries' pools the short spin.  ``ENV_SET`` records what strided set.
"""

from __future__ import annotations

import math
import os
import threading

from . import caches

_ENV = "STRIDED_NUM_THREADS"


def _cgroup_quota() -> float | None:
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:  # cgroup v2: "max 100000" or "200000 100000"
            quota, period = f.read().split()[:2]
        if quota != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:  # cgroup v1
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") as f:
            quota = int(f.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as f:
            period = int(f.read())
        if quota > 0 and period > 0:
            return quota / period
    except (OSError, ValueError):
        pass
    return None


def default_num_threads() -> int:
    """min(CPU affinity, ceil(cgroup quota)), never below 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def physical_cores() -> int | None:
    """Distinct (package, core) pairs of /proc/cpuinfo: what a library sizing its pool by
    physical cores (candle's num_cpus::get_physical) sees; None where cpuinfo says nothing."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return None
    cores, package = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            package = value.strip()
        elif key == "core id":
            cores.add((package, value.strip()))
    return len(cores) or None


def cpu_report() -> dict:
    """What the default thread count was read from: affinity, cgroup quota, the machine's cores."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "threads": _num_threads,
        "default": _max_threads,
        "env": os.environ.get(_ENV),
        "affinity": affinity,
        "cgroup_quota": _cgroup_quota(),
        "logical_cpus": os.cpu_count(),
        "physical_cores": physical_cores(),
    }


def _from_env() -> int | None:
    raw = os.environ.get(_ENV)
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        return None
    return n if n > 0 else None


_max_threads = default_num_threads()
_num_threads = _from_env() or _max_threads



def _cache_dir_fallback() -> None:
    """numba's cache=True raises at import when it cannot write beside the sources."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    pkg = os.path.dirname(os.path.abspath(__file__))
    if os.access(pkg, os.W_OK):
        return
    import tempfile

    for base in (os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), tempfile.gettempdir()):
        path = os.path.join(base, "strided", "numba")
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            os.environ["NUMBA_CACHE_DIR"] = path
            return


_cache_dir_fallback()
# numba reads these when its threading layer starts; set them before anything imports numba.
os.environ.setdefault("NUMBA_NUM_THREADS", str(max(_num_threads, _max_threads)))
os.environ.setdefault("NUMBA_THREADING_LAYER_PRIORITY", "omp tbb workqueue")

# Rounds an idle OpenMP worker spins before it sleeps (GNU libgomp reads it when it loads).
# A round is one pause instruction, 10 to 30 ns depending on the CPU, so this bounds the
# spin at 50 to 150 us: longer than the Python between two kernels of a chain, which must
# not wake a sleeping worker each time, and far shorter than libgomp's default of
# milliseconds, which would hold a core that another pool's thread waits for.
# docs/benchmarks.md ("The idle spin") has the measurements on two CPUs.
SPIN_COUNT = 5000
# Every variable strided put in the environment, with its value: a user's own never changes.
ENV_SET: dict = {}
if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = ENV_SET["GOMP_SPINCOUNT"] = str(SPIN_COUNT)


_NUMBA_CPU_ENV = ("NUMBA_CPU_FEATURES", "NUMBA_CPU_NAME", "NUMBA_ENABLE_AVX")


def _host_features():
    """LLVM's features of this CPU (a mapping, ``flatten()`` gives numba's spelling), or
    None where LLVM gives no answer."""
    try:
        import llvmlite.binding as llvm

        return llvm.get_host_cpu_features()
    except Exception:
        return None


def _prefer_wide_vectors() -> None:
    """On a CPU with AVX-512, let LLVM vectorise strided's loops 512 bits wide.

    LLVM's tuning for such CPUs prefers 256-bit vectors (the first AVX-512 Xeons slowed
    their clocks for wider code), which halves what an exp, a tanh or a keyed max does
    per instruction; PyTorch's and NumPy's own AVX-512 kernels run at the full width.
    numba takes the CPU's features from ``NUMBA_CPU_FEATURES`` when it is set, so strided
    sets it to the host's features less the 256-bit preference, unless the user set
    ``NUMBA_CPU_FEATURES``, ``NUMBA_CPU_NAME`` or ``NUMBA_ENABLE_AVX``.  Elementwise results
    do not change; a float sum's leaf lets LLVM choose its vector accumulators, so its last
    bits follow the vector width (as PyTorch's sums differ between its AVX2 and AVX-512
    kernels)."""
    if any(k in os.environ for k in _NUMBA_CPU_ENV):
        return
    features = _host_features()  # None: numba decides alone
    if features is not None and features.get("avx512f"):
        os.environ["NUMBA_CPU_FEATURES"] = ENV_SET["NUMBA_CPU_FEATURES"] = features.flatten() + ",-prefer-256-bit"


_prefer_wide_vectors()


def compiles_avx512() -> bool:
    """Whether numba compiles for a CPU with AVX-512F: its features as ``NUMBA_CPU_FEATURES``
    gives them (strided's or the user's), else the host's.  False where the user named a CPU
    or set ``NUMBA_ENABLE_AVX`` without features: code that asks may then only lose speed."""
    features = os.environ.get("NUMBA_CPU_FEATURES")
    if features is not None:
        return "+avx512f" in features.split(",")
    if any(k in os.environ for k in _NUMBA_CPU_ENV):
        return False
    host = _host_features()
    return bool(host is not None and host.get("avx512f"))


import numba  # noqa: E402

_numba_cap = numba.config.NUMBA_NUM_THREADS
_lock = threading.Lock()
_layer: str | None = None  # numba's threading layer, learned on the first parallel call


def get_num_threads() -> int:
    return _num_threads


def pools() -> list[dict]:
    """Every thread pool in the process: strided's (numba's) first, then each one that
    threadpoolctl finds (BLAS, OpenMP runtimes: PyTorch's, NumPy's, others'), as
    ``{"pool", "library", "api", "threads", "strided"}``; ``strided`` is True for the
    pools strided runs its work on."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        layer = "not started"
    out = [{"pool": "strided (numba)", "library": f"numba {layer} layer", "api": "kernels and gemm tasks",
            "threads": numba.get_num_threads(), "strided": True}]
    try:
        from threadpoolctl import threadpool_info

        found = threadpool_info()
    except Exception:  # threadpoolctl missing or failing: strided's pool alone
        found = []
    for info in found:
        path = info.get("filepath") or ""
        owner = (path.split(os.sep + "site-packages" + os.sep)[-1].split(os.sep)[0] if "site-packages" in path
                 else os.path.dirname(path))
        mine = layer == "omp" and (
            (info.get("user_api") == "openmp" and "site-packages" not in path)
            # MKL on its GNU layer runs on the libgomp threads numba's pool is (kernels.matmul)
            or (info.get("internal_api") == "mkl" and info.get("threading_layer") == "gnu"))
        out.append({"pool": f"{info.get('internal_api')} ({owner})", "library": os.path.basename(path),
                    "api": info.get("user_api"), "threads": info.get("num_threads"), "strided": mine})
    return out


def pools_report() -> str:
    """``python -m strided threads``: the table of ``pools()``, the CPUs this process may
    use, what strided set for idle threads, and a warning when the pools together hold
    more threads than those CPUs."""
    rows = pools()
    report = cpu_report()
    lines = [f"{'pool':34s} {'threads':>7s}  library"]
    for r in rows:
        if r["strided"] and r["api"] == "openmp":
            continue  # numba's own OpenMP runtime: the first row already is that pool
        shared = ", on strided's threads" if r["strided"] and r["pool"] != "strided (numba)" else ""
        lines.append(f"{r['pool']:34s} {r['threads']!s:>7s}  {r['library']} ({r['api']}{shared})")
    others = [r for r in rows if not r["strided"]]
    total = rows[0]["threads"] + sum(r["threads"] or 0 for r in others)
    cpus = report["default"]
    lines.append(f"CPUs this process may use: {cpus} (affinity {report['affinity']}, cgroup quota "
                 f"{report['cgroup_quota'] if report['cgroup_quota'] is not None else 'none'})")
    spin = os.environ.get("GOMP_SPINCOUNT")
    policy = os.environ.get("OMP_WAIT_POLICY")
    how = "unset" if not (spin or policy) else "set by strided" if "GOMP_SPINCOUNT" in ENV_SET else "set by the user"
    lines.append(f"idle OpenMP threads: GOMP_SPINCOUNT={spin or '-'} OMP_WAIT_POLICY={policy or '-'} ({how})")
    if "NUMBA_CPU_FEATURES" in ENV_SET:
        lines.append("vector width: 512 bits (strided set NUMBA_CPU_FEATURES to this CPU's less prefer-256-bit)")
    if total > cpus:
        lines.append(f"warning: {len(others) + 1} pools hold {total} threads for {cpus} CPUs; a pool that "
                     "spins after its work stalls the others (strided's gemms pin BLAS to one thread "
                     "during the call; NumPy's and PyTorch's own calls use their pools)")
    return "\n".join(lines)


def set_num_threads(n: int) -> None:
    """Set the thread count for strided's kernels and for the BLAS pool."""
    global _num_threads
    from .errors import StridedError

    if not isinstance(n, int) or n < 1:
        raise StridedError(f"set_num_threads: expected a positive integer, got {n!r}")
    _num_threads = n
    _apply()
    caches.clear(threads_only=True)  # plans made for the old count must not be reused


def _apply() -> None:
    numba.set_num_threads(min(_num_threads, _numba_cap))
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=_num_threads, user_api="blas")
    except Exception:  # threadpoolctl missing or no BLAS found: nothing to limit
        pass


def _learn_layer() -> str | None:
    """numba's threading layer once it has started (the first parallel kernel), else None."""
    global _layer
    if _layer is None:
        try:
            _layer = numba.threading_layer()
        except ValueError:  # not initialised until the first parallel kernel runs
            return None
    return _layer


def serialised() -> bool:
    """Whether parallel kernels are entered one at a time: on numba's workqueue layer, which
    aborts when two threads enter it at once."""
    return _learn_layer() == "workqueue"


def parallel_guard():
    """A context entered around parallel kernels: a lock only on numba's unsafe workqueue layer."""
    if _learn_layer() is None:
        return _Lazy()
    return _lock if serialised() else _NULL


def static_chunks() -> bool:
    """Whether numba's layer runs a parallel loop's chunks as a static schedule (OpenMP: each
    thread a contiguous share, whatever chunk size is asked), so that asking costs a call for
    nothing; tbb and workqueue hand the chunks out as threads come free."""
    return _learn_layer() == "omp"


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Lazy(_Null):
    """First parallel call in the process: take the lock, then learn the layer."""

    def __enter__(self):
        _lock.acquire()
        return self

    def __exit__(self, *exc):
        _learn_layer()
        _lock.release()
        return False


_NULL = _Null()
_apply()
