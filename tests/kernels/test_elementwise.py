"""Elementwise kernels against NumPy, over random layouts of flat buffers.

Every operand is a Layout over a flat buffer and the same view built in NumPy
with ``as_strided`` (after the layout was validated against the buffer); the
oracle is NumPy's ufunc on those views.  The output buffer is filled with a
sentinel first, so a write outside the output layout is caught too.

Compile time matters (each (op, dtype, kernel) is one numba compile), so the
dtype sweep uses a few representative ops and the parallel and tiled kernels
are exercised with add/f32 only.
"""

from __future__ import annotations

from math import prod

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strided.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError
from strided.kernels import PARALLEL_MIN
from strided.kernels.common import ALIGN_MIN_BYTES
from strided.kernels import elementwise as ew
from strided.kernels.optable import OPS
from strided.layout import Layout

DTYPES = ["float32", "float64", "uint8", "uint32", "int64", "bool"]
RTOL = {"float32": 1e-6, "float64": 1e-12}


# ---------------------------------------------------------------------------
# operands


@st.composite
def shapes(draw, max_rank=8, max_numel=360):
    rank = draw(st.integers(0, max_rank))
    sizes = st.sampled_from([1, 1, 2, 2, 3, 4, 5, 0]) if rank > 4 else st.integers(0, 7)
    shape = tuple(draw(sizes) for _ in range(rank))
    if prod(shape) > max_numel:
        shape = tuple(min(n, 2) for n in shape)
    return shape


@st.composite
def layouts(draw, shape, broadcast=True):
    """A random layout of ``shape`` and the buffer length it needs.

    Any dim order (transposes, permutes), steps and gaps (narrows, slices),
    flips (negative strides), stride-0 dims (broadcasts), arbitrary strides on
    size-1 dims, and an offset."""
    nd = len(shape)
    order = draw(st.permutations(range(nd))) if nd else []
    stride = [0] * nd
    acc = 1
    for d in reversed(order):
        if shape[d] == 1:
            stride[d] = draw(st.integers(-7, 7))
            continue
        if broadcast and draw(st.integers(0, 6)) == 0:
            continue  # stride 0
        step = draw(st.sampled_from([1, 1, 1, 2, 3]))
        stride[d] = acc * step
        acc = stride[d] * max(shape[d], 1) + draw(st.sampled_from([0, 0, 1, 5]))
    offset = draw(st.integers(0, 4))
    for d in range(nd):
        if shape[d] > 1 and stride[d] and draw(st.integers(0, 3)) == 0:
            offset += (shape[d] - 1) * stride[d]
            stride[d] = -stride[d]
    lay = Layout(shape, stride, offset)
    lo, hi = lay.span()
    assert lo >= 0
    return lay, max(hi, 1) + draw(st.integers(0, 3))


def fill(rng, n, dtype, special=True):
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype in ("uint8", "uint32", "int64"):
        info = np.iinfo(dtype)
        lo, hi = (0, 20) if rng.integers(0, 2) else (max(info.min, -(2**40)), min(info.max, 2**40))
        v = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
        if dtype == "int64":
            v -= rng.integers(0, 2, n) * rng.integers(0, 25, n)
        return v.astype(dtype)
    v = (rng.standard_normal(n) * 3).astype(dtype)
    if special and n:
        k = rng.integers(0, n, max(1, n // 16))
        v[k] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype), len(k))
    return v


def view(buf, lay: Layout) -> np.ndarray:
    """The numpy view of ``lay`` over ``buf`` (the layout is validated first)."""
    lay.validate(len(buf))
    base = buf[lay.offset :] if lay.numel else buf[:0]
    return np.lib.stride_tricks.as_strided(
        base, lay.shape, tuple(s * buf.itemsize for s in lay.stride), writeable=False
    )


def sentinel(n, dtype):
    if dtype == "bool":
        return np.ones(n, bool)
    if dtype in ("float32", "float64"):
        return np.full(n, 12345.0, dtype)
    return np.full(n, 77, dtype)


def covered(lay: Layout, n: int) -> np.ndarray:
    mask = np.zeros(n, bool)
    if lay.numel:
        idx = np.lib.stride_tricks.as_strided(
            np.arange(n)[lay.offset :], lay.shape, tuple(s * 8 for s in lay.stride)
        )
        mask[idx.reshape(-1)] = True
    return mask


def assert_same(got, want, dtype):
    got = np.asarray(got)
    want = np.asarray(want).astype(got.dtype) if np.asarray(want).dtype != got.dtype else np.asarray(want)
    assert got.shape == want.shape
    if dtype in RTOL and got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=0, equal_nan=True)
        # NaN exactly where numpy has NaN, infinities of the same sign
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    else:
        np.testing.assert_array_equal(got, want)


@st.composite
def problems(draw, nin, dtype, out_dtype=None, max_rank=8):
    """Inputs and an output, each a random layout over its own buffer."""
    shape = draw(shapes(max_rank=max_rank))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ins = []
    for _ in range(nin):
        lay, n = draw(layouts(shape))
        ins.append((fill(rng, n, dtype), lay))
    if draw(st.integers(0, 2)):
        olay = ew.output_layout(shape, *(l for _, l in ins))
        n = max(olay.numel, 1) + draw(st.integers(0, 2))
    else:
        olay, n = draw(layouts(shape, broadcast=False))
    out = sentinel(n, out_dtype or dtype)
    return shape, ins, out, olay


def check_out(out, before, olay, want, dtype):
    mask = covered(olay, len(out))
    assert out[~mask].tobytes() == before[~mask].tobytes(), "wrote outside the output layout"
    assert_same(view(out, olay), want, dtype)


# ---------------------------------------------------------------------------
# oracles

def in_f64(f):
    """NumPy's f64 function of f32 operands, rounded to f32: the oracle for the functions
    strided computes in f64 and rounds once, more accurately than NumPy's own f32 loops
    (logaddexp's by thousands of ulp)."""
    def g(*xs):
        if xs[0].dtype != np.float32:
            return f(*xs)
        return f(*(x.astype(np.float64) for x in xs)).astype(np.float32)

    return g


NP_UNARY = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "sqr": np.square,
    "abs": np.abs,
    "neg": np.negative,
    "relu": lambda x: np.where(x < 0, np.zeros((), x.dtype), x),
    "tanh": np.tanh,
    "sigmoid": lambda x: (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype),
    "sin": in_f64(np.sin),
    "cos": in_f64(np.cos),
    "not": np.logical_not,
    "bitwise_invert": np.invert,
    "acos": in_f64(np.arccos), "acosh": in_f64(np.arccosh), "asin": in_f64(np.arcsin), "asinh": in_f64(np.arcsinh),
    "atan": in_f64(np.arctan), "atanh": in_f64(np.arctanh), "cosh": in_f64(np.cosh), "sinh": in_f64(np.sinh),
    "tan": in_f64(np.tan), "expm1": in_f64(np.expm1), "log1p": np.log1p,
    "log2": np.log2, "log10": np.log10, "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "round": np.rint,
    "sign": np.sign,
    "recip": lambda x: np.ones((), x.dtype) / x,
    "conj": np.conj,
}


def np_int_pow(x, y):
    x = x.astype(np.int64)
    y = y.astype(np.int64)
    pos = np.where(y >= 0, y, 0)
    r = np.power(x, pos)
    neg = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0))
    return np.where(y >= 0, r, neg)


NP_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "pow": in_f64(np.power),
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "atan2": in_f64(np.arctan2), "hypot": in_f64(np.hypot), "copysign": np.copysign,
    "logaddexp": in_f64(np.logaddexp),
    "floor_divide": np.floor_divide, "remainder": np.remainder,
}


def np_binary(op, x, y):
    if op == "pow" and x.dtype.kind in "iu":
        return np_int_pow(x, y).astype(x.dtype)
    if x.dtype == bool and op == "add":
        return np.logical_or(x, y)
    if x.dtype == bool and op == "mul":
        return np.logical_and(x, y)
    return NP_BINARY[op](x, y)


class no_tiles:
    """The sweeps stay off the tiled path (one more compile per op); it has tests of its own."""

    def __enter__(self):
        self.saved = ew.TILE_MIN
        ew.TILE_MIN = 1 << 62

    def __exit__(self, *exc):
        ew.TILE_MIN = self.saved


# The dtype sweep: each (op, dtype) pair below is one compile.
UNARY_CASES = [(op, "float32") for op in ew.UNARY_OPS if op not in ("not", "bitwise_invert")]
UNARY_CASES += [(op, "float64") for op in ("exp", "tanh", "sigmoid", "log")]
UNARY_CASES += [("neg", d) for d in ("uint8", "int64")]
UNARY_CASES += [("abs", "int64"), ("relu", "int64"), ("sign", "int64"), ("sqr", "uint8"), ("not", "bool")]
UNARY_CASES += [("bitwise_invert", d) for d in ("uint8", "uint32", "int64", "bool")]

BINARY_CASES = [("add", d) for d in DTYPES]
BINARY_CASES += [(op, "float32")
                 for op in ("sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt", "ge")]
BINARY_CASES += [("mul", "uint8"), ("sub", "uint32"), ("maximum", "int64"), ("lt", "int64"), ("pow", "int64")]
BINARY_CASES += [("mul", "bool"), ("maximum", "bool"), ("eq", "bool"), ("logical_and", "bool"), ("logical_or", "bool")]
BINARY_CASES += [(op, "float32") for op in ("atan2", "hypot", "copysign", "logaddexp", "floor_divide", "remainder")]
BINARY_CASES += [("floor_divide", "int64"), ("remainder", "int64"), ("remainder", "uint8"), ("logaddexp", "float64")]
BINARY_CASES += [("bitwise_and", "uint8"), ("bitwise_or", "uint32"), ("bitwise_xor", "int64"), ("bitwise_xor", "bool")]


@pytest.mark.parametrize("op,dtype", UNARY_CASES)
@settings(max_examples=40)
@given(data=st.data())
def test_unary_matches_numpy(op, dtype, data):
    shape, [(x, xl)], out, olay = data.draw(problems(1, dtype))
    before = out.copy()
    with no_tiles():
        ew.unary(op, x, xl, out, olay)
    with np.errstate(all="ignore"):
        want = NP_UNARY[op](view(x, xl).copy())
    check_out(out, before, olay, want, dtype)


@pytest.mark.parametrize("op,dtype", BINARY_CASES)
@settings(max_examples=40)
@given(data=st.data())
def test_binary_matches_numpy(op, dtype, data):
    out_dtype = "bool" if ew.BINARY_OPS[op].bool_out else dtype
    shape, [(x, xl), (y, yl)], out, olay = data.draw(problems(2, dtype, out_dtype))
    if op == "pow" and dtype == "int64":  # keep the numbers small enough not to care about wrapping
        x = (x % 7 - 3).astype(dtype)
        y = (y % 9 - 2).astype(dtype)
    before = out.copy()
    with no_tiles():
        ew.binary(op, x, xl, y, yl, out, olay)
    with np.errstate(all="ignore"):
        want = np_binary(op, view(x, xl).copy(), view(y, yl).copy())
    check_out(out, before, olay, want, dtype)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@settings(max_examples=60)
@given(data=st.data())
def test_where_matches_numpy(dtype, data):
    shape = data.draw(shapes())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    (cl, cn), (al, an), (bl, bn) = (data.draw(layouts(shape)) for _ in range(3))
    c, a, b = fill(rng, cn, "bool"), fill(rng, an, dtype), fill(rng, bn, dtype)
    olay = ew.output_layout(shape, al, bl)
    out = sentinel(max(olay.numel, 1), dtype)
    before = out.copy()
    ew.where(c, cl, a, al, b, bl, out, olay)
    check_out(out, before, olay, np.where(view(c, cl), view(a, al), view(b, bl)), dtype)


# ---------------------------------------------------------------------------
# in place: the output is exactly an input's view


@settings(max_examples=60)
@given(data=st.data())
def test_binary_in_place(data):
    shape = data.draw(shapes())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    al, an = data.draw(layouts(shape, broadcast=False))
    bl, bn = data.draw(layouts(shape))
    a, b = fill(rng, an, "float32"), fill(rng, bn, "float32")
    want = np.add(view(a, al), view(b, bl))
    untouched = a.copy()
    ew.binary("add", a, al, b, bl, a, al)  # a += b
    check_out(a, untouched, al, want, "float32")


@settings(max_examples=40)
@given(data=st.data())
def test_unary_in_place_and_same_operand_twice(data):
    shape = data.draw(shapes())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    al, an = data.draw(layouts(shape, broadcast=False))
    a = fill(rng, an, "float32")
    with np.errstate(all="ignore"):
        want_sqr = np.multiply(view(a, al), view(a, al))
        want_exp = np.exp(want_sqr)
    untouched = a.copy()
    ew.binary("mul", a, al, a, al, a, al)  # a *= a
    check_out(a, untouched, al, want_sqr, "float32")
    untouched = a.copy()
    ew.unary("exp", a, al, a, al)
    check_out(a, untouched, al, want_exp, "float32")


def test_in_place_transposed_output():
    # x.t() += y: the output walks against the input's order (the tiled path)
    n = 70
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n * n).astype(np.float32)
    y = rng.standard_normal(n * n).astype(np.float32)
    xl = Layout.contiguous((n, n)).transpose(0, 1)
    yl = Layout.contiguous((n, n))
    assert ew.plan(xl, xl, yl).path == ew.TILED
    want = view(x, xl) + view(y, yl)
    ew.binary("add", x, xl, y, yl, x, xl)
    np.testing.assert_array_equal(view(x, xl), want)


# ---------------------------------------------------------------------------
# paths, sizes around the parallel threshold and the tile


def test_paths():
    L = Layout.contiguous((64, 64))
    T = L.transpose(0, 1)
    scalar = Layout((), ()).broadcast_as((64, 64))
    col = Layout((64, 1)).broadcast_as((64, 64))
    row = Layout((64,)).broadcast_as((64, 64))
    assert ew.plan(L, L, L).path == ew.DENSE
    assert ew.plan(L, L, row).path == ew.DENSE  # a + bias: the bias row is dense along the inner dim
    assert ew.plan(L, L, scalar).path == ew.BCAST
    assert ew.plan(L, L, col).path == ew.BCAST
    assert ew.plan(L, L, T).path == ew.TILED
    assert ew.plan(T, T, T).path == ew.DENSE  # a.t() + b.t() into a column-major output
    assert ew.plan(Layout.contiguous((64, 32)), Layout((64, 32), (64, 2))).path == ew.GENERAL  # a step-2 slice
    assert ew.plan(L, L.flip(1), L.flip(1)).path == ew.GENERAL  # out walks forwards, inputs backwards
    assert ew.plan(L.flip((0, 1)), L.flip((0, 1))).path == ew.DENSE  # all backwards: walked flipped
    assert ew.plan(Layout.contiguous((4, 4)), Layout.contiguous((4, 4)).transpose(0, 1)).path == ew.GENERAL


def _binary_check(shape, la, lb, lo, rng):
    a = rng.standard_normal(max(la.span()[1], 1)).astype(np.float32)
    b = rng.standard_normal(max(lb.span()[1], 1)).astype(np.float32)
    out = sentinel(max(lo.span()[1], 1), "float32")
    before = out.copy()
    ew.binary("add", a, la, b, lb, out, lo)
    check_out(out, before, lo, view(a, la) + view(b, lb), "float32")


@pytest.mark.parametrize(
    "shape",
    [(256, 256), (255, 257), (257, 255), (1, PARALLEL_MIN), (PARALLEL_MIN - 1,), (3, 7, 61, 53)],
)
def test_sizes_around_the_parallel_threshold(shape):
    rng = np.random.default_rng(1)
    L = Layout.contiguous(shape)
    nd = len(shape)
    _binary_check(shape, L, L, L, rng)  # dense
    if nd >= 2:
        T = Layout.contiguous(shape[:-2] + shape[-2:][::-1]).transpose(nd - 2, nd - 1)
        _binary_check(shape, L, T, L, rng)  # tiled
        _binary_check(shape, T, T, ew.output_layout(shape, T, T), rng)  # dense, column-major
        row = Layout((shape[-1],)).broadcast_as(shape)
        _binary_check(shape, L, row, L, rng)
        narrow = Layout.contiguous(shape[:-1] + (shape[-1] + 3,)).narrow(nd - 1, 2, shape[-1])
        _binary_check(shape, narrow, L, L, rng)


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8", "bool"])
@pytest.mark.parametrize("threads", [1, 3])
def test_long_runs_at_every_alignment(dtype, threads):
    """A unit-stride run from ALIGN_MIN_BYTES is taken in two, cut where its output reaches a
    64-byte line: at every offset of the output (and, in parallel, every chunk border),
    NumPy's results and nothing written outside the output."""
    rng = np.random.default_rng(5)
    isz = np.dtype(dtype).itemsize
    n = ALIGN_MIN_BYTES // isz
    k = 1 if threads == 1 else 4 * threads + 1  # chunks (4 per thread) longer than a cut run
    saved = ew.PARALLEL_MIN, ew.get_num_threads
    if threads > 1:
        ew.PARALLEL_MIN, ew.get_num_threads = 1, (lambda: threads)
    try:
        for shape in ((k * n + 7,), (3, n - 1), (3, n), (2, k * n + 5)):
            dense = Layout.contiguous(shape)
            row = Layout((shape[-1],)).broadcast_as(shape)
            one = Layout((1,)).broadcast_as(shape)
            for off in range(64 // isz + 1):
                lo = Layout(shape, dense.stride, off)
                for la, lb in ((dense, dense), (dense, row), (one, one)):
                    a = fill(rng, max(la.span()[1], 1), dtype, special=False)
                    b = fill(rng, max(lb.span()[1], 1), dtype, special=False)
                    out = sentinel(lo.span()[1] + 3, dtype)
                    before = out.copy()
                    ew.binary("add", a, la, b, lb, out, lo)
                    check_out(out, before, lo, view(a, la) + view(b, lb), dtype)
    finally:
        ew.PARALLEL_MIN, ew.get_num_threads = saved


@pytest.mark.parametrize("kind,dtype", [("add", "float32"), ("add", "bool"), ("exp", "float32"), ("where", "float32")])
@settings(max_examples=40)
@given(data=st.data())
def test_tiled_matches_numpy(kind, dtype, data):
    """Random layouts on which the two innermost dims disagree: every operand loaded or stored through a tile."""
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    n0, n1 = data.draw(st.integers(ew.TILE_MIN, 40)), data.draw(st.integers(ew.TILE_MIN, 40))
    shape = lead + (n0, n1)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    nin = {"add": 2, "exp": 1, "where": 3}[kind]
    lays = [data.draw(layouts(shape)) for _ in range(nin)]
    T = Layout.contiguous(lead + (n1, n0)).transpose(-1, -2)
    lays[0] = (T, T.span()[1])  # at least one operand walks columns
    if data.draw(st.booleans()):
        olay, on = data.draw(layouts(shape, broadcast=False))
    else:
        olay = Layout.contiguous(shape)
        on = olay.numel
    dts = ["bool", dtype, dtype] if kind == "where" else [dtype] * nin
    bufs = [fill(rng, n, d) for (_, n), d in zip(lays, dts)]
    out = sentinel(on, dtype)
    before = out.copy()
    ins = [x for pair in zip(bufs, (l for l, _ in lays)) for x in pair]
    p = ew.plan(olay, *(l for l, _ in lays))
    fn = getattr(ew, {"add": "binary", "exp": "unary", "where": "where"}[kind])
    fn(*(([kind] if kind != "where" else []) + ins + [out, olay]))
    views = [view(b, l) for b, (l, _) in zip(bufs, lays)]
    with np.errstate(all="ignore"):
        want = {"add": lambda: np_binary("add", *views), "exp": lambda: np.exp(views[0]),
                "where": lambda: np.where(*views)}[kind]()
    check_out(out, before, olay, want, dtype)
    if olay.is_contiguous() and n0 >= ew.TILE_MIN:
        assert p.path == ew.TILED


@pytest.mark.parametrize("n0,n1", [(63, 65), (64, 64), (1025, 1023), (2 * 1024 + 3, ew.TILE_MIN),
                                   (ew.TILE_MIN, 3 * 512 + 1)])
def test_tile_edges(n0, n1):
    """Partial tiles on either edge, exact multiples, thin matrices and batches of them."""
    rng = np.random.default_rng(2)
    L = Layout.contiguous((n0, n1))
    T = Layout.contiguous((n1, n0)).transpose(0, 1)
    p = ew.plan(L, L, T)
    assert p.path == ew.TILED and ew.TILE_FLOOR <= p.tile <= ew.TILE_MAX
    _binary_check((n0, n1), L, T, L, rng)
    _binary_check((n0, n1), T.flip(0), L.flip(1), L, rng)
    B = Layout.contiguous((3, n1, n0)).transpose(1, 2)
    if 3 * n0 * n1 < 4_000_000:
        _binary_check((3, n0, n1), Layout.contiguous((3, n0, n1)), B, Layout.contiguous((3, n0, n1)), rng)


def test_tile_side_follows_the_itemsize():
    L = Layout.contiguous((4096, 4096))
    T = L.transpose(0, 1)
    saved = ew.get_num_threads
    ew.get_num_threads = lambda: 1
    try:
        assert ew.plan(L, L, T, itemsize=4).tile == ew.TILE_BYTES // 4  # a page per tile row
        assert ew.plan(L, L, T, itemsize=8).tile == ew.TILE_BYTES // 8
        assert ew.plan(L, L, T, itemsize=1).tile == ew.TILE_MAX
        small = Layout.contiguous((300, 300))
        ew.get_num_threads = lambda: 2
        p = ew.plan(small, small, small.transpose(0, 1))
        assert p.parallel and p.work >= 4  # smaller tiles, so that both threads get some
    finally:
        ew.get_num_threads = saved


@settings(max_examples=60)
@given(data=st.data())
def test_many_chunks_split_rows_anywhere(data):
    """Chunks cut rows at arbitrary places: force the parallel kernels on small problems."""
    shape, [(x, xl), (y, yl)], out, olay = data.draw(problems(2, "float32", max_rank=4))
    nthreads = data.draw(st.integers(2, 9))
    saved = ew.PARALLEL_MIN, ew.get_num_threads
    ew.PARALLEL_MIN, ew.get_num_threads = 1, (lambda: nthreads)
    try:
        p = ew.plan(olay, xl, yl)
        before = out.copy()
        ew.binary("add", x, xl, y, yl, out, olay)
    finally:
        ew.PARALLEL_MIN, ew.get_num_threads = saved
    if olay.numel > 1 and p.work > 1:
        assert p.parallel
    with np.errstate(all="ignore"):
        want = view(x, xl) + view(y, yl)
    check_out(out, before, olay, want, "float32")


def test_float32_functions_over_the_whole_range():
    """exp and tanh in f32 are polynomials of our own: within 2 ulp everywhere (sigmoid, built on exp: 3)."""
    x = np.concatenate(
        [
            np.linspace(-110, 95, 400_001, dtype=np.float32),
            np.array([0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.7229, -87.33655, -103.97, -103.98, 1e-30, -1e-45],
                     np.float32),
            np.random.default_rng(3).uniform(-1e-3, 1e-3, 100_000).astype(np.float32),
        ]
    )
    L = Layout.contiguous(x.shape)
    ref = {
        "exp": np.exp(x.astype(np.float64)),
        "tanh": np.tanh(x.astype(np.float64)),
        "sigmoid": 1 / (1 + np.exp(-x.astype(np.float64))),
    }
    for op, r64 in ref.items():
        out = np.empty_like(x)
        ew.unary(op, x, L, out, L)
        r32 = r64.astype(np.float32)
        assert np.array_equal(np.isnan(out), np.isnan(r32)), op
        assert np.array_equal(np.isinf(out), np.isinf(r32)), op
        fin = np.isfinite(r32) & (np.abs(r32) >= np.finfo(np.float32).tiny)
        ulp = np.abs(out[fin].astype(np.float64) - r64[fin]) / np.spacing(np.abs(r32[fin]))
        assert ulp.max() <= (3.0 if op == "sigmoid" else 2.0), (op, ulp.max())
        sub = np.isfinite(r32) & ~fin  # subnormal results: within one subnormal step
        assert np.all(np.abs(out[sub].astype(np.float64) - r64[sub]) <= 2 * 2.0**-149), op


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_scale_rounds_once_on_the_cpu_and_in_its_portable_form(dtype):
    """exp's last step, p 2^n: the CPU's binding (one vscalef where numba compiles for
    AVX-512, the exponent bits elsewhere) and the portable body that device code compiles
    both give p 2^n correctly rounded (NumPy's ldexp of the exact f64 or its own f64),
    subnormals, overflow and the largest finite results included."""
    from numba import njit

    from strided.kernels import scalar

    fn = scalar.scale2f if dtype == np.float32 else scalar.scale2d
    lo, hi = (-160, 129) if dtype == np.float32 else (-1076, 1025)
    rng = np.random.default_rng(11)
    n = np.concatenate([np.arange(lo, hi + 1), rng.integers(lo, hi + 1, 20_000)]).astype(dtype)
    p = np.concatenate([np.full(hi - lo + 1, 1.9999999, dtype), rng.uniform(0.5, 2.0, 20_000).astype(dtype)])
    p[:40] = np.nextafter(dtype(2.0), dtype(0.0))

    @njit(error_model="numpy")
    def loop(p, n, out):
        for i in range(p.size):
            out[i] = fn(p[i], n[i])

    cpu = np.empty_like(p)
    loop(p, n, cpu)
    with np.errstate(all="ignore"):
        want = np.ldexp(p.astype(np.float64), n.astype(np.int64)).astype(dtype)
        portable = np.array([fn(a, b) for a, b in zip(p[:3000], n[:3000])], dtype)
    assert np.array_equal(cpu.view(f"u{p.itemsize}"), want.view(f"u{p.itemsize}"))
    assert np.array_equal(portable.view(f"u{p.itemsize}"), want[:3000].view(f"u{p.itemsize}"))


def every_exponent(dtype, per, rng):
    """Positive floats of ``dtype`` with every biased exponent (subnormals, inf and NaN
    included), ``per`` random significands each."""
    it, nm, ne = (np.int32, 23, 255) if dtype == np.float32 else (np.int64, 52, 2047)
    bits = (np.arange(ne + 1, dtype=np.int64)[:, None] << nm) | rng.integers(0, 1 << nm, (ne + 1, per))
    return bits.reshape(-1).astype(it).view(dtype)


def ulp_error(x, out, exact):
    """The largest |out - exact| in ulps of the correctly rounded result, over normal results,
    after checking NaN and infinities are where they should be and subnormal results are
    within one step.  ``exact`` is in a wider float than ``out``."""
    dtype = out.dtype
    with np.errstate(all="ignore"):
        rounded = exact.astype(dtype)
    assert np.array_equal(np.isnan(out), np.isnan(rounded)), x[np.isnan(out) != np.isnan(rounded)][:5]
    inf = np.isinf(rounded)
    assert np.array_equal(out[inf], rounded[inf]) and not np.isinf(out[~inf]).any()
    normal = np.isfinite(rounded) & (np.abs(rounded) >= np.finfo(dtype).tiny)
    sub = np.isfinite(rounded) & ~normal
    step = np.finfo(dtype).smallest_subnormal
    assert np.all(np.abs(out[sub].astype(exact.dtype) - exact[sub]) <= step), x[sub][:5]
    err = np.abs(out[normal].astype(exact.dtype) - exact[normal]) / np.spacing(np.abs(rounded[normal]))
    return float(err.max())


def serial_unary(op, x):
    """ew.unary on a flat array, in pieces below PARALLEL_MIN: the serial kernels only (the
    parallel ones call the same scalar function), one compile fewer per op."""
    L = Layout.contiguous((PARALLEL_MIN - 1,))
    out = np.empty_like(x)
    for i in range(0, x.size, L.numel):
        xi, oi = x[i : i + L.numel], out[i : i + L.numel]
        lay = L if xi.size == L.numel else Layout.contiguous(xi.shape)
        ew.unary(op, xi, lay, oi, lay)
    return out


def binary_with_special_pairs(op, a, b, special):
    """ew.binary over a and b with every pair of the special values appended: (a, b, out)."""
    sa, sb = np.meshgrid(special, special)
    a, b = np.concatenate([a, sa.ravel()]), np.concatenate([b, sb.ravel()])
    L = Layout.contiguous(a.shape)
    out = np.empty_like(a)
    ew.binary(op, a, L, b, L, out, L)
    return a, b, out


def log_inputs(dtype, per, rng):
    """Every exponent with random significands, their negatives below 1 (log1p's domain),
    values near 1 and near -1, and the special values."""
    fi = np.finfo(dtype)
    pos = every_exponent(dtype, per, rng)
    k = np.arange(1, fi.nmant + 2, dtype=dtype)
    return np.concatenate([
        pos, -pos[pos < 1][:: max(1, per // 8)],
        (1 + rng.uniform(-0.3, 0.45, 20_000)).astype(dtype), (-1 + rng.uniform(0, 1e-3, 5_000)).astype(dtype),
        -1 + np.exp2(-k), 1 - np.exp2(-k), 1 + np.exp2(-k), np.exp2(-k - 26), -np.exp2(-k - 26),
        np.array(SPECIALS + [fi.max, fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, -2.0], dtype),
    ])


# Stated in the module docstring "Float math"; these sweeps measured (ulp) f32: log 0.82,
# log2 0.64, log10 0.62, log1p 0.5; f64: exp 0.69, log 0.82, log2 0.80, log10 0.67, log1p 0.79.
BOUND_1ULP = 1.0
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, -1.0, 1.0, 2.0, 0.5, 10.0, np.sqrt(0.5), np.sqrt(2), -1e-30]
LOGS = {"log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p}


def test_float32_logs_over_every_exponent():
    """f32 log, log2, log10 and log1p are polynomials of our own: within 1 ulp of the
    correctly rounded result, with NumPy's special values (-inf at log's zero, NaN below
    it and at NaN, inf at inf, log1p's signed zeros)."""
    x = log_inputs(np.float32, 150, np.random.default_rng(4))
    for op, oracle in LOGS.items():
        out = serial_unary(op, x)
        with np.errstate(all="ignore"):
            exact = oracle(x.astype(np.float64))
        assert ulp_error(x, out, exact) <= BOUND_1ULP, op
        zeros = x == 0
        assert np.array_equal(np.signbit(out[zeros]), np.signbit(exact[zeros])), op
    k = np.arange(-149, 128)
    assert np.array_equal(serial_unary("log2", np.exp2(k).astype(np.float32)), k)
    k = np.arange(0, 11)
    assert np.array_equal(serial_unary("log10", (10.0 ** k).astype(np.float32)), k)


needs_long_double = pytest.mark.skipif(
    np.finfo(np.longdouble).nmant < 63, reason="the f64 oracle is NumPy's long double, a plain double here"
)


@needs_long_double
def test_float64_exp_and_logs_over_the_whole_range():
    """f64 exp, log, log2, log10 and log1p are polynomials of our own: within 1 ulp of the
    correctly rounded result (the oracle: long double, 11 more bits), with NumPy's
    overflow, underflow and special values; exact at powers of 2 (log2) and of 10 (log10)."""
    rng = np.random.default_rng(5)
    edges = [709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411, -745.1332191019412,
             -5e-324, 1e-300, 1e300, -1e300]
    xe = np.concatenate([
        rng.uniform(-746, 710, 100_000), rng.uniform(-1e-3, 1e-3, 10_000), rng.uniform(-746, -707, 20_000),
        np.array(SPECIALS + edges),
    ])
    xl = log_inputs(np.float64, 25, rng)
    for op, x, oracle in [("exp", xe, np.exp)] + [(op, xl, f) for op, f in LOGS.items()]:
        out = serial_unary(op, x)
        with np.errstate(all="ignore"):
            exact = oracle(x.astype(np.longdouble))
        assert ulp_error(x, out, exact) <= BOUND_1ULP, op
        zeros = x == 0
        assert np.array_equal(np.signbit(out[zeros]), np.signbit(exact[zeros].astype(np.float64))), op
    k = np.arange(-1074, 1024)
    assert np.array_equal(serial_unary("log2", np.exp2(k.astype(np.float64))), k)
    k = np.arange(0, 23)
    assert np.array_equal(serial_unary("log10", 10.0 ** k), k)


@needs_long_double
def test_float64_expm1_tanh_sinh_and_cosh_over_the_whole_range():
    """f64 expm1, tanh, sinh and cosh keep their steps as hi + lo sums: within 0.7 ulp of
    the correctly rounded result (the oracle: long double), near the reduction's switch
    points, near 0, over every exponent, with signed zeros, -1 and +-1 at the ends, overflow
    (sinh and cosh from 710.4758600739439 on, though exp overflows before) and NaN."""
    rng = np.random.default_rng(10)
    pos = every_exponent(np.float64, 20, rng)
    x = np.concatenate([
        rng.uniform(-1, 1, 100_000), np.log(2) * (rng.integers(-60, 60, 50_000) + rng.uniform(0.49, 0.51, 50_000)),
        rng.uniform(-50, 712, 100_000), rng.uniform(-1e-8, 1e-8, 10_000), rng.uniform(709.7, 710.5, 1_000), pos, -pos,
        np.array(SPECIALS + [22.0, 22.5, 40.0, 45.0, 1e300, 709.782712893384, 709.7827128933841,
                             710.4758600739439, 710.475860073944]),
    ])
    x = np.concatenate([x, -x[x > 50]])
    for op, oracle in (("expm1", np.expm1), ("tanh", np.tanh), ("sinh", np.sinh), ("cosh", np.cosh)):
        out = serial_unary(op, x)
        with np.errstate(all="ignore"):
            exact = oracle(x.astype(np.longdouble))
        assert ulp_error(x, out, exact) <= 0.7, op
        zeros = x == 0
        assert np.array_equal(out[zeros], oracle(x[zeros])) and np.array_equal(
            np.signbit(out[zeros]), np.signbit(oracle(x[zeros]))), op


@needs_long_double
def test_float64_atan_asin_acos_and_atan2_over_the_whole_range():
    """f64 atan, asin, acos and atan2 keep the ratio, its reduction (by 0, pi/4 or pi/2) and
    sqrt(1 - x^2) as hi + lo sums: within 0.8 ulp of the correctly rounded result (the
    oracle: long double) near the reduction's switch points (tan(pi/8), tan(3 pi/8)), near 0
    and +-1, over every exponent, for operands far apart and close together; the special
    values (signed zeros, infinities, NaN) as C99's tables give them."""
    rng = np.random.default_rng(11)
    pos = every_exponent(np.float64, 20, rng)
    switch = np.array([np.tan(np.pi / 8), np.tan(3 * np.pi / 8), 1.0])[rng.integers(0, 3, 30_000)]
    x = np.concatenate([
        rng.uniform(-3, 3, 100_000), switch * (1 + rng.uniform(-1e-3, 1e-3, 30_000)), pos, -pos,
        1 - rng.uniform(0, 1e-8, 10_000), np.array(SPECIALS + [1e-300, 5e-324, 1.7e308]),
    ])
    x = np.concatenate([x, -x])
    for op, oracle in (("atan", np.arctan), ("asin", np.arcsin), ("acos", np.arccos)):
        xs = x if op == "atan" else x[np.abs(x) <= 1.5]
        out = serial_unary(op, xs)
        with np.errstate(all="ignore"):
            exact = oracle(xs.astype(np.longdouble))
        assert ulp_error(xs, out, exact) <= 0.8, op
        zeros = xs == 0
        assert np.array_equal(np.signbit(out[zeros]), np.signbit(oracle(xs[zeros]))), op
    n = 100_000
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    near = rng.uniform(-100, 100, n)
    big = rng.permutation(every_exponent(np.float64, 100, rng))[: 2 * n]
    y = np.concatenate([rng.uniform(-5, 5, n), big[:n] * sign, near])
    x = np.concatenate([rng.uniform(-5, 5, n), big[n:] * sign[::-1], near * (1 + rng.normal(0, 1e-3, n))])
    special = np.array([0.0, -0.0, 5e-324, 1.0, -1.0, 1.7e308, -1.7e308, np.inf, -np.inf, np.nan])
    y, x, out = binary_with_special_pairs("atan2", y, x, special)
    with np.errstate(all="ignore"):
        exact = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble))
    assert ulp_error(y, out, exact) <= 0.8
    k = special.size**2
    want = np.arctan2(y[-k:], x[-k:])
    got = out[-k:]
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))


@needs_long_double
def test_float64_asinh_acosh_and_atanh_over_the_whole_range():
    """f64 asinh, acosh and atanh are log1p of an argument kept as hi + lo (log1p taking
    the lo part apart from its own correction, which it would round twice): within 0.9 ulp
    of the correctly rounded result (the oracle: long double) near 0 and 1, from subnormals
    to the largest finite values (log(2x) where x^2 would overflow), with signed zeros,
    infinities at +-1 (atanh), NaN outside the domains."""
    rng = np.random.default_rng(13)
    pos = every_exponent(np.float64, 30, rng)
    x = np.concatenate([
        rng.uniform(-3, 3, 100_000), 1 + rng.uniform(-1e-6, 1e-6, 20_000), 1 - rng.uniform(0, 1e-12, 5_000),
        rng.uniform(2.0**-54, 2.0**-51, 20_000), pos, -pos, np.array(SPECIALS + [2.0**500, 2.0**501, 1.7e308]),
    ])
    for op, oracle in (("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh)):
        out = serial_unary(op, x)
        with np.errstate(all="ignore"):
            exact = oracle(x.astype(np.longdouble))
        assert ulp_error(x, out, exact) <= 0.9, op
        zeros = x == 0
        assert np.array_equal(np.signbit(out[zeros]), np.signbit(x[zeros])) or op == "acosh", op


@needs_long_double
def test_float64_sin_cos_and_tan_over_the_whole_range():
    """f64 sin, cos and tan reduce their argument exactly over the whole range (a table of
    2/pi, the products split by fmas): within 0.75 ulp (tan 0.9) of the correctly rounded
    result (the oracle: long double, whose reduction is exact too), at the doubles nearest
    multiples of pi/2 (6381956970095103 2^797 is the nearest of all), across every binade,
    around 2^-27 (where r = x takes over), with signed zeros, and NaN at infinities."""
    rng = np.random.default_rng(14)
    k = np.concatenate([np.arange(1, 20_000), rng.integers(1, 2**40, 20_000)]).astype(np.float64)
    near = k * (np.pi / 2)
    pos = every_exponent(np.float64, 40, rng)
    x = np.concatenate([
        rng.uniform(-10, 10, 100_000), near, np.nextafter(near, 0), np.nextafter(near, np.inf),
        pos, -pos, 2.0**-27 * rng.uniform(0.5, 2, 10_000), rng.uniform(-1e6, 1e6, 50_000),
        np.array(SPECIALS + [6381956970095103 * 2.0**797, -6381956970095103 * 2.0**797, 1.7e308, 5e-324]),
    ])
    for op, oracle, bound in (("sin", np.sin, 0.75), ("cos", np.cos, 0.75), ("tan", np.tan, 0.9)):
        out = serial_unary(op, x)
        with np.errstate(all="ignore"):
            exact = oracle(x.astype(np.longdouble))
        assert ulp_error(x, out, exact) <= bound, op
        zeros = x == 0
        want = np.ones(zeros.sum()) if op == "cos" else x[zeros]
        assert np.array_equal(out[zeros], want) and np.array_equal(np.signbit(out[zeros]), np.signbit(want)), op


def test_pow_log_table_keeps_r_exact():
    """f64 pow's log takes r = z (1/c) - 1 with one fma: each of the 128 bit-ranges of z
    has a 1/c with few enough bits that r is exact, and below 2^-7 (checked with rationals
    at both ends of every range and at random z within); log c is -log(1/c) in two parts."""
    from fractions import Fraction

    from strided.kernels.scalar import POW_LOG_TABLE, SQRT_HALF_F64

    rng = np.random.default_rng(16)
    base = int(SQRT_HALF_F64)
    for i, (invc, hi, lo) in enumerate(POW_LOG_TABLE):
        first, last = base + (i << 45), base + ((i + 1) << 45) - 1
        for b in [first, last, *rng.integers(first, last, 40)]:
            r = Fraction(float(np.int64(b).view(np.float64))) * Fraction(float(invc)) - 1
            assert Fraction(float(r)) == r and abs(r) < Fraction(1, 128), (i, b)
        assert abs(hi + np.log(invc)) <= np.spacing(abs(hi)) and abs(lo) <= np.spacing(abs(hi)) / 2


@needs_long_double
def test_float64_pow_over_the_whole_range():
    """f64 pow is exp(y log|x|) with log|x| and y log|x| kept as hi + lo (the result's
    relative error is y log|x|'s absolute one): within 0.8 ulp of the oracle (long double,
    itself up to 0.2 ulp off where |y log x| nears 745) from subnormal to huge x, near 1 with
    huge y, at the edges of overflow and underflow (subnormal results within one step), and
    C99's values at every pair of special values, as NumPy's."""
    rng = np.random.default_rng(15)
    n = 100_000
    x = np.concatenate([rng.uniform(0, 10, n), 1 + rng.normal(0, 1e-6, n), np.exp(rng.uniform(-700, 700, n)),
                        rng.uniform(0.5, 2, n), rng.uniform(0.1, 0.9, n), rng.uniform(-10, 10, n),
                        rng.uniform(1e-320, 1e-300, n)])
    y = np.concatenate([rng.uniform(-30, 30, n), rng.uniform(-1e8, 1e8, n), rng.uniform(-1, 1, n),
                        rng.uniform(-1000, 1000, n), rng.uniform(300, 10000, n), rng.integers(-40, 40, n),
                        rng.uniform(-1.05, 1.05, n)])
    special = np.array([0.0, -0.0, 5e-324, 1e-310, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 2.5, -3.0, 1e300, -1e300,
                        np.inf, -np.inf, np.nan, 1 + 2**-52, 1075.0, -1075.0, 1e20])
    x, y, out = binary_with_special_pairs("pow", x, y, special)
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        want = np.power(x, y)
    assert ulp_error(x, out, exact) <= 0.8
    k = special.size**2
    got, want = out[-k:], want[-k:]
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ends = np.isinf(want) | (want == 0) | (np.abs(want) == 1)
    assert np.array_equal(got[ends], want[ends]) and np.array_equal(np.signbit(got[ends]), np.signbit(want[ends]))


@needs_long_double
def test_float64_hypot_is_rounded_once_over_the_whole_range():
    """f64 hypot scales both operands to the larger's binade and keeps the squares' sum as
    hi + lo: within 0.501 ulp (the oracle: long double) from subnormals to the largest
    finite results, with neither overflow nor underflow in between, and C99's special
    values (inf with NaN is inf)."""
    rng = np.random.default_rng(12)
    n = 100_000
    pos = rng.permutation(every_exponent(np.float64, 100, rng))[: 2 * n]
    close = pos[:n] * rng.uniform(0.5, 2, n)
    y = np.concatenate([rng.uniform(-5, 5, n), pos[:n], pos[:n], rng.uniform(-1e-3, 1e-3, n)])
    x = np.concatenate([rng.uniform(-5, 5, n), -pos[n:], np.where(np.isfinite(close), close, 1.0),
                        rng.uniform(-5, 5, n)])
    special = np.array([0.0, -0.0, 5e-324, 1e-310, 3.0, -4.0, 1.7e308, -1.7e308, np.inf, -np.inf, np.nan])
    y, x, out = binary_with_special_pairs("hypot", y, x, special)
    with np.errstate(all="ignore"):
        exact = np.hypot(y.astype(np.longdouble), x.astype(np.longdouble))
    assert ulp_error(y, out, exact) <= 0.501
    k = special.size**2
    assert np.array_equal(out[-k:], np.hypot(y[-k:], x[-k:]), equal_nan=True)


@pytest.mark.parametrize("op,dtype", [("log", np.float32), ("exp", np.float64), ("log", np.float64),
                                      ("log1p", np.float64), ("expm1", np.float64), ("tanh", np.float64),
                                      ("sinh", np.float64), ("cosh", np.float64), ("atan", np.float64),
                                      ("asin", np.float64), ("acos", np.float64), ("asinh", np.float64),
                                      ("atanh", np.float64), ("sin", np.float64), ("cos", np.float64),
                                      ("tan", np.float64), ("atan", np.float32), ("asin", np.float32),
                                      ("tan", np.float32), ("sinh", np.float32), ("atanh", np.float32),
                                      ("pow", np.float32), ("pow", np.float64)])
def test_float_math_vectorises(op, dtype):
    """The point of the polynomials: LLVM vectorises a loop over the op's scalar function
    (a libm call per element would keep it scalar).  Checked in the IR, not timed."""
    import re

    from numba import njit

    fn = OPS[op].fn(np.dtype(dtype).name)

    @njit(error_model="numpy")
    def loop(x, out):
        for i in range(x.size):
            out[i] = fn(x[i], x[i]) if arity == 2 else fn(x[i])

    arity = OPS[op].arity

    x = np.ones(4, dtype)
    loop(x, np.empty_like(x))
    ir = loop.inspect_llvm(loop.signatures[0])
    lane = "float" if dtype == np.float32 else "double"
    assert re.search(rf"<\d+ x {lane}>", ir), op
    assert not re.search(r"call [^\n]*@(llvm\.)?(log|exp|tan|sin|cos|atan|asin|acos|pow)", ir), op


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_heavy_ops_on_strided_runs_gather_in_stages(dtype):
    """A heavy op's strided runs gather their inputs STAGE elements at a time into stack
    buffers: runs of several stages (and a partial one), strides 2 and -3, a broadcast
    input, and a strided output (the unstaged loop) give the dense path's bits, which are
    NumPy's within the ops' tolerance."""
    from strided.kernels.common import STAGE

    rng = np.random.default_rng(21)
    n = 3 * STAGE + 7
    x = (rng.standard_normal(4 * n) * 3).astype(dtype)
    y = (rng.random(4 * n) + 0.5).astype(dtype)
    dense = Layout.contiguous((2, n))
    for xl in (Layout((2, n), (2 * n, 2), 0), Layout((2, n), (1, -3), 3 * (n - 1) + 1)):
        xv = view(x, xl).copy()
        for ol in (dense, Layout((2, n), (1, 2), 0)):
            out, ref = np.zeros(4 * n, dtype), np.empty(2 * n, dtype)
            ew.unary("exp", x, xl, out, ol)
            ew.unary("exp", xv.ravel(), dense, ref, dense)
            assert view(out, ol).tobytes() == ref.reshape(2, n).tobytes()
            np.testing.assert_allclose(view(out, ol), np.exp(xv), rtol=4e-7 if dtype == "float32" else 1e-15)
        yl = Layout((2, n), (0, 1), 0)  # one row read by both: stride 0 between rows
        out, ref = np.zeros(2 * n, dtype), np.empty(2 * n, dtype)
        ew.binary("atan2", x, xl, y, yl, out, dense)
        ew.binary("atan2", xv.ravel(), dense, np.tile(y[:n], 2), dense, ref, dense)
        assert out.tobytes() == ref.tobytes()
        np.testing.assert_allclose(out.reshape(2, n), np.arctan2(xv, view(y, yl)), rtol=2e-6, atol=1e-7)


def test_relu_and_extrema_keep_nan():
    x = np.array([np.nan, -1.0, 2.0, -np.inf, np.inf, -0.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 0.0, 3.0, 0.0], np.float32)
    L = Layout.contiguous((6,))
    out = np.empty(6, np.float32)
    ew.unary("relu", x, L, out, L)
    assert np.isnan(out[0]) and list(out[1:5]) == [0.0, 2.0, 0.0, np.inf]
    for op, f in (("maximum", np.maximum), ("minimum", np.minimum)):
        ew.binary(op, x, L, y, L, out, L)
        np.testing.assert_array_equal(out, f(x, y))


def test_integer_arithmetic_wraps_like_numpy():
    L = Layout.contiguous((4,))
    a = np.array([250, 3, 0, 255], np.uint8)
    b = np.array([10, 5, 1, 255], np.uint8)
    out = np.empty(4, np.uint8)
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
        ew.binary(op, a, L, b, L, out, L)
        np.testing.assert_array_equal(out, f(a, b))
    big = np.array([2**62, -(2**63), 2**63 - 1, 7], np.int64)
    out64 = np.empty(4, np.int64)
    ew.binary("add", big, L, big, L, out64, L)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out64, big + big)
    ew.unary("neg", a, L, out, L)
    np.testing.assert_array_equal(out, np.negative(a))


# ---------------------------------------------------------------------------
# output_layout


def test_output_layout_order():
    L = Layout.contiguous((5, 6))
    T = Layout.contiguous((6, 5)).transpose(0, 1)
    assert ew.output_layout((5, 6), L, L) == Layout.contiguous((5, 6))
    assert ew.output_layout((5, 6), T, T) == Layout.column_major((5, 6))
    assert ew.output_layout((5, 6), L, T) == Layout.contiguous((5, 6))  # mixed: the first operand's order
    assert ew.output_layout((5, 6), T, L) == Layout.column_major((5, 6))
    bias = Layout((6,)).broadcast_as((5, 6))
    assert ew.output_layout((5, 6), bias, T) == Layout.column_major((5, 6))  # zero strides have no say
    assert ew.output_layout((), Layout(())) == Layout(())
    assert ew.output_layout((0, 3), Layout.contiguous((0, 3))).numel == 0
    assert ew.output_layout((2, 3)) == Layout.contiguous((2, 3))
    assert ew.output_layout((5, 6), L.flip(1), L.flip(0)) == Layout.contiguous((5, 6))
    # a permuted 3-D input gives the output of the same dim order
    P = Layout.contiguous((4, 2, 3)).permute((2, 0, 1))
    o = ew.output_layout(P.shape, P)
    assert o.stride == P.stride and o.offset == 0


@settings(max_examples=100)
@given(data=st.data())
def test_output_layout_is_dense_and_follows_numpy_order(data):
    shape = data.draw(shapes(max_rank=5))
    al, _ = data.draw(layouts(shape, broadcast=False))
    o = ew.output_layout(shape, al, al)
    assert o.offset == 0 and o.shape == shape
    # dense: the strides of the dims of size > 1, sorted, are the running products
    dims = sorted((abs(s), n) for n, s in zip(shape, o.stride) if n > 1)
    acc = 1
    for s, n in dims:
        assert s == acc
        acc *= n
    if 0 not in shape:
        # the same order as NumPy's order='K' allocation of a ufunc result
        a = np.lib.stride_tricks.as_strided(
            np.zeros(1 << 12, np.float32)[al.offset :], shape, tuple(4 * s for s in al.stride)
        )
        res = np.add(a, a)
        big = [d for d in range(len(shape)) if shape[d] > 1]
        ours = sorted(big, key=lambda d: -o.stride[d])
        theirs = sorted(big, key=lambda d: -res.strides[d])
        assert ours == theirs


# ---------------------------------------------------------------------------
# hostile inputs: rejected before any memory access


def test_rejects_layouts_outside_the_buffer():
    buf = np.zeros(10, np.float32)
    out = np.full(10, 7.0, np.float32)
    L = Layout.contiguous((2, 5))
    for bad in (
        Layout((2, 5), (5, 1), 1),  # one past the end
        Layout((2, 5), (-5, 1), 4),  # a negative stride reaching below 0
        Layout((2, 5), (1 << 62, 1), 0),  # a huge stride
        Layout((2, 5), (5, 1), -1),  # a negative offset
    ):
        with pytest.raises(LayoutBoundsError):
            ew.binary("add", buf, L, buf, bad, out, L)
        with pytest.raises(LayoutBoundsError):
            ew.unary("exp", buf, L, out, bad)
        with pytest.raises(LayoutBoundsError):
            ew.where(buf > 0, bad, buf, L, buf, L, out, L)
    assert (out == 7.0).all()


def test_rejects_bad_operands():
    buf = np.zeros(6, np.float32)
    out = np.full(6, 7.0, np.float32)
    L = Layout.contiguous((2, 3))
    with pytest.raises(ShapeError):
        ew.binary("add", buf, L, buf, Layout.contiguous((3, 2)), out, L)
    with pytest.raises(StridedError):  # the output would write one element twice
        ew.unary("neg", buf, Layout((3,)).broadcast_as((2, 3)), out, Layout((3,)).broadcast_as((2, 3)))
    with pytest.raises(DTypeError):
        ew.binary("add", buf, L, buf.astype(np.float64), L, out, L)
    with pytest.raises(DTypeError):
        ew.binary("lt", buf, L, buf, L, out, L)  # comparisons write bool
    with pytest.raises(DTypeError):
        ew.unary("exp", buf.astype(np.int64), L, out.astype(np.int64), L)  # float-only op
    with pytest.raises(DTypeError):
        ew.binary("div", buf.astype(np.int64), L, buf.astype(np.int64), L, out.astype(np.int64), L)
    with pytest.raises(DTypeError):  # half is read as f32 but stored as itself
        ew.unary("neg", buf.astype(np.float16), L, out, L)
    with pytest.raises(DTypeError):  # f16 computes in f32, not f64
        ew.binary("add", buf.astype(np.float16), L, buf.astype(np.float64), L, out.astype(np.float64), L)
    with pytest.raises(DTypeError):
        ew.unary("neg", buf.astype(np.float16).view(np.uint16), L, out.astype(np.float16).view(np.uint16), L)
    with pytest.raises(DTypeError):
        ew.where(buf, L, buf, L, buf, L, out, L)  # the condition must be bool
    with pytest.raises(StridedError):
        ew.unary("neg", buf.reshape(2, 3), L, out, L)
    with pytest.raises(StridedError):
        ew.unary("neg", buf[::2], Layout((3,)), out, Layout((3,)))
    ro = np.zeros(6, np.float32)
    ro.flags.writeable = False
    with pytest.raises(StridedError):
        ew.unary("neg", buf, L, ro, L)
    with pytest.raises(StridedError):
        ew.unary("nope", buf, L, out, L)
    with pytest.raises(StridedError):
        ew.binary("nope", buf, L, buf, L, out, L)
    assert (out == 7.0).all()


def test_a_chain_of_heavy_ops_is_inlined_into_vector_loops():
    """A fused chain of two transcendental functions, compiled after both functions were
    compiled for eager kernels, is computed inside the loops (no call per element, which
    would keep the loop scalar): the expression's IR goes into each loop."""
    import re

    from numba import njit, types

    from strided.kernels.loops import kernel_set

    x = np.linspace(-3, 3, 64, dtype=np.float32)
    L = Layout.contiguous((64,))
    for op in ("exp", "tanh"):
        ew.unary(op, x, L, np.empty(64, np.float32), L)
    src = ("from strided.kernels.optable import OPS\n\n"
           "E = OPS['exp'].fn('float32')\nT = OPS['tanh'].fn('float32')\n\n\n"
           "def expr(a0):\n    return T(E(a0))\n")
    runs = njit(error_model="numpy")(kernel_set(1, src, "test_chain")[(False, False)].py_func)
    arr = types.Array(types.float32, 1, "C")
    sig = (arr, arr, types.Array(types.int64, 2, "C", readonly=True), types.int64, types.int64)
    runs.compile(sig)
    ir = runs.inspect_llvm(sig)
    assert not re.search(r"call [^\n]*expr", ir), "the expression is called, not inlined"
    assert re.search(r"<\d+ x float>", ir), "no loop over the expression is vectorised"


def test_float32_sin_and_cos_are_rounded_once_over_the_whole_range():
    """f32 sin and cos reduce every f32 exactly (below 2^24 by three parts of pi/2, above by
    the table of 2/pi) and compute in f64: within 0.51 ulp of the exact value (libm's f64
    result), odd and even, with NumPy's special values."""
    rng = np.random.default_rng(5)
    near = (np.arange(1, 200_000) * (np.pi / 2)).astype(np.float32)  # the f32s nearest k pi/2
    x = np.concatenate([
        rng.uniform(-10, 10, 200_000).astype(np.float32),
        np.nextafter(near, np.float32(np.inf)), near, np.nextafter(near, np.float32(0)),
        np.array([2.0**24, -2.0**24, 2.0**24 - 1, 2.0**24 + 2], np.float32),
        # the f32s nearest a multiple of pi/2 from 2^24 on (found by search): 2^-30 of a quadrant
        np.array([16367173 * 2.0**k for k in (72, 73, 74)] + [10741887 * 2.0**k for k in (11, 12)], np.float32),
        rng.integers(0, 0x7F7FFFFF, 400_000).astype(np.int32).view(np.float32),  # every exponent
        np.array([0.0, -0.0, 1e-45, -1e-45, 1.1754944e-38, 3.4028235e38, -3.4028235e38, 102940.0, 1e22,
                  np.inf, -np.inf, np.nan], np.float32),
    ])
    x = np.concatenate([x, -x])
    L = Layout.contiguous(x.shape)
    for op, fn in (("sin", np.sin), ("cos", np.cos)):
        out = np.empty_like(x)
        ew.unary(op, x, L, out, L)
        with np.errstate(invalid="ignore"):
            ref = fn(x.astype(np.float64))
        fin = np.isfinite(x)
        assert np.isnan(out[~fin]).all(), op
        r32 = ref[fin].astype(np.float32)
        tiny = np.float32(2.0**-126)
        ulp = np.abs(out[fin].astype(np.float64) - ref[fin]) / np.spacing(np.maximum(np.abs(r32), tiny))
        assert ulp.max() <= 0.51, (op, ulp.max(), x[fin][np.argmax(ulp)])
        assert np.array_equal(np.signbit(out[fin]), np.signbit(r32)), op  # sin(-0.0) is -0.0


def test_float32_expm1_is_rounded_once_over_the_whole_range():
    """f32 expm1 computes in f64 (exp(x) - 1, or its series below 1e-3, where the
    subtraction would cancel) and rounds once: within 0.51 ulp, signed zeros, overflow to
    inf, -1 at -inf and NaN as NumPy gives them."""
    rng = np.random.default_rng(6)
    x = np.concatenate([
        rng.uniform(-1, 1, 200_000), rng.uniform(-1.1e-3, 1.1e-3, 200_000), rng.uniform(-110, 95, 200_000),
        rng.integers(0, 0x7F7FFFFF, 200_000).astype(np.int32).view(np.float32).astype(np.float64),
        [0.0, 1e-45, 1e-3, 88.72283, 88.7229, np.inf, np.nan],
    ]).astype(np.float32)
    x = np.concatenate([x, -x])
    L = Layout.contiguous(x.shape)
    out = np.empty_like(x)
    ew.unary("expm1", x, L, out, L)
    with np.errstate(over="ignore"):
        ref = np.expm1(x.astype(np.float64))
        r32 = ref.astype(np.float32)
    assert np.array_equal(np.isnan(out), np.isnan(r32)) and np.array_equal(np.isinf(out), np.isinf(r32))
    assert np.array_equal(np.signbit(out), np.signbit(r32))  # expm1(-0.0) is -0.0
    fin = np.isfinite(r32)
    tiny = np.float32(2.0**-126)
    ulp = np.abs(out[fin].astype(np.float64) - ref[fin]) / np.spacing(np.maximum(np.abs(r32[fin]), tiny))
    assert ulp.max() <= 0.51, (ulp.max(), x[fin][np.argmax(ulp)])


def _rounded_once(op, out, ref, *args):
    """out (f32) against ref (the f64 result): NaN, infinity and sign as ref's f32
    rounding has them, and the finite values within 0.51 ulp of ref."""
    r32 = ref.astype(np.float32)
    bad = np.isnan(out) != np.isnan(r32)
    assert not bad.any(), (op, [a[bad][:5] for a in args], out[bad][:5])
    num = ~np.isnan(r32)
    assert np.array_equal(out[num & np.isinf(r32)], r32[num & np.isinf(r32)]), op
    bad = num & (np.signbit(out) != np.signbit(r32))
    assert not bad.any(), (op, [a[bad][:5] for a in args], out[bad][:5])
    fin = np.isfinite(r32)
    tiny = np.float32(2.0**-126)
    ulp = np.abs(out[fin].astype(np.float64) - ref[fin]) / np.spacing(np.maximum(np.abs(r32[fin]), tiny))
    assert ulp.max() <= 0.51, (op, ulp.max(), [a[fin][np.argmax(ulp)] for a in args])


F32_SPECIALS = np.array([0.0, 1e-45, 1.1754944e-38, 1e-4, 0.5, 0.999, 1.0, 1.0000001, 2.0, 3.0, 88.7, 89.5, 1e20,
                         3.4028235e38, np.inf, np.nan], np.float32)


def _any_f32(rng, n):
    return rng.integers(0, 0x7F800000, n).astype(np.int32).view(np.float32)  # every exponent


@pytest.mark.parametrize("op, fn, lo, hi", [
    ("atan", np.arctan, -5, 5), ("asin", np.arcsin, -1, 1), ("acos", np.arccos, -1, 1), ("tan", np.tan, -10, 10),
    ("sinh", np.sinh, -95, 95), ("cosh", np.cosh, -95, 95), ("asinh", np.arcsinh, -5, 5),
    ("acosh", np.arccosh, 1, 5), ("atanh", np.arctanh, -1, 1)])
def test_float32_functions_computed_in_f64_are_rounded_once(op, fn, lo, hi):
    """f32 atan, asin, acos, tan and the hyperbolic functions and their inverses compute in
    f64 without cancellation (tan on sin's exact reduction) and round once: within 0.51 ulp of
    the exact value (NumPy's f64 result) over their domain, near its ends and near 0, over
    every exponent, with NumPy's NaNs, infinities and signed zeros."""
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.uniform(lo, hi, 200_000), rng.uniform(-1e-3, 1e-3, 50_000), lo + rng.uniform(0, 1e-5, 50_000),
        hi - rng.uniform(0, 1e-5, 50_000), _any_f32(rng, 200_000), (np.arange(1, 50_000) * (np.pi / 2)),
    ]).astype(np.float32)
    x = np.concatenate([x, F32_SPECIALS])
    x = np.concatenate([x, -x])
    L = Layout.contiguous(x.shape)
    out = np.empty_like(x)
    ew.unary(op, x, L, out, L)
    with np.errstate(all="ignore"):
        ref = fn(x.astype(np.float64))
    _rounded_once(op, out, ref, x)


@pytest.mark.parametrize("op, fn", [("pow", np.power), ("atan2", np.arctan2), ("hypot", np.hypot),
                                    ("logaddexp", np.logaddexp)])
def test_float32_binary_functions_computed_in_f64_are_rounded_once(op, fn):
    """f32 pow (exp(y log|x|)), atan2, hypot and logaddexp compute in f64 and round once:
    within 0.51 ulp, and every pair of special values (signed zeros, ones, integers odd and
    even, infinities, NaN) as C99's tables and NumPy's f64 give them: 1^NaN and NaN^0 are 1,
    (-1)^inf is 1, (-0)^-3 is -inf, atan2(-0, -0) is -pi, hypot(inf, NaN) is inf."""
    rng = np.random.default_rng(8)
    n = 200_000
    sign = np.where(rng.random(n) < 0.5, -1, 1).astype(np.float32)
    if op == "pow":
        a = np.concatenate([rng.uniform(0, 10, n), rng.uniform(-3, 3, n), _any_f32(rng, n),
                            1 + rng.normal(0, 1e-6, n)])
        b = np.concatenate([rng.uniform(-30, 30, n), rng.integers(-20, 20, n), rng.uniform(-3, 3, n),
                            rng.uniform(-1e6, 1e6, n)])
    else:
        near = rng.uniform(-100, 100, n)  # and operands close to each other
        a = np.concatenate([rng.uniform(-5, 5, n), _any_f32(rng, n) * sign, near])
        b = np.concatenate([rng.uniform(-5, 5, n), _any_f32(rng, n), near + rng.normal(0, 1e-3, n)])
    special = np.concatenate([F32_SPECIALS, -F32_SPECIALS, np.float32([-0.5, -2.5, 2.5, 5.0, -5.0])])
    a, b, out = binary_with_special_pairs(op, a.astype(np.float32), b.astype(np.float32), special)
    with np.errstate(all="ignore"):
        ref = fn(a.astype(np.float64), b.astype(np.float64))
    _rounded_once(op, out, ref, a, b)


def test_squares_by_pow_are_rounded_once():
    """x ** 2 is x x rounded once, as NumPy's square: the f32 4097^2 lies halfway between
    two f32s and goes to the even one, where exp(2 log x) would fall on either side; f64
    squares (computed without libm's pow) give NumPy's bits, infinities and NaN too."""
    x = np.arange(4097, 5793, 2, dtype=np.float32)  # odd, squares of 25 bits: every one a tie
    d = np.random.default_rng(9).normal(0, 1e10, 10_000)
    for x in (np.concatenate([x, -x, x * np.float32(2.0**-70)]), np.concatenate([d, [np.inf, -np.inf, np.nan, -0.0]])):
        L = Layout.contiguous(x.shape)
        out = np.empty_like(x)
        ew.binary("pow", x, L, np.full_like(x, 2), L, out, L)
        assert np.array_equal(out, np.square(x), equal_nan=True)
