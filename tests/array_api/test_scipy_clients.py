"""A real client of the standard: SciPy with SCIPY_ARRAY_API=1 takes strided tensors and returns
strided tensors with NumPy's values.  SciPy reads the flag when it is first imported, so the
check runs in a fresh interpreter."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("scipy")

SCRIPT = r"""
import numpy as np
import scipy.special as special
import scipy.stats as stats
import strided as sd

a = np.random.default_rng(0).standard_normal((5, 7))
view = a[::-1, 1::2]                       # a flipped, strided view
t = sd.asarray(view)
cases = {
    "softmax": (lambda x: special.softmax(x, axis=1)),
    "zscore": (lambda x: stats.zscore(x, axis=0)),
    "skew": (lambda x: stats.skew(x, axis=0)),
    "gmean": (lambda x: stats.gmean(x * x + 1, axis=1)),
    "logsumexp": (lambda x: special.logsumexp(x, axis=1)),
}
for name, f in cases.items():
    got, want = f(t), f(view)
    assert isinstance(got, sd.Tensor), (name, type(got))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, err_msg=name)
print("ok", len(cases))
"""


def test_scipy_functions_take_and_return_tensors():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok 5"
