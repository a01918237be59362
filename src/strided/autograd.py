"""Autograd on the recorded graph: Var, sorted_nodes, backward and GradStore.

A tensor carries the Op that produced it only when one of that op's inputs
was tracked (a Var, or itself the result of a recorded op), as candle does:
there is no no_grad mode to forget, computing with plain tensors records
nothing, and ``detach()`` cuts the link while sharing the buffer.  The graph
keeps its inputs alive; dropping or detaching the result releases them.

Gradients have their tensor's shape and dtype and are summed over every use; a
leaf's is a row-major tensor, an inner node's keeps the layout its rule gave it.
Computing them never writes into an input or a gradient.
"""

from __future__ import annotations

from .creation import full, tensor
from .core.errors import StridedError
from .core.storage import alloc
from .layout import Layout
from .ops import copies
from .ops.registry import gradient_rule
from .tensor import Tensor


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
        rule = gradient_rule(op.name)
        for inp, gi in zip(op.inputs, rule(node, op, g)):
            if gi is not None and isinstance(inp, Tensor) and inp.track_op():
                grads.accumulate(inp, _dense(gi, inp))
    return grads


# ---------------------------------------------------------------------------
# helpers


def _ones_like(t: Tensor) -> Tensor:
    """The root's seed, on its device.  On the CPU the buffer is filled directly: the shape
    and dtype come from a tensor and 1 is exact in every dtype, so none of ``full``'s
    argument checks apply, and a backward pays for them after a step's data has pushed
    the interpreter's own out of the caches (docs/benchmarks.md)."""
    if t.device != "cpu":
        return full(t.shape, 1, t.dtype, device=t.device)
    store = alloc(t.numel, t.dtype.np)
    store.data.fill(1)
    return Tensor(store, Layout.contiguous(t.shape), t.dtype)


def _dense(g: Tensor, like: Tensor) -> Tensor:
    """g as a gradient is kept: a leaf's is a row-major tensor of its own; an inner node's is
    passed down in whatever layout its rule made (a sum's broadcast ones, the transpose of a
    product's gradient), as every rule reads any layout and none writes into g."""
    g = g.detach()
    if g.shape != like.shape:
        g = g.broadcast_as(like.shape)
    return copies.contiguous(g) if like._is_var else g


Tensor.backward = backward
