"""Scalar math for the op table: plain Python that numba compiles for the CPU and numba-cuda
for a GPU (and that its simulator runs as it is).

Everything here is written with Python arithmetic, comparisons, numpy scalar types and
bit views (``np.int32(v).view(np.float32)``: a register move that LLVM vectorises like
any other), and calls two kinds of names:

- other functions of this module, which a backend compiles along (``PORTABLE`` lists them);
- *primitives*, the libm-level functions each backend binds its own way (``PRIMITIVES``):
  on the CPU NumPy's scalar ufuncs, which numba compiles to the float or double libm
  call as NumPy does (so f32 computes in f32), on CUDA numba-cuda's ``math``, ``cmath``
  and NumPy ufuncs, libdevice and a few device functions (``strided.cuda.scalar``, which
  rebinds the ``p_<name>`` globals of a function it compiles: so a primitive is only
  ever called by that global name, never through a closure or an attribute).

A function that needs its dtype (a typed zero, an integer's width) is a *typed factory*
(``@typed``): ``fn(T)`` with T the numpy scalar type gives the function for that dtype.

Float math.  exp, log, log2, log10 and log1p of f32 and f64, tanh and sigmoid of f32,
are branch-free polynomials of our own (``expf`` ``tanhf`` ``logf`` ``expd`` ``logd`` ...;
f32 exp and tanh after Cephes' expf and tanhf) that LLVM vectorises, where a libm call per
element keeps the loop scalar (numba's SVML route is not available; f64 sigmoid takes
the new exp too; docs/benchmarks.md has the timings).  exp and the logs stay within
1 ulp of the correctly rounded result: the tests sweep every exponent with random
significands and the special values, and measured f32 log 0.82 ulp, log2 0.64, log10
0.62, log1p 0.5; f64 exp 0.69, log 0.82, log2 0.80, log10 0.67, log1p 0.79 (a subnormal
exp within one step).  tanh stays within 1.3 ulp and sigmoid within 2.3 (f32).  So where
libm's result was correctly rounded ours may differ from it, and from NumPy's, by 1 ulp.
Zeros (and log1p's signed zeros), negatives, infinities, NaN, overflow and underflow give
NumPy's results; log2 of a power of 2 and log10 of an exact power of 10 are exact.
f32 sin and cos (``sinf``, ``cosf``) reduce their argument exactly over the whole f32
range and compute in f64, rounded once: within 0.51 ulp (NumPy's own f32 sin and cos reach
1.5); f32 expm1 (``expm1_real``) is f64 ``expd`` less 1, or the series where that would
cancel, rounded once: within 0.51 ulp (NumPy's 2.5).  So are f32 tan, atan, asin, acos,
sinh, cosh, asinh, acosh, atanh, pow, atan2, hypot and logaddexp, written with those f64
pieces and an arctangent of our own in forms that do not cancel, with C99's special
values (docs/benchmarks.md has NumPy's errors beside them).  f64 expm1, tanh, sinh, cosh,
atan, asin, acos, atan2, hypot, asinh, acosh and atanh (``tanhd``, ``atan_real`` ...) keep
their steps as hi + lo sums, so that one rounding counts: within 0.8 ulp (0.9 for the last
three, log1p's).  f64 sin, cos and tan reduce their argument exactly over the whole
range, with a table of 2/pi as f32's do: within 0.75 ulp (tan 0.9).  f64 pow is
exp(y log|x|) with log|x| and the product kept as hi + lo (``exp_sum``): within 0.8 ulp.
The CPU compiles all these (``portable``'s ``cpu`` forms, one per dtype), device code
calls its own.  Complex numbers, f64 logaddexp and the rest call the primitives.  exp's
last step, p 2^n rounded once (``scale2f``, ``scale2d``), is the other place the CPU
compiles another form than device code: one vscalef on an AVX-512 target, the same bits.

Complex cosh, sinh, tanh, expm1, acos, acosh, asinh and atanh follow the standard's
special-case tables (C99 Annex G) where a part is infinite or NaN (``regular`` is False);
finite input computes with the primitive.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import caches
from ..core import threads as _threads  # noqa: F401  (before numba)

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

__all__ = ["PORTABLE", "PRIMITIVES", "typed", "is_typed", "instance", "portable"]

PORTABLE: dict = {}  # name -> function: what a backend compiles along with an op's scalar
_TYPED = set()


def portable(fn=None, *, contract: bool = False, cpu=None):
    """Register ``fn`` for numba's CPU target (it stays a Python function) and list it in
    ``PORTABLE``.  ``contract`` lets LLVM fuse a*b+c into one FMA (one rounding instead of
    two, never less accurate): the polynomials' dependency chains get shorter.  ``cpu``: a
    jitable function of the same values that the CPU target compiles in ``fn``'s place (a
    faster form only this CPU has), or a dict of them by the first argument's numba type
    (``{types.float32: ..., types.float64: ...}``); device code still compiles ``fn``."""
    def wrap(f):
        opts = {"error_model": "numpy"}
        if contract:
            opts["fastmath"] = {"contract"}
        if cpu is None:
            register_jitable(**opts)(f)
        else:
            forms = cpu if isinstance(cpu, dict) else None
            # inlined as numba IR: LLVM's inliner leaves a large body a call, which keeps a loop scalar
            overload(f, jit_options=opts, strict=False, inline="always")(
                (lambda *args: forms.get(args[0])) if forms else (lambda *args: cpu))
        PORTABLE[f.__name__] = f
        return f

    return wrap(fn) if fn is not None else wrap


def typed(factory):
    """Mark ``factory(T) -> function`` (T a numpy scalar type) as a typed factory."""
    _TYPED.add(factory)
    PORTABLE[factory.__name__] = factory
    return factory


def is_typed(fn) -> bool:
    return fn in _TYPED


_INSTANCES = caches.table("scalar.instances", "definition, numpy scalar type")


def instance(fn, T=None):
    """A definition as numba's CPU target calls it: a primitive's name gives the CPU's
    binding, a typed factory its function for the numpy scalar type ``T``, a plain function
    itself; each registered for the CPU target once."""
    if isinstance(fn, str):
        return PRIMITIVES[fn]
    key = (fn, T) if fn in _TYPED else (fn, None)
    got = _INSTANCES.get(key)
    if got is None:
        if fn in _TYPED:
            got = fn(T)
            got.__name__ = got.__qualname__ = f"{fn.__name__}_{np.dtype(T).name}"
        else:
            got = fn
        if got.__name__ not in PORTABLE or PORTABLE[got.__name__] is not got:
            register_jitable(error_model="numpy")(got)
        got = _INSTANCES[key] = got
    return got


# -- primitives: the CPU's bindings ---------------------------------------------------------
# Each ``p_<name>`` is one function of one kind of argument, referenced by its global name
# only (never closed over), so that strided.cuda.scalar can bind the same names for the
# device.  Real ones get f32 or f64 (f32 computes in f32), complex ones c64 or c128.
p_sqrt, p_sin, p_cos, p_tan, p_tanh = np.sqrt, np.sin, np.cos, np.tan, np.tanh
p_acos, p_asin, p_atan, p_acosh, p_asinh, p_atanh = np.arccos, np.arcsin, np.arctan, np.arccosh, np.arcsinh, \
    np.arctanh
p_cosh, p_sinh, p_expm1, p_fabs = np.cosh, np.sinh, np.expm1, np.fabs
p_ceil, p_floor, p_trunc, p_rint = np.ceil, np.floor, np.trunc, np.rint
p_atan2, p_hypot, p_copysign, p_logaddexp, p_nextafter = np.arctan2, np.hypot, np.copysign, np.logaddexp, \
    np.nextafter
p_cexp, p_clog, p_csqrt, p_csin, p_ccos, p_ctan, p_ctanh = np.exp, np.log, np.sqrt, np.sin, np.cos, np.tan, np.tanh
p_cacos, p_casin, p_catan, p_cacosh, p_casinh, p_catanh = np.arccos, np.arcsin, np.arctan, np.arccosh, \
    np.arcsinh, np.arctanh
p_ccosh, p_csinh, p_cexpm1, p_clog1p, p_clog2, p_clog10 = np.cosh, np.sinh, np.expm1, np.log1p, np.log2, np.log10


# Python's // and % on floats, under numba's numpy error model on the CPU (a zero divisor
# gives NumPy's inf or NaN); CUDA binds guarded forms.
@portable
def p_ffloordiv(x, y):
    return x // y


@portable
def p_fmod(x, y):
    return x % y


PRIMITIVES = {k[2:]: v for k, v in dict(globals()).items() if k.startswith("p_")}


# -- bit views ----------------------------------------------------------------------------
@portable
def f32_bits(x):
    return np.float32(x).view(np.int32)


@portable
def f32_from_bits(i):
    return np.int32(i).view(np.float32)


@portable
def f64_bits(x):
    return np.float64(x).view(np.int64)


@portable
def f64_from_bits(i):
    return np.int64(i).view(np.float64)


# -- f32 exp and tanh ---------------------------------------------------------------------
F32 = np.float32
LOG2E = F32(1.4426950408889634)
LN2_HI = F32(0.693359375)  # few significant bits, so n * LN2_HI is exact
LN2_LO = F32(-2.12194440e-4)
EP0, EP1, EP2 = F32(1.9875691500e-4), F32(1.3981999507e-3), F32(8.3334519073e-3)
EP3, EP4, EP5 = F32(4.1665795894e-2), F32(1.6666665459e-1), F32(5.0000001201e-1)
EXP_HI = F32(88.8)  # above ln(FLT_MAX): 2^128 overflows to inf by itself
EXP_LO = F32(-110.0)  # below -103.97 exp(x) < 2^-150 rounds to 0; 2^(n + 64) stays normal
TWO23 = F32(8388608.0)
TWO_M64 = F32(2.0**-64)
TP0, TP1, TP2 = F32(-5.70498872745e-3), F32(2.06390887954e-2), F32(-5.37397155531e-2)
TP3, TP4 = F32(1.33314422036e-1), F32(-3.33332819422e-1)


@intrinsic
def _ldexp(typingctx, x, n):
    """x 2^n rounded once, for a float x and an int32 n: LLVM's ldexp, which an AVX-512
    CPU computes for a whole vector in one instruction (vscalef); elsewhere LLVM calls libm
    per element, so only an AVX-512 target binds it (``scale2f``)."""
    if not isinstance(x, types.Float) or n != types.int32:
        return None

    def codegen(context, builder, signature, args):
        ty = context.get_value_type(x)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ty, [ty, ir.IntType(32)]),
                                            f"llvm.ldexp.f{x.bitwidth}.i32")
        return builder.call(fn, args)

    return x(x, types.int32), codegen


@intrinsic
def _select(typingctx, cond, a, b):
    """a if cond else b, as one select: a function inlined as numba IR must not branch
    (numba's inliner warns about the variables of a conditional expression)."""
    if not isinstance(cond, types.Boolean) or a != b:
        return None

    def codegen(context, builder, signature, args):
        return builder.select(args[0], args[1], args[2])

    return a(cond, a, b), codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """a b + c rounded once (LLVM's fma: one instruction per vector on an FMA CPU), whatever
    fastmath flags the function it is inlined into compiles with."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        ty = context.get_value_type(a)
        fnty = ir.FunctionType(ty, [ty, ty, ty])
        return builder.call(cgutils.get_or_insert_function(builder.module, fnty, f"llvm.fma.f{a.bitwidth}"), args)

    return a(a, a, a), codegen


@register_jitable
def _scale2_vscalef(p, z):
    return _ldexp(p, np.int32(z))


_SCALE2_CPU = _scale2_vscalef if _threads.compiles_avx512() else None


@portable(contract=True, cpu=_SCALE2_CPU)
def scale2f(p, z):
    """p 2^z rounded once, for an f32 p in [0.5, 2] and an integral f32 z in [-160, 129].

    z lies beyond a normal f32's exponent at both ends, so 2^z is applied in two factors,
    2^(z-k) from the exponent bits and then 2^k, with k = -64 for a negative z and 1
    otherwise: p 2^(z-k) is exact, so the result is rounded once, by the last
    multiplication, down in the subnormal range too.  (The same bits as halving z into two
    exponents, in fewer vector instructions.)  An AVX-512 CPU compiles one vscalef instead."""
    neg = z < F32(0.0)
    k = F32(-64.0) if neg else F32(1.0)
    scale = f32_from_bits(np.int32((z - k) * TWO23 + F32(127.0 * 8388608.0)))
    return p * scale * (TWO_M64 if neg else F32(2.0))


@portable(contract=True)
def expf(x):
    """Cephes expf, branch free: exp(r) * 2^n with n = round(x / ln 2).

    n lies in [-159, 128] after the clamps, and ``scale2f`` applies 2^n with one rounding,
    down in the subnormal range too; below -103.97 the result rounds to 0 by itself, and
    above ln(FLT_MAX) it overflows to inf.  The clamps are written so that a NaN passes
    through them (and poisons p).  floor is the
    primitive ``p_floor`` (np.floor on the CPU): numba-cuda compiles no np.floor on
    scalars and its math.floor returns an int, so CUDA binds a floor that keeps the f32
    (or f64, for expd) of its own."""
    xc = EXP_HI if EXP_HI < x else x
    xc = EXP_LO if EXP_LO > xc else xc
    z = p_floor(xc * LOG2E + F32(0.5))
    r = xc - z * LN2_HI - z * LN2_LO
    p = (((((EP0 * r + EP1) * r + EP2) * r + EP3) * r + EP4) * r + EP5) * (r * r) + r + F32(1.0)
    return scale2f(p, z)


@portable(contract=True)
def tanhf(x):
    """Cephes tanhf: an odd polynomial below 0.625, 1 - 2/(e^2|x| + 1) above."""
    ax = abs(x)
    e = expf(ax + ax)
    big = F32(1.0) - F32(2.0) / (e + F32(1.0))
    big = -big if x < F32(0.0) else big
    z = x * x
    small = ((((TP0 * z + TP1) * z + TP2) * z + TP3) * z + TP4) * z * x + x
    return big if ax > F32(0.625) else small


# -- f32 sin and cos ------------------------------------------------------------------------
# An f32's sine and cosine are computed in f64 and rounded once.  |x| = (j + f) pi/2 with j an
# integer, whose last two bits pick the quadrant, and |f| <= 1/2.  Below 2^24, j pi/2 comes off
# in three parts of pi/2 (Cody and Waite), j times each of the first two exact.  From 2^24 on,
# |x| = m 2^k with m a 24-bit integer, and |x| 2/pi mod 4 = m ((2^k 2/pi) mod 4) mod 4: a
# table holds (2^k 2/pi) mod 4 for every k an f32 reaches, in two f64s of 52 bits at fixed
# places.  m times the first is split by an fma into its rounded value, taken mod 4 exactly,
# and its exact error; m times the second is small enough for one rounding, and f keeps
# about 75 bits below the point (no f32 from 2^24 on comes within 2^-30 of a quadrant of a
# multiple of pi/2: 16367173 2^72 comes nearest, found by search).
# Both ways are computed for every element and one is selected: a loop of them vectorises.
def _pi_scaled(bits: int) -> int:
    """pi 2^bits, rounded down: Machin's formula on integers."""
    guard = bits + 24

    def atan_inv(n):  # atan(1/n) 2^guard, by its series
        total = term = (1 << guard) // n
        k, n2 = 1, n * n
        while term:
            term //= n2
            total += (-1) ** k * (term // (2 * k + 1))
            k += 1
        return total

    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> (guard - bits)


def _two_over_pi_table(kmin: int, kmax: int, count: int) -> np.ndarray:
    """Row k - kmin: (2^k 2/pi) mod 4 in ``count`` f64s of 52 bits at fixed places, the
    first holding the bits of weight 2^1 down to 2^-50, the next 2^-51 to 2^-102, ..."""
    bits = kmax + 52 * count + 64
    two_over_pi = (1 << (2 * bits + 1)) // _pi_scaled(bits)  # 2/pi 2^bits
    table = np.empty((kmax - kmin + 1, count))
    for k in range(kmin, kmax + 1):
        c = ((two_over_pi << k) if k >= 0 else (two_over_pi >> -k)) & ((1 << (bits + 2)) - 1)
        for i in range(count):
            low = 2 - 52 * (i + 1)  # chunk i: the bits of weight 2^(1 - 52 i) down to 2^low
            table[k - kmin, i] = float((c >> (bits + low)) & ((1 << 52) - 1)) * 2.0**low
    return table


TRIG_TABLE = _two_over_pi_table(0, 104, 2)
TRIG_SMALL = 2.0**24
TWO_OVER_PI = 0.6366197723675814
PIO2_1, PIO2_2, PIO2_3 = 1.570796325802803, 9.920935739593517e-10, 5.721188726109832e-18  # 29, 29, 53 bits
SC1, SC2, SC3, SC4, SC5 = -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800  # Taylor: 1e-11 on |r| <= pi/4
CC1, CC2, CC3, CC4, CC5 = -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800


@njit(error_model="numpy", inline="always")  # inlined: a call keeps a loop scalar
def _sin_cos_parts(x):
    """(quadrant, sin r, cos r) for an f32 x: |x| = (quadrant + 4n) pi/2 + r, the quadrant
    an f64 (an integer one keeps the loop scalar).  Inlined as numba IR, so the products
    that must be fused are written as such (``_fma``)."""
    ax = abs(x)
    a = np.float64(ax)
    small = _select(a < TRIG_SMALL, a, TRIG_SMALL)
    j = np.floor(_fma(small, TWO_OVER_PI, 0.5))
    r = _fma(-j, PIO2_3, _fma(-j, PIO2_2, _fma(-j, PIO2_1, small)))
    bits = f32_bits(ax)
    m = np.float64((bits & 0x7FFFFF) | 0x800000)
    k = min(max(((bits >> 23) & 0xFF) - 150, 0), 104)
    hi = TRIG_TABLE[k, 0]
    p = m * hi
    e = _fma(m, hi, -p)  # m hi = p + e exactly
    p = _fma(-4.0, np.floor(p * 0.25), p)
    jl = np.floor(p + e + 0.5)
    f = _fma(m, TRIG_TABLE[k, 1], (p - jl) + e)
    big = a >= TRIG_SMALL
    j = _select(big, jl, j)
    r = _select(big, f * (math.pi / 2), r)
    z = r * r
    s = _fma(r * z, _fma(_fma(_fma(_fma(SC5, z, SC4), z, SC3), z, SC2), z, SC1), r)
    c = _fma(z, _fma(_fma(_fma(_fma(CC5, z, CC4), z, CC3), z, CC2), z, CC1), 1.0)
    return j - 4.0 * np.floor(j * 0.25), s, c


@njit(error_model="numpy", inline="always")
def _in_quadrant(q, s, c):
    """sin(q pi/2 + r) from sin r and cos r, for q in 0..4 (4 is 0)."""
    v = _select((q == 1.0) | (q == 3.0), c, s)
    return _select((q == 2.0) | (q == 3.0), -v, v)


@register_jitable(error_model="numpy")
def _sinf_cpu(x):
    q, s, c = _sin_cos_parts(x)
    v = _in_quadrant(q, s, c)
    v = _select(f32_bits(x) < 0, -v, v)  # sin(-0.0) is -0.0
    return _select(abs(x) < np.inf, np.float32(v), x - x)


@register_jitable(error_model="numpy")
def _cosf_cpu(x):
    q, s, c = _sin_cos_parts(x)
    return _select(abs(x) < np.inf, np.float32(_in_quadrant(q + 1.0, s, c)), x - x)


# -- f32 logs -------------------------------------------------------------------------------
# log(x) = e ln 2 + log(1 + f) with x = (1 + f) 2^e, 1 + f in [sqrt(1/2), sqrt(2)), read from
# the bits: adding (1.0's bits - sqrt(1/2)'s) carries into the exponent exactly when the
# significand is at least sqrt(2).  With s = f / (2 + f), log(1 + f) = 2 atanh(s)
# = f - f^2/2 + s (f^2/2 + R(s^2)), R(z) = 2z/3 + 2z^2/5 + ...; only the small last term
# carries the rounding of s.  The R coefficients are least-squares fits at Chebyshev nodes
# (relative weight) of R(z)/z on 0 <= z <= (3 - 2 sqrt 2)^2 * 1.01.
LOGF_SHIFT = np.int32(0x3F800000 - 0x3F3504F3)
SQRT_HALF_F32 = np.int32(0x3F3504F3)
MANT_F32 = np.int32(0x007FFFFF)
TINY_F32 = F32(2.0**-126)
LF0, LF1, LF2 = F32(0.66666687), F32(0.39988565), F32(0.2958982)
F32_NAN, F32_INF = F32(np.nan), F32(np.inf)


@portable(contract=True)
def logf_parts(x):
    """e, f, f^2/2 and the small term t of log(x) = e ln 2 + f - f^2/2 + t, for a
    positive finite x (subnormals are scaled by 2^23 first)."""
    sub = x < TINY_F32
    xs = x * TWO23 if sub else x
    ix = np.int32(f32_bits(xs) + LOGF_SHIFT)
    e = F32(np.int32(ix >> 23)) - (F32(150.0) if sub else F32(127.0))
    f = f32_from_bits(np.int32((ix & MANT_F32) + SQRT_HALF_F32)) - F32(1.0)
    s = f / (F32(2.0) + f)
    z = s * s
    hf = F32(0.5) * f * f
    return e, f, hf, s * (hf + ((LF2 * z + LF1) * z + LF0) * z)


@portable(contract=True)
def logf_special(x, r):
    """r, or NumPy's log at 0 (-inf), below 0 (NaN), at inf and at NaN, branch free."""
    r = -F32_INF if x == F32(0.0) else r
    r = F32_NAN if x < F32(0.0) else r
    return r if x < F32_INF else x


@portable(contract=True)
def logf(x):
    """log of an f32, branch free.  e ln 2 is added in two parts, ln 2's high part with few
    bits so e * LN2_HI is exact; for |e| <= 1 the sum e * LN2_HI + f is exact too, so it
    goes first there, and last elsewhere, where the result is large beside f's rounding."""
    e, f, hf, t = logf_parts(x)
    t = t + e * LN2_LO
    near = (e * LN2_HI + f) - (hf - t)
    far = e * LN2_HI + (f - (hf - t))
    return logf_special(x, near if abs(e) <= F32(1.0) else far)


@portable(contract=True)
def log_basef(x, per_e, per_ln):
    """log2 or log10 of an f32: e * per_e + log(1 + f) * per_ln summed in f64, where
    f - f^2/2 is exact, so that the one rounding that matters is the last, to f32."""
    e, f, hf, t = logf_parts(x)
    fd = np.float64(f)
    y = (fd - 0.5 * fd * fd) + np.float64(t)
    return logf_special(x, F32(np.float64(e) * per_e + y * per_ln))


# -- f64 exp and logs -------------------------------------------------------------------------
LOG2E_F64 = 1.4426950408889634
LOG10E_F64 = 0.4342944819032518
LOG10_2_F64 = 0.3010299956639812
LN2_HI_F64 = 0.6931471803691238  # ln 2 to 32 bits: n * LN2_HI_F64 is exact for |n| < 2^21
LN2_LO_F64 = 1.9082149292705877e-10
TWO52 = 4503599627370496.0
# 2^52 + 1023: adding a small integer n puts n + 1023 in the low bits (the biased exponent)
EXP_BIAS_F64 = TWO52 + 1023.0
EXP_HI_F64 = 710.0  # above ln(DBL_MAX) = 709.78: 2^1024 overflows by itself
EXP_LO_F64 = -746.0  # below -745.13 exp(x) < 2^-1075 rounds to 0; 2^-538 * 2^-538 stays representable
# exp(r) = 1 + r + r^2 Q(r): a least-squares fit at Chebyshev nodes (relative weight) of Q
# on |r| <= ln(2)/2 + 1e-3, 2.3e-16 relative (Q's share of exp(r) is below 0.07)
ED0, ED1, ED2, ED3, ED4 = 0.5000000000000001, 0.1666666666666664, 0.0416666666666234, 0.008333333333360707, \
    0.001388888891759593
ED5, ED6, ED7, ED8, ED9 = 0.00019841269771791754, 2.480152068246191e-05, 2.7557369088823155e-06, \
    2.7620387012612057e-07, 2.5063406372807858e-08


@portable(contract=True)
def pow2_f64(n):
    """2^n for an integral f64 n in [-1022, 1023], through the exponent bits (no int64 to
    f64 conversion, which AVX2 lacks)."""
    return f64_from_bits(f64_bits(n + EXP_BIAS_F64) << 52)


@portable(contract=True, cpu=_SCALE2_CPU)
def scale2d(p, n):
    """p 2^n rounded once, for an f64 p in [0.5, 2] and an integral f64 n in [-1076, 1025]:
    2^n in two halves, each a normal f64, the first product exact (as ``scale2f``)."""
    n1 = p_floor(n * 0.5)
    return p * pow2_f64(n1) * pow2_f64(n - n1)


@portable(contract=True)
def exp_reduced(x):
    """(n, r, c, t) with exp(x) = 2^n (1 + r + c + t) to 2^-60: n = round(x / ln 2),
    r = x - n ln 2 rounded (ln 2 in two parts, Cody and Waite), c its rounding, t = r^2 Q(r)."""
    xc = EXP_HI_F64 if EXP_HI_F64 < x else x
    xc = EXP_LO_F64 if EXP_LO_F64 > xc else xc
    n = p_floor(xc * LOG2E_F64 + 0.5)
    rh = xc - n * LN2_HI_F64
    r = rh - n * LN2_LO_F64
    c = (rh - r) - n * LN2_LO_F64
    q = (((((((((ED9 * r + ED8) * r + ED7) * r + ED6) * r + ED5) * r + ED4) * r + ED3) * r + ED2) * r
          + ED1) * r + ED0)
    return n, r, c, (r * r) * q


@portable(contract=True)
def expd(x):
    """exp of an f64, branch free, as expf: 2^n applied by ``scale2d``, so that a subnormal
    result is rounded once."""
    n, r, c, t = exp_reduced(x)
    hi = 1.0 + r
    return scale2d(hi + ((((1.0 - hi) + r) + c * hi) + t), n)  # 1 + r's rounding added back


@portable(contract=True)
def exp_sum(x, lo):
    """exp(x + lo) for an f64 x and a lo up to 2^-40 |x| or so (an exponent kept as hi + lo):
    expd's sum plus lo exp(r)."""
    n, r, c, t = exp_reduced(x)
    hi = 1.0 + r
    return scale2d(hi + (((((1.0 - hi) + r) + c * hi) + t) + lo * (hi + t)), n)


EXPM1_SMALL = 1e-3  # below, exp(x) - 1 would cancel: the series, to x^5 (x^6/720 is 1e-18 x)


@register_jitable(error_model="numpy")
def _expm1f_cpu(x):
    a = np.float64(x)
    p = a + a * a * (0.5 + a * (1 / 6 + a * (1 / 24 + a * (1 / 120))))
    v = _select(abs(a) < EXPM1_SMALL, p, expd(a) - 1.0)
    return _select(x != 0, np.float32(v), x)  # -0.0 stays -0.0


# -- f64 expm1, tanh, sinh and cosh -----------------------------------------------------------
# expm1(x) = 2^n (1 + expm1(r)) - 1, r = x - n ln 2, |r| <= ln(2)/2, with every step kept as
# a sum hi + lo (the error-free sums of Dekker and Knuth), so only the last addition rounds.
# expm1(r) = r + r^2/2 + r^3 P(r): a least-squares fit at Chebyshev nodes (relative weight)
# of P on |r| <= 1.01 ln(2)/2, 7e-18 relative.
EM0, EM1, EM2, EM3, EM4 = 0.16666666666666685, 0.04166666666666696, 0.008333333333313759, \
    0.0013888888888703684, 0.00019841269907568872
EM5, EM6, EM7, EM8, EM9 = 2.480158779015923e-05, 2.7557221075494863e-06, 2.755679289757005e-07, \
    2.51176180760462e-08, 2.1087451972491136e-09
EXPM1_LO_F64 = -45.0  # below, expm1(x) rounds to -1 (2^n + ... - 1 with n <= -64)
EXPM1_HI_F64 = 711.0  # above, expm1 and sinh and cosh overflow (sinh from 710.48)


@njit(error_model="numpy", inline="always")
def _two_sum(a, b):
    """(s, e) with s = a + b rounded and a + b = s + e exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(error_model="numpy", inline="always")
def _fast_two_sum(a, b):
    """(s, e) as ``_two_sum`` gives them, where |a| >= |b| (Dekker)."""
    s = a + b
    return s, b - (s - a)


@njit(error_model="numpy", inline="always")
def _expm1d_parts(x):
    """(hi, lo, f): expm1(x) = (hi + lo) f, hi rounded and lo the rest, to 2^-58 of hi; a
    NaN passes through.  f is 1, or 2^8 from n = 1000 on (where the 1 taken off is far below
    an ulp), so that hi stays finite up to the overflow of what is made of it."""
    xc = _select(x < EXPM1_LO_F64, EXPM1_LO_F64, _select(x > EXPM1_HI_F64, EXPM1_HI_F64, x))
    n = np.floor(xc * LOG2E_F64 + 0.5)
    rh = xc - n * LN2_HI_F64
    r = rh - n * LN2_LO_F64
    c = (rh - r) - n * LN2_LO_F64  # the rounding of r
    h = 0.5 * r
    hr = h * r
    s, es = _two_sum(r, hr)
    p = (((((((((EM9 * r + EM8) * r + EM7) * r + EM6) * r + EM5) * r + EM4) * r + EM3) * r + EM2) * r + EM1) * r
         + EM0)
    tail = ((es + _fma(h, r, -hr)) + r * r * r * p) + c * (1.0 + r)  # expm1(r + c) = expm1(r) + c e^r
    k = _select(n >= 1000.0, 8.0, 0.0)
    two = pow2_f64(n - k)
    big, ebig = _two_sum(two, -1.0)  # 2^n - 1
    top, etop = _two_sum(big, two * s)
    rest = etop + (ebig + two * tail)
    hi = top + rest
    return hi, rest - (hi - top), pow2_f64(k)  # |top| >= |rest|


@register_jitable(error_model="numpy")
def _expm1d_cpu(x):
    hi, lo, f = _expm1d_parts(x)
    return _select(x == 0.0, x, hi * f)  # -0.0 stays -0.0


@register_jitable(error_model="numpy")
def _tanhd_cpu(x):
    """tanh |x| = -t / (2 + t) for t = expm1(-2|x|) in (-1, 0], the quotient of two
    hi + lo sums taken to one rounding (a correction from the first quotient's residual);
    from |x| = 22.5 on, t is -1 and tanh 1."""
    a = abs(x)
    th, tl, f = _expm1d_parts(-2.0 * a)  # f is 1
    dh, dl = _two_sum(2.0, th)
    dl = dl + tl
    q = -th / dh
    res = _fma(-q, dh, -th)  # -th - q dh, exactly
    v = q + ((res - tl) - q * dl) / dh
    return _select(x < 0.0, -v, _select(x == 0.0, x, v))


@register_jitable(error_model="numpy")
def _sinhd_cpu(x):
    """(E + E / (E + 1)) / 2 for E = expm1(|x|), the quotient taken to one rounding as in
    tanh: no term cancels."""
    a = abs(x)
    hi, lo, f = _expm1d_parts(a)
    dh, dl = _two_sum(1.0, hi)
    dl = dl + lo
    q = hi / dh
    ql = ((_fma(-q, dh, hi) + lo) - q * dl) / dh
    s, es = _two_sum(hi, q)
    v = (0.5 * f) * (s + ((es + lo) + ql))
    return _select(x < 0.0, -v, _select(x == 0.0, x, v))


@register_jitable(error_model="numpy")
def _coshd_cpu(x):
    """(D + 1 / D) / 2 for D = 1 + expm1(|x|), the reciprocal taken to one rounding."""
    hi, lo, f = _expm1d_parts(abs(x))
    dh, dl = _two_sum(1.0, hi)
    dl = dl + lo
    r = 1.0 / dh
    rl = (_fma(-r, dh, 1.0) - r * dl) * r
    s, es = _two_sum(dh, r)
    return (0.5 * f) * (s + ((es + dl) + rl))


@portable(cpu=_tanhd_cpu)
def tanhd(x):
    return p_tanh(x)


LOGD_SHIFT = np.int64(0x3FF0000000000000 - 0x3FE6A09E667F3BCD)
SQRT_HALF_F64 = np.int64(0x3FE6A09E667F3BCD)
MANT_F64 = np.int64(0x000FFFFFFFFFFFFF)
EXP_FIELD = np.int64(0xFFF)  # the shifted exponent may carry into the sign bit
MAGIC_F64 = np.int64(0x4330000000000000)  # 2^52's bits: or-ing in an integer below 2^52 adds it
TINY_F64 = 2.0**-1022
# R(z)/z on 0 <= z <= (3 - 2 sqrt 2)^2 * 1.01, fitted as for f32: 5.3e-16 relative
LD0, LD1, LD2, LD3 = 0.666666666666667, 0.39999999999893404, 0.2857142862874013, 0.22222210684424645
LD4, LD5, LD6 = 0.18182921851937323, 0.15330637106265735, 0.1462980919758996


@portable(contract=True)
def logd_parts(x):
    """e, f, f^2/2 and the small term t of log(x) = e ln 2 + f - f^2/2 + t, for a positive
    finite x (subnormals scaled by 2^52 first); the exponent becomes a float through 2^52's
    bits, since AVX2 has no vector int64 to f64 conversion."""
    sub = x < TINY_F64
    xs = x * TWO52 if sub else x
    ix = f64_bits(xs) + LOGD_SHIFT
    eb = f64_from_bits(((ix >> 52) & EXP_FIELD) | MAGIC_F64) - TWO52
    e = eb - (1023.0 + (52.0 if sub else 0.0))
    f = f64_from_bits((ix & MANT_F64) + SQRT_HALF_F64) - 1.0
    s = f / (2.0 + f)
    z = s * s
    hf = 0.5 * f * f
    R = ((((((LD6 * z + LD5) * z + LD4) * z + LD3) * z + LD2) * z + LD1) * z + LD0) * z
    return e, f, hf, s * (hf + R)


@portable(contract=True)
def logd_special(x, r):
    """r, or NumPy's log at 0 (-inf), below 0 (NaN), at inf and at NaN, branch free."""
    r = -math.inf if x == 0.0 else r
    r = math.nan if x < 0.0 else r
    return r if x < math.inf else x


@portable(contract=True)
def logd(x):
    """log of an f64, branch free, as logf."""
    e, f, hf, t = logd_parts(x)
    t = t + e * LN2_LO_F64
    near = (e * LN2_HI_F64 + f) - (hf - t)
    far = e * LN2_HI_F64 + (f - (hf - t))
    return logd_special(x, near if abs(e) <= 1.0 else far)


HIGH_21 = np.int64(-(1 << 32))  # clears an f64's 32 low significand bits
LOG2E_HI_F64, LOG2E_LO_F64 = 1.4426950407214463, 1.6751713164886512e-10
LOG10E_HI_F64, LOG10E_LO_F64 = 0.4342944818781689, 2.5082946711645275e-11
LOG10_2_HI_F64, LOG10_2_LO_F64 = 0.3010299955494702, 1.1451100898021838e-10


@portable(contract=True)
def log_based(x, e_hi, e_lo, k_hi, k_lo):
    """log2 or log10 of an f64: e (e_hi + e_lo) + log(1 + f) (k_hi + k_lo), the constants'
    high parts to 32 bits.  log(1 + f) is split too, its high part to 21 bits, so the
    two large products are exact, and the largest sum is exact with its rounding added
    back (|e e_hi| >= the other unless e is 0): the last addition is the one rounding
    that matters."""
    e, f, hf, t = logd_parts(x)
    yh = f64_from_bits(f64_bits(f - hf) & HIGH_21)
    yl = ((f - yh) - hf) + t
    a = e * e_hi
    b = yh * k_hi
    lo = (yl * (k_hi + k_lo) + yh * k_lo) + e * e_lo
    w = a + b
    return logd_special(x, w + (((a - w) + b) + lo))


@portable(contract=True)
def log1p_sum(x, lo):
    """log1p(x + lo) for an f64 x and a lo below x's ulp: log(u) for u = 1 + x rounded,
    plus c / u + lo / u for the rounding c of u (found exactly, larger operand first),
    added in with the small terms as in logd; signed zeros come back as they are."""
    u = 1.0 + x
    c = (1.0 - u) + x if abs(x) <= 1.0 else (x - u) + 1.0
    e, f, hf, t = logd_parts(u)
    iu = 1.0 / u
    cu = c * iu
    t = (t + e * LN2_LO_F64) + (cu + lo * iu)  # lo apart: c + lo would round twice where u is 1
    near = (e * LN2_HI_F64 + f) - (hf - t)
    far = e * LN2_HI_F64 + (f - (hf - t))
    r = logd_special(u, near if abs(e) <= 1.0 else far)
    return x if x == 0.0 else r


@portable(contract=True)
def log1pd(x):
    """log1p of an f64 (``log1p_sum``)."""
    return log1p_sum(x, 0.0)


@portable(contract=True)
def log1pf(x):
    """log1p of an f32: 1 + x is exact in f64 (|x| >= 2^-29 and below 2^29) and its f64 log
    rounds once more to f32; below 2^-29 the result is x (x^2/2 is under half an ulp)."""
    return x if abs(x) < F32(2.0**-29) else F32(logd(1.0 + np.float64(x)))


@portable
def log2f(x):
    return log_basef(x, 1.0, LOG2E_F64)


@portable
def log2d(x):
    return log_based(x, 1.0, 0.0, LOG2E_HI_F64, LOG2E_LO_F64)


@portable
def log10f(x):
    return log_basef(x, LOG10_2_F64, LOG10E_F64)


@portable
def log10d(x):
    return log_based(x, LOG10_2_HI_F64, LOG10_2_LO_F64, LOG10E_HI_F64, LOG10E_LO_F64)


# e^-|x| never overflows, and e / (1 + e) keeps the tiny results for very negative x
@portable
def sigmoidf(x):
    e = expf(-abs(x))
    d = F32(1.0) + e
    return F32(1.0) / d if x >= F32(0.0) else e / d


@portable
def sigmoidd(x):
    e = expd(-abs(x))
    return 1.0 / (1.0 + e) if x >= 0.0 else e / (1.0 + e)


# -- more f32 functions, computed in f64 and rounded once -------------------------------------
# Each writes its f32 function with the f64 pieces above (expd, logd, log1pd, the sine's
# reduction) and one arctangent below, in forms without cancellation, so the f64 value is
# within about 1e-12 of the exact one and the f32 rounding is the one that counts (0.5 ulp
# and a hair).  Branch free: a loop of them vectorises, where a libm call per element
# keeps it scalar.  Only the CPU compiles these forms; device code calls its primitives.
PI_2 = math.pi / 2
PI_4 = math.pi / 4
TAN_PI_8, TAN_3PI_8 = 0.41421356237309503, 2.414213562373095
# atan(u) = u + u z Q(z), z = u^2, on |u| <= tan(pi/8) * 1.005: a least-squares fit at
# Chebyshev nodes (relative weight) of Q, 9e-13 relative
AT0, AT1, AT2, AT3 = -0.3333333329084292, 0.19999993773030053, -0.14285402212617912, 0.11103619203237458
AT4, AT5, AT6 = -0.08993331880833313, 0.06975457528471056, -0.03764749899623374
SINH_SMALL = 1e-3  # below, e - 1/e would cancel: the series, to x^5 (x^7/5040 is 2e-22 x)


@njit(error_model="numpy", inline="always")
def _atan_ratio(p, q):
    """atan(p / q) in [0, pi/2] for f64 p, q >= 0 (0/0 is 0, inf/inf is pi/4): p/q is taken
    to |u| <= tan(pi/8) by one of atan(p/q) = atan(u) + 0, pi/4 (u = (p - q)/(p + q)) or
    pi/2 (u = -q/p), with one division."""
    both = (p == np.inf) & (q == np.inf)
    p = _select(both, 1.0, p)
    q = _select(both, 1.0, q)
    low = p <= q * TAN_PI_8
    high = p >= q * TAN_3PI_8
    num = _select(low, p, _select(high, -q, p - q))
    den = _select(low, q, _select(high, p, p + q))
    u = num / _select(den == 0.0, 1.0, den)
    z = u * u
    poly = (((((AT6 * z + AT5) * z + AT4) * z + AT3) * z + AT2) * z + AT1) * z + AT0
    return _select(low, 0.0, _select(high, PI_2, PI_4)) + _fma(u * z, poly, u)


@njit(error_model="numpy", inline="always")
def _with_sign_of(v, x):
    """The f32 v, negated where the f32 x has its sign bit (so -0.0 gives -0.0)."""
    return _select(f32_bits(x) < 0, -v, v)


@register_jitable(error_model="numpy")
def _atanf_cpu(x):
    return _with_sign_of(np.float32(_atan_ratio(abs(np.float64(x)), 1.0)), x)


@register_jitable(error_model="numpy")
def _asinf_cpu(x):
    a = abs(np.float64(x))
    return _with_sign_of(np.float32(_atan_ratio(a, np.sqrt((1.0 - a) * (1.0 + a)))), x)  # NaN above 1


@register_jitable(error_model="numpy")
def _acosf_cpu(x):
    a = abs(np.float64(x))
    r = _atan_ratio(np.sqrt((1.0 - a) * (1.0 + a)), a)
    return np.float32(_select(x < 0, math.pi - r, r))


@register_jitable(error_model="numpy")
def _atan2f_cpu(y, x):
    r = _atan_ratio(abs(np.float64(y)), abs(np.float64(x)))
    return _with_sign_of(np.float32(_select(f32_bits(x) < 0, math.pi - r, r)), y)  # x = -0.0 too


@register_jitable(error_model="numpy")
def _tanf_cpu(x):
    q, s, c = _sin_cos_parts(x)
    odd = (q == 1.0) | (q == 3.0)  # tan(r + pi/2) = -cos r / sin r
    v = np.float32(_select(odd, -c, s) / _select(odd, s, c))
    return _select(abs(x) < np.inf, _with_sign_of(v, x), x - x)


@register_jitable(error_model="numpy")
def _sinhf_cpu(x):
    a = abs(np.float64(x))
    e = expd(a)
    z = a * a
    v = _select(a < SINH_SMALL, _fma(a * z, 1 / 6 + z * (1 / 120), a), 0.5 * (e - 1.0 / e))
    return _with_sign_of(np.float32(v), x)


@register_jitable(error_model="numpy")
def _coshf_cpu(x):
    e = expd(abs(np.float64(x)))
    return np.float32(0.5 * (e + 1.0 / e))


@register_jitable(error_model="numpy")
def _asinhf_cpu(x):
    """log(a + sqrt(a^2 + 1)) as log1p(a + a^2 / (1 + sqrt(a^2 + 1)))."""
    a = abs(np.float64(x))
    z = a * a
    v = np.float32(log1pd(a + z / (1.0 + np.sqrt(1.0 + z))))
    return _select(abs(x) < np.inf, _with_sign_of(v, x), x)


@register_jitable(error_model="numpy")
def _acoshf_cpu(x):
    """log(x + sqrt(x^2 - 1)) as log1p(t + sqrt(t (x + 1))), t = x - 1: both exact in f64."""
    a = np.float64(x)
    t = a - 1.0
    v = log1pd(t + np.sqrt(t * (a + 1.0)))
    return np.float32(_select(a >= 1.0, v, math.nan))  # below -1, t (x + 1) is positive


@register_jitable(error_model="numpy")
def _atanhf_cpu(x):
    """log((1 + a) / (1 - a)) / 2 as log1p(2a / (1 - a)) / 2: inf at 1, NaN beyond."""
    a = abs(np.float64(x))
    return _with_sign_of(np.float32(0.5 * log1pd((a + a) / (1.0 - a))), x)


@register_jitable(error_model="numpy")
def _powf_cpu(x, y):
    """exp(y log|x|) (|y log|x|| < 104 wherever the result is a finite nonzero f32, so f64's
    relative error in it stays under 1e-13), with C99's special values: x^0 and 1^y are 1,
    NaN included, (-1)^inf is 1, a negative x to an odd integer y is negative, and to a
    non-integer y NaN; x^2 is x x, rounded once."""
    a = np.float64(x)
    b = np.float64(y)
    ax = abs(a)
    one = (a == 1.0) | (b == 0.0) | ((a == -1.0) & (abs(b) == np.inf))
    v = expd(_select(one, 0.0, b * logd(ax)))
    whole = (np.floor(b) == b) & (abs(b) < np.inf)
    odd = whole & (np.floor(b * 0.5) * 2.0 != b)
    neg = f32_bits(x) < 0
    v = _select(neg & odd, -v, v)
    v = _select(neg & ~whole & (ax > 0.0) & (ax < np.inf) & (abs(b) < np.inf), math.nan, v)
    return np.float32(_select(b == 2.0, a * a, v))


@register_jitable(error_model="numpy")
def _hypotf_cpu(x, y):
    a = np.float64(x)
    b = np.float64(y)
    v = np.float32(np.sqrt(a * a + b * b))  # the squares are exact
    return _select((abs(x) == np.inf) | (abs(y) == np.inf), np.float32(np.inf), v)  # inf with NaN too


@register_jitable(error_model="numpy")
def _logaddexpf_cpu(x, y):
    """max + log1p(exp(-|x - y|)); equal operands (two infinities of one sign) give
    max + log 2 without forming inf - inf.  Where the sum cancels (e^x + e^y within 1e-9
    of 1) its f64 error, about 1e-16, is no longer below the f32 result's ulp."""
    a = np.float64(x)
    b = np.float64(y)
    d = _select(a == b, 0.0, -abs(a - b))
    return np.float32(_select(a > b, a, b) + log1pd(expd(d)))  # a NaN reaches d


@portable(cpu=_logaddexpf_cpu)
def logaddexpf(x, y):
    return p_logaddexp(x, y)


# -- f64 atan, atan2, asin and acos ---------------------------------------------------------
# As the f32 arctangent, with the ratio, its reduction and the constant added kept as hi + lo
# sums.  atan(u) = u + u z Q(z) on |u| <= tan(pi/8) * 1.005, Q fitted by least squares at
# Chebyshev nodes (relative weight) in 60-digit arithmetic: 8e-19 relative.
ATD0, ATD1, ATD2, ATD3 = -0.33333333333333326, 0.1999999999999727, -0.14285714285340878, 0.11111111085373801
ATD4, ATD5, ATD6, ATD7 = -0.09090908047131874, 0.07692280626267475, -0.06666196137952188, 0.05876729283380654
ATD8, ATD9, ATD10, ATD11 = -0.052165625144939255, 0.044962073601732266, -0.0333065801246951, 0.015027436898381352
PI_4_LO, PI_2_LO, PI_LO = 3.061616997868383e-17, 6.123233995736766e-17, 1.2246467991473532e-16  # pi/4 - PI_4 ...
HUGE_F64, TINY_RATIO_F64 = 2.0**1000, 2.0**-900  # beyond, p and q are scaled by 2^-8 or 2^200


@njit(error_model="numpy", inline="always")
def _atan2d_parts(ph, pl, qh, ql):
    """(hi, lo): atan(p / q) = hi + lo in [0, pi/2] for p = ph + pl, q = qh + ql >= 0 (0/0 is
    0, inf/inf pi/4), hi to within 2^-60 of it before the caller's last rounding."""
    both = (ph == np.inf) & (qh == np.inf)
    ph = _select(both, 1.0, ph)
    qh = _select(both, 1.0, qh)
    m = _select(ph > qh, ph, qh)
    sc = _select(m > HUGE_F64, 2.0**-8, _select(m < TINY_RATIO_F64, 2.0**200, 1.0))  # exact, keeps p + q finite
    ph, pl, qh, ql = ph * sc, pl * sc, qh * sc, ql * sc
    low = ph <= qh * TAN_PI_8
    high = ph >= qh * TAN_3PI_8
    dif, edif = _two_sum(ph, -qh)
    tot, etot = _two_sum(ph, qh)
    nh = _select(low, ph, _select(high, -qh, dif))
    nl = _select(low, pl, _select(high, -ql, edif + (pl - ql)))
    dh = _select(low, qh, _select(high, ph, tot))
    dl = _select(low, ql, _select(high, pl, etot + (pl + ql)))
    dh = _select(dh == 0.0, 1.0, dh)
    uh = nh / dh
    ul = _select(dh < np.inf, ((_fma(-uh, dh, nh) + nl) - uh * dl) / dh, 0.0)
    z = uh * uh
    poly = (((((((((((ATD11 * z + ATD10) * z + ATD9) * z + ATD8) * z + ATD7) * z + ATD6) * z + ATD5) * z + ATD4)
                * z + ATD3) * z + ATD2) * z + ATD1) * z + ATD0)
    s, es = _two_sum(_select(low, 0.0, _select(high, PI_2, PI_4)), uh)
    ul = ul * (1.0 - z * (1.0 - z))  # atan'(u) = 1 / (1 + u^2), to z^3 < 0.006
    return s, ((es + _select(low, 0.0, _select(high, PI_2_LO, PI_4_LO))) + ul) + uh * z * poly


@njit(error_model="numpy", inline="always")
def _pi_less(hi, lo):
    """pi - (hi + lo), rounded once."""
    s, es = _two_sum(math.pi, -hi)
    return s + ((es + PI_LO) - lo)


@njit(error_model="numpy", inline="always")
def _sqrt_one_less_square(a):
    """(hi, lo) = sqrt(1 - a^2) for 0 <= a (NaN above 1): a^2 and 1 - a^2 exact as sums."""
    sq = a * a
    wh, wl = _two_sum(1.0, -sq)
    wl = wl - _fma(a, a, -sq)
    r = np.sqrt(wh)
    return r, _select(r > 0.0, (_fma(-r, r, wh) + wl) / (r + r), 0.0)


@register_jitable(error_model="numpy")
def _atand_cpu(x):
    hi, lo = _atan2d_parts(abs(x), 0.0, 1.0, 0.0)
    v = hi + lo
    return _select(x < 0.0, -v, _select(x == 0.0, x, v))


@register_jitable(error_model="numpy")
def _atan2d_cpu(y, x):
    hi, lo = _atan2d_parts(abs(y), 0.0, abs(x), 0.0)
    v = _select(f64_bits(x) < 0, _pi_less(hi, lo), hi + lo)  # x = -0.0 too
    return _select(f64_bits(y) < 0, -v, v)


@register_jitable(error_model="numpy")
def _asind_cpu(x):
    a = abs(x)
    ch, cl = _sqrt_one_less_square(a)
    hi, lo = _atan2d_parts(a, 0.0, ch, cl)
    v = hi + lo
    return _select(x < 0.0, -v, _select(x == 0.0, x, v))


@register_jitable(error_model="numpy")
def _acosd_cpu(x):
    a = abs(x)
    sh, sl = _sqrt_one_less_square(a)
    hi, lo = _atan2d_parts(sh, sl, a, 0.0)
    return _select(x < 0.0, _pi_less(hi, lo), hi + lo)


EXP_BITS_F64 = np.int64(0x7FF)


@register_jitable(error_model="numpy")
def _hypotd_cpu(x, y):
    """sqrt(x^2 + y^2) with both operands scaled by a power of 2 that takes the larger to
    [1, 2) (both exact), the squares and their sum kept as hi + lo, and the square root
    corrected by its residual: rounded once but in near-halfway cases.  inf wins over NaN."""
    a = abs(x)
    b = abs(y)
    e = (f64_bits(_select(a > b, a, b)) >> 52) & EXP_BITS_F64
    e = _select(e < 1, np.int64(1), _select(e > 2045, np.int64(2045), e))
    sc = f64_from_bits((2046 - e) << 52)  # 2^(1023 - e)
    xs = a * sc
    ys = b * sc
    s1 = xs * xs
    s2 = ys * ys
    t, et = _two_sum(s1, s2)
    lo = (et + _fma(xs, xs, -s1)) + _fma(ys, ys, -s2)
    r = np.sqrt(t)
    h = r + _select(r > 0.0, (_fma(-r, r, t) + lo) / (r + r), 0.0)
    return _select((a == np.inf) | (b == np.inf), np.inf, h * f64_from_bits(e << 52))


# -- f64 asinh, acosh and atanh: log1p of an argument kept as hi + lo -----------------------
BIG_HYP_F64 = 2.0**500  # beyond, x^2 would overflow: asinh and acosh are log(2x)


@njit(error_model="numpy", inline="always")
def _log_twice(a):
    """log(2a) for a >= 2^500 (where 2a may overflow): logd's form with e + 1."""
    e, f, hf, t = logd_parts(a)
    e = e + 1.0
    return e * LN2_HI_F64 + (f - (hf - (t + e * LN2_LO_F64)))


@njit(error_model="numpy", inline="always")
def _sqrt_sum(h, lo):
    """(hi, lo) = sqrt(h + lo) for h > 0, corrected by its residual."""
    r = np.sqrt(h)
    return r, (_fma(-r, r, h) + lo) / (r + r)


@register_jitable(error_model="numpy")
def _asinhd_cpu(x):
    """log1p(a + a^2 / (1 + sqrt(1 + a^2))), each step a hi + lo sum."""
    a = abs(x)
    sq = a * a
    w, wl = _two_sum(1.0, sq)
    r, rl = _sqrt_sum(w, wl + _fma(a, a, -sq))
    d, dl = _two_sum(1.0, r)
    q = sq / d
    ql = ((_fma(-q, d, sq) + _fma(a, a, -sq)) - q * (dl + rl)) / d
    t, tl = _two_sum(a, q)
    v = _select(a > BIG_HYP_F64, _select(a < np.inf, _log_twice(a), a), log1p_sum(t, tl + ql))
    return _select(x < 0.0, -v, _select(x == 0.0, x, v))


@register_jitable(error_model="numpy")
def _acoshd_cpu(x):
    """log1p(t + sqrt(t (x + 1))) for t = x - 1, each step a hi + lo sum; NaN below 1."""
    t, tl = _two_sum(x, -1.0)
    p, pl = _two_sum(x, 1.0)
    m = t * p
    r, rl = _sqrt_sum(_select(m > 0.0, m, 1.0), (_fma(t, p, -m) + t * pl) + tl * p)
    s, sl = _two_sum(t, _select(m > 0.0, r, 0.0))
    v = log1p_sum(s, sl + tl + _select(m > 0.0, rl, 0.0))
    v = _select(x > BIG_HYP_F64, _select(x < np.inf, _log_twice(x), x), v)
    return _select(x >= 1.0, v, math.nan)


@register_jitable(error_model="numpy")
def _atanhd_cpu(x):
    """log1p(2a / (1 - a)) / 2, the quotient a hi + lo sum: inf at 1, NaN beyond."""
    a = abs(x)
    d, dl = _two_sum(1.0, -a)
    q = (a + a) / d
    ql = _select(abs(q) < np.inf, (_fma(-q, d, a + a) - q * dl) / d, 0.0)
    v = 0.5 * log1p_sum(q, ql)
    return _select(x < 0.0, -v, _select(x == 0.0, x, v))


# -- f64 sin, cos and tan --------------------------------------------------------------------
# |x| = (j + f) pi/2 with |f| <= 1/2 (about), r = f pi/2 kept as hi + lo, reduced the same way
# over the whole range (one way only: a loop computing two and selecting one was half again
# as long).  |x| = m 2^k with m a 53-bit integer, and the table holds (2^k 2/pi) mod 4 in
# four f64s C_i of 52 bits at fixed places, for k from -79 (|x| = 2^-27; below, r = x) to
# 971.  Each m C_i is exactly p_i + e_i (an fma), p_i and e_i multiples of C_i's last place,
# so the sums below are exact where marked; each two_sum's error is at most 2^-53 of a
# partial sum, which is at most |f| + 2^-48, so the two added at the end in plain
# arithmetic cost 2^-106 |f| + 2^-152.  The doubles nearest a multiple of pi/2 leave |f|
# near 2^-62, so r keeps more than 80 good bits.  sin r and cos r are Taylor polynomials
# (to r^17 and r^18, 2^-63 on |r| <= pi/4) applied to hi, with lo's first-order term, each
# returned as a value and a tail not yet added; tan is their quotient, divided as hi + lo.
TRIG_TABLE_F64 = _two_over_pi_table(-79, 971, 4)
TRIG_TINY_F64 = 2.0**-27
PIO2_1D, PIO2_2D = 1.5707963267948966, 6.123233995736766e-17  # pi/2 to 2^-107
IMPLICIT_F64 = np.int64(0x0010000000000000)
SD3, SD5, SD7, SD9 = -1 / 6, 1 / 120, -1 / 5040, 1 / 362880
SD11, SD13, SD15, SD17 = -1 / 39916800, 1 / 6227020800, -1 / 1307674368000, 1 / 355687428096000
CD4, CD6, CD8, CD10 = 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800
CD12, CD14, CD16, CD18 = 1 / 479001600, -1 / 87178291200, 1 / 20922789888000, -1 / 6402373705728000


@njit(error_model="numpy", inline="always")
def _round_off(v):
    """(i, v - i) with i the integer nearest v (as an f64): exact."""
    i = np.floor(v + 0.5)
    return i, v - i


@njit(error_model="numpy", inline="always")
def _reduce_pio2d(a):
    """(q, rh, rl) for an f64 a >= 0: a = (q + 4n) pi/2 + rh + rl, q in 0..3 as an f64."""
    bits = f64_bits(a)
    m = np.float64((bits & MANT_F64) | IMPLICIT_F64)
    k = min(max(((bits >> 52) & 0x7FF) - 996, 0), 1050)  # a = m 2^(k - 79)
    c0, c1, c2 = TRIG_TABLE_F64[k, 0], TRIG_TABLE_F64[k, 1], TRIG_TABLE_F64[k, 2]
    p0, p1, p2 = m * c0, m * c1, m * c2
    e0, e1, e2 = _fma(m, c0, -p0), _fma(m, c1, -p1), _fma(m, c2, -p2)
    h = _fma(-4.0, np.floor(p0 * 0.25), p0) + e0  # on the grid 2^-50, below 8: exact
    h, s1 = _two_sum(h, p1)
    i1, h = _round_off(h)
    h, s2 = _two_sum(h, s1 + e1)  # on the grid 2^-102, below 2^-49: exact
    h, s3 = _two_sum(h, p2)
    i2, h = _round_off(h)
    fh, fl = _two_sum(h, (s2 + s3) + (e2 + m * TRIG_TABLE_F64[k, 3]))
    rh = fh * PIO2_1D
    rl = _fma(fh, PIO2_1D, -rh) + _fma(fh, PIO2_2D, fl * PIO2_1D)
    tiny = a < TRIG_TINY_F64
    j = _select(tiny, 0.0, i1 + i2)
    return j - 4.0 * np.floor(j * 0.25), _select(tiny, a, rh), _select(tiny, 0.0, rl)


@njit(error_model="numpy", inline="always")
def _sin_cos_d(rh, rl):
    """(s, st, c, ct): sin r = s + st and cos r = c + ct for r = rh + rl, |r| <= pi/4 (about)."""
    z = rh * rh
    ps = _fma(_fma(_fma(_fma(_fma(_fma(_fma(SD17, z, SD15), z, SD13), z, SD11), z, SD9), z, SD7), z, SD5), z, SD3)
    st = _fma(rh * z, ps, _fma(-0.5 * z, rl, rl))  # sin(rh + rl) = sin rh + rl cos rh
    pc = _fma(_fma(_fma(_fma(_fma(_fma(_fma(CD18, z, CD16), z, CD14), z, CD12), z, CD10), z, CD8), z, CD6), z, CD4)
    c, e = _two_sum(1.0, -0.5 * z)
    ct = _fma(z * z, pc, e - _fma(0.5, _fma(rh, rh, -z), rh * rl))  # cos(rh + rl) = cos rh - rl sin rh
    return rh, st, c, ct


@register_jitable(error_model="numpy")
def _sind_cpu(x):
    q, rh, rl = _reduce_pio2d(abs(x))
    s, st, c, ct = _sin_cos_d(rh, rl)
    odd = (q == 1.0) | (q == 3.0)
    v = _select(odd, c, s) + _select(odd, ct, st)
    v = _select((q == 2.0) | (q == 3.0), -v, v)
    v = _select(f64_bits(x) < 0, -v, v)  # sin(-0.0) is -0.0
    return _select(abs(x) < np.inf, v, x - x)


@register_jitable(error_model="numpy")
def _cosd_cpu(x):
    q, rh, rl = _reduce_pio2d(abs(x))
    s, st, c, ct = _sin_cos_d(rh, rl)
    odd = (q == 1.0) | (q == 3.0)  # cos(r + pi/2) = -sin r
    v = _select(odd, s, c) + _select(odd, st, ct)
    v = _select((q == 1.0) | (q == 2.0), -v, v)
    return _select(abs(x) < np.inf, v, x - x)


@register_jitable(error_model="numpy")
def _tand_cpu(x):
    q, rh, rl = _reduce_pio2d(abs(x))
    s, st, c, ct = _sin_cos_d(rh, rl)
    odd = (q == 1.0) | (q == 3.0)  # tan(r + pi/2) = -cos r / sin r
    nh, nt = _fast_two_sum(_select(odd, -c, s), _select(odd, -ct, st))
    dh, dt = _fast_two_sum(_select(odd, s, c), _select(odd, st, ct))
    inv = 1.0 / dh
    v = nh * inv
    v = _fma(_fma(-v, dh, nh) + _fma(-v, dt, nt), inv, v)
    v = _select(f64_bits(x) < 0, -v, v)
    return _select(abs(x) < np.inf, v, x - x)


# -- f64 pow ----------------------------------------------------------------------------------
# x^y = exp(y log x) needs log x to about 2^-66 (y log x reaches 745, and its error is the
# result's relative error), so log x is a sum hi + lo: x = 2^e z with z in [sqrt(1/2),
# sqrt(2)), and z's 128 bit-ranges each have a 1/c with few bits (8 or 9; 1 for the range
# holding 1), so that r = z (1/c) - 1 is exact (an fma) and below 2^-7: log x = e ln 2 +
# log c + log1p(r), log c in two parts, log1p(r) = r - r^2/2 (exact as two parts) + r^3 P(r)
# with P Taylor's to r^11.  The large terms are summed with their roundings kept, so the
# error left is about 2^-74 |log x|.  exp takes y log x as hi + lo.
def _pow_log_table() -> np.ndarray:
    """Rows (1/c, -log(1/c) high, its low part) for z's 128 bit-ranges from sqrt(1/2)."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    base = int(SQRT_HALF_F64)
    one = np.float64(1.0).view(np.int64)
    table = np.empty((128, 3))
    for i in range(128):
        lo, hi = (np.int64(base + (j << 45)).view(np.float64) for j in (i, i + 1))
        step = 2.0**-7 if (lo + hi) < 2.0 else 2.0**-8  # so that z (1/c) is exact to 2^-7
        invc = 1.0 if base + (i << 45) <= one < base + ((i + 1) << 45) else round(2.0 / (lo + hi) / step) * step
        logc = -Decimal(invc).ln()
        table[i] = invc, float(logc), float(logc - Decimal(float(logc)))
    return table


POW_LOG_TABLE = _pow_log_table()
PL3, PL4, PL5, PL6, PL7 = 1 / 3, -1 / 4, 1 / 5, -1 / 6, 1 / 7
PL8, PL9, PL10, PL11 = -1 / 8, 1 / 9, -1 / 10, 1 / 11


@njit(error_model="numpy", inline="always")
def _log_parts_d(a):
    """(hi, lo): log a = hi + lo to about 2^-74 relative, for an f64 a >= 0 (-inf at 0,
    inf at inf, NaN at NaN, lo 0 there)."""
    sub = a < TINY_F64
    ix = f64_bits(_select(sub, a * TWO52, a))
    t = ix - SQRT_HALF_F64
    i = (t >> 45) & 127
    k = t >> 52
    z = f64_from_bits(ix - (k << 52))
    e = np.float64(k) - _select(sub, 52.0, 0.0)
    r = _fma(z, POW_LOG_TABLE[i, 0], -1.0)
    ah, al = _two_sum(e * LN2_HI_F64, POW_LOG_TABLE[i, 1])
    rr = r * r
    h, l1 = _two_sum(ah, r)
    h, l2 = _two_sum(h, -0.5 * rr)
    p = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_fma(PL11, r, PL10), r, PL9), r, PL8), r, PL7), r, PL6), r, PL5), r,
                  PL4), r, PL3)
    lo = ((al + l1) + l2) + ((_fma(e, LN2_LO_F64, POW_LOG_TABLE[i, 2]) - 0.5 * _fma(r, r, -rr)) + rr * r * p)
    hi, lo = _fast_two_sum(h, lo)
    finite = (a > 0.0) & (a < np.inf)
    return _select(finite, hi, _select(a == 0.0, -np.inf, a)), _select(finite, lo, 0.0)


@register_jitable(error_model="numpy")
def _powd_cpu(x, y):
    """exp(y log|x|) with y log|x| as hi + lo, and C99's special values as ``_powf_cpu``."""
    ax = abs(x)
    lh, ll = _log_parts_d(ax)
    th = y * lh
    tl = _select(abs(th) < 1e3, _fma(y, lh, -th) + y * ll, 0.0)  # an infinite product: no error
    one = (x == 1.0) | (y == 0.0) | ((x == -1.0) & (abs(y) == np.inf))
    v = exp_sum(_select(one, 0.0, th), _select(one, 0.0, tl))
    whole = (np.floor(y) == y) & (abs(y) < np.inf)
    odd = whole & (np.floor(y * 0.5) * 2.0 != y)
    neg = f64_bits(x) < 0
    v = _select(neg & odd, -v, v)
    v = _select(neg & ~whole & (ax > 0.0) & (ax < np.inf) & (abs(y) < np.inf), math.nan, v)
    return _select(y == 2.0, x * x, v)


# -- the functions with a CPU form for f32 and one for f64 ------------------------------------
# One portable function per op: numba picks the CPU form by the argument's type.
@portable(cpu={types.float32: _sinf_cpu, types.float64: _sind_cpu})
def sin_real(x):
    return p_sin(x)


@portable(cpu={types.float32: _cosf_cpu, types.float64: _cosd_cpu})
def cos_real(x):
    return p_cos(x)


@portable(cpu={types.float32: _tanf_cpu, types.float64: _tand_cpu})
def tan_real(x):
    return p_tan(x)


@portable(cpu={types.float32: _atanf_cpu, types.float64: _atand_cpu})
def atan_real(x):
    return p_atan(x)


@portable(cpu={types.float32: _asinf_cpu, types.float64: _asind_cpu})
def asin_real(x):
    return p_asin(x)


@portable(cpu={types.float32: _acosf_cpu, types.float64: _acosd_cpu})
def acos_real(x):
    return p_acos(x)


@portable(cpu={types.float32: _atan2f_cpu, types.float64: _atan2d_cpu})
def atan2_real(y, x):
    return p_atan2(y, x)


@portable(cpu={types.float32: _sinhf_cpu, types.float64: _sinhd_cpu})
def sinh_real(x):
    return p_sinh(x)


@portable(cpu={types.float32: _coshf_cpu, types.float64: _coshd_cpu})
def cosh_real(x):
    return p_cosh(x)


@portable(cpu={types.float32: _asinhf_cpu, types.float64: _asinhd_cpu})
def asinh_real(x):
    return p_asinh(x)


@portable(cpu={types.float32: _acoshf_cpu, types.float64: _acoshd_cpu})
def acosh_real(x):
    return p_acosh(x)


@portable(cpu={types.float32: _atanhf_cpu, types.float64: _atanhd_cpu})
def atanh_real(x):
    return p_atanh(x)


@portable(cpu={types.float32: _powf_cpu, types.float64: _powd_cpu})
def pow_real(x, y):
    """x ** y; device code squares where y is 2 (as the CPU's forms do), so that a loop
    squaring by a scalar 2 runs without a call per element and rounds once."""
    return x * x if y == 2.0 else x**y


@portable(cpu={types.float32: _hypotf_cpu, types.float64: _hypotd_cpu})
def hypot_real(x, y):
    return p_hypot(x, y)


@portable(cpu={types.float32: _expm1f_cpu, types.float64: _expm1d_cpu})
def expm1_real(x):
    return p_expm1(x)


# -- complex special values -----------------------------------------------------------------
#
# numba's complex cosh, sinh, tanh, expm1 and inverse functions are textbook formulas, which
# turn an infinite or NaN part into NaN + NaN j where the standard's tables (C99 Annex G, as
# FreeBSD's msun and NumPy's npymath implement it) give exact values, such as
# tanh(+0 + NaN j) = +0 + NaN j.  An op calls its usual function when ``regular`` says so
# (both parts finite: the same bits as the primitive) and the table's branch otherwise.
# Each table works on the parts in f64 and is written for every quadrant, so the
# symmetries the standard asks for (f(conj z) = conj f(z), oddness) hold by construction;
# ``x - x`` of an infinity is how the tables make a NaN.


@portable
def regular(x):
    return math.isfinite(x.real) and math.isfinite(x.imag)


@portable
def cosh_table(a, b):
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


@portable
def sinh_table(a, b):
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


@portable
def tanh_table(a, b):
    if math.isnan(a):
        return complex(a, b if b == 0 else a * b)
    if math.isinf(a):
        # 1 + 0j with the zero's sign from b, where msun takes sin(b)cos(b)'s: the standard
        # asks for +0 at every positive finite b
        return complex(math.copysign(1.0, a), math.copysign(0.0, b))
    return complex(a if a == 0 else b - b, b - b)


@portable
def expm1_table(a, b):
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


@portable
def acos_table(a, b):
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a):
            return complex(b + b, -math.inf)
        if math.isinf(b):
            return complex(a + a, -b)
        if a == 0:
            return complex(PI_2, b + b)
        return complex(math.nan, math.nan)
    # a part is infinite: the angle of z, and an infinite imaginary part against b's sign
    return complex(abs(math.atan2(b, a)), math.inf if math.copysign(1.0, b) < 0 else -math.inf)


@portable
def acosh_table(a, b):
    if a == 0 and math.isnan(b):
        return complex(math.nan, PI_2)  # the standard's NaN + pi/2 j (msun gives NaN + NaN j)
    w = acos_table(a, b)
    rx, ry = w.real, w.imag
    if math.isnan(rx) and math.isnan(ry):
        return complex(ry, rx)
    if math.isnan(rx):
        return complex(abs(ry), rx)
    if math.isnan(ry):
        return complex(ry, ry)
    return complex(abs(ry), math.copysign(rx, b))


@portable
def asinh_table(a, b):
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a):
            return complex(a, b + b)
        if math.isinf(b):
            return complex(b, a + a)
        if b == 0:
            return complex(a + a, b)
        return complex(math.nan, math.nan)
    return complex(math.copysign(math.inf, a), math.copysign(math.atan2(abs(b), abs(a)), b))


@portable
def atanh_table(a, b):
    if a == 0:
        return complex(a, math.atan(b))
    if math.isnan(a) or math.isnan(b):
        if math.isinf(a):
            return complex(math.copysign(0.0, a), b + b)
        if math.isinf(b):
            return complex(math.copysign(0.0, a), math.copysign(PI_2, b))
        return complex(math.nan, math.nan)
    return complex(math.copysign(0.0, a), math.copysign(PI_2, b))


# The complex ops with special values: the primitive where z is regular, the table elsewhere.
@typed
def ccosh_special(T):
    def fn(x):
        return p_ccosh(x) if regular(x) else T(cosh_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def csinh_special(T):
    def fn(x):
        return p_csinh(x) if regular(x) else T(sinh_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def ctanh_special(T):
    def fn(x):
        return p_ctanh(x) if regular(x) else T(tanh_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def cexpm1_special(T):
    def fn(x):
        return p_cexpm1(x) if regular(x) else T(expm1_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def cacos_special(T):
    def fn(x):
        return p_cacos(x) if regular(x) else T(acos_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def casinh_special(T):
    def fn(x):
        return p_casinh(x) if regular(x) else T(asinh_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def catanh_special(T):
    def fn(x):
        return p_catanh(x) if regular(x) else T(atanh_table(np.float64(x.real), np.float64(x.imag)))

    return fn


@typed
def cacosh_principal(T):
    def cacosh(x):
        # the primitive's formula leaves the principal branch (real part >= 0) on the real
        # axis: below the cut's lower edge, acosh(-1.5 - 0j) came out as -0.96 + pi j for
        # 0.96 - pi j, and between -1 and 1 the real part as -1e-16.  The lower edge is the
        # conjugate of the upper one, as the standard asks; elsewhere only a negative real
        # part changes.
        if not regular(x):
            return T(acosh_table(np.float64(x.real), np.float64(x.imag)))
        if x.imag == 0 and math.copysign(1.0, x.imag) < 0:
            w = p_cacosh(x.conjugate()).conjugate()
        else:
            w = p_cacosh(x)
        return T(complex(abs(w.real), w.imag))

    return cacosh


# -- arithmetic that depends on the dtype ------------------------------------------------------
@typed
def zero_below(T):
    def relu(x):
        return T(0) if x < T(0) else x

    return relu


@portable
def abs_signed(x):
    return -x if x < 0 else x


@typed
def sign_real(T):
    def sign(x):  # 0 of either sign gives +0.0, as NumPy 2 and array_api_strict; NaN stays
        one = T(1)
        return one if x > T(0) else (-one if x < T(0) else (T(0) if x == T(0) else x))

    return sign


@typed
def sign_complex(T):
    def csign(x):  # the standard's (and NumPy 2's) z / |z|, 0 at 0
        a = abs(x)
        return T(0) if a == 0 else T(x / a)

    return csign


@typed
def div_complex(T):
    F = np.float32 if T is np.complex64 else np.float64

    def cdiv(x, y):
        # NumPy's loop (Smith's algorithm in the parts' precision), so the quotients are its
        # bits; numba's own complex division raises ZeroDivisionError on a zero divisor,
        # where NumPy gives inf or nan.
        ar, ai, br, bi = x.real, x.imag, y.real, y.imag
        abr, abi = abs(br), abs(bi)
        if abr >= abi:
            if abr == 0 and abi == 0:
                return T(complex(ar / abr, ai / abr))
            rat = bi / br
            scl = F(1.0) / (br + bi * rat)
            return T(complex((ar + ai * rat) * scl, (ai - ar * rat) * scl))
        rat = br / bi
        scl = F(1.0) / (bi + br * rat)
        return T(complex((ar * rat + ai) * scl, (ai * rat - ar) * scl))

    return cdiv


@typed
def recip_real(T):
    def recip(x):
        return T(1) / x

    return recip


@typed
def recip_complex(T):
    div = instance(div_complex, T)

    def crecip(x):
        return div(T(1), x)

    return crecip




@typed
def pow_complex(T):
    def cpow(x, y):
        # NumPy's cases at zero (numba's pow gives nan for 0 ** z with Re z > 0)
        if y == 0:
            return T(1)
        if x == 0:
            return T(0) if y.real > 0 else T(complex(np.nan, np.nan))
        return T(x**y)

    return cpow


@typed
def pow_int(T):
    def ipow(x, y):
        if y < 0:  # 1 / x^|y| truncated toward zero
            if x == 1:
                return T(1)
            if x == T(0) - T(1):
                return T(1) if (y & 1) == 0 else x
            return T(0)
        r = T(1)
        b = x
        e = y
        while e:
            if e & 1:
                r = T(r * b)
            b = T(b * b)
            e >>= 1
        return r

    return ipow


# NumPy's shifts: a count outside [0, bits) shifts every bit out, leaving 0 (left, and right
# of a non-negative value) or -1 (right of a negative one); the width comes from the type,
# so every integer dtype gets its own.
@typed
def shift_left(T):
    bits = np.iinfo(T).bits

    def shl(x, y):
        if y < 0 or y >= bits:
            return T(0)
        return T(x << y)

    return shl


@typed
def shift_right(T):
    bits = np.iinfo(T).bits

    def shr(x, y):
        if y < 0 or y >= bits:
            return T(-1) if x < 0 else T(0)
        return T(x >> y)

    return shr
