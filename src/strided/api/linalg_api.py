"""The Array API's ``linalg`` extension beyond ``matmul``: products built from views and
matmul, and the decompositions, which LAPACK computes.

This module is ``strided.linalg``, the standard's namespace, with ``matmul`` from the op
layer (``strided.ops.linalg``, matmul's shape and dtype rules).  The decompositions go
through NumPy's LAPACK: the operand is read as a NumPy view of its buffer (any layout;
NumPy packs it for LAPACK, which needs that copy anyway) and the results come back as
tensors over NumPy's output buffers.  Complex operands take the same paths (LAPACK's
c/z routines); what is real for them too (norms, singular values, eigenvalues of a Hermitian
matrix, log |det|) comes back in the real dtype of their precision.  Products
(``tensordot``, ``vecdot``, ``outer``) are views and ``@``; ``matrix_transpose`` and
``diagonal`` are views.

The products reach matmul through the ``@`` operator (installed on Tensor by the op layer).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..core import dtype as dt
from ..creation import empty, expect_tensor, from_numpy, int_arg
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.layout import as_int_tuple, norm_dim
from ..ops.linalg import matmul, stats  # noqa: F401  (stats: operands read in place / packed, for tests)
from ..tensor import Tensor, as_strided

__all__ = [
    "matmul", "matrix_transpose", "tensordot", "vecdot", "outer", "diagonal", "trace", "cross", "cholesky", "det",
    "slogdet", "eigh", "eigvalsh", "inv", "pinv", "solve", "qr", "svd", "svdvals", "matrix_rank", "matrix_power",
    "matrix_norm", "vector_norm", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _matrices(op: str, x, square: bool = True) -> Tensor:
    x = expect_tensor(op, x)
    if x.ndim < 2:
        raise ShapeError(f"{op}: expected a stack of matrices (at least 2 dims), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{op}: expected square matrices, got shape {x.shape}")
    if not (x.dtype.is_float or x.dtype.is_complex):
        raise DTypeError(f"{op}: expected a floating-point or complex tensor, got {x.dtype}")
    return x


def _lapack_in(x: Tensor) -> np.ndarray:
    """The NumPy array LAPACK reads: the tensor's own memory, in f32 for the half types
    (LAPACK has no half precision)."""
    a = x.numpy()
    return a.astype(np.float32) if x.dtype.compute is not x.dtype else a


def _out(x: Tensor, a: np.ndarray, real: bool = False) -> Tensor:
    """A result in the operand's dtype (half types rounded back once), or in its real dtype
    for what is real even for a complex operand (norms, singular values, eigenvalues of a
    Hermitian matrix, log |det|)."""
    a = np.asarray(a)
    want = x.dtype.real if real else x.dtype
    if a.dtype != want.np:
        a = a.astype(want.np)
    return from_numpy(np.asarray(a, order="C"))


def _lapack(op: str, fn, *arrays):
    try:
        with np.errstate(all="ignore"):
            return fn(*arrays)
    except np.linalg.LinAlgError as e:
        raise StridedError(f"{op}: {e}") from None


# -- views and products --------------------------------------------------------------------


def matrix_transpose(x, /) -> Tensor:
    x = expect_tensor("matrix_transpose", x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: expected at least 2 dims, got shape {x.shape}")
    return x.transpose(-2, -1)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """The ``offset`` diagonal of each matrix, as a view: one dim of stride ``s[-2] + s[-1]``."""
    x = expect_tensor("diagonal", x)
    if x.ndim < 2:
        raise ShapeError(f"diagonal: expected at least 2 dims, got shape {x.shape}")
    k = int_arg("diagonal", "offset", offset)
    n, m = x.shape[-2:]
    sn, sm = x.stride[-2:]
    count = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    start = x.offset + (k * sm if k >= 0 else -k * sn) if count else x.offset
    return as_strided(x, x.shape[:-2] + (count,), x.stride[:-2] + (sn + sm,), start)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    d = diagonal(x, offset=offset)
    if dtype is not None:
        d = d.to_dtype(dtype)
    return d.sum(-1)


def _same_kind(op: str, x1: Tensor, x2: Tensor):
    if x1.dtype.is_float != x2.dtype.is_float:
        raise DTypeError(f"{op}: expected operands of one kind, got {x1.dtype} and {x2.dtype}")


def tensordot(x1, x2, /, *, axes=2) -> Tensor:
    """Contract ``axes`` of x1 with those of x2: a permute and reshape of each operand, one matmul."""
    x1, x2 = expect_tensor("tensordot", x1), expect_tensor("tensordot", x2)
    _same_kind("tensordot", x1, x2)
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ShapeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}")
        a1 = [norm_dim("tensordot", a, x1.ndim) for a in as_int_tuple("tensordot", "axes", axes[0])]
        a2 = [norm_dim("tensordot", a, x2.ndim) for a in as_int_tuple("tensordot", "axes", axes[1])]
    else:
        (k,) = as_int_tuple("tensordot", "axes", axes)
        if k < 0 or k > x1.ndim or k > x2.ndim:
            raise ShapeError(f"tensordot: axes={k} does not fit shapes {x1.shape} and {x2.shape}")
        a1, a2 = list(range(x1.ndim - k, x1.ndim)), list(range(k))
    if len(a1) != len(a2) or len(set(a1)) != len(a1) or len(set(a2)) != len(a2):
        raise ShapeError(f"tensordot: axes {axes!r} must pair distinct dims one to one")
    for p, q in zip(a1, a2):
        if x1.shape[p] != x2.shape[q] and 1 not in (x1.shape[p], x2.shape[q]):
            raise ShapeError(f"tensordot: dim {p} of {x1.shape} and dim {q} of {x2.shape} differ")
    if x1.dtype is not x2.dtype:
        want = dt.promote(x1.dtype, x2.dtype)
        x1, x2 = x1.to_dtype(want), x2.to_dtype(want)
    # Contracted dims may broadcast (size 1 against n), as the standard allows.
    sizes = [max(x1.shape[p], x2.shape[q]) for p, q in zip(a1, a2)]
    free1 = [d for d in range(x1.ndim) if d not in a1]
    free2 = [d for d in range(x2.ndim) if d not in a2]
    v1 = x1.permute(tuple(free1 + a1))
    v2 = x2.permute(tuple(a2 + free2))
    v1 = v1.broadcast_as(v1.shape[: len(free1)] + tuple(sizes))
    v2 = v2.broadcast_as(tuple(sizes) + v2.shape[len(a2):])
    k = 1
    for n in sizes:
        k *= n
    m = 1
    for d in free1:
        m *= x1.shape[d]
    n = 1
    for d in free2:
        n *= x2.shape[d]
    out = v1.reshape((m, k)) @ v2.reshape((k, n))
    return out.reshape(tuple(x1.shape[d] for d in free1) + tuple(x2.shape[d] for d in free2))


def vecdot(x1, x2, /, *, axis: int = -1) -> Tensor:
    """``sum(conj(x1) * x2, axis)`` with broadcasting (the conjugate only for complex x1)."""
    x1, x2 = expect_tensor("vecdot", x1), expect_tensor("vecdot", x2)
    _same_kind("vecdot", x1, x2)
    n = max(x1.ndim, x2.ndim)
    d = norm_dim("vecdot", axis, n)
    if d - n < -x1.ndim or d - n < -x2.ndim:
        raise ShapeError(f"vecdot: axis {axis} is not a dim of both {x1.shape} and {x2.shape}")
    if x1.shape[d - n] != x2.shape[d - n]:
        raise ShapeError(f"vecdot: dim {axis} of {x1.shape} and of {x2.shape} differ")
    out = ((x1.conj() if x1.dtype.is_complex else x1) * x2).sum(d - n)
    want = dt.promote(x1.dtype, x2.dtype)
    # integer sums widen to i64; the standard keeps the operands' type
    return out if out.dtype is want else out.to_dtype(want)


def outer(x1, x2, /) -> Tensor:
    x1, x2 = expect_tensor("outer", x1), expect_tensor("outer", x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ShapeError(f"outer: expected 1-D tensors, got shapes {x1.shape} and {x2.shape}")
    return x1.unsqueeze(1) * x2.unsqueeze(0)


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    x1, x2 = expect_tensor("cross", x1), expect_tensor("cross", x2)
    n = max(x1.ndim, x2.ndim)
    d = norm_dim("cross", axis, n) - n
    if -d > x1.ndim or -d > x2.ndim or x1.shape[d] != 3 or x2.shape[d] != 3:
        raise ShapeError(f"cross: dim {axis} must have size 3 in both, got {x1.shape} and {x2.shape}")

    def c(x, i):
        return x.narrow(x.ndim + d, i, 1)

    parts = [c(x1, 1) * c(x2, 2) - c(x1, 2) * c(x2, 1), c(x1, 2) * c(x2, 0) - c(x1, 0) * c(x2, 2),
             c(x1, 0) * c(x2, 1) - c(x1, 1) * c(x2, 0)]
    shape = parts[0].shape
    out = empty(shape[: n + d] + (3,) + shape[n + d + 1:], parts[0].dtype)
    for i, p in enumerate(parts):
        out.narrow(n + d, i, 1).copy_(p)
    return out


# -- LAPACK ----------------------------------------------------------------------------------


def cholesky(x, /, *, upper: bool = False) -> Tensor:
    x = _matrices("cholesky", x)
    low = _lapack("cholesky", np.linalg.cholesky, _lapack_in(x))
    if not upper:
        return _out(x, low)
    up = np.swapaxes(low, -1, -2)  # x = U^H U with U = L^H: the conjugate, for complex x
    return _out(x, np.conj(up) if x.dtype.is_complex else up)


def det(x, /) -> Tensor:
    x = _matrices("det", x)
    return _out(x, _lapack("det", np.linalg.det, _lapack_in(x)))


def slogdet(x, /) -> SlogdetResult:
    x = _matrices("slogdet", x)
    sign, logabs = _lapack("slogdet", np.linalg.slogdet, _lapack_in(x))
    return SlogdetResult(_out(x, sign), _out(x, logabs, real=True))


def eigh(x, /) -> EighResult:
    x = _matrices("eigh", x)
    w, v = _lapack("eigh", np.linalg.eigh, _lapack_in(x))
    return EighResult(_out(x, w, real=True), _out(x, v))


def eigvalsh(x, /) -> Tensor:
    x = _matrices("eigvalsh", x)
    return _out(x, _lapack("eigvalsh", np.linalg.eigvalsh, _lapack_in(x)), real=True)


def inv(x, /) -> Tensor:
    x = _matrices("inv", x)
    return _out(x, _lapack("inv", np.linalg.inv, _lapack_in(x)))


def _rtol(op: str, rtol, x: Tensor, a: np.ndarray):
    """A relative tolerance: None (the standard's default), a real number, or a float tensor
    that broadcasts against the stack of matrices."""
    if rtol is None:
        return max(a.shape[-2:]) * np.finfo(a.dtype).eps
    if isinstance(rtol, Tensor):
        if not rtol.dtype.is_float:
            raise DTypeError(f"{op}: expected a floating-point rtol, got {rtol.dtype}")
        try:
            fits = np.broadcast_shapes(rtol.shape, x.shape[:-2]) == x.shape[:-2]
        except ValueError:
            fits = False
        if not fits:
            raise ShapeError(
                f"{op}: rtol of shape {rtol.shape} does not broadcast against the stack {x.shape[:-2]}") from None
        return rtol.numpy()[..., None]
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float, np.integer, np.floating)):
        raise StridedError(f"{op}: expected a real rtol, got {rtol!r}")
    try:
        return float(rtol)
    except OverflowError:
        raise StridedError(f"{op}: rtol {rtol!r} is beyond any float") from None


def pinv(x, /, *, rtol=None) -> Tensor:
    x = _matrices("pinv", x, square=False)
    a = _lapack_in(x)
    rtol = _rtol("pinv", rtol, x, a)
    if isinstance(rtol, np.ndarray):
        rtol = rtol[..., 0]  # NumPy's pinv adds the singular-value axis itself
    return _out(x, _lapack("pinv", lambda m: np.linalg.pinv(m, rtol=rtol), a))


def solve(x1, x2, /) -> Tensor:
    x1 = _matrices("solve", x1)
    x2 = expect_tensor("solve", x2)
    if not (x2.dtype.is_float or x2.dtype.is_complex):
        raise DTypeError(f"solve: expected a floating-point or complex right-hand side, got {x2.dtype}")
    a, b = _lapack_in(x1), _lapack_in(x2)
    n = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ShapeError(f"solve: x1 {x1.shape} and the vector x2 {x2.shape} do not match")
        out = _lapack("solve", np.linalg.solve, a, b[:, None])[..., 0]
    else:
        if b.shape[-2] != n:
            raise ShapeError(f"solve: x1 {x1.shape} and x2 {x2.shape} do not match")
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out = _lapack("solve", np.linalg.solve, np.broadcast_to(a, batch + a.shape[-2:]),
                      np.broadcast_to(b, batch + b.shape[-2:]))
    like = x1 if dt.promote(x1.dtype, x2.dtype) is x1.dtype else x2
    return _out(like, out)


def qr(x, /, *, mode: str = "reduced") -> QRResult:
    if mode not in ("reduced", "complete"):
        raise StridedError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x = _matrices("qr", x, square=False)
    q, r = _lapack("qr", lambda m: np.linalg.qr(m, mode=mode), _lapack_in(x))
    return QRResult(_out(x, q), _out(x, r))


def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    x = _matrices("svd", x, square=False)
    u, s, vh = _lapack("svd", lambda m: np.linalg.svd(m, full_matrices=bool(full_matrices)), _lapack_in(x))
    return SVDResult(_out(x, u), _out(x, s, real=True), _out(x, vh))


def svdvals(x, /) -> Tensor:
    x = _matrices("svdvals", x, square=False)
    return _out(x, _lapack("svdvals", lambda m: np.linalg.svd(m, compute_uv=False), _lapack_in(x)), real=True)


def matrix_rank(x, /, *, rtol=None) -> Tensor:
    x = expect_tensor("matrix_rank", x)
    if not (x.dtype.is_float or x.dtype.is_complex):  # a count: integer matrices have a rank too (NumPy's)
        x = from_numpy(x.numpy().astype(np.float64)) if x.ndim >= 2 else x
    x = _matrices("matrix_rank", x, square=False)
    a = _lapack_in(x)
    rtol = _rtol("matrix_rank", rtol, x, a)
    s = _lapack("matrix_rank", lambda m: np.linalg.svd(m, compute_uv=False), a)
    tol = s.max(axis=-1, keepdims=True, initial=0.0) * rtol
    return from_numpy(np.asarray((s > tol).sum(axis=-1).astype(np.int64), order="C"))


def matrix_power(x, n, /) -> Tensor:
    x = expect_tensor("matrix_power", x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"matrix_power: expected square matrices, got shape {x.shape}")
    n = int_arg("matrix_power", "n", n)
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while n:  # binary powering: log2(n) products
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    if result is None:
        eye = np.broadcast_to(np.eye(x.shape[-1], dtype=x.dtype.np), x.shape)
        return from_numpy(np.asarray(eye, order="C"))
    return result if result is not x else x.copy()


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    x = _matrices("matrix_norm", x, square=False)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        raise StridedError(f"matrix_norm: unknown ord {ord!r}")
    out = _lapack("matrix_norm", lambda m: np.linalg.norm(m, ord=ord, axis=(-2, -1), keepdims=bool(keepdims)),
                  _lapack_in(x))
    return _out(x, out, real=True)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    x = expect_tensor("vector_norm", x)
    if not (x.dtype.is_float or x.dtype.is_complex):
        raise DTypeError(f"vector_norm: expected a floating-point or complex tensor, got {x.dtype}")
    a = _lapack_in(x)
    if axis is None:
        dims = tuple(range(a.ndim))
    else:
        dims = tuple(norm_dim("vector_norm", d, a.ndim)
                     for d in ((axis,) if not isinstance(axis, (tuple, list)) else axis))
    if len(set(dims)) != len(dims):
        raise ShapeError(f"vector_norm: axis {axis} names a dim twice")
    # NumPy's norm takes one or two axes: move them together and flatten them into one (its
    # length given, not -1, which NumPy cannot infer when another dim is 0).
    rest = [d for d in range(a.ndim) if d not in dims]
    length = math.prod(a.shape[d] for d in dims)
    moved = np.transpose(a, rest + list(dims)).reshape([a.shape[d] for d in rest] + [length])
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise StridedError(f"vector_norm: expected a real ord, got {ord!r}")
    try:
        ord = float(ord)
    except OverflowError:
        raise StridedError(f"vector_norm: ord {ord!r} is beyond any float") from None
    if ord != ord:
        raise StridedError("vector_norm: ord must not be NaN")
    with np.errstate(all="ignore"):
        if moved.shape[-1] == 0:
            out = np.zeros(moved.shape[:-1]) if ord != -np.inf else np.full(moved.shape[:-1], np.inf)
        else:
            out = np.linalg.norm(moved, ord=ord, axis=-1)
    if keepdims:
        out = np.reshape(out, [1 if d in dims else a.shape[d] for d in range(a.ndim)])
    return _out(x, out, real=True)
