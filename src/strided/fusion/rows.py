"""Row programs: a fused function whose reductions all run along the last dim, as one kernel.

Softmax, log-softmax, layer norm and their kind reduce each row and then use the row's
results on that same row.  Lowered group by group (``lower``), every reduction is an eager
step between kernels, and each pass reads and writes the whole tensor.  A row program
instead walks the rows once: for each row it evaluates every reduction's input into a
row of scratch (or reads it where it lies, when the input is an argument), reduces it,
computes the row's scalars (``sqrt(var + eps)``: once per row, not per element), and
writes the output row, so every pass after the first reads the row from cache.

``lower_rows(graph, args)`` returns the ``Program`` (one ``Kernel`` step, the same object
``lower`` makes, so its checks, kept call and ``explain`` are shared), or None where the
graph is not a row program; ``lower`` then lowers it group by group.  A graph is a row
program when, on the CPU, it holds at least one reduction, all its reductions read values
of one shape (the rows, last dim ``N >= 2``), its one output is of that shape or one value
per row (logsumexp, var, std: with or without the last dim), and every node it needs is:

- an argument (any dtype but the 16-bit ones) that broadcasts to the rows' shape, read
  through its own layout, which reads along its rows at stride 1 or 0;
- a constant, an op-table op, a cast or ``where`` (per element, or once per row when
  nothing in it varies along the row), ``detach``, or the ``squeeze`` of the last dim of
  a value per row;
- sum, mean, max or min of f32 or f64 over the last dim.

Same answers as eager.  Each op computes and rounds as in ``lower`` (``expression_source``).
A row is reduced with ``kernels.reduce.row_parts``: the leaves and the cascade eager's
reduction runs on a row it reads at stride 1, which is how eager reads the intermediates
it materialises here (their rows are unit-stride when the arguments' are).  Where eager
would split rows between threads instead (few, long rows: the reduction plan's
``nsplit``), the graph is lowered group by group.  mean divides the sum by N in the
sum's dtype, as eager does.
"""

from __future__ import annotations

import re

import numpy as np

from ..core import dtype as dt
from ..kernels.codegen import load
from ..kernels.loops import chunk_driver
from ..kernels.common import PARALLEL_MIN, check_in_buffer, reach
from ..kernels.reduce import plan as reduce_plan
from ..kernels.reduce_plan import INNER
from ..kernels.walk import direct, in_parallel, launch, nchunks
from ..backend import ALLOCATORS, BACKENDS
from ..layout import Layout
from .lower import Kernel, Program, expression_source
from .trace import Graph

import numba  # numba comes after strided.threads
from numba import types

__all__ = ["lower_rows"]

_FLOATS = (dt.f32, dt.f64)
_RUN = {"sum": "sum", "mean": "sum", "max": "max", "min": "min"}


def _last_dim_only(dim, nd: int) -> bool:
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return len(dims) == 1 and isinstance(dims[0], (int, np.integer)) and -nd <= dims[0] < nd \
        and dims[0] % nd == nd - 1


def _classify(graph: Graph, args: tuple):
    """(output node, the nodes it needs in order, their kinds, detach and squeeze aliases, the
    shape the rows make up), or None.  Kinds: "row" (varies along a row), "scalar" (one
    value per row, last dim 1), "squeezed" (one per row, last dim dropped: a reduction
    without keepdim, and what is computed from it alone), "const"."""
    if graph.device not in (None, "cpu") or graph.structure is not None or len(graph.outputs) != 1:
        return None
    out = graph.outputs[0]
    need, stack = set(), [out]
    while stack:
        n = stack.pop()
        if n.index not in need:
            need.add(n.index)
            stack.extend(n.args)
    nodes = [n for n in graph.nodes if n.index in need]
    reductions = [n for n in nodes if n.kind == "reduce"]
    if not reductions or out.dtype not in _FLOATS:
        return None
    shape = reductions[0].args[0].shape
    nd = len(shape)
    if nd == 0 or shape[-1] < 2:
        return None
    kind, alias = {}, {}
    n_last = shape[-1]
    for n in nodes:
        ks = {kind[alias.get(a.index, a.index)] for a in n.args}
        if "squeezed" in ks:  # only per-row values of their own: its shape is the rows' alone
            if ks - {"squeezed", "const"} or n.shape != shape[:-1] or n.kind not in ("ew", "cast", "where"):
                return None
            kind[n.index] = "squeezed"
            continue
        padded = (1,) * (nd - len(n.shape)) + n.shape
        if n.kind not in ("reduce", "view") and (len(n.shape) > nd or any(
                a not in (1, b) for a, b in zip(padded, shape))):
            return None
        if n.kind == "input":
            t = args[n.params]
            if t.dtype in dt.WIDENED or t.dtype in (dt.f16, dt.bf16):
                return None
            kind[n.index] = "row" if padded[-1] == n_last else "scalar"
        elif n.kind == "const":
            kind[n.index] = "const"
        elif n.kind in ("ew", "cast", "where"):
            kind[n.index] = "row" if "row" in ks else "scalar" if "scalar" in ks else "const"
        elif n.kind == "view" and n.op == "detach" and n.shape == n.args[0].shape:
            alias[n.index] = alias.get(n.args[0].index, n.args[0].index)
            kind[n.index] = kind[alias[n.index]]
        elif n.kind == "view" and n.op == "squeeze" and ks == {"scalar"} and n.shape == shape[:-1] \
                and len(n.args[0].shape) == nd:
            alias[n.index] = alias.get(n.args[0].index, n.args[0].index)
            kind[n.index] = "squeezed"
        elif n.kind == "reduce":
            (a,) = n.args
            dim, keepdim = n.params
            if (n.op not in _RUN or not _last_dim_only(dim, nd) or a.shape != shape or ks != {"row"}
                    or n.dtype not in _FLOATS or a.dtype is not n.dtype):
                return None
            kind[n.index] = "scalar" if keepdim else "squeezed"
        else:
            return None
    if kind[out.index] == "const" or kind[out.index] == "row" and out.shape != shape:
        return None
    return out, nodes, kind, alias, shape


class _Writer:
    """The statements of one row program, written as its nodes are met in order."""

    def __init__(self, kind, alias, leaves, lays):
        self.kind, self.alias = kind, alias
        self.leaves = leaves  # node index -> leaf number
        self.lays = lays  # leaf number -> layout (broadcast to the output's shape)
        self.scratch = {}  # node index -> scratch row number
        self.named = set()  # scalar values computed once per row (c<node index>)
        self.defs, self.per_row, self.texts = [], [], []
        self.nexpr = 0
        self.row_leaves, self.reductions = set(), []

    def _atom_code(self, atom, ctx):
        what, x = atom
        if what == "leaf":
            if ctx == "scalar":
                return f"x{x}[q{x}]"
            self.row_leaves.add(x)
            s = self.lays[x].stride[-1]
            return f"v{x}[i]" if s == 1 else f"x{x}[q{x}]"
        if what == "scr":
            return f"w{x}[i]"
        return f"c{x}"

    def tree(self, n, ctx, atoms):
        idx = self.alias.get(n.index, n.index)
        if n.kind == "view":
            n = n.args[0]
            while n.kind == "view":
                n = n.args[0]
        if n.kind == "const":
            return ("const", n)
        if ctx == "row" and idx in self.scratch:
            atom = ("scr", self.scratch[idx])
        elif n.kind == "input":
            atom = ("leaf", self.leaves[idx])
        elif n.kind == "reduce" or (ctx == "row" and self.kind[idx] != "row"):
            self.scalar(n)
            atom = ("c", idx)
        else:
            return ("op", n, tuple(self.tree(a, ctx, atoms) for a in n.args))
        return ("use", atoms.setdefault(atom, len(atoms)))

    def expr(self, n, ctx):
        """The name of a generated function computing node ``n`` and its arguments' code."""
        atoms: dict = {}
        t = self.tree(n, ctx, atoms)
        src = expression_source(t, len(atoms))
        j = self.nexpr
        self.nexpr += 1
        body = re.sub(r"\bF(\d+)\b", rf"E{j}F\1", src.body).replace("def expr(", f"def e{j}(", 1)
        self.defs += [f"E{j}F{f[1:]} = OPS[{op!r}].fn({comp!r})" for f, op, comp in src.ops]
        self.defs += [body, f"e{j} = inlined(e{j})"]
        order = sorted(atoms, key=atoms.get)
        args = ", ".join(self._atom_code(a, ctx) for a in order)
        # explain's names: leaves as the kernel reads them, scratch rows and row scalars by node
        names = [f"x{x}" if what == "leaf" else f"t{x}" if what == "scr" else f"c{x}" for what, x in order]
        if "scr" in {what for what, _ in order}:
            scr = {j: idx for idx, j in self.scratch.items()}
            names = [f"t{scr[x]}" if what == "scr" else name for (what, x), name in zip(order, names)]
        return f"e{j}({args})", re.sub(r"\bx(\d+)\b", lambda m: names[int(m.group(1))], src.text)

    def scalar(self, n):
        """``c<index>``: node ``n`` (a reduction or a per-row value) computed once per row."""
        if n.index in self.named:
            return
        self.named.add(n.index)
        if n.kind != "reduce":
            call, text = self.expr(n, "scalar")
            self.per_row.append(f"c{n.index} = {call}")
            self.texts.append(f"c{n.index} = {text}")
            return
        (a,) = n.args
        while a.kind == "view":
            a = a.args[0]
        j = len(self.reductions)
        self.reductions.append(n)
        idx = self.alias.get(a.index, a.index)
        if a.kind == "input" and self.lays[self.leaves[idx]].stride[-1] == 1:
            k = self.leaves[idx]
            src, p, text = f"x{k}", f"q{k}", f"x{k}"
        else:
            call, text = self.expr(a, "row")
            self.scratch[idx] = j
            self.per_row += ["for i in range(N):", f"    w{j}[i] = {call}"]
            src, p = f"w{j}", "0"
        # kernels.reduce's INNER order, written out here (see row_parts)
        c, ident = f"c{n.index}", f"I{j}"
        self.per_row += ["if N <= BLOCK:", f"    {c} = L{j}({src}, {p}, 1, N, {ident}, buf{j})", "else:",
                         "    sp = 0", "    k = 0", "    while k < N:", "        b = min(BLOCK, N - k)",
                         f"        sp = P{j}(vals{j}, lvls, sp, L{j}({src}, {p} + k, 1, b, {ident}, buf{j}))",
                         "        k += b", f"    {c} = FO{j}(vals{j}, sp, {ident})"]
        if n.op == "mean":
            self.per_row.append(f"c{n.index} = c{n.index} / np.{n.dtype.np.name}(N)")
        self.texts.append(f"c{n.index} = {n.op}({text})" if src[0] == "x" else f"c{n.index} = {n.op}(t{idx} = {text})")


_HEAD = """import numpy as np
from numba import njit

from strided.kernels.common import BLOCK, STACK
from strided.kernels.half import (bf16_bits_as_f16_bits, bf16_bits_as_f32, f16_bits_as_f32, f32_as_bf16_bits,
                                  f32_as_f16_bits, f64_as_f16_bits)
from strided.kernels.loops import inlined
from strided.kernels.optable import OPS
from strided.kernels.reduce import row_parts
from strided.kernels.walk import carry, seek
"""


def _source(w: _Writer, out_lines: list, nleaves: int) -> str:
    xs = ", ".join(f"x{k}" for k in range(nleaves))
    qs = ", ".join(["po"] + [f"q{k}" for k in range(nleaves)])
    offs = ", ".join(f"offs[{k}]" for k in range(nleaves + 1))
    runs = "".join(f"L{j}, P{j}, FO{j}, I{j} = row_parts({_RUN[n.op]!r}, {n.dtype.np.name!r})\n"
                   for j, n in enumerate(w.reductions))
    body = ["nd = lshape.shape[0]", "idx = np.zeros(nd, np.int64)", "lvls = np.empty(STACK, np.int64)"]
    for j, n in enumerate(w.reductions):
        t = f"np.{n.dtype.np.name}"
        body += [f"vals{j} = np.empty(STACK, {t})", f"buf{j} = np.empty(0, {t})"]
        if j in w.scratch.values():
            body.append(f"w{j} = np.empty(N, {t})")
    body += [f"{qs}, = seek(r0, lshape, lst, nd, idx, ({offs},))", "for r in range(r0, r1):"]
    row = [f"v{k} = x{k}[q{k} : q{k} + N]" for k in sorted(w.row_leaves) if w.lays[k].stride[-1] == 1]
    row += w.per_row
    row += [*out_lines, f"{qs}, = carry(lshape, lst, nd, idx, ({qs},))[1]"]
    body += ["    " + line for line in row]
    return (_HEAD + runs + "\n" + "\n".join(w.defs) + "\n\n\n"
            + f"def rows(out, {xs}, lshape, lst, offs, N, r0, r1):\n" + "".join(f"    {b}\n" for b in body)
            + '\n\nSERIAL = njit(cache=CACHE, error_model="numpy")(rows)\n')


def lower_rows(graph: Graph, args: tuple):
    """``(program, values)`` of ``graph`` as one row kernel, run once on ``args``; None where
    the graph is no row program (see the module docstring)."""
    got = _classify(graph, args)
    if got is None:
        return None
    out, nodes, kind, alias, shape = got
    n_last = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    p = reduce_plan(Layout.contiguous((rows, n_last)), (1,))
    if p.case != INNER or p.nsplit != 1:  # eager would split rows between threads: another order
        return None
    leaves, uses = {}, []
    for n in nodes:
        if n.kind == "input":
            lay = args[n.params].layout
            lay = lay if lay.shape == shape else lay.broadcast_as(shape)
            if lay.stride[-1] not in (0, 1):
                return None
            leaves[n.index] = len(uses)
            uses.append((n.index, lay))
    lays = [lay for _, lay in uses]
    w = _Writer(kind, alias, leaves, lays)
    for n in nodes:
        if n.kind == "reduce":
            w.scalar(n)
    if kind[out.index] == "row":
        out_call, out_text = w.expr(out, "row")
        out_lines = ["ov = out[po : po + N]", "for i in range(N):", f"    ov[i] = {out_call}"]
        row_lays = [lay for k, lay in enumerate(lays) if k in w.row_leaves]
        out_layout = BACKENDS["cpu"].elementwise.output_layout(shape, *row_lays) if row_lays else None
        if out_layout is None or out_layout.stride[-1] != 1:
            out_layout = Layout.contiguous(shape)
        out_lead = out_layout.stride[:-1]
    else:  # one value per row, in a dense tensor as eager's reductions write them
        o = out
        while o.kind == "view":
            o = o.args[0]
        w.scalar(o)
        out_text, out_lines = f"c{o.index}", [f"out[po] = c{o.index}"]
        out_layout = Layout.contiguous(out.shape)
        out_lead = out_layout.stride[:len(shape) - 1]
    for k_, (slot, lay) in enumerate(uses):
        check_in_buffer("fuse", f"x{k_} (%{slot})", args[graph.nodes[slot].params]._storage.data, lay)
    mod = load(_source(w, out_lines, len(uses)), f"rows{len(uses)}")
    nd = len(shape) - 1
    lshape = np.array(shape[:-1], np.int64)
    lst = np.array([out_lead, *[lay.stride[:-1] for lay in lays]], np.int64).reshape(len(uses) + 1, nd)
    offs = np.array([out_layout.offset, *[lay.offset for lay in lays]], np.int64)
    dtypes = (np.dtype(out.dtype.np), *[args[graph.nodes[slot].params]._storage.data.dtype for slot, _ in uses])
    nch = nchunks(rows, rows * n_last * (1 + len(w.reductions)), PARALLEL_MIN)
    tail = (lshape, lst, offs, n_last)

    def serial(kernel):
        def run(o, *bufs):
            kernel(o, *bufs, *tail, 0, rows)
        return run

    if nch > 1:
        # Inputs typed read-only: a writable buffer converts to that, so one entry of SERIAL
        # serves the buffers a kept program meets; numba converts no unaligned buffer to an
        # aligned one, so such a buffer (a rare view of raw bytes) takes SERIAL's dispatcher.
        arrays = [types.Array(numba.from_dtype(d), 1, "C", readonly=k > 0) for k, d in enumerate(dtypes)]
        ints = types.Array(types.int64, 1, "C")
        got = chunk_driver(mod.SERIAL, (*arrays, ints, types.Array(types.int64, 2, "C"), ints, types.int64))
        if got is None:
            return None
        drive, address = got

        def parallel(entry):
            def run(o, *bufs):
                if all(b.flags.aligned for b in bufs):
                    entry(address, o, *bufs, *tail, rows, nch)
                else:
                    mod.SERIAL(o, *bufs, *tail, 0, rows)
            return run

        run = parallel(lambda *a: launch(drive, a, True))

        def settle():
            entry = in_parallel(drive, (address, *[np.empty(0, d) for d in dtypes], *tail, rows, nch))
            return parallel(entry) if getattr(entry, "settled", True) else run
    else:
        run = serial(mod.SERIAL)

        def settle():
            empty = tuple(np.empty(0, d) for d in dtypes)
            return serial(direct(mod.SERIAL, (*empty, *tail, 0, rows)))

    k = Kernel()
    k.uses, k.out_layout, k.out_dtype, k.store = tuple(uses), out_layout, out.dtype, out.dtype
    k.alloc = ALLOCATORS["cpu"]
    k.dtypes, k.numel = dtypes, out_layout.numel
    k.run = run
    k.reach = (out_layout.numel, *[reach(lay)[1] for lay in lays])
    k.checks = tuple((slot, r, d) for (slot, _), r, d in zip(uses, k.reach[1:], dtypes[1:]))
    k.source, k.module, k.path = None, mod.__name__, "rows" + (" (parallel)" if nch > 1 else "")
    k.text = "per row: " + "; ".join(w.texts) + f"; out = {out_text}"
    prog = Program(graph)
    prog.steps.append((out.index, k))

    def first(env):
        res = Kernel.__call__(k, env)
        if settle is not None:
            k.run = settle()
        prog.shortcut()
        return res

    k.first = first
    env = {n.index: args[n.params] for n in graph.inputs}
    env[out.index] = first(env)
    return prog, env
