"""Bit-exact f16 and bf16 conversions, in numba.

numba has no half-precision arithmetic on the CPU, so half buffers travel as
their 16-bit patterns and every conversion is done here on integers.  The
oracle is NumPy for f16 (its software conversions: round to nearest even,
NaN payloads shifted, never quietened) and ml_dtypes for bf16 (round to
nearest even, every NaN becomes the quiet NaN 0x7fc0 with its sign; from f64
it rounds through f32, so twice).  The tests compare all 65536 patterns.

The f32 <-> half conversions the elementwise kernels run per element are
written in LLVM IR (``_f16_to_f32_ir`` and friends): 32-bit integer lanes and
selects, no branches, so a loop over them vectorises (numba would widen every
int32 step to int64 and branch on the cases).  The rest is numba on int64:
numba promotes uint64 mixed with int literals to float64, which would silently
lose bits.
"""

from __future__ import annotations

from ..core import threads as _threads  # noqa: F401  (before numba; common imports this module)

import ml_dtypes
import numpy as np
import llvmlite.ir as llir
from numba import njit, types
from numba.extending import intrinsic, overload, register_jitable

# The half types as kernels see them: integer views of their bits, f16 as uint16 and
# bf16 as int16 (strided has neither integer dtype), so that the element type alone
# tells ``dec``/``enc`` (and the copy kernels' conversions) which format it holds.
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
HALF_VIEW = {F16: np.dtype(np.uint16), BF16: np.dtype(np.int16)}


# -- scalar functions written in LLVM IR -------------------------------------------
def ir_function(name, src, dst, emit):
    """An intrinsic (named ``name``) from a ``src`` scalar to a ``dst``, whose IR
    ``emit(context, builder, value)`` builds; any other argument type is not its."""
    def typer(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, sig, args):
            return emit(context, builder, args[0])

        return dst(src), codegen

    typer.__name__ = typer.__qualname__ = name  # numba names the intrinsic after it
    return intrinsic(typer)


# numba has no scalar view, so reinterpret in LLVM
def bitcast(name, src, dst):
    """An intrinsic (named ``name``) reading a ``src`` scalar's bits as a ``dst`` of the same width."""
    return ir_function(name, src, dst, lambda context, builder, x: builder.bitcast(x, context.get_value_type(dst)))


_f32_as_i32 = bitcast("_f32_as_i32", types.float32, types.int32)
_i32_as_f32 = bitcast("_i32_as_f32", types.int32, types.float32)

_TWO_M24 = 5.9604644775390625e-08  # 2**-24, the f16 subnormal quantum

_I32 = llir.IntType(32)
_F32T = llir.FloatType()


def _c(v):
    return llir.Constant(_I32, v)


def _f16_to_f32_emit(context, b, h):
    """f16 bits (uint16) to f32: rebias the exponent, twice for inf/NaN (payload
    shifted up), and a subnormal is its integer significand times 2**-24, exact."""
    h32 = b.zext(h, _I32)
    a = b.and_(h32, _c(0x7FFF))
    sign = b.shl(b.and_(h32, _c(0x8000)), _c(16))
    bits = b.add(b.shl(a, _c(13)), _c(112 << 23))
    bits = b.select(b.icmp_unsigned(">=", a, _c(0x7C00)), b.add(bits, _c(112 << 23)), bits)
    sub = b.fmul(b.sitofp(a, _F32T), llir.Constant(_F32T, _TWO_M24))
    sub = b.bitcast(sub, _I32)
    res = b.select(b.icmp_unsigned("<", a, _c(0x400)), sub, bits)
    return b.bitcast(b.or_(res, sign), _F32T)


def _f32_to_f16_emit(context, b, x):
    """f32 to f16 bits, round to nearest even.

    Normal results: drop 13 bits adding 0xfff plus the lowest kept bit (a carry
    into the exponent is the right answer, up to inf).  Subnormal results: add
    0.5, whose ulp is 2**-24, the f16 subnormal quantum, so the FPU rounds to
    it (ties to even) and the low bits are the f16 significand.  NaN keeps its
    top payload bits, never quietened (NumPy's rule), and never turns into inf."""
    u = b.bitcast(x, _I32)
    sign = b.and_(b.lshr(u, _c(16)), _c(0x8000))
    a = b.and_(u, _c(0x7FFFFFFF))
    odd = b.and_(b.lshr(a, _c(13)), _c(1))
    norm = b.lshr(b.add(b.add(a, _c(0xFFF - (112 << 23))), odd), _c(13))
    s = b.fadd(b.bitcast(a, _F32T), llir.Constant(_F32T, 0.5))
    sub = b.sub(b.bitcast(s, _I32), _c(0x3F000000))
    o = b.select(b.icmp_unsigned("<", a, _c(0x38800000)), sub, norm)
    o = b.select(b.icmp_unsigned(">=", a, _c(0x477FF000)), _c(0x7C00), o)
    m = b.and_(b.lshr(a, _c(13)), _c(0x3FF))
    nan = b.or_(_c(0x7C00), b.or_(m, b.zext(b.icmp_unsigned("==", m, _c(0)), _I32)))
    o = b.select(b.icmp_unsigned(">", a, _c(0x7F800000)), nan, o)
    return b.trunc(b.or_(sign, o), llir.IntType(16))


def _f32_to_bf16_emit(context, b, x):
    """f32 to bf16 bits, round to nearest even; a NaN becomes 0x7fc0 with its sign (ml_dtypes)."""
    u = b.bitcast(x, _I32)
    hi = b.lshr(u, _c(16))
    r = b.lshr(b.add(b.add(u, _c(0x7FFF)), b.and_(hi, _c(1))), _c(16))
    nan = b.or_(b.and_(hi, _c(0x8000)), _c(0x7FC0))
    isnan = b.icmp_unsigned(">", b.and_(u, _c(0x7FFFFFFF)), _c(0x7F800000))
    return b.trunc(b.select(isnan, nan, r), llir.IntType(16))


_f16_to_f32_ir = ir_function("_f16_to_f32_ir", types.uint16, types.float32, _f16_to_f32_emit)
_f32_to_f16_ir = ir_function("_f32_to_f16_ir", types.float32, types.uint16, _f32_to_f16_emit)
_f32_to_bf16_ir = ir_function("_f32_to_bf16_ir", types.float32, types.uint16, _f32_to_bf16_emit)


# -- portable forms ---------------------------------------------------------------
# The conversions as plain scalar code: int64 arithmetic and scalar bit views
# (``np.float32(x).view(np.int32)``), which numba compiles for any target and plain Python
# runs as NumPy scalars.  The CUDA backend compiles these for the device (strided.cuda.half;
# numba-cuda's simulator runs them as Python); the CPU builds its scalar helpers below from
# them and keeps the IR forms above where a loop must vectorise (f32 <-> half), which give
# the same bits (tests/kernels/test_copy.py compares every f16/bf16 pattern and the rounding
# probes).  Registered as jitable so that the CPU's own numba code can call them.
@register_jitable
def shift_round_even(m, shift):
    """``m >> shift`` rounded to nearest, ties to even (m >= 0, 0 < shift < 63)."""
    q = m >> shift
    r = m & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if r > half or (r == half and (q & 1)):
        q += 1
    return q


@register_jitable
def f16_bits_as_f32(h):
    """f16 bits (any integer holding 16 bits) as the f32 of the same value, NaN payloads shifted up."""
    h = np.int64(h) & 0xFFFF
    a = h & 0x7FFF
    if a < 0x400:  # zero or subnormal: its integer significand times 2**-24, exact
        v = np.float32(a) * np.float32(_TWO_M24)
        return -v if h & 0x8000 else v
    bits = (a << 13) + (112 << 23)
    if a >= 0x7C00:  # inf and NaN: the exponent rebiased twice, to all ones
        bits += 112 << 23
    return np.int32(bits | ((h & 0x8000) << 16)).view(np.float32)


@register_jitable
def f32_as_f16_bits(x):
    """An f32 rounded to the nearest f16 (ties to even): overflow gives inf, a NaN keeps its top
    payload bits (never quietened, never inf), as NumPy's conversion."""
    u = np.int64(np.float32(x).view(np.int32)) & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    a = u & 0x7FFFFFFF
    if a > 0x7F800000:
        m = (a >> 13) & 0x3FF
        return np.uint16(sign | 0x7C00 | (m if m else 1))
    if a >= 0x477FF000:  # from 65520 up, inf
        return np.uint16(sign | 0x7C00)
    if a >= 0x38800000:  # a normal f16: drop 13 bits, adding 0xfff and the lowest kept bit
        return np.uint16(sign | ((a + (0xFFF - (112 << 23)) + ((a >> 13) & 1)) >> 13))
    if a <= 0x33000000:  # up to 2**-25 (a tie with 0, which is even)
        return np.uint16(sign)
    # a subnormal f16: the significand, implicit bit included, shifted to units of 2**-24
    return np.uint16(sign | shift_round_even((a & 0x7FFFFF) | 0x800000, 126 - (a >> 23)))


@register_jitable
def bf16_bits_as_f32(b):
    """bf16 bits are the top half of an f32: exact, payloads included."""
    return np.int32((np.int64(b) & 0xFFFF) << 16).view(np.float32)


@register_jitable
def f32_as_bf16_bits(x):
    """An f32 rounded to the nearest bf16 (ties to even); a NaN becomes 0x7fc0 with its sign (ml_dtypes)."""
    u = np.int64(np.float32(x).view(np.int32)) & 0xFFFFFFFF
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16(((u >> 16) & 0x8000) | 0x7FC0)
    return np.uint16((u + 0x7FFF + ((u >> 16) & 1)) >> 16)


@register_jitable
def f16_bits_as_f64(h):
    """f16 bits as f64 directly, so that NaN payloads survive as NumPy keeps them."""
    h = np.int64(h) & 0xFFFF
    a = h & 0x7FFF
    sign = (h & 0x8000) << 48
    if a >= 0x7C00:
        bits = sign | 0x7FF0000000000000 | ((a & 0x3FF) << 42)
    elif a >= 0x400:
        bits = sign | ((a + ((1023 - 15) << 10)) << 42)
    else:
        v = np.float64(a) * _TWO_M24
        return -v if h & 0x8000 else v
    return np.int64(bits).view(np.float64)


@register_jitable
def f64_as_f16_bits(x):
    """An f64 rounded straight to f16 (NumPy does not go through f32, which would round twice)."""
    u = np.float64(x).view(np.int64)
    sign = (u >> 48) & 0x8000  # arithmetic shift: the low 16 bits are still the top of u
    a = u & 0x7FFFFFFFFFFFFFFF
    if a >= 0x7FF0000000000000:
        if a == 0x7FF0000000000000:
            return np.uint16(sign | 0x7C00)
        m = (a >> 42) & 0x3FF
        return np.uint16(sign | 0x7C00 | (m if m else 1))
    if a >= 0x40EFFE0000000000:  # >= 65520
        return np.uint16(sign | 0x7C00)
    if a < 0x3F10000000000000:  # below 2**-14
        if a <= 0x3E60000000000000:  # <= 2**-25
            return np.uint16(sign)
        return np.uint16(sign | shift_round_even((a & 0xFFFFFFFFFFFFF) | 0x10000000000000, 1051 - (a >> 52)))
    return np.uint16(sign | shift_round_even(a - ((1023 - 15) << 52), 42))


@register_jitable
def bf16_bits_as_f16_bits(b):
    """ml_dtypes: through f32 with one rounding, but every NaN becomes 0x7e00 with its sign."""
    b = np.int64(b) & 0xFFFF
    if (b & 0x7FFF) > 0x7F80:
        return np.uint16((b & 0x8000) | 0x7E00)
    return f32_as_f16_bits(bf16_bits_as_f32(b))


@register_jitable
def f16_bits_as_bf16_bits(h):
    return f32_as_bf16_bits(f16_bits_as_f32(h))


# The portable forms by what they convert; strided.cuda.half compiles each for the device.
PORTABLE = {
    "shift_even": shift_round_even, "f16_f32": f16_bits_as_f32, "f32_f16": f32_as_f16_bits,
    "bf16_f32": bf16_bits_as_f32, "f32_bf16": f32_as_bf16_bits,
    "f16_f64": f16_bits_as_f64, "f64_f16": f64_as_f16_bits, "bf16_f16": bf16_bits_as_f16_bits,
    "f16_bf16": f16_bits_as_bf16_bits,
}

# -- f16 ------------------------------------------------------------------------
@njit(cache=True)
def f16_bits_to_f32(h):
    """An f16 bit pattern (any integer holding 16 bits) as the f32 of the same value."""
    return _f16_to_f32_ir(np.uint16(h))  # np.uint16 truncates: the low 16 bits


@njit(cache=True)
def f32_to_f16_bits(x):
    """Round an f32 to the nearest f16 (ties to even); overflow gives inf, NaN stays NaN."""
    return _f32_to_f16_ir(np.float32(x))


# The CPU's scalar conversions are the portable forms (no loop vectorises over them).
f16_bits_to_f64 = njit(cache=True)(f16_bits_as_f64)
f64_to_f16_bits = njit(cache=True)(f64_as_f16_bits)
bf16_bits_to_f32 = njit(cache=True)(bf16_bits_as_f32)
bf16_bits_to_f16_bits = njit(cache=True)(bf16_bits_as_f16_bits)
f16_bits_to_bf16_bits = njit(cache=True)(f16_bits_as_bf16_bits)


# -- bf16 -----------------------------------------------------------------------
@njit(cache=True)
def f32_to_bf16_bits(x):
    """Round an f32 to the nearest bf16 (ties to even); NaN becomes the quiet NaN with its sign."""
    return _f32_to_bf16_ir(np.float32(x))


@njit(cache=True)
def f64_to_bf16_bits(x):
    """Round an f64 to the nearest bf16 once (ties to even), as ml_dtypes 0.7 does.

    Through f32 rounded to odd: when the f32 is inexact, its last bit is forced to 1
    (after stepping back toward zero if it rounded away), so that the second rounding,
    f32 to bf16 with 16 bits fewer, cannot land on a tie that the f64 was not on."""
    x = np.float64(x)
    f = np.float32(x)
    if np.float64(f) == x or x != x:
        return f32_to_bf16_bits(f)
    b = _f32_as_i32(f)
    if abs(np.float64(f)) > abs(x):
        b -= 1  # one step toward zero, for either sign
    return f32_to_bf16_bits(_i32_as_f32(np.int32(b | 1)))


def dec(v):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


def enc(buf, v):  # pragma: no cover
    raise NotImplementedError


@overload(dec, jit_options=dict(error_model="numpy"))
def _ov_dec(v):
    """An element as the kernel computes with it: half bits to f32, anything else itself."""
    if v == types.uint16:
        return lambda v: f16_bits_to_f32(v)
    if v == types.int16:
        return lambda v: bf16_bits_to_f32(v)
    return lambda v: v


@overload(enc, jit_options=dict(error_model="numpy"))
def _ov_enc(buf, v):
    """A computed value as ``buf`` stores it: f32 rounded once to half bits, else itself."""
    if buf.dtype == types.uint16:
        return lambda buf, v: f32_to_f16_bits(v)
    if buf.dtype == types.int16:
        return lambda buf, v: np.int16(f32_to_bf16_bits(v))
    return lambda buf, v: v
