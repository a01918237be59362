"""``strided.fuse``: many ops, one pass, one kernel, over any layout.

``fuse(fn)`` (a decorator, or ``fuse(fn)(*tensors)``) traces ``fn`` once per call
signature into a graph of op-table ops (``fusion.trace``) and lowers it for the layouts of
the call (``fusion.lower``): every maximal chain of elementwise ops, casts, ``where`` and
the views between them becomes one generated kernel that reads each leaf through its own
layout and writes its result once, in the inputs' memory order; reductions and products
end a group.  A function whose reductions all run along the last dim (softmax, layer
norm) is instead one kernel that walks the rows once (``fusion.rows``).  Results are
eager's bit for bit (``fusion.lower``'s docstring says why).

Signatures.  A call is looked up by its tensors' layouts and dtypes and its other
arguments' values: a hit replays the lowered program (a check of each buffer, the
allocations, the kernels).  A new shape or dtype traces again; a new layout of a known
shape lowers again (the kernels, whose source depends on neither, are reused); a new
scalar argument is a new constant, so it traces and compiles again (pass a 0-d tensor for
a value that changes between calls).  Tensors met while tracing that are not arguments
(globals, closures) are read at every call, as they are then.

What cannot be fused (Python control flow on tensor values, writes, ops outside the table,
data-dependent shapes, an op the tensors' backend does not compute) runs ``fn`` eagerly
with a warning naming it, once per function, or raises that ``Unfusable`` (a StridedError)
with ``strict=True``.  Bad input gets the StridedError the eager op gives (tensors on two
devices included: such a call runs eagerly, where the op that mixes them refuses it).

Devices.  A call whose tensors are all on one CUDA device is traced and lowered as on
the CPU (the same graph, groups and expressions); each group runs as one generated
numba-cuda kernel (``strided.cuda.elementwise.expression_kernel``), the eager steps as
the op layer runs them there.

Autograd.  A call whose tensors include tracked ones (Vars, recorded results) records one
node per output; its backward (``fusion.grad``) applies the op table's gradient rules to
the graph in the order eager's backward visits it, and is itself fused.
"""

from ..ops import registry
from . import grad
from .fused import Fused, fuse
from .trace import Unfusable

__all__ = ["fuse", "Fused", "Unfusable"]

registry.declare("fused", "fused", "same", grad=grad.fused_back)
