"""Tracing a function into a graph of op-table ops.

``trace(fn, args)`` calls ``fn`` with a ``Traced`` value in place of each tensor argument.
A traced value has a shape and a dtype and every method, operator and namespace function
of a Tensor that ``strided.fuse`` can fuse; each records a ``Node`` instead of computing.
The dtype and shape of every node are decided by the eager op layer's own rules
(``ops.elementwise.binary_dtypes``, ``unary_dtypes``, ``broadcast_shapes``, the views on a
stand-in tensor), so a traced chain means what the eager chain means and refuses what it
refuses, with the same StridedError.

What cannot be traced raises ``Unfusable`` naming it: Python control flow on a traced
value (``bool``, ``float``, ``item``), leaving the graph (``numpy()``, ``tolist``), writes,
and ops outside the table (sorts, gathers, data-dependent shapes such as nonzero).

Devices.  A graph has the device of its tensors (``Graph.device``; ``strided.fuse`` keys
its caches by it).  Tensors on two devices, among the arguments or met while tracing,
raise ``MixedDevices``: the call then runs eagerly, where the first op that mixes them
raises its own error.  Beside a device tensor, host data (an array, a NumPy scalar) gets
the eager op's refusal, as it would unfused.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core import dtype as dt
from ..core.errors import StridedError
from ..kernels.optable import OPS, on_new_op
from ..layout import Layout
from ..layout.layout import broadcast_shapes
from ..ops.elementwise import COMPARE, binary_dtypes, unary_dtypes
from ..ops.reduce import reduce_dims, reduce_result
from ..core.storage import wrap
from ..tensor import Tensor

__all__ = ["Node", "Graph", "Traced", "Unfusable", "MixedDevices", "trace", "VIEWS", "apply_view"]


class Unfusable(StridedError):
    """Something ``strided.fuse`` cannot put in a fused kernel (the message names it)."""


class MixedDevices(Unfusable):
    """Tensors on more than one device in one call: run eagerly, whose ops say what is wrong."""


class Node:
    """One value of a traced function.

    kind: "input" (argument k), "tensor" (a tensor met while tracing, read at every call),
    "const" (a scalar of dtype ``dtype``; ``params`` as written), "ew" (op-table op ``op`` on
    ``args``, computing in ``comp``), "cast" (to ``dtype``: ``op`` "to_dtype" as asked,
    "compute" an op's own conversion of an operand), "where" (args: cond, a, b), "view"
    (``op`` is the Tensor method, ``params`` its arguments), "reduce" (``op`` sum, mean,
    max, min; ``params`` (dims, keepdim)), "matmul"."""

    __slots__ = ("kind", "op", "args", "params", "shape", "dtype", "comp", "index", "value")

    def __init__(self, kind, op, args, shape, dtype, comp=None, params=(), value=None):
        self.kind, self.op, self.args, self.shape, self.dtype = kind, op, tuple(args), tuple(shape), dtype
        self.comp, self.params, self.value, self.index = comp, params, value, -1

    def key(self):
        """What the node computes, its inputs by index (a graph's identity is its nodes' keys)."""
        v = self.value
        if isinstance(v, Tensor):
            v = ("tensor", v.layout, v.dtype)  # a captured tensor: its layout and dtype, not its values
        elif isinstance(v, np.generic):
            v = (v.dtype.str, v.tobytes())
        return (self.kind, self.op, tuple(a.index for a in self.args), _hashable(self.params), self.shape,
                self.dtype, self.comp, v)

    def __repr__(self):
        return f"%{self.index} = {self.kind}:{self.op} {[a.index for a in self.args]} {self.shape} {self.dtype}"


def _hashable(p):
    if isinstance(p, (list, tuple)):
        return tuple(_hashable(x) for x in p)
    if isinstance(p, slice):
        return ("slice", p.start, p.stop, p.step)
    if isinstance(p, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in p.items()))
    return p


class Graph:
    """The nodes of one traced call.  With ``dedupe`` (a backward's graph) the same op on the
    same operands is one node: a backward asks for a gradient's factor once per use, and
    computed once it is written once.  A user's function keeps a node per call, as eager
    keeps a tensor per call: two outputs written alike are two buffers."""

    def __init__(self, dedupe: bool = False):
        self.dedupe = dedupe
        self.nodes: list[Node] = []
        self.inputs: list[Node] = []
        self.outputs: list[Node] = []
        self.structure = None  # the outputs as fn returned them: a Node, a tuple or a list of them
        self.device = None  # the device of its tensors (None: it has none)
        self._computed = {}  # the key of every node that computes a value, to that node
        # the fused backwards of this graph (``fusion.grad``), by output, tracked arguments and
        # kept nodes: kept with the graph they are made of, so a backward looks up a few ints
        self.backward: dict = {}
        self._kept = None

    def add(self, node: Node) -> Node:
        """``node`` as a node of the graph (deduplicated: the node already there that computes
        the same value from the same operands)."""
        if self.dedupe and node.kind not in ("input", "tensor"):  # two captured tensors of one layout are two
            key = node.key() + (type(node.params),)  # 1, 1.0 and True replay differently
            old = self._computed.get(key)
            if old is not None:
                return old
            self._computed[key] = node
        node.index = len(self.nodes)
        self.nodes.append(node)
        self._kept = None
        return node

    def kept_for_backward(self) -> tuple:
        """The nodes (indices, in order) whose values a tracked call keeps for its backward:
        the products, and the elementwise values they read (a layer's activation), which the
        call writes anyway and a backward would otherwise compute again."""
        kept = self._kept
        if kept is None:
            read = {a.index for n in self.nodes if n.kind == "matmul" for a in n.args}
            kept = self._kept = tuple(n.index for n in self.nodes if n.kind == "matmul"
                                      or (n.kind in ("ew", "cast", "where") and n.index in read))
        return kept

    def __repr__(self):
        return "\n".join(map(repr, self.nodes)) + f"\n-> {[o.index for o in self.outputs]}"


# Views that change nothing when the shape stays: in a backward's graph, the value itself.
_SAME_IF_SAME_SHAPE = frozenset(("detach", "reshape", "flatten", "flatten_all", "squeeze", "broadcast_as", "expand"))


def _stand_in(shape, dtype) -> Tensor:
    """A tensor of ``shape`` over no memory: eager's view methods on it give shapes and errors."""
    return Tensor(wrap(np.empty(0, dtype.np)), Layout.contiguous(shape), dtype)


# The views a traced value has, each the Tensor method of that name.  ``apply_view`` replays
# one on a layout at call time; reshape is the one that may not be a view there.
VIEWS = ("narrow", "slice", "select", "transpose", "t", "permute", "broadcast_as", "expand", "broadcast_left",
         "unsqueeze", "squeeze", "flip", "reshape", "flatten_all", "flatten", "getitem", "T", "mT", "detach")


def apply_view(layout: Layout, dtype, op: str, params) -> Layout | None:
    """The layout a view gives on ``layout`` (None: a reshape that is no view of it)."""
    t = Tensor(_NO_DATA, layout, dtype)
    if op in ("reshape", "flatten_all", "flatten"):
        shape = getattr(_stand_in(layout.shape, dtype), op)(*params).shape
        return layout.reshape_view(shape)
    if op == "getitem":
        return t[params[0]].layout
    if op in ("T", "mT"):
        return getattr(t, op).layout
    if op == "detach":
        return layout
    return getattr(t, op)(*params).layout


_NO_DATA = wrap(np.empty(0, np.uint8))


class Traced:
    """A value inside a function that ``strided.fuse`` traces."""

    __slots__ = ("node", "graph")
    __array_priority__ = 1000.0  # NumPy leaves ``ndarray op traced`` to our reflected operators
    __hash__ = None

    def __init__(self, node: Node, graph: Graph):
        self.node, self.graph = node, graph

    # -- what a tensor tells about itself ---------------------------------------------------
    shape = property(lambda self: self.node.shape)
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: len(self.node.shape))
    numel = property(lambda self: int(np.prod(self.node.shape, dtype=np.int64)))
    size = numel
    device = property(lambda self: self.graph.device or "cpu")

    def __repr__(self):
        return f"Traced(shape={self.shape}, dtype={self.dtype})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a rank-0 traced tensor")
        return self.shape[0]

    def _refuse(self, what):
        raise Unfusable(f"fuse: {what} of a traced tensor (its value is not known while tracing)")

    def __bool__(self):
        self._refuse("Python control flow on the value (bool)")

    def __float__(self):
        self._refuse("float()")

    def __int__(self):
        self._refuse("int()")

    def __index__(self):
        self._refuse("use as an index")

    def item(self):
        self._refuse("item()")

    def tolist(self):
        self._refuse("tolist()")

    def numpy(self):
        self._refuse("numpy()")

    def __array__(self, dtype=None, copy=None):
        self._refuse("conversion to a NumPy array")

    def __iter__(self):
        self._refuse("iteration")

    def __setitem__(self, index, value):
        self._refuse("a write (setitem)")

    def copy_(self, src):
        self._refuse("a write (copy_)")

    def fill_(self, v):
        self._refuse("a write (fill_)")

    def __getattr__(self, name):
        if hasattr(Tensor, name):
            raise Unfusable(f"fuse: Tensor.{name} is not among what a fused function can do")
        raise AttributeError(f"'Traced' object has no attribute {name!r}")

    def __array_namespace__(self, api_version=None):
        from ..api import array_api

        return array_api

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ..api.numpy_api import UFUNCS

        fn = UFUNCS.get(ufunc.__name__) if method == "__call__" and not kwargs else None
        if fn is None:
            raise Unfusable(f"fuse: numpy.{ufunc.__name__}.{method} on a traced tensor")
        return fn(*inputs)

    # -- the hook the op layer calls with a traced operand ------------------------------------
    def __strided_trace__(self, family: str, op: str, values: tuple, kw: dict):
        g = self.graph
        if family == "unary":
            return elementwise(g, op, values)
        if family == "binary":
            return elementwise(g, op, values)
        if family == "where":
            return where(g, *values)
        if family == "reduce":
            return reduction(g, op, values[0], kw.get("dim"), kw.get("keepdim", False))
        if family == "cast":
            return cast(g, values[0], kw["dtype"])
        if family == "matmul":
            return matmul(g, *values)
        raise Unfusable(f"fuse: {op} ({family}) is not an op of the table")

    # -- views ------------------------------------------------------------------------------
    def _view(self, op, params):
        if op == "getitem":
            idx = params[0] if isinstance(params[0], tuple) else (params[0],)
            if any(isinstance(i, (Tensor, Traced, np.ndarray, list)) for i in idx):
                raise Unfusable("fuse: indexing with arrays (a gather) inside a fused function")
        shape = apply_view(Layout.contiguous(self.shape), self.dtype, op, params)
        if shape is None:  # pragma: no cover - a contiguous layout reshapes as a view
            raise Unfusable(f"fuse: {op}")
        if self.graph.dedupe and op in _SAME_IF_SAME_SHAPE and shape.shape == self.shape:
            return self  # the same value seen through the same layout (a backward tracks nothing)
        return Traced(self.graph.add(Node("view", op, (self.node,), shape.shape, self.dtype, params=params)),
                      self.graph)

    def __getitem__(self, index):
        return self._view("getitem", (index,))

    @property
    def T(self):
        return self._view("T", ())

    @property
    def mT(self):
        return self._view("mT", ())

    def expand(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self._view("broadcast_as", (shape,))

    def permute(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return self._view("permute", (dims,))

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self._view("reshape", (shape,))

    view = reshape

    # -- casts, reductions, products ---------------------------------------------------------
    def to_dtype(self, dtype):
        return cast(self.graph, self, dtype)

    astype = to_dtype

    def detach(self):
        """The same values with no gradient flowing back through them (a node of its own)."""
        return self._view("detach", ())

    def contiguous(self):
        return self

    def copy(self):
        return self

    def clone(self):
        return self

    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None, dtype=None):
        t = self if dtype is None else self.to_dtype(dtype)
        return reduction(self.graph, "sum", t, dim if axis is None else axis, bool(keepdim or keepdims))

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return reduction(self.graph, "mean", self, dim if axis is None else axis, bool(keepdim or keepdims))

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return reduction(self.graph, "max", self, dim if axis is None else axis, bool(keepdim or keepdims))

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return reduction(self.graph, "min", self, dim if axis is None else axis, bool(keepdim or keepdims))

    def sum_all(self):
        return reduction(self.graph, "sum", self, None, False)

    def sum_keepdim(self, dim):
        return reduction(self.graph, "sum", self, dim, True)

    def where(self, a, b):
        return where(self.graph, self, a, b)

    def matmul(self, other):
        return matmul(self.graph, self, other)

    def __matmul__(self, other):
        return matmul(self.graph, self, other)

    def __rmatmul__(self, other):
        return matmul(self.graph, other, self)


# The composites Tensor has (ops.composite): written once against the tensor interface,
# so the same code traces.
def _install_composites():
    from ..ops import composite

    for name in composite.METHODS:
        setattr(Traced, name, getattr(composite, name))


def _install_views():
    for op in VIEWS:
        if op in ("getitem", "T", "mT", "expand", "permute", "reshape", "detach") or hasattr(Traced, op):
            continue

        def method(self, *params, _op=op):
            return self._view(_op, params)

        method.__name__ = op
        setattr(Traced, op, method)


def _table_methods(e) -> None:
    """A traced value's methods and operators for an op-table entry (as each entry comes)."""
    def method(self, *others, _name=e.name):
        return elementwise(self.graph, _name, (self, *others))

    def reflected(self, other, _name=e.name):
        return elementwise(self.graph, _name, (other, self))

    for m in e.methods + e.operators:
        setattr(Traced, m, method)
    for m in e.reflected:
        setattr(Traced, m, reflected)


_install_views()
on_new_op(_table_methods)


# -- recording --------------------------------------------------------------------------------
def _graph_of(values) -> Graph:
    for v in values:
        if isinstance(v, Traced):
            return v.graph
    raise StridedError("fuse: no traced value among the operands")  # pragma: no cover


def _leaf(g: Graph, x, comp=None, op="fuse") -> Node:
    """The node of an operand: a traced value, a tensor met while tracing, or a scalar."""
    if isinstance(x, Traced):
        if x.graph is not g:
            raise Unfusable("fuse: a traced value of another fused function")
        return x.node
    if isinstance(x, Tensor):
        device = x._storage.device
        if g.device is None:
            g.device = device
        elif device != g.device:
            raise MixedDevices(f"fuse: a tensor on {device} met while tracing a call on {g.device}")
        return g.add(Node("tensor", "tensor", (), x.shape, x.dtype, value=x.detach()))
    if isinstance(x, np.generic) and g.device not in (None, "cpu"):
        from ..interop import operand

        operand(op, x, g.device)  # a NumPy scalar is host data beside a device tensor: the eager op's refusal
    if isinstance(x, (numbers.Number, np.generic)) and comp is not None:
        v = dt.scalar_array(op, x, comp)[0]
        return g.add(Node("const", "const", (), (), comp, params=x, value=v))  # params: as written, for replays
    if isinstance(x, np.ndarray) or hasattr(x, "__array_interface__") or hasattr(x, "__dlpack__"):
        from ..interop import operand

        return _leaf(g, operand(op, x, g.device or "cpu"), comp, op)
    raise Unfusable(f"fuse: {op} of a {type(x).__name__} inside a fused function")


def _typed(x):
    """A stand-in tensor of a traced value's dtype, for the op layer's dtype rules."""
    return _stand_in((), x.dtype) if isinstance(x, Traced) else x


def _as_comp(g: Graph, n: Node, comp) -> Node:
    """``n`` as its op computes with it: converted to ``comp`` unless it computes in it already
    (f16 and bf16 compute in f32 as they are read, as eager's kernels read them)."""
    if n.kind == "const" or n.dtype.compute is comp or dt.kernel_dtype(n.dtype) is comp:
        return n
    return g.add(Node("cast", "compute", (n,), n.shape, comp))  # the op's own conversion, unrecorded in eager


def elementwise(g: Graph, op: str, values: tuple):
    e = OPS.get(op)
    if e is None:
        raise Unfusable(f"fuse: {op} is not an op of the table")
    if e.arity == 1:
        (x,) = values
        if not isinstance(x, Traced):
            raise StridedError(f"{op}: expected a tensor, got {type(x).__name__}")
        if op == "abs" and x.dtype.is_complex:
            raise Unfusable("fuse: abs of a complex tensor (a real hypot of its parts)")
        comp, want = unary_dtypes(op, x.dtype)
        args = (_as_comp(g, x.node, comp),)
        shape = x.shape
    else:
        a, b = values
        ta, tb = isinstance(a, (Traced, Tensor)), isinstance(b, (Traced, Tensor))
        if not ta and not tb:
            raise StridedError(f"{op}: expected a tensor among the operands, got {type(a).__name__} and "
                               f"{type(b).__name__}")
        if (not ta and not isinstance(a, (numbers.Number, np.generic))) or \
                (not tb and not isinstance(b, (numbers.Number, np.generic))):
            na, nb = (_leaf(g, v, None, op) if not isinstance(v, (numbers.Number, np.generic)) else v
                      for v in (a, b))
            return elementwise(g, op, tuple(Traced(v, g) if isinstance(v, Node) else v for v in (na, nb)))
        comp, want = binary_dtypes(op, _typed(a), _typed(b))
        if op in COMPARE and comp.kind in "iu":
            v = b if ta else a
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                info = np.iinfo(comp.np)
                if not info.min <= v <= info.max:
                    raise Unfusable(f"fuse: {op} of an integer tensor with {v}, outside its dtype")
        shape = broadcast_shapes(op, a.shape if ta else (), b.shape if tb else ())
        args = tuple(_as_comp(g, _leaf(g, v, comp, op), comp) for v in (a, b))
    n = g.add(Node("ew", op, args, shape, want, comp=comp))
    return Traced(n, g)


def where(g: Graph, cond, a, b):
    if not isinstance(cond, (Traced, Tensor)):
        raise StridedError(f"where: expected a tensor or an array condition, got {type(cond).__name__}")
    if isinstance(a, (Traced, Tensor)) or isinstance(b, (Traced, Tensor)):
        comp, want = binary_dtypes("add", _typed(a), _typed(b))
    else:
        want = dt.promote(dt.scalar_dtype(a), dt.scalar_dtype(b))
        want = {dt.f64: dt.DEFAULT_FLOAT, dt.c128: dt.DEFAULT_COMPLEX}.get(want, want)
        comp = want.compute
    shape = broadcast_shapes("where", cond.shape, *[v.shape for v in (a, b) if isinstance(v, (Traced, Tensor))])
    c = _leaf(g, cond, None, "where")
    if c.dtype is not dt.bool_:
        c = g.add(Node("cast", "compute", (c,), c.shape, dt.bool_))
    args = [c]
    for v in (a, b):
        n = _leaf(g, v, comp, "where")
        if n.dtype is not want:  # a scalar goes through comp, then to the stored dtype (as eager's)
            n = g.add(Node("cast", "compute", (n,), n.shape, want))
        args.append(n)
    return Traced(g.add(Node("where", "where", args, shape, want)), g)


def cast(g: Graph, x, dtype):
    dtype = dt.as_dtype(dtype)
    n = _leaf(g, x, None, "to_dtype")
    if n.dtype is dtype:
        return x
    if n.dtype.is_complex and not dtype.is_complex:
        raise Unfusable(f"fuse: a cast from {n.dtype} to {dtype}")
    return Traced(g.add(Node("cast", "to_dtype", (n,), n.shape, dtype)), g)


def reduction(g: Graph, op: str, x, dim, keepdim: bool):
    if op not in ("sum", "mean", "max", "min"):
        raise Unfusable(f"fuse: reduction {op}")
    n = _leaf(g, x, None, op)
    t = _stand_in(n.shape, n.dtype)
    dims = reduce_dims(op, t, dim)
    want = reduce_result(op, t, dims)
    shape = tuple(1 if d in dims else s for d, s in enumerate(n.shape))
    if not keepdim:
        shape = tuple(s for d, s in enumerate(n.shape) if d not in dims)
    return Traced(g.add(Node("reduce", op, (n,), shape, want, params=(dim, keepdim))), g)


def matmul(g: Graph, a, b):
    na, nb = _leaf(g, a, None, "matmul"), _leaf(g, b, None, "matmul")
    from ..ops.linalg import matmul_result

    shape, want = matmul_result(na.shape, nb.shape, na.dtype, nb.dtype)
    return Traced(g.add(Node("matmul", "matmul", (na, nb), shape, want)), g)


def trace(fn, args: tuple, dedupe: bool = False) -> Graph:
    """The graph of ``fn`` on ``args`` (tensors become inputs; other arguments are passed as
    they are, and become constants where an op meets them); ``dedupe``: see ``Graph``."""
    g = Graph(dedupe)
    traced_args = []
    devices = {a._storage.device for a in args if isinstance(a, Tensor)}
    if len(devices) > 1:
        raise MixedDevices(f"fuse: arguments on {' and '.join(sorted(devices))}")
    g.device = next(iter(devices), None)
    for k, a in enumerate(args):
        if isinstance(a, Tensor):
            n = g.add(Node("input", "input", (), a.shape, a.dtype, params=k))
            g.inputs.append(n)
            traced_args.append(Traced(n, g))
        else:
            traced_args.append(a)
    out = fn(*traced_args)
    items = out if isinstance(out, (tuple, list)) else (out,)
    for o in items:
        if not isinstance(o, Traced):
            raise Unfusable(f"fuse: the function returned a {type(o).__name__}, not a tensor computed from its inputs")
        g.outputs.append(o.node)
    g.structure = type(out) if isinstance(out, (tuple, list)) else None
    return g


_install_composites()
