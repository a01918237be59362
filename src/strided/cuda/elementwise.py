"""The elementwise family on CUDA: the general path, on the CPU planner's merged dims.

``unary`` and ``binary`` take ``strided.kernels.elementwise``'s arguments (an op's kernel
name, buffers and layouts, output last).  The dims are those ``NdIter`` merges for the
CPU's planner (``output_layout`` is the CPU's too, so results have the same strides on
both devices); one grid-stride kernel per op and dtypes walks them with the odometer, per
element.  The op layer decides dtypes as on the CPU, so the operands compute in one dtype
(``kernels.common.COMPUTE``): f16 and bf16 are read from their bits into f32 registers and
each result is rounded once as it is stored (``cuda.half``: the CPU's conversions, so the
bits of every correctly rounded op are the CPU's), ``f16 + bf16 -> f32`` and a half with
an f32 scalar mix as on the CPU.  Each kernel calls, per element, the device function of
the op table's entry for the compute dtype (``cuda.scalar.device``: the definition the
CPU compiles, compiled for the device), so the ops and the dtypes they take are the CPU's
(``kernels.elementwise.UNARY_OPS``/``BINARY_OPS``, an op registered at run time
included), less what ``cuda.scalar.refusal`` names with its reason, which is refused by
name.  int16 and uint16 are widened by the op layer, as for the CPU.  ``where`` walks
four operands the same way, moving bits.  A scalar operand arrives as a 1-element host
array (``ops.elementwise`` builds it) and travels to the device with the launch.  The
entry points take ``keep`` as every backend's do and return None: CUDA keeps no decision
yet, so every call takes the checked entry point.

Fused expressions (``strided.fuse``: ``expression_kernel``, with ``refusal``, the family's
entry points for ``fusion.lower``).  A group's expression (``fusion.lower.Source``, the
source the CPU compiles) becomes a device function whose op calls are ``cuda.scalar.kept``
(the entry's device function, its result kept from FMA contraction with the next op) and
whose half conversions are ``cuda.half``'s; one generated grid-stride kernel per
expression and buffer dtypes calls it per element, one thread per output element, with
the odometer over ``NdIter``'s merged dims of the output and every use (the output is
dense in eager's order, so consecutive threads write consecutive elements), loading and
storing through ``cuda.half``.  ``refusal`` is ``cuda.scalar.refusal``'s, by op name.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..core import caches
from ..core.errors import DTypeError, StridedError
from ..kernels.common import BITS, COMPUTE, DTYPES, WIDENED, check_layout, check_operand_shape, reach
from ..kernels.copy import check_dst_layout
from ..kernels.elementwise import BINARY_OPS, UNARY_OPS, ExpressionKernel
from ..kernels.elementwise import output_layout  # the family's entry point, shared with the CPU
from ..kernels.optable import OPS
from ..layout.iterate import NdIter
from ..layout.layout import Layout
from . import half, launch, scalar
from .checks import check_on_device
from .device import is_device_array, kernel_view

__all__ = ["unary", "binary", "where", "output_layout", "DTYPES_COMPUTED", "unary_kernel", "binary_kernel",
           "expression_kernel", "refusal", "fused_kernel"]

# The dtypes these kernels compute on: every dtype a CPU kernel computes on (int16 and
# uint16 are widened before they come here).
DTYPES_COMPUTED = frozenset(d for d in DTYPES if d not in WIDENED)

_UNARY_SRC = """
def kernel(out, ooff, ost, src, soff, sst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, s = point2(e, shape, ooff, ost, soff, sst)
        out[d] = {y}
"""
_BINARY_SRC = """
def kernel(out, ooff, ost, a, aoff, ast, b, boff, bst, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, i, j = point3(e, shape, ooff, ost, aoff, ast, boff, bst)
        out[d] = {y}
"""

_KERNELS = caches.table("cuda.elementwise.kernels", "op, dtypes")


def _make(template: str, key: tuple, out_dtype, *in_dtypes):
    """The kernel of op ``key[0]`` for these dtypes (made once per key): the op table's
    scalar function compiled for the device (``cuda.scalar``) on each element, the operands
    loaded and the result stored through ``cuda.half``."""
    if key not in _KERNELS:
        fn = scalar.device(OPS[key[0]], COMPUTE[in_dtypes[0]])
        names = ("src[s]",) if len(in_dtypes) == 1 else ("a[i]", "b[j]")
        call = f"F({', '.join(half.load(d, x) for d, x in zip(in_dtypes, names))})"
        scope = {"cuda": cuda, "point2": launch.point2, "point3": launch.point3, "F": fn, **half.SCOPE}
        exec(template.format(y=half.store(out_dtype, call)), scope)  # our own templates
        _KERNELS[key] = cuda.jit(scope["kernel"])
    return _KERNELS[key]


def unary_kernel(op: str, out_dtype, src_dtype):
    """The kernel of unary ``op`` from a ``src_dtype`` buffer into an ``out_dtype`` one."""
    out_dtype, src_dtype = np.dtype(out_dtype), np.dtype(src_dtype)
    return _make(_UNARY_SRC, (op, out_dtype, src_dtype), out_dtype, src_dtype)


def binary_kernel(op: str, out_dtype, a_dtype, b_dtype):
    """The kernel of binary ``op`` on buffers of these dtypes."""
    out_dtype, a_dtype, b_dtype = np.dtype(out_dtype), np.dtype(a_dtype), np.dtype(b_dtype)
    return _make(_BINARY_SRC, (op, out_dtype, a_dtype, b_dtype), out_dtype, a_dtype, b_dtype)


def _on_device(op: str, what: str, buf, lay: Layout):
    """``buf`` as a device array: a scalar's 1-element host array (every stride 0) goes to
    the device; any other host array is a mixed-device call, refused."""
    if is_device_array(buf):
        return buf
    if isinstance(buf, np.ndarray) and buf.shape == (1,) and all(s == 0 for s in lay.stride) and lay.offset == 0:
        return cuda.to_device(buf)
    check_on_device(op, what, buf)  # raises: a host array of more than a scalar


def _check(op: str, specs: dict, out, out_layout: Layout, operands) -> list:
    """The operands as device arrays, once everything about them is checked; ``specs`` the
    CPU's table of the family (None: ``where``, which computes nothing)."""
    if specs is not None:
        if op not in specs:
            raise StridedError(f"{op}: no such elementwise op on CUDA (CUDA elementwise ops: {', '.join(specs)})")
        whys = {scalar.refusal(OPS[op], d) for d in specs[op].dtypes}
        if None not in whys:  # refused on every dtype it takes
            raise StridedError(f"{op}: not on CUDA yet ({'; '.join(sorted(whys))}); t.cpu() moves a tensor to the host")
    check_on_device(op, "out", out)
    check_layout(op, "out_layout", out_layout).validate(len(out))
    check_dst_layout(op, out_layout)
    bufs = []
    for what, buf, lay in operands:
        buf = _on_device(op, what, buf, lay)
        check_layout(op, f"{what}_layout", lay).validate(len(buf))
        check_operand_shape(op, what, lay, out_layout)
        if specs is not None and buf.dtype not in DTYPES_COMPUTED:
            raise DTypeError(f"{op}: {what} has dtype {DTYPES.get(buf.dtype, buf.dtype)}, which the kernels do not "
                             "compute on (the op layer widens int16 and uint16 to 32 bits)")
        if specs is not None:
            comp = COMPUTE[buf.dtype]
            if comp not in specs[op].dtypes:
                raise DTypeError(f"{op}: not defined for a {DTYPES[buf.dtype]} {what} (on CUDA as on the CPU)")
            why = scalar.refusal(OPS[op], comp)
            if why is not None:
                raise DTypeError(f"{op}: a {DTYPES[buf.dtype]} {what} is not computed on CUDA ({why})")
        bufs.append(buf)
    return bufs


def _walk(out_layout: Layout, layouts) -> tuple:
    """The merged dims and every operand's strides, output first, as the kernels take them."""
    it = NdIter(out_layout, *layouts)
    return it.shape, it.strides, it.offsets


def unary(op: str, src, src_layout: Layout, out, out_layout: Layout, keep: bool = False) -> None:
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


def binary(op: str, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout,
           keep: bool = False) -> None:
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


def where(cond, cond_layout: Layout, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout,
          keep: bool = False) -> None:
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


# -- fused expressions (strided.fuse) -------------------------------------------------------------

def refusal(op: str, comp: str) -> str | None:
    """Why op-table ``op`` on operands computed in ``comp`` is not computed on CUDA, or None."""
    return scalar.refusal(OPS[op], comp)


_FUSED = caches.table("cuda.elementwise.fused", "expression body, its ops, buffer dtypes: (kernel, module name)")


def _fused_source(in_dtypes, out_dtype) -> str:
    """The grid-stride kernel around ``expr``: the odometer over the merged dims (``st`` one
    row of strides per buffer, the output first), each use loaded and the result stored
    through ``cuda.half``."""
    n = len(in_dtypes)
    xs = "".join(f"x{i}, " for i in range(n))
    lines = [f"def kernel(out, {xs}shape, st, offs, n):",
             "    for e in range(cuda.grid(1), n, cuda.gridsize(1)):",
             "        r = e"]
    lines += [f"        p{i} = offs[{i}]" for i in range(n + 1)]
    lines += ["        for k in range(len(shape) - 1, -1, -1):",
              "            q = r % shape[k]",
              "            r //= shape[k]"]
    lines += [f"            p{i} += q * st[{i}][k]" for i in range(n + 1)]
    args = ", ".join(half.load(d, f"x{i}[p{i + 1}]") for i, d in enumerate(in_dtypes))
    lines.append(f"        out[p0] = {half.store(out_dtype, f'expr({args})')}")
    return "\n".join(lines) + "\n"


def fused_kernel(source, dtypes: tuple):
    """(kernel, name) of a fused expression (``fusion.lower.Source``) on buffers of ``dtypes``
    (numpy dtypes, the output first), made once: ``expr`` a device function over
    ``cuda.scalar.kept`` and ``cuda.half.NAMED``, the kernel ``_fused_source``'s."""
    dtypes = tuple(np.dtype(d) for d in dtypes)
    key = (source.body, source.ops, dtypes)
    got = _FUSED.get(key)
    if got is None:
        scope = {"np": np, **half.NAMED, **{f: scalar.kept(OPS[op], comp) for f, op, comp in source.ops}}
        exec(source.body, scope)  # fusion.lower's source of the expression
        kscope = {"cuda": cuda, "np": np, "expr": cuda.jit(device=True)(scope["expr"]), **half.SCOPE}
        exec(_fused_source(dtypes[1:], dtypes[0]), kscope)  # our own template
        name = f"cuda_fused{source.nuses}_{len(_FUSED)}"
        got = _FUSED[key] = (cuda.jit(kscope["kernel"]), name)
    return got


def expression_kernel(source, out_layout: Layout, layouts: tuple, dtypes: tuple) -> ExpressionKernel | None:
    """The kernel writing ``expr`` of ``source`` through ``out_layout`` from device buffers
    read through ``layouts`` (``dtypes``: numpy dtypes of the buffers, the output first),
    bound to those layouts; None where a layout reaches below its buffer's start (the
    fusion's entry point; see the module docstring)."""
    ends = []
    for lay in (out_layout, *layouts):
        lo, hi = reach(lay)
        if lo < 0:
            return None
        ends.append(hi)
    kernel, name = fused_kernel(source, dtypes)
    k = ExpressionKernel()
    k.module, k.reach, k.settle = name, tuple(ends), None
    n = out_layout.numel
    if not n:
        k.run, k.path = None, "-"
        return k
    shape, st, offs = _walk(out_layout, layouts)
    k.path = f"grid-stride over {len(shape)} merged dim{'s' * (len(shape) != 1)}"
    launch_ = kernel[launch.grid(n)]

    def run(out, *bufs):
        launch_(kernel_view(out), *[kernel_view(b) for b in bufs], shape, st, offs, n)

    k.run = run
    return k
