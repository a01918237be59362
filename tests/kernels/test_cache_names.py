"""Kernels made by one factory for several ops each carry their op's name, so numba's
disk cache cannot link one op's cached code in place of another's (numba issue #10486:
a process that compiled argmax and then loaded argmin from the cache ran argmax's code)."""

import os
import subprocess
import sys
import textwrap

from strided.kernels import elementwise as ew
from strided.kernels import reduce as red


def test_generated_kernels_have_one_name_per_op():
    names = {}
    for op in ("argmax", "argmin", "sum", "max"):
        for key, k in red._kernel_set(op).items():
            names.setdefault(k.py_func.__qualname__, set()).add(op)
    for op in ("exp", "add", "mul"):  # generated: one module per op and dtype, named by its source
        for comp in ("float32", "float64"):
            for key, k in ew._kernel_set(op, comp).items():
                names.setdefault(f"{k.py_func.__module__}.{k.py_func.__qualname__}", set()).add((op, comp))
    shared = {name: ops for name, ops in names.items() if len(ops) > 1}
    assert not shared, f"kernels of several ops share a name: {shared}"


_RUN = textwrap.dedent("""
    import sys
    import numpy as np
    import strided as sd
    x = np.random.default_rng(0).standard_normal((300, 257)).astype(np.float32)
    t = sd.from_numpy(x)
    for op in sys.argv[1:]:
        got = getattr(t, op)(0).numpy()
        want = getattr(x, op)(0)
        assert np.array_equal(got, want), op
""")


def test_an_op_loaded_from_the_cache_beside_a_fresh_one_runs_its_own_code(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    script = tmp_path / "run.py"
    script.write_text(_RUN)
    for ops in (["argmin", "min"], ["argmax", "argmin", "max", "min"]):  # the second loads what the first cached
        done = subprocess.run([sys.executable, str(script), *ops], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
