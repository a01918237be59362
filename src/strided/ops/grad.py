"""Gradient rules, one per differentiable op; ``strided.ops`` puts each in its op's registry entry.

A rule takes ``(node, op, g)`` (the result, its recorded ``Op``, the gradient
flowing into it) and returns one gradient or None per recorded input.  Rules are
written with tensor ops on detached tensors, so computing them records nothing.
"""

from __future__ import annotations

import numpy as np

from ..creation import arange, tensor, zeros
from ..layout.layout import broadcast_shapes
from ..tensor import Tensor


# ---------------------------------------------------------------------------
# helpers


def sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Undo broadcasting: sum ``g`` down to ``shape`` (leading dims dropped, stretched dims kept as 1)."""
    g = g.detach()
    lead = g.ndim - len(shape)
    if lead > 0:
        g = g.sum(tuple(range(lead)))
    dims = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g


# ---------------------------------------------------------------------------
# views


# The gradient of a view that reaches every element of its input once (by the names eager
# records and strided.fuse traces): the inverse view of g, ``inverse(g, input, view's args)``.
INVERSE_VIEWS = {
    "t": lambda g, x, p: g.t(), "T": lambda g, x, p: g.T, "mT": lambda g, x, p: g.mT,
    "transpose": lambda g, x, p: g.transpose(*p),
    "permute": lambda g, x, p: g.permute(tuple(_inverse_perm(p[0] if len(p) == 1 else p, x.ndim))),
    "flip": lambda g, x, p: g.flip(*p),
    "unsqueeze": lambda g, x, p: g.reshape(x.shape), "squeeze": lambda g, x, p: g.reshape(x.shape),
    "reshape": lambda g, x, p: g.reshape(x.shape), "flatten": lambda g, x, p: g.reshape(x.shape),
    "flatten_all": lambda g, x, p: g.reshape(x.shape),
    "broadcast_as": lambda g, x, p: sum_to(g, x.shape).reshape(x.shape),
    "expand": lambda g, x, p: sum_to(g, x.shape).reshape(x.shape),
    "broadcast_left": lambda g, x, p: sum_to(g, x.shape).reshape(x.shape),
}


def _inverse_perm(dims, nd):
    dims = [d % nd for d in dims]
    inv = [0] * nd
    for i, d in enumerate(dims):
        inv[d] = i
    return inv


def view_back(node, op, g):
    """A view of every element once: the inverse view of g.  Any other injective view: g
    written through the same view of a zero gradient."""
    (inp,) = op.inputs
    inverse = INVERSE_VIEWS.get(op.name)
    if inverse is not None:
        return [inverse(g.detach(), inp, op.ctx["args"])]
    gz = zeros(inp.shape, g.dtype, device=g.device)
    v = _replay(gz, op.name, op.ctx["args"])
    v.copy_(g)
    return [gz]


def _replay(t: Tensor, name: str, args) -> Tensor:
    if name == "getitem":
        return t[args[0]]
    if name == "reshape":
        return t.reshape(args[0])
    return getattr(t, name)(*args)


def accumulate_back(node, op, g):
    """Views whose elements may repeat (sliding windows): replay the view on a zero buffer of
    the input's shape and add g through it, so each input element gets the sum of the
    gradients of every place it appears."""
    (inp,) = op.inputs
    base = zeros(inp.shape, g.dtype.compute)  # row-major: its offsets are the input's element indices
    v = _replay(base, op.name, op.ctx["args"])
    offsets = np.fromiter(v.layout.strided_index(), dtype=np.int64, count=v.numel) - base.offset
    acc = np.zeros(inp.numel, dtype=g.dtype.compute.np)
    np.add.at(acc, offsets, g.detach().to_dtype(g.dtype.compute).numpy().reshape(-1))
    return [tensor(acc.reshape(inp.shape), device=g.device).to_dtype(g.dtype)]


def broadcast_back(node, op, g):
    (inp,) = op.inputs
    return [sum_to(g, inp.shape).reshape(inp.shape)]


def by_offsets_back(node, op, g):
    """Any view at all (as_strided, overlaps included): scatter-add through buffer offsets."""
    (inp,) = op.inputs
    n = len(inp._storage)
    acc = np.zeros(n, dtype=g.dtype.compute.np)
    out_offsets = np.fromiter(node.layout.strided_index(), dtype=np.int64, count=node.numel)
    np.add.at(acc, out_offsets, g.detach().to_dtype(g.dtype.compute).numpy().reshape(-1))
    in_offsets = np.fromiter(inp.layout.strided_index(), dtype=np.int64, count=inp.numel)
    return [tensor(acc[in_offsets].reshape(inp.shape), device=g.device).to_dtype(g.dtype)]


def identity_back(node, op, g):
    return [g]


def cast_back(node, op, g):
    (inp,) = op.inputs
    return [g.to_dtype(inp.dtype)]


# ---------------------------------------------------------------------------
# elementwise


def elementwise_rule(entry):
    """The gradient rule of an op-table entry (``kernels.optable``: its rules are functions of
    the operands, the result and g), or None for an entry that is not differentiable."""
    if entry.arity == 1:
        fn = entry.grad

        def rule(node, op, g):
            (x,) = op.inputs
            return [fn(x.detach(), node.detach(), g)]

        return rule
    fns = entry.grad

    def rule(node, op, g):
        a, b = (x.detach() if isinstance(x, Tensor) else x for x in op.ctx["operands"])
        g, y = g.detach(), node.detach()
        # one gradient per tensor operand (a Python number or array gets none)
        return [sum_to(fn(a, b, y, g), x.shape).reshape(x.shape) for x, fn in zip((a, b), fns) if isinstance(x, Tensor)]

    return rule


def where_back(node, op, g):
    cond, a, b = op.ctx["operands"]
    mask = cond.detach()
    g = g.detach()
    grads = []
    for x, keep in ((cond, None), (a, True), (b, False)):
        if not isinstance(x, Tensor):
            continue
        if keep is None:
            grads.append(None)
            continue
        gx = mask.where(g, 0.0) if keep else mask.where(0.0, g)
        grads.append(sum_to(gx, x.shape).reshape(x.shape))
    return grads


# ---------------------------------------------------------------------------
# reductions, matmul, joins


def _keepdim_grad(op, g):
    (x,) = op.inputs
    dims = op.ctx["dims"]  # the gradient is reshaped to the keepdim shape either way
    keep_shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
    return x, dims, g.detach().reshape(keep_shape)


def sum_back(node, op, g):
    x, dims, g = _keepdim_grad(op, g)
    return [g.broadcast_as(x.shape)]


def mean_back(node, op, g):
    x, dims, g = _keepdim_grad(op, g)
    count = 1
    for d in dims:
        count *= x.shape[d]
    return [(g / count).broadcast_as(x.shape)]


def extreme_back(node, op, g):
    """max / min: the first extreme element (row-major among the reduced dims) takes the gradient."""
    x, dims, g = _keepdim_grad(op, g)
    return [_first_extreme_mask(x.detach(), dims, op.name) * g]


def _first_extreme_mask(x: Tensor, dims, name) -> Tensor:
    keep = [d for d in range(x.ndim) if d not in dims]
    moved = x.permute(tuple(keep) + tuple(dims))
    r = 1
    for d in dims:
        r *= x.shape[d]
    flat = moved.reshape(tuple(x.shape[d] for d in keep) + (r,))
    idx = flat.argmax(-1, keepdim=True) if name == "max" else flat.argmin(-1, keepdim=True)
    hot = (arange(r, device=x.device) == idx).to_dtype(x.dtype)
    hot = hot.reshape(moved.shape)
    inv = [0] * x.ndim
    for pos, d in enumerate(tuple(keep) + tuple(dims)):
        inv[d] = pos
    return hot.permute(tuple(inv))


def matmul_back(node, op, g, need=None, transposed=None):
    """The gradients of both operands, or None for one that ``need`` (a pair of bools; by
    default: which operands are tracked) says nobody wants: its product is not computed.

    Each gradient is computed in its operand's layout, as PyTorch's mm backward does: for
    an operand read transposed (``x @ w.t()``), the product (g^T a)^T is ``w.t()``'s
    gradient and is row-major as ``w`` once the transpose is undone, where a^T g would need
    a transposed copy to be stored.  ``transposed`` (a pair of bools; by default: which
    operands are stored column by column) says which."""
    if need is None:
        need = tuple(isinstance(x, Tensor) and x.track_op() for x in op.inputs)
    a, b = (x.detach() for x in op.inputs)
    g = g.detach()
    a2 = a if a.ndim > 1 else a.unsqueeze(0)
    b2 = b if b.ndim > 1 else b.unsqueeze(-1)
    batch = _broadcast_batch(a2.shape[:-2], b2.shape[:-2])
    g2 = g.reshape(batch + (a2.shape[-2], b2.shape[-1]))
    if transposed is None:
        transposed = (_transposed(a2), _transposed(b2))
    ga = gb = None
    if need[0]:
        ga = _mt(b2 @ _mt(g2)) if transposed[0] else g2 @ _mt(b2)  # @: operands may differ in dtype
        ga = sum_to(ga, a2.shape).reshape(a.shape)
    if need[1]:
        gb = _mt(_mt(g2) @ a2) if transposed[1] else _mt(a2) @ g2
        gb = sum_to(gb, b2.shape).reshape(b.shape)
    return [ga, gb]


def _mt(x: Tensor) -> Tensor:
    return x.transpose(-1, -2)


def _transposed(x: Tensor) -> bool:
    """Whether a matrix (or a batch of them) is stored column by column."""
    s = x.stride
    return s[-2] == 1 and s[-1] != 1 and x.shape[-1] > 1 and x.shape[-2] > 1


def _broadcast_batch(sa, sb):
    return broadcast_shapes("matmul", sa, sb)


def cat_back(node, op, g):
    d = op.ctx["dim"]
    out, start = [], 0
    for n in op.ctx["sizes"]:
        out.append(g.narrow(d, start, n))
        start += n
    return out


def index_select_back(node, op, g):
    (x,) = op.inputs
    d, idx = op.ctx["dim"], op.ctx["index"]
    comp = g.dtype.compute
    acc = np.zeros(x.shape, dtype=comp.np)
    where = (slice(None),) * d + (idx % x.shape[d] if x.shape[d] else idx,)
    np.add.at(acc, where, g.detach().to_dtype(comp).numpy())
    return [tensor(acc, device=g.device).to_dtype(g.dtype)]
