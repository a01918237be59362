"""Matrix products: NumPy's matmul semantics over operands of any layout.

Shapes follow ``numpy.matmul``: a 1-D lhs is a row (its dim is dropped from the
result), a 1-D rhs a column, every dim before the last two is a batch dim, and
batch dims broadcast.  Rank 0 operands are refused, as NumPy does.

Which path runs (one place: ``_float_matmul`` / ``_int_matmul``):

* f32, f64: BLAS gemm on the operands' own buffers.  The last two dims are
  handed over as they are whenever one stride is 1 and the other is a valid
  leading dimension (row-major, transposed, narrowed).  Only matrices BLAS
  cannot describe (negative, zero or overlapping strides, no unit stride) are
  packed, one tile at a time into a scratch buffer, counted in
  ``stats["packed"]``.
* f16, bf16: operands converted to f32 (a copy that cannot be avoided), the
  product computed in f32 and rounded once to the input dtype.
* u8, u32, i64: a numba kernel over any strides, accumulating in int64 and
  wrapping like NumPy.  bool: as NumPy, the logical or of ands.

Batch dims are walked by an odometer (``StridedIndex``'s, run inside the
kernel) carrying each operand's own stride per batch dim: permuted, narrowed,
flipped and broadcast (stride 0) batches are all addressed exactly, never
assumed to have a single batch stride.

The result is always a fresh row-major tensor.  Differing dtypes are a
DTypeError unless ``promote=True`` (then NumPy's promotion applies).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import dtype as dt
from . import threads
from .dtype import DType
from .errors import DTypeError, ShapeError, StridedError, TooHardError
from .kernels import matmul as km  # loads scipy's BLAS; linalg itself loads on first use
from .layout import Layout
from .layout.layout import _contiguous, broadcast_shapes
from .storage import alloc
from .tensor import Op, Tensor, _tracked, from_numpy

# Operands handed to BLAS in place ("direct") or gathered into a scratch tile first ("packed").
stats = {"direct": 0, "packed": 0}

_INT_PARALLEL_MIN = 1 << 18  # multiply-adds below which the integer kernel stays on one thread


def matmul(a, b, *, promote: bool = False, _chunk: int | None = None) -> Tensor:
    """``a @ b`` with NumPy's shape rules; see the module docstring for the paths."""
    a = _operand(a, "lhs")
    b = _operand(b, "rhs")
    if a.dtype is not b.dtype:
        if not promote:
            raise DTypeError(
                f"matmul: expected both operands to have the same dtype, got lhs {a.dtype} and "
                f"rhs {b.dtype} (pass promote=True to promote them)"
            )
        want = dt.promote(a.dtype, b.dtype)
    else:
        want = a.dtype
    a_nd, b_nd = len(a.layout.shape), len(b.layout.shape)  # used often below: properties cost
    if a_nd == 0 or b_nd == 0:
        raise ShapeError(
            f"matmul: shape mismatch in matmul, lhs {a.shape} and rhs {b.shape}: "
            "both operands need at least 1 dim (use * to multiply by a scalar)"
        )
    comp = want.compute
    abuf, alay = _buffer(a, comp)
    bbuf, blay = _buffer(b, comp)
    # No layout reaches a kernel unchecked (the promoted/broadcast views below reach
    # exactly the elements these reach).
    alay.validate(len(abuf))
    blay.validate(len(bbuf))

    # Plain tuples from here on: building Layout objects costs more than a small gemm.
    a_shape, a_stride = alay.shape, alay.stride
    b_shape, b_stride = blay.shape, blay.stride
    if a_nd == 1:  # a row; its (size-1) row stride is never used
        a_shape, a_stride = (1,) + a_shape, (0,) + a_stride
    if b_nd == 1:  # a column
        b_shape, b_stride = b_shape + (1,), b_stride + (0,)
    m, k = a_shape[-2:]
    kb, n = b_shape[-2:]
    if k != kb:
        raise ShapeError(
            f"matmul: shape mismatch in matmul, lhs {a.shape} and rhs {b.shape}: "
            f"lhs has {k} columns but rhs has {kb} rows"
        )
    a_batch, b_batch = a_shape[:-2], b_shape[:-2]
    if a_batch == b_batch:
        batch = a_batch
    else:
        try:
            batch = broadcast_shapes("matmul", a_batch, b_batch)
        except ShapeError:
            raise ShapeError(
                f"matmul: shape mismatch in matmul, lhs {a.shape} and rhs {b.shape}: "
                f"batch dims {a_batch} and {b_batch} do not broadcast"
            ) from None
    out_shape = batch + ((m,) if a_nd > 1 else ()) + ((n,) if b_nd > 1 else ())

    nbatch = 1
    for d in batch:
        nbatch *= d
    numel = nbatch * m * n
    store = alloc(numel, comp.np, "matmul")
    cbuf = store.data
    if numel and k == 0:
        cbuf.fill(0)
    elif numel:
        if len(cbuf) < numel:
            raise StridedError(f"matmul: output buffer holds {len(cbuf)} elements, {numel} needed")
        walk = _batch_walk(batch, a_batch, a_stride[:-2], alay.offset, b_batch, b_stride[:-2], blay.offset, m * n)
        if comp.is_float:
            _float_matmul(abuf, a_stride[-2:], bbuf, b_stride[-2:], cbuf, m, n, k, walk, _chunk)
        else:
            _int_matmul(abuf, a_stride[-2:], bbuf, b_stride[-2:], cbuf, m, n, k, walk, comp)

    if want is not comp:  # f16/bf16: computed in f32, rounded once here
        rounded = alloc(numel, want.np, "matmul")
        with np.errstate(over="ignore"):  # beyond the half range the rounding is inf, as in PyTorch
            np.copyto(rounded.data, cbuf, casting="unsafe")  # round to nearest even
        store = rounded
    out = Tensor(store, _contiguous(out_shape), want)  # row-major
    if _tracked((a, b)):
        out._op = Op("matmul", (a, b), {"promote": promote})
    return out


def _operand(x, side: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return from_numpy(x)
    raise StridedError(f"matmul: expected a tensor as {side}, got {type(x).__name__}")


def _buffer(t: Tensor, comp: DType) -> tuple[np.ndarray, Layout]:
    """The flat buffer and layout a kernel reads: the tensor's own unless the dtype differs."""
    if t.dtype is comp:
        return t._storage.data, t.layout
    # A conversion has to copy anyway; it produces a dense row-major operand.
    arr = np.ascontiguousarray(t.numpy(), dtype=comp.np)
    return arr.reshape(-1), Layout.contiguous(t.shape)


def _batch_walk(batch, a_batch, a_bst, a_off, b_batch, b_bst, b_off, mat_size):
    """The odometer the kernels run over the batch dims: (shape, a, b, c strides, offsets).

    Each operand keeps its own stride per batch dim (0 where it is broadcast),
    so permuted, narrowed, flipped and broadcast batches are addressed exactly.
    Size-1 dims are dropped; with no batch dims there is one step.
    """
    if not batch:
        return _ONE_STEP + (a_off, b_off, 0)
    return _batch_dims(batch, a_batch, a_bst, b_batch, b_bst, mat_size) + (a_off, b_off, 0)


@lru_cache(maxsize=256)
def _batch_dims(batch, a_batch, a_bst, b_batch, b_bst, mat_size):
    # Cached: a model multiplies the same shapes every step, and four small arrays cost
    # more than a tiny batched gemm.  The kernels only read them.
    nd = len(batch)
    a_full = _broadcast_strides(a_batch, a_bst, nd)
    b_full = _broadcast_strides(b_batch, b_bst, nd)
    shape, sa, sb, sc = [], [], [], []
    c_stride = mat_size
    for d in range(nd - 1, -1, -1):
        if batch[d] != 1:
            shape.append(batch[d])
            sa.append(a_full[d])
            sb.append(b_full[d])
            sc.append(c_stride)
        c_stride *= batch[d]
    if not shape:
        shape, sa, sb, sc = [1], [0], [0], [0]
    shape.reverse(), sa.reverse(), sb.reverse(), sc.reverse()
    table = np.array([shape, sa, sb, sc], np.int64)
    return table[0], table[1], table[2], table[3]


# The walk of an unbatched product (read-only in the kernels, so shared).
_ONE_STEP = (np.ones(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))


def _broadcast_strides(shape, stride, nd):
    """Strides of a batch broadcast to rank nd (the common batch shape): 0 on new and size-1 dims."""
    lead = nd - len(shape)
    return (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(shape, stride))


def _float_matmul(abuf, a_mat, bbuf, b_mat, cbuf, m, n, k, walk, chunk) -> None:
    if n > km.INT_MAX:
        raise TooHardError(
            f"matmul: the result's row length {n} exceeds the BLAS integer limit {km.INT_MAX}"
        )
    a_sr, a_sc = a_mat
    b_sr, b_sc = b_mat
    a_mode, a_ld = km.blas_mode(m, k, a_sr, a_sc)
    b_mode, b_ld = km.blas_mode(k, n, b_sr, b_sc)
    for mode in (a_mode, b_mode):
        stats["packed" if mode >= km.PACK_ROW else "direct"] += 1
    chunk = km.DEFAULT_CHUNK if chunk is None else chunk
    restore = km.blas_threads(m * n * k, threads.get_num_threads())
    try:
        km.gemm_batched(
            abuf, bbuf, cbuf, m, n, k,
            a_mode, a_ld, a_sr, a_sc,
            b_mode, b_ld, b_sr, b_sc,
            *walk, chunk,
        )
    finally:
        km.restore_blas_threads(restore)


def _int_matmul(abuf, a_mat, bbuf, b_mat, cbuf, m, n, k, walk, comp) -> None:
    as_bool = comp is dt.bool_
    if as_bool:  # bool is one byte of 0/1: compute on the bytes, write 0/1 back
        abuf, bbuf, cbuf = abuf.view(np.uint8), bbuf.view(np.uint8), cbuf.view(np.uint8)
    oa, ob, oc = km.batch_offsets(*walk)
    a_sr, a_sc = a_mat
    b_sr, b_sc = b_mat
    args = (abuf, bbuf, cbuf, m, n, k, a_sr, a_sc, b_sr, b_sc, oa, ob, oc, as_bool)
    if len(oa) * m * n * k >= _INT_PARALLEL_MIN and threads.get_num_threads() > 1:
        with threads.parallel_guard():
            km.int_matmul_parallel(*args)
    else:
        km.int_matmul(*args)
