"""The kept decision: what an op's first call on some layouts decided, for the next call on
equal ones (docs/architecture.md, "One dispatch per call").

Every family that keeps decisions (elementwise, reduce, copies, join, matmul) keeps a
``Kept``: the backend's prepared kernel call, what each input buffer must be for that call
(its numpy dtype, the length its layout reaches), and the result's allocation, layout and
dtype.  A kept call checks its buffers against ``reach`` and ``types``, takes ``result()``
and runs ``run`` (``one`` and ``two`` do all of it for the calls of one and two tensors, the
record rule included); the family's cache key holds everything else the decision depends on.
"""

from __future__ import annotations

from ..backend import ALLOCATORS
from ..tensor import Op, fresh


class Kept:
    """One op's decision for one set of operand layouts, dtypes and devices.

    ``run(*buffers)``: the prepared kernel call (the backend checked its layouts once),
    called with the buffers in the family's order once each input buffer ``i`` has the
    numpy dtype ``types[i]`` and is at least ``reach[i]`` long.  ``result(op)``: a new
    tensor of ``numel`` elements of ``np_dtype`` on ``device``, seen through ``layout`` as
    ``dtype``, recording ``op`` (None: untracked inputs).  ``extra``: what the family needs
    beyond that (a mean's divisor, a reduction's kept-dim layout, a join's sizes)."""

    __slots__ = ("run", "reach", "types", "numel", "np_dtype", "layout", "dtype", "device", "extra", "alloc")

    def __init__(self, run, reach: tuple, types: tuple, layout, dtype, device: str, np_dtype=None, extra=None):
        self.run, self.reach, self.types = run, tuple(reach), tuple(types)
        self.numel, self.layout, self.dtype, self.device = layout.numel, layout, dtype, device
        self.np_dtype = dtype.np if np_dtype is None else np_dtype
        self.extra = extra
        self.alloc = ALLOCATORS[device]

    def one(self, name: str, t):
        """The kept call ``name(t)`` of one tensor (``run(out, buffer)``, recorded with no
        context): the result, or None when ``t``'s buffer is not what ``run`` was prepared for."""
        d = t._storage.data
        if len(d) < self.reach[0] or d.dtype is not self.types[0]:
            return None
        out = fresh(self.alloc(self.numel, self.np_dtype), self.layout, self.dtype,
                    Op(name, (t,), {}) if t._is_var or t._op is not None else None)
        self.run(out._storage.data, d)
        return out

    def two(self, name: str, a, b):
        """The kept call ``a name b`` of two tensors (``run(out, a_buffer, b_buffer)``, recorded
        with its operands), or None as ``one``."""
        da, db = a._storage.data, b._storage.data
        reach, types = self.reach, self.types
        if len(da) < reach[0] or len(db) < reach[1] or da.dtype is not types[0] or db.dtype is not types[1]:
            return None
        out = fresh(self.alloc(self.numel, self.np_dtype), self.layout, self.dtype,
                    Op(name, (a, b), {"operands": (a, b)})
                    if a._is_var or b._is_var or a._op is not None or b._op is not None else None)
        self.run(out._storage.data, da, db)
        return out

    def result(self, op=None):
        """The result tensor of a kept call, its buffer new and uninitialised."""
        return fresh(self.alloc(self.numel, self.np_dtype), self.layout, self.dtype, op)

    def __repr__(self):
        return f"Kept({self.layout}, {self.dtype}, reach={self.reach}, on {self.device})"
