"""What every kernel family shares: the tuning constants, the dtypes kernels take, and the
checks on buffers and layouts (type, dtype, bounds, stride-0 writes).

Every threshold of the families lives here with the reason for its value (the
figures, where they matter, belong in docs/benchmarks.md).  A family imports the names
it uses (``from .common import NAME``) and reads its own binding, so a test may
patch e.g. ``strided.kernels.copy.COPY_PARALLEL_MIN`` to move one family's
threshold alone.

Importing it imports ``strided.threads`` first, which fixes numba's thread pool
and threading layer before numba starts.
"""


import numpy as np

from ..core import caches
from ..core.errors import DTypeError, ShapeError, StridedError
from ..core import threads as _threads  # noqa: F401  (must precede any numba import)
from ..layout.layout import Layout
from .half import BF16, F16, HALF_VIEW

# ---------------------------------------------------------------------------
# every family

# Below this many elements a kernel runs on the calling thread: waking the pool costs more
# than the loop.  This is the threshold of compute-bound work (exp, tanh, ...); the cheaper
# families scale it up below.  docs/benchmarks.md has the quiet-machine measurements.
PARALLEL_MIN = 1 << 15
# Memory-bound elementwise ops (add, compare, relu, where: a few instructions an element)
# go parallel only from this multiple of PARALLEL_MIN: their loop is so short that a
# second thread pays for its launch only on twice the elements exp needs.
LIGHT_OP_FACTOR = 2
# Reductions go parallel only from this multiple of PARALLEL_MIN: the serial reduction
# runs at memory speed while its source fits in one core's cache, and below it the launch
# and the partial results cost more.  Row sums (each thread sums whole rows) and column
# sums (the rows split one part a thread) break even at the same size.
REDUCE_FACTOR = 8
# Parallel work is cut into this many chunks per thread.  numba's tbb and workqueue layers
# hand them out one at a time, so a thread that the OS preempts (a busy machine) holds up
# one small chunk, not a fixed share; its OpenMP layer runs them as a static schedule.
CHUNKS_PER_THREAD = 4

# ---------------------------------------------------------------------------
# elementwise

# A unit-stride output run at least this long is cut where it reaches a 64-byte line
# (``walk.aligned_run``), so that its vector stores stay within a line: numpy's buffers are
# 16-byte aligned, and a store across two lines slows a run that is in cache
# (docs/benchmarks.md).  A shorter run (a row of ``a + bias``) loses more to the cut's partial
# vectors than it gains.
ALIGN_MIN_BYTES = 4096
# TILED needs both tiled dims at least this long to pay for itself.
TILE_MIN = 8
# Tile side: a tile row of 1 KiB, so that the scratch tile of the operand that walks
# columns (side x (side + TILE_PAD) elements, 278 KiB for f32) stays in one core's L2 while
# its rows are still long forward runs; a 4 KiB row's scratch (4 MiB) spills out of L2 and
# lost to it at every size measured (docs/benchmarks.md).
TILE_BYTES = 1024
# The longest side, which 1-byte dtypes reach (1024 of them to a 1 KiB row).
TILE_MAX = 1024
# The shortest side that halving (to give every thread tiles) goes down to: shorter rows
# are no longer the long forward runs that tiling is for.
TILE_FLOOR = 64
# Scratch tile rows are padded by this many elements, so that the rows of a tile do not
# share cache sets.
TILE_PAD = 16
# A heavy op's strided run gathers its inputs this many elements at a time into stack
# buffers, so that the op itself runs as a vector loop (``loops``).
STAGE = 256

# ---------------------------------------------------------------------------
# reduce

# Elements per leaf: long enough that the per-leaf cost (a horizontal sum, a push) is small.
BLOCK = 4096
# argmax/argmin along a row: elements per block of their one pass, each block's extreme
# from the max or min leaf; the first occurrence is then sought in one block, so a longer
# block costs more search and a shorter one more leaf calls (docs/benchmarks.md).
ARG_BLOCK = 256
# OUTER: rows added into a block accumulator before it is folded into the total, so that no
# sum runs long sequentially (the OUTER counterpart of the pairwise cascade).
FOLD = 64
# OUTER: columns per work item, so that the accumulators stay in L1/L2.  It also bounds the
# two accumulators a column reduction keeps on its stack (32 KiB for f32, 128 KiB for
# complex128), well within the megabytes a thread's stack has by default (the main
# thread's, numba's workers', Python's threads').
MAX_WIDTH = 4096
# Cascade depth: enough for 2^64 leaves.
STACK = 64
# INNER split (few outputs): each part reduces at least a leaf; a shorter one would cost a
# partial result and a combine for less than a leaf's work.
SPLIT_MIN = BLOCK
# OUTER split by rows: each part accumulates at least this many rows, for the partial
# vector it fills and the pass that combines it.
SPLIT_ROWS = 16

# ---------------------------------------------------------------------------
# copy and index

# Copies go parallel from as many elements as the memory-bound elementwise ops: a strided
# slice or a narrow copy gains from a second thread from about 2^16 elements (a transposed
# copy, tiled, only from 2048^2; see docs/benchmarks.md).
COPY_PARALLEL_MIN = LIGHT_OP_FACTOR * PARALLEL_MIN
# Multiple blocks at least this long are copied one memmove each; shorter ones go to the
# general kernel, whose inline loop beats a call per block.
BLOCK_MIN = 16
# Below this many elements a call to memmove costs more than the inline loop.
DENSE_MEMMOVE_MIN = 64
# glibc's memmove switches to non-temporal stores past a size threshold (a fraction of the
# L3), slower on these machines than cached stores: long runs go in pieces below it.
RUN_PIECE_BYTES = 1 << 20
# Tiled copy: a block is this many tiles a side, its tiles taken along src's fast dim
# first, so src is read in runs of BLOCK_TILES tiles (a page for f32) rather than one.
BLOCK_TILES = 16
# Shortest src dim worth a tile of its own (tile edges are 32 to 128 elements): a shorter
# one fills a sliver of every tile and leaves the loops all overhead.
SHORT_P = 32
# Copies batched into one kernel call: their srcs travel as this many arguments (s0..s7 of
# ``copy._many_s``), so numba compiles one kernel per dtype rather than one per count.
MANY = 8

# ---------------------------------------------------------------------------
# dtypes

# Every dtype strided stores, to its name: what the families' buffers may hold.  Native
# byte order only (a swapped one is another dtype, so it is refused too); a dict lookup is
# far cheaper than ``dtype.name``.
DTYPES = {np.dtype(n): n for n in ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
                                     "int64", "float32", "float64", "complex64", "complex128")}
DTYPES[F16], DTYPES[BF16] = "float16", "bfloat16"
# int16 and uint16 buffers are never computed on: their numba types are the bit views
# through which the kernels read the half types (HALF_VIEW), so a kernel would take an
# int16 for bf16 bits.  Copies move them by their bits, and the op layer widens them to
# these dtypes before an elementwise op, a reduction or a product (dtype.WIDENED).
WIDENED = {np.dtype(np.int16): np.dtype(np.int32), np.dtype(np.uint16): np.dtype(np.uint32)}
# The dtype name a buffer computes in: the half types in float32 (kernels see their bits
# through HALF_VIEW), the others in themselves.
COMPUTE = {d: ("float32" if d in HALF_VIEW else n) for d, n in DTYPES.items()}
# What the computing families (elementwise, reduce) take.
COMPUTABLE = frozenset(d for d in DTYPES if d not in WIDENED)
# The dtypes numba computes in as they are (an accumulator, a reduction's output).
NATIVE = frozenset(d for d in COMPUTABLE if d not in HALF_VIEW)
# Unsigned integers of each itemsize: a same-dtype copy moves a buffer as these bits
# (complex128, 16 bytes, as itself: a load and a store of two doubles keep every bit).
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


# ---------------------------------------------------------------------------
# checks


def check_buffer(op: str, what: str, buf, *, dtypes, writable: bool = False) -> None:
    """Raise unless ``buf`` is a 1-D contiguous numpy array of one of ``dtypes`` (and
    writable when asked), naming the op and the operand."""
    if not isinstance(buf, np.ndarray) or buf.ndim != 1 or not buf.flags.c_contiguous:
        got = (f"an array of shape {buf.shape} and strides {buf.strides}" if isinstance(buf, np.ndarray)
               else type(buf).__name__)
        raise StridedError(f"{op}: expected {what} to be a 1-D contiguous numpy array, got {got}")
    if buf.dtype not in dtypes:
        raise DTypeError(
            f"{op}: {what} has dtype {buf.dtype}, which the kernels do not take here "
            f"(expected one of {', '.join(sorted(DTYPES[d] for d in dtypes))})"
        )
    if writable and not buf.flags.writeable:
        raise StridedError(f"{op}: {what} is read-only")


def check_layout(op: str, what: str, layout) -> Layout:
    """``layout``, once it is a Layout."""
    if not isinstance(layout, Layout):
        raise StridedError(f"{op}: expected {what} to be a Layout, got {type(layout).__name__}")
    return layout


def check_in_buffer(op: str, what: str, buf, lay) -> None:
    """Raise unless every element of ``lay`` lies in ``buf``, naming the op and the operand.
    The span is cached: the repeat calls of a model step cost a dict lookup."""
    lo, hi = reach(lay)
    if lo < 0 or hi > len(buf):
        try:
            lay.validate(len(buf))
        except StridedError as e:
            raise type(e)(f"{op}: {what}: {e}") from None


def check_same_shape(op: str, dst_layout, src_layout) -> None:
    """A copy's two views have one shape (the caller broadcasts a source first)."""
    if dst_layout.shape != src_layout.shape:
        raise ShapeError(f"{op}: dst shape {dst_layout.shape} and src shape {src_layout.shape} must be equal")


def check_operand_shape(op: str, what: str, layout, out_layout) -> None:
    """An elementwise operand has the output's shape (the op layer broadcasts it first)."""
    if layout.shape != out_layout.shape:
        raise ShapeError(f"{op}: every operand must have the output's shape {out_layout.shape} "
                         f"(broadcast them first), got {what} of shape {layout.shape}")


def check_conversion(op: str, dst_dtype, src_dtype) -> None:
    """A conversion that keeps what it can: complex to real would drop the imaginary part."""
    if src_dtype.kind == "c" and dst_dtype.kind != "c" and dst_dtype != np.bool_:
        raise DTypeError(f"{op}: cannot convert {DTYPES.get(src_dtype, src_dtype)} to "
                         f"{DTYPES.get(dst_dtype, dst_dtype)}: it would drop the imaginary part (take real() first)")


@caches.lru("kernels.reach", "layout", 4096)
def reach(lay) -> tuple[int, int]:
    """(lowest offset, highest offset + 1) that ``lay`` touches; (0, 0) when it has no elements."""
    return lay.span() if lay.numel else (0, 0)


@caches.lru("kernels.writes_twice", "layout", 1024)
def writes_twice(lay) -> bool:
    """A stride-0 dim of size > 1: writing through ``lay`` stores several elements at one address."""
    return any(s == 0 and n > 1 for n, s in zip(lay.shape, lay.stride))


def own_name(tag: str, *fns):
    """Rename functions a kernel factory made so that each op's carry the op's ``tag``.

    numba names compiled code by the function's qualified name plus a per-process
    counter, so the kernels one factory makes for several ops would share names, and a
    kernel loaded from the disk cache could then be linked in place of another op's
    freshly compiled one (numba issue #10486: argmax was seen running argmin's code).
    Returns the functions, renamed in place."""
    for fn in fns:
        fn.__qualname__ = f"{fn.__qualname__}_{tag}"
        fn.__name__ = f"{fn.__name__}_{tag}"
    return fns
