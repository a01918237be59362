"""The fused function: its caches, calls, eager fallback and ``explain`` (the package docstring
says what fusing does)."""


from __future__ import annotations

import functools
import numbers
import warnings

import numpy as np

from ..core import caches
from ..core.errors import StridedError
from ..tensor import Op, Tensor
from .lower import Stale, lower
from .rows import lower_rows
from .trace import MixedDevices, Unfusable, trace

__all__ = ["fuse", "Fused", "Unfusable"]


class Fused:
    """A function fused on call; ``explain(*args)`` says how a call is computed."""

    def __init__(self, fn, *, strict: bool = False, fast: bool = False, quiet: bool = False, dedupe: bool = False):
        if fast:
            raise StridedError("fuse: fast=True (reassociation and FMA contraction) is not offered yet; "
                               "fused results are eager's bit for bit")
        self.fn, self.strict = fn, strict
        functools.update_wrapper(self, fn)
        name = getattr(fn, "__qualname__", repr(fn))
        # per function: the graphs by signature, the programs by layouts; listed in the inventory
        self._graphs = caches.cache(f"fuse.graphs[{name}]", "argument shapes and dtypes, scalar values", 256)
        self._programs = caches.cache(f"fuse.programs[{name}]", "argument layouts and dtypes, scalar values", 1024,
                                      threads=True)
        self._warned = quiet  # quiet: a backward strided made, which falls back without a word
        self._dedupe = dedupe  # one node per value (trace.Graph): a backward's gradients may share buffers

    # -- signatures ---------------------------------------------------------------------------
    @staticmethod
    def _key(args, layouts: bool):
        """(key, tracked): the arguments' layouts (or shapes) and dtype names, a device tensor's
        device before them, and the scalars' types and values; None for arguments that are
        never kept (arrays, lists)."""
        key = []
        tracked = False
        for a in args:
            if isinstance(a, Tensor):
                if a._storage.device != "cpu":  # a str where a CPU tensor's layout would be: no key collides
                    key.append(a._storage.device)
                key.append(a.layout if layouts else a.shape)
                key.append(a.dtype.name)  # a str: hashed and compared in C
                if a._is_var or a._op is not None:
                    tracked = True
            elif isinstance(a, (numbers.Number, np.generic, str, type(None))):
                key.append((type(a), a))
            else:
                return None, False  # an array, a list: converted eagerly, never kept
        return tuple(key), tracked

    def graph(self, *args):
        """The traced graph of a call with these arguments."""
        key = self._key(args, False)[0]
        g = self._graphs.get(key) if key is not None else None
        if g is None:
            g = trace(self.fn, args, self._dedupe)
            if key is not None:
                self._graphs.put(key, g)
        return g

    # -- calls -----------------------------------------------------------------------------------
    def __call__(self, *args):
        key, tracked = self._key(args, True)
        prog = self._programs.get(key) if key is not None else None
        if prog is not None and prog.fast is not None and not tracked:
            try:
                return prog.fast(args)
            except Stale:
                prog = None
        if prog is not None:
            try:
                env = prog.run(args)
            except Stale:
                prog = None
        if prog is None:
            if key is None:
                return self._eager(args, "arguments that are not tensors or scalars")
            try:
                g = self.graph(*args)
                prog, env = lower_rows(g, args) or lower(g, args)
            except MixedDevices:
                return self.fn(*args)  # the eager op that mixes the devices says so, as unfused
            except Unfusable as e:
                return self._eager(args, str(e), e)
            self._programs.put(key, prog)
        if prog.single is not None and not tracked:
            return env[prog.single]
        return self._results(prog, env, args, tracked)

    def _results(self, prog, env, args, tracked):
        g = prog.graph
        outs = [env[o.index] for o in g.outputs]
        if tracked:
            inputs = tuple(a for a in args if isinstance(a, Tensor))
            # the products' results and their operands that the call wrote (a layer's activation),
            # which the backward reads rather than computes again
            saved = tuple((i, env[i]) for i in g.kept_for_backward() if i in env)
            for k, t in enumerate(outs):
                outs[k] = t = Tensor(t._storage, t.layout, t.dtype)  # one recorded node per output
                t._op = Op("fused", inputs, {"graph": g, "output": k, "args": args, "saved": saved})
        if g.structure is None:
            return outs[0]
        return g.structure(outs)

    def _eager(self, args, why: str, error: Exception | None = None):
        if self.strict:
            if error is not None:
                raise error
            raise Unfusable(f"fuse: {why}")
        if not self._warned:
            self._warned = True
            warnings.warn(f"strided.fuse: {getattr(self.fn, '__qualname__', self.fn)} runs eagerly: {why}",
                          stacklevel=3)
        return self.fn(*args)

    def explain(self, *args) -> str:
        """The groups of a call with these arguments: each kernel, what it computes and the
        layout it reads each leaf through; reductions and products as the eager steps they are."""
        try:
            g = self.graph(*args)
            prog, _ = lower_rows(g, args) or lower(g, args)
        except Unfusable as e:
            return f"not fused: {e}"
        head = f"{getattr(self.fn, '__qualname__', self.fn)}: {len(g.nodes)} traced nodes, " \
               f"{sum(1 for _, s in prog.steps if type(s).__name__ == 'Kernel')} fused kernel(s)"
        return head + "\n" + prog.explain()


def fuse(fn=None, *, strict: bool = False, fast: bool = False):
    """Fuse ``fn`` (see the module docstring); usable as ``@fuse`` or ``@fuse(strict=True)``."""
    if fn is None:
        return lambda f: Fused(f, strict=strict, fast=fast)
    return Fused(fn, strict=strict, fast=fast)
