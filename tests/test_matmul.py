"""matmul against NumPy over operand layouts of every kind.

Each operand is built twice from one random buffer: as a strided view (permute,
slicing with steps of either sign, narrowing, broadcast_as) and as the same
numpy view of the same memory.  ``np.matmul`` on the numpy views is the oracle.
Float operands hold small integers so every product and sum is exact: a single
misaddressed element fails the equality.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.ops import linalg
from strided.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError, TooHardError
from strided.kernels import matmul as km
from strided.layout import Layout
from strided.tensor import Tensor
from strategies import layouts_of_shape, np_view

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
    # A kept product calls the entry it found when bound (walk.direct), not the module's
    # name: forget the kept ones so that the call is planned, and seen, afresh.
    from strided import caches

    caches.clear()

    def no_copy(*args, **kwargs):
        raise AssertionError("matmul made a copy of an operand")

    # Every way a Tensor copies (the copy methods moved from Tensor._copy_to to the op layer).
    for name in ("_copy_to", "contiguous", "force_contiguous", "copy", "to_dtype"):
        if hasattr(Tensor, name):
            monkeypatch.setattr(Tensor, name, no_copy)
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
    [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0)), ((0, 2, 3), (3, 4)), ((2, 1, 3, 0), (5, 0, 2)), ((0,), (0,)),
     ((0,), (0, 3))],
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
        a.matmul(b)  # candle's rule; @ and linalg.matmul promote (issue 25)
    with pytest.raises(DTypeError, match=r"f32.*f64"):
        linalg.matmul(a, b, promote=False)
    _check(a @ b, a.numpy() @ b.numpy())
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


# ---------------------------------------------------------------------------
# the kernel entry point, called directly: flat buffers and layout integers


def _ints_only(value, where="plan"):
    """Every leaf of a plan is a plain int; every container a tuple."""
    if isinstance(value, tuple):
        for i, v in enumerate(value):
            _ints_only(v, f"{where}[{i}]")
    else:
        assert type(value) is int, f"{where} is {type(value).__name__} {value!r}"


def _triple(lay: Layout):
    return (lay.shape, lay.stride, lay.offset)


@st.composite
def kernel_operands(draw, np_dtype):
    """(a_buf, a_layout, b_buf, b_layout, numpy a, numpy b): rank >= 2 layouts of any dim
    order, gaps, flips and stride-0 dims (batch and matrix), over buffers a little longer
    than they need."""
    lhs, rhs = draw(matmul_shapes())
    lhs = lhs if len(lhs) > 1 else (1,) + lhs  # the entry point takes matrices; linalg promotes 1-D
    rhs = rhs if len(rhs) > 1 else rhs + (1,)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    out = []
    for shape in (lhs, rhs):
        lay, n = draw(layouts_of_shape(shape))
        buf = _fill(n, np_dtype, rng)
        out += [buf, lay, np_view(buf, lay)]
    a_buf, a_lay, a, b_buf, b_lay, b = out
    return a_buf, a_lay, b_buf, b_lay, a, b


@settings(max_examples=60)
@given(st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.bool_]), st.data())
def test_kernel_entry_point_matches_numpy(np_dtype, data):
    a_buf, a_lay, b_buf, b_lay, a, b = data.draw(kernel_operands(np_dtype))
    want = np.matmul(a, b)
    c = np.full(want.size + 3, 7, np_dtype)  # longer than needed: the tail stays untouched
    p = km.matmul(a_buf, _triple(a_lay), b_buf, _triple(b_lay), c)
    assert p.c_size == want.size
    np.testing.assert_array_equal(c[: want.size].reshape(want.shape), want)
    assert (c[want.size :] == np.array(7, np_dtype)).all()


@settings(max_examples=60)
@given(st.sampled_from([True, False]), st.data())
def test_plan_holds_ints_and_tuples_only(blas, data):
    _, a_lay, _, b_lay, _, _ = data.draw(kernel_operands(np.float32))
    args = dict(blas=blas, threads=data.draw(st.integers(1, 4)),
                chunk=data.draw(st.sampled_from([1, 3, km.DEFAULT_CHUNK])))
    p = km.plan(_triple(a_lay), _triple(b_lay), **args)
    for f in fields(p):
        _ints_only(getattr(p, f.name), f"plan.{f.name}")
    assert p.c_size == p.nbatch * p.m * p.n
    assert len(p.walk_shape) == len(p.a_walk) == len(p.b_walk) == len(p.c_walk) >= 1
    km._prepare.cache_clear()  # pure: planned again from the same integers, an equal plan
    assert km.plan(_triple(a_lay), _triple(b_lay), **args) == p


def test_plan_of_the_permuted_batch():
    x = Layout.contiguous((8, 16, 128, 64)).permute((1, 0, 2, 3))
    y = Layout.contiguous((8, 16, 64, 96)).permute((1, 0, 2, 3))
    p = km.plan(_triple(x), _triple(y), threads=2)
    assert (p.path, p.m, p.n, p.k, p.batch) == (km.BLAS, 128, 96, 64, (16, 8))
    assert (p.a_mode, p.a_ld, p.b_mode, p.b_ld) == (km.ROW, 64, km.ROW, 96)
    assert p.walk_shape == (16, 8) and p.a_walk == (8192, 131072) and p.b_walk == (6144, 98304)
    assert p.c_walk == (8 * 128 * 96, 128 * 96)
    assert p.a_reach == (0, 8 * 16 * 128 * 64) and p.b_reach == (0, 8 * 16 * 64 * 96)
    assert km.plan(_triple(x), _triple(y), threads=1).split == 1


def test_kernel_refuses_short_buffers():
    a, b = np.ones(12, np.float32), np.ones(20, np.float32)
    a_lay, b_lay = ((3, 4), (4, 1), 0), ((4, 5), (5, 1), 0)
    km.matmul(a, a_lay, b, b_lay, np.empty(15, np.float32))
    with pytest.raises(LayoutBoundsError,
                       match=r"matmul: a shape \(3, 4\), stride \(4, 1\), offset 1 spans \[1, 13\) "
                             r"but its buffer holds 12"):
        km.matmul(a, ((3, 4), (4, 1), 1), b, b_lay, np.empty(15, np.float32))
    with pytest.raises(LayoutBoundsError, match=r"matmul: b .* spans \[0, 20\) but its buffer holds 19"):
        km.matmul(a, a_lay, b[:19], b_lay, np.empty(15, np.float32))
    with pytest.raises(LayoutBoundsError, match=r"matmul: a .*stride \(-4, 1\).* spans \[-8, 4\)"):
        km.matmul(a, ((3, 4), (-4, 1), 0), b, b_lay, np.empty(15, np.float32))
    with pytest.raises(LayoutBoundsError,
                       match=r"matmul: expected c to hold the 15 elements of the result \(3, 5\), "
                             r"got a buffer of 14"):
        km.matmul(a, a_lay, b, b_lay, np.empty(14, np.float32))
    # a broadcast batch reaches only its own matrix
    km.matmul(a, ((2, 3, 4), (0, 4, 1), 0), b, ((2, 4, 5), (0, 5, 1), 0), np.empty(30, np.float32))
    with pytest.raises(LayoutBoundsError, match="matmul: b"):
        km.matmul(a, a_lay, b, ((2, 4, 5), (1, 5, 1), 0), np.empty(30, np.float32))


def test_kernel_refuses_what_it_cannot_run():
    a, b, c = np.ones(12, np.float32), np.ones(20, np.float32), np.empty(15, np.float32)
    a_lay, b_lay = ((3, 4), (4, 1), 0), ((4, 5), (5, 1), 0)
    with pytest.raises(DTypeError, match="matmul: expected a, b and c of one dtype, got float32, float64 and float32"):
        km.matmul(a, a_lay, b.astype(np.float64), b_lay, c)
    with pytest.raises(DTypeError, match="matmul: not dispatched for dtype float16"):
        km.matmul(a.astype(np.float16), a_lay, b.astype(np.float16), b_lay, c.astype(np.float16))
    with pytest.raises(StridedError, match="matmul: expected b as a 1-D contiguous numpy array, got shape \\(4, 5\\)"):
        km.matmul(a, a_lay, b.reshape(4, 5), b_lay, c)
    with pytest.raises(StridedError,
                       match="matmul: expected a as a 1-D contiguous numpy array, "
                             "got shape \\(12,\\) strides \\(8,\\)"):
        km.matmul(np.ones(24, np.float32)[::2], a_lay, b, b_lay, c)
    with pytest.raises(StridedError, match="matmul: expected c as a 1-D contiguous numpy array, got list"):
        km.matmul(a, a_lay, b, b_lay, [0.0] * 15)
    ro = np.empty(15, np.float32)
    ro.flags.writeable = False
    with pytest.raises(StridedError, match="matmul: expected a writable c"):
        km.matmul(a, a_lay, b, b_lay, ro)
    shared = np.ones(40, np.float32)
    with pytest.raises(StridedError, match="matmul: expected c not to overlap a or b"):
        km.matmul(shared, a_lay, b, b_lay, shared[20:])
    with pytest.raises(ShapeError,
                       match=r"matmul: expected a's columns to match b's rows, "
                             r"got a shape \(3, 4\) and b shape \(5, 5\)"):
        km.matmul(a, a_lay, b, ((5, 5), (5, 1), 0), c)
    with pytest.raises(ShapeError,
                       match=r"matmul: expected batch dims that broadcast, "
                             r"got a shape \(2, 3, 4\) and b shape \(3, 4, 5\)"):
        km.matmul(a, ((2, 3, 4), (0, 4, 1), 0), b, ((3, 4, 5), (0, 5, 1), 0), np.empty(90, np.float32))
    with pytest.raises(ShapeError, match=r"matmul: expected a_layout of rank >= 2 with one stride per dim, "
                                         r"got shape \(12,\) stride \(1,\)"):
        km.matmul(a, ((12,), (1,), 0), b, b_lay, c)
    with pytest.raises(ShapeError, match="matmul: expected b_layout as \\(shape, stride, offset\\) of ints"):
        km.matmul(a, a_lay, b, ((4, 5), (5, 1.5), 0), c)
    with pytest.raises(ShapeError, match="matmul: expected chunk >= 1"):
        km.matmul(a, a_lay, b, b_lay, c, chunk=0)
    with pytest.raises(TooHardError, match="matmul: the result's row length"):
        km.plan(((1, 1), (1, 1), 0), ((1, 2**31), (2**31, 1), 0))
    # lists are layouts too; nothing was written by any refused call
    c[:] = -1
    km.matmul(a, [[3, 4], [4, 1], 0], b, [[4, 5], [5, 1], 0], c)
    np.testing.assert_array_equal(c, np.full(15, 4, np.float32))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_split_batches_match_the_walk_in_order(data):
    # Ranges of batches on several threads (each gemm on one BLAS thread), tiny
    # products included, against NumPy and against one walk in order, bit for bit.
    old_min, old_threads = km.SPLIT_MIN_MACS, sd.get_num_threads()
    a_buf, a_lay, b_buf, b_lay, a, b = data.draw(kernel_operands(np.float64))
    chunk = data.draw(st.sampled_from([2, km.DEFAULT_CHUNK]))
    try:
        km.SPLIT_MIN_MACS = 0
        sd.set_num_threads(max(2, old_threads))
        km._prepare.cache_clear()
        want = np.matmul(a, b)
        c = np.empty(want.size, np.float64)
        p = km.matmul(a_buf, _triple(a_lay), b_buf, _triple(b_lay), c, chunk=chunk)
        np.testing.assert_array_equal(c.reshape(want.shape), want)
        if p.path == km.BLAS and p.nbatch > 1 and km._set_blas_threads is not None:
            assert p.split > 1 and p.blas_threads == 1
    finally:
        km.SPLIT_MIN_MACS = old_min
        sd.set_num_threads(old_threads)
        km._prepare.cache_clear()


def test_split_is_bit_identical_to_one_thread():
    # Each gemm of a split runs on one BLAS thread: the bits are those of a one-thread run.
    rng = np.random.default_rng(9)
    x = sd.from_numpy(rng.standard_normal((8, 16, 128, 64), dtype=np.float32)).permute(1, 0, 2, 3)
    y = sd.from_numpy(rng.standard_normal((8, 16, 64, 96), dtype=np.float32)).permute(1, 0, 2, 3)
    rhs = (y, y.flip(-1), y[:1].broadcast_as(y.shape))  # in place; packed; packed once per range
    old = sd.get_num_threads()
    try:
        sd.set_num_threads(2)
        split = [x @ r for r in rhs]
        assert km.plan(_triple(x.layout), _triple(y.layout), threads=2).split > 1
        sd.set_num_threads(1)
        alone = [x @ r for r in rhs]
    finally:
        sd.set_num_threads(old)
    for s, w in zip(split, alone):
        assert s.numpy().tobytes() == w.numpy().tobytes()


def _numpy_on_one_thread(a, b):
    import threadpoolctl

    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        return np.matmul(a, b)


@pytest.mark.skipif(km.BLAS_LIBRARY != "numpy", reason="gemm runs on scipy's OpenBLAS, not NumPy's")
@settings(max_examples=30, deadline=None)
@given(st.sampled_from([np.float32, np.float64]), st.integers(2, 300), st.integers(1, 300), st.integers(2, 300),
       st.booleans(), st.booleans(), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 3]))
def test_products_are_numpys_bits(np_dtype, m, k, n, ta, tb, seed, nthreads):
    # Same OpenBLAS, same calls, each on one BLAS thread: random values, no tolerance.  A
    # product split into slabs is, slab by slab, NumPy's one-thread product of that slab
    # (OpenBLAS's own bits depend on how its threads cut the product, NumPy's included).
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np_dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np_dtype)
    a, b = (a.T if ta else a), (b.T if tb else b)
    old = sd.get_num_threads()
    try:
        sd.set_num_threads(nthreads)
        got = (sd.from_numpy(a) @ sd.from_numpy(b)).numpy()
        p = km.plan(((m, k), tuple(s // a.itemsize for s in a.strides), 0),
                    ((k, n), tuple(s // b.itemsize for s in b.strides), 0), threads=nthreads)
    finally:
        sd.set_num_threads(old)
    cuts = [i * (m if p.slab_rows else n) // p.slabs for i in range(p.slabs + 1)]
    if p.slab_rows:
        want = np.concatenate([_numpy_on_one_thread(a[lo:hi], b) for lo, hi in zip(cuts, cuts[1:])])
    else:
        want = np.concatenate([_numpy_on_one_thread(a, b[:, lo:hi]) for lo, hi in zip(cuts, cuts[1:])], axis=1)
    assert got.tobytes() == want.tobytes()
    if p.slabs == 1:
        assert got.tobytes() == _numpy_on_one_thread(a, b).tobytes()
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-4 if np_dtype == np.float32 else 1e-12,
                               atol=1e-3 if np_dtype == np.float32 else 1e-10)


def test_lone_products_split_into_slabs_on_strided_threads():
    # A lone product past SPLIT_MIN_MACS runs as one slab per thread of its longer side, on
    # strided's pool, with the BLAS pool pinned to one thread for the call and given back.
    threadpoolctl = pytest.importorskip("threadpoolctl")
    tall, wide = ((512, 256), (256, 1), 0), ((256, 512), (512, 1), 0)
    p = km.plan(tall, ((256, 64), (64, 1), 0), threads=4)
    assert (p.split, p.slabs, p.slab_rows, p.blas_threads) == (4, 4, 1, 1)
    p = km.plan(((64, 256), (256, 1), 0), wide, threads=2)
    assert (p.split, p.slabs, p.slab_rows) == (2, 2, 0)
    p = km.plan(((3, 512, 256), (512 * 256, 256, 1), 0), ((256, 512), (512, 1), 0), threads=2)
    assert (p.split, p.slabs) == (6, 2)  # three batches: two slabs each, so both threads get three
    p = km.plan(((16, 512, 256), (512 * 256, 256, 1), 0), ((256, 512), (512, 1), 0), threads=2)
    assert (p.split, p.slabs) == (8, 1)  # many batches: ranges of whole ones
    assert km.plan(((8, 8), (8, 1), 0), ((8, 8), (8, 1), 0), threads=2).blas_threads == 0
    assert km.plan(tall, ((256, 512), (512, 1), 0), threads=1).split == 1
    old = sd.get_num_threads()
    try:
        sd.set_num_threads(2)
        rng = np.random.default_rng(3)
        a = rng.standard_normal((700, 300)).astype(np.float32)
        b = rng.standard_normal((300, 200)).astype(np.float32)
        np.testing.assert_allclose((sd.from_numpy(a) @ sd.from_numpy(b)).numpy(), a @ b, rtol=1e-4, atol=1e-3)
        blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert all(i["num_threads"] == 2 for i in blas)
    finally:
        sd.set_num_threads(old)


@pytest.mark.parametrize("shapes", [((16, 16), (16, 16)), ((300, 200), (200, 260)), ((12, 64, 48), (48, 40))])
def test_a_kept_product_runs_as_its_first_call(shapes):
    # The second product of equal layouts is the kept one (the kernel's compiled entry, a
    # split product's on strided's pool with the BLAS pool pinned around it): the first
    # call's bits, and the BLAS pool back at strided's thread count afterwards.
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(len(shapes[0]))
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    old = sd.get_num_threads()
    try:
        sd.set_num_threads(2)
        x, y = sd.from_numpy(a), sd.from_numpy(b)
        runs = [(x @ y).numpy() for _ in range(3)]
        blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    finally:
        sd.set_num_threads(old)
    assert runs[1].tobytes() == runs[0].tobytes() == runs[2].tobytes()
    np.testing.assert_allclose(runs[1], a @ b, rtol=1e-4, atol=1e-3)
    assert all(i["num_threads"] == 2 for i in blas)


_SCIPY_BLAS = r"""
import numpy as np, threadpoolctl
select = threadpoolctl.ThreadpoolController.select
def without_numpys(self, **kw):  # hide NumPy's OpenBLAS: matmul falls back to scipy's
    found = select(self, **kw)
    found.lib_controllers = [c for c in found.lib_controllers if not hasattr(c.dynlib, "scipy_sgemm_64_")]
    return found
threadpoolctl.ThreadpoolController.select = without_numpys
import strided as sd
from strided.kernels import matmul as km
assert km.BLAS_LIBRARY == "scipy" and km._BLAS_INT.dtype == np.int32, km.BLAS_LIBRARY
rng = np.random.default_rng(0)
x = rng.integers(-9, 10, (8, 16, 32, 24)).astype(np.float32)
y = rng.integers(-9, 10, (8, 16, 24, 40)).astype(np.float64)
for dt in (np.float32, np.float64):
    a, b = x.astype(dt), y.astype(dt)
    got = sd.from_numpy(a).permute(1, 0, 2, 3) @ sd.from_numpy(b).permute(1, 0, 2, 3).flip(-1)
    np.testing.assert_array_equal(got.numpy(), np.matmul(a.transpose(1, 0, 2, 3), b.transpose(1, 0, 2, 3)[..., ::-1]))
    got = sd.linalg.matmul(sd.from_numpy(a[0, 0]), sd.from_numpy(b[0, 0]), _chunk=7)
    np.testing.assert_array_equal(got.numpy(), a[0, 0] @ b[0, 0])
print("ok", km._set_blas_threads is not None)
"""


def test_scipy_blas_fallback():
    # Without NumPy's OpenBLAS (another NumPy build), gemm runs on scipy's LP64 OpenBLAS.
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _SCIPY_BLAS], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["ok", "True"]


_MKL_BLAS = r"""
import numpy as np
import strided as sd
from strided.kernels import matmul as km
import numba
from numba.np.ufunc import omppool
gnu = numba.threading_layer() == "omp" and omppool.openmp_vendor == "GNU"
# On numba's GNU OpenMP runtime MKL threads on that pool; on any other, sequential.
assert (km.BLAS_LIBRARY, km.BLAS_THREADING, km._BLAS_INT.dtype) == \
    ("mkl", "shared" if gnu else "sequential", np.int64), (km.BLAS_LIBRARY, km.BLAS_THREADING, gnu)
rng = np.random.default_rng(4)
sd.set_num_threads(2)
a = rng.standard_normal((64, 256)).astype(np.float32)
w = rng.standard_normal((256, 256)).astype(np.float32)
lone = (((64, 256), (256, 1), 0), ((256, 256), (1, 256), 0))
batched = (((8, 64, 256), (64 * 256, 256, 1), 0), ((256, 256), (1, 256), 0))
# A lone product past SPLIT_MIN_MACS: two column slabs on strided's threads, nothing pinned
# (sequential); one call that MKL threads itself on the shared pool.
p = km.plan(*lone, threads=2, blas_threading="sequential")
assert (p.split, p.slabs, p.slab_rows, p.blas_threads) == (2, 2, 0, 0), p
p = km.plan(*lone, threads=2, blas_threading="shared")
assert (p.split, p.slabs, p.blas_threads) == (1, 1, 0), p
p = km.plan(*batched, threads=2, blas_threading="shared")  # batches split: each gemm on its task's thread
assert (p.split, p.slabs, p.blas_threads) == (8, 1, 0), p
p = km.plan(*batched, threads=2, blas_threading="pinned")
assert p.blas_threads == 1, p
# One pool: MKL's threads are the OpenMP threads numba's kernels already started.
import os
(sd.ones(1 << 20) + 1).numpy()  # a parallel kernel: numba's pool is up
tasks = lambda: len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 0
before = tasks()
big = rng.standard_normal((512, 512)).astype(np.float32)
np.testing.assert_allclose((sd.from_numpy(big) @ sd.from_numpy(big)).numpy(), big @ big, rtol=1e-3, atol=1e-3)
assert tasks() == before or not gnu, (before, tasks())
got = (sd.from_numpy(a) @ sd.from_numpy(w).t()).numpy()
np.testing.assert_allclose(got, a @ w.T, rtol=1e-4, atol=1e-4)
# Batched, permuted, flipped, broadcast, in both float types; integers stay exact.
x = rng.standard_normal((8, 16, 32, 24))
y = rng.standard_normal((8, 16, 24, 40))
for dt, tol in ((np.float32, 1e-4), (np.float64, 1e-12)):
    xa, ya = x.astype(dt), y.astype(dt)
    got = sd.from_numpy(xa).permute(1, 0, 2, 3) @ sd.from_numpy(ya).permute(1, 0, 2, 3).flip(-1)
    want = np.matmul(xa.transpose(1, 0, 2, 3), ya.transpose(1, 0, 2, 3)[..., ::-1])
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    got = sd.linalg.matmul(sd.from_numpy(xa[0, 0]), sd.from_numpy(ya[0, 0]), _chunk=7)
    np.testing.assert_allclose(got.numpy(), xa[0, 0] @ ya[0, 0], rtol=tol, atol=tol)
xi = rng.integers(-50, 50, (40, 30))
np.testing.assert_array_equal((sd.from_numpy(xi) @ sd.from_numpy(xi.T)).numpy(), xi @ xi.T)
# A fused epilogue after MKL's gemm is the eager chain's bits.
b = rng.standard_normal(256).astype(np.float32)
A, W, B = sd.from_numpy(a), sd.from_numpy(w), sd.from_numpy(b)
layer = lambda h, w, b: (h @ w.t() + b).relu()
assert sd.fuse(layer)(A, W, B).numpy().tobytes() == layer(A, W, B).numpy().tobytes()
# One thread: the product is MKL's own; sequential, each slab is MKL's product of that slab.
two = (sd.from_numpy(a) @ sd.from_numpy(w).t()).numpy()
sd.set_num_threads(1)
one = (sd.from_numpy(a) @ sd.from_numpy(w).t()).numpy()
np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-5)
if not gnu:
    np.testing.assert_array_equal(two[:, :128], (sd.from_numpy(a) @ sd.from_numpy(w[:128]).t()).numpy())
print("ok")
"""


def test_mkl_blas_when_asked():
    # STRIDED_BLAS=mkl: gemm runs on MKL, threaded on strided's own pool (GNU OpenMP) or
    # sequential and split over it.
    import os
    import subprocess
    import sys
    from importlib import metadata

    try:
        metadata.distribution("mkl")
    except metadata.PackageNotFoundError:
        pytest.skip("the mkl wheel is not installed (pip install 'strided[mkl]')")
    env = dict(os.environ, STRIDED_BLAS="mkl")
    run = subprocess.run([sys.executable, "-c", _MKL_BLAS], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["ok"]


def test_unknown_blas_choice_is_refused():
    import os
    import subprocess
    import sys

    env = dict(os.environ, STRIDED_BLAS="atlas")
    run = subprocess.run([sys.executable, "-c", "import strided as sd; sd.ones((2, 2)) @ sd.ones((2, 2))"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode != 0
    assert "StridedError: STRIDED_BLAS: expected 'mkl' or 'openblas', got 'atlas'" in run.stderr
