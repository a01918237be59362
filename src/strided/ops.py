"""Math on tensors: dtype and shape rules here, the loops in ``strided.kernels``.

Each function decides the result dtype (NumPy's promotion), broadcasts the
operand layouts (stride-0 views, never copies), picks the output layout (the
inputs' memory order) and hands flat buffers and layouts to one kernel.
Half-precision operands are computed in f32 and rounded back: the elementwise
kernels read and write f16/bf16 buffers themselves, converting in registers;
reductions read them in place and accumulate in f32 (only the result is rounded).
"""

from __future__ import annotations

import numbers
from math import prod

import numpy as np

from . import dtype as dt
from .dtype import DType
from .errors import DTypeError, ShapeError, StridedError, StridedIndexError
from .kernels import copy as kcopy
from .kernels import elementwise as kew
from .kernels import index as kindex
from .kernels import reduce as kred
from .layout import Layout
from .layout.layout import broadcast_shapes, norm_dim
from .storage import alloc
from .tensor import _COMPARE, _SMALL_BINARY, Op, Tensor, _tracked, empty, full

# Ops that produce floats from any input (NumPy gives f64 for integer input).
_FLOAT_UNARY = {"exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos", "recip"}
_LOGICAL = {"logical_and", "logical_or"}


def _record(out: Tensor, name: str, inputs: tuple, **ctx) -> Tensor:
    if _tracked(inputs):
        out._op = Op(name, inputs, ctx)
    return out


def _compute(t: Tensor, dtype: DType) -> Tensor:
    """``t`` in the dtype a kernel computes in (a copy only when the dtype differs)."""
    return t if t.dtype is dtype else t.detach().to_dtype(dtype)


def _finish(out: Tensor, want: DType) -> Tensor:
    return out if out.dtype is want else out.to_dtype(want)


def _operands(op: str, values, comp: DType, shape, store: DType | None = None) -> tuple[list, list]:
    """Flat buffers and broadcast layouts of tensors and scalars, as the kernel reads them.

    A tensor that computes in ``comp`` goes as it is (the kernels read f16/bf16
    into f32 registers); others are converted to ``comp``.  A scalar is ``comp``
    (``half * 0.1`` multiplies by the f32 0.1; NumPy would round it to half first).
    With ``store`` (``where``, which moves elements without computing) every
    operand is brought to ``store``, a scalar through ``comp``.  A Python int that ``comp``
    cannot hold is refused (``dtype.scalar_array``)."""
    bufs, lays = [], []
    for x in values:
        if isinstance(x, Tensor):
            if store is not None:
                x = _compute(x, store)
            elif x.dtype.compute is not comp:
                x = _compute(x, comp)
            bufs.append(x._storage.data)
            lays.append(x.layout.broadcast_as(shape))
        else:  # a scalar is one element read through stride-0 dims
            v = dt.scalar_array(op, x, comp)
            bufs.append(v if store is None or store is comp else v.astype(store.np))
            lays.append(Layout((), ()).broadcast_as(shape))
    return bufs, lays


# ---------------------------------------------------------------------------
# elementwise


def unary(op: str, t: Tensor) -> Tensor:
    if op not in kew.UNARY_OPS:
        raise StridedError(f"unary: unknown op {op!r}")
    if op == "not":
        if t.dtype is not dt.bool_:
            raise DTypeError(f"not: expected a bool tensor, got {t.dtype}")
        want = dt.bool_
    elif op in _FLOAT_UNARY:
        want = t.dtype if t.dtype.is_float else dt.f64
    else:
        if t.dtype is dt.bool_ and op in ("neg", "sign"):
            raise DTypeError(f"{op}: not defined for bool tensors")
        want = t.dtype
    comp = want.compute
    src = t if t.dtype.compute is comp else _compute(t, comp)  # f16/bf16 are read as they are
    lay = kew.output_layout(t.shape, src.layout)
    out = _dense(lay, want)
    kew.unary(op, src._storage.data, src.layout, out._storage.data, out.layout)
    return _record(_finish(out, want), op, (t,))


def _dense(lay: Layout, dtype: DType) -> Tensor:
    return Tensor(alloc(lay.numel, dtype.np), lay, dtype)


def _binary_dtypes(op: str, a, b) -> tuple[DType, DType]:
    """(compute dtype of the operands, dtype of the result)."""
    ta = a.dtype if isinstance(a, Tensor) else None
    tb = b.dtype if isinstance(b, Tensor) else None
    if ta is not None and tb is not None:
        common = dt.promote(ta, tb)
    elif ta is not None:
        common = dt.promote_scalar(ta, b)
    else:
        common = dt.promote_scalar(tb, a)
    if op in _LOGICAL:
        return dt.bool_, dt.bool_
    if op == "div" and not common.is_float:
        common = dt.f64  # true division, as NumPy
    if op in _COMPARE:
        return common.compute, dt.bool_
    if common is dt.bool_ and op in ("add", "sub", "mul", "pow"):
        if op == "sub":
            raise DTypeError("sub: subtracting bool tensors is not supported; use logical ops")
        common = dt.bool_ if op != "pow" else dt.i64
    return common.compute, common


# A comparison whose answer holds everywhere: does "x op v" (or "v op x") hold for v above
# every value of the dtype?  The mirrored question for v below every value is its negation,
# except for eq and ne, which never and always hold.
_ABOVE = {"lt": True, "le": True, "gt": False, "ge": False}
_MIRROR = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _int_beyond(op: str, a, b, comp: DType) -> bool | None:
    """The constant result of comparing an integer tensor with a Python int outside its dtype."""
    first = not isinstance(a, Tensor)
    v = a if first else b
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        return None
    info = np.iinfo(comp.np)
    if info.min <= v <= info.max:
        return None
    if op in ("eq", "ne"):
        return op == "ne"
    above = _ABOVE[_MIRROR[op] if first else op]
    return above if v > info.max else not above


def _tensors(*xs) -> tuple:
    return tuple(x for x in xs if isinstance(x, Tensor))


def binary(op: str, a, b) -> Tensor:
    """``a op b`` elementwise, NumPy's broadcasting and promotion; a or b may be a scalar."""
    small = _SMALL_BINARY.get(op)
    return small(a, b) if small is not None else kernel_binary(op, a, b)


def kernel_binary(op: str, a, b) -> Tensor:
    """``binary`` through the kernels: any dtypes, shapes and layouts (the small dense
    same-dtype operands take ``tensor._small_binary``'s NumPy path first)."""
    if op not in kew.BINARY_OPS:
        raise StridedError(f"binary: unknown op {op!r}")
    for x in (a, b):
        if not isinstance(x, (Tensor, numbers.Number, np.generic)):
            raise StridedError(f"{op}: expected a tensor or a scalar operand, got {type(x).__name__}")
    comp, want = _binary_dtypes(op, a, b)
    sa = a.shape if isinstance(a, Tensor) else ()
    sb = b.shape if isinstance(b, Tensor) else ()
    shape = broadcast_shapes(op, sa, sb)
    if op in _COMPARE and comp.kind in "iu":
        beyond = _int_beyond(op, a, b, comp)
        if beyond is not None:  # NumPy 2 compares such ints exactly: the answer is the same everywhere
            return _record(full(shape, beyond, dt.bool_), op, _tensors(a, b), operands=(a, b))
    bufs, lays = _operands(op, (a, b), comp, shape)
    out_dtype = want  # bool for comparisons; a half result is rounded by the kernel
    lay = kew.output_layout(shape, *lays)
    out = _dense(lay, out_dtype)
    kew.binary(op, bufs[0], lays[0], bufs[1], lays[1], out._storage.data, out.layout)
    return _record(_finish(out, want), op, _tensors(a, b), operands=(a, b))


def where(cond, a, b) -> Tensor:
    """``a`` where ``cond`` is true, ``b`` elsewhere, all broadcast together."""
    if not isinstance(cond, Tensor):
        raise StridedError(f"where: expected a tensor condition, got {type(cond).__name__}")
    comp, want = _binary_dtypes("add", a, b) if (isinstance(a, Tensor) or isinstance(b, Tensor)) else (None, None)
    if comp is None:
        want = dt.promote(dt.scalar_dtype(a), dt.scalar_dtype(b))
        want = dt.f32 if want is dt.f64 else want
        comp = want.compute
    shape = broadcast_shapes(
        "where", cond.shape, a.shape if isinstance(a, Tensor) else (), b.shape if isinstance(b, Tensor) else ()
    )
    c = cond if cond.dtype is dt.bool_ else cond.detach().to_dtype(dt.bool_)
    bufs, lays = _operands("where", (a, b), comp, shape, store=want)
    bufs.insert(0, c._storage.data)
    lays.insert(0, c.layout.broadcast_as(shape))
    lay = kew.output_layout(shape, *lays[1:])
    out = _dense(lay, want)
    kew.where(bufs[0], lays[0], bufs[1], lays[1], bufs[2], lays[2], out._storage.data, out.layout)
    return _record(_finish(out, want), "where", _tensors(cond, a, b), operands=(cond, a, b))


# ---------------------------------------------------------------------------
# reductions


def _reduce_dims(op: str, t: Tensor, dim) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(t.ndim))
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    norm = sorted({norm_dim(op, d, t.ndim) for d in dims}) if t.ndim else []
    if not t.ndim and dims not in ((0,), (-1,), ()):
        raise StridedIndexError(f"{op}: dim {dim} out of range for a rank-0 tensor")
    return tuple(norm)


def reduce(op: str, t: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    dims = _reduce_dims(op, t, dim)
    if op in ("max", "min") and any(t.shape[d] == 0 for d in dims):
        raise ShapeError(f"{op}: cannot reduce over a zero-size dim (shape {t.shape}, dims {dims})")
    if op == "mean":
        want = t.dtype if t.dtype.is_float else dt.f64
        acc = want.compute
    elif op == "sum":
        want = t.dtype if t.dtype.is_float else dt.i64
        acc = want.compute
    else:
        want = t.dtype
        acc = want.compute
    # f16/bf16 compute in f32 and go as they are (the kernels decode them as they load);
    # other dtypes that are not the accumulator's (bool or u8 sums, integer means) are converted.
    src = t if t.dtype.compute is acc else _compute(t, acc)
    keep_shape = tuple(1 if d in dims else n for d, n in enumerate(t.shape))
    out = empty(keep_shape, acc)
    kred.reduce("sum" if op == "mean" else op, src._storage.data, src.layout, dims, out._storage.data, out.layout)
    if op == "mean":
        count = 1
        for d in dims:
            count *= t.shape[d]
        out._storage.data[...] /= count if count else np.nan
    # Recorded as the keepdim reduction plus a squeeze view, the structure candle's graph has.
    res = _record(_finish(out, want), op, (t,), dims=dims, keepdim=True)
    return res if keepdim or not dims else res.squeeze(dims)


def arg_reduce(op: str, t: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    if dim is None:
        flat = t.detach().reshape(-1)
        out = arg_reduce(op, flat, 0, False)
        return out.reshape((1,) * t.ndim) if keepdim else out
    d = norm_dim(op, dim, t.ndim)
    if t.shape[d] == 0:
        raise ShapeError(f"{op}: cannot reduce over a zero-size dim (shape {t.shape}, dim {d})")
    src = t  # f16/bf16 too: the kernels decode them as they load
    keep_shape = tuple(1 if k == d else n for k, n in enumerate(t.shape))
    out = empty(keep_shape, dt.i64)
    kred.arg_reduce(op, src._storage.data, src.layout, d, out._storage.data, out.layout)
    if not keepdim:
        out = Tensor(out._storage, out.layout.squeeze(d), dt.i64)
    return out


# ---------------------------------------------------------------------------
# gathering and joining


def _index_array(op: str, index) -> np.ndarray:
    if isinstance(index, Tensor):
        if index.dtype.is_float or index.dtype is dt.bool_:
            raise DTypeError(f"{op}: expected an integer index tensor, got {index.dtype}")
        arr = index.numpy()
    else:
        try:
            arr = np.asarray(index)
        except (TypeError, ValueError):  # ragged nesting
            raise ShapeError(f"{op}: expected a 1-D sequence of integer indices, got {index!r}") from None
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise DTypeError(f"{op}: expected integer indices, got {arr.dtype}")
        if arr.dtype == np.uint64 and arr.max() > np.iinfo(np.int64).max:  # would wrap to a valid negative index
            raise StridedIndexError(f"{op}: index {arr.max()} is out of range")
    if arr.ndim != 1:
        raise ShapeError(f"{op}: expected a 1-D index, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def index_select(t: Tensor, index, dim=0) -> Tensor:
    d = norm_dim("index_select", dim, t.ndim)
    idx = _index_array("index_select", index)
    shape = t.shape[:d] + (len(idx),) + t.shape[d + 1 :]
    out = empty(shape, t.dtype)
    kindex.index_select(out._storage.data, out.layout, t._storage.data, t.layout, d, idx)
    return _record(out, "index_select", (t,), dim=d, index=idx)


def cat(tensors, dim=0) -> Tensor:
    """Join tensors along ``dim``: every input copied into its narrowed slice of the output,
    all of them in one kernel call (``kcopy.ManyCopy``), each by the path its layout needs.

    A model cats the same layout objects step after step, so the whole plan is kept by
    their identities and the inputs' dtypes (the entry holds the layouts: no id is reused
    while it lives).  A call that finds it checks no buffer: the kernel refuses buffers
    that are not what it was planned for."""
    if type(dim) is int and type(tensors) in (list, tuple):
        try:
            hit = _CAT_BY_ID.get((dim, *[id(x.layout) for x in tensors]))
            if hit is not None and tuple([x.dtype for x in tensors]) == hit[0]:
                _, numel, want, many, d, sizes, out_lay = hit[:7]
                store = alloc(numel, want.np, "cat")
                if many is None or many.run(store.data, [x._storage.data for x in tensors]):
                    out = Tensor(store, out_lay, want)
                    if _tracked(tensors):
                        out._op = Op("cat", tuple(tensors), {"dim": d, "sizes": sizes})
                    return out
        except AttributeError:  # not tensors: the checks below say so
            pass
    if isinstance(tensors, Tensor) or not hasattr(tensors, "__iter__"):
        raise StridedError(f"cat: expected a sequence of tensors, got {type(tensors).__name__}")
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("cat: expected a non-empty sequence of tensors")
    for x in tensors:
        if not isinstance(x, Tensor):
            raise StridedError(f"cat: expected tensors, got {type(x).__name__}")
    src_lays = tuple([x.layout for x in tensors])
    dtypes = tuple([x.dtype for x in tensors])
    d = norm_dim("cat", dim, src_lays[0].ndim)
    out_lay, want, sizes = _cat_plan(d, src_lays, dtypes)
    out = Tensor(alloc(out_lay.numel, want.np, "cat"), out_lay, want)
    many = None
    if out_lay.numel:
        bufs = tuple([x._storage.data for x in tensors])
        many = _dense_cat(d, out_lay.shape, src_lays, sizes, out._storage.data, bufs) or kcopy.ManyCopy(
            "cat", out._storage.data, _cat_slices(out_lay, d, sizes), bufs, src_lays
        )
        if not many.run(out._storage.data, bufs):
            raise StridedError("cat: the copy kernel refused the buffers it was planned for")
    if type(dim) is int:
        if len(_CAT_BY_ID) >= 256:
            _CAT_BY_ID.clear()
        _CAT_BY_ID[(dim, *map(id, src_lays))] = (dtypes, out_lay.numel, want, many, d, sizes, out_lay, src_lays)
    return _record(out, "cat", tensors, dim=d, sizes=sizes)


_CAT_BY_ID: dict = {}


def _cat_plan(d: int, layouts: tuple, dtypes: tuple):
    """(output layout, output dtype, the sizes along dim ``d``)."""
    first = layouts[0]
    head, tail = first.shape[:d], first.shape[d + 1 :]
    for lay in layouts:
        shape = lay.shape
        if len(shape) != len(first.shape) or shape[:d] != head or shape[d + 1 :] != tail:
            raise ShapeError(
                f"cat: shapes must match except in dim {d}, got {' and '.join(str(l.shape) for l in layouts)}"
            )
    want = dtypes[0]
    for x in dtypes[1:]:
        want = dt.promote(want, x)
    sizes = tuple(lay.shape[d] for lay in layouts)
    return Layout.contiguous(head + (sum(sizes),) + tail), want, sizes


def _cat_slices(out: Layout, d: int, sizes: tuple) -> tuple:
    """Each input's slice of the output."""
    starts = [0]
    for n in sizes:
        starts.append(starts[-1] + n)
    return tuple(out.narrow(d, a, n) for a, n in zip(starts, sizes))


def _dense_cat(d: int, shape: tuple, layouts: tuple, sizes: tuple, dst, bufs) -> kcopy.ManyCopy | None:
    """cat of dense inputs as candle does it, with no layout arithmetic: input i is
    ``outer`` rows of ``sizes[i] * inner`` elements, one row in every output row of
    ``total * inner``.  This is what a growing KV cache pays every step, on new shapes
    that no cache has seen.  None when an input is not dense (the kernels' general
    planning takes it)."""
    for lay in layouts:
        if not lay.is_contiguous():
            return None
    outer, inner = prod(shape[:d]), prod(shape[d + 1 :])
    row = shape[d] * inner
    specs, start = [], 0
    for lay, n in zip(layouts, sizes):
        specs.append((start * inner, row, lay.offset, outer, n * inner))
        start += n
    return kcopy.ManyCopy.dense_rows("cat", dst, bufs, specs)
