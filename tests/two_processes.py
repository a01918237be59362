"""Run a snippet in two fresh processes that share one empty numba cache (the second should
load what the first compiled), for the tests of on-disk kernel caching."""

from __future__ import annotations

import os
import subprocess
import sys


def twice(code: str, tmp_path) -> list[list[str]]:
    """The words ``code`` printed in each of two processes run one after the other with
    ``NUMBA_CACHE_DIR`` and ``STRIDED_KERNEL_DIR`` under ``tmp_path``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), STRIDED_KERNEL_DIR=str(tmp_path / "kernels"))
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    return [r.stdout.split() for r in runs]
