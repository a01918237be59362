"""f16 and bf16 reductions read in place (decoded to f32 as they are loaded).

Before, ``ops`` converted a half source to an f32 copy and reduced the copy in
f32; now the kernels take the half buffer.  Two oracles:

* bit for bit, the same reduction of the f32-converted buffer (what ran
  before), sums included: the accumulation order must not have changed.  One
  exception: which NaN a sum or product returns when it meets several (their
  signs and payloads differ).  LLVM treats fadd as commutative and x86 returns
  the first operand's NaN, so that choice follows register allocation, not the
  source; a NaN sum is only checked to be NaN.  max/min pick NaNs by an
  explicit select, so their NaN bits are compared too;
* NumPy on the f32 values: exactly for max, min, argmax and argmin (NaN
  propagation, first occurrence on ties), within test_reduce's tolerance for
  sums (NumPy adds in another order).

Compile time: every (op, half dtype, INNER/OUTER, serial/parallel) is one numba
compile, so the parallel kernels are exercised with sum, max, min and argmax only.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strided as sd
from strided.errors import DTypeError
from strided.kernels import PARALLEL_MIN
from strided.kernels import reduce as red
from strided.layout import Layout
from test_elementwise import layouts, sentinel, shapes, view
from test_half_elementwise import HALVES, fill, isnan
from test_reduce import check, keep_shape

OPS = ("sum", "prod", "max", "min")
ARG_OPS = ("argmax", "argmin")


def assert_same(op, got, old, *info):
    if op in ("sum", "prod"):
        nan = np.isnan(got)
        assert np.array_equal(nan, np.isnan(old)), info
        got, old = got[~nan], old[~nan]
    assert got.tobytes() == old.tobytes(), info


def reduce_both(op, src, lay, dims, out, olay):
    """Reduce the half buffer and its f32 conversion into copies of ``out``; both results."""
    got, old = out.copy(), out.copy()
    red.reduce(op, src, lay, dims, got, olay)
    red.reduce(op, src.astype(np.float32), lay, dims, old, olay)
    return got, old


def arg_both(op, src, lay, dim):
    ks = keep_shape(lay.shape, (dim,))
    got = np.full(max(int(np.prod(ks)), 1), -7, np.int64)
    old = got.copy()
    red.arg_reduce(op, src, lay, dim, got, Layout.contiguous(ks))
    red.arg_reduce(op, src.astype(np.float32), lay, dim, old, Layout.contiguous(ks))
    return got, old


def numpy_reduce(op, v, dims):
    """NumPy on the f32 values (f64 for sums, whose order differs anyway); keepdims."""
    with np.errstate(all="ignore"):
        if op == "sum":
            v64 = v.astype(np.float64)
            return np.sum(v64, axis=dims, keepdims=True), np.sum(np.abs(v64), axis=dims, keepdims=True)
        return getattr(np, op)(v, axis=dims, keepdims=True), None


def check_numpy(op, got, before, olay, v, dims):
    want, scale = numpy_reduce(op, v, dims)
    if op == "sum":
        # where f32 partial sums may overflow (bf16 reaches 3.4e38) only the bit-for-bit oracle speaks
        ok = scale < 1e37
        want = np.where(ok, want, view(got, olay))
        eps = np.finfo(np.float32).eps
        check(got, before, olay, want, sum_scale=16 * eps * np.where(ok, scale, 0), rtol=4 * eps)
    else:  # NaN where NumPy has NaN (assert_array_equal treats NaNs as equal), exact elsewhere
        check(got, before, olay, want)


@st.composite
def half_problems(draw, dname):
    shape = draw(shapes(max_rank=5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lay, n = draw(layouts(shape))
    src = fill(rng, n, HALVES[dname])
    if draw(st.booleans()):  # few distinct values: many ties, and no NaN half of the time
        src = rng.integers(-3, 4, n).astype(HALVES[dname])
        if draw(st.booleans()) and n:
            src[rng.integers(0, n, max(1, n // 16))] = np.nan
    dims = tuple(d for d in range(len(shape)) if draw(st.booleans()))
    ks = keep_shape(shape, dims)
    if draw(st.booleans()):
        olay, on = Layout.contiguous(ks), max(int(np.prod(ks)), 1) + 1
    else:
        olay, on = draw(layouts(ks, broadcast=False))
    return shape, src, lay, dims, sentinel(on, "float32"), olay


@pytest.mark.parametrize("dname", ["f16", "bf16"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_any_layout_matches_the_f32_copy_bit_for_bit(dname, data):
    """Every op, any layout and set of dims (INNER runs, OUTER rows, all dims, none), serial kernels."""
    shape, src, lay, dims, out, olay = data.draw(half_problems(dname))
    v = view(src, lay).astype(np.float32)
    for op in OPS:
        if op in ("max", "min") and any(shape[d] == 0 for d in dims):
            continue
        got, old = reduce_both(op, src, lay, dims, out, olay)
        assert_same(op, got, old, op, lay, dims)
        if op != "prod":
            check_numpy(op, got, out, olay, v, dims)
    for d in range(len(shape)):
        if shape[d] == 0 or lay.numel == 0:
            continue
        for op in ARG_OPS:
            got, old = arg_both(op, src, lay, d)
            ks = keep_shape(shape, (d,))
            np.testing.assert_array_equal(got, old)
            np.testing.assert_array_equal(got[: int(np.prod(ks))].reshape(ks),
                                          getattr(np, op)(v, axis=d, keepdims=True))


SIZES = [(PARALLEL_MIN - 1,), (PARALLEL_MIN + 3,), (2, PARALLEL_MIN // 2 + 5), (3, 5, 4370), (4370, 3, 5),
         (255, 257), (9, 70, 111)]


@pytest.mark.parametrize("dname", ["f16", "bf16"])
@pytest.mark.parametrize("shape", SIZES)
def test_sizes_around_the_parallel_threshold(dname, shape):
    """Serial and parallel plans (split runs, split rows), row-major and column-major, every set of dims."""
    rng = np.random.default_rng(len(shape) * 1000 + shape[0])
    n = int(np.prod(shape))
    src = (rng.standard_normal(n) * 3).astype(HALVES[dname])
    src[rng.integers(0, n, 3)] = np.nan  # max/min/argmax must find them wherever the split puts them
    src[: n // 7] = src[n // 7 : 2 * (n // 7)]  # repeated values: ties across parts
    nd = len(shape)
    all_dims = [c for r in range(1, nd + 1) for c in combinations(range(nd), r)]
    for lay in (Layout.contiguous(shape), Layout.contiguous(shape[::-1]).permute(tuple(range(nd))[::-1])):
        v = view(src, lay).astype(np.float32)
        for dims in all_dims:
            ks = keep_shape(shape, dims)
            olay = Layout.contiguous(ks)
            out = sentinel(int(np.prod(ks)), "float32")
            for op in ("sum", "max", "min"):
                got, old = reduce_both(op, src, lay, dims, out, olay)
                assert_same(op, got, old, op, lay, dims)
                check_numpy(op, got, out, olay, v, dims)
        for d in range(nd):
            got, old = arg_both("argmax", src, lay, d)
            np.testing.assert_array_equal(got, old)
            ks = keep_shape(shape, (d,))
            np.testing.assert_array_equal(got.reshape(ks), np.argmax(v, axis=d, keepdims=True))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_many_chunks_and_splits(data):
    """Parallel kernels forced onto small problems: partial results of halves combine as f32 ones do."""
    dname = data.draw(st.sampled_from(["f16", "bf16"]))
    shape, src, lay, dims, out, olay = data.draw(half_problems(dname))
    nthreads = data.draw(st.integers(2, 9))
    saved = red.PARALLEL_MIN, red.get_num_threads
    red.PARALLEL_MIN, red.get_num_threads = 1, (lambda: nthreads)
    try:
        results = [(op, *reduce_both(op, src, lay, dims, out, olay)) for op in ("sum", "max")
                   if not (op == "max" and any(shape[d] == 0 for d in dims))]
        args = arg_both("argmax", src, lay, 0) if shape and shape[0] and lay.numel else None
    finally:
        red.PARALLEL_MIN, red.get_num_threads = saved
    for op, got, old in results:
        assert_same(op, got, old, op, lay, dims)
    if args is not None:
        np.testing.assert_array_equal(*args)
        ks = keep_shape(shape, (0,))
        v = view(src, lay).astype(np.float32)
        np.testing.assert_array_equal(args[0][: int(np.prod(ks))].reshape(ks), np.argmax(v, axis=0, keepdims=True))


def test_nan_payloads_and_first_nan():
    """max/min return the first NaN met, payload and sign kept: the same bits as from an f32 copy."""
    for dname in ("f16", "bf16"):
        dt = HALVES[dname]
        pats = [0x7E01, 0xFE02, 0x7C05] if dname == "f16" else [0x7FC1, 0xFFC2, 0x7F85]
        a = np.arange(12, dtype=np.float32).astype(dt)
        a.view(np.uint16)[[3, 7, 10]] = pats
        lay = Layout.contiguous((3, 4))
        for dims in ((0,), (1,), (0, 1)):
            ks = keep_shape((3, 4), dims)
            for op in ("max", "min"):
                got, old = reduce_both(op, a, lay, dims, np.zeros(int(np.prod(ks)), np.float32), Layout.contiguous(ks))
                assert got.tobytes() == old.tobytes()
                want = getattr(np, op)(view(a, lay).astype(np.float32), axis=dims)
                assert np.array_equal(isnan(got), isnan(want).reshape(-1))


def test_kernel_rejects_half_outputs_and_other_accumulators():
    src = np.arange(12, dtype=np.float16)
    L, O = Layout.contiguous((3, 4)), Layout.contiguous((1, 4))
    with pytest.raises(DTypeError, match="float32"):
        red.reduce("sum", src, L, (0,), np.zeros(4, np.float64), O)
    with pytest.raises(DTypeError):
        red.reduce("sum", src.astype(np.float32), L, (0,), np.zeros(4, np.float16), O)


# ---------------------------------------------------------------------------
# the tensor layer


CALLS = [(op, dim, keepdim) for op in ("sum", "mean", "max", "min", "argmax", "argmin")
         for dim in (None, 0, 1, (0, 1)) for keepdim in (False, True)
         if not (op.startswith("arg") and dim == (0, 1))]


@pytest.mark.parametrize("dname", ["f16", "bf16"])
def test_tensor_reductions_read_halves_in_place(allocations, dname):
    """No buffer of the source's size is allocated, and the results are the f32 path's, rounded."""
    dt = HALVES[dname]
    rng = np.random.default_rng(3)
    n0, n1 = 64, 96
    x = fill(rng, n0 * n1, dt).reshape(n0, n1)
    x[5, :] = x[6, :]  # ties
    xf = x.astype(np.float32)
    for source, ref in ((sd.from_numpy(x), sd.from_numpy(xf)), (sd.from_numpy(x).t(), sd.from_numpy(xf).t())):
        for op, dim, keepdim in CALLS:
            allocations.clear()
            r = getattr(source, op)(dim, keepdim)
            # (argmax over all dims of the transpose flattens it first: a copy, but of halves)
            big = [(k, d) for k, d in allocations if k >= n0 * n1 // 8 and d.itemsize > 2]
            assert big == [], f"{op}({dim}): {allocations}"
            want = getattr(ref, op)(dim, keepdim).numpy()
            got = r.numpy()
            if op.startswith("arg"):
                np.testing.assert_array_equal(got, want)
            else:
                assert got.dtype == dt
                assert_same("sum" if op == "mean" else op, got, want.astype(dt), op, dim, keepdim)
