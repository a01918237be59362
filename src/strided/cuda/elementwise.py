"""The elementwise family on CUDA: the general path, on the CPU planner's merged dims.

``unary`` and ``binary`` take ``strided.kernels.elementwise``'s arguments (an op's kernel
name, buffers and layouts, output last).  The dims are those ``NdIter`` merges for the
CPU's planner (``output_layout`` is the CPU's too, so results have the same strides on
both devices); one grid-stride kernel per op and dtypes walks them with the odometer, per
element.  The op layer decides dtypes as on the CPU, so the operands compute in one dtype
(``kernels.common.COMPUTE``): f16 and bf16 are read from their bits into f32 registers and
each result is rounded once as it is stored (``cuda.half``: the CPU's conversions, so the
bits of every correctly rounded op are the CPU's), ``f16 + bf16 -> f32`` and a half with
an f32 scalar mix as on the CPU.  An op takes the dtypes the CPU's table gives it
(``kernels.elementwise.UNARY_OPS``/``BINARY_OPS``), less ``COMPLEX_NOT_ON_CUDA``; the
CPU's ops CUDA lacks would be ``NOT_ON_CUDA`` (none now), each with its reason, and both
are refused by name.  int16 and uint16 are widened by the op layer, as for the CPU.  ``where`` walks
four operands the same way.  A scalar operand arrives as a 1-element host array
(``ops.elementwise`` builds it) and travels to the device with the launch.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
from numba import cuda

from ..errors import DTypeError, ShapeError, StridedError
from ..kernels.common import BITS, COMPUTE, DTYPES, WIDENED, check_layout
from ..kernels.copy import check_dst_layout
from ..kernels.elementwise import BINARY_OPS, UNARY_OPS
from ..kernels.elementwise import output_layout  # noqa: F401  (the family's entry point, shared with the CPU)
from ..layout.iterate import NdIter
from ..layout.layout import Layout
from . import half, launch
from .device import is_device_array, kernel_view

__all__ = ["unary", "binary", "where", "bind", "output_layout", "UNARY", "BINARY", "NOT_ON_CUDA",
           "COMPLEX_NOT_ON_CUDA", "DTYPES_COMPUTED", "unary_kernel", "binary_kernel"]

# The dtypes these kernels compute on: every dtype a CPU kernel computes on (int16 and
# uint16 are widened before they come here).
DTYPES_COMPUTED = frozenset(d for d in DTYPES if d not in WIDENED)

# Each op is an expression in ``x`` (and ``y``) pasted into its kernel's source (a device
# function per op would be one more call to inline; the half conversions and the few
# forms that need statements are device functions).  An entry is one expression, or a
# dict from a dtype kind ("f" real float, "c" complex, "i", "u", "b") to the expression for
# that kind, "" for the rest.  ``T`` is the numpy type of the compute dtype and ``BITS`` its
# width: numba types an integer literal as int64, and int64 with uint64 unifies to float64,
# so a constant in an expression that may be uint64 is written ``T(0)``.
# NaN propagates through maximum and minimum, as NumPy's do.
_BIG = "4503599627370496.0"  # 2**52: every float at least this large is an integer
_ROUNDED = f"x if not (abs(x) < {_BIG}) else math.copysign({{}}, x)"  # the sign of x, zero's too
UNARY = {
    "neg": "-x", "abs": {"u": "x", "b": "x", "": "abs(x)"}, "sqr": "x * x",
    "sqrt": {"c": "cmath.sqrt(x)", "": "math.sqrt(x)"},
    "sigmoid": "1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))",
    "recip": "1.0 / x", "relu": {"u": "x", "b": "x", "": "0 if x < 0 else x"},
    "sign": {"u": "T(1) if x > 0 else T(0)", "": "1 if x > 0 else (-1 if x < 0 else (0 if x == 0 else x))"},
    "not": "not x", "bitwise_invert": {"b": "not x", "": "~x"}, "conj": {"c": "x.conjugate()", "": "x"},
    # numba's math.floor and friends return Python ints: kept to floats below 2**52 (so
    # never NaN or inf) and given back the sign of x, which -0.0 and ceil(-0.5) need
    **{op: _ROUNDED.format(f"math.{op}(float(x))") for op in ("ceil", "floor", "trunc")},
    # half to even: adding 2**52 rounds |x| in f64, exactly as rint, for f32 and f64 alike
    "round": _ROUNDED.format(f"(abs(float(x)) + {_BIG}) - {_BIG}"),
    **{op: {"c": f"cmath.{op}(x)", "": f"math.{op}(x)"}
       for op in ("exp", "log", "sin", "cos", "tanh", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh",
                  "sinh", "tan", "log10")},
    **{op: f"math.{op}(x)" for op in ("expm1", "log1p", "log2")},
}
BINARY = {
    "add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y",
    "maximum": "x if (x > y or x != x) else y", "minimum": "x if (x < y or x != x) else y",
    "eq": "x == y", "ne": "x != y", "lt": "x < y", "le": "x <= y", "gt": "x > y", "ge": "x >= y",
    "pow": {"f": "x ** y", "b": "x or not y", "": "ipow(x, y, T(1))"},
    "atan2": "math.atan2(x, y)", "hypot": "math.hypot(x, y)", "copysign": "math.copysign(x, y)",
    "logical_and": "x and y", "logical_or": "x or y",
    "bitwise_and": "x & y", "bitwise_or": "x | y", "bitwise_xor": "x ^ y",
    # NumPy's npy_logaddexp: equal operands (infinities of one sign) first, NaN last
    "logaddexp": "x + 0.6931471805599453 if x == y else (x + math.log1p(math.exp(y - x)) if x > y else "
                 "(y + math.log1p(math.exp(x - y)) if x < y else x - y))",
    # Python's // and % are NumPy's floor_divide and remainder; a zero divisor gives NumPy's
    # a / b and NaN for floats, 0 for integers (numba-cuda's numpy error model)
    "floor_divide": {"f": "x / y if y == 0 else x // y", "": "x // y"},
    "remainder": {"f": "(x - x) / (y - y) if y == 0 else x % y", "": "x % y"},
    # NumPy's shifts: a count outside [0, bits) shifts every bit out
    "bitwise_left_shift": "T(0) if (y < 0 or y >= BITS) else x << y",
    "bitwise_right_shift": "((T(-1) if x < 0 else T(0)) if (y < 0 or y >= BITS) else x >> y)",
}
BINARY["nextafter"] = "NEXT(x, y)"
# The CPU's ops CUDA has no kernel for, with the reason (tests/cuda/on_device/
# test_cuda_elementwise_table.py fails on a CPU op that is in neither table).
NOT_ON_CUDA: dict = {}
# Ops the CPU computes on complex numbers and CUDA does not, with the reason.
COMPLEX_NOT_ON_CUDA = {
    "div": "numba-cuda's complex quotient is not NumPy's Smith loop (the CPU's bits)",
    "recip": "numba-cuda's complex quotient is not NumPy's Smith loop (the CPU's bits)",
    "pow": "numba-cuda's complex power differs from NumPy's at zero",
    "sign": "z / |z| needs the complex quotient (see div)",
    **{op: "numba-cuda's cmath has no such function" for op in ("expm1", "log1p", "log2")},
}

_UNARY_SRC = """
def kernel(out, ooff, ost, src, soff, sst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, s = point2(e, shape, ooff, ost, soff, sst)
        x = {x}
        out[d] = {expr}
"""
_BINARY_SRC = """
def kernel(out, ooff, ost, a, aoff, ast, b, boff, bst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, i, j = point3(e, shape, ooff, ost, aoff, ast, boff, bst)
        x = {x}
        y = {y}
        out[d] = {expr}
"""


@cuda.jit(device=True)
def ipow(x, y, one):
    """The CPU's integer power: 1 / x**|y| truncated for a negative exponent, else by squaring
    (the products wrap as the dtype's own do, once narrowed on store)."""
    if y < 0:
        if x == one:
            return one
        if x == -one:
            return one if (y & 1) == 0 else x
        return one - one
    r = one
    b = x
    e = y
    while e:
        if e & 1:
            r = r * b
        b = b * b
        e >>= 1
    return r


def _nextafter(fty, ity):
    """NumPy's nextafter for the float type ``fty`` whose bits are the int type ``ity``: the
    neighbour of x toward y is one step of x's bits, away from zero or toward it."""
    tiny = ity(1).view(fty)

    @cuda.jit(device=True)
    def nextafter(x, y):
        if x != x or y != y:
            return x + y
        if x == y:
            return y
        if x == 0:
            return tiny if y > 0 else -tiny
        b = fty(x).view(ity)
        if (x < y) == (x > 0):
            b += 1
        else:
            b -= 1
        return ity(b).view(fty)

    return nextafter


_NEXTAFTER = {4: _nextafter(np.float32, np.int32), 8: _nextafter(np.float64, np.int64)}


def _expr(table: dict, op: str, comp: np.dtype) -> str:
    entry = table[op]
    if isinstance(entry, dict):
        entry = entry.get(comp.kind, entry.get(""))
    return entry


_KERNELS: dict = {}


def _make(template: str, key: tuple, table: dict, out_dtype, *in_dtypes):
    """The kernel of op ``key[0]`` for these dtypes (made once per key): the op's expression
    on the computed values, the operands loaded and the result stored through ``cuda.half``."""
    if key not in _KERNELS:
        op = key[0]
        comp = np.dtype(COMPUTE[in_dtypes[0]])
        expr = _expr(table, op, comp)
        if len(in_dtypes) == 1:
            loads = {"x": half.load(in_dtypes[0], "src[s]")}
        else:
            loads = {"x": half.load(in_dtypes[0], "a[i]"), "y": half.load(in_dtypes[1], "b[j]")}
        src = template.format(expr=half.store(out_dtype, expr), **loads)
        scope = {"cuda": cuda, "math": math, "cmath": cmath, "point2": launch.point2, "point3": launch.point3,
                 "ipow": ipow, "T": comp.type, "BITS": comp.itemsize * 8, "NEXT": _NEXTAFTER.get(comp.itemsize),
                 **half.SCOPE}
        exec(src, scope)  # noqa: S102  (our own templates and expressions)
        _KERNELS[key] = cuda.jit(scope["kernel"])
    return _KERNELS[key]


def unary_kernel(op: str, out_dtype, src_dtype):
    """The kernel of unary ``op`` from a ``src_dtype`` buffer into an ``out_dtype`` one."""
    out_dtype, src_dtype = np.dtype(out_dtype), np.dtype(src_dtype)
    return _make(_UNARY_SRC, (op, out_dtype, src_dtype), UNARY, out_dtype, src_dtype)


def binary_kernel(op: str, out_dtype, a_dtype, b_dtype):
    """The kernel of binary ``op`` on buffers of these dtypes."""
    out_dtype, a_dtype, b_dtype = np.dtype(out_dtype), np.dtype(a_dtype), np.dtype(b_dtype)
    return _make(_BINARY_SRC, (op, out_dtype, a_dtype, b_dtype), BINARY, out_dtype, a_dtype, b_dtype)


def _on_device(op: str, what: str, buf, lay: Layout):
    """``buf`` as a device array: a scalar's 1-element host array (every stride 0) goes to
    the device; any other host array is a mixed-device call, refused."""
    if is_device_array(buf):
        return buf
    if isinstance(buf, np.ndarray) and buf.shape == (1,) and all(s == 0 for s in lay.stride) and lay.offset == 0:
        return cuda.to_device(buf)
    got = "a host numpy array" if isinstance(buf, np.ndarray) else type(buf).__name__
    raise StridedError(f"{op}: expected {what} on the CUDA device, got {got}")


def _check(op: str, specs: dict, out, out_layout: Layout, operands) -> list:
    """The operands as device arrays, once everything about them is checked; ``specs`` the
    CPU's table of the family (None: ``where``, which computes nothing)."""
    if specs is not None:
        if op in NOT_ON_CUDA:
            raise StridedError(f"{op}: not on CUDA yet ({NOT_ON_CUDA[op]}); t.cpu() moves a tensor to the host")
        if op not in specs or op not in (UNARY if specs is UNARY_OPS else BINARY):
            raise StridedError(f"{op}: no such elementwise op on CUDA (CUDA elementwise ops: "
                               f"{', '.join(UNARY if specs is UNARY_OPS else BINARY)})")
    if not is_device_array(out):
        raise StridedError(f"{op}: expected out on the CUDA device, got {type(out).__name__}")
    check_layout(op, "out_layout", out_layout).validate(len(out))
    check_dst_layout(op, out_layout)
    bufs = []
    for what, buf, lay in operands:
        buf = _on_device(op, what, buf, lay)
        check_layout(op, f"{what}_layout", lay).validate(len(buf))
        if lay.shape != out_layout.shape:
            raise ShapeError(f"{op}: {what} shape {lay.shape} and out shape {out_layout.shape} must be equal")
        if specs is not None and buf.dtype not in DTYPES_COMPUTED:
            raise DTypeError(f"{op}: {what} has dtype {DTYPES.get(buf.dtype, buf.dtype)}, which the kernels do not "
                             "compute on (the op layer widens int16 and uint16 to 32 bits)")
        if specs is not None:
            comp = COMPUTE[buf.dtype]
            if comp not in specs[op].dtypes:
                raise DTypeError(f"{op}: not defined for a {DTYPES[buf.dtype]} {what} (on CUDA as on the CPU)")
            if buf.dtype.kind == "c" and op in COMPLEX_NOT_ON_CUDA:
                raise DTypeError(f"{op}: a {DTYPES[buf.dtype]} {what} is not computed on CUDA "
                                 f"({COMPLEX_NOT_ON_CUDA[op]})")
        bufs.append(buf)
    return bufs


def _walk(out_layout: Layout, layouts) -> tuple:
    """The merged dims and every operand's strides, output first, as the kernels take them."""
    it = NdIter(out_layout, *layouts)
    return it.shape, it.strides, it.offsets


def unary(op: str, src, src_layout: Layout, out, out_layout: Layout) -> None:
    """``out = op(src)`` elementwise on device buffers (out computes in src's dtype)."""
    (src,) = _check(op, UNARY_OPS, out, out_layout, (("src", src, src_layout),))
    if COMPUTE.get(out.dtype) != COMPUTE[src.dtype]:
        raise DTypeError(f"{op}: expected an output computing in {COMPUTE[src.dtype]}, got {out.dtype}")
    n = out_layout.numel
    if n == 0:
        return
    shape, (ost, sst), (ooff, soff) = _walk(out_layout, (src_layout,))
    unary_kernel(op, out.dtype, src.dtype)[launch.grid(n)](kernel_view(out), ooff, ost, kernel_view(src), soff,
                                                           sst, shape, n)


def binary(op: str, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout) -> None:
    """``out = op(a, b)`` elementwise on device buffers that compute in one dtype (out is
    bool for comparisons)."""
    a, b = _check(op, BINARY_OPS, out, out_layout, (("a", a, a_layout), ("b", b, b_layout)))
    comp = COMPUTE[a.dtype]
    if COMPUTE[b.dtype] != comp:
        raise DTypeError(f"{op}: expected a and b computing in one dtype on CUDA, got {a.dtype} and {b.dtype}")
    want = "bool" if BINARY_OPS[op].bool_out else comp
    if COMPUTE.get(out.dtype) != want:
        raise DTypeError(f"{op}: expected an output computing in {want}, got {out.dtype}")
    n = out_layout.numel
    if n == 0:
        return
    shape, (ost, ast, bst), (ooff, aoff, boff) = _walk(out_layout, (a_layout, b_layout))
    binary_kernel(op, out.dtype, a.dtype, b.dtype)[launch.grid(n)](
        kernel_view(out), ooff, ost, kernel_view(a), aoff, ast, kernel_view(b), boff, bst, shape, n)


@cuda.jit
def _where(out, ooff, ost, c, coff, cst, a, aoff, ast, b, boff, bst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, k, i, j = launch.point4(e, shape, ooff, ost, coff, cst, aoff, ast, boff, bst)
        out[d] = a[i] if c[k] else b[j]


def where(cond, cond_layout: Layout, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout) -> None:
    """``out = a if cond else b`` elementwise on device buffers (cond bool; a, b and out of
    one dtype, moved as bits by itemsize)."""
    op = "where"
    c, a, b = _check(op, None, out, out_layout, (("cond", cond, cond_layout), ("a", a, a_layout),
                                                   ("b", b, b_layout)))
    if c.dtype != np.bool_:
        raise DTypeError(f"{op}: expected a bool condition, got {c.dtype}")
    if not (a.dtype == b.dtype == out.dtype):
        raise DTypeError(f"{op}: expected a, b and out of one dtype on CUDA, got {a.dtype}, {b.dtype} and {out.dtype}")
    n = out_layout.numel
    if n == 0:
        return
    shape, (ost, cst, ast, bst), (ooff, coff, aoff, boff) = _walk(out_layout, (cond_layout, a_layout, b_layout))
    bits = BITS[out.dtype.itemsize]
    _where[launch.grid(n)](out.view(bits), ooff, ost, c, coff, cst, a.view(bits), aoff, ast, b.view(bits), boff, bst,
                           shape, n)


def bind(kind: str, op: str, layouts: tuple, dtypes: tuple):
    """None: every CUDA call takes the checked entry point (no kept decisions yet)."""
    return None
