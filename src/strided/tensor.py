"""Tensor: a Storage (shared 1-D buffer) seen through a Layout, plus what produced it.

This module holds the data class and its views, which only build layouts.
Everything that computes, copies or exchanges is installed on the class by the
layer that owns it, so that this module imports nothing above it:

=====================  =====================================================
installed by           methods
=====================  =====================================================
``strided.ops``        math from the op registry (``exp``, ``add``/``__add__``,
                       ``sum``, ``where``, ``matmul``/``__matmul__``, ...),
                       copies (``contiguous``, ``force_contiguous``, ``copy``,
                       ``clone``, ``to_dtype``/``astype``) and writes
                       (``copy_``, ``fill_``, ``zero_``, ``__setitem__``, the
                       in-place operators), sliding windows (``unfold``)
``strided.creation``   ``__reduce__``, ``__deepcopy__`` (the view's reach and layout)
``strided.interop``    ``__array_interface__``, ``__dlpack__``,
                       ``__dlpack_device__``
``strided.printing``   ``__repr__``, ``describe`` (through ``strided``)
``strided.array_api``  the Array API's ``size``, ``mT``, ``to_device`` (and
                       ``cpu``; moves by ``strided.devices``),
                       ``__index__``, ``__complex__``, ``__pos__``; the gather
                       behind ``t[int_array, ...]`` (``GATHER_INDEX``)
                       (``__array_namespace__`` through ``strided``)
``strided.numpy_api``  ``__array_ufunc__``, ``__array_function__``,
                       ``__array_priority__`` (NEP 13 / NEP 18);
                       ``__dask_tokenize__`` comes from ``strided.dask_chunks``
``strided.autograd``   ``backward``
=====================  =====================================================

An op is recorded (for autograd) only when one of its inputs is tracked: a
Var, or the result of a recorded op.
"""

from __future__ import annotations

import numbers
from math import prod

import numpy as np

from .core.dtype import DType
from .core.errors import ShapeError, StridedError, StridedIndexError
from .layout import Layout
from .layout.layout import as_int_tuple as int_tuple, keep_derived, norm_dim
from .backend import BACKENDS
from .core.storage import Storage


_new = object.__new__


class Op:
    """How a tensor was made: the op's name, its tensor inputs and what backward needs."""

    __slots__ = ("name", "inputs", "ctx")

    def __init__(self, name: str, inputs: tuple, ctx: dict):
        self.name = name
        self.inputs = inputs
        self.ctx = ctx

    def __repr__(self):
        return f"Op({self.name}, {len(self.inputs)} inputs)"


def tracked(inputs) -> bool:
    """Whether an op on these inputs is recorded: one of them is a Var or a recorded result."""
    for t in inputs:  # a plain loop: any() over a generator costs more than the ops it guards
        if isinstance(t, Tensor) and (t._is_var or t._op is not None):
            return True
    return False


def fresh(storage, layout: "Layout", dtype, op: "Op | None" = None) -> "Tensor":
    """A result tensor, its slots filled directly: the one place besides ``Tensor.__init__``
    that makes a Tensor (views, fused calls; ``ops.kept.Kept.result`` spells it out for the
    kept calls), since ``__init__``'s frame is a fair share of a small op's cost."""
    out = _new(Tensor)
    out._storage = storage  # one statement each: a tuple unpacked into slots costs more
    out.layout = layout
    out.dtype = dtype
    out._is_var = False
    out._op = op
    return out


def trace_hook(family: str, op: str, values: tuple, **kw):
    """``op`` handed to a value that ``strided.fuse`` is tracing (it records the op instead of
    computing it), or NotImplemented when no value among ``values`` is traced.  The op
    layer calls this where an operand is not a Tensor, before refusing it."""
    for v in values:
        hook = getattr(type(v), "__strided_trace__", None)
        if hook is not None:
            return hook(v, family, op, values, kw)
    return NotImplemented


def record(out: "Tensor", name: str, inputs: tuple, **ctx) -> "Tensor":
    """``out``, with the op that made it when an input is tracked."""
    if tracked(inputs):
        out._op = Op(name, inputs, ctx)
    return out


class UnsizedError(StridedError, TypeError):
    """``len`` or iteration of a rank-0 tensor: a TypeError too, as Python's protocols (and
    NumPy, and code probing ``iter(x)``) expect."""


class Tensor:
    __slots__ = ("_storage", "layout", "dtype", "_op", "_is_var", "__weakref__")
    # == is elementwise (installed by strided.ops), so a tensor is no dict key (as an ndarray)
    __hash__ = None

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
            raise UnsizedError("len: a rank-0 tensor has no length")
        return self.shape[0]

    def __iter__(self):
        """The rows (dim 0), each a view of this buffer, as NumPy iterates an array."""
        if not self.ndim:
            raise UnsizedError("iter: a rank-0 tensor cannot be iterated")
        return (self._view(self.layout.select(0, i), "select", 0, i) for i in range(self.shape[0]))

    def __contains__(self, value) -> bool:
        """``value in t``: whether some element equals it (NumPy's ``(t == value).any()``)."""
        return bool(np.any((self == value).numpy()))

    def __format__(self, spec: str) -> str:
        """A format spec formats the element of a rank-0 tensor (``f"{t:.3f}"``); the empty spec is ``str``."""
        if not spec:
            return str(self)
        if self.ndim:
            raise StridedError(f"format: the spec {spec!r} formats rank-0 tensors only, got shape {self.shape}")
        return format(self.item(), spec)

    def __copy__(self) -> "Tensor":
        """A new buffer holding what this view reaches, under the same layout (as ``deepcopy``)."""
        return self.__deepcopy__({})

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

    def _result(self, storage: Storage, layout: Layout, dtype: DType, name: str, inputs: tuple, **ctx) -> "Tensor":
        op = Op(name, inputs, ctx) if tracked(inputs) else None
        return Tensor(storage, layout, dtype, op)

    @property
    def device(self) -> str:
        """Where the buffer lives (``"cpu"``): the storage says, and picks the kernels."""
        return self._storage.device

    # -- numpy exchange ---------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A numpy view of the same memory (every layout of ours is a numpy layout); for a
        tensor on a device, a fresh host copy of its elements (the storage's ``to_host``)."""
        s = self._storage
        if s.device != "cpu":
            return s.to_host(self.layout)
        return numpy_view(s.data, self.layout)

    def to_numpy(self) -> np.ndarray:
        """``numpy()`` under the name pandas and xarray give it, by which matplotlib and others
        unpack array containers (a 2-D tensor is then read by columns, as an ndarray)."""
        return self.numpy()

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.numel != 1:
            raise StridedError(f"item: expected a tensor with one element, got shape {self.shape}")
        return self.numpy().reshape(()).item()

    def __array__(self, dtype=None, copy=None):
        if copy is False and dtype is not None and np.dtype(dtype) != self.dtype.np:
            raise ValueError("__array__: a dtype change needs a copy, but copy=False was given")
        if copy is False and self._storage.device != "cpu":
            raise ValueError(f"__array__: a tensor on {self._storage.device} reaches the host only as a copy, "
                             "but copy=False was given")
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

    # -- views ------------------------------------------------------------
    def _view(self, layout: Layout, name: str, *args) -> "Tensor":
        return fresh(self._storage, layout, self.dtype,
                     Op(name, (self,), {"args": args}) if (self._is_var or self._op is not None) else None)

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
        lay = self.layout
        if len(lay.shape) < 2:
            raise ShapeError(f"t: expected a tensor with at least 2 dims, got shape {self.shape}")
        return self._view(lay.transpose(-2, -1), "transpose", -2, -1)

    @property
    def T(self):
        dims = tuple(reversed(range(self.ndim)))
        return self._view(self.layout.permute(dims), "permute", dims)

    def permute(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return self._view(self.layout.permute(dims), "permute", dims)

    def broadcast_as(self, shape):
        shape = int_tuple("broadcast_as", "shape", shape)
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
        try:
            lay, norm = index_layout(self.layout, index)
        except ArrayIndexError:
            if not GATHER_INDEX:
                raise
            lay = None
        if lay is None:  # an index holding integer arrays is a gather, not a view
            return GATHER_INDEX[0](self, index)
        return self._view(lay, "getitem", norm)

    def view_as(self, cute_layout, offset: int = 0) -> "Tensor":
        """A view through a CuTe layout (flattened), validated against this buffer."""
        from .cute import Layout as CuteLayout

        if not isinstance(cute_layout, CuteLayout):
            raise StridedError(f"view_as: expected a strided.cute.Layout, got {type(cute_layout).__name__}")
        flat = cute_layout.flatten()
        lay = Layout(flat.shape, flat.stride, flat.offset + offset)
        return as_strided(self, lay.shape, lay.stride, lay.offset)


# ---------------------------------------------------------------------------
# views of any kind, and basic indexing


def numpy_view(buf: np.ndarray, lay: Layout) -> np.ndarray:
    """A numpy array over ``buf`` seen through ``lay`` (no copy)."""
    if lay.ndim > 64:
        raise StridedError(f"numpy: NumPy arrays hold at most 64 dims, this tensor has {lay.ndim} (shape {lay.shape})")
    item = buf.itemsize
    if lay.numel == 0:
        return np.empty(lay.shape, buf.dtype)
    return np.lib.stride_tricks.as_strided(
        buf[lay.offset :], shape=lay.shape, strides=tuple(s * item for s in lay.stride),
        writeable=buf.flags.writeable,
    )


def same_buffer(a: Tensor, b: Tensor) -> bool:
    """Whether two tensors view the same memory (the seed's "same buffer" column): whether
    their buffers' byte ranges meet, whichever objects own them (a DLPack round trip through
    PyTorch, ``np.asarray`` and back give other owners of the same memory).  Exact, as every
    buffer is 1-D and dense."""
    if a._storage is b._storage:
        return True
    if a._storage.device != b._storage.device:
        return False
    ra, rb = buffer_range(a), buffer_range(b)
    return ra[0] < ra[1] and rb[0] < rb[1] and ra[0] < rb[1] and rb[0] < ra[1]


def buffer_range(t: Tensor) -> tuple[int, int]:
    """``(first, end)`` byte addresses of ``t``'s whole buffer on its device."""
    s = t._storage
    data = s.data
    start = data.__array_interface__["data"][0] if s.device == "cpu" else BACKENDS[s.device].storage.pointer(data)
    return start, start + len(data) * data.itemsize


def as_strided(t: Tensor, shape, stride, offset=None) -> Tensor:
    """Any view of ``t``'s buffer, validated against it (never an out-of-bounds read).

    Without an offset the view starts at ``t``'s own offset (PyTorch's rule); an
    explicit offset is a buffer position."""
    lay = Layout(shape, stride, t.layout.offset if offset is None else offset)
    lay.validate(len(t._storage))
    return t._result(t._storage, lay, t.dtype, "as_strided", (t,), args=(lay.shape, lay.stride, lay.offset))


class ArrayIndexError(StridedIndexError):
    """An index that holds arrays: no layout describes the result."""


# The function that answers an index holding integer arrays with a gather (installed by
# strided.array_api, which sits above the op layer this module cannot import).
GATHER_INDEX: list = []


def index_layout(lay: Layout, index):
    """Apply a basic index (ints, slices, ..., None) to a layout."""
    if not isinstance(index, tuple):
        index = (index,)
    key = _basic_key(index)
    if key is not None:
        derived = lay.derived()
        got = derived.get(key)
        if got is not None:
            return got, index
    fast = _ints_and_slices(lay, index)
    if fast is not None:
        if key is not None:
            keep_derived(derived, key, fast)
        return fast, index
    if any(isinstance(i, (Tensor, np.ndarray, list)) for i in index):
        raise ArrayIndexError(
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


def _basic_key(index: tuple):
    """The key under which a layout keeps the view an index of plain ints and slices makes
    (a slice as its three parts, which never equal an int), or None for any other index.
    Only exact ints and None, in slices too: ``True``, ``1.0`` and ``np.int64(1)`` hash
    like ``1`` but take other paths (or raise)."""
    key = []
    for i in index:
        t = type(i)
        if t is int:
            key.append(i)
        elif t is slice:
            a, b, c = i.start, i.stop, i.step
            if (a is None or type(a) is int) and (b is None or type(b) is int) and (c is None or type(c) is int):
                key.append((a, b, c))
            else:  # 1.0 equals 1 but must be refused
                return None
        else:
            return None
    return tuple(key)


def _ints_and_slices(lay: Layout, index: tuple):
    """``index_layout`` for the common index of plain ints and slices, in one pass with no
    intermediate layouts; None for anything else (and for anything that must raise), which
    the general walk then takes."""
    shape, stride, off = lay.shape, lay.stride, lay.offset
    k = len(index)
    if k > len(shape):
        return None
    sizes, steps = [], []
    for d in range(k):
        i = index[d]
        n, s = shape[d], stride[d]
        if type(i) is slice:
            if i.step == 0:
                return None
            try:
                r = range(*i.indices(n))
            except TypeError:
                return None
            if len(r):
                off += r.start * s
            step = r.step if abs(r.step) <= n else (n if r.step > 0 else -n)  # as Layout.slice clamps it
            sizes.append(len(r))
            steps.append(s * step)
        elif type(i) is int and -n <= i < n:
            off += (i % n) * s
        else:
            return None
    return Layout.from_parts(tuple(sizes) + shape[k:], tuple(steps) + stride[k:], off)
