"""Ops made of other ops: softmax, log_softmax, logsumexp, var and std.

Each is written once against the tensor interface (operators, methods, the op layer's
``reduce``), so a Tensor computes it eagerly and ``strided.fuse`` traces the same code
into its groups (a reduction ends a group: softmax is three passes, a max, an exp and
sum, and the division).  ``strided.ops`` installs them as Tensor methods.
"""

from __future__ import annotations

import math

from ..core.errors import DTypeError
from ..layout.layout import norm_dim
from .elementwise import binary, where
from .reduce import reduce, reduce_dims

__all__ = ["METHODS", "softmax", "log_softmax", "logsumexp", "var", "std"]

METHODS = ("softmax", "log_softmax", "logsumexp", "var", "std")


def _float(op: str, x) -> None:
    if not x.dtype.is_float:
        raise DTypeError(f"{op}: expected a floating-point tensor, got {x.dtype}")


def _finite_max(x, dim):
    """The max along ``dim`` (kept), 0 where it is infinite: subtracting it keeps exp finite,
    and a row of -inf (or +inf) gives -inf (inf) instead of NaN, as PyTorch's.  A shift that
    cancels: no gradient flows through it (detached), as in PyTorch's formulas."""
    m = reduce("max", x.detach(), dim, True)
    return where(binary("eq", m.abs(), math.inf), 0.0, m)


def softmax(x, dim: int = -1):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``."""
    _float("softmax", x)
    d = norm_dim("softmax", dim, x.ndim)
    e = (x - reduce("max", x.detach(), d, True)).exp()  # the shift cancels: no gradient through it
    return e / reduce("sum", e, d, True)


def log_softmax(x, dim: int = -1):
    """``x - logsumexp(x)`` along ``dim``."""
    _float("log_softmax", x)
    d = norm_dim("log_softmax", dim, x.ndim)
    return x - logsumexp(x, d, keepdim=True)


def logsumexp(x, dim=None, keepdim: bool = False):
    """``log(sum(exp(x)))`` over ``dim`` (None: all), without overflow."""
    _float("logsumexp", x)
    dims = reduce_dims("logsumexp", x, dim)
    m = _finite_max(x, dims)
    s = reduce("sum", (x - m).exp(), dims, True).log() + m
    return s if keepdim or not dims else s.squeeze(dims)


def var(x, dim=None, keepdim: bool = False, *, correction=0.0):
    """``sum((x - mean)^2) / (N - correction)`` over ``dim`` (None: all)."""
    _float("var", x)
    dims = reduce_dims("var", x, dim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    centred = x - reduce("mean", x, dims, True)
    total = reduce("sum", centred * centred, dims, keepdim)
    denom = n - correction
    # N - correction <= 0 has no variance: NaN, as NumPy gives
    return total / (denom if denom > 0 else math.nan)


def std(x, dim=None, keepdim: bool = False, *, correction=0.0):
    return var(x, dim, keepdim, correction=correction).sqrt()
