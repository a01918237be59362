"""The elementwise family on CUDA: the general path, on the CPU planner's merged dims.

``unary`` and ``binary`` take ``strided.kernels.elementwise``'s arguments (an op's kernel
name, buffers and layouts, output last).  The dims are those ``NdIter`` merges for the
CPU's planner (``output_layout`` is the CPU's too, so results have the same strides on
both devices); one grid-stride kernel per op walks them with the odometer, per element.
The op layer decides dtypes as on the CPU, so a kernel sees operands of one compute
dtype; f16/bf16 (computed in f32 registers on the CPU) and the ops not listed in
``UNARY``/``BINARY`` are refused by name.  ``where`` walks four operands the same way.  A scalar operand arrives as a 1-element host
array (``ops.elementwise`` builds it) and travels to the device with the launch.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from ..errors import DTypeError, ShapeError, StridedError
from ..kernels.common import BITS, DTYPES, check_layout
from ..kernels.copy import check_dst_layout
from ..kernels.elementwise import output_layout  # noqa: F401  (the family's entry point, shared with the CPU)
from ..layout.iterate import NdIter
from ..layout.layout import Layout
from . import launch
from .device import is_device_array

__all__ = ["unary", "binary", "where", "bind", "output_layout", "UNARY", "BINARY", "DTYPES_COMPUTED"]

# The compute dtypes these kernels take (f16/bf16 need the half casts on the device first).
DTYPES_COMPUTED = frozenset(np.dtype(n) for n in ("float32", "float64", "int64", "uint8", "uint32", "bool"))


# Each op is an expression in ``x`` (and ``y``) pasted into its kernel's source: a
# ``cuda.jit(device=True)`` function would be compiled for the current device's compute
# capability, which needs a driver, so the kernels could not be compiled to PTX for a
# named target on a machine without a GPU (tests/cuda/test_cuda_ptx.py does that).
# NaN propagates through maximum and minimum, as NumPy's do.
UNARY = {
    "neg": "-x", "abs": "abs(x)", "sqr": "x * x", "exp": "math.exp(x)", "log": "math.log(x)",
    "sqrt": "math.sqrt(x)", "sin": "math.sin(x)", "cos": "math.cos(x)", "tanh": "math.tanh(x)",
}
BINARY = {
    "add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y",
    "maximum": "x if (x > y or x != x) else y", "minimum": "x if (x < y or x != x) else y",
    "eq": "x == y", "ne": "x != y", "lt": "x < y", "le": "x <= y", "gt": "x > y", "ge": "x >= y",
}
# The rest of the CPU's table that numba-cuda's math has, with the CPU's dtype sets.
UNARY.update({
    "sigmoid": "1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))",
    "recip": "1.0 / x", "relu": "0 if x < 0 else x", "sign": "1 if x > 0 else (-1 if x < 0 else x)",
    "not": "not x",
    **{op: f"math.{op}(x)" for op in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan",
                                       "expm1", "log1p", "log2", "log10")},
})
BINARY.update({
    "pow": "x ** y", "atan2": "math.atan2(x, y)", "hypot": "math.hypot(x, y)", "copysign": "math.copysign(x, y)",
    "logical_and": "x and y", "logical_or": "x or y",
    "bitwise_and": "x & y", "bitwise_or": "x | y", "bitwise_xor": "x ^ y",
})
# Integer-only semantics the float formulas above would get wrong are not taken here; the
# logical ops take bools, the bitwise ones integers and bools (the CPU's sets).
_FLOAT_ONLY = frozenset({"exp", "log", "sqrt", "sin", "cos", "tanh", "div", "sigmoid", "recip", "pow", "atan2", "hypot",
                         "copysign", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "expm1",
                         "log1p", "log2", "log10"})
_BOOL_ONLY = frozenset({"not", "logical_and", "logical_or"})
_NOT_FLOAT = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor"})
_NOT_BOOL = frozenset({"sign", "neg", "sub"})

_UNARY_SRC = """
def kernel_{name}(out, ooff, ost, src, soff, sst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, s = point2(e, shape, ooff, ost, soff, sst)
        x = src[s]
        out[d] = {expr}
"""
_BINARY_SRC = """
def kernel_{name}(out, ooff, ost, a, aoff, ast, b, boff, bst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, i, j = point3(e, shape, ooff, ost, aoff, ast, boff, bst)
        x = a[i]
        y = b[j]
        out[d] = {expr}
"""


def _make(template: str, name: str, expr: str):
    scope = {"cuda": cuda, "math": math, "point2": launch.point2, "point3": launch.point3}
    exec(template.format(name=name, expr=expr), scope)  # noqa: S102  (our own templates and expressions)
    return cuda.jit(scope[f"kernel_{name}"])


_UNARY_KERNELS = {op: _make(_UNARY_SRC, op, expr) for op, expr in UNARY.items()}
_BINARY_KERNELS = {op: _make(_BINARY_SRC, op, expr) for op, expr in BINARY.items()}


def _on_device(op: str, what: str, buf, lay: Layout):
    """``buf`` as a device array: a scalar's 1-element host array (every stride 0) goes to
    the device; any other host array is a mixed-device call, refused."""
    if is_device_array(buf):
        return buf
    if isinstance(buf, np.ndarray) and buf.shape == (1,) and all(s == 0 for s in lay.stride) and lay.offset == 0:
        return cuda.to_device(buf)
    got = "a host numpy array" if isinstance(buf, np.ndarray) else type(buf).__name__
    raise StridedError(f"{op}: expected {what} on the CUDA device, got {got}")


def _check(op: str, table: dict, out, out_layout: Layout, operands) -> list:
    if op not in table:
        raise StridedError(f"{op}: not done on CUDA yet (CUDA elementwise ops: {', '.join(table)})")
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
        if buf.dtype not in DTYPES_COMPUTED:
            raise DTypeError(f"{op}: {what} has dtype {DTYPES.get(buf.dtype, buf.dtype)}, not computed on CUDA yet")
        if op in _FLOAT_ONLY and buf.dtype.kind != "f":
            raise DTypeError(f"{op}: expected a float {what} on CUDA, got {buf.dtype}")
        if (op in _BOOL_ONLY and buf.dtype.kind != "b") or (op in _NOT_FLOAT and buf.dtype.kind == "f") or (
                op in _NOT_BOOL and buf.dtype.kind == "b"):
            raise DTypeError(f"{op}: not defined for a {buf.dtype} {what} (on CUDA as on the CPU)")
        bufs.append(buf)
    return bufs


def _walk(out_layout: Layout, layouts) -> tuple:
    """The merged dims and every operand's strides, output first, as the kernels take them."""
    it = NdIter(out_layout, *layouts)
    return it.shape, it.strides, it.offsets


def unary(op: str, src, src_layout: Layout, out, out_layout: Layout) -> None:
    """``out = op(src)`` elementwise on device buffers (out has src's dtype)."""
    (src,) = _check(op, _UNARY_KERNELS, out, out_layout, (("src", src, src_layout),))
    if out.dtype != src.dtype:
        raise DTypeError(f"{op}: expected an output of dtype {src.dtype}, got {out.dtype}")
    n = out_layout.numel
    if n == 0:
        return
    shape, (ost, sst), (ooff, soff) = _walk(out_layout, (src_layout,))
    _UNARY_KERNELS[op][launch.grid(n)](out, ooff, ost, src, soff, sst, shape, n)


def binary(op: str, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout) -> None:
    """``out = op(a, b)`` elementwise on device buffers of one compute dtype (out is bool
    for comparisons)."""
    a, b = _check(op, _BINARY_KERNELS, out, out_layout, (("a", a, a_layout), ("b", b, b_layout)))
    if a.dtype != b.dtype:
        raise DTypeError(f"{op}: expected a and b of one dtype on CUDA, got {a.dtype} and {b.dtype}")
    n = out_layout.numel
    if n == 0:
        return
    shape, (ost, ast, bst), (ooff, aoff, boff) = _walk(out_layout, (a_layout, b_layout))
    _BINARY_KERNELS[op][launch.grid(n)](out, ooff, ost, a, aoff, ast, b, boff, bst, shape, n)


@cuda.jit
def _where(out, ooff, ost, c, coff, cst, a, aoff, ast, b, boff, bst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, k, i, j = launch.point4(e, shape, ooff, ost, coff, cst, aoff, ast, boff, bst)
        out[d] = a[i] if c[k] else b[j]


def where(cond, cond_layout: Layout, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout) -> None:
    """``out = a if cond else b`` elementwise on device buffers (cond bool; a, b and out of
    one dtype, moved as bits by itemsize)."""
    op = "where"
    table = {op: None}
    c, a, b = _check(op, table, out, out_layout, (("cond", cond, cond_layout), ("a", a, a_layout),
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
