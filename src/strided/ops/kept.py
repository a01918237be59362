"""The kept decision: what an op's first call on some layouts decided, for the next call on
equal ones (docs/architecture.md, "One dispatch per call").

Every family that keeps decisions (elementwise, reduce, copies, join, matmul, sort, scan)
keeps a ``Kept``: the backend's prepared kernel call, what each input buffer must be for
that call (its numpy dtype, the length its layout reaches), and the result's allocation,
layout and dtype.  A kept call checks its buffers against ``reach`` and ``types``, takes
``result()`` and runs ``run``, written out in the family's function: at 16^2 each Python
call on the way is a tenth of the op.  The family's cache key holds everything else the
decision depends on.
"""

from __future__ import annotations

import numpy as np

from ..backend import ALLOCATORS
from ..core.storage import Storage, alloc, unpooled
from ..tensor import Tensor

_new = object.__new__
_empty = np.empty


class Kept:
    """One op's decision for one set of operand layouts, dtypes and devices.

    ``run(*buffers)``: the prepared kernel call (the backend checked its layouts once),
    called with the buffers in the family's order once each input buffer ``i`` has the
    numpy dtype ``types[i]`` and is at least ``reach[i]`` long.  ``result(op)``: a new
    tensor of ``numel`` elements of ``np_dtype`` on ``device``, seen through ``layout`` as
    ``dtype``, recording ``op`` (None: untracked inputs).  ``extra``: what the family needs
    beyond that (a mean's divisor, a reduction's kept-dim layout, a join's sizes)."""

    __slots__ = ("run", "reach", "types", "numel", "np_dtype", "layout", "dtype", "device", "extra", "alloc",
                 "plain")

    def __init__(self, run, reach: tuple, types: tuple, layout, dtype, device: str, np_dtype=None, extra=None):
        self.run, self.reach, self.types = run, tuple(reach), tuple(types)
        self.numel, self.layout, self.dtype, self.device = layout.numel, layout, dtype, device
        self.np_dtype = dtype.np if np_dtype is None else np_dtype
        self.extra = extra
        self.alloc = ALLOCATORS[device]
        # the CPU's plain arrays (every small result) are made in ``result`` itself
        self.plain = self.alloc is alloc and unpooled(self.numel, self.np_dtype)

    def result(self, op=None):
        """The result tensor of a kept call, its buffer new and uninitialised."""
        if self.plain:
            s = _new(Storage)
            s.data = _empty(self.numel, self.np_dtype)
        else:
            s = self.alloc(self.numel, self.np_dtype)
        out = _new(Tensor)  # ``tensor.fresh``, spelled out: a call fewer
        out._storage = s
        out.layout = self.layout
        out.dtype = self.dtype
        out._is_var = False
        out._op = op
        return out

    def __repr__(self):
        return f"Kept({self.layout}, {self.dtype}, reach={self.reach}, on {self.device})"
