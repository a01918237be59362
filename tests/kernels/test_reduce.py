"""Reduction kernels against NumPy, over random layouts of flat buffers.

The source is a Layout over a flat buffer and the same view in NumPy (via
``as_strided``, after validation); the oracle is NumPy's reduction of that view
with ``keepdims=True``.  Float sums are compared with a tolerance scaled by
the sum of magnitudes (the summation order differs, legitimately); everything
else must match exactly.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strided.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError, StridedIndexError
from strided.kernels import PARALLEL_MIN
from strided.kernels.common import CHUNKS_PER_THREAD, MAX_WIDTH
from strided.kernels import reduce as red
from strided.layout import Layout
from test_elementwise import covered, fill, layouts, sentinel, shapes, view

NP_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


def keep_shape(shape, dims):
    return tuple(1 if d in dims else n for d, n in enumerate(shape))


@st.composite
def reduce_problems(draw, dtype, out_dtype, max_rank=6, all_dims=None):
    shape = draw(shapes(max_rank=max_rank))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lay, n = draw(layouts(shape))
    src = fill(rng, n, dtype)
    if dtype in ("float32", "float64") and draw(st.booleans()):
        src = np.round(src).astype(dtype)  # many ties
    nd = len(shape)
    if all_dims is None:
        dims = tuple(d for d in range(nd) if draw(st.booleans()))
    else:
        dims = tuple(range(nd))
    ks = keep_shape(shape, dims)
    if draw(st.booleans()):
        olay = Layout.contiguous(ks)
        on = max(olay.numel, 1) + 1
    else:
        olay, on = draw(layouts(ks, broadcast=False))
    out = sentinel(on, out_dtype)
    return shape, src, lay, dims, out, olay


def check(out, before, olay, want, *, sum_scale=None, rtol=0.0):
    mask = covered(olay, len(out))
    assert out[~mask].tobytes() == before[~mask].tobytes(), "wrote outside the output layout"
    got = view(out, olay)
    want = np.asarray(want)
    assert got.shape == want.shape
    if sum_scale is None and not rtol:
        np.testing.assert_array_equal(got, want.astype(got.dtype))
        return
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    tol = rtol * np.abs(want[fin])
    if sum_scale is not None:
        tol = tol + sum_scale[fin]
    assert np.all(np.abs(got[fin].astype(np.float64) - want[fin]) <= tol)


SUM_CASES = [("float32", "float32"), ("float64", "float64"), ("float32", "float64")]
SUM_CASES += [(d, "int64") for d in ("uint8", "uint32", "int64", "bool")]


@pytest.mark.parametrize("dtype,out_dtype", SUM_CASES)
@settings(max_examples=50)
@given(data=st.data())
def test_sum_matches_numpy(dtype, out_dtype, data):
    shape, src, lay, dims, out, olay = data.draw(reduce_problems(dtype, out_dtype))
    before = out.copy()
    red.reduce("sum", src, lay, dims, out, olay)
    v = view(src, lay)
    if out_dtype.startswith("float"):
        with np.errstate(all="ignore"):
            want = np.sum(v.astype(np.float64), axis=dims, keepdims=True)
            scale = np.sum(np.abs(v.astype(np.float64)), axis=dims, keepdims=True)
        eps = np.finfo(out_dtype).eps
        check(out, before, olay, want, sum_scale=16 * eps * scale, rtol=4 * eps)
    else:
        check(out, before, olay, np.sum(v, axis=dims, keepdims=True, dtype=np.int64))


MAX_MIN_CASES = [("max", d) for d in ("float32", "float64", "uint8", "uint32", "int64", "bool")]
MAX_MIN_CASES += [("min", d) for d in ("float32", "int64")]


@pytest.mark.parametrize("op,dtype", MAX_MIN_CASES)
@settings(max_examples=40)
@given(data=st.data())
def test_max_min_match_numpy(op, dtype, data):
    shape, src, lay, dims, out, olay = data.draw(reduce_problems(dtype, dtype))
    before = out.copy()
    if any(shape[d] == 0 for d in dims) and olay.numel:
        with pytest.raises(ShapeError):
            red.reduce(op, src, lay, dims, out, olay)
        return
    red.reduce(op, src, lay, dims, out, olay)
    want = NP_REDUCE[op](view(src, lay), axis=dims, keepdims=True) if olay.numel else np.empty(olay.shape, dtype)
    check(out, before, olay, want)  # NaN propagates: compared exactly


@pytest.mark.parametrize("dtype", ["float64", "int64"])
@settings(max_examples=40)
@given(data=st.data())
def test_prod_matches_numpy(dtype, data):
    shape, src, lay, dims, out, olay = data.draw(reduce_problems(dtype, dtype, max_rank=4))
    if dtype == "float64":
        src = np.clip(src, -2, 2)  # keep products finite and well scaled
    before = out.copy()
    red.reduce("prod", src, lay, dims, out, olay)
    with np.errstate(all="ignore"):
        want = np.prod(view(src, lay), axis=dims, keepdims=True)
    if dtype == "float64":
        check(out, before, olay, want, rtol=1e-12)
    else:
        check(out, before, olay, want)


@pytest.mark.parametrize("op,dtype", [("argmax", "float32"), ("argmax", "int64"), ("argmax", "bool"),
                                      ("argmin", "float32")])
@settings(max_examples=50)
@given(data=st.data())
def test_arg_reduce_matches_numpy(op, dtype, data):
    shape = data.draw(shapes(max_rank=6).filter(lambda s: len(s) > 0))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lay, n = data.draw(layouts(shape))
    src = fill(rng, n, dtype)
    if dtype == "float32" and data.draw(st.booleans()):
        src = np.round(src / 2).astype(dtype)  # ties: the first occurrence must win
    dim = data.draw(st.integers(0, len(shape) - 1))
    ks = keep_shape(shape, (dim,))
    olay, on = data.draw(layouts(ks, broadcast=False))
    out = np.full(on, -7, np.int64)
    before = out.copy()
    if shape[dim] == 0 and olay.numel:
        with pytest.raises(ShapeError):
            red.arg_reduce(op, src, lay, dim, out, olay)
        return
    red.arg_reduce(op, src, lay, dim, out, olay)
    v = view(src, lay)
    want = getattr(np, op)(v, axis=dim, keepdims=True) if olay.numel else np.empty(ks, np.int64)
    check(out, before, olay, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint32", "bool"])
def test_arg_reduce_long_rows_match_numpy(dtype):
    """Rows of one to several ``ARG_BLOCK`` blocks (one pass of blocks, then the kept block
    searched): the extreme first met in a later block, ties across blocks, NaNs of both
    signs late in a row, both zeros, rows of -inf; forwards, backwards and down the
    columns of the transpose, as NumPy finds them."""
    rng = np.random.default_rng(17)
    b = red.ARG_BLOCK
    for n in (b - 1, b, b + 1, 3 * b + 5):
        for case in range(5):
            if dtype == "bool":
                a = rng.random((4, n)) < 0.02 * (case + 1)
            elif dtype.startswith("float"):
                a = np.round(rng.standard_normal((4, n)) * 2).astype(dtype)  # many ties
                if case == 1:
                    a[:, -3] = np.nan
                    a[1, b + 2 if n > b + 2 else 0] = -np.nan
                elif case == 2:
                    a[:] = 0.0
                    a[:, rng.integers(0, n, 5)] = -0.0
                elif case == 3:
                    a[:] = -np.inf
                elif case == 4:
                    a[:, n - 1] = 50.0  # the max only in the last block
                    a[:, n // 2] = -50.0
            else:
                a = rng.integers(0, 4, (4, n)).astype(dtype)
                a[:, n - 1] = 9 if case % 2 else a[:, n - 1]
            for lay in (Layout.contiguous((4, n)), Layout.contiguous((4, n)).flip(1)):
                for op in ("argmax", "argmin"):
                    out = np.full(4, -7, np.int64)
                    red.arg_reduce(op, a.ravel(), lay, 1, out, Layout.contiguous((4, 1)))
                    np.testing.assert_array_equal(out, getattr(np, op)(view(a.ravel(), lay), axis=1),
                                                  err_msg=f"{op} {dtype} n={n} case {case}")
            t = np.ascontiguousarray(a.T)
            for op in ("argmax", "argmin"):
                out = np.full(4, -7, np.int64)
                red.arg_reduce(op, t.ravel(), Layout.contiguous((n, 4)), 0, out, Layout.contiguous((1, 4)))
                np.testing.assert_array_equal(out, getattr(np, op)(t, axis=0), err_msg=f"{op} {dtype} n={n} T")


# ---------------------------------------------------------------------------
# dispatch, parallel splits and accuracy


def test_plans():
    L = Layout.contiguous((64, 32))
    assert red.plan(L, (1,)).case == red.INNER  # row sums
    assert red.plan(L, (0,)).case == red.OUTER  # column sums: rows accumulated
    assert red.plan(L, (0, 1)).case == red.INNER
    T = Layout.contiguous((32, 64)).transpose(0, 1)
    assert red.plan(T, (0,)).case == red.INNER  # memory order, not logical order
    assert red.plan(T, (1,)).case == red.OUTER
    p = red.plan(L.flip((0, 1)), (0, 1))
    assert p.rstrides == (1,) and p.rshape == (64 * 32,)  # flipped dims are read forwards, merged
    b = Layout((32,)).broadcast_as((64, 32))
    assert red.plan(b, (0,)).case == red.OUTER
    assert red.plan(L, ()).case == red.OUTER  # nothing reduced: a copy
    saved = red.get_num_threads
    red.get_num_threads = lambda: 2
    try:
        big = Layout.contiguous((4096, 4096))
        p = red.plan(big, (0,))  # column sums: the rows are split, each part reads whole rows
        assert p.case == red.OUTER and p.parallel and p.nrsplit > 1 and p.width == 4096
        p = red.plan(big, (0, 1))  # one output: its range is split
        assert p.case == red.INNER and p.parallel and p.nsplit > 1
        p = red.plan(big, (1,))
        assert p.case == red.INNER and p.parallel and p.nsplit == 1 and p.nchunks == 2 * CHUNKS_PER_THREAD
    finally:
        red.get_num_threads = saved


def _run_sum(src, lay, dims, dtype=np.float32):
    ks = keep_shape(lay.shape, dims)
    out = np.empty(max(int(np.prod(ks)), 1), dtype)
    red.reduce("sum", src, lay, dims, out, Layout.contiguous(ks))
    return out[: int(np.prod(ks))].reshape(ks)


@pytest.mark.parametrize(
    "shape",
    [(256, 256), (255, 257), (2, PARALLEL_MIN // 2 + 5), (PARALLEL_MIN + 3,), (3, 5, 4370), (4370, 3, 5), (9, 70, 111),
     (50, 3, 200)],
)
def test_sizes_around_the_parallel_threshold(shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(int(np.prod(shape))).astype(np.float32)
    L = Layout.contiguous(shape)
    v = a.reshape(shape).astype(np.float64)
    nd = len(shape)
    all_dims = [c for r in range(1, nd + 1) for c in combinations(range(nd), r)]
    for lay, vv in ((L, v), (Layout.contiguous(shape[::-1]).permute(tuple(range(nd))[::-1]), None)):
        if vv is None:
            vv = view(a, lay).astype(np.float64)
        for dims in all_dims:
            got = _run_sum(a, lay, dims)
            want = vv.sum(axis=dims, keepdims=True)
            scale = np.abs(vv).sum(axis=dims, keepdims=True)
            assert np.all(np.abs(got - want) <= 1e-6 * scale + 1e-6), (lay, dims)
        for dim in range(nd):
            for op in ("argmax", "argmin"):
                ks = keep_shape(shape, (dim,))
                out = np.empty(int(np.prod(ks)), np.int64)
                red.arg_reduce(op, a, lay, dim, out, Layout.contiguous(ks))
                np.testing.assert_array_equal(out.reshape(ks), getattr(np, op)(view(a, lay), axis=dim, keepdims=True))


@pytest.mark.parametrize("rows", [1, 2, red.FOLD - 1, red.FOLD, red.FOLD + 1, 2 * red.FOLD, 2 * red.FOLD + 3])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_outer_row_blocks(rows, op):
    """Column reductions fold rows in blocks of FOLD: every way the last block can end."""
    rng = np.random.default_rng(rows)
    for cols, stride in ((5, 5), (MAX_WIDTH + 7, MAX_WIDTH + 9)):
        a = rng.standard_normal(rows * stride).astype(np.float32)
        lay = Layout((rows, cols), (stride, 1))
        assert red.plan(lay, (0,)).case == red.OUTER
        out = np.empty(cols, np.float32)
        red.reduce(op, a, lay, (0,), out, Layout.contiguous((1, cols)))
        v = view(a, lay)
        want = v.astype(np.float64).sum(0) if op == "sum" else v.max(0)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        if op == "sum" and red.plan(lay, (0,)).nrsplit == 1:  # and, rows not split between
            # threads, exactly in the documented order: each column adds its rows one by one
            # within blocks of FOLD rows, and the blocks' sums one by one, all in f32
            total = None
            for b0 in range(0, rows, red.FOLD):
                block = np.float32(0.0) + v[b0]
                for r in range(b0 + 1, min(b0 + red.FOLD, rows)):
                    block = block + v[r]
                total = block if total is None else total + block
            np.testing.assert_array_equal(out, total)


def test_large_f32_sums_stay_accurate():
    """f32 accumulators, 4M elements: pairwise (rows) and blocked (columns) summation stay near f64."""
    n = 2048
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, n * n).astype(np.float32)
    L = Layout.contiguous((n, n))
    v64 = a.reshape(n, n).astype(np.float64)
    for dims in ((0,), (1,), (0, 1)):
        got = _run_sum(a, L, dims).astype(np.float64)
        want = v64.sum(axis=dims, keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        np.testing.assert_allclose(got, a.reshape(n, n).sum(axis=dims, keepdims=True), rtol=1e-5)
    # the same through a transposed view
    T = L.transpose(0, 1)
    for dims in ((0,), (1,)):
        np.testing.assert_allclose(_run_sum(a, T, dims), v64.T.sum(axis=dims, keepdims=True), rtol=1e-5)


@settings(max_examples=60)
@given(data=st.data())
def test_many_chunks_and_splits(data):
    """Force the parallel kernels with many chunks on small problems (splits of rows, columns and runs)."""
    shape, src, lay, dims, out, olay = data.draw(reduce_problems("float32", "float32", max_rank=4))
    nthreads = data.draw(st.integers(2, 9))
    saved = red.PARALLEL_MIN, red.get_num_threads
    red.PARALLEL_MIN, red.get_num_threads = 1, (lambda: nthreads)
    try:
        before = out.copy()
        red.reduce("sum", src, lay, dims, out, olay)
        arg_out = None
        if len(shape) and shape[0]:
            ks = keep_shape(shape, (0,))
            arg_out = np.empty(max(int(np.prod(ks)), 1), np.int64)
            red.arg_reduce("argmax", src, lay, 0, arg_out, Layout.contiguous(ks))
    finally:
        red.PARALLEL_MIN, red.get_num_threads = saved
    v = view(src, lay).astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.sum(v, axis=dims, keepdims=True)
        scale = np.sum(np.abs(v), axis=dims, keepdims=True)
    check(out, before, olay, want, sum_scale=2e-6 * scale, rtol=5e-7)
    if arg_out is not None:
        ks = keep_shape(shape, (0,))
        np.testing.assert_array_equal(
            arg_out[: int(np.prod(ks))].reshape(ks), np.argmax(view(src, lay), axis=0, keepdims=True)
        )


# ---------------------------------------------------------------------------
# edge cases and hostile inputs


def test_zero_size_and_trivial_reductions():
    src = np.zeros(4, np.float32)
    out = np.full(3, 9.0, np.float32)
    empty = Layout.contiguous((3, 0))
    red.reduce("sum", src, empty, (1,), out, Layout.contiguous((3, 1)))
    assert list(out) == [0.0, 0.0, 0.0]
    red.reduce("prod", src, empty, (1,), out, Layout.contiguous((3, 1)))
    assert list(out) == [1.0, 1.0, 1.0]
    with pytest.raises(ShapeError):
        red.reduce("max", src, empty, (1,), out, Layout.contiguous((3, 1)))
    with pytest.raises(ShapeError):
        red.arg_reduce("argmin", src, empty, 1, np.zeros(3, np.int64), Layout.contiguous((3, 1)))
    red.reduce("sum", src, Layout.contiguous((0, 3)), (1,), out, Layout.contiguous((0, 1)))  # nothing to write
    # rank 0 and dims=()
    one = np.array([2.5], np.float32)
    o = np.zeros(1, np.float32)
    red.reduce("max", one, Layout(()), (), o, Layout(()))
    assert o[0] == 2.5
    a = np.arange(6, dtype=np.int64)
    o6 = np.zeros(6, np.int64)
    red.reduce("sum", a, Layout.contiguous((2, 3)).transpose(0, 1), (), o6, Layout.contiguous((3, 2)))
    np.testing.assert_array_equal(o6, a.reshape(2, 3).T.reshape(-1))
    o3 = np.full(6, -1, np.int64)
    red.arg_reduce("argmax", a, Layout.contiguous((2, 1, 3)), 1, o3, Layout.contiguous((2, 1, 3)))
    assert (o3 == 0).all()  # a dim of size 1: every index is 0


def test_nan_and_ties():
    x = np.array([1.0, np.nan, 3.0, np.nan, 3.0, -1.0], np.float32)
    L = Layout.contiguous((6,))
    o = np.zeros(1, np.float32)
    oi = np.zeros(1, np.int64)
    for op in ("max", "min"):
        red.reduce(op, x, L, (0,), o, Layout.contiguous((1,)))
        assert np.isnan(o[0])
    for op in ("argmax", "argmin"):
        red.arg_reduce(op, x, L, 0, oi, Layout.contiguous((1,)))
        assert oi[0] == 1  # the first NaN
    y = np.array([3.0, 1.0, 3.0, 1.0], np.float32)
    L4 = Layout.contiguous((4,))
    red.arg_reduce("argmax", y, L4, 0, oi, Layout.contiguous((1,)))
    assert oi[0] == 0
    red.arg_reduce("argmin", y, L4, 0, oi, Layout.contiguous((1,)))
    assert oi[0] == 1
    red.arg_reduce("argmax", y, L4.flip(0), 0, oi, Layout.contiguous((1,)))
    assert oi[0] == 1  # logical index in the flipped view: [1, 3, 1, 3]


def test_rejects_hostile_layouts_and_arguments():
    src = np.arange(12, dtype=np.float32)
    out = np.full(4, 7.0, np.float32)
    L = Layout.contiguous((3, 4))
    O = Layout.contiguous((1, 4))
    for bad in (Layout((3, 4), (4, 1), 1), Layout((3, 4), (-4, 1), 0), Layout((3, 4), (1 << 61, 1), 0)):
        with pytest.raises(LayoutBoundsError):
            red.reduce("sum", src, bad, (0,), out, O)
        with pytest.raises(LayoutBoundsError):
            red.arg_reduce("argmax", src, bad, 0, np.zeros(4, np.int64), O)
    with pytest.raises(LayoutBoundsError):
        red.reduce("sum", src, L, (0,), out, Layout((1, 4), (4, 1), 1))
    with pytest.raises(ShapeError):
        red.reduce("sum", src, L, (0,), out, Layout.contiguous((4,)))  # not the keepdim shape
    with pytest.raises(StridedIndexError):
        red.reduce("sum", src, L, (1, 0), out, O)
    with pytest.raises(StridedIndexError):
        red.reduce("sum", src, L, (2,), out, O)
    with pytest.raises(StridedError):
        red.reduce("sum", src, L, (1,), out, Layout((3, 1), (0, 1)))  # would write one element 3 times
    with pytest.raises(DTypeError):
        red.arg_reduce("argmax", src, L, 0, out, O)  # int64 output required
    with pytest.raises(DTypeError):
        red.reduce("sum", src, L, (0,), np.zeros(4, np.float16), O)  # a half output
    with pytest.raises(StridedError):
        red.reduce("mean", src, L, (0,), out, O)
    with pytest.raises(StridedError):
        red.arg_reduce("argmax", src, L, (0,), np.zeros(4, np.int64), O)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(StridedError):
        red.reduce("sum", src, L, (0,), ro, O)
    assert (out == 7.0).all()


# ---------------------------------------------------------------------------
# max and min of float rows: the leaves reduce integer keys of the bits (``_extreme``),
# so every special value is placed at the edges of a leaf and of a row.

B = red.BLOCK
ROW_LENGTHS = [1, 2, 33, B - 1, B, B + 1, 2 * B + 37]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0]


def row_layout(rows, n, step, outer):
    """A (rows, n) layout, reduced along dim 1: INNER (n's stride ``step``) or OUTER (the
    rows' dim innermost, n's stride ``rows * step``), over a buffer of rows * n * |step|."""
    a = abs(step)
    rs, cs = (a, rows * step) if outer else (n * a, step)
    off = (n - 1) * abs(cs) if cs < 0 else 0
    return Layout((rows, n), (rs, cs), off), rows * n * a


def positions(n):
    """Where a special value goes in a row: first, middle, last, and past the last full leaf."""
    tail = B * (n // B) + (n % B) // 2 if n % B else n - 1
    return sorted({0, n // 2, n - 1, tail})


def special_rows(rng, dtype, n, step, outer):
    """Rows of random values, each special value at each position, and rows all -inf / all +inf."""
    cases = [(v, j) for v in SPECIALS for j in positions(n)]
    rows = len(cases) + 3
    lay, size = row_layout(rows, n, step, outer)
    buf = (rng.standard_normal(size) * 100).astype(dtype)
    idx = view(np.arange(size), lay)  # the flat index of every element of the (rows, n) view
    for r, (v, j) in enumerate(cases):
        buf[idx[r, j]] = v
    buf[idx[len(cases)]] = -np.inf
    buf[idx[len(cases) + 1]] = np.inf
    return buf, lay


@pytest.mark.parametrize("outer", [False, True], ids=["inner", "outer"])
@pytest.mark.parametrize("step", [1, 3, -1, -2])
@pytest.mark.parametrize("n", ROW_LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_min_rows_with_special_values_match_numpy(dtype, n, step, outer):
    buf, lay = special_rows(np.random.default_rng(n), dtype, n, step, outer)
    if n > 1:
        assert red.plan(lay, (1,)).case == (red.OUTER if outer else red.INNER)
    v = view(buf, lay)
    for op in ("max", "min"):
        out = np.full(lay.shape[0], 7.0, dtype)
        red.reduce(op, buf, lay, (1,), out, Layout.contiguous((lay.shape[0], 1)))
        want = NP_REDUCE[op](v, axis=1)
        np.testing.assert_array_equal(out, want)  # NaN where NumPy has one; -0.0 == +0.0
        assert np.array_equal(np.isnan(out), np.any(np.isnan(v), axis=1))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(max_examples=60)
@given(data=st.data())
def test_max_min_of_drawn_rows_match_numpy(op, dtype, data):
    """Row lengths around BLOCK, any stride, special values anywhere, INNER and OUTER."""
    rows = data.draw(st.integers(1, 5))
    n = data.draw(st.one_of(st.integers(1, 70), st.integers(B - 3, B + 3), st.integers(2 * B - 2, 3 * B)))
    step = data.draw(st.sampled_from([1, 1, 2, -1, -3]))
    lay, size = row_layout(rows, n, step, data.draw(st.booleans()))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    buf = (rng.standard_normal(size) * 10).astype(dtype)
    k = rng.integers(0, size, data.draw(st.integers(0, 6)))
    buf[k] = rng.choice(np.array(SPECIALS + [np.finfo(dtype).max, -np.finfo(dtype).tiny / 4], dtype), len(k))
    if data.draw(st.booleans()):
        buf = np.round(buf)  # ties
    out = np.full(rows, 7.0, dtype)
    red.reduce(op, buf, lay, (1,), out, Layout.contiguous((rows, 1)))
    np.testing.assert_array_equal(out, NP_REDUCE[op](view(buf, lay), axis=1))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_min_sign_of_zero_and_which_nan(dtype):
    """As the module docstring says: within a leaf max ranks -0.0 below +0.0 (NumPy returns
    whichever zero comes last in these two), and the NaN returned is the one with the
    largest payload, its sign cleared."""
    L = Layout.contiguous((1, 2))
    out = np.zeros(1, dtype)
    for pair in ([-0.0, 0.0], [0.0, -0.0]):
        x = np.array(pair, dtype)
        red.reduce("max", x, L, (1,), out, Layout.contiguous((1, 1)))
        assert out[0] == 0 and not np.signbit(out[0])
        red.reduce("min", x, L, (1,), out, Layout.contiguous((1, 1)))
        assert out[0] == 0 and np.signbit(out[0])
    bits = np.int32 if dtype == "float32" else np.int64
    quiet = np.array([np.nan], dtype).view(bits)[0]
    sign = bits(np.iinfo(bits).min)
    x = np.array([1.0, 2.0, 3.0, 4.0], dtype)
    x.view(bits)[1] = quiet | 1
    x.view(bits)[2] = sign | quiet | 5  # the largest payload, negative
    for op in ("max", "min"):
        red.reduce(op, x, Layout.contiguous((1, 4)), (1,), out, Layout.contiguous((1, 1)))
        assert out.view(bits)[0] == quiet | 5


@pytest.mark.parametrize("outer", [False, True], ids=["inner", "outer"])
@pytest.mark.parametrize("step", [1, -2])
@pytest.mark.parametrize("n", [33, B + 1, 2 * B + 37])
@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_max_min_half_rows_with_special_values(dname, n, step, outer):
    """Half leaves decode into f32 scratch (at stride 1, or 2 for a strided run) and take
    the f32 path: NumPy's result on the f32 values, and the bits of the f32 copy's."""
    from test_half_elementwise import HALVES

    dt = HALVES[dname]
    f32, lay = special_rows(np.random.default_rng(n), "float32", n, step, outer)
    buf = f32.astype(dt)
    v = view(buf, lay).astype(np.float32)
    rows = lay.shape[0]
    for op in ("max", "min"):
        got, old = np.zeros(rows, np.float32), np.zeros(rows, np.float32)  # the caller rounds
        red.reduce(op, buf, lay, (1,), got, Layout.contiguous((rows, 1)))
        red.reduce(op, buf.astype(np.float32), lay, (1,), old, Layout.contiguous((rows, 1)))
        assert got.tobytes() == old.tobytes()
        want = NP_REDUCE[op](v, axis=1)
        np.testing.assert_array_equal(got, want)


def test_row_and_column_reductions_go_parallel_from_one_threshold(monkeypatch):
    # Row sums split the rows between the threads, column sums split the rows one part a
    # thread: both pay for the launch from the same size (docs/benchmarks.md).
    from strided.kernels.common import REDUCE_FACTOR

    monkeypatch.setattr(red, "get_num_threads", lambda: 2)
    rows = PARALLEL_MIN * REDUCE_FACTOR // 512
    at, below = Layout.contiguous((rows, 512)), Layout.contiguous((rows - 1, 512))
    for dims in ((1,), (0,)):
        assert red.plan(at, dims).parallel and not red.plan(below, dims).parallel
    p = red.plan(at, (0,))
    assert p.nrsplit == 2 and p.nchunks == 2  # one part of the rows a thread
