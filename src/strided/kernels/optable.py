"""The op table: every elementwise op, one entry each.

An entry says everything strided knows about an op: its scalar definition (per dtype
where the math differs; the functions are ``kernels.scalar``'s portable Python, which
each backend compiles), the dtypes it computes on, how its result dtype follows from its
operands (``ops.registry.DTYPE_RULES``), its gradient, whether it is heavy (a libm-sized
function per element: it goes parallel on fewer elements), the Tensor methods and
operators that call it, and its names in the Array API and in NumPy.  From the table come
the CPU's and CUDA's kernels, the op registry, Tensor's methods, the Array API functions,
NumPy's ufunc map, ``strided.fuse``'s ops and their gradients.  Adding an elementwise op is
one entry here (and its test rows).

Scalar definitions.  ``scalar`` maps a key to a definition: a compute dtype's name
("float32"), a kind ("f" float, "c" complex, "i" signed, "u" unsigned, "b" bool) or ""
(any); the most specific key wins.  A definition is a function of plain arithmetic, a
typed factory (``scalar.typed``, called with the dtype's numpy type), or the name of a
primitive (``scalar.PRIMITIVES``: "sqrt", "cexp", ...), which each backend binds.

Gradients.  A unary rule is ``fn(x, y, g)``: the input, the result and the gradient
flowing into the result, giving the input's gradient.  A binary rule is a pair, one
function ``fn(a, b, y, g)`` per operand (either may be a Python number; a number gets
no gradient, so its function is never called).  The rules use only operators and
methods that Tensor and ``strided.fuse``'s traced values both have, so one rule serves
eager autograd and fused backward passes.  ``NOT_DIFFERENTIABLE`` marks ops whose
result carries no gradient.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import StridedError
from . import scalar as S

__all__ = [
    "OPS", "Entry", "NOT_DIFFERENTIABLE", "op", "register_op", "on_new_op", "definition", "scalar_fn",
    "FLOAT", "INT", "BOOL", "COMPLEX",
]

FLOAT = frozenset({"float32", "float64"})
# int16 and uint16 are absent: their buffers would be read as half bits (common.WIDENED)
INT = frozenset({"uint8", "uint32", "uint64", "int8", "int32", "int64"})
BOOL = frozenset({"bool"})
COMPLEX = frozenset({"complex64", "complex128"})
NUMERIC = FLOAT | INT
ALL = NUMERIC | BOOL
FLOAT_C = FLOAT | COMPLEX
NUMERIC_C = NUMERIC | COMPLEX
ALL_C = ALL | COMPLEX

NOT_DIFFERENTIABLE = "not differentiable"


@dataclass(frozen=True)
class Entry:
    name: str
    arity: int
    scalar: dict
    dtypes: frozenset
    rule: str  # the result-dtype rule
    grad: object = None  # a rule (see the module docstring), NOT_DIFFERENTIABLE, or None: no rule
    heavy: bool = False
    bool_out: bool = False
    methods: tuple = ()
    operators: tuple = ()
    reflected: tuple = ()
    inplace: str | None = None  # the in-place operator (``__iadd__``)
    api: str | None = None  # the Array API function made from the entry (None: none, or written by hand)
    ufunc: str | None = None  # NumPy's ufunc computed by the entry
    not_on: dict = field(default_factory=dict)  # backend -> {dtype key: reason}

    def fn(self, dtype: str):
        """The scalar function for operands computed in ``dtype`` (a numpy dtype name)."""
        return scalar_fn(self, dtype)


OPS: dict[str, Entry] = {}
_LISTENERS: list = []


def on_new_op(fn) -> None:
    """Call ``fn(entry)`` for every entry: those there now, and each one added later.  The
    layers above (the op registry and Tensor's methods, the Array API namespace, NumPy's
    ufunc map) make their parts of an op this way, so an op added at run time is whole."""
    for e in list(OPS.values()):
        fn(e)
    _LISTENERS.append(fn)


def register_op(name, arity, scalar, dtypes, rule, **kw) -> Entry:
    """``strided.register_op``: add an elementwise op to the table, and so to every layer.
    ``scalar``, ``dtypes``, ``rule`` and the keywords are the ``Entry`` fields (see the
    module docstring); ``methods`` defaults to the op's name."""
    kw.setdefault("methods", (name,))
    return op(name, arity, scalar, dtypes, rule, **kw)


def op(name, arity, scalar, dtypes, rule, **kw) -> Entry:
    """Add one entry (a name is added once)."""
    if name in OPS:
        raise StridedError(f"register_op: op {name!r} is in the table already")
    if arity not in (1, 2):
        raise StridedError(f"register_op: {name}: expected arity 1 or 2, got {arity!r}")
    table = dict(scalar) if isinstance(scalar, dict) else {"": scalar}
    for key, fn in table.items():
        if getattr(fn, "__name__", None) == "<lambda>":
            # compiled code is named after the function: every lambda gets its own name
            fn.__name__ = fn.__qualname__ = f"{name}_{key or 'any'}"
    e = OPS[name] = Entry(name, arity, table, frozenset(dtypes), rule, **kw)
    for fn in _LISTENERS:
        fn(e)
    return e


def definition(entry: Entry, dtype: str):
    """The entry's definition for operands computed in ``dtype`` (a numpy dtype name)."""
    d = np.dtype(dtype)
    for key in (d.name, d.kind, ""):
        fn = entry.scalar.get(key)
        if fn is not None:
            return fn
    raise KeyError(f"optable: {entry.name} has no scalar definition for {d.name}")


def scalar_fn(entry: Entry, dtype: str):
    """The entry's scalar function for ``dtype`` on the CPU (primitives bound to NumPy's)."""
    return S.instance(definition(entry, dtype), np.dtype(dtype).type)


# -- gradient helpers: what a rule needs beyond operators -------------------------------------
def _log(v):
    return v.log() if hasattr(v, "log") else math.log(v)


def _mask(cond, g):
    return g * cond.to_dtype(g.dtype)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_ZERO = lambda x, y, g: g * 0  # piecewise constant: zero almost everywhere, as PyTorch gives


def unary(name, scalar, dtypes, rule, grad, **kw):
    return op(name, 1, scalar, dtypes, rule, grad=grad, methods=kw.pop("methods", (name,)), **kw)


def binary(name, scalar, dtypes, rule, grad, **kw):
    return op(name, 2, scalar, dtypes, rule, grad=grad, **kw)


# -- unary ----------------------------------------------------------------------------------
# name, scalar, dtypes, dtype rule, gradient of (x, y = op(x), g), then names and flags
unary("exp", {"float32": S.expf, "float64": S.expd, "c": "cexp"}, FLOAT_C, "float", lambda x, y, g: g * y,
      heavy=True, api="exp", ufunc="exp")
unary("log", {"float32": S.logf, "float64": S.logd, "c": "clog"}, FLOAT_C, "float", lambda x, y, g: g / x,
      heavy=True, api="log", ufunc="log")
unary("sqrt", {"f": "sqrt", "c": "csqrt"}, FLOAT_C, "float", lambda x, y, g: g * 0.5 / y, heavy=True,
      api="sqrt", ufunc="sqrt")
unary("sqr", lambda x: x * x, ALL_C, "same", lambda x, y, g: g * x * 2, api="square", ufunc="square")
unary("abs", {"f": "fabs", "i": S.abs_signed, "u": lambda x: x, "b": lambda x: x}, ALL, "same",
      lambda x, y, g: g * x.sign(), operators=("__abs__",), api="abs", ufunc="absolute")
unary("neg", lambda x: -x, NUMERIC_C, "same", lambda x, y, g: -g, operators=("__neg__",), api="negative",
      ufunc="negative")
unary("relu", S.zero_below, ALL, "same", lambda x, y, g: _mask(x > 0, g))
unary("tanh", {"float32": S.tanhf, "float64": S.tanhd, "c": S.ctanh_special}, FLOAT_C, "float",
      lambda x, y, g: g * (1 - y * y), heavy=True, api="tanh", ufunc="tanh")
unary("sigmoid", {"float32": S.sigmoidf, "float64": S.sigmoidd}, FLOAT, "float", lambda x, y, g: g * y * (1 - y),
      heavy=True)
unary("sin", {"f": S.sin_real, "c": "csin"}, FLOAT_C, "float", lambda x, y, g: g * x.cos(),
      heavy=True, api="sin", ufunc="sin")
unary("cos", {"f": S.cos_real, "c": "ccos"}, FLOAT_C, "float", lambda x, y, g: -(g * x.sin()), heavy=True,
      api="cos", ufunc="cos")
unary("sign", {"c": S.sign_complex, "": S.sign_real}, NUMERIC_C, "same", _ZERO, api="sign", ufunc="sign")
unary("recip", {"c": S.recip_complex, "": S.recip_real}, FLOAT_C, "float", lambda x, y, g: -(g * y * y),
      heavy=True, api="reciprocal", ufunc="reciprocal")
unary("acos", {"f": S.acos_real, "c": S.cacos_special}, FLOAT_C, "float",
      lambda x, y, g: -(g / (1 - x * x).sqrt()), heavy=True, api="acos", ufunc="arccos")
unary("acosh", {"f": S.acosh_real, "c": S.cacosh_principal}, FLOAT_C, "float",
      lambda x, y, g: g / (x * x - 1).sqrt(), heavy=True, api="acosh", ufunc="arccosh")
unary("asin", {"f": S.asin_real, "c": "casin"}, FLOAT_C, "float",
      lambda x, y, g: g / (1 - x * x).sqrt(), heavy=True, api="asin", ufunc="arcsin")
unary("asinh", {"f": S.asinh_real, "c": S.casinh_special}, FLOAT_C, "float",
      lambda x, y, g: g / (x * x + 1).sqrt(), heavy=True, api="asinh", ufunc="arcsinh")
unary("atan", {"f": S.atan_real, "c": "catan"}, FLOAT_C, "float",
      lambda x, y, g: g / (1 + x * x), heavy=True, api="atan", ufunc="arctan")
unary("atanh", {"f": S.atanh_real, "c": S.catanh_special}, FLOAT_C, "float",
      lambda x, y, g: g / (1 - x * x), heavy=True, api="atanh", ufunc="arctanh")
unary("cosh", {"f": S.cosh_real, "c": S.ccosh_special}, FLOAT_C, "float",
      lambda x, y, g: g * x.sinh(), heavy=True, api="cosh", ufunc="cosh")
unary("sinh", {"f": S.sinh_real, "c": S.csinh_special}, FLOAT_C, "float",
      lambda x, y, g: g * x.cosh(), heavy=True, api="sinh", ufunc="sinh")
unary("tan", {"f": S.tan_real, "c": "ctan"}, FLOAT_C, "float",
      lambda x, y, g: g * (1 + y * y), heavy=True, api="tan", ufunc="tan")
unary("expm1", {"f": S.expm1_real, "c": S.cexpm1_special}, FLOAT_C, "float",
      lambda x, y, g: g * (y + 1), heavy=True, api="expm1", ufunc="expm1")
unary("log1p", {"float32": S.log1pf, "float64": S.log1pd, "c": "clog1p"}, FLOAT_C, "float",
      lambda x, y, g: g / (1 + x), heavy=True, api="log1p", ufunc="log1p")
unary("log2", {"float32": S.log2f, "float64": S.log2d, "c": "clog2"}, FLOAT_C, "float",
      lambda x, y, g: g / (x * _LN2), heavy=True, api="log2", ufunc="log2")
unary("log10", {"float32": S.log10f, "float64": S.log10d, "c": "clog10"}, FLOAT_C, "float",
      lambda x, y, g: g / (x * _LN10), heavy=True, api="log10", ufunc="log10")
# floats only: an integer is its own rounding (the namespace's ceil & co. copy integers)
unary("ceil", "ceil", FLOAT, "same", _ZERO)
unary("floor", "floor", FLOAT, "same", _ZERO)
unary("trunc", "trunc", FLOAT, "same", _ZERO)
unary("round", "rint", FLOAT, "same", _ZERO)  # half to even, as the standard's round
unary("not", lambda x: not x, BOOL, "bool", NOT_DIFFERENTIABLE, methods=("logical_not",), api="logical_not",
      ufunc="logical_not")
unary("bitwise_invert", {"b": lambda x: not x, "": lambda x: ~x}, INT | BOOL, "same", NOT_DIFFERENTIABLE,
      methods=(), operators=("__invert__",), api="bitwise_invert", ufunc="invert")
# the identity on real dtypes, whose gradient is the identity too (autograd is real)
unary("conj", lambda x: x.conjugate(), NUMERIC_C, "same", lambda x, y, g: g)


# -- binary ---------------------------------------------------------------------------------
# name, scalar, dtypes, dtype rule, (gradient of a, of b) given (a, b, y = a op b, g)
def _same(first):
    """maximum/minimum: ties go to the left operand, so a gradient is never split or doubled."""
    return (lambda a, b, y, g: _mask(first(a, b), g), lambda a, b, y, g: _mask(~first(a, b), g))


binary("add", lambda x, y: x + y, ALL_C, "promote", (lambda a, b, y, g: g, lambda a, b, y, g: g),
       methods=("add", "broadcast_add"), operators=("__add__",), reflected=("__radd__",), inplace="__iadd__",
       api="add", ufunc="add")
binary("sub", lambda x, y: x - y, NUMERIC_C, "promote", (lambda a, b, y, g: g, lambda a, b, y, g: -g),
       methods=("sub", "broadcast_sub"), operators=("__sub__",), reflected=("__rsub__",), inplace="__isub__",
       api="subtract", ufunc="subtract")
binary("mul", lambda x, y: x * y, ALL_C, "promote", (lambda a, b, y, g: g * b, lambda a, b, y, g: g * a),
       methods=("mul", "broadcast_mul"), operators=("__mul__",), reflected=("__rmul__",), inplace="__imul__",
       api="multiply", ufunc="multiply")
binary("div", {"c": S.div_complex, "": lambda x, y: x / y}, FLOAT_C, "true_div",
       (lambda a, b, y, g: g / b, lambda a, b, y, g: -(g * a) / (b * b)), heavy=True,
       methods=("div", "broadcast_div"), operators=("__truediv__",), reflected=("__rtruediv__",),
       inplace="__itruediv__", api="divide", ufunc="divide")
# On a tie the second operand wins, as in NumPy's SIMD loops (maxps/minps): it only shows
# on signed zeros, where maximum(-0.0, 0.0) is 0.0 and maximum(0.0, -0.0) is -0.0.
binary("maximum", lambda x, y: x if (x > y or x != x) else y, ALL, "promote", _same(lambda a, b: a >= b),
       methods=("maximum", "broadcast_maximum"), api="maximum", ufunc="maximum")
binary("minimum", lambda x, y: x if (x < y or x != x) else y, ALL, "promote", _same(lambda a, b: a <= b),
       methods=("minimum", "broadcast_minimum"), api="minimum", ufunc="minimum")
binary("pow", {"c": S.pow_complex, "f": S.pow_real, "b": lambda x, y: x or not y,
              "": S.pow_int}, ALL_C, "promote",
       (lambda a, b, y, g: g * b * (a ** (b - 1)), lambda a, b, y, g: g * y * _log(a)), heavy=True,
       methods=("pow",), operators=("__pow__",), reflected=("__rpow__",), inplace="__ipow__", api="pow",
       ufunc="power")
for _name, _fn, _dunder, _api, _types in (
        ("eq", lambda x, y: x == y, "__eq__", "equal", ALL_C),
        ("ne", lambda x, y: x != y, "__ne__", "not_equal", ALL_C),
        ("lt", lambda x, y: x < y, "__lt__", "less", ALL), ("le", lambda x, y: x <= y, "__le__", "less_equal", ALL),
        ("gt", lambda x, y: x > y, "__gt__", "greater", ALL),
        ("ge", lambda x, y: x >= y, "__ge__", "greater_equal", ALL)):
    binary(_name, _fn, _types, "compare", NOT_DIFFERENTIABLE, bool_out=True, methods=(_name,), operators=(_dunder,),
           api=_api, ufunc=_api)
binary("logical_and", lambda x, y: x & y, BOOL, "bool", NOT_DIFFERENTIABLE, bool_out=True, methods=("logical_and",),
       api="logical_and", ufunc="logical_and")
binary("logical_or", lambda x, y: x | y, BOOL, "bool", NOT_DIFFERENTIABLE, bool_out=True, methods=("logical_or",),
       api="logical_or", ufunc="logical_or")
# & | ^ ~ are bitwise, as in NumPy (on bools they are the logical ops)
for _name, _fn, _dunder in (("bitwise_and", lambda x, y: x & y, "and"), ("bitwise_or", lambda x, y: x | y, "or"),
                            ("bitwise_xor", lambda x, y: x ^ y, "xor")):
    binary(_name, _fn, INT | BOOL, "promote", NOT_DIFFERENTIABLE, operators=(f"__{_dunder}__",),
           reflected=(f"__r{_dunder}__",), inplace=f"__i{_dunder}__", api=_name, ufunc=_name)
# float results, as true division
binary("atan2", {"f": S.atan2_real}, FLOAT, "true_div",
       (lambda a, b, y, g: g * b / (a * a + b * b), lambda a, b, y, g: -(g * a) / (a * a + b * b)), heavy=True,
       methods=("atan2",), api="atan2", ufunc="arctan2")
binary("hypot", {"f": S.hypot_real}, FLOAT, "true_div",
       (lambda a, b, y, g: g * a / y, lambda a, b, y, g: g * b / y), heavy=True, methods=("hypot",), api="hypot",
       ufunc="hypot")
# +-1 times g (whether the sign of a was kept); zero for b almost everywhere
binary("copysign", "copysign", FLOAT, "true_div",
       (lambda a, b, y, g: _mask(a.copysign(b) == a, g) * 2 - g, lambda a, b, y, g: g * 0), methods=("copysign",),
       api="copysign", ufunc="copysign")
binary("logaddexp", {"float32": S.logaddexpf, "f": "logaddexp"}, FLOAT, "true_div",
       (lambda a, b, y, g: g * (a - y).exp(), lambda a, b, y, g: g * (b - y).exp()), heavy=True,
       methods=("logaddexp",), api="logaddexp", ufunc="logaddexp")
# Python's floor division and modulo are NumPy's; under the numpy error model an integer
# divided by zero gives 0, as NumPy does (with its warning).
binary("floor_divide", {"f": "ffloordiv", "": lambda x, y: x // y}, NUMERIC, "promote", NOT_DIFFERENTIABLE,
       heavy=True, methods=("floor_divide",), operators=("__floordiv__",), reflected=("__rfloordiv__",),
       inplace="__ifloordiv__", api="floor_divide", ufunc="floor_divide")
binary("remainder", {"f": "fmod", "": lambda x, y: x % y}, NUMERIC, "promote",
       (lambda a, b, y, g: g, lambda a, b, y, g: -(g * (a // b))), heavy=True, methods=("remainder",),
       operators=("__mod__",), reflected=("__rmod__",), inplace="__imod__", api="remainder", ufunc="remainder")
binary("nextafter", "nextafter", FLOAT, "promote", NOT_DIFFERENTIABLE, methods=("nextafter",))
# Shifts wrap as NumPy's: a count outside [0, bits) gives 0 (left) or the sign (right).
binary("bitwise_left_shift", S.shift_left, INT, "promote", NOT_DIFFERENTIABLE, operators=("__lshift__",),
       reflected=("__rlshift__",), inplace="__ilshift__")
binary("bitwise_right_shift", S.shift_right, INT, "promote", NOT_DIFFERENTIABLE, operators=("__rshift__",),
       reflected=("__rrshift__",), inplace="__irshift__")
