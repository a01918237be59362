"""The linter CI runs: ``ruff check src tests`` under pyproject.toml's ``[tool.ruff]`` finds nothing.

The test extra installs ruff, so ``python -m pytest`` after ``pip install ".[test]"`` lints
the tree; where ruff is not installed at all the test skips rather than fails.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str] | None:
    """How to run ruff: the one installed beside this Python first, else one on PATH."""
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    return [exe] if exe else None


def test_ruff_finds_nothing():
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (the test extra installs it)")
    if not (ROOT / "pyproject.toml").is_file() or not (ROOT / "src").is_dir():
        pytest.skip("not run from a checkout of the repository")
    out = subprocess.run([*ruff, "check", "--no-cache", "--output-format", "concise", "src", "tests"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"ruff check src tests (exit {out.returncode}):\n{out.stdout}{out.stderr}"
