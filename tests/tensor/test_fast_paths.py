"""The shortcuts taken for speed give NumPy's answers: small dense binary ops, multi-input cat,
small matmuls.  Each test draws layouts that sit on both sides of a shortcut's conditions
(offsets, size-1 dims with odd strides, gaps, transposes, sizes around the thresholds)."""

from math import prod

import numpy as np
import pytest
from hypothesis import given, strategies as st
import ml_dtypes

import strided as sd
from strided import ops
from strided.tensor import Tensor

NP = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "u8": np.uint8, "u32": np.uint32}
ARITH = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}


def _values(n, np_dtype, rng):
    if np.dtype(np_dtype).kind == "f":
        return rng.uniform(-3, 3, size=n).astype(np_dtype)
    return rng.integers(0, 20, size=n).astype(np_dtype)  # unsigned-safe, and ties for comparisons


@st.composite
def small_operand(draw, shape, np_dtype):
    """(tensor, numpy copy of its values): dense at an offset, dense with an odd stride on a
    size-1 dim, or strided (every other element, or transposed)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["dense", "offset", "size1", "gapped", "transposed"]))
    n = prod(shape)
    if kind == "gapped":
        vals = _values(2 * max(n, 1), np_dtype, rng)
        strides = tuple(2 * s for s in sd.Layout.contiguous(shape).stride)
        t = sd.as_strided(sd.from_numpy(vals), shape, strides, 0)
    elif kind == "transposed" and len(shape) >= 2:
        base = _values(n, np_dtype, rng).reshape(shape[:-2] + (shape[-1], shape[-2]))
        t = sd.from_numpy(base).transpose(-1, -2)
    else:
        off = draw(st.integers(1, 5)) if kind == "offset" else 0
        vals = _values(n + off + 3, np_dtype, rng)
        strides = list(sd.Layout.contiguous(shape).stride)
        if kind == "size1":
            strides = [7 if m == 1 else s for m, s in zip(shape, strides)]
        t = sd.as_strided(sd.from_numpy(vals), shape, tuple(strides), off)
    return t, np.array(t.numpy(), copy=True)


small_shapes = st.sampled_from([(), (0,), (2, 0, 3), (1,), (4,), (3, 1, 2), (1, 5), (2, 3, 4), (64, 64), (4097,),
                                (65, 64)])


@given(st.sampled_from(sorted(ARITH) + sorted(COMPARE)), st.sampled_from(sorted(NP)), small_shapes, st.data())
def test_small_binary_matches_numpy(op, dname, shape, data):
    a, ra = data.draw(small_operand(shape, NP[dname]))
    b, rb = data.draw(small_operand(shape, NP[dname]))
    got = ops.binary(op, a, b)
    want = {**ARITH, **COMPARE}[op](ra, rb)
    assert got.dtype.np == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    # dense (it may follow the inputs' memory order) in a buffer of its own
    assert got.buffer_nbytes == got.numel * got.dtype.itemsize
    assert not sd.same_buffer(got, a) and not sd.same_buffer(got, b)
    np.testing.assert_array_equal(a.numpy(), ra)  # inputs untouched
    if got.numel:
        got.numpy()[...] = 0  # the result owns its memory
        np.testing.assert_array_equal(b.numpy(), rb)


@given(st.sampled_from(["add", "mul", "sub"]), st.data())
def test_small_binary_mixed_dtypes_and_broadcasts_take_numpys_rules(op, data):
    da, db = data.draw(st.sampled_from([("f32", "f64"), ("i64", "f32"), ("u8", "i64"), ("f32", "f32")]))
    sa, sb = data.draw(st.sampled_from([((4,), (4,)), ((2, 3), (3,)), ((3, 1), (1, 4)), ((), (5,))]))
    a, ra = data.draw(small_operand(sa, NP[da]))
    b, rb = data.draw(small_operand(sb, NP[db]))
    got = ops.binary(op, a, b)
    want = ARITH[op](ra, rb)
    assert got.dtype.np == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_small_binary_records_only_when_an_input_is_tracked():
    a = sd.from_numpy(np.arange(4, dtype=np.float32))
    b = sd.from_numpy(np.ones(4, dtype=np.float32))
    assert (a + b)._op is None and (a * b)._op is None
    w = sd.Var(np.array([1.0, -2.0, 3.0, 0.5], dtype=np.float32))
    ra, rab = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32) + 1
    for y, want in ((w * a, ra), (a * w, ra), ((a + b) * w, rab)):
        assert y._op is not None and y.track_op()
        np.testing.assert_allclose(y.sum().backward()[w].numpy(), want)
    # a tracked intermediate (not a Var) is tracked too
    h = w + b
    z = h - a
    assert z._op is not None and z._op.inputs == (h, a)
    np.testing.assert_allclose(z.sum().backward()[w].numpy(), np.ones(4, np.float32))
    assert z.sum().backward().get(a) is None


def test_small_binary_bad_offset_still_raises():
    t = Tensor(sd.from_numpy(np.zeros(4, np.float32)).storage, sd.Layout((4,), (1,), 2), sd.f32)
    with pytest.raises(sd.StridedError):
        (t + t).numpy()


def test_small_binary_shared_dense_layout_still_checks_the_buffer():
    """The shared dense layout of a shape is recognised by identity; the buffer behind it
    is still measured: a longer one gives its first elements, a shorter one an error."""
    dense = sd.Layout.contiguous((4,))
    assert sd.from_numpy(np.ones(4, np.float32)).layout is dense  # what makes the shortcut common
    longer = Tensor(sd.from_numpy(np.arange(6, dtype=np.float32)).storage, dense, sd.f32)
    np.testing.assert_array_equal((longer + longer).numpy(), [0, 2, 4, 6])
    shorter = Tensor(sd.from_numpy(np.arange(3, dtype=np.float32)).storage, dense, sd.f32)
    with pytest.raises(sd.LayoutBoundsError):
        (shorter + longer).numpy()


# ---------------------------------------------------------------------------
# cat: all inputs in one kernel call, each by its own copy path


CAT_NP = {**NP, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "bool": np.bool_}


@st.composite
def cat_input(draw, shape, np_dtype):
    """A view of ``shape``: dense, at an offset, transposed (the tiled path), with gaps,
    flipped, broadcast, or read-only."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["dense", "offset", "transposed", "gapped", "flipped", "broadcast", "readonly"]))
    n = prod(shape)
    if kind == "transposed":
        base = _values(n, np_dtype, rng).reshape(shape[::-1])
        t = sd.from_numpy(base).permute(tuple(reversed(range(len(shape)))))
    elif kind == "gapped":
        base = _values(2 * n, np_dtype, rng).reshape(shape[:-1] + (2 * shape[-1],))
        t = sd.from_numpy(base)[..., ::2]
    elif kind == "flipped":
        t = sd.from_numpy(_values(n, np_dtype, rng).reshape(shape)).flip(0)
    elif kind == "broadcast":
        t = sd.from_numpy(_values(shape[-1], np_dtype, rng)).broadcast_as(shape)
    elif kind == "readonly":
        base = _values(n, np_dtype, rng).reshape(shape)
        base.flags.writeable = False
        t = sd.from_numpy(base)
    else:
        off = 3 if kind == "offset" else 0
        t = sd.from_numpy(_values(n + off, np_dtype, rng))[off:].reshape(shape)
    return t, np.array(t.numpy(), copy=True)


@given(st.data())
def test_cat_many_inputs_any_layouts_and_dtypes(data):
    rank = data.draw(st.integers(1, 4))
    shape = list(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    dim = data.draw(st.integers(-rank, rank - 1))
    # each dtype is its own kernel (the half types move as 16-bit ints), and a mixed
    # list sends the converting inputs down their own path
    dtypes = data.draw(st.sampled_from(
        [["f32"], ["f64"], ["u8"], ["u32"], ["bool"], ["f16"], ["bf16"], ["f32", "f64"], ["i64", "f32"], ["f16", "f32"]]
    ))
    parts = []
    for _ in range(data.draw(st.integers(1, 19))):  # past MANY: several kernel calls
        s = list(shape)
        s[dim] = data.draw(st.integers(0, 4))
        parts.append(data.draw(cat_input(tuple(s), CAT_NP[data.draw(st.sampled_from(dtypes))])))
    if all(p[0].shape[dim] == 0 for p in parts) and data.draw(st.booleans()):
        parts[0] = data.draw(cat_input(tuple(shape), CAT_NP[dtypes[0]]))
    got = sd.cat([p for p, _ in parts], dim)
    want = np.concatenate([r for _, r in parts], axis=dim)
    assert got.dtype.np == want.dtype and got.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), want)
    for t, r in parts:  # inputs untouched
        np.testing.assert_array_equal(t.numpy(), r)


def test_cat_big_inputs_take_the_parallel_copy():
    from strided.kernels.copy import COPY_PARALLEL_MIN

    rng = np.random.default_rng(3)
    rows = COPY_PARALLEL_MIN // 256 + 1
    a = rng.standard_normal((rows, 256), dtype=np.float32)
    b = rng.standard_normal((256, 7), dtype=np.float32)
    parts = [sd.from_numpy(a), sd.from_numpy(b).t(), sd.from_numpy(a[:3])]
    want = np.concatenate([a, b.T, a[:3]], 0)
    np.testing.assert_array_equal(sd.cat(parts, 0).numpy(), want)


def test_cat_records_for_autograd_and_splits_the_gradient():
    w = sd.Var(np.arange(6, dtype=np.float32).reshape(2, 3))
    x = sd.from_numpy(np.ones((2, 2), np.float32))
    y = sd.cat([x, w.t().t(), x], 1)
    assert y._op is not None and y._op.ctx["sizes"] == (2, 3, 2)
    g = (y * y).sum().backward()
    np.testing.assert_array_equal(g[w].numpy(), 2 * np.arange(6, dtype=np.float32).reshape(2, 3))
    assert sd.cat([x, x], 0)._op is None


def test_cat_cached_plan_follows_each_calls_dtypes():
    """Fresh results and dense from_numpy arrays of one shape share a layout object, so
    the cached plan meets other dtypes under the same key: each call still gets NumPy's
    promotion and values (all batched, with a conversion, half types told apart)."""
    shape = (2, 3)
    vals = np.arange(6).reshape(shape)

    def make(dtype, k):
        return sd.from_numpy((vals + k).astype(dtype))

    rounds = [
        (np.float32, np.float32),
        (np.float64, np.float64),  # every copy batched: the kernel refuses f64 for f32
        (np.float32, np.float64),  # a conversion: the result is f64
        (np.float32, np.float32),  # same layouts as the round before, f32 again
        (np.float64, np.float32),
        (np.float16, np.float16),
        (ml_dtypes.bfloat16, ml_dtypes.bfloat16),  # the same bits type as f16 in the kernel
        (np.float16, np.float16),
    ]
    for round_ in (rounds, rounds[::-1]):
        for da, db in round_:
            a, b = make(da, 0), make(db, 10)
            for dim in (0, 1):
                want = np.concatenate([(vals + 0).astype(da), (vals + 10).astype(db)], dim)
                got = sd.cat([a, b], dim)
                assert got.dtype.np == want.dtype, (da, db, dim)
                np.testing.assert_array_equal(got.numpy().astype(np.float64), want.astype(np.float64))


def test_cat_cached_plan_still_checks_every_buffer():
    """A hit checks no buffer in Python: the kernel must refuse a short or strided buffer
    and a read-only one must still be read right."""
    from strided.core.storage import Storage

    x = sd.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    lay = x.layout
    np.testing.assert_array_equal(sd.cat([x, x], 1).numpy(), np.concatenate([x.numpy()] * 2, 1))
    short = Tensor(Storage(np.arange(11, dtype=np.float32)), lay, x.dtype)  # one element short
    with pytest.raises(sd.LayoutBoundsError):
        sd.cat([x, short], 1)
    fresh = sd.Layout((3, 4), (4, 1), 1)  # a layout no cache has seen, one element short too
    with pytest.raises(sd.LayoutBoundsError):
        sd.cat([x, Tensor(Storage(np.arange(12, dtype=np.float32)), fresh, x.dtype)], 1)
    with pytest.raises(sd.StridedError, match="contiguous"):  # refused as a Storage already
        sd.cat([x, Tensor(Storage(np.arange(24, dtype=np.float32)[::2]), lay, x.dtype)], 1)
    frozen = np.arange(100, 112, dtype=np.float32).reshape(3, 4)
    frozen.flags.writeable = False
    got = sd.cat([x, sd.from_numpy(frozen)], 1)
    assert sd.from_numpy(frozen).layout is lay  # the same key as the calls before
    np.testing.assert_array_equal(got.numpy(), np.concatenate([np.arange(12).reshape(3, 4), frozen], 1))
    np.testing.assert_array_equal(sd.cat([x, x], 1).numpy(), np.concatenate([x.numpy()] * 2, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
def test_cat_growing_cache_matches_numpy(dtype):
    """A KV cache grown one step at a time: new shapes every call (the dense path, planned
    from integers), against np.concatenate on the same data."""
    rng = np.random.default_rng(3)
    cache_np = (rng.standard_normal((2, 3, 1, 5)) * 4).astype(dtype)
    cache = sd.from_numpy(cache_np.copy())
    for step in range(12):
        new_np = (rng.standard_normal((2, 3, 1 + step % 3, 5)) * 4).astype(dtype)
        cache = sd.cat([cache, sd.from_numpy(new_np)], 2)
        cache_np = np.concatenate([cache_np, new_np], 2)
        np.testing.assert_array_equal(cache.numpy(), cache_np)
    # dense inputs at an offset, a size-1 dim with any stride, an empty one, a strided one
    base = sd.from_numpy((np.arange(30) % 7).astype(dtype).reshape(6, 5))
    odd = sd.as_strided(base, (1, 5), (999, 1), 15)  # dense: a size-1 dim's stride never moves
    dense = [base[2:4], odd, base[0:0], base[5:]]
    assert all(p.is_contiguous() for p in dense)
    for parts in (dense, dense[:2] + [base.flip(1)[:1]] + dense[2:]):  # all dense, then one not
        want = np.concatenate([p.numpy() for p in parts], 0)
        np.testing.assert_array_equal(sd.cat(parts, 0).numpy(), want)
        np.testing.assert_array_equal(sd.cat([p.t() for p in parts], 1).numpy(), want.T)


def test_dense_rows_checks_what_it_is_given():
    from strided.kernels.copy import ManyCopy

    dst = np.zeros(10, np.float32)
    src = np.arange(4, dtype=np.float32)
    assert ManyCopy.dense_rows("t", dst, (src,), [(0, 5, 0, 2, 2)]).run(dst, (src,))
    np.testing.assert_array_equal(dst, [0, 1, 0, 0, 0, 2, 3, 0, 0, 0])
    with pytest.raises(sd.StridedError, match="do not fit"):
        ManyCopy.dense_rows("t", dst, (src,), [(7, 5, 0, 2, 2)])
    assert ManyCopy.dense_rows("t", dst, (src,), [(0, 5, 1, 2, 2)]) is None  # src too short from offset 1
    assert ManyCopy.dense_rows("t", dst, (src.astype(np.float64),), [(0, 5, 0, 2, 2)]) is None
    frozen = src.copy()
    frozen.flags.writeable = False
    assert ManyCopy.dense_rows("t", dst, (frozen,), [(0, 5, 0, 2, 2)]) is None


def test_copy_many_into_rejects_bad_layouts_before_copying():
    from strided.kernels.copy import copy_many_into

    dst = np.zeros(8, np.float32)
    src = np.arange(4, dtype=np.float32)
    good = sd.Layout((4,))
    with pytest.raises(sd.LayoutBoundsError):
        copy_many_into(dst, [good, sd.Layout((4,), (1,), 6)], [src, src], [good, good])
    with pytest.raises(sd.LayoutBoundsError):
        copy_many_into(dst, [good, good], [src, src], [good, sd.Layout((4,), (2,), 0)])
    with pytest.raises(sd.ShapeError):
        copy_many_into(dst, [sd.Layout((2,))], [src], [good])
    with pytest.raises(sd.StridedError):
        copy_many_into(dst, [good], [src, src], [good])


def test_copy_many_into_checks_each_call_though_the_layouts_repeat():
    """The program is cached by the layouts' identities: the buffers are still checked on
    every call (a shorter buffer, a read-only one, a wrong dtype, a non-array)."""
    from strided.kernels.copy import copy_many_into

    dst = np.zeros(8, np.float32)
    dls = [sd.Layout((4,)), sd.Layout((4,), (1,), 4)]
    sls = [sd.Layout((4,), (1,), 2), sd.Layout((4,))]
    long = np.arange(6, dtype=np.float32)
    copy_many_into(dst, dls, [long, long], sls)
    np.testing.assert_array_equal(dst, [2, 3, 4, 5, 0, 1, 2, 3])
    with pytest.raises(sd.LayoutBoundsError):  # offset 2 + 4 elements do not fit in 5
        copy_many_into(dst, dls, [long[:5], long], sls)
    frozen = np.arange(10, 16, dtype=np.float32)
    frozen.flags.writeable = False
    copy_many_into(dst, dls, [long, frozen], sls)  # another numba type: copied on its own
    np.testing.assert_array_equal(dst, [2, 3, 4, 5, 10, 11, 12, 13])
    copy_many_into(dst, dls, [long.astype(np.float64), long], sls)  # converted on its own
    np.testing.assert_array_equal(dst, [2, 3, 4, 5, 0, 1, 2, 3])
    with pytest.raises(sd.StridedError, match="src"):
        copy_many_into(dst, dls, [long, list(range(6))], sls)
    with pytest.raises(sd.StridedError, match="contiguous"):
        copy_many_into(dst, dls, [long, np.arange(12, dtype=np.float32)[::2]], sls)


def test_copy_many_into_tells_the_half_types_apart_on_a_repeat():
    """f16 and bf16 both travel to the kernel as 16-bit patterns: a program planned for f16
    srcs must not bit-copy bf16 ones given with the same layouts (they are converted)."""
    from strided.kernels.copy import copy_many_into

    dst = np.zeros(8, np.float16)
    dls, sls = [sd.Layout((4,)), sd.Layout((4,), (1,), 4)], [sd.Layout((4,)), sd.Layout((4,))]
    vals = np.array([1.5, -2.0, 0.25, 3.0])
    copy_many_into(dst, dls, [vals.astype(np.float16)] * 2, sls)
    np.testing.assert_array_equal(dst, np.concatenate([vals, vals]).astype(np.float16))
    dst[:] = 0
    copy_many_into(dst, dls, [vals.astype(np.float16), vals.astype(ml_dtypes.bfloat16)], sls)
    np.testing.assert_array_equal(dst, np.concatenate([vals, vals]).astype(np.float16))


def test_cat_one_call_covers_every_copy_path():
    from strided.kernels.copy import plan_copy

    rng = np.random.default_rng(5)
    big = rng.standard_normal((6, 8, 20)).astype(np.float32)
    views = {
        "run": lambda t: sd.from_numpy(np.ascontiguousarray(big[3:, 4:])),
        "rows": lambda t: t[:3, 2:6],
        "blocks": lambda t: t[::2, ::2],
        "tiled": lambda t: t[:3, :4].flip(2).permute(2, 1, 0).permute(2, 1, 0),
        "general": lambda t: t[:3, :4].flip(2),
    }
    base = sd.from_numpy(big)
    parts = [f(base) for f in views.values()]
    # the transposed input really is transposed in memory
    parts[3] = sd.from_numpy(np.ascontiguousarray(big[:3, :4].transpose(2, 1, 0))).permute(2, 1, 0)
    out = sd.empty((15, 4, 20))
    seen = set()
    start = 0
    for p in parts:
        seen.add(plan_copy(out.layout.narrow(0, start, 3), p.layout).path)
        start += 3
    assert seen == set(views)
    want = np.concatenate([np.asarray(p.numpy()) for p in parts], 0)
    np.testing.assert_array_equal(sd.cat(parts, 0).numpy(), want)
    np.testing.assert_array_equal(want[:3], big[3:, 4:])


# ---------------------------------------------------------------------------
# matmul: cached batch walks, one BLAS thread for small products


@given(st.data())
def test_batched_matmul_walks_are_cached_per_layout_not_per_shape(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x_np = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    y_np = rng.uniform(-1, 1, (3, 2, 5, 6)).astype(np.float32)
    x, y = sd.from_numpy(x_np), sd.from_numpy(y_np)
    # same result shape (3, 2, 4, 6), different batch strides and broadcasts
    xc_np = np.ascontiguousarray(x_np.transpose(1, 0, 2, 3))
    cases = [
        (x.permute(1, 0, 2, 3), y, x_np.transpose(1, 0, 2, 3), y_np),
        (sd.from_numpy(xc_np), y, xc_np, y_np),
        (x.permute(1, 0, 2, 3), y.narrow(1, 0, 1), x_np.transpose(1, 0, 2, 3), y_np[:, :1]),
        (x[0].unsqueeze(1), y, x_np[0][:, None], y_np),
    ]
    for a, b, ra, rb in data.draw(st.permutations(cases)):
        np.testing.assert_allclose((a @ b).numpy(), np.matmul(ra, rb), rtol=1e-5, atol=1e-5)


def test_small_products_leave_the_blas_pool_as_strided_set_it():
    from strided.kernels import matmul as km

    if km._set_blas_threads is None:
        pytest.skip("no OpenBLAS thread control found for scipy's BLAS")
    from threadpoolctl import ThreadpoolController

    libs = [c for c in ThreadpoolController().select(internal_api="openblas").lib_controllers if "scipy" in c.filepath]
    before = sd.get_num_threads()
    try:
        sd.set_num_threads(2)
        rng = np.random.default_rng(0)
        for n in (8, 256, 323):  # 323^3 is past BLAS_PARALLEL_MIN
            a = rng.standard_normal((n, n)).astype(np.float32)
            np.testing.assert_allclose((sd.from_numpy(a) @ sd.from_numpy(a.T)).numpy(), a @ a.T, rtol=1e-4, atol=1e-3)
            assert all(c.get_num_threads() == 2 for c in libs)
    finally:
        sd.set_num_threads(before)


def test_cat_and_copy_many_into_refuse_garbage_before_their_caches():
    from strided.kernels.copy import copy_many_into

    t = sd.from_numpy(np.ones((2, 2), np.float32))
    for dim in ([1], 1.5, "0", None):
        with pytest.raises(sd.StridedError):
            sd.cat([t, t], dim)
    with pytest.raises(sd.StridedError):
        copy_many_into(np.zeros(4, np.float32), [[4]], [np.zeros(4, np.float32)], [sd.Layout((4,))])


@pytest.mark.parametrize("rank", [12, 21])
def test_walks_over_many_dims_that_never_merge(rank):
    """Every walking kernel keeps its coordinates on its own stack (``walk.index_scratch``),
    one per merged dim.  Dims of size 2, one operand in row-major order and the other in
    the reverse order, never merge: these walks take ``rank`` dims (size-1 dims are
    dropped, so no walk has more than log2 of its size).  Elementwise, reduced, copied,
    sorted, scanned and searched for true elements, as NumPy."""
    from strided.kernels import elementwise as ew

    rng = np.random.default_rng(rank)
    shape, axes = (2,) * rank, tuple(reversed(range(rank)))
    x = rng.uniform(-1, 1, size=2 ** rank).astype(np.float32)
    y = rng.uniform(-1, 1, size=2 ** rank).astype(np.float32)
    want = x.reshape(shape).transpose(axes)  # reversed order
    t = sd.asarray(x).reshape(shape).permute(axes)
    c = sd.asarray(y).reshape(shape)  # row-major
    out = t + c
    assert len(ew.plan(out.layout, t.layout, c.layout).shape) == rank
    np.testing.assert_array_equal(out.numpy(), want + y.reshape(shape))
    e = t.exp().numpy()
    true = np.exp(want.astype(np.float64))  # exp: within an ulp of the correctly rounded result
    assert np.all(np.abs(e - true) <= np.spacing(true.astype(np.float32)))
    np.testing.assert_array_equal((c * t.exp()).numpy(), y.reshape(shape) * e)
    np.testing.assert_allclose(t.sum(3).numpy(), want.sum(3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t.sum((0, rank - 1)).numpy(), want.sum((0, rank - 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(t.max(1).numpy(), want.max(1))
    np.testing.assert_array_equal(t.contiguous().numpy(), want)
    np.testing.assert_array_equal(sd.sort(t, axis=2).numpy(), np.sort(want, axis=2))
    np.testing.assert_allclose(sd.cumulative_sum(t, axis=1).numpy(), np.cumsum(want, axis=1), rtol=1e-6)
    got = sd.nonzero(t > 0.5)
    for g, w in zip(got, np.nonzero(want > 0.5), strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
