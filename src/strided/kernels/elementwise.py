"""Elementwise kernels: unary ops, binary ops and ``where`` over any layouts.

Every call goes through one dispatcher, ``_plan``, which walks the operands
with ``NdIter(out, *inputs)`` (the output's memory order, dims merged where
every operand allows; dims that every operand walks backwards are flipped
first, as NumPy does) and picks one path:

=========  ==============================================  ==========================
path       when (on the merged dims)                       loop
=========  ==============================================  ==========================
DENSE      every operand's inner stride is 1               plain vectorised run
BCAST      out inner stride 1, inputs' inner strides 0/1   the stride-0 input is
                                                           hoisted out of the run
TILED      an operand prefers the other order of the two   the two innermost dims in
           innermost dims (``a + b.t()``)                  square tiles; an
                                                           operand that walks columns
                                                           goes through a scratch tile
GENERAL    anything else                                   odometer over the outer
                                                           dims, strided inner run
=========  ==============================================  ==========================

DENSE, BCAST and GENERAL share one driver, a loop over runs that switches on
the path once per run: a chunk of the iteration space is a range of flat
positions, so work splits evenly between threads whatever the shape.  Above
``PARALLEL_MIN`` elements the chunks run under ``prange`` (a few per thread,
handed out dynamically), below it on the calling thread.

Kernels are generated per op from small factories that close over the op's
scalar function, so the op is inlined into the loop; each is compiled lazily,
on the first call with a given dtype, and cached on disk.  The closed-over
helpers are plain functions registered with ``register_jitable``, not
dispatchers: numba's cache key pickles closure cells, and a dispatcher pickles
with a per-process id, which would make every run a cache miss.

Dtypes.  Operands arrive promoted to one compute dtype: ``a`` and ``b`` compute
in the same dtype and the output is stored in a dtype that computes in it too,
except comparisons (eq ne lt le gt ge) whose output is bool.  f16 and bf16
compute in f32: the kernels take their buffers as they are (seen as uint16 and
int16 bits, so the element type says which format), ``_dec`` widens each
element to f32 in a register and ``_enc`` rounds each result once (ties to
even) as it is stored, with the branch-free conversions of ``kernels.half``.
So ``f16 + f16`` reads and writes 2 bytes per element and makes no f32
temporaries, ``f16 * <f32 scalar>`` and ``f16 + bf16 -> f32`` mix freely, and
the results are NumPy's (f32 math rounded once).  ``where`` computes nothing:
it moves raw bits (both half types share its uint16 kernel).  Unary outputs
have the input's dtype.  Float-only ops (exp log sqrt tanh
sigmoid sin cos recip div) are not dispatched for integers: the caller converts
to a float dtype first.  Integer add/sub/mul/neg/sqr wrap like NumPy's.  Integer
``pow`` by a negative exponent gives the truncated C result (0 unless the base
is 1 or -1) instead of NumPy's error.  On bools, add is ``or`` and mul is
``and`` (NumPy's rules).

Float math.  exp, log, log2, log10 and log1p of f32 and f64, and tanh and
sigmoid of f32, are branch-free polynomials of our own (``_expf`` ``_tanhf``
``_logf`` ``_expd`` ``_logd`` ...; f32 exp and tanh after Cephes' expf and
tanhf) that LLVM vectorises, where a libm call per element keeps the loop
scalar (numba's SVML route is not available; f64 sigmoid takes the new exp
too; docs/benchmarks.md has the timings).
exp and the logs stay within 1 ulp of the correctly rounded result: the tests
sweep every exponent with random significands and the special values, and
measured f32 log 0.82 ulp, log2 0.64, log10 0.62, log1p 0.5; f64 exp 0.69, log
0.82, log2 0.80, log10 0.67, log1p 0.79 (a subnormal exp within one step).
tanh stays within 1.3 ulp and sigmoid within 2.3 (f32).  So where libm's result
was correctly rounded ours may differ from it, and from NumPy's, by 1 ulp.
Zeros (and log1p's signed zeros), negatives, infinities, NaN, overflow and
underflow give NumPy's results; log2 of a power of 2 and log10 of an exact
power of 10 are exact.  Complex numbers, f64 tanh and the other functions call
libm (its float versions for f32).
max/min propagate NaN like NumPy; relu(nan) is nan.
Complex cosh, sinh, tanh, expm1, acos, acosh, asinh and atanh follow the standard's
special-case tables (C99 Annex G) where a part is infinite or NaN (``_regular``); finite
input computes as it always did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .common import own_name
from .common import (
    CHUNKS_PER_THREAD,
    COMPUTE,
    DTYPES,
    LIGHT_OP_FACTOR,
    PARALLEL_MIN,
    TILE_BYTES,
    TILE_FLOOR,
    TILE_MAX,
    TILE_MIN,
    TILE_PAD,
    check_buffer,
    check_in_buffer,
    check_layout,
    reach as _reach,
    writes_twice,
)
from .. import caches
from ..errors import DTypeError, ShapeError, StridedError
from ..layout.iterate import NdIter
from ..layout.layout import Layout
from ..threads import get_num_threads
from .half import HALF_VIEW, bitcast, dec as _dec, enc as _enc
from .walk import carry, direct, in_parallel, launch, seek

from numba import njit, prange, types  # noqa: E402  (numba comes after strided.threads)
from numba.extending import intrinsic, overload, register_jitable  # noqa: E402

__all__ = [
    "UNARY_OPS",
    "BINARY_OPS",
    "OpSpec",
    "output_layout",
    "unary",
    "binary",
    "where",
    "bind",
    "plan",
]

_FLOAT = frozenset({"float32", "float64"})
# int16 and uint16 are absent: their buffers would be read as half bits (common.WIDENED)
_INT = frozenset({"uint8", "uint32", "uint64", "int8", "int32", "int64"})
_BOOL = frozenset({"bool"})
_COMPLEX = frozenset({"complex64", "complex128"})
_NUMERIC = _FLOAT | _INT
_ALL = _NUMERIC | _BOOL
# Ops defined on complex numbers too: NumPy's scalar ufuncs, which numba has for complex.
_FLOAT_C = _FLOAT | _COMPLEX
_NUMERIC_C = _NUMERIC | _COMPLEX
_ALL_C = _ALL | _COMPLEX
# Buffers may hold any of common.DTYPES; the half types are stored as themselves, read
# into f32 registers and rounded back on store (``_dec``/``_enc``).  An op is dispatched
# by the name of the dtype its operands compute in (common.COMPUTE), from the sets above.

DENSE, BCAST, GENERAL, TILED = 0, 1, 2, 3
PATH_NAMES = {DENSE: "dense", BCAST: "bcast", GENERAL: "general", TILED: "tiled"}

_JIT = dict(cache=True, error_model="numpy")
# Helpers are plain functions registered for jitted callers, not dispatchers:
# the kernels close over them, and numba's cache key pickles closure cells,
# which for a dispatcher includes a per-process id (a cache miss every run).
_jitable = register_jitable(error_model="numpy")
# The f32 polynomials may fuse a*b+c into one FMA (one rounding instead of two:
# never less accurate), which shortens their dependency chains.
_poly_jitable = register_jitable(error_model="numpy", fastmath={"contract"})


@dataclass(frozen=True)
class OpSpec:
    """An op's name, the numpy dtype names it is dispatched for, and whether it yields bool."""

    name: str
    dtypes: frozenset
    bool_out: bool = False


# ---------------------------------------------------------------------------
# scalar helpers


_i32_bits_as_f32 = bitcast("_i32_bits_as_f32", types.int32, types.float32)
_f32_bits_as_i32 = bitcast("_f32_bits_as_i32", types.float32, types.int32)
_i64_bits_as_f64 = bitcast("_i64_bits_as_f64", types.int64, types.float64)
_f64_bits_as_i64 = bitcast("_f64_bits_as_i64", types.float64, types.int64)


def _zero(x):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


def _one(x):  # pragma: no cover
    raise NotImplementedError


@overload(_zero, jit_options=dict(error_model="numpy"))
def _ov_zero(x):
    ty = x
    return lambda x: ty(0)


@overload(_one, jit_options=dict(error_model="numpy"))
def _ov_one(x):
    ty = x
    return lambda x: ty(1)


def _invert(x):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


@overload(_invert, jit_options=dict(error_model="numpy"))
def _ov_invert(x):
    # ~ on a bool would give Python's -2 (nonzero, so True): a bool's bits are one bit
    if isinstance(x, types.Boolean):
        return lambda x: not x
    return lambda x: ~x


_F32 = np.float32
_LOG2E = _F32(1.4426950408889634)
_LN2_HI = _F32(0.693359375)  # few significant bits, so n * _LN2_HI is exact
_LN2_LO = _F32(-2.12194440e-4)
_EP0, _EP1, _EP2 = _F32(1.9875691500e-4), _F32(1.3981999507e-3), _F32(8.3334519073e-3)
_EP3, _EP4, _EP5 = _F32(4.1665795894e-2), _F32(1.6666665459e-1), _F32(5.0000001201e-1)
_EXP_HI = _F32(88.8)  # above ln(FLT_MAX): 2^128 overflows to inf by itself
_EXP_LO = _F32(-110.0)  # below -103.97 exp(x) < 2^-150 rounds to 0; 2^-79 * 2^-79 stays representable
_TWO23 = _F32(8388608.0)
_TP0, _TP1, _TP2 = _F32(-5.70498872745e-3), _F32(2.06390887954e-2), _F32(-5.37397155531e-2)
_TP3, _TP4 = _F32(1.33314422036e-1), _F32(-3.33332819422e-1)


@_poly_jitable
def _expf(x):
    """Cephes expf, branch free: exp(r) * 2^n with n = round(x / ln 2).

    2^n is built from the exponent bits in two halves so that results down in
    the subnormal range are rounded once, by the last multiplication, and
    below -103.97 the product rounds to 0 by itself.  The clamps are written
    so that a NaN passes through them (and poisons p)."""
    xc = _EXP_HI if _EXP_HI < x else x
    xc = _EXP_LO if _EXP_LO > xc else xc
    z = np.floor(xc * _LOG2E + _F32(0.5))
    r = xc - z * _LN2_HI - z * _LN2_LO
    p = (((((_EP0 * r + _EP1) * r + _EP2) * r + _EP3) * r + _EP4) * r + _EP5) * (r * r) + r + _F32(1.0)
    n1 = np.floor(z * _F32(0.5))
    n2 = z - n1
    s1 = _i32_bits_as_f32(np.int32((n1 + _F32(127.0)) * _TWO23))
    s2 = _i32_bits_as_f32(np.int32((n2 + _F32(127.0)) * _TWO23))
    return p * s1 * s2


@_poly_jitable
def _tanhf(x):
    """Cephes tanhf: an odd polynomial below 0.625, 1 - 2/(e^2|x| + 1) above."""
    ax = abs(x)
    e = _expf(ax + ax)
    big = _F32(1.0) - _F32(2.0) / (e + _F32(1.0))
    big = -big if x < _F32(0.0) else big
    z = x * x
    small = ((((_TP0 * z + _TP1) * z + _TP2) * z + _TP3) * z + _TP4) * z * x + x
    return big if ax > _F32(0.625) else small


# log(x) = e ln 2 + log(1 + f) with x = (1 + f) 2^e, 1 + f in [sqrt(1/2), sqrt(2)), read from
# the bits: adding (1.0's bits - sqrt(1/2)'s) carries into the exponent exactly when the
# significand is at least sqrt(2).  With s = f / (2 + f), log(1 + f) = 2 atanh(s)
# = f - f^2/2 + s (f^2/2 + R(s^2)), R(z) = 2z/3 + 2z^2/5 + ...; only the small last term
# carries the rounding of s.  The R coefficients are least-squares fits at Chebyshev nodes
# (relative weight) of R(z)/z on 0 <= z <= (3 - 2 sqrt 2)^2 * 1.01.
_LOGF_SHIFT = np.int32(0x3F800000 - 0x3F3504F3)
_SQRT_HALF_F32 = np.int32(0x3F3504F3)
_MANT_F32 = np.int32(0x007FFFFF)
_TINY_F32 = _F32(2.0**-126)
_LF0, _LF1, _LF2 = _F32(0.66666687), _F32(0.39988565), _F32(0.2958982)
_F32_NAN, _F32_INF = _F32(np.nan), _F32(np.inf)


@_poly_jitable
def _logf_parts(x):
    """e, f, f^2/2 and the small term t of log(x) = e ln 2 + f - f^2/2 + t, for a
    positive finite x (subnormals are scaled by 2^23 first)."""
    sub = x < _TINY_F32
    xs = x * _TWO23 if sub else x
    ix = np.int32(_f32_bits_as_i32(xs) + _LOGF_SHIFT)
    e = _F32(np.int32(ix >> 23)) - (_F32(150.0) if sub else _F32(127.0))
    f = _i32_bits_as_f32(np.int32((ix & _MANT_F32) + _SQRT_HALF_F32)) - _F32(1.0)
    s = f / (_F32(2.0) + f)
    z = s * s
    hf = _F32(0.5) * f * f
    return e, f, hf, s * (hf + ((_LF2 * z + _LF1) * z + _LF0) * z)


@_poly_jitable
def _logf_special(x, r):
    """r, or NumPy's log at 0 (-inf), below 0 (NaN), at inf and at NaN, branch free."""
    r = -_F32_INF if x == _F32(0.0) else r
    r = _F32_NAN if x < _F32(0.0) else r
    return r if x < _F32_INF else x


@_poly_jitable
def _logf(x):
    """log of an f32, branch free.  e ln 2 is added in two parts, ln 2's high part with few
    bits so e * _LN2_HI is exact; for |e| <= 1 the sum e * _LN2_HI + f is exact too, so it
    goes first there, and last elsewhere, where the result is large beside f's rounding."""
    e, f, hf, t = _logf_parts(x)
    t = t + e * _LN2_LO
    near = (e * _LN2_HI + f) - (hf - t)
    far = e * _LN2_HI + (f - (hf - t))
    return _logf_special(x, near if abs(e) <= _F32(1.0) else far)


@_poly_jitable
def _log_basef(x, per_e, per_ln):
    """log2 or log10 of an f32: e * per_e + log(1 + f) * per_ln summed in f64, where
    f - f^2/2 is exact, so that the one rounding that matters is the last, to f32."""
    e, f, hf, t = _logf_parts(x)
    fd = np.float64(f)
    y = (fd - 0.5 * fd * fd) + np.float64(t)
    return _logf_special(x, _F32(np.float64(e) * per_e + y * per_ln))


_LOG2E_F64 = 1.4426950408889634
_LOG10E_F64 = 0.4342944819032518
_LOG10_2_F64 = 0.3010299956639812
_LN2_HI_F64 = 0.6931471803691238  # ln 2 to 32 bits: n * _LN2_HI_F64 is exact for |n| < 2^21
_LN2_LO_F64 = 1.9082149292705877e-10
_TWO52 = 4503599627370496.0
# 2^52 + 1023: adding a small integer n puts n + 1023 in the low bits (the biased exponent)
_EXP_BIAS_F64 = _TWO52 + 1023.0
_EXP_HI_F64 = 710.0  # above ln(DBL_MAX) = 709.78: 2^1024 overflows by itself
_EXP_LO_F64 = -746.0  # below -745.13 exp(x) < 2^-1075 rounds to 0; 2^-538 * 2^-538 stays representable
# exp(r) = 1 + r + r^2 Q(r): a least-squares fit at Chebyshev nodes (relative weight) of Q
# on |r| <= ln(2)/2 + 1e-3, 2.3e-16 relative (Q's share of exp(r) is below 0.07)
_ED = (0.5000000000000001, 0.1666666666666664, 0.0416666666666234, 0.008333333333360707,
       0.001388888891759593, 0.00019841269771791754, 2.480152068246191e-05, 2.7557369088823155e-06,
       2.7620387012612057e-07, 2.5063406372807858e-08)
_ED0, _ED1, _ED2, _ED3, _ED4, _ED5, _ED6, _ED7, _ED8, _ED9 = _ED


@_poly_jitable
def _pow2_f64(n):
    """2^n for an integral f64 n in [-1022, 1023], through the exponent bits (no int64 to
    f64 conversion, which AVX2 lacks)."""
    return _i64_bits_as_f64(_f64_bits_as_i64(n + _EXP_BIAS_F64) << 52)


@_poly_jitable
def _expd(x):
    """exp of an f64, branch free, as _expf: exp(r) 2^n with n = round(x / ln 2) and
    r = x - n ln 2 (ln 2 in two parts, Cody and Waite), 2^n in two halves so that a
    subnormal result is rounded once."""
    xc = _EXP_HI_F64 if _EXP_HI_F64 < x else x
    xc = _EXP_LO_F64 if _EXP_LO_F64 > xc else xc
    n = np.floor(xc * _LOG2E_F64 + 0.5)
    rh = xc - n * _LN2_HI_F64
    r = rh - n * _LN2_LO_F64
    rc = (rh - r) - n * _LN2_LO_F64  # the rounding of r
    q = (((((((((_ED9 * r + _ED8) * r + _ED7) * r + _ED6) * r + _ED5) * r + _ED4) * r + _ED3) * r + _ED2) * r
          + _ED1) * r + _ED0)
    hi = 1.0 + r
    p = hi + ((((1.0 - hi) + r) + rc * hi) + (r * r) * q)  # 1 + r's rounding added back
    n1 = np.floor(n * 0.5)
    return p * _pow2_f64(n1) * _pow2_f64(n - n1)


_LOGD_SHIFT = np.int64(0x3FF0000000000000 - 0x3FE6A09E667F3BCD)
_SQRT_HALF_F64 = np.int64(0x3FE6A09E667F3BCD)
_MANT_F64 = np.int64(0x000FFFFFFFFFFFFF)
_EXP_FIELD = np.int64(0xFFF)  # the shifted exponent may carry into the sign bit
_MAGIC_F64 = np.int64(0x4330000000000000)  # 2^52's bits: or-ing in an integer below 2^52 adds it
_TINY_F64 = 2.0**-1022
# R(z)/z on 0 <= z <= (3 - 2 sqrt 2)^2 * 1.01, fitted as for f32: 5.3e-16 relative
_LD = (0.666666666666667, 0.39999999999893404, 0.2857142862874013, 0.22222210684424645, 0.18182921851937323,
       0.15330637106265735, 0.1462980919758996)
_LD0, _LD1, _LD2, _LD3, _LD4, _LD5, _LD6 = _LD


@_poly_jitable
def _logd_parts(x):
    """e, f, f^2/2 and the small term t of log(x) = e ln 2 + f - f^2/2 + t, for a positive
    finite x (subnormals scaled by 2^52 first); the exponent becomes a float through 2^52's
    bits, since AVX2 has no vector int64 to f64 conversion."""
    sub = x < _TINY_F64
    xs = x * _TWO52 if sub else x
    ix = _f64_bits_as_i64(xs) + _LOGD_SHIFT
    eb = _i64_bits_as_f64(((ix >> 52) & _EXP_FIELD) | _MAGIC_F64) - _TWO52
    e = eb - (1023.0 + (52.0 if sub else 0.0))
    f = _i64_bits_as_f64((ix & _MANT_F64) + _SQRT_HALF_F64) - 1.0
    s = f / (2.0 + f)
    z = s * s
    hf = 0.5 * f * f
    R = ((((((_LD6 * z + _LD5) * z + _LD4) * z + _LD3) * z + _LD2) * z + _LD1) * z + _LD0) * z
    return e, f, hf, s * (hf + R)


@_poly_jitable
def _logd_special(x, r):
    """r, or NumPy's log at 0 (-inf), below 0 (NaN), at inf and at NaN, branch free."""
    r = -math.inf if x == 0.0 else r
    r = math.nan if x < 0.0 else r
    return r if x < math.inf else x


@_poly_jitable
def _logd(x):
    """log of an f64, branch free, as _logf."""
    e, f, hf, t = _logd_parts(x)
    t = t + e * _LN2_LO_F64
    near = (e * _LN2_HI_F64 + f) - (hf - t)
    far = e * _LN2_HI_F64 + (f - (hf - t))
    return _logd_special(x, near if abs(e) <= 1.0 else far)


_HIGH_21 = np.int64(-(1 << 32))  # clears an f64's 32 low significand bits
_LOG2E_HI_F64, _LOG2E_LO_F64 = 1.4426950407214463, 1.6751713164886512e-10
_LOG10E_HI_F64, _LOG10E_LO_F64 = 0.4342944818781689, 2.5082946711645275e-11
_LOG10_2_HI_F64, _LOG10_2_LO_F64 = 0.3010299955494702, 1.1451100898021838e-10


@_poly_jitable
def _log_based(x, e_hi, e_lo, k_hi, k_lo):
    """log2 or log10 of an f64: e (e_hi + e_lo) + log(1 + f) (k_hi + k_lo), the constants'
    high parts to 32 bits.  log(1 + f) is split too, its high part to 21 bits, so the
    two large products are exact, and the largest sum is exact with its rounding added
    back (|e e_hi| >= the other unless e is 0): the last addition is the one rounding
    that matters."""
    e, f, hf, t = _logd_parts(x)
    yh = _i64_bits_as_f64(_f64_bits_as_i64(f - hf) & _HIGH_21)
    yl = ((f - yh) - hf) + t
    a = e * e_hi
    b = yh * k_hi
    lo = (yl * (k_hi + k_lo) + yh * k_lo) + e * e_lo
    w = a + b
    return _logd_special(x, w + (((a - w) + b) + lo))


@_poly_jitable
def _log1pd(x):
    """log1p of an f64: log(u) for u = 1 + x rounded, plus c / u for the rounding c of u
    (found exactly, larger operand first), added in with the small terms as in _logd;
    signed zeros come back as they are."""
    u = 1.0 + x
    c = (1.0 - u) + x if abs(x) <= 1.0 else (x - u) + 1.0
    e, f, hf, t = _logd_parts(u)
    t = (t + e * _LN2_LO_F64) + c / u
    near = (e * _LN2_HI_F64 + f) - (hf - t)
    far = e * _LN2_HI_F64 + (f - (hf - t))
    r = _logd_special(u, near if abs(e) <= 1.0 else far)
    return x if x == 0.0 else r


@_poly_jitable
def _log1pf(x):
    """log1p of an f32: 1 + x is exact in f64 (|x| >= 2^-29 and below 2^29) and its f64 log
    rounds once more to f32; below 2^-29 the result is x (x^2/2 is under half an ulp)."""
    return x if abs(x) < _F32(2.0**-29) else _F32(_logd(1.0 + np.float64(x)))


def _vexp(x):  # pragma: no cover
    raise NotImplementedError


def _vtanh(x):  # pragma: no cover
    raise NotImplementedError


def _vsigmoid(x):  # pragma: no cover
    raise NotImplementedError


def _vabs(x):  # pragma: no cover
    raise NotImplementedError


def _vpow(x, y):  # pragma: no cover
    raise NotImplementedError


@overload(_vexp, jit_options=dict(error_model="numpy"))
def _ov_exp(x):
    if x == types.float32:
        return lambda x: _expf(x)
    if isinstance(x, types.Complex):
        return lambda x: np.exp(x)
    return lambda x: _expd(x)


@overload(_vtanh, jit_options=dict(error_model="numpy"))
def _ov_tanh(x):
    if x == types.float32:
        return lambda x: _tanhf(x)
    if isinstance(x, types.Complex):
        return lambda x: np.tanh(x) if _regular(x) else _tanh_special(x)
    return lambda x: math.tanh(x)


def _vlog(x):  # pragma: no cover
    raise NotImplementedError


def _vsqrt(x):  # pragma: no cover
    raise NotImplementedError


def _vsin(x):  # pragma: no cover
    raise NotImplementedError


def _vcos(x):  # pragma: no cover
    raise NotImplementedError


def _vsign(x):  # pragma: no cover
    raise NotImplementedError


# math's functions for the real dtypes (as before complex existed: results stay the same
# bits), NumPy's scalar ufuncs for complex, which math has not.
def _real_or_complex(stub, real, cplx):
    @overload(stub, jit_options=dict(error_model="numpy"))
    def ov(x):
        return cplx if isinstance(x, types.Complex) else real

    return ov


def _vlog2(x):  # pragma: no cover
    raise NotImplementedError


def _vlog10(x):  # pragma: no cover
    raise NotImplementedError


def _vlog1p(x):  # pragma: no cover
    raise NotImplementedError


@overload(_vlog2, jit_options=dict(error_model="numpy"))
def _ov_log2(x):
    if x == types.float32:
        return lambda x: _log_basef(x, 1.0, _LOG2E_F64)
    if x == types.float64:
        return lambda x: _log_based(x, 1.0, 0.0, _LOG2E_HI_F64, _LOG2E_LO_F64)
    return lambda x: np.log2(x)


@overload(_vlog10, jit_options=dict(error_model="numpy"))
def _ov_log10(x):
    if x == types.float32:
        return lambda x: _log_basef(x, _LOG10_2_F64, _LOG10E_F64)
    if x == types.float64:
        return lambda x: _log_based(x, _LOG10_2_HI_F64, _LOG10_2_LO_F64, _LOG10E_HI_F64, _LOG10E_LO_F64)
    return lambda x: np.log10(x)


@overload(_vlog1p, jit_options=dict(error_model="numpy"))
def _ov_log1p(x):
    if x == types.float32:
        return lambda x: _log1pf(x)
    if x == types.float64:
        return lambda x: _log1pd(x)
    return lambda x: np.log1p(x)


@overload(_vlog, jit_options=dict(error_model="numpy"))
def _ov_log(x):
    if x == types.float32:
        return lambda x: _logf(x)
    if isinstance(x, types.Complex):
        return lambda x: np.log(x)
    return lambda x: _logd(x)


_real_or_complex(_vsqrt, lambda x: math.sqrt(x), lambda x: np.sqrt(x))
_real_or_complex(_vsin, lambda x: math.sin(x), lambda x: np.sin(x))
_real_or_complex(_vcos, lambda x: math.cos(x), lambda x: np.cos(x))


@overload(_vsign, jit_options=dict(error_model="numpy"))
def _ov_sign(x):
    if isinstance(x, types.Complex):
        ty = x

        def csign(x):  # the standard's (and NumPy 2's) z / |z|, 0 at 0
            a = abs(x)
            return ty(0) if a == 0 else ty(x / a)

        return csign

    def rsign(x):  # 0 of either sign gives +0.0, as NumPy 2 and array_api_strict; NaN stays
        one = _one(x)
        return one if x > _zero(x) else (-one if x < _zero(x) else (_zero(x) if x == _zero(x) else x))

    return rsign


@overload(_vsigmoid, jit_options=dict(error_model="numpy"))
def _ov_sigmoid(x):
    # e^-|x| never overflows, and e / (1 + e) keeps the tiny results for very negative x
    if x == types.float32:

        def sig32(x):
            e = _expf(-abs(x))
            d = _F32(1.0) + e
            return _F32(1.0) / d if x >= _F32(0.0) else e / d

        return sig32

    def sig64(x):
        e = _expd(-abs(x))
        return 1.0 / (1.0 + e) if x >= 0.0 else e / (1.0 + e)

    return sig64


@overload(_vabs, jit_options=dict(error_model="numpy"))
def _ov_abs(x):
    if isinstance(x, types.Float):
        return lambda x: math.fabs(x)
    if isinstance(x, types.Boolean) or (isinstance(x, types.Integer) and not x.signed):
        return lambda x: x
    return lambda x: -x if x < 0 else x


def _vdiv(x, y):  # pragma: no cover
    raise NotImplementedError


@overload(_vdiv, jit_options=dict(error_model="numpy"))
def _ov_div(x, y):
    if not isinstance(x, types.Complex):
        return lambda x, y: x / y
    ty, fty = x, x.underlying_float

    def cdiv(x, y):
        # NumPy's loop (Smith's algorithm in the parts' precision), so the quotients are its
        # bits; numba's own complex division raises ZeroDivisionError on a zero divisor,
        # where NumPy gives inf or nan.
        ar, ai, br, bi = x.real, x.imag, y.real, y.imag
        abr, abi = abs(br), abs(bi)
        if abr >= abi:
            if abr == 0 and abi == 0:
                return ty(complex(ar / abr, ai / abr))
            rat = bi / br
            scl = fty(1.0) / (br + bi * rat)
            return ty(complex((ar + ai * rat) * scl, (ai - ar * rat) * scl))
        rat = br / bi
        scl = fty(1.0) / (bi + br * rat)
        return ty(complex((ar * rat + ai) * scl, (ai * rat - ar) * scl))

    return cdiv


@overload(_vpow, jit_options=dict(error_model="numpy"))
def _ov_pow(x, y):
    if isinstance(x, types.Complex):
        ty = x

        def cpow(x, y):
            # NumPy's cases at zero (numba's pow gives nan for 0 ** z with Re z > 0)
            if y == 0:
                return ty(1)
            if x == 0:
                return ty(0) if y.real > 0 else ty(complex(np.nan, np.nan))
            return ty(x**y)

        return cpow
    if isinstance(x, types.Float):
        return lambda x, y: x**y
    if isinstance(x, types.Boolean):
        return lambda x, y: x or not y
    ty = x

    def ipow(x, y):
        if y < 0:  # 1 / x^|y| truncated toward zero
            if x == 1:
                return ty(1)
            if x == ty(0) - ty(1):
                return ty(1) if (y & 1) == 0 else x
            return ty(0)
        r = ty(1)
        b = x
        e = y
        while e:
            if e & 1:
                r = ty(r * b)
            b = ty(b * b)
            e >>= 1
        return r

    return ipow


# -- complex special values -----------------------------------------------------------------
#
# numba's complex cosh, sinh, tanh, expm1 and inverse functions are textbook formulas, which
# turn an infinite or NaN part into NaN + NaN j where the standard's tables (C99 Annex G, as
# FreeBSD's msun and NumPy's npymath implement it) give exact values, such as
# tanh(+0 + NaN j) = +0 + NaN j.  An op calls its usual function when ``_regular`` says so
# (any real, a complex with both parts finite: the same bits as before) and the table's
# branch otherwise.  Each table works on the parts in f64 and is written for every quadrant,
# so the symmetries the standard asks for (f(conj z) = conj f(z), oddness) hold by
# construction; ``x - x`` of an infinity is how the tables make a NaN.

_PI_2 = math.pi / 2


def _regular(x):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


@overload(_regular, jit_options=dict(error_model="numpy"))
def _ov_regular(x):
    if isinstance(x, types.Complex):
        return lambda x: math.isfinite(x.real) and math.isfinite(x.imag)
    return lambda x: True


@_jitable
def _cosh_table(a, b):
    if a == 0 and not math.isfinite(b):
        return complex(b - b, math.copysign(0.0, a * (b - b)))
    if b == 0 and not math.isfinite(a):
        return complex(a * a, math.copysign(0.0, (a if math.isinf(a) else a + a)) * b)
    if math.isfinite(a):
        return complex(b - b, a * (b - b))
    if math.isinf(a):
        if not math.isfinite(b):
            return complex(a * a, a * (b - b))
        return complex((a * a) * math.cos(b), a * math.sin(b))
    return complex((a * a) * (b - b), (a + a) * (b - b))


@_jitable
def _sinh_table(a, b):
    if a == 0 and not math.isfinite(b):
        return complex(math.copysign(0.0, a * (b - b)), b - b)
    if b == 0 and not math.isfinite(a):
        return complex(a, b)
    if math.isfinite(a):
        return complex(b - b, a * (b - b))
    if math.isinf(a):
        if not math.isfinite(b):
            return complex(a * a, a * (b - b))
        return complex(a * math.cos(b), math.inf * math.sin(b))
    return complex((a * a) * (b - b), (a + a) * (b - b))


@_jitable
def _tanh_table(a, b):
    if math.isnan(a):
        return complex(a, b if b == 0 else a * b)
    if math.isinf(a):
        # 1 + 0j with the zero's sign from b, where msun takes sin(b)cos(b)'s: the standard
        # asks for +0 at every positive finite b
        return complex(math.copysign(1.0, a), math.copysign(0.0, b))
    return complex(a if a == 0 else b - b, b - b)


@_jitable
def _expm1_table(a, b):
    if math.isnan(a):
        return complex(a, b if b == 0 else a + b)
    if math.isfinite(a):
        return complex(b - b, b - b)
    if a > 0:
        if b == 0:
            return complex(a, b)
        if not math.isfinite(b):
            return complex(a, b - b)
        return complex(a * math.cos(b) - 1.0, a * math.sin(b))
    if not math.isfinite(b):
        return complex(-1.0, math.copysign(0.0, b))
    return complex(0.0 * math.cos(b) - 1.0, 0.0 * math.sin(b))


@_jitable
def _acos_table(a, b):
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a):
            return complex(b + b, -math.inf)
        if math.isinf(b):
            return complex(a + a, -b)
        if a == 0:
            return complex(_PI_2, b + b)
        return complex(math.nan, math.nan)
    # a part is infinite: the angle of z, and an infinite imaginary part against b's sign
    return complex(abs(math.atan2(b, a)), math.inf if math.copysign(1.0, b) < 0 else -math.inf)


@_jitable
def _acosh_table(a, b):
    if a == 0 and math.isnan(b):
        return complex(math.nan, _PI_2)  # the standard's NaN + pi/2 j (msun gives NaN + NaN j)
    w = _acos_table(a, b)
    rx, ry = w.real, w.imag
    if math.isnan(rx) and math.isnan(ry):
        return complex(ry, rx)
    if math.isnan(rx):
        return complex(abs(ry), rx)
    if math.isnan(ry):
        return complex(ry, ry)
    return complex(abs(ry), math.copysign(rx, b))


@_jitable
def _asinh_table(a, b):
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a):
            return complex(a, b + b)
        if math.isinf(b):
            return complex(b, a + a)
        if b == 0:
            return complex(a + a, b)
        return complex(math.nan, math.nan)
    return complex(math.copysign(math.inf, a), math.copysign(math.atan2(abs(b), abs(a)), b))


@_jitable
def _atanh_table(a, b):
    if a == 0:
        return complex(a, math.atan(b))
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a):
            return complex(math.copysign(0.0, a), b + b)
        if math.isinf(b):
            return complex(math.copysign(0.0, a), math.copysign(_PI_2, b))
        return complex(math.nan, math.nan)
    return complex(math.copysign(0.0, a), math.copysign(_PI_2, b))


def _vacosh(x):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


@overload(_vacosh, jit_options=dict(error_model="numpy"))
def _ov_acosh(x):
    if not isinstance(x, types.Complex):
        return lambda x: np.arccosh(x)
    ty = x

    def cacosh(x):
        # numba's formula leaves the principal branch (real part >= 0) on the real axis: below
        # the cut's lower edge, acosh(-1.5 - 0j) came out as -0.96 + pi j for 0.96 - pi j, and
        # between -1 and 1 the real part as -1e-16.  The lower edge is the conjugate of the
        # upper one, as the standard asks; elsewhere only a negative real part changes.
        if not _regular(x):
            return _acosh_special(x)
        if x.imag == 0 and math.copysign(1.0, x.imag) < 0:
            w = np.arccosh(x.conjugate()).conjugate()
        else:
            w = np.arccosh(x)
        return ty(complex(abs(w.real), w.imag))

    return cacosh


def _special_values(table):
    """The op's value at ``x`` from ``table`` (a function of the parts), in x's own complex
    type; never reached for real x, for which it only has to type."""

    def stub(x):  # pragma: no cover - replaced by the overload in jitted code
        raise NotImplementedError

    @overload(stub, jit_options=dict(error_model="numpy"))
    def ov(x):
        if not isinstance(x, types.Complex):
            return lambda x: x
        ty = x
        return lambda x: ty(table(np.float64(x.real), np.float64(x.imag)))

    return stub


_cosh_special = _special_values(_cosh_table)
_sinh_special = _special_values(_sinh_table)
_tanh_special = _special_values(_tanh_table)
_expm1_special = _special_values(_expm1_table)
_acos_special = _special_values(_acos_table)
_acosh_special = _special_values(_acosh_table)
_asinh_special = _special_values(_asinh_table)
_atanh_special = _special_values(_atanh_table)


# -- the ops themselves ------------------------------------------------------


@_jitable
def _u_exp(x):
    return _vexp(x)


@_jitable
def _u_log(x):
    return _vlog(x)


@_jitable
def _u_sqrt(x):
    return _vsqrt(x)


@_jitable
def _u_sqr(x):
    return x * x


@_jitable
def _u_abs(x):
    return _vabs(x)


@_jitable
def _u_neg(x):
    return -x


@_jitable
def _u_relu(x):
    return _zero(x) if x < _zero(x) else x


@_jitable
def _u_tanh(x):
    return _vtanh(x)


@_jitable
def _u_sigmoid(x):
    return _vsigmoid(x)


@_jitable
def _u_sin(x):
    return _vsin(x)


@_jitable
def _u_cos(x):
    return _vcos(x)


@_jitable
def _u_not(x):
    return not x


@_jitable
def _u_sign(x):
    return _vsign(x)


@_jitable
def _u_conj(x):
    return x.conjugate()


@_jitable
def _u_recip(x):
    return _vdiv(_one(x), x)


@_jitable
def _b_add(x, y):
    return x + y


@_jitable
def _b_sub(x, y):
    return x - y


@_jitable
def _b_mul(x, y):
    return x * y


@_jitable
def _b_div(x, y):
    return _vdiv(x, y)


# On a tie the second operand wins, as in NumPy's SIMD loops (maxps/minps): it only shows
# on signed zeros, where maximum(-0.0, 0.0) is 0.0 and maximum(0.0, -0.0) is -0.0.
@_jitable
def _b_maximum(x, y):
    return x if (x > y or x != x) else y


@_jitable
def _b_minimum(x, y):
    return x if (x < y or x != x) else y


@_jitable
def _b_pow(x, y):
    return _vpow(x, y)


@_jitable
def _b_eq(x, y):
    return x == y


@_jitable
def _b_ne(x, y):
    return x != y


@_jitable
def _b_lt(x, y):
    return x < y


@_jitable
def _b_le(x, y):
    return x <= y


@_jitable
def _b_gt(x, y):
    return x > y


@_jitable
def _b_ge(x, y):
    return x >= y


@_jitable
def _b_and(x, y):
    return x & y


@_jitable
def _b_or(x, y):
    return x | y


@_jitable
def _b_xor(x, y):
    return x ^ y


# The standard's other math: NumPy's ufuncs on scalars, so that f32 computes in f32 as
# NumPy does (f16/bf16 reach them as f32).
@_jitable
def _u_acos(x):
    return np.arccos(x) if _regular(x) else _acos_special(x)


@_jitable
def _u_acosh(x):
    return _vacosh(x)


@_jitable
def _u_asin(x):
    return np.arcsin(x)


@_jitable
def _u_asinh(x):
    return np.arcsinh(x) if _regular(x) else _asinh_special(x)


@_jitable
def _u_atan(x):
    return np.arctan(x)


@_jitable
def _u_atanh(x):
    return np.arctanh(x) if _regular(x) else _atanh_special(x)


@_jitable
def _u_cosh(x):
    return np.cosh(x) if _regular(x) else _cosh_special(x)


@_jitable
def _u_sinh(x):
    return np.sinh(x) if _regular(x) else _sinh_special(x)


@_jitable
def _u_tan(x):
    return np.tan(x)


@_jitable
def _u_expm1(x):
    return np.expm1(x) if _regular(x) else _expm1_special(x)


@_jitable
def _u_log1p(x):
    return _vlog1p(x)


@_jitable
def _u_log2(x):
    return _vlog2(x)


@_jitable
def _u_log10(x):
    return _vlog10(x)


@_jitable
def _u_ceil(x):
    return np.ceil(x)


@_jitable
def _u_floor(x):
    return np.floor(x)


@_jitable
def _u_trunc(x):
    return np.trunc(x)


@_jitable
def _u_round(x):
    return np.rint(x)  # half to even, as the standard's round


@_jitable
def _b_atan2(x, y):
    return np.arctan2(x, y)


@_jitable
def _b_hypot(x, y):
    return np.hypot(x, y)


@_jitable
def _b_copysign(x, y):
    return np.copysign(x, y)


@_jitable
def _b_logaddexp(x, y):
    return np.logaddexp(x, y)


def _shl(x, y):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


def _shr(x, y):  # pragma: no cover
    raise NotImplementedError


# NumPy's shifts: a count outside [0, bits) shifts every bit out, leaving 0 (left, and right
# of a non-negative value) or -1 (right of a negative one); the width comes from the type,
# so every integer dtype gets its own.
@overload(_shl, jit_options=dict(error_model="numpy"))
def _ov_shl(x, y):
    ty, bits = x, x.bitwidth

    def shl(x, y):
        if y < 0 or y >= bits:
            return ty(0)
        return ty(x << y)

    return shl


@overload(_shr, jit_options=dict(error_model="numpy"))
def _ov_shr(x, y):
    ty, bits = x, x.bitwidth

    def shr(x, y):
        if y < 0 or y >= bits:
            return ty(-1) if x < 0 else ty(0)
        return ty(x >> y)

    return shr


@_jitable
def _b_shl(x, y):
    return _shl(x, y)


@_jitable
def _b_shr(x, y):
    return _shr(x, y)


@_jitable
def _b_nextafter(x, y):
    return np.nextafter(x, y)


# Python's floor division and modulo are NumPy's; under the numpy error model an integer
# divided by zero gives 0, as NumPy does (with its warning).
@_jitable
def _b_floor_divide(x, y):
    return x // y


@_jitable
def _b_remainder(x, y):
    return x % y


@_jitable
def _u_invert(x):
    return _invert(x)


_UNARY_FNS = {
    "exp": (_u_exp, _FLOAT_C),
    "log": (_u_log, _FLOAT_C),
    "sqrt": (_u_sqrt, _FLOAT_C),
    "sqr": (_u_sqr, _ALL_C),
    "abs": (_u_abs, _ALL),
    "neg": (_u_neg, _NUMERIC_C),
    "relu": (_u_relu, _ALL),
    "tanh": (_u_tanh, _FLOAT_C),
    "sigmoid": (_u_sigmoid, _FLOAT),
    "sin": (_u_sin, _FLOAT_C),
    "cos": (_u_cos, _FLOAT_C),
    "not": (_u_not, _BOOL),
    "sign": (_u_sign, _NUMERIC_C),
    "recip": (_u_recip, _FLOAT_C),
    "bitwise_invert": (_u_invert, _INT | _BOOL),
    "conj": (_u_conj, _NUMERIC_C),
    "acos": (_u_acos, _FLOAT_C),
    "acosh": (_u_acosh, _FLOAT_C),
    "asin": (_u_asin, _FLOAT_C),
    "asinh": (_u_asinh, _FLOAT_C),
    "atan": (_u_atan, _FLOAT_C),
    "atanh": (_u_atanh, _FLOAT_C),
    "cosh": (_u_cosh, _FLOAT_C),
    "sinh": (_u_sinh, _FLOAT_C),
    "tan": (_u_tan, _FLOAT_C),
    "expm1": (_u_expm1, _FLOAT_C),
    "log1p": (_u_log1p, _FLOAT_C),
    "log2": (_u_log2, _FLOAT_C),
    "log10": (_u_log10, _FLOAT_C),
    "ceil": (_u_ceil, _FLOAT),
    "floor": (_u_floor, _FLOAT),
    "trunc": (_u_trunc, _FLOAT),
    "round": (_u_round, _FLOAT),
}
_BINARY_FNS = {
    "add": (_b_add, _ALL_C, False),
    "sub": (_b_sub, _NUMERIC_C, False),
    "mul": (_b_mul, _ALL_C, False),
    "div": (_b_div, _FLOAT_C, False),
    "maximum": (_b_maximum, _ALL, False),
    "minimum": (_b_minimum, _ALL, False),
    "pow": (_b_pow, _ALL_C, False),
    "eq": (_b_eq, _ALL_C, True),
    "ne": (_b_ne, _ALL_C, True),
    "lt": (_b_lt, _ALL, True),
    "le": (_b_le, _ALL, True),
    "gt": (_b_gt, _ALL, True),
    "ge": (_b_ge, _ALL, True),
    "logical_and": (_b_and, _BOOL, True),
    "logical_or": (_b_or, _BOOL, True),
    "bitwise_and": (_b_and, _INT | _BOOL, False),
    "bitwise_or": (_b_or, _INT | _BOOL, False),
    "bitwise_xor": (_b_xor, _INT | _BOOL, False),
    "atan2": (_b_atan2, _FLOAT, False),
    "hypot": (_b_hypot, _FLOAT, False),
    "copysign": (_b_copysign, _FLOAT, False),
    "logaddexp": (_b_logaddexp, _FLOAT, False),
    "floor_divide": (_b_floor_divide, _NUMERIC, False),
    "remainder": (_b_remainder, _NUMERIC, False),
    "bitwise_left_shift": (_b_shl, _INT, False),
    "bitwise_right_shift": (_b_shr, _INT, False),
    "nextafter": (_b_nextafter, _FLOAT, False),
}

UNARY_OPS: dict[str, OpSpec] = {k: OpSpec(k, d) for k, (_, d) in _UNARY_FNS.items()}
BINARY_OPS: dict[str, OpSpec] = {k: OpSpec(k, d, b) for k, (_, d, b) in _BINARY_FNS.items()}


# ---------------------------------------------------------------------------
# kernel factories
#
# Layout integers arrive as ``shape`` (merged dims, outermost first), ``st``
# (one row of strides per operand, the output first) and ``offs``.  ``lo, hi``
# is a range of flat positions in iteration order; the first and last rows of
# a chunk may be partial.


# Tiles: an operand whose inner stride is 1 is read (or written) in place, row
# by row; any other one goes through a scratch tile, loaded (stored) along its
# smaller stride so that memory is walked in short forward runs.  Scratch rows
# are TILE_PAD elements longer than the tile, so that its rows do not share cache sets.


@_jitable
def _tile_load(buf, tw, x, p, s0, s1, ni, nj):
    """buf[i * tw + j] = x[p + i * s0 + j * s1]."""
    if abs(s0) < abs(s1):
        for j in range(nj):
            q = p + j * s1
            if s0 == 1:
                xv = x[q : q + ni]
                for i in range(ni):
                    buf[i * tw + j] = xv[i]
            else:
                for i in range(ni):
                    buf[i * tw + j] = x[q + i * s0]
    else:
        for i in range(ni):
            q = p + i * s0
            for j in range(nj):
                buf[i * tw + j] = x[q + j * s1]


@_jitable
def _tile_store(out, p, s0, s1, buf, tw, ni, nj):
    """out[p + i * s0 + j * s1] = buf[i * tw + j]."""
    if abs(s0) < abs(s1):
        for j in range(nj):
            q = p + j * s1
            if s0 == 1:
                ov = out[q : q + ni]
                for i in range(ni):
                    ov[i] = buf[i * tw + j]
            else:
                for i in range(ni):
                    out[q + i * s0] = buf[i * tw + j]
    else:
        for i in range(ni):
            q = p + i * s0
            for j in range(nj):
                out[q + j * s1] = buf[i * tw + j]


@_jitable
def _tile_coords(w, shape, st, start, idx, tile):
    """Tile ``w``: its extent and the operands' positions at its first element (``start``:
    their positions at the first element of all)."""
    nd = shape.shape[0]
    n0 = shape[nd - 2]
    n1 = shape[nd - 1]
    t1 = (n1 + tile - 1) // tile
    per = ((n0 + tile - 1) // tile) * t1
    outer = w // per
    t = w - outer * per
    ti = t // t1
    i0 = ti * tile
    j0 = (t - ti * t1) * tile
    pos = seek((outer * n0 + i0) * n1 + j0, shape, st, nd, idx, start)
    return min(tile, n0 - i0), min(tile, n1 - j0), pos


def _make_unary(fn):
    tag = fn.__name__
    def runs(out, x, shape, st, offs, lo, hi, path):
        nd = shape.shape[0]
        inner = shape[nd - 1]
        so = st[0, nd - 1]
        sx = st[1, nd - 1]
        idx = np.zeros(nd, np.int64)
        row = lo // inner
        j = lo - row * inner
        bo, bx = seek(row, shape, st, nd - 1, idx, (offs[0], offs[1]))
        d = nd - 2
        i = lo
        while i < hi:
            m = min(inner - j, hi - i)
            po = bo + j * so
            px = bx + j * sx
            if path == 0:
                ov = out[po : po + m]
                xv = x[px : px + m]
                for k in range(m):
                    ov[k] = _enc(ov, fn(_dec(xv[k])))
            elif path == 1:
                ov = out[po : po + m]
                v = _enc(ov, fn(_dec(x[px])))
                for k in range(m):
                    ov[k] = v
            else:
                for k in range(m):
                    out[po + k * so] = _enc(out, fn(_dec(x[px + k * sx])))
            i += m
            j = 0
            if i < hi:
                if d >= 0 and idx[d] + 1 < shape[d]:
                    idx[d] += 1
                    bo += st[0, d]
                    bx += st[1, d]
                else:
                    bo, bx = carry(shape, st, nd - 1, idx, (bo, bx))[1]

    def tiles(out, x, shape, st, offs, w0, w1, tile):
        nd = shape.shape[0]
        tw = tile + TILE_PAD
        so0, so1 = st[0, nd - 2], st[0, nd - 1]
        sx0, sx1 = st[1, nd - 2], st[1, nd - 1]
        dx = sx1 == 1
        do = so1 == 1
        bx = np.empty(0 if dx else tile * tw, x.dtype)
        bo = np.empty(0 if do else tile * tw, out.dtype)
        idx = np.zeros(nd, np.int64)
        for w in range(w0, w1):
            ni, nj, (po, px) = _tile_coords(w, shape, st, (offs[0], offs[1],), idx, tile)
            if not dx:
                _tile_load(bx, tw, x, px, sx0, sx1, ni, nj)
            for i in range(ni):
                xv = x[px + i * sx0 : px + i * sx0 + nj] if dx else bx[i * tw : i * tw + nj]
                ov = out[po + i * so0 : po + i * so0 + nj] if do else bo[i * tw : i * tw + nj]
                for j in range(nj):
                    ov[j] = _enc(ov, fn(_dec(xv[j])))
            if not do:
                _tile_store(out, po, so0, so1, bo, tw, ni, nj)

    own_name(tag, runs, tiles)
    return _jitable(runs), _jitable(tiles)


def _make_binary(fn):
    tag = fn.__name__
    def runs(out, x, y, shape, st, offs, lo, hi, path):
        nd = shape.shape[0]
        inner = shape[nd - 1]
        so = st[0, nd - 1]
        sx = st[1, nd - 1]
        sy = st[2, nd - 1]
        idx = np.zeros(nd, np.int64)
        row = lo // inner
        j = lo - row * inner
        bo, bx, by = seek(row, shape, st, nd - 1, idx, (offs[0], offs[1], offs[2]))
        d = nd - 2
        i = lo
        while i < hi:
            m = min(inner - j, hi - i)
            po = bo + j * so
            px = bx + j * sx
            py = by + j * sy
            if path == 0:
                ov = out[po : po + m]
                xv = x[px : px + m]
                yv = y[py : py + m]
                for k in range(m):
                    ov[k] = _enc(ov, fn(_dec(xv[k]), _dec(yv[k])))
            elif path == 1:
                ov = out[po : po + m]
                if sx == 0 and sy == 0:
                    v = _enc(ov, fn(_dec(x[px]), _dec(y[py])))
                    for k in range(m):
                        ov[k] = v
                elif sy == 0:
                    xv = x[px : px + m]
                    ys = _dec(y[py])
                    for k in range(m):
                        ov[k] = _enc(ov, fn(_dec(xv[k]), ys))
                else:
                    xs = _dec(x[px])
                    yv = y[py : py + m]
                    for k in range(m):
                        ov[k] = _enc(ov, fn(xs, _dec(yv[k])))
            else:
                for k in range(m):
                    out[po + k * so] = _enc(out, fn(_dec(x[px + k * sx]), _dec(y[py + k * sy])))
            i += m
            j = 0
            if i < hi:
                if d >= 0 and idx[d] + 1 < shape[d]:
                    idx[d] += 1
                    bo += st[0, d]
                    bx += st[1, d]
                    by += st[2, d]
                else:
                    bo, bx, by = carry(shape, st, nd - 1, idx, (bo, bx, by))[1]

    def tiles(out, x, y, shape, st, offs, w0, w1, tile):
        nd = shape.shape[0]
        tw = tile + TILE_PAD
        so0, so1 = st[0, nd - 2], st[0, nd - 1]
        sx0, sx1 = st[1, nd - 2], st[1, nd - 1]
        sy0, sy1 = st[2, nd - 2], st[2, nd - 1]
        dx = sx1 == 1
        dy = sy1 == 1
        do = so1 == 1
        bx = np.empty(0 if dx else tile * tw, x.dtype)
        by = np.empty(0 if dy else tile * tw, y.dtype)
        bo = np.empty(0 if do else tile * tw, out.dtype)
        idx = np.zeros(nd, np.int64)
        for w in range(w0, w1):
            ni, nj, (po, px, py) = _tile_coords(w, shape, st, (offs[0], offs[1], offs[2],), idx, tile)
            if not dx:
                _tile_load(bx, tw, x, px, sx0, sx1, ni, nj)
            if not dy:
                _tile_load(by, tw, y, py, sy0, sy1, ni, nj)
            for i in range(ni):
                xv = x[px + i * sx0 : px + i * sx0 + nj] if dx else bx[i * tw : i * tw + nj]
                yv = y[py + i * sy0 : py + i * sy0 + nj] if dy else by[i * tw : i * tw + nj]
                ov = out[po + i * so0 : po + i * so0 + nj] if do else bo[i * tw : i * tw + nj]
                for j in range(nj):
                    ov[j] = _enc(ov, fn(_dec(xv[j]), _dec(yv[j])))
            if not do:
                _tile_store(out, po, so0, so1, bo, tw, ni, nj)

    own_name(tag, runs, tiles)
    return _jitable(runs), _jitable(tiles)


@_jitable
def _w_select(c, x, y):
    return x if c else y


def _make_where():
    tag = "where"
    fn = _w_select

    def runs(out, c, x, y, shape, st, offs, lo, hi, path):
        nd = shape.shape[0]
        inner = shape[nd - 1]
        so = st[0, nd - 1]
        sc = st[1, nd - 1]
        sx = st[2, nd - 1]
        sy = st[3, nd - 1]
        idx = np.zeros(nd, np.int64)
        row = lo // inner
        j = lo - row * inner
        bo, bc, bx, by = seek(row, shape, st, nd - 1, idx, (offs[0], offs[1], offs[2], offs[3]))
        d = nd - 2
        i = lo
        while i < hi:
            m = min(inner - j, hi - i)
            po = bo + j * so
            pc = bc + j * sc
            px = bx + j * sx
            py = by + j * sy
            if path == 0:
                ov = out[po : po + m]
                cv = c[pc : pc + m]
                xv = x[px : px + m]
                yv = y[py : py + m]
                for k in range(m):
                    ov[k] = fn(cv[k], xv[k], yv[k])
            else:
                for k in range(m):
                    out[po + k * so] = fn(c[pc + k * sc], x[px + k * sx], y[py + k * sy])
            i += m
            j = 0
            if i < hi:
                if d >= 0 and idx[d] + 1 < shape[d]:
                    idx[d] += 1
                    bo += st[0, d]
                    bc += st[1, d]
                    bx += st[2, d]
                    by += st[3, d]
                else:
                    bo, bc, bx, by = carry(shape, st, nd - 1, idx, (bo, bc, bx, by))[1]

    def tiles(out, c, x, y, shape, st, offs, w0, w1, tile):
        nd = shape.shape[0]
        tw = tile + TILE_PAD
        so0, so1 = st[0, nd - 2], st[0, nd - 1]
        sc0, sc1 = st[1, nd - 2], st[1, nd - 1]
        sx0, sx1 = st[2, nd - 2], st[2, nd - 1]
        sy0, sy1 = st[3, nd - 2], st[3, nd - 1]
        dc = sc1 == 1
        dx = sx1 == 1
        dy = sy1 == 1
        do = so1 == 1
        bc = np.empty(0 if dc else tile * tw, c.dtype)
        bx = np.empty(0 if dx else tile * tw, x.dtype)
        by = np.empty(0 if dy else tile * tw, y.dtype)
        bo = np.empty(0 if do else tile * tw, out.dtype)
        idx = np.zeros(nd, np.int64)
        for w in range(w0, w1):
            ni, nj, (po, pc, px, py) = _tile_coords(w, shape, st, (offs[0], offs[1], offs[2], offs[3],), idx, tile)
            if not dc:
                _tile_load(bc, tw, c, pc, sc0, sc1, ni, nj)
            if not dx:
                _tile_load(bx, tw, x, px, sx0, sx1, ni, nj)
            if not dy:
                _tile_load(by, tw, y, py, sy0, sy1, ni, nj)
            for i in range(ni):
                cv = c[pc + i * sc0 : pc + i * sc0 + nj] if dc else bc[i * tw : i * tw + nj]
                xv = x[px + i * sx0 : px + i * sx0 + nj] if dx else bx[i * tw : i * tw + nj]
                yv = y[py + i * sy0 : py + i * sy0 + nj] if dy else by[i * tw : i * tw + nj]
                ov = out[po + i * so0 : po + i * so0 + nj] if do else bo[i * tw : i * tw + nj]
                for j in range(nj):
                    ov[j] = fn(cv[j], xv[j], yv[j])
            if not do:
                _tile_store(out, po, so0, so1, bo, tw, ni, nj)

    own_name(tag, runs, tiles)
    return _jitable(runs), _jitable(tiles)


def _make_drivers(runs, tiles, nin, tag):
    """The four kernels of one op: serial and parallel, runs and tiles.

    The serial kernels are ``runs``/``tiles`` themselves (``lo, hi`` = the
    whole range); the parallel ones split the range into ``nch`` chunks.
    numba cannot take a variable number of arrays, so each arity spells its
    arguments out; the bodies are identical."""
    if nin == 1:

        def p_runs(out, x, shape, st, offs, total, nch, path):
            for c in prange(nch):
                runs(out, x, shape, st, offs, c * total // nch, (c + 1) * total // nch, path)

        def p_tiles(out, x, shape, st, offs, total, nch, tile):
            for c in prange(nch):
                tiles(out, x, shape, st, offs, c * total // nch, (c + 1) * total // nch, tile)

    elif nin == 2:

        def p_runs(out, x, y, shape, st, offs, total, nch, path):
            for c in prange(nch):
                runs(out, x, y, shape, st, offs, c * total // nch, (c + 1) * total // nch, path)

        def p_tiles(out, x, y, shape, st, offs, total, nch, tile):
            for c in prange(nch):
                tiles(out, x, y, shape, st, offs, c * total // nch, (c + 1) * total // nch, tile)

    else:

        def p_runs(out, c, x, y, shape, st, offs, total, nch, path):
            for k in prange(nch):
                runs(out, c, x, y, shape, st, offs, k * total // nch, (k + 1) * total // nch, path)

        def p_tiles(out, c, x, y, shape, st, offs, total, nch, tile):
            for k in prange(nch):
                tiles(out, c, x, y, shape, st, offs, k * total // nch, (k + 1) * total // nch, tile)

    own_name(tag, p_runs, p_tiles)
    return {
        (False, False): njit(**_JIT)(runs),
        (False, True): njit(parallel=True, **_JIT)(p_runs),
        (True, False): njit(**_JIT)(tiles),
        (True, True): njit(parallel=True, **_JIT)(p_tiles),
    }


_kernels: dict[str, dict] = {}


def _kernel_set(kind: str, op: str) -> dict:
    key = kind + ":" + op
    ks = _kernels.get(key)
    if ks is None:
        if kind == "u":
            ks = _make_drivers(*_make_unary(_UNARY_FNS[op][0]), 1, op)
        elif kind == "b":
            ks = _make_drivers(*_make_binary(_BINARY_FNS[op][0]), 2, op)
        else:
            ks = _make_drivers(*_make_where(), 3, op)
        _kernels[key] = ks
    return ks


# ---------------------------------------------------------------------------
# checks and the dispatcher


def _check_operands(op: str, out, out_layout: Layout, named) -> None:
    """Buffers, shapes and bounds, all before any memory access."""
    check_buffer(op, "out", out, dtypes=DTYPES, writable=True)
    check_layout(op, "out_layout", out_layout)
    for what, buf, lay in named:
        check_buffer(op, what, buf, dtypes=DTYPES)
        check_layout(op, what + "_layout", lay)
        if lay.shape != out_layout.shape:
            raise ShapeError(
                f"{op}: every operand must have the output's shape {out_layout.shape} "
                f"(broadcast them first), got {what} of shape {lay.shape}"
            )
    for what, buf, lay in (("out", out, out_layout),) + tuple(named):
        check_in_buffer(op, what, buf, lay)
    if writes_twice(out_layout):
        raise StridedError(
            f"{op}: the output layout {out_layout} writes one element several times (a stride-0 dim of size > 1)"
        )


def _flip_negative(layouts: list[Layout]) -> list[Layout]:
    """Reverse every dim on which no operand walks forwards (NumPy's order='K' does the same).

    Every operand is flipped alike, so the element pairs are unchanged; the
    runs then read memory forwards."""
    nd = layouts[0].ndim
    dims = [
        d
        for d in range(nd)
        if any(l.stride[d] < 0 for l in layouts) and all(l.stride[d] <= 0 for l in layouts)
    ]
    if not dims:
        return layouts
    return [l.flip(dims) for l in layouts]


@dataclass(frozen=True)
class Plan:
    """What ``_plan`` decided: the path, the merged dims and the work split."""

    path: int
    shape: tuple
    strides: tuple
    offsets: tuple
    work: int  # flat positions (runs) or tiles (TILED)
    parallel: bool
    nchunks: int
    tile: int = 0  # TILED: the tile side


def _plan(layouts, itemsize: int = 4) -> Plan:
    """The one place that chooses a path; ``layouts[0]`` is the output."""
    return _plan_and_arrays(tuple(layouts), itemsize, get_num_threads(), PARALLEL_MIN, TILE_MIN, TILE_BYTES)[0]


@caches.lru("elementwise.plans", "layouts, itemsize, thread count, thresholds", 1024)
def _plan_and_arrays(layouts: tuple, itemsize: int, nthreads: int, parallel_min: int, tile_min: int, tile_bytes: int):
    """The plan and the integer arrays the kernels take, cached per layouts (and settings)."""
    p = _choose(list(layouts), itemsize, nthreads, parallel_min, tile_min, tile_bytes)
    shape = np.array(p.shape, dtype=np.int64)
    st = np.array(p.strides, dtype=np.int64).reshape(len(p.strides), len(p.shape))
    offs = np.array(p.offsets, dtype=np.int64)
    for a in (shape, st, offs):
        a.flags.writeable = False
    return p, shape, st, offs


def _choose(layouts: list, itemsize: int, nthreads: int, parallel_min: int, tile_min: int, tile_bytes: int) -> Plan:
    layouts = _flip_negative(layouts)
    it = NdIter(*layouts)
    shape, strides, offsets = it.shape, it.strides, it.offsets
    numel = 1
    for n in shape:
        numel *= n
    nd = len(shape)
    inner = [s[-1] for s in strides]
    if (
        nd >= 2
        and shape[-1] >= tile_min
        and shape[-2] >= tile_min
        and any(s[-1] != 0 and s[-2] != 0 and abs(s[-2]) < abs(s[-1]) for s in strides)
    ):
        path = TILED
    elif all(s == 1 for s in inner):
        path = DENSE
    elif inner[0] == 1 and all(s in (0, 1) for s in inner[1:]):
        path = BCAST
    else:
        path = GENERAL
    parallel = numel >= parallel_min and nthreads > 1
    tile = 0
    if path == TILED:
        outer = 1
        for n in shape[:-2]:
            outer *= n
        tile = min(TILE_MAX, max(TILE_FLOOR, tile_bytes // itemsize))  # a page-long row
        # No larger than the tiled dims: the scratch tiles are allocated at this side.
        tile = min(tile, max(shape[-1], shape[-2]))

        def ntiles(t):
            return outer * (-(-shape[-2] // t)) * (-(-shape[-1] // t))

        # Smaller when that leaves too few tiles to share between threads.
        while parallel and tile > TILE_FLOOR and ntiles(tile) < 2 * nthreads:
            tile //= 2
        work = ntiles(tile)
    else:
        work = numel
    # Several chunks per thread, handed out dynamically (``_launch``): a thread
    # that the OS preempts on a busy machine does not hold the others up.
    nchunks = min(CHUNKS_PER_THREAD * nthreads, work) if parallel else 1
    return Plan(path, shape, strides, offsets, work, parallel and nchunks > 1, nchunks, tile)


def plan(out_layout: Layout, *layouts: Layout, itemsize: int = 4) -> Plan:
    """The plan the dispatcher would run for operands of ``itemsize`` bytes (for tests and benchmarks)."""
    return _plan([out_layout, *layouts], itemsize)


# The ops whose work per element is a libm-sized function: they go parallel from
# PARALLEL_MIN; every other op from LIGHT_OP_FACTOR times that.
HEAVY_OPS = frozenset({"exp", "log", "sqrt", "tanh", "sigmoid", "sin", "cos", "recip", "div", "pow", "acos", "acosh",
                       "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "expm1", "log1p", "log2", "log10",
                       "atan2", "hypot", "logaddexp", "floor_divide", "remainder"})


def _parallel_min(op: str) -> int:
    return PARALLEL_MIN if op in HEAVY_OPS else PARALLEL_MIN * LIGHT_OP_FACTOR


def _launch(op: str, ks: dict, bufs: tuple, layouts: tuple) -> None:
    itemsize = max(b.itemsize for b in bufs)
    p, shape, st, offs = _plan_and_arrays(layouts, itemsize, get_num_threads(), _parallel_min(op), TILE_MIN, TILE_BYTES)
    tiled = p.path == TILED
    k = ks[(tiled, p.parallel)]
    last = p.tile if tiled else p.path
    tail = (p.work, p.nchunks) if p.parallel else (0, p.work)
    launch(k, (*bufs, shape, st, offs, *tail, last), p.parallel)


def bind(kind: str, op: str, layouts: tuple, dtypes: tuple):
    """A checked elementwise call to repeat, or None when the operands need the entry
    points' checks (which then say what is wrong).

    ``kind`` is "unary", "binary" or "where"; ``layouts`` and ``dtypes`` (numpy dtypes)
    list the output first, then the inputs in the entry point's order.  Everything but
    the buffers is checked here, once: returns ``(run, reach)``, and ``run(out, *inputs)``
    runs the kernel on buffers of those dtypes once the caller has checked that each
    buffer is at least ``reach[i]`` long (the layouts' lowest offsets are checked here)."""
    out_lay = layouts[0]
    spec = (UNARY_OPS if kind == "unary" else BINARY_OPS).get(op) if kind != "where" else None
    if kind != "where" and spec is None:
        return None
    comps = [COMPUTE.get(np.dtype(d)) for d in dtypes]
    if None in comps or any(not isinstance(l, Layout) or l.shape != out_lay.shape for l in layouts):
        return None
    if kind == "where":
        if dtypes[1] != np.bool_ or not (dtypes[0] == dtypes[2] == dtypes[3]):
            return None
    elif comps[1] not in spec.dtypes or any(c != comps[1] for c in comps[2:]):
        return None
    elif kind == "unary" and dtypes[0] != dtypes[1]:
        return None
    elif spec.bool_out and dtypes[0] != np.bool_ or not spec.bool_out and comps[0] != comps[1]:
        return None
    reach = []
    for lay in layouts:
        lo, hi = _reach(lay)
        if lo < 0:
            return None
        reach.append(hi)
    if writes_twice(out_lay) or out_lay.numel == 0:
        return None
    if kind == "where":
        views = tuple(None if i == 1 or np.dtype(d) not in HALF_VIEW else np.dtype(np.uint16) for i, d in enumerate(dtypes))
    else:
        views = tuple(HALF_VIEW.get(np.dtype(d)) for d in dtypes)
    itemsize = max((np.dtype(d) if v is None else v).itemsize for d, v in zip(dtypes, views))
    p, shape, st, offs = _plan_and_arrays(layouts, itemsize, get_num_threads(), _parallel_min(op), TILE_MIN, TILE_BYTES)
    tiled = p.path == TILED
    k = _kernel_set({"unary": "u", "binary": "b", "where": "w"}[kind], op if kind != "where" else "where")[(tiled, p.parallel)]
    last = p.tile if tiled else p.path
    tail = (shape, st, offs, p.work, p.nchunks, last) if p.parallel else (shape, st, offs, 0, p.work, last)
    if p.parallel:
        par = in_parallel(k)

        def run(*bufs):
            par(*[b if v is None else b.view(v) for b, v in zip(bufs, views)], *tail)
    elif any(v is not None for v in views):
        def run(*bufs):
            k(*[b if v is None else b.view(v) for b, v in zip(bufs, views)], *tail)
    else:  # buffers as they are, on the calling thread: numba's compiled entry for them
        k = direct(k, (*[np.empty(0, d) for d in dtypes], *tail))
        w = p.work
        if len(layouts) == 2:
            def run(o, x):
                k(o, x, shape, st, offs, 0, w, last)
        elif len(layouts) == 3:
            def run(o, x, y):
                k(o, x, y, shape, st, offs, 0, w, last)
        else:
            def run(*bufs):
                k(*bufs, *tail)
    return run, tuple(reach)


def _kview(buf):
    """The buffer as the kernels type it: half types as their integer bit views."""
    v = HALF_VIEW.get(buf.dtype)
    return buf if v is None else buf.view(v)


def _dtype_ok(op: str, spec_dtypes, dtype: np.dtype, what: str) -> None:
    if COMPUTE.get(dtype) not in spec_dtypes:
        raise DTypeError(
            f"{op}: not dispatched for {what} dtype {dtype} (expected one of {', '.join(sorted(spec_dtypes))})"
        )


# ---------------------------------------------------------------------------
# public entry points


def output_layout(shape, *layouts: Layout) -> Layout:
    """The dense layout of a result of ``shape`` that follows the inputs' memory order.

    Dims are ordered as ``NdIter(*layouts).perm`` orders them (NumPy's
    order='K'): contiguous inputs give a row-major output, ``a.t() + b.t()`` a
    column-major one, mixed orders follow the first operand with a say.
    """
    shape = tuple(int(n) for n in shape)
    lays = [l for l in layouts if l.shape == shape]
    if len(lays) != len(layouts):
        bad = [l.shape for l in layouts if l.shape != shape]
        raise ShapeError(f"output_layout: every layout must have shape {shape}, got {bad}")
    if not lays or 0 in shape or len(shape) < 2:
        return Layout.contiguous(shape)
    return _following(tuple(lays))


@caches.lru("elementwise.output_order", "operand layouts", 1024)
def _following(lays: tuple) -> Layout:
    # Cached: a model's step asks again for the same operand layouts, and NdIter's
    # ordering costs more than a small op's loop.
    shape = lays[0].shape
    perm = NdIter(*lays).perm
    stride = [0] * len(shape)
    acc = 1
    for d in reversed(perm):
        stride[d] = acc
        acc *= shape[d]
    dense = Layout.contiguous(shape)  # the cached object when the order is row-major
    return dense if tuple(stride) == dense.stride else Layout(shape, stride, 0)


def unary(op: str, src, src_layout: Layout, out, out_layout: Layout) -> None:
    """``out = op(src)`` elementwise; out has src's dtype (``not`` takes and gives bool)."""
    if op not in UNARY_OPS:
        raise StridedError(f"unary: unknown op {op!r} (expected one of {', '.join(UNARY_OPS)})")
    _check_operands(op, out, out_layout, (("src", src, src_layout),))
    _dtype_ok(op, UNARY_OPS[op].dtypes, src.dtype, "input")
    if out.dtype != src.dtype:
        raise DTypeError(f"{op}: expected an output of dtype {src.dtype}, got {out.dtype}")
    if out_layout.numel == 0:
        return
    _launch(op, _kernel_set("u", op), (_kview(out), _kview(src)), (out_layout, src_layout))


def binary(op: str, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout) -> None:
    """``out = op(a, b)`` elementwise; a, b and out share a compute dtype (out is bool for comparisons).

    f16, bf16 and f32 all compute in f32, so a half operand may meet an f32 one
    (a half tensor and its f32 scalar) and the result may be stored as any of
    the three, rounded once."""
    spec = BINARY_OPS.get(op)
    if spec is None:
        raise StridedError(f"binary: unknown op {op!r} (expected one of {', '.join(BINARY_OPS)})")
    _check_operands(op, out, out_layout, (("a", a, a_layout), ("b", b, b_layout)))
    comp = COMPUTE[a.dtype]
    if COMPUTE[b.dtype] != comp:
        raise DTypeError(
            f"{op}: expected operands of one compute dtype (promote first), got {a.dtype} and {b.dtype}"
        )
    _dtype_ok(op, spec.dtypes, a.dtype, "input")
    if spec.bool_out:
        if out.dtype != np.bool_:
            raise DTypeError(f"{op}: expected an output of dtype bool, got {out.dtype}")
    elif COMPUTE[out.dtype] != comp:
        raise DTypeError(f"{op}: expected an output computed in {comp} (as {a.dtype}), got {out.dtype}")
    if out_layout.numel == 0:
        return
    _launch(op, _kernel_set("b", op), (_kview(out), _kview(a), _kview(b)), (out_layout, a_layout, b_layout))


def where(cond, cond_layout: Layout, a, a_layout: Layout, b, b_layout: Layout, out, out_layout: Layout) -> None:
    """``out = a if cond else b`` elementwise; cond is bool, a, b and out share a dtype.

    Nothing is computed, so elements move as raw bits: both half types share the
    uint16 kernel."""
    _check_operands(
        "where", out, out_layout, (("cond", cond, cond_layout), ("a", a, a_layout), ("b", b, b_layout))
    )
    if cond.dtype != np.bool_:
        raise DTypeError(f"where: expected a bool condition, got {cond.dtype}")
    if not (a.dtype == b.dtype == out.dtype):
        raise DTypeError(f"where: expected a, b and out of one dtype, got {a.dtype}, {b.dtype} and {out.dtype}")
    if out_layout.numel == 0:
        return
    if a.dtype in HALF_VIEW:
        out, a, b = out.view(np.uint16), a.view(np.uint16), b.view(np.uint16)
    _launch("where", _kernel_set("w", "where"), (out, cond, a, b), (out_layout, cond_layout, a_layout, b_layout))
