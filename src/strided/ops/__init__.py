"""The op layer: every op declared once (below), its Tensor methods derived from that.

Each line of the table names an op, its family, its result-dtype rule, its name in
the family's kernel table, its gradient rule and the Tensor methods and operators
that call it.  The elementwise ops come from the op table (``kernels/optable.py``):
adding one is one entry there (see docs/architecture.md).

Families and where their rules live: ``elementwise`` (unary, binary, where),
``reduce`` (sum, mean, max, min, argmax, argmin), ``join`` (cat, index_select),
``copies`` (copies, conversions, writes through views), ``sort`` (sort, argsort,
searchsorted), ``scan`` (cumulative sums and products, nonzero), ``strided.linalg``
(matmul); views are Tensor's own (``strided.tensor``), and are declared here for
their gradient rules.
"""

from __future__ import annotations

import numpy as np

from ..creation import as_tensor_like, from_numpy
from ..core.dtype import bool_ as BOOL, i64 as I64
from ..core.errors import StridedError, StridedIndexError
from ..kernels.optable import NOT_DIFFERENTIABLE as OP_NOT_DIFFERENTIABLE, on_new_op
from ..tensor import Tensor
from . import composite, elementwise, grad
from .copies import clone, contiguous, copy, copy_, copy_to, fill_, force_contiguous, setitem, to_dtype, write, zero_
from .elementwise import binary, kernel_binary, kernel_unary, unary, where
from .join import cat, index_select
from .reduce import arg_reduce, reduce
from .scan import cumprod_back, cumulate, cumsum_back, nonzero
from .sort import argsort, searchsorted, sort, sort_back, unique
from .windows import sliding_window_view, unfold
from .registry import NOT_DIFFERENTIABLE, REGISTRY, declare, gradient_rule, lookup

__all__ = [
    "REGISTRY", "declare", "lookup", "gradient_rule", "unary", "binary", "kernel_unary", "kernel_binary",
    "where", "reduce", "arg_reduce", "cat", "index_select", "contiguous", "force_contiguous", "copy", "clone",
    "to_dtype", "copy_to", "write", "copy_", "fill_", "zero_", "setitem", "unfold", "sliding_window_view",
    "sort", "argsort", "searchsorted", "unique", "cumulate", "nonzero",
]

# -- the table ----------------------------------------------------------------------------
# Elementwise ops: one entry each in the op table (kernels/optable.py), declared from there
# (``_elementwise``, below, as each entry comes: at import and for ops registered later).
declare("where", "where", "promote", kernel="where", grad=grad.where_back)

# reductions
declare("sum", "reduce", "sum", kernel="sum", grad=grad.sum_back, methods=("sum",))
declare("mean", "reduce", "mean", kernel="sum", grad=grad.mean_back, methods=("mean",))
declare("max", "reduce", "same", kernel="max", grad=grad.extreme_back, methods=("max",))
declare("min", "reduce", "same", kernel="min", grad=grad.extreme_back, methods=("min",))
declare("argmax", "arg_reduce", "index", kernel="argmax", grad=NOT_DIFFERENTIABLE, methods=("argmax",))
declare("argmin", "arg_reduce", "index", kernel="argmin", grad=NOT_DIFFERENTIABLE, methods=("argmin",))

# sorts and scans along a dim
declare("sort", "sort", "same", kernel="sort", grad=sort_back, methods=("sort",))
declare("argsort", "sort", "index", kernel="argsort", grad=NOT_DIFFERENTIABLE, methods=("argsort",))
declare("searchsorted", "sort", "index", kernel="searchsorted", grad=NOT_DIFFERENTIABLE)
declare("cumulative_sum", "scan", "cast", kernel="cumulate", grad=cumsum_back)
declare("cumulative_prod", "scan", "cast", kernel="cumulate", grad=cumprod_back)
declare("nonzero", "scan", "index", kernel="nonzero", grad=NOT_DIFFERENTIABLE, methods=("nonzero",))

# products, joins, gathers
declare("matmul", "matmul", "matmul", kernel="gemm", grad=grad.matmul_back, methods=("matmul",),
        operators=("__matmul__",), reflected=("__rmatmul__",))
declare("cat", "cat", "promote", kernel="copy", grad=grad.cat_back)
declare("index_select", "index_select", "same", kernel="index_select", grad=grad.index_select_back,
        methods=("index_select",))

# views (Tensor's own methods; declared for their gradients) and copies
for _name in ("narrow", "slice", "select", "transpose", "permute", "unsqueeze", "squeeze", "flip", "reshape",
              "getitem"):
    declare(_name, "view", "same", grad=grad.view_back)
declare("broadcast_as", "view", "same", grad=grad.broadcast_back)
declare("as_strided", "view", "same", grad=grad.by_offsets_back)
declare("unfold", "view", "same", grad=grad.accumulate_back)  # sliding windows; sliding_window_view chains it
declare("clone", "copy", "same", grad=grad.identity_back, methods=("clone",))
declare("copy", "copy", "same", kernel="copy", grad=grad.identity_back, methods=("copy",))
declare("to_dtype", "copy", "cast", kernel="copy", grad=grad.cast_back, methods=("to_dtype", "astype"))


# -- Tensor methods, from the table ----------------------------------------------------------


_LINALG = []  # strided.linalg, once loaded: it loads BLAS, so only when a product is asked for


def _matmul(a, b, promote: bool = True):
    if not _LINALG:
        from . import linalg

        _LINALG.append(linalg.matmul)
        Tensor.__matmul__ = linalg.matmul  # promotes by default, as @ does: no step through here
    return _LINALG[0](a, b, promote=promote)


def _strict_matmul(a, b):
    """``Tensor.matmul``: candle's rule, both operands of one dtype (``@`` promotes)."""
    return _matmul(a, b, promote=False)


def _method(spec):
    """(function for ``self op other`` or ``op(self)``, function for ``other op self``)."""
    if spec.family in ("unary", "binary"):
        fn = elementwise.install(spec.family, spec.name)
        return fn, (lambda self, o: fn(o, self))
    if spec.family == "reduce":
        name = spec.name

        def method(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
            # NumPy's spelling too (``x.sum(axis=0, keepdims=True, dtype=...)``), which code
            # written for ndarray chunks calls (Dask's aggregations).
            if axis is not None or keepdims is not None or dtype is not None:
                return reduce(name, self if dtype is None else to_dtype(self, dtype),
                              dim if axis is None else axis, bool(keepdim or keepdims))
            return reduce(name, self, dim, keepdim)

        return method, None
    if spec.family == "arg_reduce":
        name = spec.name

        def method(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
            if axis is not None or keepdims is not None:
                return arg_reduce(name, self, dim if axis is None else axis, bool(keepdim or keepdims))
            return arg_reduce(name, self, dim, keepdim)

        return method, None
    if spec.family == "matmul":
        return _matmul, (lambda self, o: _matmul(as_tensor_like(o, self), self))
    if spec.family == "index_select":
        return index_select, None
    if spec.family in ("sort", "scan"):
        return _LINE_METHODS[spec.name], None
    return {"clone": clone, "copy": copy, "to_dtype": to_dtype}[spec.name], None


def _sort_method(op):
    def method(self, axis: int = -1, *, descending: bool = False, stable: bool = True):
        return op(self, axis, descending)

    method.__name__ = method.__qualname__ = op.__name__
    return method


_LINE_METHODS = {"sort": _sort_method(sort), "argsort": _sort_method(argsort), "nonzero": nonzero}


def _install_spec(spec) -> None:
    if not (spec.methods or spec.operators or spec.reflected):
        return
    fn, reflected = _method(spec)
    for name in spec.methods:
        setattr(Tensor, name, fn)
    # a binary operator leaves ``t op x`` to an x that takes part in NumPy's dispatch (elementwise._defers)
    op_fn = elementwise.install("operator", spec.name) if spec.family == "binary" else fn
    for name in spec.operators:
        setattr(Tensor, name, op_fn)
    for name in spec.reflected:
        setattr(Tensor, name, reflected)


def _elementwise(e) -> None:
    """Declare an op-table entry and give Tensor its methods, operators and in-place operator."""
    spec = declare(e.name, "unary" if e.arity == 1 else "binary", e.rule, kernel=e.name,
                   grad=NOT_DIFFERENTIABLE if e.grad == OP_NOT_DIFFERENTIABLE else grad.elementwise_rule(e),
                   methods=e.methods, operators=e.operators, reflected=e.reflected)
    _install_spec(spec)
    if e.inplace:
        setattr(Tensor, e.inplace, _inplace(e.name))


def _install() -> None:
    for spec in list(REGISTRY.values()):
        _install_spec(spec)
    Tensor.matmul = _strict_matmul  # the method keeps candle's rule; the operators promote
    # Copies and writes through views (tensor.py's docstring lists what is installed from where).
    Tensor.contiguous = contiguous
    Tensor.force_contiguous = force_contiguous
    Tensor.copy_ = copy_
    Tensor.fill_ = fill_
    Tensor.zero_ = zero_
    Tensor.__setitem__ = _setitem
    Tensor.unfold = unfold
    Tensor.sum_all = lambda self: reduce("sum", self, None, False)
    Tensor.sum_keepdim = lambda self, dim: reduce("sum", self, dim, True)
    Tensor.where = lambda self, a, b: where(self, a, b)  # self is the condition
    Tensor.__imatmul__ = _imatmul
    for name in composite.METHODS:
        setattr(Tensor, name, getattr(composite, name))


def _setitem(t, index, value):
    """``t[index] = value``; a bool tensor as the whole index is the standard's mask assignment."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0] if type(index[0]) is Tensor or isinstance(index[0], np.ndarray) else index
    if isinstance(index, np.ndarray) and index.dtype == np.bool_:
        index = from_numpy(np.ascontiguousarray(index))
    if type(index) is Tensor and index.dtype is BOOL:
        return _mask_assign(t, index, value)
    return setitem(t, index, value)


def _mask_assign(t, mask, value):
    # ``t[mask] = v``: a scalar (or one-element) v is ``where(mask, v, t)`` written back; a
    # value per selected element goes to the k-th true element, the running count of the
    # mask (a scan) saying which k each element is, then the same ``where``.
    if mask.ndim and mask.shape != t.shape[: mask.ndim]:
        raise StridedIndexError(
            f"setitem: a boolean mask must match the leading dims of the tensor, got mask {mask.shape} "
            f"for shape {t.shape}")
    m = mask.reshape(mask.shape + (1,) * (t.ndim - mask.ndim))
    if isinstance(value, Tensor) and value.numel != 1:
        rest = t.shape[mask.ndim:]
        flat = mask.reshape(-1)
        rank = cumulate("sum", flat, 0, I64)
        count = int(rank[-1].item()) if flat.numel else 0
        want = (count,) + rest
        try:
            v = value.broadcast_as(want) if value.shape != want else value
        except StridedError:
            raise StridedIndexError(f"setitem: {count} elements are selected by the mask, which a value of "
                                    f"shape {value.shape} does not broadcast to (want {want})") from None
        if count == 0:
            return
        k = binary("maximum", binary("sub", rank, 1), 0)  # unselected elements read any row: where drops them
        value = index_select(v, k, 0).reshape(mask.shape + rest)
    elif isinstance(value, Tensor):
        value = value.reshape(())
    write(t, where(m, value, t), "setitem")


def _imatmul(self, other):
    # ``a @= b`` writes a @ b into a (the standard: b square, so the shape stays)
    write(self, _matmul(self, other), "in-place matmul")
    return self


def _inplace(op: str):
    fn = elementwise.install("binary", op)

    def method(self, other):
        write(self, fn(self, other), "in-place " + op)
        return self

    method.__name__ = method.__qualname__ = "__i" + op + "__"
    return method


_install()
on_new_op(_elementwise)
