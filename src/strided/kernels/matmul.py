"""Matrix products over strided operands: BLAS gemm for floats, a loop kernel for integers.

Floats go to scipy's BLAS (``scipy.linalg.cython_blas``, LP64 OpenBLAS) through
its C function pointers, called from numba so that the batch loop, the optional
packing and the gemm calls all run in one compiled function without the GIL.
The pointers are registered as named symbols (``llvmlite.binding.add_symbol``)
rather than embedded as ctypes addresses, which keeps the kernels cacheable.

BLAS is column-major and takes one leading dimension per operand.  A row-major
(rows, cols) matrix whose row stride is ``ld`` is the column-major (cols, rows)
matrix with that ``ld``, so the row-major product C = A @ B is computed as the
column-major C^T = B^T @ A^T: B goes first, A second, M and N swap.

Each matrix operand arrives in one of four modes, decided once per call by
``blas_mode`` (the strides of the last two dims are the same in every batch):

* ``ROW``: column stride 1, row stride >= cols  -> read in place, ld = row stride
* ``COL``: row stride 1, column stride >= rows  -> read in place as transposed
* ``PACK_ROW`` / ``PACK_COL``: anything else (negative, zero or overlapping
  strides, no unit stride) -> gathered into a scratch tile first, row- or
  column-major, whichever reads the source along its smaller stride.

A packed tile is reused while consecutive batches point at the same source
matrix (a stride-0 batch dim), so a broadcast operand is packed once.  m, n and
k are cut into chunks of at most ``chunk`` so that every BLAS integer fits in 32
bits; tests pass a small chunk to exercise that loop.
"""

from __future__ import annotations

from . import PARALLEL_MIN  # noqa: F401  (imports strided.threads before numba)

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

ROW, COL, PACK_ROW, PACK_COL = 0, 1, 2, 3
INT_MAX = 2**31 - 1  # scipy's BLAS takes C int (LP64)
DEFAULT_CHUNK = 1 << 30

_loaded = False


def load_blas() -> None:
    """Register scipy's sgemm/dgemm under our symbol names (idempotent).

    Must run before a kernel that calls them is compiled or loaded from cache.
    """
    global _loaded
    if _loaded:
        return
    import llvmlite.binding as ll
    from numba.extending import get_cython_function_address

    for name in ("sgemm", "dgemm"):
        ll.add_symbol("strided_" + name, get_cython_function_address("scipy.linalg.cython_blas", name))
    # threadpoolctl only limits libraries already loaded: scipy's OpenBLAS has just
    # been loaded, so apply strided's thread count to it now.
    from .. import threads

    threads._apply()
    global _set_blas_threads
    _set_blas_threads = _blas_thread_setter()
    _loaded = True


# Products below this many multiply-adds per matrix run BLAS on one thread.  On a shared
# 2-CPU machine a two-thread gemm whose second thread finds its CPU taken finishes one or
# more 4 ms scheduler ticks late: a 256^2 f32 product (about 1 ms on one thread) measured
# anywhere from 0.8 to 48 ms with two threads, against 1-2 ms on one.  2**25 is ~1.5 ms of
# single-thread gemm: from there a second thread gains more than a late tick costs.
BLAS_PARALLEL_MIN = 1 << 25

_set_blas_threads = None
# OpenBLAS itself runs gemms up to this size on the calling thread (interface/gemm.c:
# m*n*k <= SMP_THRESHOLD_MIN 65536 * GEMM_MULTITHREAD_THRESHOLD 4): nothing to switch.
_BLAS_SERIAL_MAX = 1 << 18


def _blas_thread_setter():
    """``openblas_set_num_threads`` of the OpenBLAS that scipy's BLAS (our gemm) runs on.

    None when it cannot be found (threadpoolctl missing, another BLAS): then OpenBLAS
    keeps the pool size strided set and chooses its own threading per call."""
    try:
        import ctypes
        import os

        from threadpoolctl import ThreadpoolController

        for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers:
            if "scipy" not in os.path.dirname(lib.filepath):
                continue  # numpy's own OpenBLAS, not the one cython_blas calls
            for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads",
                         "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
                fn = getattr(lib.dynlib, name, None)
                if fn is not None:
                    fn.argtypes, fn.restype = [ctypes.c_int], None
                    return fn
    except Exception:
        pass
    return None


def blas_threads(macs: int, threads: int) -> int:
    """Set the BLAS pool for a product of ``macs`` multiply-adds per matrix; returns the
    count to restore afterwards (0: nothing was changed)."""
    if _set_blas_threads is None or threads < 2 or macs >= BLAS_PARALLEL_MIN or macs <= _BLAS_SERIAL_MAX:
        return 0
    _set_blas_threads(1)
    return threads


def restore_blas_threads(threads: int) -> None:
    if threads:
        _set_blas_threads(threads)


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


@njit(cache=True, nogil=True)
def gemm_batched(a, b, c, m, n, k,
                 a_mode, a_ld, a_sr, a_sc,
                 b_mode, b_ld, b_sr, b_sc,
                 bshape, a_bst, b_bst, c_bst, a_off, b_off, c_off, chunk):
    """C[batch] = A[batch] @ B[batch] for every batch of an odometer over ``bshape``.

    ``c`` is dense row-major per matrix (row stride n); m, n, k >= 1.  Batch
    offsets advance by each operand's own per-dim strides (any sign, zero
    included), so no uniform batch stride is assumed.
    """
    ints = np.empty(6, np.int32)  # M, N, K, lda, ldb, ldc for one call
    ch = np.empty(2, np.uint8)
    sc = np.empty(3, c.dtype)  # alpha, beta for the first k chunk, beta afterwards
    sc[0] = 1
    sc[1] = 0
    sc[2] = 1
    mc_max = min(m, chunk)
    nc_max = min(n, chunk)
    kc_max = min(k, chunk)
    pa = np.empty(mc_max * kc_max if a_mode >= PACK_ROW else 1, c.dtype)
    pb = np.empty(kc_max * nc_max if b_mode >= PACK_ROW else 1, c.dtype)
    last_a = -1  # (base, mc, kc) of the tile now in pa; base -1 means none
    last_a_mc = 0
    last_a_kc = 0
    last_b = -1
    last_b_kc = 0
    last_b_nc = 0
    double = c.itemsize == 8

    nd = bshape.shape[0]
    total = 1
    for d in range(nd):
        total *= bshape[d]
    idx = np.zeros(nd, np.int64)
    oa = a_off
    ob = b_off
    oc = c_off
    for _t in range(total):
        for i0 in range(0, m, chunk):
            mc = min(chunk, m - i0)
            for p0 in range(0, k, chunk):
                kc = min(chunk, k - p0)
                # Second Fortran operand: the A tile (mc x kc) as A^T (kc x mc).
                if a_mode == ROW:
                    a_ptr = _ptr(a, oa + i0 * a_ld + p0)
                    ch[1] = 78  # 'N'
                    ints[4] = a_ld
                elif a_mode == COL:
                    a_ptr = _ptr(a, oa + i0 + p0 * a_ld)
                    ch[1] = 84  # 'T'
                    ints[4] = a_ld
                else:
                    base = oa + i0 * a_sr + p0 * a_sc
                    if base != last_a or mc != last_a_mc or kc != last_a_kc:
                        _pack(a, base, mc, kc, a_sr, a_sc, pa, a_mode == PACK_ROW)
                        last_a = base
                        last_a_mc = mc
                        last_a_kc = kc
                    a_ptr = _ptr(pa, 0)
                    if a_mode == PACK_ROW:
                        ch[1] = 78
                        ints[4] = max(1, kc)
                    else:
                        ch[1] = 84
                        ints[4] = max(1, mc)
                for j0 in range(0, n, chunk):
                    nc = min(chunk, n - j0)
                    # First Fortran operand: the B tile (kc x nc) as B^T (nc x kc).
                    if b_mode == ROW:
                        b_ptr = _ptr(b, ob + p0 * b_ld + j0)
                        ch[0] = 78
                        ints[3] = b_ld
                    elif b_mode == COL:
                        b_ptr = _ptr(b, ob + p0 + j0 * b_ld)
                        ch[0] = 84
                        ints[3] = b_ld
                    else:
                        base = ob + p0 * b_sr + j0 * b_sc
                        if base != last_b or kc != last_b_kc or nc != last_b_nc:
                            _pack(b, base, kc, nc, b_sr, b_sc, pb, b_mode == PACK_ROW)
                            last_b = base
                            last_b_kc = kc
                            last_b_nc = nc
                        b_ptr = _ptr(pb, 0)
                        if b_mode == PACK_ROW:
                            ch[0] = 78
                            ints[3] = max(1, nc)
                        else:
                            ch[0] = 84
                            ints[3] = max(1, kc)
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
        # Odometer over the batch dims: a carry adds one stride, a wrap takes back what it added.
        d = nd - 1
        while d >= 0:
            idx[d] += 1
            oa += a_bst[d]
            ob += b_bst[d]
            oc += c_bst[d]
            if idx[d] < bshape[d]:
                break
            oa -= a_bst[d] * bshape[d]
            ob -= b_bst[d] * bshape[d]
            oc -= c_bst[d] * bshape[d]
            idx[d] = 0
            d -= 1


# ---------------------------------------------------------------------------
# integers and bool: no BLAS


@njit(cache=True, nogil=True)
def batch_offsets(bshape, a_bst, b_bst, c_bst, a_off, b_off, c_off):
    """Base offsets of every batch matrix of the three operands, odometer order."""
    nd = bshape.shape[0]
    total = 1
    for d in range(nd):
        total *= bshape[d]
    oa_all = np.empty(total, np.int64)
    ob_all = np.empty(total, np.int64)
    oc_all = np.empty(total, np.int64)
    idx = np.zeros(nd, np.int64)
    oa = a_off
    ob = b_off
    oc = c_off
    for t in range(total):
        oa_all[t] = oa
        ob_all[t] = ob
        oc_all[t] = oc
        d = nd - 1
        while d >= 0:
            idx[d] += 1
            oa += a_bst[d]
            ob += b_bst[d]
            oc += c_bst[d]
            if idx[d] < bshape[d]:
                break
            oa -= a_bst[d] * bshape[d]
            ob -= b_bst[d] * bshape[d]
            oc -= c_bst[d] * bshape[d]
            idx[d] = 0
            d -= 1
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
