"""Array API clients beyond SciPy and scikit-learn: einops (``einops.array_api``) and
array-api-extra take tensors (any layout) and give Tensors with NumPy's values."""

import numpy as np
import pytest

import strided as sd


def _t():
    a = np.arange(24.0).reshape(2, 3, 4) / 3
    return a, sd.asarray(a)


def test_einops_array_api():
    ea = pytest.importorskip("einops.array_api")
    a, t = _t()
    cases = [
        (ea.rearrange(t, "a b c -> (b a) c"), np.transpose(a, (1, 0, 2)).reshape(6, 4)),
        (ea.rearrange(t.mT[::-1], "a c b -> b (a c)"),
         np.transpose(np.swapaxes(a, -1, -2)[::-1], (2, 0, 1)).reshape(3, 8)),
        (ea.reduce(t.mT, "a c b -> a", "sum"), a.sum((1, 2))),
        (ea.reduce(t[:, ::-1], "a b c -> b c", "max"), a[:, ::-1].max(0)),
        (ea.repeat(t[0], "b c -> b c k", k=2), np.repeat(a[0][..., None], 2, axis=2)),
    ]
    for got, want in cases:
        assert isinstance(got, sd.Tensor)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_array_api_extra():
    xpx = pytest.importorskip("array_api_extra")
    a, t = _t()
    m = t[0].mT[::-1]
    ma = a[0].T[::-1]
    fixed = ma.copy()
    fixed[1:, ::2] = -1.0
    cases = [
        (xpx.atleast_nd(t[0, 0], ndim=3), a[0, 0][None, None]),
        (xpx.cov(m), np.cov(ma)),
        (xpx.kron(m, t[1]), np.kron(ma, a[1])),
        (xpx.pad(m, 1), np.pad(ma, 1)),
        (xpx.sinc(m / 7), np.sinc(ma / 7)),
        (xpx.isclose(t, t + 1e-9), np.isclose(a, a + 1e-9)),
        (xpx.create_diagonal(t[0, 0]), np.diag(a[0, 0])),
        (xpx.setdiff1d(t[0].reshape(-1), t[0, 0]), np.setdiff1d(a[0].ravel(), a[0, 0])),
        (xpx.at(m)[1:, ::2].set(-1.0, copy=True), fixed),
        (xpx.nunique(t), np.asarray(24)),
    ]
    for got, want in cases:
        assert isinstance(got, sd.Tensor), type(got)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(m), ma)  # at(...).set(copy=True) left m as it was
