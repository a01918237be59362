"""The backward of a fused function: eager's backward, run over the traced graph, fused itself.

A call of a fused function with tracked tensors records one ``fused`` node per output.
Its gradient rule builds (once per graph and output) a function ``vjp`` of the call's
arguments and the output's gradient that

- replays the graph's ops as they were written (a value per node: an op-table op on its
  operands as given, a view, a reduction, a product), then
- walks the nodes in the order eager's ``backward`` would visit them had the function run
  eagerly (``autograd.sorted_nodes``' depth-first order) and applies each op's gradient
  rule: the op table's for elementwise ops, the registry's for reductions, ``where``,
  casts and products; a bijective view's gradient is the inverse view of g, and
  contributions are accumulated as eager accumulates them (converted to the input's dtype,
  added in visiting order).

``vjp`` is itself fused, so the forward values the rules need are recomputed inside the
backward's kernels rather than stored, but for the products: the forward's results and
the operands it wrote for them are passed to ``vjp`` (BLAS would cost what the rest of the
backward does; an activation is in memory already).  Where a rule
cannot be traced (the gradient of a slice is a write into zeros; max's takes an argmax)
the fused backward runs eagerly with the same rules, so the gradients are eager's either
way.
"""

from __future__ import annotations

from ..creation import zeros
from ..kernels.optable import NOT_DIFFERENTIABLE, OPS
from ..ops.copies import to_dtype
from ..ops.elementwise import binary, unary, where
from ..ops.grad import INVERSE_VIEWS, extreme_back, matmul_back, sum_to, where_back
from ..ops.reduce import reduce, reduce_dims
from ..tensor import Op, Tensor
from .fused import Fused
from .trace import Graph, Node, Unfusable

__all__ = ["fused_back"]


def fused_back(node, op, g):
    graph, k, args = op.ctx["graph"], op.ctx["output"], op.ctx["args"]
    saved = op.ctx["saved"]
    tracked = tuple(isinstance(a, Tensor) and (a._is_var or a._op is not None) for a in args)
    key = (k, tracked, tuple(i for i, _ in saved))
    bwd = graph.backward.get(key)
    if bwd is None:
        bwd = graph.backward[key] = Fused(_vjp(graph, k, tracked, key[2]), quiet=True, dedupe=True)
    xs = (a.detach() if isinstance(a, Tensor) else a for a in args)
    got = dict(zip(bwd.fn.positions, bwd(*xs, *(t.detach() for _, t in saved), g.detach())))
    return [got.get(pos) for pos, a in enumerate(args) if isinstance(a, Tensor)]


def _user(n: Node) -> Node:
    """A node as its op's operand was written: past the op's own conversions."""
    while n.kind == "cast" and n.op == "compute":
        n = n.args[0]
    return n


def _operands(n: Node) -> list:
    return [_user(a) for a in n.args]


def _tracks(graph: Graph, tracked) -> dict:
    """Which nodes depend on a tracked argument (eager would have recorded them)."""
    t = {}
    for n in graph.nodes:
        if n.kind == "input":
            t[n.index] = tracked[n.params]
        elif n.kind in ("tensor", "const") or (n.kind == "view" and n.op == "detach"):
            t[n.index] = False
        else:
            t[n.index] = any(t[a.index] for a in _operands(n))
    return t


def _order(graph: Graph, root: Node, tracks: dict) -> list:
    """The nodes behind ``root`` in eager's backward order (``autograd.sorted_nodes``)."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        n, expanded = stack.pop()
        if expanded:
            order.append(n)
            continue
        if n.index in seen:
            continue
        seen.add(n.index)
        stack.append((n, True))
        if n.kind != "input":
            for a in reversed(_operands(n)):
                if a.kind not in ("const", "tensor") and tracks[a.index] and a.index not in seen:
                    stack.append((a, False))
    order.reverse()
    return order


def _replay(graph: Graph, xs, saved: dict) -> dict:
    """A value per node, each op applied to its operands as written (Tensors or traced
    values); the nodes in ``saved`` take their value from there."""
    v = {}
    for n in graph.nodes:
        if n.index in saved:
            v[n.index] = saved[n.index]
        elif n.kind == "input":
            v[n.index] = xs[n.params]
        elif n.kind == "tensor":
            v[n.index] = n.value
        elif n.kind == "const":
            v[n.index] = n.params
        elif n.kind == "ew":
            ops = [v[a.index] for a in _operands(n)]
            v[n.index] = unary(n.op, *ops) if len(ops) == 1 else binary(n.op, *ops)
        elif n.kind == "cast":
            a = n.args[0]
            v[n.index] = v[a.index] if n.op == "compute" else to_dtype(v[a.index], n.dtype)
        elif n.kind == "where":
            c, a, b = (v[x.index] for x in _operands(n))
            v[n.index] = where(c, a, b)
        elif n.kind == "view":
            x = v[n.args[0].index]
            if n.op == "getitem":
                v[n.index] = x[n.params[0]]
            elif n.op in ("T", "mT"):
                v[n.index] = getattr(x, n.op)
            else:
                v[n.index] = getattr(x, n.op)(*n.params)
        elif n.kind == "reduce":
            v[n.index] = reduce(n.op, v[n.args[0].index], *n.params)
        elif n.kind == "matmul":
            from ..ops.linalg import matmul

            v[n.index] = matmul(v[n.args[0].index], v[n.args[1].index])
    return v


def _rule(n: Node, v: dict, g, tracks: dict):
    """(operand node, its gradient) pairs of node ``n`` given the gradient g of its value
    (``tracks``: which nodes depend on a tracked argument)."""
    y = v[n.index]
    if n.kind == "ew":
        e = OPS[n.op]
        if e.grad == NOT_DIFFERENTIABLE:
            return []
        args = _operands(n)
        vals = [v[a.index] for a in args]
        if e.arity == 1:
            return [(args[0], e.grad(vals[0], y, g))]
        out = []
        for a, fn in zip(args, e.grad):
            if a.kind != "const":
                out.append((a, sum_to(fn(vals[0], vals[1], y, g), a.shape).reshape(a.shape)))
        return out
    if n.kind == "cast":
        a = n.args[0]
        return [(a, g.to_dtype(a.dtype))]
    if n.kind == "where":
        args = _operands(n)
        vals = tuple(v[a.index] for a in args)
        grads = where_back(y, Op("where", tuple(x for x in vals if not _number(x)), {"operands": vals}), g)
        it = iter(grads)
        return [(a, next(it)) for a in args if a.kind != "const"]
    if n.kind == "view":
        (a,) = n.args
        inv = INVERSE_VIEWS.get(n.op)
        if inv is not None:
            return [(a, inv(g, v[a.index], n.params))]
        if not isinstance(g, Tensor):
            raise Unfusable(f"fuse: the gradient of a {n.op} view (a write into zeros)")
        gz = zeros(a.shape, g.dtype, device=g.device)  # any other view: g written through it into zeros
        view = gz[n.params[0]] if n.op == "getitem" else getattr(gz, n.op)(*n.params)
        view.copy_(g)
        return [(a, gz)]
    if n.kind == "reduce":
        (a,) = n.args
        x = v[a.index]
        dims = reduce_dims(n.op, x, n.params[0])
        keep = tuple(1 if d in dims else s for d, s in enumerate(a.shape))
        g = g.reshape(keep)
        if n.op == "sum":
            return [(a, g.broadcast_as(a.shape))]
        if n.op == "mean":
            count = 1
            for d in dims:
                count *= a.shape[d]
            return [(a, (g / count).broadcast_as(a.shape))]
        return [(a, extreme_back(y, Op(n.op, (x,), {"dims": dims, "keepdim": True}), g)[0])]
    if n.kind == "matmul":
        a, b = n.args
        # a traced operand has no strides: one written as a transpose is taken as stored so
        ga, gb = matmul_back(y, Op("matmul", (v[a.index], v[b.index]), {"promote": True}), g,
                             need=(tracks[a.index], tracks[b.index]),
                             transposed=tuple(_user(x).kind == "view" and _user(x).op in ("t", "T", "mT")
                                              for x in (a, b)))
        return [(a, ga), (b, gb)]
    return []


def _number(x) -> bool:
    return not isinstance(x, Tensor) and not hasattr(type(x), "__strided_trace__")


def _vjp(graph: Graph, k: int, tracked, saved: tuple):
    """The backward of output ``k``: ``vjp(*args, *values of the nodes in saved, g)``."""
    tracks = _tracks(graph, tracked)
    root = graph.outputs[k]
    order = _order(graph, root, tracks) if tracks[root.index] else []
    wanted = [n for n in graph.inputs if tracked[n.params] and n in order]

    def vjp(*xs_and_g):
        *xs, g = xs_and_g
        xs, kept = xs[:len(xs) - len(saved)], xs[len(xs) - len(saved):]
        v = _replay(graph, xs, dict(zip(saved, kept)))
        grads = {root.index: g}
        for n in order:
            gn = grads.get(n.index)
            if gn is None or n.kind == "input":
                continue
            for a, ga in _rule(n, v, gn, tracks):
                if ga is None or not tracks.get(a.index, False):
                    continue
                if ga.shape != a.shape:
                    ga = ga.broadcast_as(a.shape)
                if ga.dtype is not a.dtype:
                    ga = ga.to_dtype(a.dtype)
                old = grads.get(a.index)
                grads[a.index] = ga if old is None else old + ga
        return tuple(grads[n.index] for n in wanted)

    vjp.positions = tuple(n.params for n in wanted)  # the arguments whose gradients vjp returns
    return vjp

