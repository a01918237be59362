"""The matmul family: batched C = A @ B over strided operands, BLAS gemm for floats and a
loop kernel for integers.

One checked entry point, ``matmul(a_buf, a_layout, b_buf, b_layout, c_buf, *, chunk=None)``,
and one pure planner, ``plan(a_layout, b_layout, *, blas=True, threads=1,
chunk=DEFAULT_CHUNK, blas_threading="pinned") -> MatmulPlan``.  Buffers are flat 1-D NumPy
arrays of one dtype; a layout is the integer triple ``(shape, stride, offset)`` of
rank >= 2 (strides in elements, any sign): the last two dims are the matrix
(rows, cols), the dims before them are batch dims, which broadcast as NumPy's do
(aligned on the right, size 1 against any size).  The caller turns a 1-D operand
into a 1-row or 1-column matrix first (``strided.linalg`` keeps NumPy's shape and
dtype rules).  The result is written dense and row-major, shape ``batch + (m, n)``,
from element 0 of ``c_buf``.  ``plan`` holds integers and tuples of integers only
(no arrays, no buffers), so another backend can run the same plan.

========  ==============================  ==============================================
path      when                            loop
========  ==============================  ==============================================
EMPTY     the result has no elements      nothing
ZERO      k == 0                          the result is filled with 0 (an empty sum)
BLAS      f32, f64                        an odometer over the batch (each operand's
                                          own stride per batch dim, 0 where broadcast),
                                          one gemm per matrix on the operands' own
                                          buffers; ``split`` > 1: ranges of batches,
                                          or slabs of each matrix, under ``prange``,
                                          each gemm on one BLAS thread
INT       i64, u32, u8, bool              one output row per step over every batch,
                                          i-k-j into an int64 accumulator (wrapping
                                          like NumPy; bool: the or of ands);
                                          ``split`` > 1: the rows under ``prange``
========  ==============================  ==============================================

Threads.  Every parallel gemm runs on strided's own pool (numba's), never on
OpenBLAS's: the BLAS pool is pinned to one thread for the call (``blas_threads``), so
each gemm runs on the thread that calls it, and a product of at least
``SPLIT_MIN_MACS`` multiply-adds is cut into ``split`` tasks under ``prange``.  Many
batches: ranges of whole batches, ``CHUNKS_PER_THREAD`` per thread, handed out
dynamically.  Fewer batches than that: each matrix is also cut into ``slabs`` ranges of
its longer side (rows of C, or columns), enough that the tasks divide evenly between the
threads, so a lone 1024^2 product is two half products side by side.  A slab holds
what BLAS gives for that slab alone: OpenBLAS's last bits depend on how a product is
cut (NumPy's change with its BLAS thread count), so a split product is NumPy's
product on one BLAS thread slab by slab, and an unsplit one is that bit for bit.  Two
pools that each spin after their work stall one another on a small machine
(docs/benchmarks.md, "One pool"); with one, strided's threads are the only ones it
wakes.  Below ``BLAS_INLINE_MACS`` OpenBLAS runs a gemm on the calling thread by itself,
so small products skip the pinning (two calls into OpenBLAS, about 1 us each).

BLAS is NumPy's own OpenBLAS when NumPy ships one (its wheels' ILP64
scipy-openblas64 build), so a product of matrices is what ``numpy.matmul``
computes on one BLAS thread, cut as above (NumPy hands a matrix-vector product to
gemv, which sums in another order); else scipy's ``cython_blas`` (LP64).  With
``STRIDED_BLAS=mkl`` in the environment (and the ``mkl`` wheel installed: ``pip install
"strided[mkl]"``) it is Intel's MKL, ILP64, and its results differ from NumPy's in the
last bits.  Where numba's pool runs on GNU OpenMP (libgomp, numba's omp layer), MKL goes
on its GNU threading layer, whose threads are libgomp's: the very threads of strided's
pool, so a lone product is MKL's own threaded gemm (as PyTorch runs it) and wakes no
other pool, and batches are still split over the pool, each gemm single-threaded inside
its task (OpenMP runs a region nested in another on one thread).  On any other runtime MKL
goes on its sequential layer: it starts no threads, and products are split as above with
nothing to pin.  ``BLAS_LIBRARY`` says which library ("numpy", "scipy" or "mkl"),
``BLAS_THREADING`` how it threads ("pinned", "sequential" or "shared").
Its C functions are called from numba, so that the batch loop, the optional
packing and the gemm calls all run in one compiled function without the GIL.  The
function addresses are registered as named symbols (``llvmlite.binding.add_symbol``)
rather than embedded as ctypes addresses, which keeps the kernels cacheable; the BLAS
integer width comes in as the dtype of an argument, so each library gets its own
compiled kernel.

BLAS is column-major and takes one leading dimension per operand.  A row-major
(rows, cols) matrix whose row stride is ``ld`` is the column-major (cols, rows)
matrix with that ``ld``, so the row-major product C = A @ B is computed as the
column-major C^T = B^T @ A^T: B goes first, A second, M and N swap.

Each matrix operand is read in one of four modes, decided once per call by
``blas_mode`` (the strides of the last two dims are the same in every batch):

* ``ROW``: column stride 1, row stride >= cols  -> read in place, ld = row stride
* ``COL``: row stride 1, column stride >= rows  -> read in place as transposed
* ``PACK_ROW`` / ``PACK_COL``: anything else (negative, zero or overlapping
  strides, no unit stride) -> gathered into a scratch tile first, row- or
  column-major, whichever reads the source along its smaller stride.

A packed tile is reused while consecutive batches point at the same source
matrix (a stride-0 batch dim), so a broadcast operand is packed once per range
of batches.  m, n and k are cut into chunks of at most ``chunk`` so that every
BLAS integer fits in 32 bits; tests pass a small chunk to exercise that loop.
Operands handed over in place or packed are counted in ``stats``.
"""

from __future__ import annotations

from . import common  # noqa: F401  (imports strided.threads before numba)

import contextlib
import math
import operator
import threading
from dataclasses import dataclass

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..core import caches, threads
from ..core.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError, TooHardError
from .walk import carry, chunk as chunk_of, direct, index_scratch, launch, seek, stack_scratch

__all__ = ["matmul", "plan", "MatmulPlan", "stats", "EMPTY", "ZERO", "BLAS", "INT",
           "ROW", "COL", "PACK_ROW", "PACK_COL", "DEFAULT_CHUNK", "INT_MAX"]

EMPTY, ZERO, BLAS, INT = 0, 1, 2, 3
ROW, COL, PACK_ROW, PACK_COL = 0, 1, 2, 3
INT_MAX = 2**31 - 1  # the LP64 bound, kept for either library: scipy's BLAS takes C int
DEFAULT_CHUNK = 1 << 30

# Multiply-adds (all batches) below which the integer kernel stays on one thread.
INT_PARALLEL_MIN = 1 << 18
# A float product is split across threads from this many multiply-adds (all batches): below
# it, waking the pool costs about what the second thread saves.
SPLIT_MIN_MACS = 1 << 21
# OpenBLAS runs a gemm of at most this many multiply-adds on the calling thread whatever
# its pool's size (its interface's threshold): such a call needs no pinning.
BLAS_INLINE_MACS = 1 << 18
# A slab is at least this many rows (or columns) long: shorter ones repack the other
# operand once per slab for too little work.
SLAB_MIN = 64
CHUNKS_PER_THREAD = 4

# Operands handed to BLAS in place ("direct") or gathered into a scratch tile first ("packed").
stats = {"direct": 0, "packed": 0}

_FLOATS = {np.dtype(np.float32), np.dtype(np.float64)}
_INTS = {np.dtype(np.int64), np.dtype(np.uint32), np.dtype(np.uint8), np.dtype(np.bool_)}
_BOOL = np.dtype(np.bool_)
_INT64_MAX = 2**63 - 1


# ---------------------------------------------------------------------------
# BLAS symbols and its thread pool

_loaded = False
_set_blas_threads = None
# How the loaded BLAS threads a product: "pinned" (OpenBLAS: a pool of its own, pinned to
# one thread while strided's threads split the work), "sequential" (MKL's sequential layer:
# it starts no threads, strided splits) or "shared" (MKL's GNU OpenMP layer on the runtime
# of numba's pool: a lone product is MKL's on strided's own threads).
BLAS_THREADING = "pinned"
# The integer type of the loaded BLAS's interface: int64 (ILP64) or int32 (LP64).
_BLAS_INT = np.zeros(6, np.int32)
BLAS_LIBRARY = ""  # "numpy", "scipy" or "mkl": whose gemm the calls go to
BLAS_ENV = "STRIDED_BLAS"  # "mkl" chooses MKL; unset, empty or "openblas": OpenBLAS
_THREADINGS = ("pinned", "sequential", "shared", "unsplit")
_MKL_SEQUENTIAL, _MKL_GNU = 1, 3  # MKL_THREADING_SEQUENTIAL and MKL_THREADING_GNU in mkl_service.h


def load_blas() -> None:
    """Register sgemm/dgemm under our symbol names (idempotent).

    MKL when ``STRIDED_BLAS=mkl``; else NumPy's own OpenBLAS (the scipy-openblas64 build
    its wheels ship, ILP64) when it is loaded, else scipy's ``cython_blas`` (LP64).  Must
    run before a kernel that calls them is compiled or loaded from cache.
    """
    global _loaded, _set_blas_threads, _BLAS_INT, BLAS_LIBRARY, BLAS_THREADING
    if _loaded:
        return
    import ctypes
    import os

    import llvmlite.binding as ll

    choice = os.environ.get(BLAS_ENV, "").strip().lower()
    if choice not in ("", "openblas", "mkl"):
        raise StridedError(f"{BLAS_ENV}: expected 'mkl' or 'openblas', got {choice!r}")
    if choice == "mkl":
        lib = _mkl()
        for name in ("sgemm", "dgemm"):
            ll.add_symbol("strided_" + name, ctypes.cast(getattr(lib, name + "_64"), ctypes.c_void_p).value)
        lib.MKL_Set_Threading_Layer.argtypes, lib.MKL_Set_Threading_Layer.restype = [ctypes.c_int], ctypes.c_int
        # The layer can be chosen once per process, before MKL's first computation.  On the
        # GNU OpenMP runtime that numba's pool runs on, MKL's threads are that pool's (one
        # pool, as PyTorch runs MKL); on any other, the sequential layer; if something else
        # chose a layer first, MKL's pool is pinned as OpenBLAS's is.
        want = _MKL_GNU if _numba_on_gnu_openmp() else _MKL_SEQUENTIAL
        got = lib.MKL_Set_Threading_Layer(want)
        BLAS_THREADING = ("shared" if want == _MKL_GNU else "sequential") if got == want else "pinned"
        setter = lib.MKL_Set_Num_Threads
        setter.argtypes, setter.restype = [ctypes.c_int], None
        _set_blas_threads = None if BLAS_THREADING == "sequential" else setter
        _BLAS_INT, BLAS_LIBRARY = np.zeros(6, np.int64), "mkl"
    elif (lib := _numpy_openblas()) is not None:
        for name in ("sgemm", "dgemm"):
            fn = getattr(lib, f"scipy_{name}_64_")
            ll.add_symbol("strided_" + name, ctypes.cast(fn, ctypes.c_void_p).value)
        setter = lib.scipy_openblas_set_num_threads64_
        setter.argtypes, setter.restype = [ctypes.c_int], None
        _set_blas_threads, _BLAS_INT, BLAS_LIBRARY = setter, np.zeros(6, np.int64), "numpy"
    else:
        from numba.extending import get_cython_function_address

        for name in ("sgemm", "dgemm"):
            ll.add_symbol("strided_" + name, get_cython_function_address("scipy.linalg.cython_blas", name))
        _set_blas_threads, BLAS_LIBRARY = _scipy_thread_setter(), "scipy"
    # strided.threads sized the BLAS pools loaded when it started; scipy's may just have
    # been loaded, so give the one in use strided's thread count now.
    if _set_blas_threads is not None:
        _set_blas_threads(threads.get_num_threads())
    _loaded = True


def _numba_on_gnu_openmp() -> bool:
    """Whether numba's pool runs on GNU OpenMP (libgomp), whose threads MKL's GNU layer reuses."""
    try:
        import numba

        numba.get_num_threads()  # starts numba's threading layer if nothing has yet
        if numba.threading_layer() != "omp":
            return False
        from numba.np.ufunc import omppool

        return getattr(omppool, "openmp_vendor", "") == "GNU"
    except (ImportError, ValueError):
        return False


def _mkl():
    """MKL's single dynamic library (``libmkl_rt``) from the ``mkl`` wheel, as a ctypes library."""
    import ctypes
    import glob
    import os
    import sys
    from importlib import metadata

    try:
        files = [str(f.locate()) for f in metadata.files("mkl") or () if f.name.startswith("libmkl_rt.so")]
    except metadata.PackageNotFoundError:
        files = []
    files += sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*")))
    for path in files:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    raise StridedError(f"{BLAS_ENV}=mkl: expected MKL's libmkl_rt from the mkl wheel "
                       "(pip install 'strided[mkl]'), found none")


def _numpy_openblas():
    """NumPy's OpenBLAS (a ctypes library) when it exports the ILP64 gemms, else None."""
    try:
        from threadpoolctl import ThreadpoolController

        for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers:
            dyn = lib.dynlib
            if all(hasattr(dyn, n) for n in ("scipy_sgemm_64_", "scipy_dgemm_64_",
                                              "scipy_openblas_set_num_threads64_")):
                return dyn
    except Exception:
        pass
    return None


def _scipy_thread_setter():
    """``openblas_set_num_threads`` of the OpenBLAS that scipy's cython_blas runs on.

    None when it cannot be found (threadpoolctl missing, another BLAS): then batches
    are never split across threads, since the pool could not be pinned to one."""
    try:
        import ctypes
        import os

        from threadpoolctl import ThreadpoolController

        for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers:
            if "scipy" not in os.path.dirname(lib.filepath):
                continue  # numpy's own OpenBLAS, not the one cython_blas calls
            for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
                fn = getattr(lib.dynlib, name, None)
                if fn is not None:
                    fn.argtypes, fn.restype = [ctypes.c_int], None
                    return fn
    except Exception:
        pass
    return None


load_blas()

_vp = types.voidptr
_sgemm = types.ExternalFunction("strided_sgemm", types.void(*([_vp] * 13)))
_dgemm = types.ExternalFunction("strided_dgemm", types.void(*([_vp] * 13)))


@intrinsic
def _ptr(typingctx, arr, off):
    """Address of ``arr[off]`` as a void pointer (no bounds check: callers stay in bounds)."""

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.bitcast(cgutils.gep(builder, ary.data, args[1]), cgutils.voidptr_t)

    return _vp(arr, types.intp), codegen


# ---------------------------------------------------------------------------
# the plan: integers only


@dataclass(frozen=True)
class MatmulPlan:
    """What ``plan`` decided.  Every field is an int or a tuple of ints.

    The walk (``walk_shape`` and each operand's stride per walked dim) is the
    batch with its size-1 dims dropped, at least one dim (``(1,)`` with strides 0
    when there is no batch); ``c``'s walk strides are those of the dense result.
    ``a_reach``/``b_reach`` are the (lowest, highest + 1) buffer offsets an
    operand's own layout reaches ((0, 0) when it has no elements), ``c_size`` the
    elements written.  ``split`` is the number of tasks run under ``prange`` (ranges
    of batches, or slabs of one batch, for BLAS; rows for INT; 1: the calling
    thread); ``slabs`` is how many ranges each matrix is cut into (1: whole), along
    its rows when ``slab_rows`` else its columns; ``blas_threads`` the BLAS pool
    during the call (0: as strided set it, 1: pinned to the calling thread).
    """

    path: int
    m: int
    n: int
    k: int
    batch: tuple
    a_mode: int
    a_ld: int
    a_sr: int
    a_sc: int
    b_mode: int
    b_ld: int
    b_sr: int
    b_sc: int
    walk_shape: tuple
    a_walk: tuple
    b_walk: tuple
    c_walk: tuple
    a_offset: int
    b_offset: int
    a_reach: tuple
    b_reach: tuple
    c_size: int
    chunk: int
    split: int
    slabs: int
    slab_rows: int
    blas_threads: int

    @property
    def nbatch(self) -> int:
        return math.prod(self.batch)


def blas_mode(rows: int, cols: int, sr: int, sc: int) -> tuple[int, int]:
    """(mode, ld) for a (rows, cols) matrix with strides (sr, sc).

    A size-1 dim's stride never addresses anything, so it may take whatever
    value BLAS wants.  BLAS requires ld >= max(1, leading extent) (OpenBLAS
    rejects anything less), which also rules out overlapping rows.
    """
    if (cols <= 1 or sc == 1) and (rows <= 1 or sr >= max(1, cols)):
        ld = sr if rows > 1 else max(1, cols)
        if ld <= INT_MAX:
            return ROW, ld
    if (rows <= 1 or sr == 1) and (cols <= 1 or sc >= max(1, rows)):
        ld = sc if cols > 1 else max(1, rows)
        if ld <= INT_MAX:
            return COL, ld
    return (PACK_ROW if abs(sc) <= abs(sr) else PACK_COL), 0


def _ints(what: str, layout) -> tuple:
    """(shape, stride, offset) as plain ints, or a ShapeError naming matmul and the value."""
    try:
        shape, stride, offset = layout
        shape = tuple(operator.index(v) for v in shape)
        stride = tuple(operator.index(v) for v in stride)
        offset = operator.index(offset)
    except (TypeError, ValueError):
        raise ShapeError(f"matmul: expected {what} as (shape, stride, offset) of ints, got {layout!r}") from None
    if len(shape) < 2 or len(shape) != len(stride):
        raise ShapeError(
            f"matmul: expected {what} of rank >= 2 with one stride per dim, got shape {shape} stride {stride}"
        )
    if any(n < 0 for n in shape):
        raise ShapeError(f"matmul: {what} has a negative size: shape {shape}")
    return shape, stride, offset


def _reach(what: str, shape, stride, offset) -> tuple:
    if 0 in shape:
        lo = hi = 0
    else:
        lo = hi = offset
        for n, s in zip(shape, stride):
            r = (n - 1) * s
            if r < 0:
                lo += r
            else:
                hi += r
        hi += 1
    # Kernels index with int64; a size-1 dim's stride or an empty layout's sizes are free.
    if any(not -_INT64_MAX - 1 <= v <= _INT64_MAX for v in shape + stride + (offset, lo, hi)):
        raise LayoutBoundsError(
            f"matmul: {what} shape {shape}, stride {stride}, offset {offset} does not fit in int64"
        )
    return lo, hi


def plan(a_layout, b_layout, *, blas: bool = True, threads: int = 1, chunk: int = DEFAULT_CHUNK,
         blas_threading: str = "pinned") -> MatmulPlan:
    """The plan of ``a @ b`` for layouts ``(shape, stride, offset)`` of rank >= 2.

    ``blas``: float operands (gemm) rather than integers; ``threads``: how many
    threads the call may use; ``chunk``: the largest m, n or k of one gemm call;
    ``blas_threading``: how the BLAS threads (``BLAS_THREADING``'s values, or "unsplit":
    a BLAS whose pool cannot be pinned, so a batch is never split across threads).
    Pure: integers in, integers out.
    """
    return _prepare(a_layout, b_layout, bool(blas), threads, chunk, blas_threading)[0]


@caches.lru("matmul.plans", "operand layouts, float or integer, thread count, chunk, BLAS threading", 1024)
def _prepare(a_layout, b_layout, blas, nthreads, chunk, blas_threading):
    """The plan and the walk as the kernels take it (int64 arrays), cached per layouts:
    a model multiplies the same shapes every step, and four small arrays cost more than
    a tiny batched gemm."""
    p = _choose(a_layout, b_layout, blas, nthreads, chunk, blas_threading)
    # the batch dims, and the operands' strides along them as rows of one array; then the
    # gemm's integers as one array (``_GEMM_INTS`` orders them): one argument to unbox
    # rather than fifteen, which a small product notices
    arrays = (np.array(p.walk_shape, np.int64),
              np.array((p.a_walk, p.b_walk, p.c_walk), np.int64).reshape(3, len(p.walk_shape)),
              np.array([getattr(p, f) for f in _GEMM_INTS], np.int64))
    for x in arrays:
        x.flags.writeable = False
    return p, arrays


def _choose(a_layout, b_layout, blas, nthreads, chunk, blas_threading) -> MatmulPlan:
    a_shape, a_stride, a_off = _ints("a_layout", a_layout)
    b_shape, b_stride, b_off = _ints("b_layout", b_layout)
    try:
        chunk = operator.index(chunk)
        nthreads = operator.index(nthreads)
    except TypeError:
        raise ShapeError(f"matmul: expected integer chunk and threads, got {chunk!r} and {nthreads!r}") from None
    if chunk < 1 or nthreads < 1:
        raise ShapeError(f"matmul: expected chunk >= 1 and threads >= 1, got {chunk} and {nthreads}")
    a_reach = _reach("a_layout", a_shape, a_stride, a_off)
    b_reach = _reach("b_layout", b_shape, b_stride, b_off)
    m, k = a_shape[-2:]
    kb, n = b_shape[-2:]
    if k != kb:
        raise ShapeError(
            f"matmul: expected a's columns to match b's rows, got a shape {a_shape} and b shape {b_shape}"
        )
    a_batch, b_batch = a_shape[:-2], b_shape[:-2]
    nd = max(len(a_batch), len(b_batch))
    a_full = _broadcast_strides(a_batch, a_stride[:-2], nd)
    b_full = _broadcast_strides(b_batch, b_stride[:-2], nd)
    a_pad = (1,) * (nd - len(a_batch)) + a_batch
    b_pad = (1,) * (nd - len(b_batch)) + b_batch
    batch = []
    for x, y in zip(a_pad, b_pad):
        if x != y and x != 1 and y != 1:
            raise ShapeError(
                f"matmul: expected batch dims that broadcast, got a shape {a_shape} and b shape {b_shape}"
            )
        batch.append(y if x == 1 else x)
    batch = tuple(batch)
    nbatch = math.prod(batch)
    c_size = nbatch * m * n

    # The walk: size-1 dims dropped, innermost last; c's strides are the dense result's.
    shape, sa, sb, sc = [], [], [], []
    c_stride = m * n
    for d in range(nd - 1, -1, -1):
        if batch[d] != 1:
            shape.append(batch[d])
            sa.append(a_full[d])
            sb.append(b_full[d])
            sc.append(c_stride)
        c_stride *= batch[d]
    if not shape:
        shape, sa, sb, sc = [1], [0], [0], [0]
    walk = tuple(tuple(reversed(x)) for x in (shape, sa, sb, sc))

    a_sr, a_sc = a_stride[-2:]
    b_sr, b_sc = b_stride[-2:]
    modes = (ROW, 0, ROW, 0)
    split, slabs, blas_threads = 1, 1, 0
    if c_size == 0:
        path = EMPTY
    elif k == 0:
        path = ZERO
    elif blas:
        if n > INT_MAX:
            raise TooHardError(f"matmul: the result's row length {n} exceeds the BLAS integer limit {INT_MAX}")
        path = BLAS
        modes = blas_mode(m, k, a_sr, a_sc) + blas_mode(k, n, b_sr, b_sc)
        if blas_threading not in _THREADINGS:
            raise StridedError(f"matmul: expected blas_threading in {_THREADINGS}, got {blas_threading!r}")
        if blas_threading != "unsplit":
            if nthreads > 1 and nbatch * m * n * k >= SPLIT_MIN_MACS:
                # a pool shared with the BLAS: batches split over it (each gemm then runs on
                # its task's thread), a lone product is the BLAS's own on the same threads
                split, slabs = _tasks(nbatch, max(m, n), nthreads, slabs=blas_threading != "shared")
            if blas_threading == "pinned" and (split > 1 or m * n * k > BLAS_INLINE_MACS):
                blas_threads = 1
    else:
        path = INT
        if nbatch * m * n * k >= INT_PARALLEL_MIN and nthreads > 1:
            split = nthreads
    return MatmulPlan(
        path, m, n, k, batch,
        modes[0], modes[1], a_sr, a_sc,
        modes[2], modes[3], b_sr, b_sc,
        *walk, a_off, b_off, a_reach, b_reach, c_size, chunk, split, slabs, int(m >= n), blas_threads,
    )


def _tasks(nbatch: int, extent: int, nthreads: int, slabs: bool = True) -> tuple[int, int]:
    """(tasks, slabs per matrix) for ``nbatch`` gemms whose longer side is ``extent``.

    Enough batches: ``CHUNKS_PER_THREAD`` ranges of them per thread.  Fewer: each matrix
    cut into the fewest slabs that make the task count a multiple of the thread count
    (a lone gemm: one slab per thread), none shorter than ``SLAB_MIN``; without ``slabs``,
    a range of batches per thread while there are as many batches as threads, else one task."""
    target = CHUNKS_PER_THREAD * nthreads
    if nbatch >= target:
        return target, 1
    if not slabs:
        return (nthreads, 1) if nbatch >= nthreads else (1, 1)
    slabs = max(1, min(nthreads // math.gcd(nbatch, nthreads), extent // SLAB_MIN))
    return nbatch * slabs, slabs


def _broadcast_strides(shape, stride, nd):
    """Strides of a batch broadcast to rank nd (the common batch shape): 0 on new and size-1 dims."""
    lead = nd - len(shape)
    return (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(shape, stride))


# ---------------------------------------------------------------------------
# the entry point


def matmul(a_buf, a_layout, b_buf, b_layout, c_buf, *, chunk: int | None = None, keep: bool = False):
    """c = a @ b (see the module docstring); returns the plan it ran, or with ``keep`` the
    product prepared to run again (``_prepared``; None where it is no BLAS product).

    Refuses, with a StridedError subclass naming matmul and the values, buffers
    that are not 1-D contiguous arrays of one supported dtype, a c that is
    read-only or overlaps a or b, layouts that reach outside their buffers and a
    c too short for the result.
    """
    for what, buf in (("a", a_buf), ("b", b_buf), ("c", c_buf)):
        if type(buf) is not np.ndarray or buf.ndim != 1 or not buf.flags.c_contiguous:
            raise StridedError(
                f"matmul: expected {what} as a 1-D contiguous numpy array, got "
                + (f"shape {buf.shape} strides {buf.strides}" if isinstance(buf, np.ndarray) else type(buf).__name__)
            )
    dt = a_buf.dtype
    if b_buf.dtype != dt or c_buf.dtype != dt:
        raise DTypeError(
            f"matmul: expected a, b and c of one dtype, got {a_buf.dtype}, {b_buf.dtype} and {c_buf.dtype}"
        )
    blas = dt in _FLOATS
    if not blas and dt not in _INTS:
        raise DTypeError(
            f"matmul: not dispatched for dtype {dt} (expected float32, float64, int64, uint32, uint8 or bool; "
            "half types are computed in float32 by the caller)"
        )
    if not c_buf.flags.writeable:
        raise StridedError("matmul: expected a writable c, got a read-only buffer")
    nthreads = threads.get_num_threads()
    chunk = DEFAULT_CHUNK if chunk is None else chunk
    how = BLAS_THREADING if BLAS_THREADING != "pinned" or _set_blas_threads is not None else "unsplit"
    try:
        p, walk = _prepare(a_layout, b_layout, blas, nthreads, chunk, how)
    except TypeError:  # unhashable (lists): normalised to tuples, or refused by _ints
        a_layout, b_layout = _ints("a_layout", a_layout), _ints("b_layout", b_layout)
        p, walk = _prepare(a_layout, b_layout, blas, nthreads, chunk, how)
    for what, buf, (lo, hi), lay in (("a", a_buf, p.a_reach, a_layout), ("b", b_buf, p.b_reach, b_layout)):
        if lo < 0 or hi > len(buf):
            raise LayoutBoundsError(
                f"matmul: {what} shape {tuple(lay[0])}, stride {tuple(lay[1])}, offset {lay[2]} spans "
                f"[{lo}, {hi}) but its buffer holds {len(buf)} elements"
            )
    if len(c_buf) < p.c_size:
        raise LayoutBoundsError(
            f"matmul: expected c to hold the {p.c_size} elements of the result {p.batch + (p.m, p.n)}, "
            f"got a buffer of {len(c_buf)}"
        )
    if p.path == EMPTY:
        return None if keep else p
    if np.may_share_memory(c_buf, a_buf) or np.may_share_memory(c_buf, b_buf):
        raise StridedError("matmul: expected c not to overlap a or b (the result would overwrite its operands)")
    if p.path == ZERO:
        c_buf[: p.c_size] = 0
    elif p.path == BLAS:
        _run_blas(p, walk, a_buf, b_buf, c_buf)
        if keep:
            return _prepared(p, walk, dt)
    else:
        _run_int(p, walk, a_buf, b_buf, c_buf, dt == _BOOL)
    return None if keep else p


def _prepared(p: MatmulPlan, walk, dtype):
    """The BLAS product ``matmul`` has just checked and run, as ``(run, (a_reach, b_reach,
    c_size))``: ``run(a, b, c)`` computes it again into a fresh dense ``c`` of ``c_size``
    elements, once the caller has checked that ``a`` and ``b`` are 1-D contiguous buffers of
    ``dtype`` at least ``a_reach`` and ``b_reach`` long.  It calls the kernel's compiled
    entry (the kernel has run, so it is compiled), a split product's once numba's layer is
    known to be OpenMP's (``walk.in_parallel``); before that it launches as ``matmul`` does."""
    reach = (p.a_reach[1], p.b_reach[1], p.c_size)
    if p.split > 1 and not threads.static_chunks():
        def run(a, b, c):
            _run_blas(p, walk, a, b, c)

        return run, reach
    ka, kb = _stat_key(p.a_mode), _stat_key(p.b_mode)
    bshape, bst, ints = walk
    buf = np.empty(0, dtype)
    extra = (p.split, p.slabs, p.slab_rows) if p.split > 1 else ()
    gemm = direct(gemm_batched_parallel if extra else gemm_batched, (buf, buf, buf, ints, bshape, bst, _BLAS_INT,
                                                                     *extra))
    if p.blas_threads:
        def run(a, b, c):
            stats[ka] += 1
            stats[kb] += 1
            with _ONE_BLAS_THREAD:
                gemm(a, b, c, ints, bshape, bst, _BLAS_INT, *extra)
    else:
        def run(a, b, c):
            stats[ka] += 1
            stats[kb] += 1
            gemm(a, b, c, ints, bshape, bst, _BLAS_INT, *extra)

    return run, reach


# The plan's integers in the order ``gemm_batched`` reads them from its ``ints`` array.
_GEMM_INTS = ("m", "n", "k", "a_mode", "a_ld", "a_sr", "a_sc", "b_mode", "b_ld", "b_sr", "b_sc",
              "a_offset", "b_offset", "chunk")


def _stat_key(mode: int) -> str:
    return "packed" if mode >= PACK_ROW else "direct"


def _run_blas(p, walk, a_buf, b_buf, c_buf) -> None:
    stats[_stat_key(p.a_mode)] += 1
    stats[_stat_key(p.b_mode)] += 1
    bshape, bst, ints = walk
    args = (a_buf, b_buf, c_buf, ints, bshape, bst, _BLAS_INT)
    with _ONE_BLAS_THREAD if p.blas_threads else _NOTHING_TO_PIN:
        if p.split == 1:
            gemm_batched(*args)
        else:
            launch(gemm_batched_parallel, (*args, p.split, p.slabs, p.slab_rows), True)


class _OneBlasThread:
    """Holds the BLAS pool at one thread while any strided gemm runs that needs it so (the
    calls may come from several Python threads at once), then gives it strided's count back."""

    def __init__(self):
        self._lock = threading.Lock()
        self._holders = 0

    def __enter__(self):
        with self._lock:
            if self._holders == 0:
                _set_blas_threads(1)
            self._holders += 1

    def __exit__(self, *exc):
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                _set_blas_threads(threads.get_num_threads())
        return False


_ONE_BLAS_THREAD = _OneBlasThread()
_NOTHING_TO_PIN = contextlib.nullcontext()


def _run_int(p, walk, a_buf, b_buf, c_buf, as_bool) -> None:
    if as_bool:  # bool is one byte of 0/1: compute on the bytes, write 0/1 back
        a_buf, b_buf, c_buf = a_buf.view(np.uint8), b_buf.view(np.uint8), c_buf.view(np.uint8)
    oa, ob, oc = batch_offsets(walk[0], walk[1], p.a_offset, p.b_offset, 0)
    args = (a_buf, b_buf, c_buf, p.m, p.n, p.k, p.a_sr, p.a_sc, p.b_sr, p.b_sc, oa, ob, oc, as_bool)
    if p.split > 1:
        with threads.parallel_guard():
            int_matmul_parallel(*args)
    else:
        int_matmul(*args)


# ---------------------------------------------------------------------------
# floats: gemm per batch matrix


@njit(cache=True, nogil=True)
def _pack(src, base, rows, cols, sr, sc, dst, row_major):
    if row_major:
        for i in range(rows):
            s = base + i * sr
            d = i * cols
            for j in range(cols):
                dst[d + j] = src[s + j * sc]
    else:
        for j in range(cols):
            s = base + j * sc
            d = j * rows
            for i in range(rows):
                dst[d + i] = src[s + i * sr]


@njit(cache=True, nogil=True, inline="always")
def _tile(x, off, mode, ld, sr, sc, r0, c0, rows, cols, packed, last):
    """(pointer, transpose flag, leading dim, what ``packed`` now holds) of the rows x cols
    tile at (r0, c0) of the matrix at ``off`` in ``x``, as BLAS reads it transposed (row-major
    memory is a Fortran transpose): in place for ROW ('N') and COL ('T'), else packed into
    ``packed`` (in the order of ``mode``) unless ``last``, the (base, rows, cols) it holds,
    says it is there already.  ``last`` is a tuple passed back and forth, not an array, so
    that a small product does not pay two heap allocations on every call."""
    if mode == ROW:
        return _ptr(x, off + r0 * ld + c0), 78, ld, last  # 'N'
    if mode == COL:
        return _ptr(x, off + r0 + c0 * ld), 84, ld, last  # 'T'
    base = off + r0 * sr + c0 * sc
    if base != last[0] or rows != last[1] or cols != last[2]:
        _pack(x, base, rows, cols, sr, sc, packed, mode == PACK_ROW)
        last = (base, rows, cols)
    if mode == PACK_ROW:
        return _ptr(packed, 0), 78, max(1, cols), last
    return _ptr(packed, 0), 84, max(1, rows), last


@njit(cache=True, nogil=True)
def _gemm_range(a, b, c, m, n, k,
                a_mode, a_ld, a_sr, a_sc,
                b_mode, b_ld, b_sr, b_sc,
                bshape, bst, a_off, b_off, c_off, chunk, blas_int, t0, t1, i_lo, i_hi, j_lo, j_hi):
    """C[t][i_lo:i_hi, j_lo:j_hi] = (A[t] @ B[t])[i_lo:i_hi, j_lo:j_hi] for the batches
    t0 <= t < t1 of the odometer over ``bshape`` (``bst``: A's, B's and C's batch strides,
    one row each).

    ``c`` is dense row-major per matrix (row stride n); m, n, k >= 1.  Batch
    offsets advance by each operand's own per-dim strides (any sign, zero
    included), so no uniform batch stride is assumed.  ``blas_int``'s dtype is
    the BLAS integer (int32 or int64).
    """
    ints = stack_scratch(6, blas_int.dtype)  # M, N, K, lda, ldb, ldc for one call
    ch = stack_scratch(2, np.uint8)
    sc = stack_scratch(3, c.dtype)  # alpha, beta for the first k chunk, beta afterwards
    sc[0] = 1
    sc[1] = 0
    sc[2] = 1
    mc_max = min(m, chunk)
    nc_max = min(n, chunk)
    kc_max = min(k, chunk)
    pa = np.empty(mc_max * kc_max, c.dtype) if a_mode >= PACK_ROW else sc  # sc: never read, no allocation
    pb = np.empty(kc_max * nc_max, c.dtype) if b_mode >= PACK_ROW else sc
    last_a = (-1, 0, 0)  # (base, rows, cols) of the tile now in pa; base -1 means none
    last_b = last_a  # the same for pb
    double = c.itemsize == 8

    nd = bshape.shape[0]
    idx = index_scratch(nd)
    oa, ob, oc = seek(t0, bshape, bst, nd, idx, (a_off, b_off, c_off))
    for _t in range(t0, t1):
        for i0 in range(i_lo, i_hi, chunk):
            mc = min(chunk, i_hi - i0)
            for p0 in range(0, k, chunk):
                kc = min(chunk, k - p0)
                # Second Fortran operand: the A tile (mc x kc) as A^T (kc x mc).
                a_ptr, ch[1], ints[4], last_a = _tile(a, oa, a_mode, a_ld, a_sr, a_sc, i0, p0, mc, kc, pa, last_a)
                for j0 in range(j_lo, j_hi, chunk):
                    nc = min(chunk, j_hi - j0)
                    # First Fortran operand: the B tile (kc x nc) as B^T (nc x kc).
                    b_ptr, ch[0], ints[3], last_b = _tile(b, ob, b_mode, b_ld, b_sr, b_sc, p0, j0, kc, nc, pb,
                                                          last_b)
                    ints[0] = nc
                    ints[1] = mc
                    ints[2] = kc
                    ints[5] = n
                    beta = _ptr(sc, 1 if p0 == 0 else 2)
                    c_ptr = _ptr(c, oc + i0 * n + j0)
                    if double:
                        _dgemm(_ptr(ch, 0), _ptr(ch, 1), _ptr(ints, 0), _ptr(ints, 1), _ptr(ints, 2),
                               _ptr(sc, 0), b_ptr, _ptr(ints, 3), a_ptr, _ptr(ints, 4),
                               beta, c_ptr, _ptr(ints, 5))
                    else:
                        _sgemm(_ptr(ch, 0), _ptr(ch, 1), _ptr(ints, 0), _ptr(ints, 1), _ptr(ints, 2),
                               _ptr(sc, 0), b_ptr, _ptr(ints, 3), a_ptr, _ptr(ints, 4),
                               beta, c_ptr, _ptr(ints, 5))
        oa, ob, oc = carry(bshape, bst, nd, idx, (oa, ob, oc))[1]


@njit(cache=True, nogil=True)
def _gemm_from(a, b, c, ints, bshape, bst, blas_int, t0, t1, i_lo, i_hi, j_lo, j_hi):
    """``_gemm_range`` with its integers read from ``ints`` (``_GEMM_INTS``' order)."""
    _gemm_range(a, b, c, ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6],
                ints[7], ints[8], ints[9], ints[10], bshape, bst, ints[11], ints[12], 0, ints[13],
                blas_int, t0, t1, i_lo, i_hi, j_lo, j_hi)


@njit(cache=True, nogil=True)
def _batches(bshape):
    total = 1
    for d in range(bshape.shape[0]):
        total *= bshape[d]
    return total


@njit(cache=True, nogil=True)
def gemm_batched(a, b, c, ints, bshape, bst, blas_int):
    """Every batch of the odometer over ``bshape``, on the calling thread."""
    _gemm_from(a, b, c, ints, bshape, bst, blas_int, 0, _batches(bshape), 0, ints[0], 0, ints[1])


@njit(cache=True, nogil=True, parallel=True)
def gemm_batched_parallel(a, b, c, ints, bshape, bst, blas_int, ntasks, slabs, slab_rows):
    """Every batch in ``ntasks`` tasks under ``prange``: ranges of consecutive batches
    (``slabs`` 1), or one batch's slab of rows (``slab_rows``) or columns each."""
    total = _batches(bshape)
    m, n = ints[0], ints[1]
    for r in prange(ntasks):
        if slabs == 1:
            t0, t1 = chunk_of(r, ntasks, total)
            _gemm_from(a, b, c, ints, bshape, bst, blas_int, t0, t1, 0, m, 0, n)
        else:
            t = r // slabs
            if slab_rows:
                lo, hi = chunk_of(r - t * slabs, slabs, m)
                _gemm_from(a, b, c, ints, bshape, bst, blas_int, t, t + 1, lo, hi, 0, n)
            else:
                lo, hi = chunk_of(r - t * slabs, slabs, n)
                _gemm_from(a, b, c, ints, bshape, bst, blas_int, t, t + 1, 0, m, lo, hi)


# ---------------------------------------------------------------------------
# integers and bool: no BLAS


@njit(cache=True, nogil=True)
def batch_offsets(bshape, bst, a_off, b_off, c_off):
    """Base offsets of every batch matrix of the three operands, odometer order."""
    nd = bshape.shape[0]
    total = 1
    for d in range(nd):
        total *= bshape[d]
    oa_all = np.empty(total, np.int64)
    ob_all = np.empty(total, np.int64)
    oc_all = np.empty(total, np.int64)
    idx = index_scratch(nd)
    oa, ob, oc = a_off, b_off, c_off
    for t in range(total):
        oa_all[t] = oa
        ob_all[t] = ob
        oc_all[t] = oc
        oa, ob, oc = carry(bshape, bst, nd, idx, (oa, ob, oc))[1]
    return oa_all, ob_all, oc_all


@njit(cache=True, nogil=True)
def _int_row(a, b, c, pa, pb, pc, n, k, a_sc, b_sr, b_sc, as_bool, acc):
    # i-k-j order: one row of B at a time, accumulated in int64.  Integer
    # arithmetic wraps modulo 2**64, and truncating to the output width gives what
    # NumPy's wrapping arithmetic in that width gives.
    for j in range(n):
        acc[j] = 0
    for p in range(k):
        x = np.int64(a[pa + p * a_sc])
        if x == 0:
            continue
        base = pb + p * b_sr
        for j in range(n):
            acc[j] += x * np.int64(b[base + j * b_sc])
    if as_bool:
        for j in range(n):
            c[pc + j] = 1 if acc[j] != 0 else 0
    else:
        for j in range(n):
            c[pc + j] = acc[j]


@njit(cache=True, nogil=True)
def int_matmul(a, b, c, m, n, k, a_sr, a_sc, b_sr, b_sc, oa, ob, oc, as_bool):
    """Integer (and bool as u8 0/1) matmul over any strides; one output row per step."""
    acc = np.empty(n, np.int64)
    for r in range(oa.shape[0] * m):
        t = r // m
        i = r - t * m
        _int_row(a, b, c, oa[t] + i * a_sr, ob[t], oc[t] + i * n, n, k, a_sc, b_sr, b_sc, as_bool, acc)


@njit(cache=True, nogil=True, parallel=True)
def int_matmul_parallel(a, b, c, m, n, k, a_sr, a_sc, b_sr, b_sc, oa, ob, oc, as_bool):
    for r in prange(oa.shape[0] * m):
        acc = np.empty(n, np.int64)
        t = r // m
        i = r - t * m
        _int_row(a, b, c, oa[t] + i * a_sr, ob[t], oc[t] + i * n, n, k, a_sc, b_sr, b_sc, as_bool, acc)
