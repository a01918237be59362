"""NumPy's function scan (issue 27): every public function of numpy, numpy.linalg, numpy.fft and
numpy.lib.stride_tricks, and every ufunc with its methods, called with tensors where an ndarray
would go, against NumPy on the same values.  Each tensor is a transposed, negative-step or
broadcast view (or a plain one, or one tensor among ndarrays); the reference gets fresh
ndarrays of the same values (NumPy's own read-only broadcast for the broadcast views).

A call fails the scan when it raises for tensors but not for ndarrays, when it raises anything
but a StridedError for tensors, when its answer (values, dtype, shape) differs from NumPy's, when
an array answer comes back as an ndarray instead of a tensor, or when an argument the call writes
to ends up different.  The table is written by hand; a NumPy function missing from it fails
``test_every_dispatched_function_is_scanned``.
"""

import io
import warnings
from collections import Counter

import numpy as np
import pytest

import strided as sd
from strided import numpy_api, numpy_fallback

RNG = np.random.default_rng(27)
_M = RNG.standard_normal((4, 4))
VALUES = {
    "x": RNG.standard_normal((3, 4)), "y": RNG.standard_normal((3, 4)), "v": RNG.standard_normal(5),
    "w": RNG.standard_normal(5), "m": _M @ _M.T + 4 * np.eye(4), "i": RNG.integers(0, 5, (3, 4)),
    "iv": RNG.integers(0, 5, 5), "b": RNG.random((3, 4)) > 0.5, "c": RNG.standard_normal((3, 4)) + 1j,
    "u": RNG.integers(0, 256, (3, 4)).astype(np.uint8), "s": np.sort(RNG.standard_normal(5)),
    "p": np.array([1.0, -2.0, 0.5]), "x3": RNG.standard_normal((2, 3, 4)), "q": RNG.standard_normal((4, 3)),
    "o": np.zeros((3, 4)), "ob": np.zeros((3, 4), bool), "oi": np.zeros((3, 4), np.int64),
    "xn": np.where(RNG.random((3, 4)) > 0.7, np.nan, RNG.standard_normal((3, 4))),
}
VARIANTS = ("plain", "transposed", "negative", "broadcast", "mixed")


def _layouts(vals, variant, asarray):
    """``vals`` seen through the variant's layout, built with ``asarray`` over a fresh buffer."""
    k = vals.ndim
    if variant == "transposed" and k >= 2:
        x = asarray(np.ascontiguousarray(vals.swapaxes(-1, -2)))
        return x.mT if isinstance(x, sd.Tensor) else x.swapaxes(-1, -2)
    if variant == "transposed" and k == 1:
        return asarray(np.repeat(vals, 2))[::2]
    if variant == "negative" and k:
        flip = (slice(None, None, -1),) * k
        return asarray(vals[flip].copy())[flip]
    if variant == "broadcast" and k and vals.shape[0] > 1:
        row = asarray(vals[:1].copy())
        return row.broadcast_as(vals.shape) if isinstance(row, sd.Tensor) else np.broadcast_to(row, vals.shape)
    return asarray(vals.copy())


def _tensor(vals, variant):
    """A tensor holding ``vals`` through the variant's layout, and NumPy's array of the same
    values and layout (over its own buffer: NumPy may write to it)."""
    t = _layouts(vals, variant, sd.asarray)
    ref = _layouts(vals, variant, np.asarray)
    assert np.asarray(t).strides == ref.strides
    return t, ref


# Native answers that are copies where NumPy's are views: the namespace's real and imag
# (the Array API's, with gradients) serve np.real and np.imag.
COPIES = {"real", "imag"}


class Side:
    """The call's arguments by name, made on first use: tensors, or NumPy's reference."""

    def __init__(self, variant, tensors):
        self.variant, self.tensors, self.made = variant, tensors, {}

    def __getattr__(self, name):
        if name not in VALUES:
            raise AttributeError(name)
        if name not in self.made:
            t, ref = _tensor(VALUES[name], self.variant)
            tensor = self.tensors and (self.variant != "mixed" or not self.made)
            self.made[name] = t if tensor else ref
        return self.made[name]


F = {}  # "numpy.name" -> calls (each takes a Side)


def scan(name, *calls):
    F[name] = calls


# -- numpy ------------------------------------------------------------------------------------
scan("all", lambda A: np.all(A.b, axis=0), lambda A: np.all(A.x > -3))
scan("allclose", lambda A: np.allclose(A.x, A.y), lambda A: np.allclose(A.x, A.x))
scan("amax", lambda A: np.amax(A.x, axis=1)); scan("amin", lambda A: np.amin(A.x, axis=0))
scan("angle", lambda A: np.angle(A.c), lambda A: np.angle(A.x, deg=True))
scan("any", lambda A: np.any(A.b, axis=1), lambda A: np.any(A.x > 1, where=A.b))
scan("append", lambda A: np.append(A.x, A.y, axis=0), lambda A: np.append(A.v, 1.0))
scan("apply_along_axis", lambda A: np.apply_along_axis(np.sum, 0, A.x))
scan("apply_over_axes", lambda A: np.apply_over_axes(np.sum, A.x3, [0, 2]))
scan("argmax", lambda A: np.argmax(A.x, axis=0), lambda A: np.argmax(A.x))
scan("argmin", lambda A: np.argmin(A.x, axis=1))
scan("argpartition", lambda A: np.argpartition(A.v, 2)[2:3])
scan("argsort", lambda A: np.argsort(A.x, axis=0, kind="stable"))
scan("argwhere", lambda A: np.argwhere(A.x > 0))
scan("around", lambda A: np.around(A.x, 2)); scan("round", lambda A: np.round(A.x, 1))
scan("array2string", lambda A: np.array2string(A.x))
scan("array_equal", lambda A: np.array_equal(A.x, A.y), lambda A: np.array_equal(A.x, A.x))
scan("array_equiv", lambda A: np.array_equiv(A.x, A.x[0]))
scan("array_repr", lambda A: np.array_repr(A.v)); scan("array_str", lambda A: np.array_str(A.v))
scan("array_split", lambda A: np.array_split(A.v, 3), lambda A: np.array_split(A.x, 2, axis=1))
scan("astype", lambda A: np.astype(A.x, np.float32))
scan("atleast_1d", lambda A: np.atleast_1d(A.v)); scan("atleast_2d", lambda A: np.atleast_2d(A.v))
scan("atleast_3d", lambda A: np.atleast_3d(A.x))
scan("average", lambda A: np.average(A.x, axis=0, weights=A.y ** 2), lambda A: np.average(A.v))
scan("bincount", lambda A: np.bincount(A.iv), lambda A: np.bincount(A.iv, weights=A.v))
scan("block", lambda A: np.block([[A.x, A.y], [A.y, A.x]]))
scan("broadcast_arrays", lambda A: np.broadcast_arrays(A.x, A.x[0]))
scan("broadcast_to", lambda A: np.broadcast_to(A.v, (2, 5)))
scan("busday_count", lambda A: np.busday_count(A.iv, A.iv))  # datetimes only: both raise
scan("busday_offset", lambda A: np.busday_offset(A.iv, 1))
scan("can_cast", lambda A: np.can_cast(A.x, np.float32))
scan("choose", lambda A: np.choose(A.i % 2, [A.x, A.y]))
scan("clip", lambda A: np.clip(A.x, -0.5, 0.5), lambda A: np.clip(A.x, A.y, None))
scan("column_stack", lambda A: np.column_stack([A.v, A.w]))
scan("common_type", lambda A: np.common_type(A.x, A.c))
scan("compress", lambda A: np.compress([True, False, True], A.x, axis=0))
scan("concat", lambda A: np.concat([A.x, A.y])); scan("concatenate", lambda A: np.concatenate([A.x, A.y], axis=1))
scan("convolve", lambda A: np.convolve(A.v, A.p)); scan("correlate", lambda A: np.correlate(A.v, A.w, "full"))
scan("copy", lambda A: np.copy(A.x))
scan("copyto", lambda A: (np.copyto(A.x, A.y), A.x)[1], lambda A: (np.copyto(A.x, 7.0, where=A.b), A.x)[1])
scan("corrcoef", lambda A: np.corrcoef(A.x)); scan("cov", lambda A: np.cov(A.x), lambda A: np.cov(A.v, A.w))
scan("count_nonzero", lambda A: np.count_nonzero(A.i, axis=0))
scan("cross", lambda A: np.cross(A.q[:2], A.q[1:3]))
scan("cumprod", lambda A: np.cumprod(A.x, axis=1)); scan("cumsum", lambda A: np.cumsum(A.x))
scan("cumulative_prod", lambda A: np.cumulative_prod(A.v))
scan("cumulative_sum", lambda A: np.cumulative_sum(A.x, axis=0, include_initial=True))
scan("datetime_as_string", lambda A: np.datetime_as_string(A.iv))
scan("delete", lambda A: np.delete(A.x, 1, axis=1))
scan("diag", lambda A: np.diag(A.x), lambda A: np.diag(A.v, 1))
scan("diag_indices_from", lambda A: np.diag_indices_from(A.m))
scan("diagflat", lambda A: np.diagflat(A.v)); scan("diagonal", lambda A: np.diagonal(A.x, 1))
scan("diff", lambda A: np.diff(A.x, axis=0)); scan("digitize", lambda A: np.digitize(A.v, np.sort(VALUES["s"])))
scan("dot", lambda A: np.dot(A.x, A.q)); scan("dsplit", lambda A: np.dsplit(A.x3, 2))
scan("dstack", lambda A: np.dstack([A.x, A.y])); scan("ediff1d", lambda A: np.ediff1d(A.x))
scan("einsum", lambda A: np.einsum("ij,jk->ik", A.x, A.q), lambda A: np.einsum("ii", A.m))
scan("einsum_path", lambda A: np.einsum_path("ij,jk->ik", A.x, A.q)[1])
scan("empty_like", lambda A: np.empty_like(A.x).shape)
scan("expand_dims", lambda A: np.expand_dims(A.x, 1)); scan("extract", lambda A: np.extract(A.b, A.x))
scan("fill_diagonal", lambda A: (np.fill_diagonal(A.m, 0.0), A.m)[1])
scan("fix", lambda A: np.fix(A.x * 3)); scan("flatnonzero", lambda A: np.flatnonzero(A.i))
scan("flip", lambda A: np.flip(A.x, 1)); scan("fliplr", lambda A: np.fliplr(A.x)); scan("flipud", lambda A: np.flipud(A.x))
scan("full_like", lambda A: np.full_like(A.x, 3.5)); scan("geomspace", lambda A: np.geomspace(np.abs(A.v) + 1, 10, 3))
scan("gradient", lambda A: np.gradient(A.x), lambda A: np.gradient(A.v, 0.5))
scan("histogram", lambda A: np.histogram(A.v, bins=3), lambda A: np.histogram(A.x, bins=VALUES["s"]))
scan("histogram2d", lambda A: np.histogram2d(A.v, A.w, bins=2))
scan("histogram_bin_edges", lambda A: np.histogram_bin_edges(A.x, bins=4))
scan("histogramdd", lambda A: np.histogramdd(A.q, bins=2))
scan("hsplit", lambda A: np.hsplit(A.x, 2)); scan("hstack", lambda A: np.hstack([A.x, A.y]))
scan("i0", lambda A: np.i0(A.x)); scan("imag", lambda A: np.imag(A.c))
scan("inner", lambda A: np.inner(A.x, A.y)); scan("insert", lambda A: np.insert(A.v, 1, 9.0))
scan("interp", lambda A: np.interp(A.v, np.sort(VALUES["s"]), A.w))
scan("intersect1d", lambda A: np.intersect1d(A.iv, A.i))
scan("is_busday", lambda A: np.is_busday(A.iv)); scan("isclose", lambda A: np.isclose(A.x, A.y, atol=1))
scan("iscomplex", lambda A: np.iscomplex(A.c)); scan("iscomplexobj", lambda A: np.iscomplexobj(A.c))
scan("isin", lambda A: np.isin(A.i, A.iv)); scan("isneginf", lambda A: np.isneginf(A.x / 0))
scan("isposinf", lambda A: np.isposinf(A.x / 0)); scan("isreal", lambda A: np.isreal(A.c))
scan("isrealobj", lambda A: np.isrealobj(A.x)); scan("ix_", lambda A: np.ix_(A.iv, A.iv))
scan("kron", lambda A: np.kron(A.x, A.m)); scan("lexsort", lambda A: np.lexsort((A.v, A.iv)))
scan("linspace", lambda A: np.linspace(A.v, A.w, 4)); scan("logspace", lambda A: np.logspace(A.v, A.w, 3))
scan("matrix_transpose", lambda A: np.matrix_transpose(A.x))
scan("max", lambda A: np.max(A.x, axis=0), lambda A: np.max(A.x, axis=0, initial=0.5))
scan("min", lambda A: np.min(A.x), lambda A: np.min(A.x, where=A.b, initial=9))
scan("may_share_memory", lambda A: np.may_share_memory(A.x, A.y))
scan("shares_memory", lambda A: np.shares_memory(A.x, A.x[0]))
scan("mean", lambda A: np.mean(A.x, axis=1), lambda A: np.mean(A.i, where=A.b))
scan("median", lambda A: np.median(A.x), lambda A: np.median(A.x, axis=0))
scan("meshgrid", lambda A: np.meshgrid(A.v, A.w)); scan("min_scalar_type", lambda A: np.min_scalar_type(A.x))
scan("moveaxis", lambda A: np.moveaxis(A.x3, 0, -1)); scan("nan_to_num", lambda A: np.nan_to_num(A.xn, nan=-1))
for _n in ("nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin",
           "nanprod", "nanstd", "nansum", "nanvar"):
    scan(_n, lambda A, f=getattr(np, _n): f(A.xn, axis=1))
scan("nanpercentile", lambda A: np.nanpercentile(A.xn, 30, axis=1))
scan("nanquantile", lambda A: np.nanquantile(A.xn, [0.2, 0.8]))
scan("ndim", lambda A: np.ndim(A.x3)); scan("nonzero", lambda A: np.nonzero(A.i))
scan("ones_like", lambda A: np.ones_like(A.i)); scan("outer", lambda A: np.outer(A.v, A.w))
scan("packbits", lambda A: np.packbits(A.b, axis=1)); scan("unpackbits", lambda A: np.unpackbits(A.u, axis=0))
scan("pad", lambda A: np.pad(A.x, 1), lambda A: np.pad(A.v, (2, 1), mode="reflect"))
scan("partition", lambda A: np.partition(A.v, 2)[2]); scan("percentile", lambda A: np.percentile(A.x, [10, 90]))
scan("permute_dims", lambda A: np.permute_dims(A.x3, (2, 0, 1)))
scan("piecewise", lambda A: np.piecewise(A.v, [A.v < 0, A.v >= 0], [-1.0, lambda z: z * 2]))
scan("place", lambda A: (np.place(A.x, A.b, [1.0, 2.0]), A.x)[1])
scan("poly", lambda A: np.poly(A.v)); scan("polyadd", lambda A: np.polyadd(A.p, A.v))
scan("polyder", lambda A: np.polyder(A.v, 2)); scan("polydiv", lambda A: np.polydiv(A.v, A.p))
scan("polyfit", lambda A: np.polyfit(A.s, A.v, 2)); scan("polyint", lambda A: np.polyint(A.p))
scan("polymul", lambda A: np.polymul(A.p, A.v)); scan("polysub", lambda A: np.polysub(A.v, A.p))
scan("polyval", lambda A: np.polyval(A.p, A.x)); scan("roots", lambda A: np.sort_complex(np.roots(A.p)))
scan("prod", lambda A: np.prod(A.x, axis=0)); scan("ptp", lambda A: np.ptp(A.x, axis=1))
scan("put", lambda A: (np.put(A.x, [0, 5], [-1.0, -2.0]), A.x)[1])
scan("put_along_axis", lambda A: (np.put_along_axis(A.x, np.zeros((3, 1), int), 0.0, axis=1), A.x)[1])
scan("putmask", lambda A: (np.putmask(A.x, A.b, A.y), A.x)[1])
scan("quantile", lambda A: np.quantile(A.x, 0.3, axis=0, method="nearest"))
scan("ravel", lambda A: np.ravel(A.x)); scan("ravel_multi_index", lambda A: np.ravel_multi_index((A.iv, A.iv), (5, 5)))
scan("real", lambda A: np.real(A.c)); scan("real_if_close", lambda A: np.real_if_close(A.c - 1j))
scan("repeat", lambda A: np.repeat(A.x, 2, axis=0)); scan("reshape", lambda A: np.reshape(A.x, (4, 3)), lambda A: np.reshape(A.x, (4, 3), order="F"))
scan("resize", lambda A: np.resize(A.v, (3, 3))); scan("result_type", lambda A: np.result_type(A.x, A.i))
scan("roll", lambda A: np.roll(A.x, 1, axis=1)); scan("rollaxis", lambda A: np.rollaxis(A.x3, 2))
scan("rot90", lambda A: np.rot90(A.x)); scan("searchsorted", lambda A: np.searchsorted(np.sort(VALUES["s"]), A.v))
scan("select", lambda A: np.select([A.x > 0, A.x < -1], [A.x, A.y], -9.0))
scan("setdiff1d", lambda A: np.setdiff1d(A.i, A.iv)); scan("setxor1d", lambda A: np.setxor1d(A.i, A.iv))
scan("shape", lambda A: np.shape(A.x3)); scan("sinc", lambda A: np.sinc(A.x)); scan("size", lambda A: np.size(A.x, 1))
scan("sort", lambda A: np.sort(A.x, axis=0)); scan("sort_complex", lambda A: np.sort_complex(A.v))
scan("split", lambda A: np.split(A.x, 2, axis=1)); scan("squeeze", lambda A: np.squeeze(A.x[:1]))
scan("stack", lambda A: np.stack([A.v, A.w], axis=1)); scan("std", lambda A: np.std(A.x, ddof=1))
scan("sum", lambda A: np.sum(A.x, axis=0), lambda A: np.sum(A.x, initial=1.0, where=A.b))
scan("swapaxes", lambda A: np.swapaxes(A.x3, 0, 2))
scan("take", lambda A: np.take(A.x, [0, 2], axis=1), lambda A: np.take(A.v, [7, -8], mode="wrap"))
scan("take_along_axis", lambda A: np.take_along_axis(A.x, np.argsort(VALUES["x"], axis=1), axis=1))
scan("tensordot", lambda A: np.tensordot(A.x3, A.q, axes=([2], [0])))
scan("tile", lambda A: np.tile(A.v, 2)); scan("trace", lambda A: np.trace(A.m))
scan("transpose", lambda A: np.transpose(A.x3, (1, 0, 2))); scan("trapezoid", lambda A: np.trapezoid(A.x, dx=0.5))
scan("tril", lambda A: np.tril(A.m, -1)); scan("triu", lambda A: np.triu(A.m, 1))
scan("tril_indices_from", lambda A: np.tril_indices_from(A.m))
scan("triu_indices_from", lambda A: np.triu_indices_from(A.m, 1))
scan("trim_zeros", lambda A: np.trim_zeros(A.iv)); scan("union1d", lambda A: np.union1d(A.iv, A.i))
scan("unique", lambda A: np.unique(A.i, return_counts=True), lambda A: np.unique(A.i, axis=0))
scan("unique_all", lambda A: np.unique_all(A.iv)); scan("unique_counts", lambda A: np.unique_counts(A.i))
scan("unique_inverse", lambda A: np.unique_inverse(A.iv)); scan("unique_values", lambda A: np.unique_values(A.i))
scan("unravel_index", lambda A: np.unravel_index(A.iv, (2, 3)))
scan("unstack", lambda A: np.unstack(A.x)); scan("unwrap", lambda A: np.unwrap(A.v * 4))
scan("vander", lambda A: np.vander(A.v, 3)); scan("var", lambda A: np.var(A.x, axis=0))
scan("vdot", lambda A: np.vdot(A.c, A.c)); scan("vsplit", lambda A: np.vsplit(A.q, 2))
scan("vstack", lambda A: np.vstack([A.x, A.y])); scan("where", lambda A: np.where(A.b, A.x, A.y), lambda A: np.where(A.x > 0))
scan("zeros_like", lambda A: np.zeros_like(A.x))
scan("save", lambda A: np.save(io.BytesIO(), A.x)); scan("savez", lambda A: np.savez(io.BytesIO(), a=A.x, b=A.v))
scan("savez_compressed", lambda A: np.savez_compressed(io.BytesIO(), A.x))
scan("savetxt", lambda A: np.savetxt(io.StringIO(), A.x))
# creation with like=: the tensor only says which array type the answer is
for _n, _call in {"arange": lambda A: np.arange(5.0, like=A.v), "eye": lambda A: np.eye(3, k=1, like=A.x),
                  "identity": lambda A: np.identity(2, like=A.x), "ones": lambda A: np.ones((2, 3), like=A.x),
                  "empty": lambda A: np.empty((2, 3), like=A.x).shape,
                  "zeros": lambda A: np.zeros(3, np.int32, like=A.x), "full": lambda A: np.full(2, 7.0, like=A.x),
                  "array": lambda A: np.array([[1, 2]], like=A.x), "asarray": lambda A: np.asarray(A.v, like=A.x),
                  "asanyarray": lambda A: np.asanyarray([1.5], like=A.x),
                  "ascontiguousarray": lambda A: np.ascontiguousarray([1, 2], like=A.x),
                  "asfortranarray": lambda A: np.asfortranarray([[1, 2]], like=A.x),
                  "tri": lambda A: np.tri(3, like=A.x), "fromiter": lambda A: np.fromiter(range(4), float, like=A.x),
                  "fromfunction": lambda A: np.fromfunction(lambda r, c: r + c, (2, 3), like=A.x),
                  "frombuffer": lambda A: np.frombuffer(b"\0\0\0\0\0\0\xf0?", like=A.x),
                  "fromstring": lambda A: np.fromstring("1 2", sep=" ", like=A.x),
                  "loadtxt": lambda A: np.loadtxt(io.StringIO("1 2\n3 4"), like=A.x),
                  "genfromtxt": lambda A: np.genfromtxt(io.StringIO("1 2\n3 4"), like=A.x),
                  "require": lambda A: np.require(A.x, requirements="C", like=A.x)}.items():
    scan(_n, _call)

# -- numpy.linalg -----------------------------------------------------------------------------
L = np.linalg
for _n, _call in {
    "cholesky": lambda A: L.cholesky(A.m), "cond": lambda A: L.cond(A.m), "cross": lambda A: L.cross(A.q[:2], A.q[1:3]),
    "det": lambda A: L.det(A.m), "diagonal": lambda A: L.diagonal(A.x3), "eig": lambda A: np.sort(np.real(L.eig(A.m)[0])),
    "eigh": lambda A: L.eigh(A.m).eigenvalues, "eigvals": lambda A: np.sort(np.real(L.eigvals(A.m))),
    "eigvalsh": lambda A: L.eigvalsh(A.m, UPLO="U"), "inv": lambda A: L.inv(A.m),
    "lstsq": lambda A: L.lstsq(A.q, A.q[:, 0], rcond=None)[0],
    "matmul": lambda A: L.matmul(A.x, A.q), "matrix_norm": lambda A: L.matrix_norm(A.x, ord="nuc"),
    "matrix_power": lambda A: L.matrix_power(A.m, 3), "matrix_rank": lambda A: L.matrix_rank(A.x),
    "matrix_transpose": lambda A: L.matrix_transpose(A.x3), "multi_dot": lambda A: L.multi_dot([A.x, A.q, A.x]),
    "norm": lambda A: L.norm(A.x), "outer": lambda A: L.outer(A.v, A.w), "pinv": lambda A: L.pinv(A.x),
    "qr": lambda A: np.abs(L.qr(A.m).R), "slogdet": lambda A: L.slogdet(A.m), "solve": lambda A: L.solve(A.m, A.q[:, 0]),
    "svd": lambda A: L.svd(A.x, compute_uv=False), "svdvals": lambda A: L.svdvals(A.x),
    "tensordot": lambda A: L.tensordot(A.x, A.q), "tensorinv": lambda A: L.tensorinv(A.m, ind=1),
    "tensorsolve": lambda A: L.tensorsolve(A.m, A.q[:, 0]), "trace": lambda A: L.trace(A.m, offset=1),
    "vecdot": lambda A: L.vecdot(A.x, A.y), "vector_norm": lambda A: L.vector_norm(A.x, ord=3, axis=0),
}.items():
    scan("linalg." + _n, _call)

# -- numpy.fft, numpy.lib.stride_tricks -------------------------------------------------------
for _n in ("fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "fftshift", "ifftshift"):
    scan("fft." + _n, lambda A, f=getattr(np.fft, _n): f(A.x))
for _n in ("irfft", "hfft", "irfft2", "irfftn"):
    scan("fft." + _n, lambda A, f=getattr(np.fft, _n): f(A.c))
scan("lib.stride_tricks.sliding_window_view", lambda A: np.lib.stride_tricks.sliding_window_view(A.v, 3),
     lambda A: np.lib.stride_tricks.sliding_window_view(A.x, (2, 2)))


# -- ufuncs: every one, each method ----------------------------------------------------------
def _ufunc_args(u):
    """Argument names of a dtype the ufunc has a loop for, or None (isnat: datetimes only)."""
    for code, name, other in (("d", "x", "y"), ("q", "i", "i"), ("?", "b", "b")):
        if any(t.startswith(code * u.nin + "->") for t in u.types):
            return (name, other)[: u.nin]
    return None


UFUNCS = sorted({u.__name__: u for u in vars(np).values() if isinstance(u, np.ufunc)}.items())
GUFUNC_CALLS = {"matmul": lambda A: np.matmul(A.x, A.q), "vecdot": lambda A: np.vecdot(A.x, A.y),
                "matvec": lambda A: np.matvec(A.x, A.w[:4]), "vecmat": lambda A: np.vecmat(A.w[:3], A.x),
                "ldexp": lambda A: np.ldexp(A.x, A.i), "isnat": lambda A: np.isnat(A.x)}
for _n, _u in UFUNCS:
    if _n in GUFUNC_CALLS:
        scan(_n, GUFUNC_CALLS[_n])
        continue
    _a = _ufunc_args(_u)
    if _u.nin == 1:
        with np.errstate(all="ignore"):
            _o = {"f": "o", "b": "ob", "i": "oi"}.get(_u(VALUES[_a[0]]).dtype.kind) if _u.nout == 1 else None
        scan(_n, lambda A, u=_u, a=_a[0]: u(getattr(A, a)),
             *[lambda A, u=_u, a=_a[0], o=_o: u(getattr(A, a), where=A.b, out=getattr(A, o))] * (_o is not None))
        continue
    x, y = _a
    v, w = ("v", "w") if x == "x" else ("iv", "iv")
    scan(_n, lambda A, u=_u, x=x, y=y: u(getattr(A, x), getattr(A, y)),
         lambda A, u=_u, x=x: u(getattr(A, x), getattr(A, x)[0]))
    if _u.nout == 1:
        scan(f"{_n}.reduce", lambda A, u=_u, x=x: u.reduce(getattr(A, x), axis=0),
             lambda A, u=_u, x=x: u.reduce(getattr(A, x), axis=None, keepdims=True))
        scan(f"{_n}.accumulate", lambda A, u=_u, x=x: u.accumulate(getattr(A, x), axis=1))
        scan(f"{_n}.outer", lambda A, u=_u, v=v, w=w: u.outer(getattr(A, v), getattr(A, w)))
        scan(f"{_n}.reduceat", lambda A, u=_u, v=v: u.reduceat(getattr(A, v), [0, 3, 1]))
        scan(f"{_n}.at", lambda A, u=_u, v=v, w=w: (u.at(getattr(A, v), [0, 1, 1], getattr(A, w)[:3]), getattr(A, v))[1])


# -- the scan ---------------------------------------------------------------------------------


def _dispatched(name):
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


def _run(call, side):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return call(side), None
        except Exception as e:  # the scan compares what each side raises
            return None, e


def _compare(got, want, where, args=(), dispatched=True):
    """``got`` (tensors side) against ``want`` (NumPy's); an array answer must be a tensor when
    NumPy handed the call to strided, unless it is an ndarray argument (``out=``) itself."""
    if isinstance(want, np.ndarray):
        if dispatched and not any(got is a for a in args):
            assert isinstance(got, sd.Tensor), f"{where}: an ndarray came back, not a tensor ({type(got)})"
        g = np.asarray(got)
        assert g.shape == want.shape and g.dtype == want.dtype, f"{where}: {g.dtype}{g.shape} != {want.dtype}{want.shape}"
        if want.dtype.kind in "biufc":
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=where)
        else:
            assert (g == want).all(), where
    elif isinstance(want, np.generic):
        g = np.asarray(got)
        assert g.shape == () and g.dtype == want.dtype, f"{where}: {got!r} != {want!r}"
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=where)
    elif isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for k, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{k}]", args, dispatched)
    elif isinstance(want, (bool, int, float, complex, str, np.dtype, type(None))) or isinstance(want, type):
        assert got == want, f"{where}: {got!r} != {want!r}"


def scan_all():
    """Every call on every variant: (failures, path of each name)."""
    failures, paths = [], {}
    real_run, real_function, real_ufunc = numpy_fallback.run, sd.Tensor.__array_function__, sd.Tensor.__array_ufunc__
    seen = []  # "numpy": the fallback ran; "dispatched": NumPy handed the call to strided

    def counting(*a, **k):
        seen.append("numpy")
        return real_run(*a, **k)

    def function(*a, **k):
        seen.append("dispatched")
        return real_function(*a, **k)

    def ufunc(*a, **k):
        seen.append("dispatched")
        return real_ufunc(*a, **k)

    numpy_fallback.run, sd.Tensor.__array_function__, sd.Tensor.__array_ufunc__ = counting, function, ufunc
    try:
        for name, calls in F.items():
            path = "native"
            for c, call in enumerate(calls):
                for variant in VARIANTS:
                    where = f"numpy.{name} call {c} {variant}"
                    N, T = Side(variant, False), Side(variant, True)
                    want, want_e = _run(call, N)
                    seen.clear()
                    got, got_e = _run(call, T)
                    path = "numpy" if "numpy" in seen else path
                    try:
                        if got_e is not None:
                            assert want_e is not None, f"{where}: raises for tensors only: {got_e!r}"
                            if any(isinstance(x, sd.Tensor) for x in T.made.values()):
                                assert isinstance(got_e, sd.StridedError), f"{where}: a foreign {got_e!r}"
                            continue
                        assert want_e is None, f"{where}: NumPy raises {want_e!r}, tensors give {got!r}"
                        _compare(got, want, where, [a for a in T.made.values() if isinstance(a, np.ndarray)],
                                 "dispatched" in seen)
                        if isinstance(want, np.ndarray) and isinstance(got, sd.Tensor) and name not in COPIES:
                            for arg, ref in N.made.items():  # NumPy's view of an argument: a view here too
                                if isinstance(T.made[arg], sd.Tensor) and np.shares_memory(want, ref):
                                    assert sd.same_buffer(got, T.made[arg]), f"{where}: a copy, not a view of {arg}"
                        for arg in N.made:  # what the call wrote
                            np.testing.assert_array_equal(np.asarray(T.made[arg]), N.made[arg], err_msg=f"{where} {arg}")
                    except AssertionError as e:
                        failures.append(str(e).splitlines()[0][:300])
            paths[name] = path
    finally:
        numpy_fallback.run, sd.Tensor.__array_function__, sd.Tensor.__array_ufunc__ = real_run, real_function, real_ufunc
    return failures, paths


def test_numpy_function_scan():
    failures, paths = scan_all()
    counts = Counter(paths.values())
    print(f"\nNumPy scan: {len(paths)} functions and ufunc methods: {counts['native']} native, "
          f"{counts['numpy']} through NumPy; refused with a reason: {len(numpy_fallback.REFUSED)} "
          f"(not dispatched by NumPy: {', '.join(numpy_fallback.REFUSED)})")
    assert not failures, f"{len(failures)} failing calls:\n" + "\n".join(failures)


def test_native_mappings_stay_native(monkeypatch):
    # a fallback never replaces a kernel: the first call of each natively mapped name, on
    # plain tensors, never reaches NumPy (logical ufuncs: their kernels take bools)
    native = {numpy_api._name(f).removeprefix("numpy.") for f in numpy_api.FUNCTIONS} | set(numpy_api.UFUNCS)
    calls = {n: F[n][0] for n in native} | {"logical_not": lambda A: np.logical_not(A.b),
                                             "logical_xor": lambda A: np.logical_xor(A.b, A.b)}

    def refuse(op, *a, **k):
        raise AssertionError(f"{op} went to NumPy")

    monkeypatch.setattr(numpy_fallback, "run", refuse)
    for name, call in sorted(calls.items()):
        got, e = _run(call, Side("plain", True))
        assert e is None, f"numpy.{name}: {e!r}"


REFUSED_CALLS = {"numpy.frombuffer": lambda t: np.frombuffer(t), "numpy.isfortran": lambda t: np.isfortran(t)}


def test_the_refused_table():
    print("\nrefused for strided.Tensor:")
    assert set(REFUSED_CALLS) == set(numpy_fallback.REFUSED)
    for name, why in numpy_fallback.REFUSED.items():
        print(f"  {name}: {why}")
        np.asarray(REFUSED_CALLS[name](np.zeros(2)))  # an ndarray is taken
        with pytest.raises(Exception):  # a tensor is not (when it is, the entry is stale: drop it)
            REFUSED_CALLS[name](sd.zeros((2,)))


def test_every_dispatched_function_is_scanned():
    missing = []
    for mod, prefix in ((np, ""), (np.linalg, "linalg."), (np.fft, "fft."),
                        (np.lib.stride_tricks, "lib.stride_tricks.")):
        for n in dir(mod):
            if not n.startswith("_") and type(getattr(mod, n)).__name__ == "_ArrayFunctionDispatcher":
                if prefix + n not in F:
                    missing.append(prefix + n)
    assert not missing, f"NumPy functions the scan does not call: {missing}"
