"""Tensor: a Storage (shared 1-D buffer) seen through a Layout, plus what produced it.

Views build a new Layout over the same Storage; copies and math allocate a new
Storage and hand both layouts to a kernel.  An op is recorded (for autograd)
only when one of its inputs is tracked: a Var, or the result of a recorded op.
"""

from __future__ import annotations

import numbers
from math import ceil, isfinite, prod

import numpy as np

from . import dtype as dt
from .dtype import DType
from .errors import DTypeError, ShapeError, StridedError, StridedIndexError
from .layout import Layout
from .layout.layout import _contiguous, _int_tuple, contiguous_strides, norm_dim
from .storage import Storage, alloc, check_size, wrap


class Op:
    """How a tensor was made: the op's name, its tensor inputs and what backward needs."""

    __slots__ = ("name", "inputs", "ctx")

    def __init__(self, name: str, inputs: tuple, ctx: dict):
        self.name = name
        self.inputs = inputs
        self.ctx = ctx

    def __repr__(self):
        return f"Op({self.name}, {len(self.inputs)} inputs)"


_OPS = None


def _ops():
    """The op layer (it imports this module, so it is fetched on first use, then kept)."""
    global _OPS
    if _OPS is None:
        from . import ops

        _OPS = ops
    return _OPS


_LINALG = None


def _linalg():
    global _LINALG
    if _LINALG is None:
        from . import linalg

        _LINALG = linalg
    return _LINALG


def _tracked(inputs) -> bool:
    for t in inputs:  # a plain loop: any() over a generator costs more than the ops it guards
        if isinstance(t, Tensor) and (t._is_var or t._op is not None):
            return True
    return False


# ---------------------------------------------------------------------------
# Small binary ops.  Tiny dense same-dtype same-shape operands go straight to NumPy's
# ufunc on their flat buffers (the same results: same dtypes, same IEEE ops): on 4
# elements the kernels' layout planning and numba call would cost far more than the
# loop, and every call and allocation is the whole cost.  So the arithmetic and
# comparison methods of Tensor are these functions themselves, one frame per op, and
# anything else goes on to ``ops.kernel_binary``.

_SMALL = 4096
_SMALL_UFUNCS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}
_COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
_NATIVE = {dt.f32, dt.f64, dt.i64, dt.u32, dt.u8}
_SMALL_PLANS: dict = {}
_new = object.__new__


def _small_plan(shape: tuple) -> tuple | None:
    """(element count, dense layout) of a shape the small path takes; None when it is too big.
    Called when ``_SMALL_PLANS`` has no entry: kept per shape, so a stream of small ops
    computes neither again."""
    n = prod(shape)
    if n > _SMALL:
        return None
    if len(_SMALL_PLANS) >= 1024:
        _SMALL_PLANS.clear()
    plan = _SMALL_PLANS[shape] = (n, _contiguous(shape))
    return plan


def _dense_run(lay: Layout, buf, n: int, dense: Layout):
    """The elements of a dense view of ``dense``'s shape as one flat run of ``buf``, or None."""
    if lay.shape != dense.shape or not (lay.stride == dense.stride or lay.is_contiguous()):
        return None
    o = lay.offset
    if o < 0 or o + n > len(buf):
        return None
    return buf if not o and len(buf) == n else buf[o : o + n]


def _small_binary(op: str):
    ufunc, bool_out = _SMALL_UFUNCS[op], op in _COMPARE

    def small(a, b):
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            la, lb = a.layout, b.layout
            plan = _SMALL_PLANS.get(la.shape) or _small_plan(la.shape)
            dtype = a.dtype
            if plan is not None and dtype is b.dtype and dtype in _NATIVE:
                # Fresh results, these results and from_numpy's dense arrays share one
                # layout object per shape (``_contiguous``): for them the check is identity.
                n, dense = plan
                da, db = a._storage.data, b._storage.data
                if la is not dense or lb is not dense or len(da) != n or len(db) != n:
                    da = _dense_run(la, da, n, dense)
                    db = _dense_run(lb, db, n, dense) if da is not None else None
                if db is not None:
                    # Assembled slot by slot: two __init__ frames would be a tenth of the op.
                    storage = _new(Storage)
                    storage.data = ufunc(da, db)  # same-dtype ufuncs keep the dtype, as the kernels do
                    out = _new(Tensor)
                    out._storage, out.layout, out.dtype = storage, dense, dt.bool_ if bool_out else dtype
                    out._is_var = False
                    if a._is_var or b._is_var or a._op is not None or b._op is not None:  # ops._record's rule
                        out._op = Op(op, (a, b), {"operands": (a, b)})
                    else:
                        out._op = None
                    return out
        return (_OPS or _ops()).kernel_binary(op, a, b)

    small.__name__ = small.__qualname__ = op
    return small


_SMALL_BINARY = {op: _small_binary(op) for op in _SMALL_UFUNCS}


class Tensor:
    __slots__ = ("_storage", "layout", "dtype", "_op", "_is_var", "__weakref__")

    def __init__(self, storage: Storage, layout: Layout, dtype: DType, op: Op | None = None):
        self._storage = storage
        self.layout = layout
        self.dtype = dtype
        self._op = op
        self._is_var = False

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.layout.shape

    @property
    def stride(self) -> tuple[int, ...]:
        return self.layout.stride

    @property
    def offset(self) -> int:
        return self.layout.offset

    @property
    def ndim(self) -> int:
        return self.layout.ndim

    @property
    def numel(self) -> int:
        return self.layout.numel

    def dims(self) -> tuple[int, ...]:
        return self.layout.shape

    def __len__(self) -> int:
        if not self.ndim:
            raise StridedError("len: a rank-0 tensor has no length")
        return self.shape[0]

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def buffer_nbytes(self) -> int:
        """Bytes of the whole buffer behind this tensor (not just the viewed elements)."""
        return self._storage.nbytes

    def is_contiguous(self) -> bool:
        return self.layout.is_contiguous()

    # -- autograd hooks ---------------------------------------------------
    def track_op(self) -> bool:
        return self._is_var or self._op is not None

    def is_variable(self) -> bool:
        return self._is_var

    def detach(self) -> "Tensor":
        """The same buffer and layout, cut from the graph."""
        return Tensor(self._storage, self.layout, self.dtype)

    def backward(self):
        from .autograd import backward

        return backward(self)

    def _result(self, storage: Storage, layout: Layout, dtype: DType, name: str, inputs: tuple, **ctx) -> "Tensor":
        op = Op(name, inputs, ctx) if _tracked(inputs) else None
        return Tensor(storage, layout, dtype, op)

    # -- numpy exchange ---------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A numpy view of the same memory (every layout of ours is a numpy layout)."""
        return _as_numpy_view(self._storage.data, self.layout)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.numel != 1:
            raise StridedError(f"item: expected a tensor with one element, got shape {self.shape}")
        return self.numpy().reshape(()).item()

    def __array__(self, dtype=None, copy=None):
        if copy is False and dtype is not None and np.dtype(dtype) != self.dtype.np:
            raise ValueError("__array__: a dtype change needs a copy, but copy=False was given")
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.numel != 1:
            raise StridedError(f"bool: the truth value of a tensor with {self.numel} elements is ambiguous")
        return bool(self.item())

    def __repr__(self):
        from .printing import format_tensor

        return format_tensor(self)

    def describe(self) -> str:
        """Dims, stride, offset, contiguity, span, classification and StridedBlocks on one screen."""
        from .printing import describe

        return describe(self.layout, dtype=self.dtype, buffer_len=len(self._storage))

    # -- exchange (NumPy array interface, DLPack, pickle) -----------------
    @property
    def __array_interface__(self):
        from .interop import array_interface

        return array_interface(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from .interop import to_dlpack

        return to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def __reduce__(self):
        # Views pickle as a compact copy: the rest of the buffer is not theirs to carry.
        return (_rebuild, (np.ascontiguousarray(self.numpy()), self.dtype.name))

    def __deepcopy__(self, memo):
        return _rebuild(np.ascontiguousarray(self.numpy()).copy(), self.dtype.name)

    # -- views ------------------------------------------------------------
    def _view(self, layout: Layout, name: str, *args) -> "Tensor":
        return self._result(self._storage, layout, self.dtype, name, (self,), args=args)

    def narrow(self, dim, start, length):
        return self._view(self.layout.narrow(dim, start, length), "narrow", dim, start, length)

    def slice(self, dim, start=None, stop=None, step=None):
        return self._view(self.layout.slice(dim, start, stop, step), "slice", dim, start, stop, step)

    def select(self, dim, index):
        return self._view(self.layout.select(dim, index), "select", dim, index)

    def i(self, index):
        """candle's ``i``: select along dim 0 (or index with a tuple like __getitem__)."""
        return self[index]

    def transpose(self, d0, d1):
        return self._view(self.layout.transpose(d0, d1), "transpose", d0, d1)

    def t(self):
        if self.ndim < 2:
            raise ShapeError(f"t: expected a tensor with at least 2 dims, got shape {self.shape}")
        return self.transpose(-2, -1)

    @property
    def T(self):
        return self._view(self.layout.permute(tuple(reversed(range(self.ndim)))), "permute", tuple(reversed(range(self.ndim))))

    def permute(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return self._view(self.layout.permute(dims), "permute", dims)

    def broadcast_as(self, shape):
        shape = _int_tuple("broadcast_as", "shape", shape)
        return self._view(self.layout.broadcast_as(shape), "broadcast_as", shape)

    def expand(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self.broadcast_as(shape)

    def broadcast_left(self, *lead):
        return self.broadcast_as(tuple(lead) + self.shape)

    def unsqueeze(self, dim):
        return self._view(self.layout.unsqueeze(dim), "unsqueeze", dim)

    def squeeze(self, dim=None):
        return self._view(self.layout.squeeze(dim), "squeeze", dim)

    def flip(self, dims):
        return self._view(self.layout.flip(dims), "flip", dims)

    def reshape(self, *shape):
        """A view when the layout allows one (PyTorch's rule), else a copy."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        lay = self.layout.reshape_view(shape)
        if lay is None:
            return self.force_contiguous().reshape(shape)
        return self._view(lay, "reshape", lay.shape)

    view = reshape

    def flatten_all(self):
        return self.reshape(-1)

    def flatten(self, start_dim=0, end_dim=-1):
        if not self.ndim:
            return self.reshape(1)
        s = norm_dim("flatten", start_dim, self.ndim)
        e = norm_dim("flatten", end_dim, self.ndim)
        if s > e:
            raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} (shape {self.shape})")
        return self.reshape(self.shape[:s] + (prod(self.shape[s : e + 1]),) + self.shape[e + 1 :])

    def __getitem__(self, index):
        lay, norm = _index_layout(self.layout, index)
        return self._view(lay, "getitem", norm)

    def view_as(self, cute_layout, offset: int = 0) -> "Tensor":
        """A view through a CuTe layout (flattened), validated against this buffer."""
        from .cute import Layout as CuteLayout

        if not isinstance(cute_layout, CuteLayout):
            raise StridedError(f"view_as: expected a strided.cute.Layout, got {type(cute_layout).__name__}")
        flat = cute_layout.flatten()
        lay = Layout(flat.shape, flat.stride, flat.offset + offset)
        return as_strided(self, lay.shape, lay.stride, lay.offset)

    # -- copies -----------------------------------------------------------
    def contiguous(self) -> "Tensor":
        """Self when already dense row-major (offset and size-1 dims ignored), else a copy."""
        if self.layout.is_contiguous():
            return self
        return self._copy_to(self.dtype, "copy")

    def force_contiguous(self) -> "Tensor":
        """Always a fresh row-major buffer holding just these elements."""
        return self._copy_to(self.dtype, "copy")

    def copy(self) -> "Tensor":
        """A fresh buffer holding only the viewed elements (candle's copy keeps the whole storage)."""
        return self._copy_to(self.dtype, "copy")

    def clone(self) -> "Tensor":
        """Shares the buffer, like candle's clone (an Arc clone)."""
        return self._result(self._storage, self.layout, self.dtype, "clone", (self,))

    def to_dtype(self, dtype) -> "Tensor":
        dtype = dt.as_dtype(dtype)
        if dtype is self.dtype:
            return self
        return self._copy_to(dtype, "to_dtype")

    astype = to_dtype

    def _copy_to(self, dtype: DType, name: str) -> "Tensor":
        from .kernels.copy import copy_into

        out = empty(self.shape, dtype)
        copy_into(out._storage.data, out.layout, self._storage.data, self.layout)
        out._op = Op(name, (self,), {}) if _tracked((self,)) else None
        return out

    # -- writes through views ---------------------------------------------
    def copy_(self, src, *, allow_overlap: bool = False) -> "Tensor":
        """Write ``src`` (tensor, array or scalar, broadcast to this shape) into this view.

        A destination whose elements share memory (a broadcast, an overlapping
        as_strided view) is refused unless ``allow_overlap=True``; then elements
        written more than once end with one of the values written to them."""
        _write(self, src, "copy_", allow_overlap)
        return self

    def fill_(self, value, *, allow_overlap: bool = False) -> "Tensor":
        _write(self, value, "fill_", allow_overlap)
        return self

    def zero_(self) -> "Tensor":
        return self.fill_(0)

    def __setitem__(self, index, value):
        _write(self[index], value, "setitem")

    # -- math -------------------------------------------------------------
    # Each op calls the op layer directly: one Python frame less per op, which is a fair share
    # of a small op's whole cost.
    def exp(self): return (_OPS or _ops()).unary("exp", self)
    def log(self): return (_OPS or _ops()).unary("log", self)
    def sqrt(self): return (_OPS or _ops()).unary("sqrt", self)
    def sqr(self): return (_OPS or _ops()).unary("sqr", self)
    def abs(self): return (_OPS or _ops()).unary("abs", self)
    def neg(self): return (_OPS or _ops()).unary("neg", self)
    def relu(self): return (_OPS or _ops()).unary("relu", self)
    def tanh(self): return (_OPS or _ops()).unary("tanh", self)
    def sigmoid(self): return (_OPS or _ops()).unary("sigmoid", self)
    def sin(self): return (_OPS or _ops()).unary("sin", self)
    def cos(self): return (_OPS or _ops()).unary("cos", self)
    def sign(self): return (_OPS or _ops()).unary("sign", self)
    def recip(self): return (_OPS or _ops()).unary("recip", self)

    # These and the comparisons are _SMALL_BINARY's functions: the small-op path in one frame.
    add = __add__ = _SMALL_BINARY["add"]
    sub = __sub__ = _SMALL_BINARY["sub"]
    mul = __mul__ = _SMALL_BINARY["mul"]
    def div(self, o): return (_OPS or _ops()).binary("div", self, o)
    maximum = _SMALL_BINARY["maximum"]
    minimum = _SMALL_BINARY["minimum"]
    def pow(self, o): return (_OPS or _ops()).binary("pow", self, o)
    broadcast_add = add
    broadcast_sub = sub
    broadcast_mul = mul
    broadcast_div = div
    broadcast_maximum = maximum
    broadcast_minimum = minimum

    def __radd__(self, o): return (_OPS or _ops()).binary("add", o, self)
    def __rsub__(self, o): return (_OPS or _ops()).binary("sub", o, self)
    def __rmul__(self, o): return (_OPS or _ops()).binary("mul", o, self)
    def __truediv__(self, o): return (_OPS or _ops()).binary("div", self, o)
    def __rtruediv__(self, o): return (_OPS or _ops()).binary("div", o, self)
    def __pow__(self, o): return (_OPS or _ops()).binary("pow", self, o)
    def __rpow__(self, o): return (_OPS or _ops()).binary("pow", o, self)
    def __neg__(self): return (_OPS or _ops()).unary("neg", self)
    def __abs__(self): return (_OPS or _ops()).unary("abs", self)
    def __matmul__(self, o): return self.matmul(o)
    def __rmatmul__(self, o): return _as_tensor_like(o, self).matmul(self)

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __itruediv__(self, o): return self._inplace("div", o)

    def _inplace(self, op: str, other) -> "Tensor":
        from .ops import binary

        _write(self, binary(op, self, other), "in-place " + op)
        return self

    eq = __eq__ = _SMALL_BINARY["eq"]
    ne = __ne__ = _SMALL_BINARY["ne"]
    lt = __lt__ = _SMALL_BINARY["lt"]
    le = __le__ = _SMALL_BINARY["le"]
    gt = __gt__ = _SMALL_BINARY["gt"]
    ge = __ge__ = _SMALL_BINARY["ge"]
    __hash__ = object.__hash__

    def __and__(self, o): return (_OPS or _ops()).binary("logical_and", self, o)
    def __or__(self, o): return (_OPS or _ops()).binary("logical_or", self, o)
    def __rand__(self, o): return (_OPS or _ops()).binary("logical_and", o, self)
    def __ror__(self, o): return (_OPS or _ops()).binary("logical_or", o, self)
    def __invert__(self): return (_OPS or _ops()).unary("not", self)

    def sum(self, dim=None, keepdim: bool = False):
        from .ops import reduce

        return reduce("sum", self, dim, keepdim)

    def sum_all(self):
        return self.sum()

    def sum_keepdim(self, dim):
        return self.sum(dim, keepdim=True)

    def mean(self, dim=None, keepdim: bool = False):
        from .ops import reduce

        return reduce("mean", self, dim, keepdim)

    def max(self, dim=None, keepdim: bool = False):
        from .ops import reduce

        return reduce("max", self, dim, keepdim)

    def min(self, dim=None, keepdim: bool = False):
        from .ops import reduce

        return reduce("min", self, dim, keepdim)

    def argmax(self, dim=None, keepdim: bool = False):
        from .ops import arg_reduce

        return arg_reduce("argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim: bool = False):
        from .ops import arg_reduce

        return arg_reduce("argmin", self, dim, keepdim)

    def index_select(self, index, dim=0):
        from .ops import index_select

        return index_select(self, index, dim)

    def where(self, a, b):
        """``self`` is the condition: a where true, b elsewhere."""
        from .ops import where

        return where(self, a, b)

    def matmul(self, other):
        return (_LINALG or _linalg()).matmul(self, other)


# ---------------------------------------------------------------------------
# construction


def _rebuild(arr: np.ndarray, dtype_name: str) -> Tensor:
    t = from_numpy(np.array(arr, copy=True))
    return t if t.dtype.name == dtype_name else t.to_dtype(dtype_name)


def _as_numpy_view(buf: np.ndarray, lay: Layout) -> np.ndarray:
    if lay.ndim > 64:
        raise StridedError(f"numpy: NumPy arrays hold at most 64 dims, this tensor has {lay.ndim} (shape {lay.shape})")
    item = buf.itemsize
    if lay.numel == 0:
        return np.empty(lay.shape, buf.dtype)
    return np.lib.stride_tricks.as_strided(
        buf[lay.offset :], shape=lay.shape, strides=tuple(s * item for s in lay.stride),
        writeable=buf.flags.writeable,
    )


def empty(shape, dtype=dt.f32) -> Tensor:
    dtype = dt.as_dtype(dtype)
    shape = _shape_arg("empty", shape)
    lay = Layout.contiguous(shape)
    return Tensor(alloc(lay.numel, dtype.np), lay, dtype)


def zeros(shape, dtype=dt.f32) -> Tensor:
    t = empty(shape, dtype)
    t._storage.data.fill(0)
    return t


def ones(shape, dtype=dt.f32) -> Tensor:
    return full(shape, 1, dtype)


def full(shape, value, dtype=None) -> Tensor:
    dtype = dt.as_dtype(dtype) if dtype is not None else _default_scalar_dtype(value)
    t = empty(shape, dtype)
    t._storage.data.fill(dt.scalar_array("full", value, dtype)[0])
    return t


def zeros_like(t: Tensor, dtype=None) -> Tensor:
    return zeros(t.shape, dtype or t.dtype)


def ones_like(t: Tensor, dtype=None) -> Tensor:
    return ones(t.shape, dtype or t.dtype)


def arange(start, stop=None, step=1, dtype=None) -> Tensor:
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not isinstance(v, numbers.Real) or not (isinstance(v, numbers.Integral) or isfinite(v)):
            raise StridedError(f"arange: expected finite real numbers, got start={start!r}, stop={stop!r}, step={step!r}")
    if step == 0:
        raise ShapeError("arange: step must be nonzero")
    ints = all(isinstance(v, numbers.Integral) for v in (start, stop, step))
    dtype = dt.as_dtype(dtype) if dtype is not None else (dt.i64 if ints else dt.f32)
    try:
        count = -((start - stop) // step) if ints else ceil((stop - start) / step)
    except OverflowError:  # the quotient is beyond any float
        raise StridedError(f"arange: [{start}, {stop}) by {step} holds more elements than any buffer") from None
    if count <= 0:
        return empty((0,), dtype)  # NumPy refuses some of these (a huge span the wrong way)
    check_size("arange", count, dtype.np)
    data = np.arange(start, stop, step, dtype=dtype.compute.np if dtype.is_float else dtype.np)
    return from_numpy(data.astype(dtype.np, copy=False))


_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator behind rand/randn."""
    global _rng
    _rng = np.random.default_rng(seed)


def rand(*shape, dtype=dt.f32, generator=None) -> Tensor:
    shape = _shape_arg("rand", shape[0] if len(shape) == 1 else shape)
    check_size("rand", prod(shape), np.float64)
    g = generator if generator is not None else _rng
    return from_numpy(g.random(shape, dtype=np.float64).astype(dt.as_dtype(dtype).np))


def randn(*shape, dtype=dt.f32, generator=None) -> Tensor:
    shape = _shape_arg("randn", shape[0] if len(shape) == 1 else shape)
    check_size("randn", prod(shape), np.float64)
    g = generator if generator is not None else _rng
    return from_numpy(g.standard_normal(shape).astype(dt.as_dtype(dtype).np))


def _shape_arg(op: str, shape) -> tuple[int, ...]:
    shape = _int_tuple(op, "shape", shape)
    if any(n < 0 for n in shape):
        raise ShapeError(f"{op}: sizes must be >= 0, got shape {shape}")
    return shape


def _default_scalar_dtype(value) -> DType:
    if isinstance(value, (bool, np.bool_)):
        return dt.bool_
    if isinstance(value, (int, np.integer)):
        return dt.i64
    return dt.f32


def tensor(data, dtype=None) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors).

    Python floats become f32 and ints i64 (PyTorch's defaults); numpy arrays keep their dtype.
    """
    if isinstance(data, Tensor):
        out = data.copy()
        return out if dtype is None else out.to_dtype(dtype)
    want = None if dtype is None else dt.as_dtype(dtype)
    try:
        if isinstance(data, np.ndarray):
            arr = np.array(data, copy=True)
        else:
            arr = np.array(data)
            if arr.dtype == np.float64 and not _has_numpy_float64(data):
                arr = arr.astype(np.float32)
        if want is not None:
            arr = arr.astype(want.np)
        elif arr.dtype.kind in "iu" and arr.dtype not in (np.uint8, np.uint32, np.int64):
            arr = arr.astype(np.int64)
    except (TypeError, ValueError, OverflowError) as e:  # ragged lists, strings, ints beyond int64
        raise StridedError(f"tensor: cannot make a tensor{'' if want is None else ' of ' + str(want)} "
                           f"from {data!r}: {e}") from None
    return from_numpy(np.asarray(arr, order="C"))  # ascontiguousarray would turn 0-d into 1-d


def _has_numpy_float64(data) -> bool:
    if isinstance(data, np.float64) or (isinstance(data, np.ndarray) and data.dtype == np.float64):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_numpy_float64(x) for x in data)
    return False


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor over ``a``'s memory (no copy), whatever its strides, negative included."""
    if not isinstance(a, np.ndarray):
        raise StridedError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    dtype = dt.as_dtype(a.dtype)
    if not a.dtype.isnative:
        raise DTypeError(f"from_numpy: byte-swapped arrays are not supported (dtype {a.dtype})")
    item = a.itemsize
    if any(s % item for s in a.strides):
        raise StridedError(
            f"from_numpy: byte strides {a.strides} are not multiples of the itemsize {item}"
        )
    strides = tuple(s // item for s in a.strides)
    if a.size == 0:
        return Tensor(wrap(np.empty(0, a.dtype)), Layout(a.shape, contiguous_strides(a.shape)), dtype)
    # Walk negative-stride dims backwards to reach the lowest address the array touches.
    low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides) + (Ellipsis,)]  # ... keeps 0-d a view
    low_strides = [abs(s) for s in strides]
    span = 1 + sum((n - 1) * s for n, s in zip(a.shape, low_strides))
    flat = np.lib.stride_tricks.as_strided(low, shape=(span,), strides=(item,), writeable=a.flags.writeable)
    offset = sum((n - 1) * -s for n, s in zip(a.shape, strides) if s < 0)
    dense = Layout.contiguous(a.shape)  # the shared one: the small-op path knows it by identity
    lay = dense if strides == dense.stride and not offset else Layout(a.shape, strides, offset)
    return Tensor(wrap(flat), lay, dtype)


def same_buffer(a: Tensor, b: Tensor) -> bool:
    """Whether two tensors view the same memory (the seed's "same buffer" column)."""
    if a._storage is b._storage:
        return True
    pa, pb = a._storage.data, b._storage.data
    # Both are 1-D dense buffers, so the bounds test numpy does at max_work=0 is exact.
    return bool(pa.size and pb.size and np.shares_memory(pa, pb, max_work=0))


def as_strided(t: Tensor, shape, stride, offset: int = 0) -> Tensor:
    """Any view of ``t``'s buffer, validated against it (never an out-of-bounds read)."""
    lay = Layout(shape, stride, offset)
    lay.validate(len(t._storage))
    return t._result(t._storage, lay, t.dtype, "as_strided", (t,), args=(lay.shape, lay.stride, lay.offset))


def _as_tensor_like(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    return tensor(value, dtype=dt.promote_scalar(like.dtype, value) if np.isscalar(value) else None)


# ---------------------------------------------------------------------------
# indexing


def _index_layout(lay: Layout, index):
    """Apply a basic index (ints, slices, ..., None) to a layout."""
    if not isinstance(index, tuple):
        index = (index,)
    if any(isinstance(i, (Tensor, np.ndarray, list)) for i in index):
        raise StridedIndexError(
            "getitem: only ints, slices, ... and None index a tensor as a view; "
            "use index_select for integer tensors"
        )
    n_ell = sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise StridedIndexError("getitem: an index can only have a single ellipsis ('...')")
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > lay.ndim:
        raise StridedIndexError(f"getitem: too many indices for a tensor of rank {lay.ndim}: {used} given")
    if n_ell:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (lay.ndim - used) + index[k + 1 :]
    d = 0
    for i in index:
        if i is None:
            lay = lay.unsqueeze(d)
            d += 1
        elif isinstance(i, slice):
            lay = lay.slice(d, i.start, i.stop, i.step)
            d += 1
        elif isinstance(i, (numbers.Integral, np.integer)) and not isinstance(i, bool):
            lay = lay.select(d, int(i))
        else:
            raise StridedIndexError(f"getitem: unsupported index {i!r} of type {type(i).__name__}")
    return lay, index


# ---------------------------------------------------------------------------
# writes


def _write(dst: Tensor, src, op: str, allow_overlap: bool = False) -> None:
    """ViewCopy: write src (broadcast, converted) into the dst view, safe under memory overlap."""
    from .kernels.copy import copy_into
    from .layout.analysis import is_non_overlapping, overlaps

    data = dst._storage.data
    if not data.flags.writeable:
        raise StridedError(f"{op}: the destination buffer is read-only")
    if isinstance(src, Tensor):
        src_t = src
    elif isinstance(src, np.ndarray):
        src_t = from_numpy(src)
    elif isinstance(src, (numbers.Number, np.generic)):
        src_t = Tensor(wrap(dt.scalar_array(op, src, dst.dtype)), Layout((), ()), dst.dtype)
    else:
        src_t = tensor(src, dtype=dst.dtype)
    src_lay = _source_layout(op, src_t, dst.shape)
    if dst.numel == 0:
        return
    if not allow_overlap and not _non_overlapping(dst.layout, is_non_overlapping):
        raise StridedError(
            f"{op}: the destination view {dst.layout} has elements sharing memory; "
            "writing through it would be ambiguous (pass allow_overlap=True to write anyway)"
        )
    # Copy through a temporary only when source and destination really share memory
    # (NumPy does the same since 1.13: x[...] = x.T and x[1:] = x[:-1] come out right).
    if same_buffer(src_t, dst) and (
        not _same_base(src_t, dst) or _overlap_exact(overlaps, src_lay, dst.layout)
    ):
        src_t = src_t.copy()
        src_lay = _source_layout(op, src_t, dst.shape)
    dst_lay = dst.layout
    if allow_overlap:
        # A broadcast destination stores one value per address: keep the last write, as a
        # row-major loop would, and leave the rest of the overlap to the kernel's order.
        for d, (n, st) in enumerate(zip(dst_lay.shape, dst_lay.stride)):
            if st == 0 and n > 1:
                dst_lay, src_lay = dst_lay.narrow(d, n - 1, 1), src_lay.narrow(d, n - 1, 1)
    copy_into(data, dst_lay, src_t._storage.data, src_lay)


def _source_layout(op: str, src: Tensor, shape: tuple) -> Layout:
    """The source's layout broadcast to the destination's shape.  Assignment (``t[0] = v[None]``)
    drops leading size-1 dims of the source first, as NumPy and PyTorch do; ``copy_`` and
    in-place ops broadcast strictly, as PyTorch's ``copy_`` and NumPy's ``+=`` do."""
    lay = src.layout
    extra = lay.ndim - len(shape)
    if op == "setitem" and extra > 0 and all(n == 1 for n in lay.shape[:extra]):
        lay = Layout(lay.shape[extra:], lay.stride[extra:], lay.offset)
    try:
        return lay.broadcast_as(shape)
    except ShapeError:
        raise ShapeError(f"{op}: cannot broadcast source of shape {src.shape} to destination shape {shape}") from None


def _same_base(a: Tensor, b: Tensor) -> bool:
    pa, pb = a._storage.data, b._storage.data
    return (
        pa.__array_interface__["data"][0] == pb.__array_interface__["data"][0]
        and pa.itemsize == pb.itemsize
    )


def _non_overlapping(lay: Layout, check) -> bool:
    from .errors import TooHardError

    try:
        return check(lay)
    except TooHardError:
        return False


def _overlap_exact(check, a: Layout, b: Layout) -> bool:
    from .errors import TooHardError

    try:
        return check(a, b)
    except TooHardError:
        return True  # unsure: the temporary is always correct
