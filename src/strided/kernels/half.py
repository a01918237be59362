"""Bit-exact f16 and bf16 conversions, in numba.

numba has no half-precision arithmetic on the CPU, so half buffers travel as
their 16-bit patterns and every conversion is done here on integers.  The
oracle is NumPy for f16 (its software conversions: round to nearest even,
NaN payloads shifted, never quietened) and ml_dtypes for bf16 (round to
nearest even, every NaN becomes the quiet NaN 0x7fc0 with its sign; from f64
it rounds through f32, so twice).  The tests compare all 65536 patterns.

All arithmetic is on int64: numba promotes uint64 mixed with int literals to
float64, which would silently lose bits.
"""

from __future__ import annotations

from . import PARALLEL_MIN  # noqa: F401  (imports strided.threads before numba)

import numpy as np
from numba import njit, types
from numba.extending import intrinsic


# -- scalar bit casts: numba has no scalar view, so reinterpret in LLVM ---------
def _bitcast(name, src, dst):
    @intrinsic
    def cast(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], context.get_value_type(dst))

        return dst(src), codegen

    cast.__name__ = name
    return cast


_f32_as_i32 = _bitcast("_f32_as_i32", types.float32, types.int32)
_i32_as_f32 = _bitcast("_i32_as_f32", types.int32, types.float32)
_f64_as_i64 = _bitcast("_f64_as_i64", types.float64, types.int64)
_i64_as_f64 = _bitcast("_i64_as_f64", types.int64, types.float64)

_TWO_M24 = 5.9604644775390625e-08  # 2**-24, the f16 subnormal quantum


# -- f16 ------------------------------------------------------------------------
@njit(cache=True)
def f16_bits_to_f32(h):
    """An f16 bit pattern (any integer holding 16 bits) as the f32 of the same value."""
    h = np.int64(h) & 0xFFFF
    a = h & 0x7FFF
    if a >= 0x7C00:  # inf / NaN: same payload, shifted into the wider significand
        bits = ((h & 0x8000) << 16) | 0x7F800000 | ((a & 0x3FF) << 13)
    elif a >= 0x400:  # normal: rebias the exponent (127 - 15 = 112)
        bits = ((h & 0x8000) << 16) | ((a + (112 << 10)) << 13)
    else:  # zero or subnormal: a * 2**-24 is exact in f32
        v = np.float32(a) * np.float32(_TWO_M24)
        return -v if h & 0x8000 else v
    return _i32_as_f32(np.int32(bits))  # np.int32 truncates: the low 32 bits


@njit(cache=True)
def f16_bits_to_f64(h):
    """An f16 bit pattern as f64 directly, so NaN payloads survive as NumPy keeps them."""
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
    return _i64_as_f64(bits)


@njit(cache=True)
def f32_to_f16_bits(x):
    """Round an f32 to the nearest f16 (ties to even); overflow gives inf, NaN stays NaN."""
    u = np.int64(_f32_as_i32(np.float32(x))) & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    a = u & 0x7FFFFFFF
    if a >= 0x7F800000:
        if a == 0x7F800000:
            return np.uint16(sign | 0x7C00)
        m = (a >> 13) & 0x3FF
        return np.uint16(sign | 0x7C00 | (m if m else 1))  # a payload lost in the shift must not make inf
    if a >= 0x477FF000:  # >= 65520, the midpoint above the largest f16, rounds to inf
        return np.uint16(sign | 0x7C00)
    if a < 0x38800000:  # below 2**-14: an f16 subnormal or zero
        if a <= 0x33000000:  # <= 2**-25, half the smallest subnormal: the tie goes to even zero
            return np.uint16(sign)
        e = a >> 23
        m = (a & 0x7FFFFF) | 0x800000
        shift = 126 - e  # value * 2**24 = m >> shift
        q = m >> shift
        r = m & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if r > half or (r == half and (q & 1)):
            q += 1
        return np.uint16(sign | q)
    q = (a - (112 << 23)) >> 13
    r = a & 0x1FFF
    if r > 0x1000 or (r == 0x1000 and (q & 1)):
        q += 1  # a carry into the exponent is the right answer, up to inf
    return np.uint16(sign | q)


@njit(cache=True)
def f64_to_f16_bits(x):
    """Round an f64 straight to f16 (NumPy does not go through f32, which would round twice)."""
    u = _f64_as_i64(np.float64(x))
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
        e = a >> 52
        m = (a & 0xFFFFFFFFFFFFF) | 0x10000000000000
        shift = 1051 - e
        q = m >> shift
        r = m & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if r > half or (r == half and (q & 1)):
            q += 1
        return np.uint16(sign | q)
    q = (a - ((1023 - 15) << 52)) >> 42
    r = a & 0x3FFFFFFFFFF
    half = 0x20000000000
    if r > half or (r == half and (q & 1)):
        q += 1
    return np.uint16(sign | q)


# -- bf16 -----------------------------------------------------------------------
@njit(cache=True)
def bf16_bits_to_f32(b):
    """A bf16 bit pattern is the top half of an f32: exact, payloads included."""
    bits = (np.int64(b) & 0xFFFF) << 16
    return _i32_as_f32(np.int32(bits))  # np.int32 truncates: the low 32 bits


@njit(cache=True)
def f32_to_bf16_bits(x):
    """Round an f32 to the nearest bf16 (ties to even); NaN becomes the quiet NaN with its sign."""
    u = np.int64(_f32_as_i32(np.float32(x))) & 0xFFFFFFFF
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16(((u >> 16) & 0x8000) | 0x7FC0)
    u += 0x7FFF + ((u >> 16) & 1)
    return np.uint16((u >> 16) & 0xFFFF)


@njit(cache=True)
def f64_to_bf16_bits(x):
    """ml_dtypes rounds f64 to bf16 through f32 (two roundings); match it."""
    return f32_to_bf16_bits(np.float32(x))


@njit(cache=True)
def bf16_bits_to_f16_bits(b):
    """ml_dtypes: through f32 with one rounding, but every NaN becomes 0x7e00 with its sign."""
    b = np.int64(b) & 0xFFFF
    if (b & 0x7FFF) > 0x7F80:
        return np.uint16((b & 0x8000) | 0x7E00)
    return f32_to_f16_bits(bf16_bits_to_f32(b))


@njit(cache=True)
def f16_bits_to_bf16_bits(h):
    return f32_to_bf16_bits(f16_bits_to_f32(h))
