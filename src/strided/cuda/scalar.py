"""The op table's scalar definitions compiled for the device: an op is written once.

``device(entry, dtype)`` gives the numba-cuda device function of an op-table entry
(``kernels.optable``) for a compute dtype, from the definition the CPU compiles
(``optable.definition``, ``kernels.scalar``'s portable Python):

- a primitive's name gives CUDA's binding of it (``PRIMITIVES`` below);
- a typed factory is called with the dtype's numpy type, and its function compiled;
- a plain function is compiled with its globals rebound: every global it reads that is
  a primitive (``p_<name>``) becomes CUDA's binding, every other Python function (the
  ``kernels.scalar.PORTABLE`` functions it calls, a helper of a run-time op) its device
  version, made the same way (recursively, once each); closure cells holding functions
  (``recip_complex`` closes over ``div_complex``'s instance) get new cells with their
  device versions.  The CPU's registrations of those functions are for numba's CPU
  target, which numba-cuda cannot call: the rebound copies share their code only.

A primitive CUDA has no binding for (``MISSING``, with the reason; a CPU primitive in
neither table is missing too) refuses every (op, dtype) whose definition needs it, by
name and with that reason (``refusal``), and so does an entry's own
``not_on["cuda"]``.  Nothing here is written per op: an op registered at run time
(``strided.register_op``) is compiled the same way on its first use.

A helper a definition calls must be plain Python (``register_jitable`` keeps it so, as
``kernels.scalar`` does); an ``njit`` dispatcher is the CPU's only.

Bits.  Plain arithmetic (complex division by Smith's loop, the f32/f64 exp and log
polynomials, the half conversions) is the CPU's Python.  The simulator runs it as Python
on numpy scalars: the CPU's bits wherever numba's arithmetic is numpy's (a complex
divided by a real is not: numba divides it as a complex, numpy part by part; and the
CPU fuses the ``contract`` polynomials' products and sums into FMAs).  On a GPU, NVVM
contracts a * b + c into an FMA by default (numba-cuda has no switch for it short of
``fastmath``), where the CPU does so only in the ``contract`` polynomials: results may
then differ from the CPU's in the last bit.  The primitives are libdevice's (through
numba-cuda's ``math``, ``cmath`` and NumPy ufunc support), not the CPU's libm: within
an ulp or so of it.

Kept values.  Eager ops store each result, so no FMA spans two of them; a fused
expression (``strided.fuse``) calls each op through ``kept(entry, dtype)``, whose result
goes through ``keep``: on a GPU a float (a complex by parts) added to -0.0 by an inline
``add.rn`` (x + -0.0 is x for every x but a NaN's payload).  NVVM cannot see into the asm,
and ptxas never contracts an instruction with an explicit rounding mode (a plain ``mov``
would not do: ptxas forwards it and forms the FFMA), so the fused kernel rounds where eager
does and gives eager's bits; the simulator's ``keep`` is the identity.
"""

from __future__ import annotations

import cmath
import dis
import math
from types import CellType, FunctionType

import numpy as np
from numba import cuda

from ..core import caches
from ..core.errors import DTypeError
from ..kernels import optable
from ..kernels import scalar as S
from .launch import SIMULATED

__all__ = ["device", "device_function", "refusal", "refusals", "kept", "keep", "PRIMITIVES", "MISSING"]


# -- CUDA's primitives -----------------------------------------------------------------------
def _by_width(name: str, arity: int, host):
    """A real primitive that keeps its argument's float type (numba's ``math.floor`` and
    friends return ints): libdevice's f32 or f64 function (``<name>f`` or ``<name>``),
    chosen by numba-cuda's typing (an ``overload`` for the CUDA target); the simulator,
    which has no libdevice, runs ``host``, NumPy's ufunc on the numpy scalars it computes with."""
    if SIMULATED:
        return host

    from numba.cuda import libdevice
    from numba.cuda import types as ct
    from numba.cuda.extending import overload

    f32, f64 = getattr(libdevice, f"{name}f"), getattr(libdevice, name)
    if arity == 1:
        def stub(x):  # never run: numba-cuda compiles the overload's function in its place
            return host(x)
    else:
        def stub(x, y):
            return host(x, y)
    stub.__name__ = stub.__qualname__ = f"cuda_{name}"

    def pick(*args):
        if all(isinstance(a, ct.Float) for a in args) and len({a.bitwidth for a in args}) == 1:
            return f32 if args[0].bitwidth == 32 else f64
        return None

    if arity == 1:
        @overload(stub, target="cuda")
        def typed1(x):
            fn = pick(x)
            return None if fn is None else (lambda x: fn(x))
    else:
        @overload(stub, target="cuda")
        def typed2(x, y):
            fn = pick(x, y)
            return None if fn is None else (lambda x, y: fn(x, y))

    return stub


@cuda.jit(device=True)
def logaddexp(x, y):
    # NumPy's npy_logaddexp: equal operands (infinities of one sign) first, NaN last
    if x == y:
        return x + 0.6931471805599453
    if x > y:
        return x + math.log1p(math.exp(y - x))
    if x < y:
        return y + math.log1p(math.exp(x - y))
    return x - y


# Python's // and % are NumPy's floor_divide and remainder, but numba-cuda's float forms
# do not give NumPy's values for a zero divisor: a / b (inf or NaN) and NaN, as NumPy does.
@cuda.jit(device=True)
def ffloordiv(x, y):
    return x / y if y == 0 else x // y


@cuda.jit(device=True)
def fmod(x, y):
    return (x - x) / (y - y) if y == 0 else x % y


# numba's own complex expm1 and log1p (numba.np.npyfuncs, which the CPU's np.expm1 and
# np.log1p compile to), written on the parts: neither cmath nor numba-cuda's ufuncs have them.
@cuda.jit(device=True)
def cexpm1(z):
    a = math.exp(z.real)
    return complex(a * math.cos(z.imag) - 1.0, a * math.sin(z.imag))


@cuda.jit(device=True)
def clog1p(z):
    r = z.real + 1.0
    return complex(math.log(math.hypot(r, z.imag)), math.atan2(z.imag, r))


# Every primitive of kernels.scalar.PRIMITIVES, by name: CUDA's binding.
PRIMITIVES = {
    # NumPy's ufunc, as the CPU binds it: numba-cuda compiles these loops too (its ufunc
    # table), with the CPU's numba implementations (the complex ones included) over libdevice
    **{n: S.PRIMITIVES[n] for n in (
        "sin", "cos", "tan", "tanh", "acos", "asin", "atan", "acosh", "asinh", "atanh", "cosh", "sinh", "atan2",
        "hypot", "csin", "ccos", "ctan", "ctanh", "cacos", "casin", "catan", "cacosh", "casinh", "catanh", "ccosh",
        "csinh", "clog", "clog2", "clog10")},
    # numba-cuda's math and cmath (f32 computes in f32)
    "sqrt": math.sqrt, "expm1": math.expm1, "fabs": math.fabs, "copysign": math.copysign, "cexp": cmath.exp,
    "csqrt": cmath.sqrt,
    # libdevice, in the argument's type: exact, and signed zeros kept
    **{n: _by_width(n, 1, getattr(np, n)) for n in ("ceil", "floor", "trunc", "rint")},
    "nextafter": _by_width("nextafter", 2, np.nextafter),
    # the device functions above
    "logaddexp": logaddexp, "ffloordiv": ffloordiv, "fmod": fmod, "cexpm1": cexpm1, "clog1p": clog1p,
}
# CPU primitives CUDA has no binding for, each with the reason: every op whose definition
# needs one is refused with it (a CPU primitive in neither table is refused the same way).
MISSING: dict = {}


class _Missing(Exception):
    """A definition needs a primitive CUDA lacks (the reason is the message)."""


def _primitive(name: str):
    if name in PRIMITIVES:
        return PRIMITIVES[name]
    raise _Missing(MISSING.get(name) or f"strided.cuda.scalar has no CUDA binding for the primitive {name!r}")


# -- compiling the portable definitions --------------------------------------------------------
_DEVICE = caches.table("cuda.scalar.devices", "a Python function (or (factory, T)): its device version")


def _globals_read(code) -> set:
    """The global names ``code`` reads, its nested code objects' too."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            names |= _globals_read(c)
    return names


def _bind(name, value):
    """A global or closure value as device code sees it."""
    if name is not None and name.startswith("p_") and value is S.PRIMITIVES.get(name[2:]):
        return _primitive(name[2:])
    if isinstance(value, FunctionType) and not S.is_typed(value):
        return device_function(value)
    return value


def device_function(fn, name: str | None = None):
    """The Python function ``fn`` (portable code: numba's CPU may call it too) as a device
    function, its globals and closure cells rebound (see the module docstring); made once
    per function.  ``cuda.half`` compiles the CPU's half conversions with it."""
    got = _DEVICE.get(fn)
    if got is None:
        cells = None
        if fn.__closure__ is not None:
            cells = []
            for c in fn.__closure__:
                try:
                    cells.append(CellType(_bind(None, c.cell_contents)))
                except ValueError:  # an empty cell stays empty
                    cells.append(CellType())
            cells = tuple(cells)
        scope = dict(fn.__globals__)
        new = FunctionType(fn.__code__, scope, name or fn.__name__, fn.__defaults__, cells)
        new.__kwdefaults__ = fn.__kwdefaults__
        got = _DEVICE[fn] = cuda.jit(device=True)(new)
        try:  # its globals bound once it is known, so that a function may call itself
            for g in _globals_read(fn.__code__):
                if g in scope:
                    scope[g] = _bind(g, scope[g])
        except _Missing:
            del _DEVICE[fn]
            raise
    return got


def _definition(defn, T):
    """A definition (primitive name, typed factory or plain function) for the numpy type ``T``."""
    if isinstance(defn, str):
        return _primitive(defn)
    if S.is_typed(defn):
        key = (defn, T)
        if key not in _DEVICE:
            _DEVICE[key] = device_function(defn(T), f"{defn.__name__}_{np.dtype(T).name}")
        return _DEVICE[key]
    return device_function(defn)


def _override(entry, d: np.dtype):
    """The entry's own reason not to run on CUDA for ``d`` (most specific key wins)."""
    table = entry.not_on.get("cuda") or {}
    for key in (d.name, d.kind, ""):
        if key in table:
            return table[key]
    return None


_RESOLVED = caches.table("cuda.scalar.resolved", "op, dtype name: (device function, None) or (None, why not)")


def _resolve(entry, dtype):
    """(device function, None), or (None, the reason CUDA does not compute it)."""
    d = np.dtype(dtype)
    why = _override(entry, d)  # read on every call: an entry's not_on may change
    if why is not None:
        return None, why
    key = (entry.name, d.name)
    got = _RESOLVED.get(key)
    if got is None:
        try:
            got = (_definition(optable.definition(entry, d.name), d.type), None)
        except _Missing as e:
            got = (None, str(e))
        _RESOLVED[key] = got
    return got


def refusal(entry, dtype) -> str | None:
    """Why CUDA does not compute ``entry`` on operands computed in ``dtype``, or None."""
    return _resolve(entry, dtype)[1]


def refusals() -> dict:
    """{(op, dtype name): reason} for every entry of the table now and every dtype it takes."""
    out = {}
    for name, e in list(optable.OPS.items()):
        for d in sorted(e.dtypes):
            why = refusal(e, d)
            if why is not None:
                out[(name, d)] = why
    return out


def device(entry, dtype):
    """The device function computing ``entry`` on operands computed in ``dtype`` (a numpy
    dtype name); a refused (op, dtype) raises DTypeError with the reason."""
    fn, why = _resolve(entry, dtype)
    if why is not None:
        raise DTypeError(f"{entry.name}: {np.dtype(dtype).name} is not computed on CUDA ({why})")
    return fn


# -- kept values (fused expressions) -----------------------------------------------------------
def _keep_intrinsic():
    """``keep`` for the device: floats through an ``add.rn`` of -0.0 in inline PTX (complex
    values part by part), other values as they are."""
    from llvmlite import ir
    from numba.cuda import types as ct
    from numba.cuda.extending import intrinsic

    def rounded(builder, value, bits: int):
        ty, code, reg = (ir.FloatType(), "add.rn.f32 $0, $1, 0f80000000;", "f") if bits == 32 else \
            (ir.DoubleType(), "add.rn.f64 $0, $1, 0d8000000000000000;", "d")
        return builder.call(ir.InlineAsm(ir.FunctionType(ty, [ty]), code, f"={reg},{reg}"), [value])

    @intrinsic
    def keep(typingctx, x):
        def codegen(context, builder, sig, args):
            if isinstance(x, ct.Float):
                return rounded(builder, args[0], x.bitwidth)
            if isinstance(x, ct.Complex):
                bits = x.underlying_float.bitwidth
                z = context.make_complex(builder, x, value=args[0])
                out = context.make_complex(builder, x)
                out.real, out.imag = rounded(builder, z.real, bits), rounded(builder, z.imag, bits)
                return out._getvalue()
            return args[0]

        return x(x), codegen

    return keep


def _identity(x):
    return x


keep = _identity if SIMULATED else _keep_intrinsic()

_KEPT = caches.table("cuda.scalar.kept", "op, dtype name: the device function with its result kept")


def kept(entry, dtype):
    """``device(entry, dtype)`` with its result through ``keep``: how a fused expression calls
    an op (a refused one raises as ``device`` does)."""
    key = (entry.name, np.dtype(dtype).name)
    got = _KEPT.get(key)
    if got is None:
        args = ", ".join(f"a{i}" for i in range(entry.arity))
        scope = {"F": device(entry, dtype), "keep": keep}
        exec(f"def op({args}):\n    return keep(F({args}))\n", scope)  # our own two lines
        got = _KEPT[key] = cuda.jit(device=True)(scope["op"])
    return got
