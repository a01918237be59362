"""The linalg extension on complex matrices against array_api_strict (LAPACK's c/z routines
through NumPy on both sides): general matrices under drawn layouts (gaps, flips, transposes,
broadcast batches), Hermitian positive definite ones through a conjugate-transposed,
flipped view.  What is real for complex input (norms, singular values, eigh's eigenvalues,
log |det|) must come back in the real dtype of the input's precision, as the standard says."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import array_api_strict as xps
import strided as sd
from strategies import layouts_of_shape, np_view

L, X = sd.linalg, xps.linalg


@st.composite
def complex_matrices(draw, dtype=np.complex128):
    """(tensor, the NumPy array it views): a stack of matrices under a drawn layout."""
    batch = draw(st.sampled_from([(), (2,), (1, 2)]))
    shape = batch + (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    lay, n = draw(layouts_of_shape(shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    buf = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return sd.as_strided(sd.from_numpy(buf), lay.shape, lay.stride, lay.offset), np_view(buf, lay)


def strict(a):
    return xps.asarray(np.ascontiguousarray(a))


def same(got, want, tol):
    want = np.asarray(want)
    assert isinstance(got, sd.Tensor), type(got)
    assert got.shape == want.shape and got.dtype.np == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


@given(complex_matrices())
def test_general_matrices_match_strict_on_any_layout(tx):
    t, a = tx
    s = strict(a)
    same(L.svdvals(t), X.svdvals(s), 1e-10)
    same(L.pinv(t), X.pinv(s), 1e-8)
    same(L.matrix_rank(t), X.matrix_rank(s), 0)
    for ord in ("fro", "nuc", 1, -np.inf):
        same(L.matrix_norm(t, ord=ord), X.matrix_norm(s, ord=ord), 1e-10)
    for ord in (2, 1, np.inf):
        same(L.vector_norm(t, axis=(-2, -1), ord=ord), X.vector_norm(s, axis=(-2, -1), ord=ord), 1e-10)
    q, r = L.qr(t)
    assert q.dtype is t.dtype and r.dtype is t.dtype
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, rtol=1e-10, atol=1e-10)
    u, sv, vh = L.svd(t, full_matrices=False)
    assert u.dtype is t.dtype and sv.dtype is sd.float64 and vh.dtype is t.dtype
    np.testing.assert_allclose((u.numpy() * sv.numpy()[..., None, :]) @ vh.numpy(), a, rtol=1e-10, atol=1e-10)
    if a.shape[-1] == a.shape[-2]:
        same(L.det(t), X.det(s), 1e-9)
        sign, logabs = L.slogdet(t)
        ws = X.slogdet(s)
        same(sign, ws.sign, 1e-10)
        same(logabs, ws.logabsdet, 1e-10)


def _hpd(rng, n, batch, dtype):
    m = rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n))
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_hermitian_and_square_functions_match_strict(dtype):
    rng = np.random.default_rng(0)
    a = _hpd(rng, 4, (2,), dtype)
    view = np.swapaxes(a, -1, -2)[:, ::-1, ::-1]  # still Hermitian positive definite
    t, s = sd.asarray(view), strict(view)
    tol = 1e-9 if dtype == np.complex128 else 2e-3
    same(L.cholesky(t), X.cholesky(s), tol)
    same(L.cholesky(t, upper=True), X.cholesky(s, upper=True), tol)
    same(L.inv(t), X.inv(s), tol)
    same(L.eigvalsh(t), X.eigvalsh(s), tol)
    w, v = L.eigh(t)
    same(w, X.eigh(s).eigenvalues, tol)
    np.testing.assert_allclose(v.numpy() @ (w.numpy()[..., None] * np.conj(np.swapaxes(v.numpy(), -1, -2))), view,
                               rtol=tol, atol=tol)
    b = (rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))).astype(dtype)
    same(L.solve(t, sd.asarray(b)), X.solve(s, strict(b)), tol)
    same(L.solve(t[0], sd.asarray(b[0, :, 0])), X.solve(strict(view[0]), strict(b[0, :, 0])), tol)
    same(L.pinv(t, rtol=sd.asarray(np.array([1e-3, 0.5], np.float32 if dtype == np.complex64 else np.float64))),
         X.pinv(s, rtol=strict(np.array([1e-3, 0.5], np.float32 if dtype == np.complex64 else np.float64))), tol)


def test_integers_are_still_refused_by_name():
    with pytest.raises(sd.DTypeError, match="det: expected a floating-point or complex tensor, got strided.i64"):
        L.det(sd.asarray(np.eye(2, dtype=np.int64)))
    with pytest.raises(sd.DTypeError, match="solve: expected a floating-point or complex right-hand side"):
        L.solve(sd.asarray(np.eye(2)), sd.asarray(np.ones(2, np.int32)))
