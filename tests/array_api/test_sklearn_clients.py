"""A real client of the standard: scikit-learn estimators under array_api_dispatch=True take
strided tensors and return strided tensors with NumPy's values.  scikit-learn's dispatch needs
SciPy's (SCIPY_ARRAY_API=1, read when SciPy is first imported), so the check runs in a fresh
interpreter."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("array_api_compat")  # scikit-learn's dispatch needs it

SCRIPT = r"""
import numpy as np
import sklearn
from sklearn.decomposition import PCA
from sklearn.preprocessing import MinMaxScaler
import strided as sd

a = np.random.default_rng(0).standard_normal((30, 6))
view = a[::-1, ::-1]                       # a flipped view: negative strides
for name, make in [("MinMaxScaler", MinMaxScaler), ("PCA", lambda: PCA(n_components=2, svd_solver="full"))]:
    want = make().fit_transform(view)
    with sklearn.config_context(array_api_dispatch=True):
        got = make().fit_transform(sd.asarray(view))
    assert isinstance(got, sd.Tensor), (name, type(got))
    # PCA's components are defined up to sign; both runs fix it the same way (svd_flip)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12, err_msg=name)
print("ok")
"""


def test_estimators_take_and_return_tensors():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"
