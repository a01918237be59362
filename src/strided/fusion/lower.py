"""From a traced graph and the tensors of one call to the steps that compute it.

``lower(graph, args)`` runs the graph once on real tensors and returns the ``Program`` it
followed; a later call with tensors of the same layouts and dtypes replays the program.

Groups.  Elementwise nodes (op-table ops, casts, ``where``) and the views between them
stay *lazy*: an expression tree whose leaves are *uses*, each a materialised tensor read
through a layout in the expression's index space.  A view of a lazy value is applied to
every use's layout (``trace.apply_view``: the Tensor view itself, on the use's layout),
broadcasting too, so no view ever copies and every leaf is read where it lies.  A value is
*materialised* (one generated kernel writes it: ``kernels.loops`` over the expression's
source) where it is an output, where a reduction or a product reads it, and where a
reshape is no view of a use's layout.  Reductions and products are eager steps:
``ops.reduce`` on the materialised input (so a reduction sums in exactly eager's order)
and ``linalg.matmul``, whose result is a use of the next group: the epilogue (bias,
activation, scale) is fused into the pass that follows BLAS.

Values.  Inside a kernel every value is held in its dtype's register type (f16 and bf16
in f32, rounded to the half wherever eager stores a half; int16 and uint16 in 32 bits,
wrapped where eager narrows them), every op computes in the dtype eager's op computes in,
and casts are the copy kernels' conversions, so results are eager's bit for bit: no
reassociation and no FMA contraction (numba's default).

Backends.  This module writes each group's expression once, as backend-neutral source
(``Source``: ``def expr(a0, ...)`` calling the op table's functions by name and
``kernels.half``'s portable conversions), and asks the tensors' backend
(``backend.BACKENDS[device]``) for the kernel: its elementwise family's
``expression_kernel(source, out_layout, layouts, dtypes)`` compiles it over those layouts
(the CPU's loops of ``kernels.loops``; CUDA's grid-stride kernel) and ``refusal(op,
comp)`` says which ops it cannot compute, before anything runs.  Eager steps are the op
layer's, on any device.
"""

from __future__ import annotations

import numpy as np

import functools

from ..core import dtype as dt
from ..backend import ALLOCATORS, BACKENDS
from ..kernels.common import check_in_buffer
from ..kernels.optable import OPS
from ..layout import Layout
from ..tensor import Tensor, fresh
from .trace import Graph, Node, Unfusable, apply_view

__all__ = ["lower", "Program", "Stale", "Source", "expression_source"]


class Stale(Exception):
    """A replay met a layout or buffer its program was not lowered for: lower again."""


class Expr:
    """A lazy value: ``tree`` over ``uses`` ((node index, layout) each, in the value's index space).

    A tree is ("use", k), ("const", node) or ("op", node, children)."""

    __slots__ = ("tree", "uses", "shape")

    def __init__(self, tree, uses, shape):
        self.tree, self.uses, self.shape = tree, uses, shape


def _renumber(tree, m: dict, memo: dict):
    got = memo.get(id(tree))
    if got is None:
        if tree[0] == "use":
            got = ("use", m[tree[1]])
        elif tree[0] == "const":
            got = tree
        else:
            got = ("op", tree[1], tuple(_renumber(c, m, memo) for c in tree[2]))
        memo[id(tree)] = got
    return got


# -- the source of a fused expression ---------------------------------------------------------

_REG = {dt.f16: dt.f32, dt.bf16: dt.f32, dt.i16: dt.i32, dt.u16: dt.u32}


def _reg(d):
    """The dtype a value of ``d`` is held in inside a kernel."""
    return _REG.get(d, d)


def _np(d) -> str:
    r = _reg(d)
    return "np.bool_" if r is dt.bool_ else f"np.{np.dtype(r.np).name}"


def _float(x: float) -> str:
    """A Python literal of the double ``x`` (repr round-trips exactly)."""
    if x != x:
        return "np.nan"
    if x in (np.inf, -np.inf):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(float(x))


def _literal(v) -> str:
    """Source text of a constant, of its own dtype."""
    if isinstance(v, (np.bool_, bool)):
        return "True" if v else "False"
    if isinstance(v, np.complexfloating):
        return f"np.{v.dtype.name}(complex({_float(v.real)}, {_float(v.imag)}))"
    if isinstance(v, np.floating):
        return f"np.{v.dtype.name}({_float(float(v))})"
    return f"np.{v.dtype.name}({int(v)})"


def _round(d, v: str) -> str:
    """``v`` rounded to what a buffer of ``d`` stores, held in ``_reg(d)``."""
    if d is dt.f16:
        return f"f16_bits_as_f32(f32_as_f16_bits(np.float32({v})))"
    if d is dt.bf16:
        return f"bf16_bits_as_f32(f32_as_bf16_bits(np.float32({v})))"
    if d is dt.i16:
        return f"np.int32(np.int16({v}))"
    if d is dt.u16:
        return f"np.uint32(np.uint16({v}))"
    return f"{_np(d)}({v})"


def _convert(src, dst, v: str) -> str:
    """A value of ``src`` (in its register) as the copy kernels convert it to ``dst``."""
    if dst is dt.bool_:
        return f"({v} != 0)"
    if src is dt.bool_ and dst in (dt.f16, dt.bf16):
        return f"(np.float32(1.0) if {v} else np.float32(0.0))"
    if dst is dt.f16:
        if src is dt.f64:
            return f"f16_bits_as_f32(f64_as_f16_bits({v}))"
        if src is dt.bf16:  # ml_dtypes' own NaN rule between the halves
            return f"f16_bits_as_f32(bf16_bits_as_f16_bits(f32_as_bf16_bits({v})))"
        return f"f16_bits_as_f32(f32_as_f16_bits(np.float32({v})))"
    if dst is dt.bf16:  # through f32, as ml_dtypes rounds f64 and the integers
        return f"bf16_bits_as_f32(f32_as_bf16_bits(np.float32({v})))"
    if dst is dt.i16:  # through a 32-bit integer, then wrapped, as NumPy's astype
        return f"np.int32(np.int16(np.int32({v})))"
    if dst is dt.u16:
        return f"np.uint32(np.uint16(np.uint32({v})))"
    return f"{_np(dst)}({v})"


class Source:
    """A group's expression as every backend takes it (``expression_kernel``): ``body``, the
    source of ``def expr(a0, ..., a<nuses-1>)`` over the uses' values as kernels hold them
    (f16/bf16 as f32), which calls ``np``, each op-table function by its name in ``ops``
    ((name, op, compute dtype name), in order of first use) and ``kernels.half``'s portable
    conversions by their names; ``text``, a readable form; ``heavy``, whether its work per
    element is libm-sized."""

    __slots__ = ("body", "ops", "nuses", "text", "heavy")

    def __init__(self, body, ops, nuses, text, heavy):
        self.body, self.ops, self.nuses, self.text, self.heavy = body, ops, nuses, text, heavy


def expression_source(tree, nuses: int) -> Source:
    """The ``Source`` of an expression tree over ``nuses`` uses."""
    lines, names, shown, ops = [], {}, {}, {}
    count = [False, 0]

    def walk(t):
        if t[0] == "use":
            return f"a{t[1]}", f"x{t[1]}"
        if t[0] == "const":
            v = t[1].value
            return _literal(v), repr(v.item() if hasattr(v, "item") else v)
        n = t[1]
        kids = [walk(c) for c in t[2]]
        key = (n.index, tuple(k[0] for k in kids))
        got = names.get(key)
        if got is not None:
            return got, shown[key]
        args = [k[0] for k in kids]
        if n.kind == "ew":
            e = OPS[n.op]
            f = ops.setdefault((n.op, n.comp.np.name), f"F{len(ops)}")
            count[0] |= e.heavy
            count[1] += 1
            code = _round(n.dtype, f"{f}({', '.join(args)})")
            text = f"{n.op}({', '.join(k[1] for k in kids)})"
        elif n.kind == "cast":
            (a,) = n.args
            code = _convert(a.dtype, n.dtype, args[0])
            text = f"{kids[0][1]}.to({n.dtype})"
        elif n.kind == "where":
            code = f"{args[1]} if {args[0]} else {args[2]}"
            text = f"where({', '.join(k[1] for k in kids)})"
        else:  # pragma: no cover - lower() materialises every other kind
            raise Unfusable(f"fuse: {n.kind} inside an expression")
        name = f"t{len(lines)}"
        lines.append(f"    {name} = {code}")
        names[key], shown[key] = name, text
        return name, text

    result, text = walk(tree)
    args = ", ".join(f"a{k}" for k in range(nuses))
    body = f"def expr({args}):\n" + "".join(line + "\n" for line in lines) + f"    return {result}\n"
    return Source(body, tuple((f, op, comp) for (op, comp), f in ops.items()), nuses, text,
                  count[0] or count[1] > 2)


# -- the program ----------------------------------------------------------------------------


class Kernel:
    """A materialisation: the generated kernel, bound once for the layouts it was lowered for."""

    __slots__ = ("uses", "out_layout", "out_dtype", "store", "run", "reach", "dtypes", "source", "text", "path",
                 "module", "first", "checks", "numel", "alloc")

    def __call__(self, env):
        bufs = []
        for slot, r, d in self.checks:  # every buffer against what the kernel reaches, every call
            b = env[slot]._storage.data
            if len(b) < r or b.dtype is not d:
                raise Stale()
            bufs.append(b)
        store = self.alloc(self.numel, self.dtypes[0])
        if self.numel:
            self.run(store.data, *bufs)
        out = fresh(store, self.out_layout, self.store)
        if self.store is not self.out_dtype:
            from ..ops.copies import to_dtype

            out = to_dtype(out, self.out_dtype)
        return out


class Program:
    """The steps of one lowered call, replayed by ``run``."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.steps = []  # (node index, step(env) -> Tensor)
        # the one output's node when fn returned one tensor (the call returns env[single])
        self.single = graph.outputs[0].index if graph.structure is None and len(graph.outputs) == 1 else None
        self.fast = None

    def shortcut(self) -> None:
        """A program of one kernel over the arguments themselves (most fused chains) gets a call
        of its own, ``fast(args)``: written out (as ``kernels.loops`` writes its loops), it
        checks each buffer against the kernel's reach and dtype, allocates and runs, and
        makes the result, with no loop, dict or frame besides."""
        self.fast = None
        if len(self.steps) != 1 or not isinstance(self.steps[0][1], Kernel) or self.single != self.steps[0][0]:
            return
        k = self.steps[0][1]
        pos = {n.index: n.params for n in self.graph.inputs}
        if k.store is not k.out_dtype or not k.numel or any(slot not in pos for slot, _, _ in k.checks):
            return
        names = {}
        lines = ["def fast(args):"]
        for i, (slot, r, d) in enumerate(k.checks):
            if slot not in names:
                names[slot] = f"b{len(names)}"
                lines.append(f"    {names[slot]} = args[{pos[slot]}]._storage.data")
            lines.append(f"    if len({names[slot]}) < {r} or {names[slot]}.dtype is not D{i}:")
            lines.append("        raise Stale()")
        bufs = ", ".join(names[slot] for slot, _, _ in k.checks)
        lines += [f"    store = alloc({k.numel}, DOUT)", f"    run(store.data, {bufs})",
                  "    return fresh(store, LAYOUT, DTYPE)"]
        scope = {"alloc": k.alloc, "run": k.run, "fresh": fresh, "Stale": Stale, "DOUT": k.dtypes[0],
                 "LAYOUT": k.out_layout, "DTYPE": k.out_dtype, **{f"D{i}": d for i, (_, _, d) in enumerate(k.checks)}}
        exec("\n".join(lines), scope)  # written above from the kernel's own integers
        self.fast = scope["fast"]

    def run(self, args) -> dict:
        env = {}
        for n in self.graph.inputs:
            env[n.index] = args[n.params]
        for idx, step in self.steps:
            env[idx] = step(env)
        return env

    def explain(self) -> str:
        out = []
        for idx, step in self.steps:
            if isinstance(step, Kernel):
                leaves = ", ".join(f"x{k} = %{slot} through {lay}" for k, (slot, lay) in enumerate(step.uses))
                out.append(f"%{idx}: kernel {step.module} ({step.path}), {step.text} -> {step.out_layout}"
                           f" {step.out_dtype}\n      reads {leaves}")
            else:
                out.append(f"%{idx}: {step}")
        return "\n".join(out)


class _Source:
    __slots__ = ("value", "what")

    def __init__(self, value, what):
        self.value, self.what = value, what

    def __call__(self, env):
        return self.value

    def __repr__(self):
        return self.what


class _Widen:
    """int16/uint16 read as 32-bit buffers (kernels read 16-bit buffers as half bits)."""

    __slots__ = ("src",)

    def __init__(self, src):
        self.src = src

    def __call__(self, env):
        from ..ops.copies import to_dtype

        t = env[self.src]
        return to_dtype(t.detach(), dt.WIDENED[t.dtype])

    def __repr__(self):
        return f"widen %{self.src} to 32 bits (eager)"


class _View:
    __slots__ = ("src", "op", "params", "seen")

    def __init__(self, src, op, params):
        self.src, self.op, self.params, self.seen = src, op, params, (None, None)

    def __call__(self, env):
        t = env[self.src]
        if t.layout is self.seen[0] or t.layout == self.seen[0]:
            lay = self.seen[1]
        else:
            lay = apply_view(t.layout, t.dtype, self.op, self.params)
            if lay is None:
                raise Stale()
            self.seen = (t.layout, lay)
        return Tensor(t._storage, lay, t.dtype)

    def __repr__(self):
        return f"view {self.op}{self.params} of %{self.src}"


class _Reduce:
    __slots__ = ("src", "op", "dim", "keepdim")

    def __init__(self, src, op, dim, keepdim):
        self.src, self.op, self.dim, self.keepdim = src, op, dim, keepdim

    def __call__(self, env):
        from ..ops.reduce import reduce

        return reduce(self.op, env[self.src].detach(), self.dim, self.keepdim)

    def __repr__(self):
        return f"{self.op}(%{self.src}, dim={self.dim}, keepdim={self.keepdim}) (eager reduction)"


class _Matmul:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, env):
        from ..ops.linalg import matmul

        return matmul(env[self.a].detach(), env[self.b].detach())

    def __repr__(self):
        return f"matmul(%{self.a}, %{self.b}) (BLAS)"


# -- lowering ------------------------------------------------------------------------------------


# The views that read each element of their source once: once the source is written, such a
# view of it is read in place (where it is a view of the written layout).
_WHOLE = frozenset(("detach", "t", "T", "mT", "transpose", "permute", "flip", "unsqueeze", "squeeze", "reshape",
                    "flatten", "flatten_all"))


def lower(graph: Graph, args: tuple) -> tuple[Program, dict]:
    """Run ``graph`` on ``args`` (computing as it goes) and return the program it followed
    and the values it computed (by node index)."""
    device = graph.device or "cpu"
    backend = BACKENDS[device]
    for n in graph.nodes:  # an op the backend cannot compute: nothing runs, the call goes eager
        if n.kind == "ew":
            why = backend.elementwise.refusal(n.op, n.comp.np.name)
            if why is not None:
                raise Unfusable(f"fuse: {n.op} on {n.comp.np.name} is not computed on {device} ({why})")
    make = functools.partial(_compile, backend.elementwise, ALLOCATORS[device])
    prog = Program(graph)
    env: dict = {}  # node index -> Tensor (materialised), Expr (lazy) or None (a constant)
    done: dict = {}  # node index -> Tensor, for the steps that read them
    base: dict = {}  # node index -> the node whose buffer a materialised value (or its view) is
    pending: dict = {}  # node index -> the view step that makes it, added once something needs it
    whole: dict = {}  # node index -> its source, for a lazy view that reads every element once
    outputs = {o.index for o in graph.outputs}

    def step(idx, s):
        prog.steps.append((idx, s))
        done[idx] = env[idx] = s(done)
        base[idx] = idx
        return done[idx]

    def ensure(idx):
        """A view of a buffer as a tensor of its own, where a step or an output needs one (a
        kernel reads the buffer itself, through the view's layout)."""
        s = pending.pop(idx, None)
        if s is not None:
            ensure(s.src)
            prog.steps.append((idx, s))

    def materialise(n: Node, row_major: bool = False) -> Tensor:
        v = env[n.index]
        if isinstance(v, Tensor):
            ensure(n.index)
            return v
        src = whole.get(n.index)
        if src is not None and not row_major and (isinstance(env[src], Tensor) or src in whole):
            # a view of every element of a value that is (or whose own source is) written
            # already: the view of that tensor, not the expression computed once more
            t = materialise(graph.nodes[src])
            lay = apply_view(t.layout, t.dtype, n.op, n.params)
            if lay is not None:
                done[n.index] = env[n.index] = Tensor(t._storage, lay, t.dtype)
                base[n.index] = base[src]
                pending[n.index] = _View(src, n.op, n.params)
                ensure(n.index)
                return done[n.index]
        k = make(v, n, done, row_major, prog)
        prog.steps.append((n.index, k))
        done[n.index] = env[n.index] = k.first(done) if k.run is not None else k(done)
        base[n.index] = n.index
        return done[n.index]

    def as_expr(n: Node) -> Expr:
        v = env[n.index]
        if isinstance(v, Expr):
            return v
        if v is None:
            return Expr(("const", n), [], ())
        return Expr(("use", 0), [(base[n.index], v.layout)], n.shape)

    for n in graph.nodes:
        if n.kind in ("input", "tensor"):
            t = args[n.params] if n.kind == "input" else n.value
            done[n.index] = env[n.index] = t
            base[n.index] = n.index
            if n.kind == "tensor":
                prog.steps.append((n.index, _Source(t, "a tensor captured while tracing")))
            if t.dtype in dt.WIDENED:
                step(n.index, _Widen(n.index))
        elif n.kind == "const":
            env[n.index] = None
        elif n.kind in ("ew", "cast", "where"):
            uses, children = [], []
            position = {}
            for a in n.args:
                e = as_expr(a)
                m = {}
                for k, (slot, lay) in enumerate(e.uses):
                    lay = lay if lay.shape == n.shape else lay.broadcast_as(n.shape)
                    key = (slot, lay)
                    if key not in position:
                        position[key] = len(uses)
                        uses.append(key)
                    m[k] = position[key]
                children.append(_renumber(e.tree, m, {}))
            env[n.index] = Expr(("op", n, tuple(children)), uses, n.shape)
        elif n.kind == "view":
            (a,) = n.args
            v = env[a.index]
            lazy = False
            if isinstance(v, Expr):
                lays = [apply_view(lay, a.dtype, n.op, n.params) for _, lay in v.uses]
                if all(lay is not None for lay in lays):
                    env[n.index] = Expr(v.tree, [(slot, lay) for (slot, _), lay in zip(v.uses, lays)], n.shape)
                    lazy = True
                    if n.op in _WHOLE:
                        whole[n.index] = a.index
                else:
                    v = materialise(a, row_major=True)  # a reshape that is no view of some use's layout
            if not lazy:
                lay = apply_view(v.layout, v.dtype, n.op, n.params)
                if lay is None:  # a reshape that is no view of a materialised value: a row-major copy first
                    env[a.index] = Expr(("use", 0), [(base[a.index], v.layout)], a.shape)
                    v = materialise(a, row_major=True)
                    lay = apply_view(v.layout, v.dtype, n.op, n.params)
                done[n.index] = env[n.index] = Tensor(v._storage, lay, v.dtype)
                base[n.index] = base[a.index]
                pending[n.index] = _View(a.index, n.op, n.params)
        elif n.kind == "reduce":
            (a,) = n.args
            materialise(a)
            step(n.index, _Reduce(a.index, n.op, *n.params))
        elif n.kind == "matmul":
            for a in n.args:
                materialise(a)
            step(n.index, _Matmul(n.args[0].index, n.args[1].index))
        else:  # pragma: no cover
            raise Unfusable(f"fuse: {n.kind}")
        if n.index in outputs:
            materialise(n)
    return prog, done


def _compile(family, allocate, e: Expr, n: Node, done: dict, row_major: bool, prog: Program) -> Kernel:
    """The kernel that materialises lazy value ``e`` (node ``n``): the backend's elementwise
    ``family`` compiles (or finds) it; ``allocate(numel, np_dtype)`` makes its output buffers."""
    src = expression_source(e.tree, len(e.uses))
    lays = [lay for _, lay in e.uses]
    for k_, (slot, lay) in enumerate(e.uses):  # before any kernel reads them, as every family checks
        check_in_buffer("fuse", f"x{k_} (%{slot})", done[slot]._storage.data, lay)
    store = dt.WIDENED.get(n.dtype, n.dtype)
    k = Kernel()
    k.uses = tuple(e.uses)
    k.out_layout = Layout.contiguous(e.shape) if row_major or not lays else family.output_layout(e.shape, *lays)
    k.out_dtype, k.store, k.alloc = n.dtype, store, allocate
    k.dtypes = (np.dtype(store.np), *[done[slot]._storage.data.dtype for slot, _ in e.uses])
    k.numel = k.out_layout.numel
    bound = family.expression_kernel(src, k.out_layout, tuple(lays), k.dtypes)
    if bound is None:
        raise Unfusable("fuse: a layout that reaches before its buffer's start")
    k.source, k.text, k.module, k.path = src.body, src.text, bound.module, bound.path
    k.run, k.reach = bound.run, bound.reach
    k.checks = tuple((slot, r, d) for (slot, _), r, d in zip(e.uses, k.reach[1:], k.dtypes[1:]))
    if k.run is None:  # nothing to write
        return k

    def first(env):
        """The first call compiles the kernel; then the backend may bind it again (the CPU's
        kept call goes straight to numba's compiled entry, ``walk.direct``, not its dispatcher)."""
        out = Kernel.__call__(k, env)
        if bound.settle is not None:
            k.run = bound.settle()
        prog.shortcut()
        return out

    k.first = first
    return k
