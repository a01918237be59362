"""The dtypes of the standard that strided added last: int8 int16 int32 uint16 uint64 complex64
complex128.  Promotion, casting and the inspection functions against array_api_strict (the
standard's reference) for every pair; the kernels' paths against NumPy on drawn layouts (gaps,
flips, stride-0 broadcasts, zero-size dims).

numba compiles each kernel once per dtype, so each new dtype meets a few representative ops
(one binary, one unary, one reduction, a comparison, its conversions) rather than all of them;
the conformance suite, run outside the repository, covers the rest."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import array_api_strict as xps
import strided as sd
from strided.core.dtype import as_dtype
from strategies import layouts_of_shape, np_view, shapes

NEW = ("int8", "int16", "int32", "uint16", "uint64", "complex64", "complex128")
STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
            "complex64", "complex128")
SHORT = {"int8": "i8", "int16": "i16", "int32": "i32", "uint16": "u16", "uint64": "u64", "complex64": "c64",
         "complex128": "c128"}
FEW = settings(max_examples=15)
XNAME = {getattr(xps, n): n for n in STANDARD}  # array_api_strict's dtype objects, by name


@st.composite
def tensors(draw, dtype, min_rank=0, max_rank=3, shape=None):
    """(tensor, the NumPy array it views): values spread over the dtype's range (negative ones
    for signed ints, both parts for complex) under a drawn layout of the buffer."""
    if shape is None:
        shape = draw(shapes(min_rank=min_rank, max_rank=max_rank, max_size=4, max_numel=64))
    lay, n = draw(layouts_of_shape(shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    d = np.dtype(dtype)
    if d.kind == "c":
        buf = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(d)
    elif d.kind in "iu":
        info = np.iinfo(d)
        buf = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    else:
        buf = rng.standard_normal(n).astype(d)
    t = sd.as_strided(sd.from_numpy(buf), lay.shape, lay.stride, lay.offset)
    return t, np_view(buf, lay)


def exact(got, want):
    want = np.asarray(want)
    assert isinstance(got, sd.Tensor), type(got)
    assert got.shape == want.shape and got.dtype.np == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def close(got, want, rtol):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype.np == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol, equal_nan=True)


def quiet(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


# -- names, promotion, casting, inspection (no kernels) ----------------------------------------------


def test_names_and_aliases():
    for name, short in SHORT.items():
        assert getattr(sd, name) is getattr(sd, short)
        assert np.dtype(getattr(sd, name)) == np.dtype(name)
        assert as_dtype(name) is getattr(sd, short) and as_dtype(np.dtype(name)) is getattr(sd, short)
    assert as_dtype(complex) is sd.c128 and as_dtype("c8") is sd.c64
    assert sd.c64.real is sd.f32 and sd.c128.real is sd.f64 and sd.c64.is_complex and not sd.c64.is_float
    assert set(sd.__array_namespace_info__().dtypes()) == set(STANDARD)
    assert set(sd.__array_namespace_info__().dtypes(kind="complex floating")) == {"complex64", "complex128"}


@pytest.mark.parametrize("a", STANDARD)
def test_promotion_and_casting_against_the_standard(a):
    for b in STANDARD:
        sa, sb, xa, xb = getattr(sd, a), getattr(sd, b), getattr(xps, a), getattr(xps, b)
        try:
            want = np.dtype(XNAME[xps.result_type(xa, xb)])
        except TypeError:
            want = np.result_type(sa.np, sb.np)  # a pair the standard leaves open: NumPy 2's answer
        assert sd.result_type(sa, sb).np == want, (a, b)
        assert sd.can_cast(sa, sb) == xps.can_cast(xa, xb), (a, b)
    assert sd.result_type(sd.int64, sd.uint64) is sd.float64  # NumPy 2's, the standard leaves it open


@pytest.mark.parametrize("d", ["bool", "int8", "uint16", "uint64", "float32", "float64", "complex64", "complex128"])
def test_python_scalars_follow_nep50(d):
    # NumPy 2 is the oracle for what a scalar does to a tensor's dtype (a complex one included)
    for v in (True, 3, 2.5, 1.5j):
        got = sd.result_type(getattr(sd, d), v)
        assert got.np == (np.zeros(1, d) + v).dtype, (d, v)


def test_finfo_iinfo_isdtype():
    for name in ("complex64", "complex128"):
        got, want = sd.finfo(getattr(sd, name)), xps.finfo(getattr(xps, name))
        assert (got.bits, got.eps, got.max, got.min, got.smallest_normal) == (
            want.bits, want.eps, want.max, want.min, want.smallest_normal)
        assert got.dtype.np == np.dtype(XNAME[want.dtype])
    for name in ("int8", "int16", "int32", "uint16", "uint64"):
        got, want = sd.iinfo(getattr(sd, name)), xps.iinfo(getattr(xps, name))
        assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]
    for name in NEW:
        for kind in kinds:
            assert sd.isdtype(getattr(sd, name), kind) == xps.isdtype(getattr(xps, name), kind), (name, kind)


def test_python_complex_and_scalars():
    assert sd.tensor([1 + 2j]).dtype is sd.c64  # the complex of the default float, as 0.5 gives f32
    assert sd.tensor(np.array([1 + 2j])).dtype is sd.c128 and sd.tensor([1j], dtype=sd.c128).dtype is sd.c128
    assert sd.asarray(1j).dtype is sd.__array_namespace_info__().default_dtypes()["complex floating"]
    assert complex(sd.tensor(2 - 3j)) == 2 - 3j and sd.full((2,), 1j).dtype is sd.c64
    with pytest.raises(sd.StridedError, match="complex"):
        sd.full((2,), 1j, sd.f32)
    with pytest.raises(sd.StridedError, match="out of range"):
        sd.zeros((2,), sd.i8) + 300


def test_dlpack_and_numpy_exchange():
    for name in NEW:
        a = (np.arange(6) * (1 + 1j if "complex" in name else 1)).astype(name).reshape(2, 3)[::-1]
        t = sd.from_numpy(a)
        assert t.dtype is getattr(sd, name) and np.shares_memory(t.numpy(), a)
        np.testing.assert_array_equal(np.from_dlpack(t), a)
        back = sd.from_dlpack(a)
        assert back.dtype is t.dtype
        np.testing.assert_array_equal(back.numpy(), a)


# -- copies and conversions -----------------------------------------------------------------------------


@FEW
@given(st.sampled_from(NEW).flatmap(lambda d: tensors(d)))
def test_copies_keep_every_bit(tx):
    t, a = tx
    c = t.copy()
    assert c.is_contiguous() and not sd.same_buffer(c, t)
    np.testing.assert_array_equal(np.ascontiguousarray(c.numpy()).reshape(-1).view(np.uint8),
                                  np.ascontiguousarray(a).reshape(-1).view(np.uint8))


# (source, targets): every new dtype converted to and from a few others, as NumPy's astype
CASTS = [("int8", ("float32", "uint16")), ("int16", ("float16", "int8")), ("int32", ("float64",)),
         ("uint16", ("complex64",)), ("uint64", ("float64", "int8")), ("float64", ("uint16", "complex128")),
         ("complex64", ("complex128", "bool")), ("complex128", ("complex64",))]


@FEW
@given(st.sampled_from(CASTS).flatmap(lambda c: st.tuples(tensors(c[0]), st.sampled_from(c[1]))))
def test_conversions_match_numpy_astype(case):
    (t, a), target = case
    if np.dtype(target).kind in "iu" and a.dtype.kind == "f":
        # floats inside the target's range: beyond it (negative ones for unsigned) C's cast is undefined
        if np.dtype(target).kind == "u":
            t, a = sd.abs(t), np.abs(a)
        t, a = t * 100.0, a * 100.0
    exact(sd.astype(t, getattr(sd, target)), quiet(a.astype, target))


def test_complex_to_real_is_refused():
    z = sd.tensor([1 + 2j])
    for want in (sd.f32, sd.f64, sd.i64):
        with pytest.raises(sd.StridedError, match="astype.*imaginary"):
            sd.astype(z, want)
        with pytest.raises(sd.StridedError, match="imaginary"):
            z.to_dtype(want)


# -- integer ops -------------------------------------------------------------------------------------


# One binary op, one unary, one reduction and one comparison per dtype (int16 and int32 share
# their kernels: int16 computes in int32, uint16 in uint32)
INT_CASES = [
    ("int8", "add", "negative", "sum", "less"),
    ("int16", "multiply", "abs", "max", "greater_equal"),
    ("int32", "floor_divide", "bitwise_invert", "min", "equal"),
    ("uint16", "subtract", "square", "sum", "not_equal"),
    ("uint64", "bitwise_xor", "negative", "max", "less"),
]


@FEW
@given(st.sampled_from(INT_CASES).flatmap(
    lambda c: st.tuples(st.just(c), tensors(c[0], shape=(3, 4)), tensors(c[0], shape=(4,)))))
def test_integer_ops_match_numpy(case):
    (name, binary, unary, reduction, compare), (x, a), (y, b) = case
    npf = {"add": np.add, "multiply": np.multiply, "floor_divide": np.floor_divide, "subtract": np.subtract,
           "bitwise_xor": np.bitwise_xor, "negative": np.negative, "abs": np.abs, "bitwise_invert": np.invert,
           "square": np.square, "less": np.less, "greater_equal": np.greater_equal, "equal": np.equal,
           "not_equal": np.not_equal}
    exact(getattr(sd, binary)(x, y), quiet(npf[binary], a, b))  # wraps as NumPy's, broadcast operand
    exact(getattr(sd, unary)(x), quiet(npf[unary], a))
    exact(getattr(sd, compare)(x, y), npf[compare](a, b))
    got = getattr(sd, reduction)(x, axis=0)
    # the standard's accumulator for sums (default int or uint), the dtype itself for max/min
    want = np.asarray(getattr(xps, reduction)(xps.asarray(np.ascontiguousarray(a)), axis=0))
    exact(got, want)
    if name in ("int8", "int16"):
        exact(sd.argmax(x, axis=1), np.argmax(a, axis=1))


@FEW
@given(tensors("int8", shape=(2, 3)), tensors("int16", shape=(3,)), tensors("uint64", shape=(2, 3)))
def test_mixed_integer_promotion_runs_and_matches_numpy(i8, i16, u64):
    (x, a), (y, b), (z, c) = i8, i16, u64
    exact(x + y, a + b)  # int16 results
    exact(sd.astype(x, sd.uint8) * 3, a.astype(np.uint8) * np.uint8(3))
    got = x + z  # int8 with uint64: the standard leaves it open, NumPy 2 gives float64
    assert got.dtype is sd.float64
    np.testing.assert_array_equal(got.numpy(), a + c)


def test_integer_take_and_matmul():
    a = np.arange(-60, 60, dtype=np.int8).reshape(10, 12)[::-2, 1::3]
    t = sd.from_numpy(a)
    idx = np.array([3, 0, 0, 2])
    exact(sd.take(t, sd.asarray(idx), axis=1), np.take(a, idx, axis=1))
    exact(t.index_select(sd.asarray(idx), 0), a[idx])
    exact(t @ t.mT, a @ a.T)  # int8 wraps as NumPy's does
    w = np.arange(12, dtype=np.uint16).reshape(3, 4)
    exact(sd.from_numpy(w) @ sd.from_numpy(w.T), w @ w.T)
    # a product of unsigned ints in the default uint, as array_api_strict's (and NumPy's)
    exact(sd.prod(sd.from_numpy(w[:, 1:]), axis=0), np.asarray(xps.prod(xps.asarray(w[:, 1:]), axis=0)))


# -- complex ops -------------------------------------------------------------------------------------


# Each complex dtype meets a share of the functions (numba compiles each per dtype); both meet
# the arithmetic that every path shares.
COMPLEX_CASES = [
    ("complex64", ("multiply", "conj"), ("exp", "sin", "sqrt", "acos"), ("sum",)),
    ("complex128", ("divide", "pow", "negative"), ("log", "tanh", "asinh", "sign"), ("mean", "prod")),
]
NP_FNS = {"exp": np.exp, "sin": np.sin, "sqrt": np.sqrt, "acos": np.arccos, "log": np.log, "tanh": np.tanh,
          "asinh": np.arcsinh, "sign": np.sign}


@FEW
@given(st.sampled_from(COMPLEX_CASES).flatmap(
    lambda c: st.tuples(st.just(c), tensors(c[0], shape=(3, 4)), tensors(c[0], shape=(4,)))))
def test_complex_arithmetic_and_functions_match_numpy(case):
    (name, ops, funcs, reductions), (x, a), (y, b) = case
    rtol = 1e-5 if a.dtype == np.complex64 else 1e-12
    exact(x + y, a + b)
    exact(x == y, a == b)
    if "multiply" in ops:
        close(x * y, a * b, rtol)  # NumPy's SIMD loop fuses a multiply-add: an ulp apart
    if "divide" in ops:
        exact(x / y, a / b)  # NumPy's own algorithm (Smith's), so its bits
        exact(sd.isnan(x / sd.zeros((), x.dtype)), np.isnan(quiet(np.divide, a, 0)))
    if "pow" in ops:
        close(x ** y, a ** b, 100 * rtol)
    if "negative" in ops:
        exact(-x, -a)
    if "conj" in ops:
        exact(sd.conj(x), np.conj(a))
    for f in funcs:
        close(getattr(sd, f)(x), quiet(NP_FNS[f], a), 10 * rtol)
    close(sd.abs(x), np.abs(a), rtol)  # real, of the parts' precision
    exact(sd.real(x), a.real.copy())
    exact(sd.imag(x), a.imag.copy())
    exact(sd.isfinite(x), np.isfinite(a))
    for r in reductions:
        close(getattr(sd, r)(x, axis=0), getattr(np, r)(a, axis=0), 10 * rtol)


def test_complex_take_matmul_and_promotion():
    a = (np.arange(12) + 1j * np.arange(12)[::-1]).reshape(3, 4)
    t = sd.from_numpy(a)
    idx = np.array([1, 1, 0])
    exact(sd.take(t, sd.asarray(idx), axis=0), np.take(a, idx, axis=0))
    close(t @ t.mT, a @ a.T, 1e-12)
    close(sd.vecdot(t, t[::-1]), np.vecdot(a, a[::-1]), 1e-12)  # x1 conjugated, as the standard and NumPy
    f = sd.from_numpy(np.ones(4, np.float32))
    exact(sd.from_numpy(a.astype(np.complex64)) + f, a.astype(np.complex64) + np.ones(4, np.float32))
    exact(f * (1 + 1j), np.ones(4, np.float32) * (1 + 1j))  # f32 with a Python complex: c64 (NEP 50)
    exact(sd.where(sd.asarray([True, False, True, True]), t, 0), np.where([True, False, True, True], a, 0))


@pytest.mark.parametrize("op", ["less", "maximum", "floor", "floor_divide", "remainder", "atan2", "max", "argmax"])
def test_complex_ops_without_meaning_name_themselves(op):
    z = sd.tensor([1 + 2j, 3 - 1j])
    fn = getattr(sd, op)
    args = (z, z) if op in ("less", "maximum", "floor_divide", "remainder", "atan2") else (z,)
    with pytest.raises(sd.StridedError) as e:
        fn(*args)
    msg = str(e.value)
    assert ("complex" in msg or "c64" in msg) and (op in msg or {"less": "lt"}.get(op, op) in msg), msg
