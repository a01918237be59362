"""The matmul family on CUDA: the CPU's matmul plan run as cuBLAS strided-batched gemms.

``matmul(a_buf, a_layout, b_buf, b_layout, c_buf)`` takes ``strided.kernels.matmul.matmul``'s
arguments (device buffers, layouts as ``(shape, stride, offset)`` of rank >= 2, a dense
row-major c).  ``strided.kernels.matmul.plan`` decides as on the CPU: each matrix operand
is read in place when BLAS can express it (``ROW``: unit column stride, ``COL``: unit row
stride, read transposed; a narrowed matrix keeps its row stride as the leading dimension)
and only the others are packed (here: copied dense on the device by the copy family, then
planned again), and the batch is walked per operand (each operand's own stride per batch
dim, 0 where it broadcasts), so a permuted, narrowed or stride-0 batch is never read with
another operand's strides (seed 000's Metal bug).

``program`` turns the plan into the cuBLAS calls, in pure Python (integers in, integers
out): BLAS is column-major, so the row-major C = A @ B is the column-major C^T = B^T A^T:
B goes first, m and n swap, an operand read in place as ``ROW`` is ``CUBLAS_OP_N`` with
its row stride as ld, a ``COL`` one ``CUBLAS_OP_T`` with its column stride.  The
innermost batch dim becomes one ``cublasGemmStridedBatchedEx`` (strides in elements, 0
for a broadcast operand); the outer batch dims, or an innermost dim some operand walks
backwards, are one call per point.

On a GPU the float calls go to cuBLAS (the ``nvidia-cublas-cu12`` wheel, found with
``cuda.pathfinder`` and loaded with ctypes).  numba-cuda's simulator has no cuBLAS: there
``gemm_kernel``, a plain kernel that reads its arguments exactly as cuBLAS defines them,
stands in for the library call, so the plan, the modes, the leading dimensions and the
batch strides are checked against NumPy in every simulated run.  f32 and f64 are computed
in their own precision (no TF32); f16 and bf16 go to ``cublasGemmStridedBatchedEx`` as
themselves (CUDA_R_16F / CUDA_R_16BF) with f32 accumulation (CUBLAS_COMPUTE_32F) and c in
the half type, each result rounded once, as the CPU's f32 product rounded once (the
stand-in reads their bits into f32 and rounds the sum the same way).  Integer and bool
products have no cuBLAS gemm: ``gemm_kernel`` runs them on the GPU too (a thread per
output element, the sum in the accumulator numba types, narrowed on store: the dtype's own
wrapping arithmetic), correct but not fast.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
from numba import cuda

from ..core import caches
from ..core.errors import DTypeError, LayoutBoundsError, StridedError
from ..kernels.common import BF16, DTYPES, F16
from ..kernels.matmul import BLAS, COL, EMPTY, PACK_ROW, ROW, ZERO, plan
from ..layout.layout import Layout, contiguous_strides
from . import half, launch
from .copy import copy_into
from .device import HALVES, Bf16Array, empty, is_device_array, kernel_view
from .storage import pointer

__all__ = ["matmul", "program", "GemmCall", "GemmProgram", "gemm_kernel", "DTYPES_MULTIPLIED",
           "OP_N", "OP_T", "stats"]

OP_N, OP_T = 0, 1  # cublasOperation_t
# What a product takes (its three buffers of one dtype): the floats through cuBLAS, the
# integers the CPU's integer kernel takes (the op layer computes the others in int64) and
# bool through ``gemm_kernel``.
DTYPES_MULTIPLIED = frozenset(np.dtype(n) for n in ("float32", "float64", "int64", "uint32", "uint8", "bool")) | HALVES
stats = {"direct": 0, "packed": 0, "calls": 0}


@dataclass(frozen=True)
class GemmCall:
    """One strided-batched gemm: the operands' element offsets of batch 0 (cuBLAS's A is
    strided's b, its B strided's a) and their strides from one batch to the next."""

    a_off: int
    b_off: int
    c_off: int
    count: int
    a_stride: int
    b_stride: int
    c_stride: int


@dataclass(frozen=True)
class GemmProgram:
    """The column-major gemm arguments every call shares, and the calls."""

    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    calls: tuple


def _op(mode: int) -> int:
    return OP_N if mode == ROW else OP_T


def program(p) -> GemmProgram:
    """The cuBLAS calls of the BLAS plan ``p`` (``kernels.matmul.plan``; no packed operand)."""
    if p.path != BLAS or p.a_mode >= PACK_ROW or p.b_mode >= PACK_ROW:
        raise StridedError(f"matmul: program takes a BLAS plan with operands in place, got path {p.path}, "
                           f"modes {p.a_mode} and {p.b_mode}")
    shape, aw, bw, cw = p.walk_shape, p.a_walk, p.b_walk, p.c_walk
    inner = len(shape) - 1
    per_matrix = aw[inner] < 0 or bw[inner] < 0
    count = 1 if per_matrix else shape[inner]
    outer = shape if per_matrix else shape[:inner]
    calls = []
    npts = 1
    for s in outer:
        npts *= s
    for e in range(npts):
        r, ao, bo, co = e, p.a_offset, p.b_offset, 0
        for d in range(len(outer) - 1, -1, -1):
            q = r % outer[d]
            r //= outer[d]
            ao, bo, co = ao + q * aw[d], bo + q * bw[d], co + q * cw[d]
        # cuBLAS's A is b, its B is a
        calls.append(GemmCall(bo, ao, co, count, 0 if per_matrix else bw[inner], 0 if per_matrix else aw[inner],
                              0 if per_matrix else cw[inner]))
    return GemmProgram(_op(p.b_mode), _op(p.a_mode), p.n, p.m, p.k, p.b_ld, p.a_ld, p.n, tuple(calls))


# ---------------------------------------------------------------------------
# the simulator's stand-in for cublasGemmStridedBatchedEx


_GEMM_SRC = """
def kernel(transa, transb, m, n, k, A, aoff, lda, sa, B, boff, ldb, sb, C, coff, ldc, sc, count):
    for e in range(cuda.grid(1), count * m * n, cuda.gridsize(1)):
        t = e // (m * n)
        r = e - t * (m * n)
        j = r // m
        i = r - j * m
        a0, b0 = aoff + t * sa, boff + t * sb
        acc = {zero}
        for l in range(k):
            x = {x}
            y = {y}
            acc += x * y
        C[coff + t * sc + i + j * ldc] = {store}
"""
_GEMMS = caches.table("cuda.matmul.gemms", "dtype, transposes")


def gemm_kernel(dtype):
    """C[i + j*ldc] = sum_l op(A)[i, l] * op(B)[l, j] per batch, column-major, as cuBLAS
    reads its arguments (alpha 1, beta 0), for buffers of ``dtype`` (half types as their
    bits, summed in f32): the simulator's stand-in for the library call, and the integer
    products on a GPU."""
    dtype = np.dtype(dtype)
    if dtype not in _GEMMS:
        xa = "A[a0 + i + l * lda] if transa == 0 else A[a0 + l + i * lda]"
        yb = "B[b0 + l + j * ldb] if transb == 0 else B[b0 + j + l * ldb]"
        # the sum starts from a typed zero (never from c's contents, which may be NaN bits)
        zero = "np.float32(0)" if dtype in HALVES else "0" if dtype == np.bool_ else f"np.{dtype.name}(0)"
        src = _GEMM_SRC.format(zero=zero, x=half.load(dtype, f"({xa})"), y=half.load(dtype, f"({yb})"),
                               store=half.store(dtype, "acc"))
        scope = {"cuda": cuda, "np": np, **half.SCOPE}
        exec(src, scope)  # our own template
        _GEMMS[dtype] = cuda.jit(scope["kernel"])
    return _GEMMS[dtype]


# ---------------------------------------------------------------------------
# cuBLAS through ctypes (a real GPU only)

_CUBLAS: list = []  # [library, handle] once loaded
_TYPES = {np.dtype(np.float32): (0, 68, ctypes.c_float), np.dtype(np.float64): (1, 70, ctypes.c_double),
          F16: (2, 68, ctypes.c_float), BF16: (14, 68, ctypes.c_float)}
# cudaDataType CUDA_R_32F / _64F / _16F / _16BF, cublasComputeType_t CUBLAS_COMPUTE_32F / _64F
# (the half types accumulate in f32), the C type of alpha and beta (the compute type's)
_GEMM_DEFAULT = -1


def _cublas():
    if not _CUBLAS:
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib

            lib = ctypes.CDLL(load_nvidia_dynamic_lib("cublas").abs_path)
        except Exception as e:  # not installed, or no driver
            raise StridedError(f"matmul: cuBLAS is not available (pip install 'strided[cuda]' installs "
                               f"nvidia-cublas-cu12): {type(e).__name__}: {e}") from None
        handle = ctypes.c_void_p()
        status = lib.cublasCreate_v2(ctypes.byref(handle))
        if status != 0:
            raise StridedError(f"matmul: cublasCreate failed with status {status}")
        f = lib.cublasGemmStridedBatchedEx
        ll, i = ctypes.c_longlong, ctypes.c_int
        vp = ctypes.c_void_p
        f.argtypes = [vp, i, i, i, i, i, vp, vp, i, i, ll, vp, i, i, ll, vp, vp, i, i, ll, i, i, i]
        f.restype = i
        _CUBLAS.extend([lib, handle])
    return _CUBLAS


def _cublas_run(prog: GemmProgram, A, B, C) -> None:
    lib, handle = _cublas()
    dtype_code, compute, scalar = _TYPES[C.dtype]
    one, zero = scalar(1), scalar(0)
    item = C.dtype.itemsize
    pa, pb, pc = pointer(A), pointer(B), pointer(C)
    for call in prog.calls:
        status = lib.cublasGemmStridedBatchedEx(
            handle, prog.transa, prog.transb, prog.m, prog.n, prog.k, ctypes.byref(one),
            pa + call.a_off * item, dtype_code, prog.lda, call.a_stride,
            pb + call.b_off * item, dtype_code, prog.ldb, call.b_stride,
            ctypes.byref(zero), pc + call.c_off * item, dtype_code, prog.ldc, call.c_stride,
            call.count, compute, _GEMM_DEFAULT)
        if status != 0:
            raise StridedError(f"matmul: cublasGemmStridedBatchedEx failed with status {status} "
                               f"(m={prog.m} n={prog.n} k={prog.k}, {call})")


def run_program(prog: GemmProgram, A, B, C) -> None:
    """The calls of ``prog`` with cuBLAS's A = strided's b and B = strided's a."""
    stats["calls"] += len(prog.calls)
    if launch.SIMULATED or C.dtype not in _TYPES:
        kernel = gemm_kernel(C.dtype)
        A, B, C = kernel_view(A), kernel_view(B), kernel_view(C)
        for call in prog.calls:
            n = call.count * prog.m * prog.n
            kernel[launch.grid(n)](
                prog.transa, prog.transb, prog.m, prog.n, prog.k, A, call.a_off, prog.lda, call.a_stride,
                B, call.b_off, prog.ldb, call.b_stride, C, call.c_off, prog.ldc, call.c_stride, call.count)
    else:
        _cublas_run(prog, A, B, C)


# ---------------------------------------------------------------------------
# the entry point


def _packed(buf, layout):
    """A dense row-major copy of an operand's own elements on the device, and its layout."""
    shape, stride, offset = layout
    dense = empty(max(1, int(np.prod(shape))), buf.dtype)
    if 0 not in shape:
        copy_into(dense, Layout(tuple(shape)), buf, Layout(tuple(shape), tuple(stride), offset))
    return dense, (tuple(shape), contiguous_strides(tuple(shape)), 0)


def matmul(a_buf, a_layout, b_buf, b_layout, c_buf, *, chunk: int | None = None, keep: bool = False):
    """c = a @ b on device buffers (``strided.kernels.matmul.matmul``'s contract); returns the
    plan (with ``keep``, None: CUDA keeps no decision yet)."""
    p = _product(a_buf, a_layout, b_buf, b_layout, c_buf)
    return None if keep else p


def _product(a_buf, a_layout, b_buf, b_layout, c_buf):
    for what, buf in (("a", a_buf), ("b", b_buf), ("c", c_buf)):
        if not is_device_array(buf) or buf.ndim != 1:
            got = "a host numpy array" if isinstance(buf, np.ndarray) else type(buf).__name__
            raise StridedError(f"matmul: expected {what} as a 1-D CUDA device array, got {got}")
    dt = a_buf.dtype
    if b_buf.dtype != dt or c_buf.dtype != dt:
        raise DTypeError(
            f"matmul: expected a, b and c of one dtype, got {a_buf.dtype}, {b_buf.dtype} and {c_buf.dtype}")
    if dt not in DTYPES_MULTIPLIED:
        raise DTypeError(f"matmul: CUDA multiplies {', '.join(sorted(DTYPES[d] for d in DTYPES_MULTIPLIED))}; "
                         f"got {DTYPES.get(dt, dt)} (the op layer computes the other integers in int64)")
    p = plan(a_layout, b_layout, blas=True)
    for what, buf, (lo, hi), lay in (("a", a_buf, p.a_reach, a_layout), ("b", b_buf, p.b_reach, b_layout)):
        if lo < 0 or hi > len(buf):
            raise LayoutBoundsError(f"matmul: {what} shape {tuple(lay[0])}, stride {tuple(lay[1])}, offset {lay[2]} "
                                    f"spans [{lo}, {hi}) but its buffer holds {len(buf)} elements")
    if len(c_buf) < p.c_size:
        raise LayoutBoundsError(f"matmul: expected c to hold the {p.c_size} elements of the result "
                                f"{p.batch + (p.m, p.n)}, got a buffer of {len(c_buf)}")
    if p.path == EMPTY:
        return p
    if p.path == ZERO:
        zero = cuda.to_device(np.zeros(1, np.uint16 if dt in HALVES else dt))  # +0.0 as a half's bits too
        src_zero = Bf16Array(zero) if dt == BF16 else (zero.view(F16) if dt == F16 else zero)
        copy_into(c_buf, Layout((p.c_size,)), src_zero, Layout((p.c_size,), (0,)))
        return p
    if p.a_mode >= PACK_ROW or p.b_mode >= PACK_ROW:
        if p.a_mode >= PACK_ROW:
            a_buf, a_layout = _packed(a_buf, a_layout)
        if p.b_mode >= PACK_ROW:
            b_buf, b_layout = _packed(b_buf, b_layout)
        stats["packed"] += (p.a_mode >= PACK_ROW) + (p.b_mode >= PACK_ROW)
        stats["direct"] += (p.a_mode < PACK_ROW) + (p.b_mode < PACK_ROW)
        p = plan(a_layout, b_layout, blas=True)
    else:
        stats["direct"] += 2
    run_program(program(p), b_buf, a_buf, c_buf)
    return p


assert COL == 1 and ROW == 0  # _op reads the CPU's mode numbers
