"""Elementwise ops: result dtypes, broadcasting and output order here, the loops in the
backend's ``elementwise`` family.

Each call decides the result dtype (NumPy's promotion, the registry's dtype
rule), broadcasts the operand layouts (stride-0 views, never copies), picks the
output layout (the inputs' memory order) and hands flat buffers and layouts to
one kernel.  Half-precision operands go as they are: the kernels read f16/bf16
into f32 registers and round each result once.

One dispatch per call.  What a call decides depends only on the op, the
operand layouts, dtypes and devices (and the thread count), so the decision is
kept under those values (``caches``): a repeated op on new tensors with seen
layouts costs one lookup, the buffer checks against the kept reach, the
allocation and the kernel call.  A miss, or anything the kept decision does not
cover (a conversion, a scalar out of its fast range), takes the full path,
which checks everything and says what is wrong.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core import caches
from ..core import dtype as dt
from ..backend import BACKENDS, HOST, alloc_on, common_device
from ..creation import full
from ..core.dtype import DType
from ..core.errors import DTypeError, StridedError
from ..interop import NotNumeric, operand
from ..layout import Layout
from ..layout.layout import broadcast_shapes
from ..core.storage import wrap
from ..tensor import Op, Tensor, record, trace_hook
from .copies import to_dtype
from .kept import Kept
from .registry import REGISTRY

COMPARE = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_SCALAR = Layout((), ())

# (op, layouts' serials, dtypes' names, devices) -> what the call decided; see ``_remember``.
# Serials and names, not the Layout and DType objects: their hashes and equality are
# Python calls, and this lookup is on the path of every small op.
_BOUND = caches.cache("ops.elementwise", "op name, operand layout serials (or scalar types), dtype names, devices",
                      4096, threads=True)


def _kernels(op: str, *tensors):
    return BACKENDS[common_device(op, *[t._storage for t in tensors])]


def _compute(t: Tensor, dtype: DType) -> Tensor:
    """``t`` in the dtype a kernel computes in (a copy only when the dtype differs)."""
    return t if t.dtype is dtype else to_dtype(t.detach(), dtype)


def _dense(lay: Layout, dtype: DType, device: str) -> Tensor:
    store = alloc_on(device, lay.numel, dtype.np)
    return Tensor(store, lay, dtype)


def _tensors(*xs) -> tuple:
    return tuple(x for x in xs if isinstance(x, Tensor))


def _intake(op: str, values: tuple) -> tuple:
    """The operands of ``op`` with every foreign array (NumPy arrays and scalars, sequences,
    DLPack and array-interface objects) a tensor beside the tensors among them, on their device
    (``interop.operand``: a view of the array's memory where its layout allows)."""
    ts = _tensors(*values)
    device = ts[0]._storage.device if ts else HOST
    return tuple(operand(op, x, device) for x in values)


_NO = object()
_NDARRAY_UFUNC = np.ndarray.__array_ufunc__


def _defers(x) -> bool:
    """Whether ``tensor op x`` is left to ``x``'s reflected operator, as NumPy's operators leave
    it: ``x`` takes part in NumPy's dispatch itself (a Dask or xarray array, a pandas Series:
    its own ``__array_ufunc__``, None included), or is an ndarray subclass of higher
    ``__array_priority__`` (a masked array).  A reflected operator never defers: ``x`` had its turn."""
    if isinstance(x, (Tensor, numbers.Number, np.generic, list, tuple)) or type(x) is np.ndarray:
        return False
    ufunc = getattr(type(x), "__array_ufunc__", _NO)
    if ufunc is not _NO and ufunc is not _NDARRAY_UFUNC:
        return True
    ours = getattr(Tensor, "__array_priority__", 0.0)
    return isinstance(x, np.ndarray) and getattr(x, "__array_priority__", 0.0) > ours


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
            lays.append(_SCALAR.broadcast_as(shape))
    return bufs, lays


# ---------------------------------------------------------------------------
# the kept decisions


def _remember(key, out: Tensor, prepared, bufs: list) -> None:
    """Keep what this call decided: the kernel call the backend prepared for it (its layouts
    checked once), and what each input buffer must be for it.  Only calls whose operands went
    to the kernel as they came (no conversion) are kept."""
    if prepared is not None:
        run, reach = prepared
        _BOUND.put(key, Kept(run, reach[1:], [b.dtype for b in bufs], out.layout, out.dtype,
                             out._storage.device, out._storage.data.dtype))


# Python scalars that convert exactly and silently on the kept path; others take the full
# path (which rounds them as it always has, or refuses them).
_EXACT_INT = 1 << 53
_F32_MAX = float(np.finfo(np.float32).max)


def _scalar_buffer(x, np_dtype):
    if type(x) is float:
        if np_dtype is _F32 and not (-_F32_MAX <= x <= _F32_MAX):
            return None  # beyond f32 (or NaN): the full path rounds it under errstate
        return np.array((x,), np_dtype)
    if -_EXACT_INT < x < _EXACT_INT and (np_dtype.kind == "f" or np_dtype is _I64):
        return np.array((x,), np_dtype)
    return None


_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


# ---------------------------------------------------------------------------
# unary


def unary_fn(op: str):
    """``op`` as a function of one tensor: the kept decision when there is one, else ``kernel_unary``.
    Tensor's methods are these functions themselves (one Python frame per call)."""
    bound, slow = _BOUND, kernel_unary

    def fn(t):
        if isinstance(t, Tensor):
            s = t._storage
            lay = t.layout
            e = bound.get((op, lay._serial or lay.serial(), t.dtype.name, s.device))
            if e is not None:
                d = s.data
                if len(d) >= e.reach[0] and d.dtype is e.types[0]:
                    out = e.result(Op(op, (t,), {}) if t._is_var or t._op is not None else None)
                    e.run(out._storage.data, d)
                    return out
        return slow(op, t)

    fn.__name__ = fn.__qualname__ = op
    return fn


def unary(op: str, t: Tensor) -> Tensor:
    """``op(t)`` elementwise, by the op's dtype rule."""
    fn = _UNARY_FNS.get(op)
    return fn(t) if fn is not None else kernel_unary(op, t)


def unary_dtypes(op: str, dtype: DType) -> tuple[DType, DType]:
    """(compute dtype, result dtype) of ``op`` on a tensor of ``dtype``, by the op's dtype rule
    (complex ``abs`` is a real hypot: ``kernel_unary`` computes it apart)."""
    rule = REGISTRY[op].dtype_rule
    if rule == "bool":
        if dtype is not dt.bool_:
            raise DTypeError(f"{op}: expected a bool tensor, got {dtype}")
        want = dt.bool_
    elif rule == "float":
        want = dtype if dtype.kind in "fc" else dt.f64
    else:
        if dtype is dt.bool_ and op in ("neg", "sign"):
            raise DTypeError(f"{op}: not defined for bool tensors")
        want = dtype
    return dt.kernel_dtype(want), want


def kernel_unary(op: str, t: Tensor) -> Tensor:
    spec = REGISTRY.get(op)
    if spec is None or spec.family != "unary":
        raise StridedError(f"unary: unknown op {op!r}")
    if not isinstance(t, Tensor):
        got = trace_hook("unary", op, (t,))
        if got is not NotImplemented:
            return got
        raise StridedError(f"{op}: expected a tensor, got {type(t).__name__}")
    if op == "abs" and t.dtype.is_complex:
        return record(_complex_abs(t), op, (t,))
    comp, want = unary_dtypes(op, t.dtype)
    src = t if t.dtype.compute is comp else _compute(t, comp)  # f16/bf16 are read as they are
    K = _kernels(op, src)
    lay = K.elementwise.output_layout(t.shape, src.layout)
    out = _dense(lay, dt.WIDENED.get(want, want), src._storage.device)
    keep = src is t and out.dtype is want  # kept: the operand went to the kernel as it came
    prepared = K.elementwise.unary(spec.kernel, src._storage.data, src.layout, out._storage.data, out.layout, keep)
    if out.dtype is not want:
        return record(to_dtype(out, want), op, (t,))
    if keep:
        _remember((op, t.layout.serial(), t.dtype.name, t._storage.device), out, prepared, [t._storage.data])
    return record(out, op, (t,))


def complex_part(t: Tensor, part: int) -> Tensor:
    """The real (part 0) or imaginary (part 1) elements of a complex tensor, as a view: a complex
    buffer is pairs of reals, so a part is the real buffer at twice the strides."""
    if not t.dtype.is_complex:
        raise DTypeError(f"{('real', 'imag')[part]}: expected a complex tensor, got {t.dtype}")
    if not BACKENDS[t._storage.device].HOST_MEMORY:
        raise StridedError(f"{('real', 'imag')[part]}: complex parts are views of host memory, got a tensor on "
                           f"{t._storage.device}")
    real = t.dtype.real
    lay = t.layout
    store = wrap(t._storage.data.view(real.np))
    return Tensor(store, Layout(lay.shape, tuple(2 * s for s in lay.stride), 2 * lay.offset + part), real)


def _complex_abs(t: Tensor) -> Tensor:
    # |z| is hypot(re, im), as NumPy computes it: no overflow for large parts
    return kernel_binary("hypot", complex_part(t.detach(), 0), complex_part(t.detach(), 1))


# ---------------------------------------------------------------------------
# binary


def binary_dtypes(op: str, a, b) -> tuple[DType, DType]:
    """(compute dtype of the operands, dtype of the result)."""
    ta = a.dtype if isinstance(a, Tensor) else None
    tb = b.dtype if isinstance(b, Tensor) else None
    if ta is not None and tb is not None:
        common = dt.promote(ta, tb)
    elif ta is not None:
        common = dt.promote_scalar(ta, b)
    else:
        common = dt.promote_scalar(tb, a)
    rule = REGISTRY[op].dtype_rule
    if rule == "bool":
        return dt.bool_, dt.bool_
    if rule == "true_div" and common.kind not in "fc":
        common = dt.f64  # true division, as NumPy
    if rule == "compare":
        return dt.kernel_dtype(common), dt.bool_
    if common is dt.bool_ and op in ("add", "sub", "mul", "pow"):
        if op == "sub":
            raise DTypeError("sub: subtracting bool tensors is not supported; use logical ops")
        common = dt.bool_ if op != "pow" else dt.i64
    return dt.kernel_dtype(common), common


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


def binary_fn(op: str, operator: bool = False):
    """``op`` as a function of two operands (tensors, scalars or arrays): the kept decision
    when there is one, else ``kernel_binary``.  Tensor's methods are these functions; its
    operators (``operator=True``) first leave ``tensor op x`` to an ``x`` that defers (``_defers``)."""
    bound, slow = _BOUND, (_operator_binary if operator else kernel_binary)

    def fn(a, b):
        if isinstance(a, Tensor):
            sa, la = a._storage, a.layout
            if isinstance(b, Tensor):
                sb, lb = b._storage, b.layout
                e = bound.get((op, la._serial or la.serial(), lb._serial or lb.serial(), a.dtype.name, b.dtype.name,
                               sa.device, sb.device))
                if e is not None:
                    da, db = sa.data, sb.data
                    reach, types = e.reach, e.types
                    if len(da) >= reach[0] and len(db) >= reach[1] and da.dtype is types[0] and db.dtype is types[1]:
                        out = e.result(Op(op, (a, b), {"operands": (a, b)})
                                       if a._is_var or b._is_var or a._op is not None or b._op is not None else None)
                        e.run(out._storage.data, da, db)
                        return out
                return slow(op, a, b)
            if type(b) is not float and type(b) is not int:
                return slow(op, a, b)
            t, x, i = a, b, 0  # the tensor, the Python scalar, the tensor's place
            e = bound.get((op, la._serial or la.serial(), type(b), a.dtype.name, sa.device))
        elif isinstance(b, Tensor) and (type(a) is float or type(a) is int):
            t, x, i, lb = b, a, 1, b.layout
            e = bound.get((op, type(a), lb._serial or lb.serial(), b.dtype.name, b._storage.device))
        else:
            return slow(op, a, b)
        if e is not None:
            d = t._storage.data
            v = _scalar_buffer(x, e.types[1 - i])
            if v is not None and len(d) >= e.reach[i] and d.dtype is e.types[i]:
                out = e.result(Op(op, (t,), {"operands": (a, b)}) if t._is_var or t._op is not None else None)
                if i:
                    e.run(out._storage.data, v, d)
                else:
                    e.run(out._storage.data, d, v)
                return out
        return slow(op, a, b)

    fn.__name__ = fn.__qualname__ = op
    return fn


def _operator_binary(op: str, a, b):
    return NotImplemented if _defers(b) else kernel_binary(op, a, b)


def binary(op: str, a, b) -> Tensor:
    """``a op b`` elementwise, NumPy's broadcasting and promotion; a or b may be a scalar."""
    fn = _BINARY_FNS.get(op)
    return fn(a, b) if fn is not None else kernel_binary(op, a, b)


def kernel_binary(op: str, a, b) -> Tensor:
    """``binary`` with every check: any dtypes, shapes, layouts and scalars."""
    spec = REGISTRY.get(op)
    if spec is None or spec.family != "binary":
        raise StridedError(f"binary: unknown op {op!r}")
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        got = trace_hook("binary", op, (a, b))
        if got is not NotImplemented:
            return got
        try:
            a, b = _intake(op, (a, b))
        except NotNumeric as e:
            if op not in ("eq", "ne"):
                raise
            # NumPy's answer for None, strings and objects: never equal, elementwise
            ts = _tensors(a, b)
            shape = broadcast_shapes(op, *[t.shape for t in ts], e.shape)
            return full(shape, op == "ne", dt.bool_, device=ts[0]._storage.device if ts else None)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise StridedError(f"{op}: expected a tensor or an array among the operands, got "
                               f"{type(a).__name__} and {type(b).__name__}")
    comp, want = binary_dtypes(op, a, b)
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    sa = a.shape if ta else ()
    sb = b.shape if tb else ()
    shape = broadcast_shapes(op, sa, sb)
    tensors = _tensors(a, b)
    K = _kernels(op, *tensors)
    if op in COMPARE and comp.kind in "iu":
        beyond = _int_beyond(op, a, b, comp)
        if beyond is not None:  # NumPy 2 compares such ints exactly: the answer is the same everywhere
            return record(full(shape, beyond, dt.bool_), op, tensors, operands=(a, b))
    bufs, lays = _operands(op, (a, b), comp, shape)
    lay = K.elementwise.output_layout(shape, *lays)
    # bool for comparisons; a half result is rounded by the kernel, a 16-bit integer one
    # computed in 32 bits and narrowed here.  On the operands' device (``_kernels`` checked
    # that they share one).
    out = _dense(lay, dt.WIDENED.get(want, want), tensors[0]._storage.device)
    key = None  # kept: operands that went to the kernel as they came, under a key a kept call can find
    if out.dtype is want and (not ta or a.dtype.compute is comp) and (not tb or b.dtype.compute is comp):
        if ta and tb:
            key = (op, a.layout.serial(), b.layout.serial(), a.dtype.name, b.dtype.name, a._storage.device,
                   b._storage.device)
        elif ta and type(b) in (float, int):
            key = (op, a.layout.serial(), type(b), a.dtype.name, a._storage.device)
        elif tb and type(a) in (float, int):
            key = (op, type(a), b.layout.serial(), b.dtype.name, b._storage.device)
    prepared = K.elementwise.binary(spec.kernel, bufs[0], lays[0], bufs[1], lays[1], out._storage.data, out.layout,
                                    key is not None)
    if out.dtype is not want:
        return record(to_dtype(out, want), op, tensors, operands=(a, b))
    if key is not None:
        _remember(key, out, prepared, bufs)
    return record(out, op, tensors, operands=(a, b))


_UNARY_FNS = caches.table("ops.elementwise.unary_functions", "op name")
_BINARY_FNS = caches.table("ops.elementwise.binary_functions", "op name")
_OPERATOR_FNS = caches.table("ops.elementwise.operator_functions", "op name")


def install(kind: str, op: str):
    """The function of a registered elementwise op (made once, kept for ``unary``/``binary``);
    ``kind`` "operator" gives the binary op's operator (``__add__``), which may defer."""
    table, make = {"unary": (_UNARY_FNS, unary_fn), "binary": (_BINARY_FNS, binary_fn),
                   "operator": (_OPERATOR_FNS, lambda o: binary_fn(o, operator=True))}[kind]
    fn = table.get(op)
    if fn is None:
        fn = table[op] = make(op)
    return fn


# ---------------------------------------------------------------------------
# where


def where(cond, a, b) -> Tensor:
    """``a`` where ``cond`` is true, ``b`` elsewhere, all broadcast together."""
    if not (isinstance(cond, Tensor) and isinstance(a, Tensor) and isinstance(b, Tensor)):
        got = trace_hook("where", "where", (cond, a, b))
        if got is not NotImplemented:
            return got
        cond, a, b = _intake("where", (cond, a, b))
    if not isinstance(cond, Tensor):
        raise StridedError(f"where: expected a tensor or an array condition, got {type(cond).__name__}")
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        comp, want = binary_dtypes("add", a, b)
    else:
        want = dt.promote(dt.scalar_dtype(a), dt.scalar_dtype(b))
        want = {dt.f64: dt.DEFAULT_FLOAT, dt.c128: dt.DEFAULT_COMPLEX}.get(want, want)
        comp = want.compute
    shape = broadcast_shapes(
        "where", cond.shape, a.shape if isinstance(a, Tensor) else (), b.shape if isinstance(b, Tensor) else ()
    )
    tensors = _tensors(cond, a, b)
    K = _kernels("where", *tensors)
    c = cond if cond.dtype is dt.bool_ else to_dtype(cond.detach(), dt.bool_)
    bufs, lays = _operands("where", (a, b), comp, shape, store=want)
    bufs.insert(0, c._storage.data)
    lays.insert(0, c.layout.broadcast_as(shape))
    lay = K.elementwise.output_layout(shape, *lays[1:])
    out = _dense(lay, want, tensors[0]._storage.device)
    K.elementwise.where(bufs[0], lays[0], bufs[1], lays[1], bufs[2], lays[2], out._storage.data, out.layout)
    return record(out, "where", tensors, operands=(cond, a, b))
