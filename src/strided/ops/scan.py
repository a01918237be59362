"""Scans: running sums and products along a dim, and ``nonzero``; the loops in the backend's
``scan`` family.

``cumulate`` accumulates in the result's dtype (the caller decides it, as the standard's
``dtype=`` does) from left to right, as NumPy's cumsum; ``include_initial`` puts the
identity first.  Gradients: a running sum's is the reversed running sum of g; a running
product's is the reversed running sum of g * y divided by x, where x has no zeros (a zero
of x raises, naming the op, rather than give NaNs).
"""

from __future__ import annotations

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS
from ..creation import empty
from ..core.errors import DTypeError, ShapeError, StridedError
from ..layout.layout import norm_dim
from ..tensor import Tensor, record
from .copies import to_dtype
from .elementwise import binary
from .kept import Kept

__all__ = ["cumulate", "cumsum_back", "cumprod_back", "nonzero"]


# A running sum's or product's decision, kept as the other families keep theirs (``Kept``):
# only where the kernel reads x's own buffer and writes the result (no conversion, no
# initial element), so a repeated call is the lookup, the buffer check and the kernel.
_KEPT = caches.cache("ops.scan", "op name, source layout serial, source dtype name, axis argument, result dtype "
                     "name, device", 1024, threads=True)


def cumulate(op: str, x: Tensor, axis: int, dtype, include_initial: bool = False) -> Tensor:
    """The running ``op`` ("sum" or "prod") of ``x`` along ``axis``, in ``dtype``; with
    ``include_initial`` the result is one longer along the axis and starts with the identity."""
    name = "cumulative_" + op
    if type(axis) is int and include_initial is False and isinstance(x, Tensor):
        s, lay = x._storage, x.layout
        e = _KEPT.get((op, lay._serial or lay.serial(), x.dtype.name, axis, dtype.name, s.device))
        if e is not None:
            d = s.data
            if len(d) >= e.reach[0] and d.dtype is e.types[0]:
                out = e.result()
                e.run(out._storage.data, d)
                return record(out, name, (x,), axis=e.extra, include_initial=False) \
                    if x._is_var or x._op is not None else out
    if not isinstance(x, Tensor):
        raise StridedError(f"{name}: expected a tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise ShapeError(f"{name}: expected a tensor of rank >= 1, got a scalar (shape ())")
    d = norm_dim(name, axis, x.ndim)
    if dtype.kind == "b":
        raise DTypeError(f"{name}: cannot accumulate in bool")
    acc = dt.kernel_dtype(dtype)  # i16/u16 run in 32 bits: the same bits mod 2^16 once rounded back
    src = x if x.dtype is acc else to_dtype(x.detach(), acc)
    n = x.shape[d]
    shape = tuple(n + 1 if k == d and include_initial else s for k, s in enumerate(x.shape))
    out = empty(shape, acc)
    body = out
    if include_initial:
        out.narrow(d, 0, 1).fill_(1 if op == "prod" else 0)
        body = out.narrow(d, 1, n)
    keep = src is x and acc is dtype and not include_initial and type(axis) is int
    got = BACKENDS[src._storage.device].scan.cumulate(op, body._storage.data, body.layout, src._storage.data,
                                                       src.layout, d, keep)
    if got is not None:
        run, reach = got
        _KEPT.put((op, x.layout.serial(), x.dtype.name, axis, dtype.name, x._storage.device),
                  Kept(run, (reach,), (x._storage.data.dtype,), out.layout, dtype, x._storage.device, extra=d))
    if acc is not dtype:
        out = to_dtype(out, dtype)
    return record(out, name, (x,), axis=d, include_initial=bool(include_initial))


def cumsum_back(node, op, g):
    """The gradient of a running sum: the running sum of g taken from the far end."""
    (x,) = op.inputs
    d = op.ctx["axis"]
    g = g.detach()
    if op.ctx["include_initial"]:
        g = g.narrow(d, 1, x.shape[d])
    if not g.dtype.is_float:
        return [None]
    back = cumulate("sum", g.flip([d]), d, g.dtype).flip([d])
    return [back if x.dtype is back.dtype or not x.dtype.is_float else to_dtype(back, x.dtype)]


def cumprod_back(node, op, g):
    (x,) = op.inputs
    d = op.ctx["axis"]
    g, y, xd = g.detach(), node.detach(), x.detach()
    if op.ctx["include_initial"]:
        g, y = g.narrow(d, 1, x.shape[d]), y.narrow(d, 1, x.shape[d])
    if not g.dtype.is_float:
        return [None]
    if BACKENDS[xd._storage.device].scan.count_true(*_flags(binary("eq", xd, 0))):
        raise StridedError("backward: cumulative_prod's gradient is taken only where x has no zeros")
    back = cumulate("sum", binary("mul", g, y).flip([d]), d, g.dtype).flip([d])
    return [binary("div", back, xd)]


def _flags(t: Tensor) -> tuple:
    return t._storage.data, t.layout


def nonzero(x: Tensor) -> tuple:
    """The row-major coordinates of the nonzero elements: one i64 tensor per dim (views of
    one (count, ndim) buffer)."""
    if not isinstance(x, Tensor):
        raise StridedError(f"nonzero: expected a tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise ShapeError("nonzero: expected a tensor of rank >= 1, got a scalar (shape ())")
    flags = x.detach() if x.dtype is dt.bool_ else binary("ne", x.detach(), 0)
    K = BACKENDS[flags._storage.device].scan
    count = K.count_true(flags._storage.data, flags.layout)
    coords = empty((count, x.ndim), dt.i64)
    K.nonzero(flags._storage.data, flags.layout, coords._storage.data)
    return tuple(coords[:, d] for d in range(x.ndim))

