"""Autograd on the recorded graph: Var, sorted_nodes, backward and GradStore.

A tensor carries the Op that produced it only when one of that op's inputs
was tracked (a Var, or itself the result of a recorded op), as candle does:
there is no no_grad mode to forget, computing with plain tensors records
nothing, and ``detach()`` cuts the link while sharing the buffer.  The graph
keeps its inputs alive; dropping or detaching the result releases them.

Gradients are dense tensors of their tensor's shape and dtype, summed over
every use.  Computing them never writes into an input.
"""

from __future__ import annotations

import numpy as np

from .errors import StridedError
from .tensor import Tensor, tensor, zeros


class Var(Tensor):
    """A tracked leaf: gradients flow to it.  Built from data (copied) or a tensor (shared)."""

    __slots__ = ()

    def __init__(self, data, dtype=None):
        src = data.detach() if isinstance(data, Tensor) else tensor(data, dtype=dtype)
        if dtype is not None and isinstance(data, Tensor):
            src = src.to_dtype(dtype)
        super().__init__(src._storage, src.layout, src.dtype)
        self._is_var = True


def sorted_nodes(root: Tensor) -> list[Tensor]:
    """Every tracked tensor behind ``root`` (itself included), each before all of its inputs.

    This is the order backward visits: by the time a node is reached, every
    tensor that used it has already passed its gradient down.
    """
    if not root.track_op():
        return []
    order: list[Tensor] = []
    seen: set[int] = set()
    # Iterative post-order DFS: deep graphs must not hit Python's recursion limit.
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        if node._op is not None:
            for inp in reversed(node._op.inputs):
                if isinstance(inp, Tensor) and inp.track_op() and id(inp) not in seen:
                    stack.append((inp, False))
    order.reverse()
    return order


class GradStore:
    """Gradients by tensor identity: ``grads[t]``, ``grads.get(t)``, ``t in grads``."""

    def __init__(self):
        self._items: dict[int, tuple[Tensor, Tensor]] = {}

    def get(self, t: Tensor, default=None):
        item = self._items.get(id(t))
        return item[1] if item is not None and item[0] is t else default

    def __getitem__(self, t: Tensor) -> Tensor:
        g = self.get(t)
        if g is None:
            raise KeyError(f"GradStore: no gradient for tensor of shape {t.shape}")
        return g

    def __contains__(self, t: Tensor) -> bool:
        return self.get(t) is not None

    def __len__(self) -> int:
        return len(self._items)

    def insert(self, t: Tensor, g: Tensor) -> None:
        self._items[id(t)] = (t, g)

    def remove(self, t: Tensor):
        item = self._items.pop(id(t), None)
        return item[1] if item else None

    def accumulate(self, t: Tensor, g: Tensor) -> None:
        if g.shape != t.shape:
            raise StridedError(f"backward: gradient of shape {g.shape} for a tensor of shape {t.shape}")
        g = g.detach()
        if g.dtype is not t.dtype:
            g = g.to_dtype(t.dtype)
        old = self.get(t)
        self.insert(t, g if old is None else (old + g).detach())

    def items(self):
        return [v for v in self._items.values()]


def backward(root: Tensor) -> GradStore:
    """Gradients of ``root`` (seeded with ones) for every tracked tensor behind it."""
    grads = GradStore()
    nodes = sorted_nodes(root)
    if not nodes:
        return grads
    grads.insert(root, _ones_like(root))
    for node in nodes:
        g = grads.get(node)
        op = node._op
        if g is None or op is None:
            continue
        rule = _RULES.get(op.name)
        if rule is None:
            raise StridedError(f"backward: no gradient rule for op {op.name!r}")
        for inp, gi in zip(op.inputs, rule(node, op, g)):
            if gi is not None and isinstance(inp, Tensor) and inp.track_op():
                grads.accumulate(inp, _dense(gi, inp))
    return grads


# ---------------------------------------------------------------------------
# helpers


def _ones_like(t: Tensor) -> Tensor:
    return zeros(t.shape, t.dtype).fill_(1)


def _dense(g: Tensor, like: Tensor) -> Tensor:
    g = g.detach()
    if g.shape != like.shape:
        g = g.broadcast_as(like.shape)
    return g.contiguous()  # a stride-0 (broadcast) gradient is never contiguous, so it is copied


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


def _no_grad(node, op, g):
    return [None] * len(op.inputs)


# ---------------------------------------------------------------------------
# views


def _view_back(node, op, g):
    """Injective views: write g through the same view of a zero gradient."""
    (inp,) = op.inputs
    gz = zeros(inp.shape, g.dtype)
    v = _replay(gz, op.name, op.ctx["args"])
    v.copy_(g)
    return [gz]


def _replay(t: Tensor, name: str, args) -> Tensor:
    if name == "getitem":
        return t[args[0]]
    if name == "reshape":
        return t.reshape(args[0])
    return getattr(t, name)(*args)


def _broadcast_back(node, op, g):
    (inp,) = op.inputs
    return [sum_to(g, inp.shape).reshape(inp.shape)]


def _by_offsets_back(node, op, g):
    """Any view at all (as_strided, overlaps included): scatter-add through buffer offsets."""
    (inp,) = op.inputs
    n = len(inp._storage)
    acc = np.zeros(n, dtype=g.dtype.compute.np)
    out_offsets = np.fromiter(node.layout.strided_index(), dtype=np.int64, count=node.numel)
    np.add.at(acc, out_offsets, g.detach().to_dtype(g.dtype.compute).numpy().reshape(-1))
    in_offsets = np.fromiter(inp.layout.strided_index(), dtype=np.int64, count=inp.numel)
    return [tensor(acc[in_offsets].reshape(inp.shape)).to_dtype(g.dtype)]


def _identity(node, op, g):
    return [g]


def _cast_back(node, op, g):
    (inp,) = op.inputs
    return [g.to_dtype(inp.dtype)]


# ---------------------------------------------------------------------------
# elementwise


def _unary_rule(fn):
    def rule(node, op, g):
        (x,) = op.inputs
        return [fn(x.detach(), node.detach(), g)]

    return rule


_UNARY = {
    "exp": lambda x, y, g: g * y,
    "log": lambda x, y, g: g / x,
    "sqrt": lambda x, y, g: g * 0.5 / y,
    "sqr": lambda x, y, g: g * x * 2,
    "abs": lambda x, y, g: g * x.sign(),
    "neg": lambda x, y, g: -g,
    "relu": lambda x, y, g: g * (x > 0).to_dtype(g.dtype),
    "tanh": lambda x, y, g: g * (1 - y * y),
    "sigmoid": lambda x, y, g: g * y * (1 - y),
    "sin": lambda x, y, g: g * x.cos(),
    "cos": lambda x, y, g: -(g * x.sin()),
    "recip": lambda x, y, g: -(g * y * y),
    "sign": lambda x, y, g: g * 0,
}


def _binary_rule(name):
    def rule(node, op, g):
        a, b = (x.detach() if isinstance(x, Tensor) else x for x in op.ctx["operands"])
        g = g.detach()
        if name == "add":
            ga, gb = g, g
        elif name == "sub":
            ga, gb = g, -g
        elif name == "mul":
            ga, gb = g * b, g * a
        elif name == "div":
            ga = g / b
            gb = -(g * a) / (b * b) if isinstance(b, Tensor) else None
        elif name in ("maximum", "minimum"):
            # Ties go to the left operand, so the gradient is never split or doubled.
            first = (a >= b) if name == "maximum" else (a <= b)
            ga = g * first.to_dtype(g.dtype)
            gb = g * (~first).to_dtype(g.dtype)
        elif name == "pow":
            ga = g * b * (a ** (b - 1)) if isinstance(a, Tensor) else None
            if isinstance(b, Tensor):
                log_a = a.log() if isinstance(a, Tensor) else float(np.log(a))
                gb = g * node.detach() * log_a
            else:
                gb = None
        else:
            return [None] * len(op.inputs)
        grads = []
        for x, gx in ((a, ga), (b, gb)):
            if isinstance(x, Tensor):
                grads.append(None if gx is None else sum_to(gx, x.shape).reshape(x.shape))
        return grads

    return rule


def _where_back(node, op, g):
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


def _reduce_back(node, op, g):
    (x,) = op.inputs
    dims = op.ctx["dims"]  # the gradient is reshaped to the keepdim shape either way
    g = g.detach()
    keep_shape = tuple(1 if d in dims else n for d, n in enumerate(x.shape))
    g = g.reshape(keep_shape)
    if op.name == "sum":
        return [g.broadcast_as(x.shape)]
    if op.name == "mean":
        count = 1
        for d in dims:
            count *= x.shape[d]
        return [(g / count).broadcast_as(x.shape)]
    # max / min: the first extreme element (row-major among the reduced dims) takes the gradient.
    return [_first_extreme_mask(x.detach(), dims, op.name) * g]


def _first_extreme_mask(x: Tensor, dims, name) -> Tensor:
    keep = [d for d in range(x.ndim) if d not in dims]
    moved = x.permute(tuple(keep) + tuple(dims))
    r = 1
    for d in dims:
        r *= x.shape[d]
    flat = moved.reshape(tuple(x.shape[d] for d in keep) + (r,))
    idx = flat.argmax(-1, keepdim=True) if name == "max" else flat.argmin(-1, keepdim=True)
    from .tensor import arange

    hot = (arange(r) == idx).to_dtype(x.dtype)
    hot = hot.reshape(moved.shape)
    inv = [0] * x.ndim
    for pos, d in enumerate(tuple(keep) + tuple(dims)):
        inv[d] = pos
    return hot.permute(tuple(inv))


def _matmul_back(node, op, g):
    a, b = (x.detach() for x in op.inputs)
    g = g.detach()
    a2 = a if a.ndim > 1 else a.unsqueeze(0)
    b2 = b if b.ndim > 1 else b.unsqueeze(-1)
    batch = _broadcast_batch(a2.shape[:-2], b2.shape[:-2])
    g2 = g.reshape(batch + (a2.shape[-2], b2.shape[-1]))
    ga = sum_to(g2.matmul(b2.transpose(-1, -2)), a2.shape).reshape(a.shape)
    gb = sum_to(a2.transpose(-1, -2).matmul(g2), b2.shape).reshape(b.shape)
    return [ga, gb]


def _broadcast_batch(sa, sb):
    from .layout.layout import broadcast_shapes

    return broadcast_shapes("matmul", sa, sb)


def _cat_back(node, op, g):
    d = op.ctx["dim"]
    out, start = [], 0
    for n in op.ctx["sizes"]:
        out.append(g.narrow(d, start, n))
        start += n
    return out


def _index_select_back(node, op, g):
    (x,) = op.inputs
    d, idx = op.ctx["dim"], op.ctx["index"]
    comp = g.dtype.compute
    acc = np.zeros(x.shape, dtype=comp.np)
    where = (slice(None),) * d + (idx % x.shape[d] if x.shape[d] else idx,)
    np.add.at(acc, where, g.detach().to_dtype(comp).numpy())
    return [tensor(acc).to_dtype(g.dtype)]


_RULES = {
    **{name: _view_back for name in ("narrow", "slice", "select", "transpose", "permute", "unsqueeze", "squeeze", "flip", "reshape", "getitem")},
    "broadcast_as": _broadcast_back,
    "as_strided": _by_offsets_back,
    "clone": _identity,
    "copy": _identity,
    "to_dtype": _cast_back,
    **{name: _unary_rule(fn) for name, fn in _UNARY.items()},
    **{name: _binary_rule(name) for name in ("add", "sub", "mul", "div", "maximum", "minimum", "pow")},
    **{name: _no_grad for name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "not")},
    "where": _where_back,
    "sum": _reduce_back,
    "mean": _reduce_back,
    "max": _reduce_back,
    "min": _reduce_back,
    "matmul": _matmul_back,
    "cat": _cat_back,
    "index_select": _index_select_back,
}
