"""What the kernel families share at run time: the odometer that carries k operands'
positions through merged dims, how work is cut into chunks, and how a kernel is launched.

The odometer works on ``shape`` (merged dims, outermost first), ``st`` (one row of
strides per operand: ``st[k, d]`` is operand k's stride along dim d), ``idx`` (the
coordinates, scratch the kernel owns) and a tuple of the k operands' positions, which
``seek`` and ``carry`` take and return so that the positions stay in registers.  It walks
the leading ``nd`` dims only: a kernel that runs its innermost dim inline (rows, runs,
blocks) passes ``nd = len(shape) - 1`` and calls ``carry`` once a row.

The launcher: a family's planner counts its work units and elements; ``nchunks`` says
how many chunks that work is cut into (1: run on the calling thread), and ``launch``
runs the serial driver or enters the parallel one.  Each kernel is compiled twice, as a
serial driver over ``[0, units)`` and a ``prange`` driver over ``chunk``s of it, rather
than once with ``parallel=True``: entering a parallel region costs far more than a small
kernel's whole run, even for one chunk.
"""

from __future__ import annotations

from .common import ALIGN_MIN_BYTES, CHUNKS_PER_THREAD
from ..core.threads import get_num_threads, parallel_guard, static_chunks

import numba  # numba comes after strided.threads
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable
from numba.np.arrayobj import make_array, populate_array

__all__ = ["seek", "carry", "index_scratch", "stack_scratch", "pack", "unpack", "aligned_run", "chunk", "nchunks",
           "launch", "in_parallel", "direct"]

_jitable = register_jitable(error_model="numpy")


def seek(pos, shape, st, nd, idx, base):  # pragma: no cover - the overload runs in numba
    """Point the odometer at flat position ``pos`` of dims ``[0, nd)`` (row-major: dim
    ``nd - 1`` fastest).  ``base`` is a tuple of the k operands' positions at the first
    point; returns their positions at ``pos``, and ``idx`` gets its coordinates."""
    raise NotImplementedError


def carry(shape, st, nd, idx, base):  # pragma: no cover - the overload runs in numba
    """Advance the odometer over dims ``[0, nd)`` by one point.  ``base`` is the tuple of
    the k operands' positions; returns ``(d, positions)``: the dim that advanced, or -1
    when the walk has passed its last point (coordinates and positions are then back at
    the first point)."""
    raise NotImplementedError


# The positions travel as a tuple, so that they stay in registers (an array of them costs
# a load and a store per step, and blocks optimisation of the loop around): numba cannot
# loop over a tuple's items, so each count k of operands gets its code written out.
_SEEK = """
def impl(pos, shape, st, nd, idx, base):
    {unpack}
    r = pos
    for d in range(nd - 1, -1, -1):
        n = shape[d]
        q = r % n
        r //= n
        idx[d] = q
        {add_q}
    return ({names},)
"""
_CARRY = """
def impl(shape, st, nd, idx, base):
    {unpack}
    for d in range(nd - 1, -1, -1):
        if idx[d] + 1 < shape[d]:
            idx[d] += 1
            return d, ({step},)
        i = idx[d]
        {back}
        idx[d] = 0
    return -1, ({names},)
"""


def _written_out(template: str, k: int):
    p = [f"p{i}" for i in range(k)]
    code = template.format(
        unpack=f"{', '.join(p)}, = base",
        names=", ".join(p),
        add_q="; ".join(f"{v} += q * st[{i}, d]" for i, v in enumerate(p)),
        step=", ".join(f"{v} + st[{i}, d]" for i, v in enumerate(p)),
        back="; ".join(f"{v} -= i * st[{i}, d]" for i, v in enumerate(p)),
    )
    ns: dict = {}
    exec(code, ns)  # code built above from fixed templates
    return ns["impl"]


@overload(seek, jit_options={"error_model": "numpy"})
def _seek(pos, shape, st, nd, idx, base):
    return _written_out(_SEEK, base.count)


@overload(carry, jit_options={"error_model": "numpy"})
def _carry(shape, st, nd, idx, base):
    return _written_out(_CARRY, base.count)


def _on_stack(context, builder, aryty, n, zero: bool):
    """A 1-D array of ``n`` elements in the current frame: no allocation, and no owner, so
    LLVM drops the reference counting of every view of it."""
    lltype = context.get_data_type(aryty.dtype)
    size = ir.Constant(ir.IntType(64), context.get_abi_sizeof(lltype))
    data = builder.alloca(lltype, size=n)
    if zero:
        cgutils.memset(builder, data, builder.mul(n, size), 0)
    ary = make_array(aryty)(context, builder)
    populate_array(ary, data=data, shape=[n], strides=[size], itemsize=size, meminfo=None)
    return ary._getvalue()


@intrinsic
def index_scratch(typingctx, n):
    """``n`` int64 zeros for the odometer's coordinates (``idx``) on the calling kernel's
    stack.  ``np.zeros`` would cost a small op's kernel a third of its run: the allocation,
    and the reference counting of every view taken in the kernel, which a buffer with no
    owner lets LLVM drop.  Call it once per kernel call, outside any loop (each call grows
    the frame), and never in a helper that returns the array: the frame ends with it."""
    aryty = types.Array(types.int64, 1, "C")

    def codegen(context, builder, sig, args):
        return _on_stack(context, builder, aryty, context.cast(builder, args[0], sig.args[0], types.intp), True)

    return aryty(n), codegen


@intrinsic
def stack_scratch(typingctx, n, dtype):
    """``n`` uninitialised elements of ``dtype`` (a numba dtype or a NumPy scalar type) on
    the calling kernel's stack: a few values a kernel hands to C by address, or a
    per-call accumulator whose length the kernel bounds (a reduction's row of partial sums,
    at most ``MAX_WIDTH``) that the heap would make a small reduction pay for on every
    call; the rules of ``index_scratch`` apply."""
    el = dtype.dtype if isinstance(dtype, types.DType) else getattr(dtype, "instance_type", None)
    if not isinstance(el, (types.Boolean, types.Integer, types.Float, types.Complex)):
        return None
    aryty = types.Array(el, 1, "C")

    def codegen(context, builder, sig, args):
        return _on_stack(context, builder, aryty, context.cast(builder, args[0], sig.args[0], types.intp), False)

    return aryty(n, dtype), codegen


def pack(shape, strides, offsets, last: int) -> np.ndarray:
    """The odometer's integers as one read-only int64 array, ``unpack``'s argument: row 0 is
    ``shape`` then ``last``, row ``1 + k`` operand k's strides then its offset.  A kernel's
    compiled entry unboxes each array it is passed, at about a tenth of a small op's call:
    one array instead of three and an integer."""
    a = np.array([[*shape, last], *[[*row, o] for row, o in zip(strides, offsets)]], np.int64)
    a.flags.writeable = False
    return a


@_jitable
def unpack(plan):
    """``(shape, st, offs, last)`` of a ``pack``ed array, as views of it (a reshape would
    cost a call into numba's helpers on every kernel call)."""
    nd = plan.shape[1] - 1
    return plan[0, :nd], plan[1:, :nd], plan[1:, nd], plan[0, nd]


@_jitable
def aligned_run(out, po, m):
    """How much of a unit-stride run of ``m`` outputs from ``out[po]`` to take now: all of
    it, unless it is at least ``ALIGN_MIN_BYTES`` long (``common`` says why) and ``out[po]``
    is not on a 64-byte line, then up to the first element that is, so that the rest's
    vector stores each stay within one line."""
    if m * out.itemsize < ALIGN_MIN_BYTES:
        return m
    h = ((64 - ((out.ctypes.data + po * out.itemsize) & 63)) & 63) // out.itemsize
    return h if 0 < h < m else m


@_jitable
def chunk(c, count, units):
    """Work units ``[lo, hi)`` of chunk ``c`` of ``count`` (near-equal, in order)."""
    return c * units // count, (c + 1) * units // count


def nchunks(units: int, numel: int, parallel_min: int) -> int:
    """How many chunks to cut ``units`` of work over ``numel`` elements into: 1 (run on the
    calling thread) below ``parallel_min`` elements or on one thread, else a few per thread
    (handed out one at a time where numba's layer does so: a thread the OS preempts holds
    up one small chunk)."""
    if numel < parallel_min:
        return 1
    threads = get_num_threads()
    if threads < 2:
        return 1
    return max(1, min(units, threads * CHUNKS_PER_THREAD))


def launch(kernel, args: tuple, parallel: bool) -> None:
    """Run ``kernel(*args)``, a parallel driver as ``in_parallel`` enters one (through its
    dispatcher: arguments that change from call to call are typed once, by it)."""
    if parallel and not static_chunks():
        in_parallel(kernel)(*args)
    else:
        kernel(*args)


def direct(kernel, args: tuple):
    """``kernel``'s compiled entry for arguments typed as ``args`` are, or ``kernel`` itself
    where numba holds no entry for them (not compiled yet, or a numba without entries).

    A dispatcher types every argument on every call, about a third of a small kernel's
    call.  A kept decision knows its argument types when it is bound, so its ``run`` calls
    the entry instead.  That is exact only where every later call passes arguments of the
    same types, which a kept run's caller guarantees: each buffer has the bound numpy dtype
    (checked per call) and is a 1-D C-contiguous array (every Storage's is), and the
    integer arrays and ints are the bound ones.  Two flags of a buffer are not checked:
    read-only (an input is only read, and the output is always a fresh buffer) and
    unaligned (the entry's loads assume element alignment, which x86-64 and arm64 do not
    enforce on element or unaligned-vector loads; a test reads such buffers through kept
    runs).  Pass ``np.empty(0, dtype)`` for each buffer."""
    try:
        return kernel.overloads[tuple(numba.typeof(a) for a in args)].entry_point
    except (KeyError, AttributeError):
        return kernel


def in_parallel(run, args: tuple | None = None):
    """What enters ``run``, a parallel driver (or a closure calling one).  Where numba's layer
    is OpenMP's, known once the process's first parallel region has run, a region needs
    neither the lock nor a chunk size, so a driver with ``args`` (arguments typed as its
    calls' will be, as ``direct`` takes them) is entered through its compiled entry, as a
    serial kernel is: the wrapper and the dispatcher's typing cost more than a
    small region's work.  Otherwise ``run`` is wrapped to run inside ``parallel_guard``,
    numba handing out one chunk at a time where its layer can, and the wrapper says
    ``settled = False``: a caller keeping it prepares again once it has run."""
    if args is not None and static_chunks():
        return direct(run, args)

    def par(*bufs):
        with parallel_guard():
            if static_chunks():  # asking OpenMP's static loop for a chunk size changes nothing
                run(*bufs)
                return
            old = numba.set_parallel_chunksize(1)
            try:
                run(*bufs)
            finally:
                numba.set_parallel_chunksize(old)
    par.settled = False
    return par
