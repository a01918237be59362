"""The op layer: every op declared once (below), its Tensor methods derived from that.

Each line of the table names an op, its family, its result-dtype rule, its name in
the family's kernel table, its gradient rule and the Tensor methods and operators
that call it.  Adding an elementwise op is one kernel function in
``kernels/elementwise.py``'s table and one line here (see docs/architecture.md).

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
from ..dtype import bool_ as BOOL, i64 as I64
from ..errors import StridedError, StridedIndexError
from ..tensor import Tensor
from . import elementwise, grad
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

_U = grad.unary_rule
D = grad.UNARY

# -- the table ----------------------------------------------------------------------------
# unary: name, dtype rule, gradient (of x, y = op(x), g), methods, operators
declare("exp", "unary", "float", kernel="exp", grad=_U(D["exp"]), methods=("exp",))
declare("log", "unary", "float", kernel="log", grad=_U(D["log"]), methods=("log",))
declare("sqrt", "unary", "float", kernel="sqrt", grad=_U(D["sqrt"]), methods=("sqrt",))
declare("sqr", "unary", "same", kernel="sqr", grad=_U(D["sqr"]), methods=("sqr",))
declare("abs", "unary", "same", kernel="abs", grad=_U(D["abs"]), methods=("abs",), operators=("__abs__",))
declare("neg", "unary", "same", kernel="neg", grad=_U(D["neg"]), methods=("neg",), operators=("__neg__",))
declare("relu", "unary", "same", kernel="relu", grad=_U(D["relu"]), methods=("relu",))
declare("tanh", "unary", "float", kernel="tanh", grad=_U(D["tanh"]), methods=("tanh",))
declare("sigmoid", "unary", "float", kernel="sigmoid", grad=_U(D["sigmoid"]), methods=("sigmoid",))
declare("sin", "unary", "float", kernel="sin", grad=_U(D["sin"]), methods=("sin",))
declare("cos", "unary", "float", kernel="cos", grad=_U(D["cos"]), methods=("cos",))
declare("sign", "unary", "same", kernel="sign", grad=_U(D["sign"]), methods=("sign",))
declare("recip", "unary", "float", kernel="recip", grad=_U(D["recip"]), methods=("recip",))
for _name in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "expm1", "log1p", "log2",
              "log10"):
    declare(_name, "unary", "float", kernel=_name, grad=_U(D[_name]), methods=(_name,))
for _name in ("ceil", "floor", "trunc", "round"):  # floats only: an integer is its own rounding (array_api)
    declare(_name, "unary", "same", kernel=_name, grad=_U(D[_name]), methods=(_name,))
declare("not", "unary", "bool", kernel="not", grad=NOT_DIFFERENTIABLE, methods=("logical_not",))
declare("bitwise_invert", "unary", "same", kernel="bitwise_invert", grad=NOT_DIFFERENTIABLE, operators=("__invert__",))
# the identity on real dtypes, whose gradient is the identity too (autograd is real)
declare("conj", "unary", "same", kernel="conj", grad=grad.identity_back, methods=("conj",))

# binary: a op b, with NumPy's broadcasting; reflected operators compute other op self
_B = grad.binary_rule
declare("add", "binary", "promote", kernel="add", grad=_B("add"), methods=("add", "broadcast_add"),
        operators=("__add__",), reflected=("__radd__",))
declare("sub", "binary", "promote", kernel="sub", grad=_B("sub"), methods=("sub", "broadcast_sub"),
        operators=("__sub__",), reflected=("__rsub__",))
declare("mul", "binary", "promote", kernel="mul", grad=_B("mul"), methods=("mul", "broadcast_mul"),
        operators=("__mul__",), reflected=("__rmul__",))
declare("div", "binary", "true_div", kernel="div", grad=_B("div"), methods=("div", "broadcast_div"),
        operators=("__truediv__",), reflected=("__rtruediv__",))
declare("maximum", "binary", "promote", kernel="maximum", grad=_B("maximum"),
        methods=("maximum", "broadcast_maximum"))
declare("minimum", "binary", "promote", kernel="minimum", grad=_B("minimum"),
        methods=("minimum", "broadcast_minimum"))
declare("pow", "binary", "promote", kernel="pow", grad=_B("pow"), methods=("pow",), operators=("__pow__",),
        reflected=("__rpow__",))
for _name, _dunder in (("eq", "__eq__"), ("ne", "__ne__"), ("lt", "__lt__"), ("le", "__le__"), ("gt", "__gt__"),
                       ("ge", "__ge__")):
    declare(_name, "binary", "compare", kernel=_name, grad=NOT_DIFFERENTIABLE, methods=(_name,),
            operators=(_dunder,))
declare("logical_and", "binary", "bool", kernel="logical_and", grad=NOT_DIFFERENTIABLE, methods=("logical_and",))
declare("logical_or", "binary", "bool", kernel="logical_or", grad=NOT_DIFFERENTIABLE, methods=("logical_or",))
# & | ^ ~ are bitwise, as in NumPy (on bools they are the logical ops)
for _name, _dunder in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")):
    declare(_name, "binary", "promote", kernel=_name, grad=NOT_DIFFERENTIABLE,
            operators=(f"__{_dunder}__",), reflected=(f"__r{_dunder}__",))
for _name in ("atan2", "hypot", "copysign", "logaddexp"):  # float results, as true division
    declare(_name, "binary", "true_div", kernel=_name, grad=_B(_name), methods=(_name,))
declare("floor_divide", "binary", "promote", kernel="floor_divide", grad=NOT_DIFFERENTIABLE, methods=("floor_divide",),
        operators=("__floordiv__",), reflected=("__rfloordiv__",))
declare("remainder", "binary", "promote", kernel="remainder", grad=_B("remainder"), methods=("remainder",),
        operators=("__mod__",), reflected=("__rmod__",))
declare("nextafter", "binary", "promote", kernel="nextafter", grad=NOT_DIFFERENTIABLE, methods=("nextafter",))
# Shifts wrap as NumPy's: a count outside [0, bits) gives 0 (left) or the sign (right).
declare("bitwise_left_shift", "binary", "promote", kernel="bitwise_left_shift", grad=NOT_DIFFERENTIABLE,
        operators=("__lshift__",), reflected=("__rlshift__",))
declare("bitwise_right_shift", "binary", "promote", kernel="bitwise_right_shift", grad=NOT_DIFFERENTIABLE,
        operators=("__rshift__",), reflected=("__rrshift__",))
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
        from .. import linalg

        _LINALG.append(linalg.matmul)
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


def _install() -> None:
    for spec in REGISTRY.values():
        if not (spec.methods or spec.operators or spec.reflected):
            continue
        fn, reflected = _method(spec)
        for name in spec.methods:
            setattr(Tensor, name, fn)
        # a binary operator leaves ``t op x`` to an x that takes part in NumPy's dispatch (elementwise._defers)
        op_fn = elementwise.install("operator", spec.name) if spec.family == "binary" else fn
        for name in spec.operators:
            setattr(Tensor, name, op_fn)
        for name in spec.reflected:
            setattr(Tensor, name, reflected)
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
    for op, dunder in (("add", "__iadd__"), ("sub", "__isub__"), ("mul", "__imul__"), ("div", "__itruediv__"),
                       ("pow", "__ipow__"), ("bitwise_and", "__iand__"), ("bitwise_or", "__ior__"),
                       ("bitwise_xor", "__ixor__"), ("floor_divide", "__ifloordiv__"),
                       ("remainder", "__imod__"), ("bitwise_left_shift", "__ilshift__"),
                       ("bitwise_right_shift", "__irshift__")):
        setattr(Tensor, dunder, _inplace(op))
    Tensor.__imatmul__ = _imatmul


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
