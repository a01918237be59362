"""``python -m strided bench --startup``: import time and first-call latency, cold and warm.

Every kernel is compiled by numba on its first call with a given dtype and
cached on disk (``cache=True``), so a user's first ``a + b`` costs either a
compile (seconds) or a cache load (tens of milliseconds).  Each measurement
runs in a fresh interpreter, because nothing about the first call can be
measured twice in one process.  The cache lives in an empty temporary
``NUMBA_CACHE_DIR``: the first run finds it empty (cold), the second run
reuses what the first one wrote (warm).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

# (label, setup and op as code run in the child; ``a`` and ``b`` are 64x64 f32 tensors)
OPS = (
    ("a + b (f32)", "a + b"),
    ("a.t().contiguous()", "a.t().contiguous()"),
    ("a.sum()", "a.sum()"),
    ("a @ b", "a @ b"),
)

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import strided as sd
t_import = time.perf_counter() - t0
import numpy as np
ops = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
a = sd.from_numpy(rng.standard_normal((64, 64)).astype(np.float32))
b = sd.from_numpy(rng.standard_normal((64, 64)).astype(np.float32))
first, second = {}, {}
for label, code in ops:
    fn = eval("lambda: " + code, {"a": a, "b": b, "sd": sd})
    t = time.perf_counter(); fn(); first[label] = time.perf_counter() - t
    t = time.perf_counter(); fn(); second[label] = time.perf_counter() - t
print("STARTUP " + json.dumps({"import": t_import, "first": first, "second": second}))
"""


def _child(ops, cache_dir: str, timeout: float) -> dict:
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = cache_dir
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(list(ops))], capture_output=True, text=True,
                          env=env, timeout=timeout)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("STARTUP ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"startup child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1][len("STARTUP "):])


def measure(ops=OPS, timeout: float = 600.0) -> dict:
    """``{"cold": run, "warm": run}``, each ``{"import": s, "first": {op: s}, "second": {op: s}}``."""
    ops = [tuple(o) for o in ops]
    with tempfile.TemporaryDirectory(prefix="strided-numba-cache-") as cache:
        cold = _child(ops, cache, timeout)
        warm = _child(ops, cache, timeout)
    return {"cold": cold, "warm": warm, "ops": [label for label, _ in ops]}


def table(res: dict) -> str:
    rows = [("import strided", res["cold"]["import"], res["warm"]["import"])]
    for label in res["ops"]:
        rows.append((f"first {label}", res["cold"]["first"][label], res["warm"]["first"][label]))
    for label in res["ops"]:
        rows.append((f"second {label}", res["cold"]["second"][label], res["warm"]["second"][label]))
    width = max(len(r[0]) for r in rows)
    out = [f"{'':<{width}}  {'cold cache':>11}  {'warm cache':>11}"]
    for name, cold, warm in rows:
        out.append(f"{name:<{width}}  {cold * 1e3:>8.1f} ms  {warm * 1e3:>8.1f} ms")
    return "\n".join(out)


def main() -> int:
    res = measure()
    print(table(res))
    total_cold = res["cold"]["import"] + sum(res["cold"]["first"].values())
    total_warm = res["warm"]["import"] + sum(res["warm"]["first"].values())
    print(f"\nimport plus first calls: {total_cold:.2f} s with an empty numba cache, {total_warm:.2f} s with it warm "
          "(each run in a fresh interpreter; the cache is a temporary NUMBA_CACHE_DIR).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
