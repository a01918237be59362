"""Two more scikit-learn estimators under array_api_dispatch=True (beyond the scalers and PCA
of tests/array_api/test_sklearn_clients.py): LinearDiscriminantAnalysis and Ridge take strided
tensors (flipped views) and return Tensors with NumPy's values.  scikit-learn's dispatch needs
SciPy's (SCIPY_ARRAY_API=1, read when SciPy is first imported): a fresh interpreter."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("array_api_compat")

SCRIPT = r"""
import numpy as np
import sklearn
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
import strided as sd

rng = np.random.default_rng(0)
a = rng.standard_normal((40, 5))
labels = (a[:, 0] + 0.3 * a[:, 1] > 0).astype(np.int64)
target = a @ np.arange(5.0) + 0.1 * rng.standard_normal(40)
cases = [
    ("LinearDiscriminantAnalysis", lambda: LinearDiscriminantAnalysis(solver="svd"), labels,
     lambda m, X, y: m.fit(X, y).predict_proba(X)),
    ("Ridge", lambda: Ridge(alpha=0.5), target, lambda m, X, y: m.fit(X, y).predict(X)),
]
for name, make, y, run in cases:
    want = run(make(), a[::-1], y[::-1])
    with sklearn.config_context(array_api_dispatch=True):
        got = run(make(), sd.asarray(a)[::-1], sd.asarray(y)[::-1])
    assert isinstance(got, sd.Tensor), (name, type(got))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-8, atol=1e-10, err_msg=name)
print("ok")
"""


def test_estimators_take_and_return_tensors():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"
