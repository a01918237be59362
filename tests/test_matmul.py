"""matmul against NumPy over operand layouts of every kind.

Each operand is built twice from one random buffer: as a strided view (permute,
slicing with steps of either sign, narrowing, broadcast_as) and as the same
numpy view of the same memory.  ``np.matmul`` on the numpy views is the oracle.
Float operands hold small integers so every product and sum is exact: a single
misaddressed element fails the equality.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided import linalg
from strided.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError
from strided.layout import Layout
from strided.tensor import Tensor

# ---------------------------------------------------------------------------
# operand views


def _fill(n, np_dtype, rng):
    if np_dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if np.dtype(np_dtype).kind == "u":
        return rng.integers(0, 256, n).astype(np_dtype)
    return rng.integers(-9, 10, n).astype(np_dtype)


@st.composite
def view_of(draw, shape, np_dtype, rng):
    """(tensor view, numpy view of the same memory) with logical shape ``shape``.

    The buffer is laid out in a random dim order (transposes, permuted batches),
    each dim is cut with a random step of either sign from a random start inside a
    padded extent (narrowed rows, non-unit and negative strides), and some dims
    are size 1 broadcast to their length (stride 0, in batch or matrix dims).
    """
    nd = len(shape)
    steps = [draw(st.sampled_from([1, 1, 1, 1, 2, 3, -1, -2])) for _ in shape]
    pads = [draw(st.integers(0, 2)) for _ in shape]
    bcast = [n != 1 and draw(st.integers(0, 7)) == 0 for n in shape]
    full = [1 if b else n * abs(s) + p for n, s, p, b in zip(shape, steps, pads, bcast)]
    order = draw(st.permutations(range(nd))) if nd else []
    stored = np.ascontiguousarray(_fill(int(np.prod(full)), np_dtype, rng).reshape([full[d] for d in order]))
    inv = tuple(int(i) for i in np.argsort(order)) if nd else ()
    t = sd.from_numpy(stored).permute(inv) if nd else sd.from_numpy(stored)
    a = stored.transpose(inv)
    index = []
    for n, s, p, b in zip(shape, steps, pads, bcast):
        if b:
            index.append(slice(None))
            continue
        start = draw(st.integers(0, p))
        if n == 0:
            index.append(slice(start, start))
        elif s > 0:
            index.append(slice(start, start + n * s, s))
        else:  # the same elements walked backwards: a negative stride
            first = start + (n - 1) * -s
            index.append(slice(first, start - 1 if start else None, s))
    index = tuple(index)
    t, a = t[index], a[index]
    if any(bcast):
        t, a = t.broadcast_as(tuple(shape)), np.broadcast_to(a, shape)
    assert t.shape == a.shape == tuple(shape)
    assert np.array_equal(t.numpy(), a)
    return t, a


@st.composite
def matmul_shapes(draw, max_batch_rank=4):
    """NumPy-compatible (lhs shape, rhs shape): 1-D promotion and batch broadcasting."""
    m, n, k = (draw(st.sampled_from([0, 1, 1, 2, 3, 4, 5])) for _ in range(3))
    common = draw(st.lists(st.sampled_from([0, 1, 2, 2, 3]), max_size=max_batch_rank))
    if 0 in common and draw(st.booleans()):
        common = [c if c else 1 for c in common]  # zero-size batches only now and then

    def batch():
        keep = draw(st.integers(0, len(common)))
        return [1 if draw(st.integers(0, 3)) == 0 else c for c in common[len(common) - keep :]]

    lhs_vec = draw(st.integers(0, 5)) == 0
    rhs_vec = draw(st.integers(0, 5)) == 0
    lhs = (k,) if lhs_vec else tuple(batch()) + (m, k)
    rhs = (k,) if rhs_vec else tuple(batch()) + (k, n)
    return lhs, rhs


@st.composite
def operand_pair(draw, np_dtype):
    lhs, rhs = draw(matmul_shapes())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return draw(view_of(lhs, np_dtype, rng)), draw(view_of(rhs, np_dtype, rng))


def _check(got: Tensor, want: np.ndarray):
    assert got.shape == want.shape
    assert got.dtype.np == want.dtype
    assert got.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), want)


# ---------------------------------------------------------------------------
# differential properties


@given(st.sampled_from([np.float32, np.float64]), st.data())
def test_float_any_layout_matches_numpy(np_dtype, data):
    (ta, a), (tb, b) = data.draw(operand_pair(np_dtype))
    _check(ta @ tb, np.matmul(a, b))


@settings(max_examples=40)
@given(st.data(), st.integers(1, 3))
def test_chunked_blas_calls_match_numpy(data, chunk):
    # Tiles of at most `chunk` rows/cols/depth: the path that keeps BLAS integers in 32 bits.
    (ta, a), (tb, b) = data.draw(operand_pair(np.float64))
    _check(linalg.matmul(ta, tb, _chunk=chunk), np.matmul(a, b))


@settings(max_examples=40)
@given(st.sampled_from([np.int64, np.uint8, np.uint32, np.bool_]), st.data())
def test_int_and_bool_any_layout_match_numpy(np_dtype, data):
    (ta, a), (tb, b) = data.draw(operand_pair(np_dtype))
    _check(ta @ tb, np.matmul(a, b))


@settings(max_examples=25)
@given(st.sampled_from([sd.f16, sd.bf16]), st.data())
def test_half_computed_in_f32_and_rounded_once(dtype, data):
    # Integer values: the f32 product is exact, so rounding it once is the whole answer.
    lhs, rhs = data.draw(matmul_shapes(max_batch_rank=2))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    (ta, a), (tb, b) = data.draw(view_of(lhs, dtype.np, rng)), data.draw(view_of(rhs, dtype.np, rng))
    got = ta @ tb
    assert got.dtype is dtype
    _check(got, np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dtype.np))


def test_f32_random_values_rtol():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 40, 70)).astype(np.float32)
    b = rng.standard_normal((3, 50, 70)).astype(np.float32)
    got = sd.from_numpy(a) @ sd.from_numpy(b).transpose(1, 2)
    np.testing.assert_allclose(got.numpy(), a @ b.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)


def test_int_wraps_like_numpy():
    rng = np.random.default_rng(3)
    for np_dtype, hi in ((np.int64, 2**62), (np.uint32, 2**32), (np.uint8, 256)):
        a = rng.integers(0, hi, (4, 7), dtype=np.uint64).astype(np_dtype)
        b = rng.integers(0, hi, (7, 5), dtype=np.uint64).astype(np_dtype)
        _check(sd.from_numpy(a) @ sd.from_numpy(b).flip(0), a @ b[::-1])


def test_read_only_buffers():
    a = np.broadcast_to(np.arange(4.0), (3, 4))  # read-only, row stride 0
    b = np.arange(8.0).reshape(4, 2)
    b.flags.writeable = False
    _check(sd.from_numpy(a) @ sd.from_numpy(b), a @ b)


def test_overlapping_operand_is_packed():
    # Sliding windows: rows overlap (row stride 1 < 4 columns), which BLAS cannot take.
    buf = np.arange(12, dtype=np.float32)
    ta = sd.as_strided(sd.from_numpy(buf), (5, 4), (1, 1))
    a = np.lib.stride_tricks.as_strided(buf, (5, 4), (4, 4))
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    before = linalg.stats["packed"]
    _check(ta @ sd.from_numpy(b), a @ b)
    assert linalg.stats["packed"] == before + 1


# ---------------------------------------------------------------------------
# the seed's cases and candle's literals


def _randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _close(got: Tensor, want: np.ndarray):
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_seed_transposed_weight():
    a, w = _randn(8, 16), _randn(32, 16, seed=1)
    out = sd.from_numpy(a) @ sd.from_numpy(w).t()
    assert out.shape == (8, 32)
    _close(out, a @ w.T)


def test_seed_narrowed_rhs():
    # candle with accelerate: MatMulUnexpectedStriding "non-contiguous rhs"; here BLAS takes ld = 32.
    a, w = _randn(8, 16), _randn(32, 32, seed=1)
    rhs = sd.from_numpy(w).narrow(0, 0, 16).narrow(1, 0, 16)  # the seed's [16, 16] / [32, 1]
    assert rhs.stride == (32, 1)
    _close(sd.from_numpy(a).matmul(rhs), a @ w[:16, :16])


def test_seed_permuted_batch():
    # (2,3,4,5).permute(1,0,2,3): batch strides (20, 60), which no single batch stride describes.
    x, y = _randn(2, 3, 4, 5), _randn(3, 2, 5, 6, seed=1)
    lhs = sd.from_numpy(x).permute(1, 0, 2, 3)
    assert lhs.stride == (20, 60, 5, 1)
    out = lhs @ sd.from_numpy(y)
    assert out.shape == (3, 2, 4, 6)
    _close(out, x.transpose(1, 0, 2, 3) @ y)


def test_seed_narrowed_batch():
    # candle's Metal read batches (1,0) and (1,1) from the wrong place (stride[-3] only).
    x, y = _randn(2, 4, 3, 5), _randn(2, 2, 5, 3, seed=1)
    lhs = sd.from_numpy(x).narrow(1, 0, 2)
    assert lhs.stride == (60, 15, 5, 1)
    out = lhs @ sd.from_numpy(y)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(out.numpy()[i, j], x[i, j] @ y[i, j], rtol=1e-5, atol=1e-5)


def test_stride0_lhs_batch():
    # candle issue #3744: a broadcast (stride-0) left batch gave wrong numbers.
    x, y = _randn(1, 4, 5), _randn(3, 5, 6, seed=1)
    lhs = sd.from_numpy(x).broadcast_as((3, 4, 5))
    _close(lhs @ sd.from_numpy(y), np.broadcast_to(x, (3, 4, 5)) @ y)


def test_candle_matmul_literals():
    a = sd.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = sd.tensor([[5.0, 6.0], [7.0, 8.0]])
    assert (a @ b).tolist() == [[19.0, 22.0], [43.0, 50.0]] == (a.numpy() @ b.numpy()).tolist()
    a = sd.from_numpy(np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    b = sd.from_numpy(np.arange(2, 14, dtype=np.float32).reshape(2, 3, 2))
    expected = [[[16.0, 19.0], [52.0, 64.0]], [[214.0, 235.0], [304.0, 334.0]]]
    assert (a @ b).tolist() == expected == (a.numpy() @ b.numpy()).tolist()
    # candle's a.t().contiguous().t(): strides [6, 1, 2], the same product.
    a_tt = sd.from_numpy(np.ascontiguousarray(a.numpy().transpose(0, 2, 1))).t()
    b_tt = sd.from_numpy(np.ascontiguousarray(b.numpy().transpose(0, 2, 1))).t()
    assert a_tt.stride == (6, 1, 2) and not a_tt.is_contiguous()
    assert (a_tt @ b_tt).tolist() == expected


def test_candle_broadcast_matmul():
    lhs, rhs = _randn(3, 1, 4, 5), _randn(6, 5, 2, seed=1)
    out = sd.from_numpy(lhs) @ sd.from_numpy(rhs)
    assert out.shape == (3, 6, 4, 2)
    _close(out, np.matmul(lhs, rhs))


def test_candle_squeeze_mm():
    seq_len = 8
    a = _randn(1, seq_len, 16)
    w = _randn(32, 16, seed=1)
    x = sd.from_numpy(a)[:, seq_len - 1, :]
    out = x.matmul(sd.from_numpy(w).t())
    assert out.shape == (1, 32)
    _close(out, a[:, seq_len - 1, :] @ w.T)


# ---------------------------------------------------------------------------
# no needless copies


def _spy(monkeypatch):
    from strided.kernels import matmul as km

    calls = []
    real = km.gemm_batched

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(km, "gemm_batched", spy)

    def no_copy(*args, **kwargs):
        raise AssertionError("matmul made a copy of an operand")

    monkeypatch.setattr(Tensor, "_copy_to", no_copy)
    return calls


@pytest.mark.parametrize(
    "make_rhs",
    [
        lambda w: w.t(),  # transposed
        lambda w: w.narrow(1, 0, 16),  # row stride 32 > 16 columns
        lambda w: w.t().narrow(0, 3, 10),  # transposed and narrowed
    ],
    ids=["t", "narrow", "t-narrow"],
)
def test_blas_reads_the_operands_own_buffers(monkeypatch, make_rhs):
    calls = _spy(monkeypatch)
    a = sd.from_numpy(_randn(8, 32))
    wt = sd.from_numpy(_randn(32, 32, seed=1))
    rhs = make_rhs(wt)
    a = a.narrow(1, 0, rhs.shape[0])
    before = dict(linalg.stats)
    out = a.matmul(rhs)
    _close(out, a.numpy() @ rhs.numpy())
    assert linalg.stats["packed"] == before["packed"]
    assert linalg.stats["direct"] == before["direct"] + 2
    (args,) = calls
    assert args[0] is a._storage.data and args[1] is wt._storage.data


def test_permuted_batch_needs_no_copy(monkeypatch):
    calls = _spy(monkeypatch)
    x = sd.from_numpy(_randn(2, 3, 4, 5))
    y = sd.from_numpy(_randn(3, 2, 5, 6, seed=1))
    before = linalg.stats["packed"]
    (x.permute(1, 0, 2, 3) @ y.transpose(-1, -2).transpose(-1, -2))
    assert linalg.stats["packed"] == before
    assert calls[0][0] is x._storage.data


def test_flipped_operand_is_packed_not_refused():
    a, b = _randn(6, 7), _randn(7, 5, seed=1)
    before = linalg.stats["packed"]
    _close(sd.from_numpy(a).flip(1) @ sd.from_numpy(b), a[:, ::-1] @ b)
    assert linalg.stats["packed"] == before + 1


# ---------------------------------------------------------------------------
# shapes: 1-D, zero sizes


def test_vector_cases():
    v, w = np.arange(5, dtype=np.float64), np.arange(5, dtype=np.float64)[::-1].copy()
    m = np.arange(15, dtype=np.float64).reshape(5, 3)
    b = np.arange(30, dtype=np.float64).reshape(2, 3, 5)
    tv, tw, tm, tb = (sd.from_numpy(x) for x in (v, w, m, b))
    r = tv @ tw
    assert r.shape == () and r.item() == v @ w
    _check(tv @ tm, v @ m)
    _check(tb @ tv, b @ v)
    _check(tv[::2] @ tm[::2], v[::2] @ m[::2])  # a strided vector goes to BLAS as a 1-row matrix
    _check(tm.t() @ tv, m.T @ v)


@pytest.mark.parametrize(
    "lhs, rhs",
    [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0)), ((0, 2, 3), (3, 4)), ((2, 1, 3, 0), (5, 0, 2)), ((0,), (0,)), ((0,), (0, 3))],
)
def test_zero_sizes(lhs, rhs):
    for np_dtype in (np.float32, np.int64):
        a = np.ones(lhs, np_dtype)
        b = np.ones(rhs, np_dtype)
        _check(sd.from_numpy(a) @ sd.from_numpy(b), np.matmul(a, b))


# ---------------------------------------------------------------------------
# errors, dtypes, validation, autograd hook


def test_shape_mismatch_names_both_shapes():
    a, b = sd.zeros((2, 3)), sd.zeros((4, 5))
    with pytest.raises(ShapeError, match=r"shape mismatch in matmul.*\(2, 3\).*\(4, 5\)"):
        a @ b
    with pytest.raises(ShapeError, match=r"shape mismatch in matmul.*\(2, 2, 3\).*\(3, 3, 4\)"):
        sd.zeros((2, 2, 3)) @ sd.zeros((3, 3, 4))
    with pytest.raises(ShapeError, match=r"shape mismatch in matmul.*\(\).*\(3,\)"):
        linalg.matmul(sd.from_numpy(np.array(1.0, np.float32)), sd.zeros(3))
    with pytest.raises(ValueError):  # StridedError is a ValueError
        sd.zeros(3) @ sd.zeros(4)


def test_dtype_mismatch_and_promotion():
    a = sd.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = sd.from_numpy(np.arange(12, dtype=np.float64).reshape(3, 4))
    with pytest.raises(DTypeError, match=r"f32.*f64"):
        a @ b
    _check(linalg.matmul(a, b, promote=True), a.numpy() @ b.numpy())
    i = sd.from_numpy(np.arange(12, dtype=np.int64).reshape(3, 4))
    _check(linalg.matmul(a, i, promote=True), a.numpy() @ i.numpy())
    h = sd.from_numpy(np.arange(12, dtype=np.float16).reshape(3, 4))
    _check(linalg.matmul(a, h, promote=True), a.numpy() @ h.numpy())
    with pytest.raises(StridedError, match="expected a tensor"):
        linalg.matmul(a, [[1.0]])


def test_invalid_layout_is_refused_before_any_kernel():
    t = sd.zeros((4, 4))
    bad = Tensor(t.storage, Layout((4, 4), (4, 1), 4), t.dtype)  # reaches element 19 of 16
    with pytest.raises(LayoutBoundsError):
        bad @ t
    with pytest.raises(LayoutBoundsError):
        t @ Tensor(t.storage, Layout((4, 4), (-4, 1), 3), t.dtype)


def test_records_op_only_when_tracked():
    a, b = sd.zeros((2, 3)), sd.zeros((3, 2))
    assert (a @ b)._op is None
    v = sd.Var(np.ones((2, 3), np.float32))
    out = v @ b
    assert out._op is not None and out._op.name == "matmul"
    assert out._op.inputs[0] is v and out._op.inputs[1] is b


def test_blas_threads_follow_strided_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from strided.kernels import matmul as km  # noqa: F401  (loads scipy's BLAS)

    old = sd.get_num_threads()
    try:
        sd.set_num_threads(1)
        libs = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert libs and all(i["num_threads"] == 1 for i in libs)
    finally:
        sd.set_num_threads(old)


def test_int_parallel_path_matches_numpy():
    # Big enough for the multi-threaded integer kernel; a transposed, flipped rhs.
    rng = np.random.default_rng(5)
    a = rng.integers(-1000, 1000, (2, 70, 80))
    b = rng.integers(-1000, 1000, (70, 80))
    _check(sd.from_numpy(a) @ sd.from_numpy(b).t().flip(1), a @ b.T[:, ::-1])
