"""Matrix products: NumPy's matmul semantics over operands of any layout.

Shapes follow ``numpy.matmul``: a 1-D lhs is a row (its dim is dropped from the
result), a 1-D rhs a column, every dim before the last two is a batch dim, and
batch dims broadcast.  Rank 0 operands are refused, as NumPy does.

Which path runs, the batch walk and the threads are the kernel's
(``strided.kernels.matmul``, whose docstring has the path table): this module
hands it the operands' buffers and layouts as integers.  Floats go to BLAS on the
operands' own buffers (packed only where BLAS cannot describe a matrix, counted
in ``stats``); integers run a loop kernel that wraps like NumPy; bool is the
logical or of ands.  f16 and bf16 operands are converted to f32 (a copy that
cannot be avoided), the product is computed in f32 and rounded once here to the
input dtype.

The result is always a fresh row-major tensor.  Differing dtypes promote as the
Array API's matmul and every binary op do (``dtype.promote``); ``promote=False`` is
candle's rule, which ``Tensor.matmul`` keeps: differing dtypes are a DTypeError.
"""

from __future__ import annotations

import numpy as np

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS, alloc_on, common_device
from ..core.dtype import DType
from ..core.errors import DTypeError, ShapeError, StridedError
from ..kernels.matmul import stats  # noqa: F401  (operands read in place / packed, for tests)
from ..layout import Layout
from ..layout.layout import broadcast_shapes, contiguous_layout
from ..core.storage import alloc
from ..creation import from_numpy
from .kept import Kept
from ..tensor import Op, Tensor, trace_hook, tracked as _tracked


# A product's decision, kept under the operands' layouts, dtypes and devices as the
# elementwise ops keep theirs (see strided.caches): a repeat checks each buffer against the
# kept reach, allocates and runs the planned gemms.
_KEPT = caches.cache("linalg.matmul", "operand layout serials, dtype names, devices", 1024, threads=True)


def matmul(a, b, *, promote: bool = True, _chunk: int | None = None) -> Tensor:
    """``a @ b`` with NumPy's shape rules; see the module docstring for the paths."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and _chunk is None:
        sa, sb, la, lb = a._storage, b._storage, a.layout, b.layout
        e = _KEPT.get((la._serial or la.serial(), lb._serial or lb.serial(), a.dtype.name, b.dtype.name, sa.device,
                       sb.device))
        if e is not None:
            da, db = sa.data, sb.data
            reach, types = e.reach, e.types
            if len(da) >= reach[0] and len(db) >= reach[1] and da.dtype is types[0] and db.dtype is types[1]:
                out = e.result(Op("matmul", (a, b), {"promote": promote})
                               if a._is_var or b._is_var or a._op is not None or b._op is not None else None)
                e.run(da, db, out._storage.data)
                return out
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        got = trace_hook("matmul", "matmul", (a, b))
        if got is not NotImplemented:
            return got
    a = _operand(a, "lhs")
    b = _operand(b, "rhs")
    device = common_device("matmul", a._storage, b._storage)
    out_shape, want = matmul_result(a.shape, b.shape, a.dtype, b.dtype, promote)
    a_nd, b_nd = len(a.layout.shape), len(b.layout.shape)  # used often below: properties cost
    if want.is_complex:
        return _complex_matmul(a, b, want, promote)
    # The integer kernel is compiled for i64, u32, u8 and bool; the other integers compute in
    # i64 and are narrowed, which wraps to the same bits as their own arithmetic would.
    comp = dt.i64 if want.kind in "iu" and want not in (dt.i64, dt.u32, dt.u8) else want.compute
    K = BACKENDS[device]
    if K.HALF_MATMUL and want in (dt.f16, dt.bf16):
        comp = want  # a GPU multiplies them as they are, summing in f32 (strided.cuda.matmul)
    abuf, alay = _buffer(a, comp, K.HOST_MEMORY)
    bbuf, blay = _buffer(b, comp, K.HOST_MEMORY)

    # Plain tuples from here on: building Layout objects costs more than a small gemm.
    a_shape, a_stride = alay.shape, alay.stride
    b_shape, b_stride = blay.shape, blay.stride
    if a_nd == 1:  # a row; its (size-1) row stride is never used
        a_shape, a_stride = (1,) + a_shape, (0,) + a_stride
    if b_nd == 1:  # a column
        b_shape, b_stride = b_shape + (1,), b_stride + (0,)
    m, n = a_shape[-2], b_shape[-1]
    batch = out_shape[: len(out_shape) - (a_nd > 1) - (b_nd > 1)]

    numel = m * n
    for d in batch:
        numel *= d
    store = alloc_on(device, numel, comp.np, "matmul")
    cbuf = store.data
    # The kernel checks both layouts against their buffers before it reads anything.
    a_lay, b_lay = (a_shape, a_stride, alay.offset), (b_shape, b_stride, blay.offset)
    # Kept: a host product of the operands' own buffers, rounded or narrowed nowhere.
    keep = bool(K.HOST_MEMORY and want is comp and abuf is a._storage.data and bbuf is b._storage.data
                and _chunk is None and numel)
    got = K.matmul.matmul(abuf, a_lay, bbuf, b_lay, cbuf, chunk=_chunk, keep=keep)
    if keep and got is not None:
        run, reach = got
        _KEPT.put((a.layout.serial(), b.layout.serial(), a.dtype.name, b.dtype.name, a._storage.device,
                   b._storage.device),
                  Kept(run, reach[:2], (comp.np, comp.np), contiguous_layout(out_shape), want, device))

    if want is not comp and not K.HOST_MEMORY:  # narrowed on the device
        store = Tensor(store, contiguous_layout(out_shape), comp).to_dtype(want)._storage
    elif want is not comp:  # f16/bf16: computed in f32, rounded once here; other ints narrowed
        rounded = alloc(numel, want.np, "matmul")
        with np.errstate(over="ignore"):  # beyond the half range the rounding is inf, as in PyTorch
            np.copyto(rounded.data, cbuf, casting="unsafe")  # round to nearest even
        store = rounded
    out = Tensor(store, contiguous_layout(out_shape), want)  # row-major
    if _tracked((a, b)):
        out._op = Op("matmul", (a, b), {"promote": promote})
    return out


def matmul_result(a_shape: tuple, b_shape: tuple, a_dtype: DType, b_dtype: DType, promote: bool = True):
    """(shape, dtype) of ``a @ b`` for operands of these shapes and dtypes, by NumPy's rules;
    the ShapeError or DTypeError matmul raises where there is none."""
    if a_dtype is not b_dtype:
        if not promote:
            raise DTypeError(
                f"matmul: expected both operands to have the same dtype, got lhs {a_dtype} and "
                f"rhs {b_dtype} (the @ operator and strided.matmul promote them)"
            )
        want = dt.promote(a_dtype, b_dtype)
    else:
        want = a_dtype
    if not a_shape or not b_shape:
        raise ShapeError(
            f"matmul: shape mismatch in matmul, lhs {a_shape} and rhs {b_shape}: "
            "both operands need at least 1 dim (use * to multiply by a scalar)"
        )
    sa = (1,) + a_shape if len(a_shape) == 1 else a_shape
    sb = b_shape + (1,) if len(b_shape) == 1 else b_shape
    m, k = sa[-2:]
    kb, n = sb[-2:]
    if k != kb:
        raise ShapeError(
            f"matmul: shape mismatch in matmul, lhs {a_shape} and rhs {b_shape}: "
            f"lhs has {k} columns but rhs has {kb} rows"
        )
    a_batch, b_batch = sa[:-2], sb[:-2]
    if a_batch == b_batch:
        batch = a_batch
    else:
        try:
            batch = broadcast_shapes("matmul", a_batch, b_batch)
        except ShapeError:
            raise ShapeError(
                f"matmul: shape mismatch in matmul, lhs {a_shape} and rhs {b_shape}: "
                f"batch dims {a_batch} and {b_batch} do not broadcast"
            ) from None
    return batch + ((m,) if len(a_shape) > 1 else ()) + ((n,) if len(b_shape) > 1 else ()), want


def _complex_matmul(a: Tensor, b: Tensor, want: DType, promote: bool) -> Tensor:
    """A complex product through NumPy's matmul (its BLAS zgemm/cgemm): the shape rules
    are NumPy's, which the real path follows too."""
    try:
        c = np.matmul(a.numpy().astype(want.np, copy=False), b.numpy().astype(want.np, copy=False))
    except ValueError as e:
        raise ShapeError(f"matmul: shape mismatch in matmul, lhs {a.shape} and rhs {b.shape}: {e}") from None
    out = from_numpy(np.ascontiguousarray(c))
    if _tracked((a, b)):
        out._op = Op("matmul", (a, b), {"promote": promote})
    return out


def _operand(x, side: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return from_numpy(x)
    raise StridedError(f"matmul: expected a tensor as {side}, got {type(x).__name__}")


def _buffer(t: Tensor, comp: DType, host: bool) -> tuple[np.ndarray, Layout]:
    """The flat buffer and layout a kernel reads: the tensor's own unless the dtype differs
    (``host``: its backend's buffers are host memory, which NumPy converts)."""
    if t.dtype is comp:
        return t._storage.data, t.layout
    if not host:  # converted on its device
        c = t.to_dtype(comp)
        return c._storage.data, c.layout
    # A conversion has to copy anyway; it produces a dense row-major operand.
    arr = np.ascontiguousarray(t.numpy(), dtype=comp.np)
    return arr.reshape(-1), Layout.contiguous(t.shape)

