"""The kept decision: what an op's first call on some layouts decided, for the next call on
equal ones (docs/architecture.md, "One dispatch per call").

Every family that keeps decisions (elementwise, reduce, copies, join, matmul) keeps a
``Kept``: the backend's prepared kernel call, what each input buffer must be for that call
(its numpy dtype, the length its layout reaches), and the result's allocation, layout and
dtype.  A kept call checks its buffers against ``reach`` and ``types``, takes ``result()``
and runs ``run``; the family's cache key holds everything else the decision depends on.
"""

from __future__ import annotations

from ..backend import ALLOCATORS
from ..tensor import fresh


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

    def fits(self, *bufs) -> bool:
        """Whether ``bufs`` (the inputs, in order) are what ``run`` was prepared for."""
        for b, n, t in zip(bufs, self.reach, self.types):
            if len(b) < n or b.dtype is not t:
                return False
        return True

    def result(self, op=None):
        """The result tensor of a kept call, its buffer new and uninitialised."""
        return fresh(self.alloc(self.numel, self.np_dtype), self.layout, self.dtype, op)

    def __repr__(self):
        return f"Kept({self.layout}, {self.dtype}, reach={self.reach}, on {self.device})"
