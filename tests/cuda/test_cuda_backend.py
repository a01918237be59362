"""The CUDA backend from a CPU-only process: what ``import strided`` loads, and the device
tests (``on_device/``) run in numba-cuda's simulator, in a subprocess with
``NUMBA_ENABLE_CUDASIM=1`` (numba chooses the simulator when numba.cuda is first imported)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _run(code: str, **env) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env}, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_strided_never_imports_numba_cuda():
    # The CUDA backend loads when a CUDA device is asked for, never with the package; a CPU
    # program that moves, copies and prints tensors on the CPU leaves it unloaded too.
    code = (
        "import sys, strided as sd\n"
        "t = sd.arange(6).reshape(2, 3)\n"
        "t.t().contiguous(); repr(t); t.to_device('cpu')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('numba.cuda', 'numba_cuda', 'strided.cuda'))))\n"
    )
    assert _run(code) == "[]"


def test_without_numba_cuda_a_cuda_device_is_refused_by_name():
    # numba-cuda hidden from the import system: the move names the op, the device and the extra
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.startswith(('numba.cuda', 'numba_cuda')):\n"
        "            raise ImportError('numba-cuda is hidden by this test')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import strided as sd\n"
        "try:\n"
        "    sd.arange(3).to_device('cuda')\n"
        "except sd.StridedError as e:\n"
        "    print(e)\n"
    )
    msg = _run(code)
    assert msg.startswith("to_device:") and "'cuda:0'" in msg and "strided[cuda]" in msg, msg


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda is not installed")
@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="this run collects on_device/ itself")
def test_simulated_cuda_suite():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-rfEs", "-p", "no:cacheprovider", "-W",
         "ignore::RuntimeWarning", str(HERE / "on_device")],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    summary = out.stdout.strip().splitlines()[-1]  # "22 passed in 9.1s": nothing skipped or deselected
    # "56 passed in 120s" or "56 passed, 10 warnings in 120s" (NumPy's own warnings on empty means)
    # -rfEs puts each failure, error and skip with its reason just above the summary line
    assert " passed" in summary and not any(w in summary for w in ("failed", "error", "skipped", "deselected")), \
        out.stdout[out.stdout.rfind("short test summary"):][-3000:]
