"""f16 and bf16 elementwise ops computed in f32 registers, against NumPy.

The kernels read half buffers and write half outputs themselves (no f32
temporaries).  The oracle is f32 math rounded once to the half type: NumPy's
own float16 ufuncs for f16 (they compute in f32 and round), ml_dtypes arrays
taken to f32, computed by NumPy and rounded back for bf16.  Comparisons are
bit for bit, NaN payloads, infinities, signed zeros and subnormals included.
Transcendental ops use strided's f32 polynomials, so their oracle is our own
f32 kernel on the f32 values rounded by NumPy (the result before this change)
plus a closeness check against NumPy.

Compile time: every (op, half dtype, serial/parallel, runs/tiles) is one numba
compile, so the parallel and tiled kernels are exercised with add and exp only.
"""

from __future__ import annotations

from math import prod

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as sd
from strided.kernels import PARALLEL_MIN
from strided.kernels import elementwise as ew
from strided.layout import Layout
from test_elementwise import layouts, no_tiles, view

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
HALVES = {"f16": F16, "bf16": BF16}


# ---------------------------------------------------------------------------
# values and oracles


def bits(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def isnan(a) -> np.ndarray:
    """From the bits: NumPy's isnan warns on a signalling bf16 NaN."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return np.zeros(a.shape, bool)
    if a.itemsize != 2:
        return np.isnan(a)
    return (a.view(np.uint16) & 0x7FFF) > (0x7C00 if a.dtype == F16 else 0x7F80)


def specials(dtype) -> np.ndarray:
    """NaN (quiet, with payloads, both signs), infinities, signed zeros, subnormals, extremes."""
    if dtype == F16:
        pats = [0x7E00, 0xFE00, 0x7C01, 0x7D55, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0x8001,
                0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0x3555]
    else:
        pats = [0x7FC0, 0xFFC0, 0x7F81, 0x7FA5, 0x7F80, 0xFF80, 0x0000, 0x8000, 0x0001, 0x8001,
                0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0x3EAB]
    return np.array(pats, np.uint16).view(dtype)


def fill(rng, n, dtype) -> np.ndarray:
    v = (rng.standard_normal(n) * 3).astype(np.float32)
    # some large values (f16 overflows to inf at 65520) and tiny ones (subnormals)
    k = rng.integers(0, 4, n)
    v = np.where(k == 0, v * 3e4, np.where(k == 1, v * 1e-6, v)).astype(np.float32)
    with np.errstate(over="ignore"):
        out = v.astype(dtype)
    if n:
        sp = specials(dtype)
        idx = rng.integers(0, n, max(1, n // 8))
        out[idx] = sp[rng.integers(0, len(sp), len(idx))]
    return out


F32_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
EXACT_UNARY = {"neg": np.negative, "sqrt": np.sqrt, "relu": lambda x: np.where(x < 0, np.zeros((), x.dtype), x)}


def oracle_binary(op, x, y):
    """f32 math rounded once.  Not NumPy's float16 loops: they round the same way, but
    their maximum and minimum give a tie (0.0 against -0.0) to the first operand, where
    its f32 loops, and so ours, give it to the second."""
    with np.errstate(all="ignore"):
        r = F32_BINARY[op](x.astype(np.float32), y.astype(np.float32))
        return r if op in COMPARE else r.astype(x.dtype)


def oracle_unary(op, x):
    with np.errstate(all="ignore"):
        return EXACT_UNARY[op](x.astype(np.float32)).astype(x.dtype)


def assert_bits(got, want, either_nan=None):
    """Bit for bit; where ``either_nan`` (both operands NaN) any NaN will do: which
    operand's payload an f32 op returns is the compiler's choice (NumPy's float16
    loops return the second one, its f32 loops and ours the first)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = bits(got) != bits(want)
    if either_nan is not None:
        bad &= ~(np.asarray(either_nan) & isnan(got))
    assert not bad.any(), f"{bad.sum()} differ, e.g. got {got[bad][:4]} want {want[bad][:4]}"


@st.composite
def problems(draw, nin):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.integers(0, 9)) for _ in range(rank))
    if prod(shape) > 600:
        shape = tuple(min(n, 4) for n in shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lays = [draw(layouts(shape)) for _ in range(nin)]
    if draw(st.booleans()):
        olay = ew.output_layout(shape, *(l for l, _ in lays))
        n = max(olay.numel, 1)
    else:
        olay, n = draw(layouts(shape, broadcast=False))
    return shape, rng, lays, olay, n


def run_binary(op, dtype, prob):
    shape, rng, ((la, na), (lb, nb)), olay, n = prob
    a, b = fill(rng, na, dtype), fill(rng, nb, dtype)
    odt = np.dtype(bool) if op in COMPARE else dtype
    out = np.full(n, 3, np.uint16).view(dtype) if odt == dtype else np.ones(n, bool)
    before = out.copy()
    ew.binary(op, a, la, b, lb, out, olay)
    x, y = view(a, la), view(b, lb)
    assert_bits(view(out, olay), oracle_binary(op, x, y), isnan(x) & isnan(y))
    mask = np.ones(n, bool)
    if olay.numel:
        mask[np.asarray(view(np.arange(n), olay)).reshape(-1)] = False
    assert bits(out)[mask].tobytes() == bits(before)[mask].tobytes(), "wrote outside the output layout"


@pytest.mark.parametrize("dname", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "lt"])
@settings(max_examples=25)
@given(data=st.data())
def test_binary_any_layout(dname, op, data):
    with no_tiles():
        run_binary(op, HALVES[dname], data.draw(problems(2)))


@pytest.mark.parametrize("dname", ["f16", "bf16"])
@pytest.mark.parametrize("op", list(EXACT_UNARY))
@settings(max_examples=25)
@given(data=st.data())
def test_unary_any_layout(dname, op, data):
    dtype = HALVES[dname]
    shape, rng, ((la, na),), olay, n = data.draw(problems(1))
    a = fill(rng, na, dtype)
    out = np.full(n, 3, np.uint16).view(dtype)
    with no_tiles():
        ew.unary(op, a, la, out, olay)
    assert_bits(view(out, olay), oracle_unary(op, view(a, la)))


@pytest.mark.parametrize("dname", ["f16", "bf16"])
@settings(max_examples=25)
@given(data=st.data())
def test_where_any_layout_moves_raw_bits(dname, data):
    dtype = HALVES[dname]
    shape, rng, ((la, na), (lb, nb), (lc, nc)), olay, n = data.draw(problems(3))
    a, b = fill(rng, na, dtype), fill(rng, nb, dtype)
    c = rng.integers(0, 2, nc).astype(bool)
    out = np.full(n, 3, np.uint16).view(dtype)
    with no_tiles():
        ew.where(c, lc, a, la, b, lb, out, olay)
    assert_bits(view(out, olay), np.where(view(c, lc), view(a, la), view(b, lb)))


@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_every_bit_pattern_through_exact_unary_ops(dname):
    """All 65536 patterns: NaN payloads, subnormals and signed zeros survive as f32 math rounded once."""
    dtype = HALVES[dname]
    # two halves, each below PARALLEL_MIN: the serial kernels the sweeps above compiled
    for x in np.arange(1 << 16, dtype=np.uint16).view(dtype).reshape(2, 1 << 15):
        L = Layout.contiguous((1 << 7, 1 << 8))
        for op in EXACT_UNARY:
            out = np.empty_like(x)
            ew.unary(op, x, L, out, L)
            assert_bits(out, oracle_unary(op, x))


@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_every_bit_pattern_against_every_other_class(dname):
    """Each pattern meets a value of every class (NaN, inf, zero, subnormal, normal) in add, mul and lt."""
    dtype = HALVES[dname]
    sp = specials(dtype)
    L = Layout.contiguous((8, 1 << 12))
    for x in np.arange(1 << 16, dtype=np.uint16).view(dtype).reshape(2, 1 << 15):  # serial kernels
        for op in ("add", "mul", "lt", "div"):
            for v in sp:
                y = np.full(x.shape, v, dtype)
                out = np.empty(x.shape, bool if op in COMPARE else dtype)
                ew.binary(op, x, L, y, L, out, L)
                assert_bits(out, oracle_binary(op, x, y), isnan(x) & isnan(y))


# ---------------------------------------------------------------------------
# every path of the dispatcher, serial and parallel


SERIAL_SIZES = [(3, 5), (17, 33), (255, 257)]
PARALLEL_SIZES = [(256, 256), (256, 257), (257, 1031)]


# The parallel drivers hold no dtype-specific code (the same _dec/_enc as the
# serial ones), so bf16 runs them at serial sizes only: two parallel compiles fewer.
@pytest.mark.parametrize(
    "dname,n0,n1", [("f16", *s) for s in SERIAL_SIZES + PARALLEL_SIZES] + [("bf16", *s) for s in SERIAL_SIZES]
)
def test_every_path_around_the_parallel_threshold(dname, n0, n1):
    dtype = HALVES[dname]
    rng = np.random.default_rng(n0 * 7919 + n1)
    na = n0 * n1
    a = fill(rng, na, dtype)
    b = fill(rng, na, dtype)
    big = fill(rng, 4 * na, dtype)  # room for a strided, flipped view
    bias = fill(rng, n1, dtype)
    col = fill(rng, n0, dtype)
    L = Layout.contiguous((n0, n1))
    LT = Layout.contiguous((n1, n0)).transpose(0, 1)
    LB = Layout((n1,)).broadcast_as((n0, n1))  # a row bias: dense runs
    LC = Layout((n0, n1), (1, 0), 0)  # a column bias: a stride-0 inner run
    LS = Layout((), ()).broadcast_as((n0, n1))
    # every other row, walked backwards, every other column: the odometer
    LG = Layout((n0, n1), (-4 * n1, 2), (n0 - 1) * 4 * n1)
    cases = [
        ("dense", "add", a, L, b, L, None),
        ("dense", "add", a, L, bias, LB, None),
        ("bcast", "add", a, L, col, LC, None),
        ("bcast", "add", bias[:1], LS, a, L, None),
        ("tiled", "add", a, L, b, LT, None),
        ("general", "add", big, LG, b, L, None),
    ]
    if n0 * n1 < PARALLEL_MIN:  # unary kernels: the serial ones suffice (compile time)
        cases += [
            ("dense", "exp", a, L, None, None, None),
            ("tiled", "exp", a, LT, None, None, L),  # a transposed input into a row-major output
        ]
    seen = set()
    for path, op, x, lx, y, ly, lo in cases:
        lays = (lx,) if y is None else (lx, ly)
        lo = lo or ew.output_layout((n0, n1), *lays)
        p = ew.plan(lo, *lays, itemsize=2)
        if min(n0, n1) >= ew.TILE_MIN or path != "tiled":
            assert ew.PATH_NAMES[p.path] == path
        assert p.parallel == (n0 * n1 >= PARALLEL_MIN and sd.get_num_threads() > 1)
        seen.add(ew.PATH_NAMES[p.path])
        out = np.full(lo.numel, 3, np.uint16).view(dtype)
        if y is None:
            ew.unary(op, x, lx, out, lo)
            xf = view(x, lx).astype(np.float32)
            f32 = np.empty(lo.numel, np.float32)
            ew.unary(op, np.ascontiguousarray(xf).reshape(-1), L, f32, L)  # the f32 kernel, as before
            with np.errstate(all="ignore"):
                want = f32.reshape(n0, n1).astype(dtype)
                close = np.exp(xf).astype(dtype).astype(np.float32)
            got = view(out, lo)
            # within one half ulp-ish of NumPy's exp rounded (both round the same f32 neighbourhood)
            np.testing.assert_allclose(got.astype(np.float32), close, rtol=1e-2, atol=0)
        else:
            ew.binary(op, x, lx, y, ly, out, lo)
            want = oracle_binary(op, view(x, lx), view(y, ly))
        both = None if y is None else isnan(view(x, lx)) & isnan(view(y, ly))
        assert_bits(view(out, lo), want, both)
    if min(n0, n1) >= ew.TILE_MIN:
        assert seen == {"dense", "bcast", "tiled", "general"}


# ---------------------------------------------------------------------------
# the tensor layer: same-dtype half ops allocate only their half result


@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_same_dtype_half_ops_allocate_no_f32_temporary(allocations, dname):
    dtype = HALVES[dname]
    rng = np.random.default_rng(5)
    n0, n1 = 64, 96
    x, y = fill(rng, n0 * n1, dtype).reshape(n0, n1), fill(rng, n0 * n1, dtype).reshape(n0, n1)
    a, b = sd.from_numpy(x), sd.from_numpy(y)
    exprs = {
        "a + b": lambda: a + b,
        "a * 0.5": lambda: a * 0.5,
        "a.t() + b.t()": lambda: a.t() + b.t(),
        "a.exp()": lambda: a.exp(),
        "a.relu()": lambda: a.relu(),
        "a < b": lambda: a < b,
        "where": lambda: sd.where(cond, a, b),
        "where scalar": lambda: sd.where(cond, a, 0.25),
    }
    cond = a < b
    for name, f in exprs.items():
        allocations.clear()
        r = f()
        big = [(k, d) for k, d in allocations if k >= n0 * n1]
        want_dtype = np.dtype(bool) if name == "a < b" else dtype
        assert big == [(n0 * n1, want_dtype)], f"{name}: {allocations}"
        assert r.numpy().dtype == want_dtype


@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_tensor_ops_match_numpy(dname):
    dtype = HALVES[dname]
    rng = np.random.default_rng(11)
    x = fill(rng, 7 * 9, dtype).reshape(7, 9)
    y = fill(rng, 9 * 7, dtype).reshape(9, 7).T
    a, b = sd.from_numpy(x), sd.from_numpy(y)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    both = isnan(x) & isnan(y)
    with np.errstate(all="ignore"):
        assert_bits((a + b).numpy(), oracle_binary("add", x, y), both)
        assert_bits((a * 0.1).numpy(), (xf * np.float32(0.1)).astype(dtype))  # the scalar stays f32
        assert_bits((a < b).numpy(), xf < yf)
        assert_bits(a.relu().numpy(), oracle_unary("relu", x))
        assert_bits(sd.where(a > b, a, b).numpy(), np.where(xf > yf, x, y))
        assert_bits(sd.where(a > b, a, 0.1).numpy(), np.where(xf > yf, x, np.float32(0.1).astype(dtype)))
        # mixed dtypes promote as NumPy does: the half operand is read as f32, no rounding to half
        assert_bits((a + b.to_dtype("f32")).numpy(), xf + yf, both)
        other = sd.from_numpy(y.astype(F16 if dtype == BF16 else BF16))
        assert_bits((a + other).numpy(), xf + other.numpy().astype(np.float32), both)
