"""sort, argsort, the cumulative sums and products, nonzero, boolean masks, searchsorted, the
unique family, signbit, nextafter and the shifts: against array_api_strict (the standard's
reference) and NumPy, on tensors of drawn layouts (gaps, flips, stride-0 broadcasts,
transposes, zero-size dims) holding ties, NaNs and both zeros."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import array_api_strict as xps
import strided as sd
import strided.kernels.scan as kscan
import strided.kernels.sort as ksort
from strategies import layouts_of_shape, np_view, shapes

# Few distinct values, so that lines have ties; NaN and both zeros, so that the order of
# NaNs and the stability of -0.0 against 0.0 show.
_POOL = np.array([np.nan, -0.0, 0.0, 1.0, -1.5, 2.0, 2.0, 3.0, np.inf, -np.inf])


@st.composite
def tensors(draw, dtype=np.float64, min_rank=1, max_rank=4, allow_broadcast=True, shape=None):
    """(tensor, the NumPy array it views): values from a small pool under a drawn layout."""
    if shape is None:
        shape = draw(shapes(min_rank=min_rank, max_rank=max_rank, max_size=5, max_numel=160))
    lay, n = draw(layouts_of_shape(shape, allow_broadcast=allow_broadcast))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        buf = _POOL[rng.integers(0, len(_POOL), n)].astype(dtype)
    elif dtype == np.bool_:
        buf = rng.integers(0, 2, n).astype(np.bool_)
    else:
        buf = rng.integers(0, 5, n).astype(dtype)
    return sd.as_strided(sd.from_numpy(buf), lay.shape, lay.stride, lay.offset), np_view(buf, lay)


def strict(a):
    return xps.asarray(np.ascontiguousarray(a))


def exact(got, want, signs=True):
    """Same shape, dtype and values, NaNs and the sign of zeros included (unless not ``signs``)."""
    want = np.asarray(want)
    assert isinstance(got, sd.Tensor), type(got)
    g = got.numpy()
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(g, want)
    if want.dtype.kind == "f" and signs:
        np.testing.assert_array_equal(np.signbit(g), np.signbit(want))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), descending=st.booleans())
def test_sort_and_argsort_are_array_api_strict_on_any_layout(data, descending):
    t, a = data.draw(tensors())
    axis = data.draw(st.integers(-t.ndim, t.ndim - 1), label="axis")
    exact(sd.sort(t, axis=axis, descending=descending),
          np.asarray(xps.sort(strict(a), axis=axis, descending=descending)))
    exact(sd.argsort(t, axis=axis, descending=descending),
          np.asarray(xps.argsort(strict(a), axis=axis, descending=descending)))
    exact(t.sort(axis), np.sort(a, axis=axis, kind="stable"))


# numba compiles the kernels once per dtype: i64, and f16 (sorted as f32) stand for the rest
@pytest.mark.parametrize("dtype", [np.int64, "float16"])
def test_sort_other_dtypes_on_a_transposed_view(dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (6, 9)).astype(dtype)
    t = sd.asarray(a)
    for axis in (0, 1):
        exact(sd.sort(t.mT, axis=axis), np.sort(a.T, axis=axis, kind="stable"))
        # strict has no float16 and sorts no bools (NumPy does; so does strided)
        ref = a.T.astype({"float16": np.float32, np.bool_: np.uint8}.get(dtype, a.dtype))
        exact(sd.argsort(t.mT, axis=axis, descending=True),
              np.asarray(xps.argsort(strict(ref), axis=axis, descending=True)))


def test_sort_refuses_what_has_no_order():
    with pytest.raises(sd.StridedError, match="sort: expected a tensor of rank >= 1"):
        sd.sort(sd.asarray(1.0))
    with pytest.raises(sd.StridedError, match="argsort: expected descending to be a bool"):
        sd.argsort(sd.zeros(3), descending="yes")
    with pytest.raises(sd.StridedError, match="dim 2"):
        sd.sort(sd.zeros((2, 2)), axis=2)


def test_sort_gradient_goes_back_to_where_each_element_came_from():
    a = np.random.default_rng(5).permutation(12).astype(np.float64).reshape(3, 4)
    w = np.random.default_rng(6).standard_normal((4, 3))
    x = sd.Var(sd.asarray(a))
    y = sd.sort(x.mT, axis=1, descending=True)
    grads = (y * sd.asarray(w)).sum_all().backward()
    perm = np.argsort(-a.T, axis=1, kind="stable")  # y[j, k] = x.T[j, perm[j, k]]
    want = np.zeros((3, 4))
    for j in range(4):
        for k in range(3):
            want[perm[j, k], j] += w[j, k]
    np.testing.assert_allclose(grads[x].numpy(), want)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), initial=st.booleans(), prod=st.booleans())
def test_cumulative_sum_and_prod_are_array_api_strict(data, initial, prod):
    dtype = data.draw(st.sampled_from([np.float64, np.int64, np.uint8]), label="dtype")  # u8: i64 and u32 sums
    t, a = data.draw(tensors(dtype))
    axis = data.draw(st.integers(-t.ndim, t.ndim - 1), label="axis")
    ours = sd.cumulative_prod if prod else sd.cumulative_sum
    ref = xps.cumulative_prod if prod else xps.cumulative_sum
    got = ours(t, axis=axis, include_initial=initial)
    want = np.asarray(ref(strict(a), axis=axis, include_initial=initial))
    assert got.shape == want.shape
    # The running sum or product accumulates in what sum or prod of x does (the standard's
    # default integer dtypes); the values are strict's.
    assert got.dtype == (sd.prod if prod else sd.sum)(t).dtype
    np.testing.assert_allclose(got.numpy(), want.astype(got.dtype.np), rtol=1e-12)


def test_cumulative_sum_dtype_axis_none_and_f32_order():
    a = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    exact(sd.cumulative_sum(sd.asarray(a)), np.cumsum(a))  # left to right in f32, as NumPy
    exact(sd.cumulative_sum(sd.asarray(a), dtype=sd.f64), np.cumsum(a, dtype=np.float64))
    exact(sd.cumulative_prod(sd.asarray([1, 2, 3], dtype=sd.u8), dtype=sd.i64), np.array([1, 2, 6], np.int64))
    with pytest.raises(sd.StridedError, match="cumulative_sum: axis is required"):
        sd.cumulative_sum(sd.zeros((2, 2)))


def test_cumulative_sum_gradient_is_the_reversed_running_sum():
    a = np.arange(12.0).reshape(3, 4)
    w = np.random.default_rng(2).standard_normal((4, 4))
    x = sd.Var(sd.asarray(a))
    y = sd.cumulative_sum(x.mT, axis=1, include_initial=True)  # y[j, k] = sum of x[i, j] for i < k
    grads = (y * sd.asarray(w)).sum_all().backward()
    want = np.array([[w[j, i + 1:].sum() for j in range(4)] for i in range(3)])
    np.testing.assert_allclose(grads[x].numpy(), want)


def test_cumulative_prod_gradient_without_zeros_and_refused_with_them():
    a = np.array([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]])
    w = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 2.0]])
    x = sd.Var(sd.asarray(a))
    grads = (sd.cumulative_prod(x, axis=1) * sd.asarray(w)).sum_all().backward()
    # d/dx[r, i] of sum_k w[r, k] * prod_{j <= k} x[r, j], written without division
    want = np.array([[sum(w[r, k] * np.prod([a[r, j] for j in range(k + 1) if j != i]) for k in range(i, 3))
                      for i in range(3)] for r in range(2)])
    np.testing.assert_allclose(grads[x].numpy(), want)
    z = sd.cumulative_prod(sd.Var(sd.asarray([1.0, 0.0])))
    with pytest.raises(sd.StridedError, match="cumulative_prod"):
        z.sum_all().backward()


def test_repeated_scans_and_sorts_of_a_var_record_their_op_every_time():
    # The first call decides and keeps, the next ones take the kept path: each still records
    # the op, so every backward gets the gradient.
    a = np.array([[1.5, -2.0, 0.5, 4.0], [3.0, 0.25, -1.0, 2.0]])
    w = np.array([[1.0, 2.0, -1.0, 0.5], [0.5, -3.0, 2.0, 1.0]])
    want_sum = np.cumsum(w[:, ::-1], axis=1)[:, ::-1]  # d/dx[r, i] = sum of w[r, k] for k >= i
    order = np.argsort(a, axis=1, kind="stable")
    want_sort = np.zeros_like(w)
    np.put_along_axis(want_sort, order, w, axis=1)  # sorted place k came from x[r, order[r, k]]
    for _ in range(3):
        x = sd.Var(sd.asarray(a))
        np.testing.assert_array_equal((sd.cumulative_sum(x, axis=1) * sd.asarray(w)).sum_all().backward()[x].numpy(),
                                      want_sum)
        x = sd.Var(sd.asarray(a))
        np.testing.assert_array_equal((sd.sort(x, axis=-1) * sd.asarray(w)).sum_all().backward()[x].numpy(),
                                      want_sort)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_nonzero_and_boolean_masks_are_numpys(data):
    t, a = data.draw(tensors(np.float64))
    got = sd.nonzero(t)
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        exact(g, w.astype(np.int64))
    lead = data.draw(st.integers(1, t.ndim), label="mask rank")
    mask, mask_np = data.draw(tensors(np.bool_, shape=t.shape[:lead]), label="mask")
    exact(t[mask], a[mask_np])
    u, b = t.copy(), a.copy()
    u[mask] = -7.0
    b[mask_np] = -7.0
    exact(u, b)
    k = int(mask_np.sum())
    vals = np.arange(k * int(np.prod(a.shape[lead:], dtype=np.int64)), dtype=np.float64).reshape((k,) + a.shape[lead:])
    u[mask] = sd.asarray(vals)
    b[mask_np] = vals
    exact(u, b)


def test_mask_edge_cases():
    t = sd.asarray(np.arange(6.0).reshape(2, 3))
    exact(t[sd.asarray(True)], np.arange(6.0).reshape(1, 2, 3))
    exact(t[sd.asarray(False)], np.zeros((0, 2, 3)))
    exact(t[np.array([True, False])], np.arange(3.0).reshape(1, 3))
    u, b = t.copy(), np.arange(6.0).reshape(2, 3)
    u[np.array([True, False])] = 5.0
    u[(sd.asarray([[False, True, False], [True, False, False]]),)] = sd.asarray([8.0, 9.0])
    b[np.array([True, False])] = 5.0
    b[(np.array([[False, True, False], [True, False, False]]),)] = np.array([8.0, 9.0])
    exact(u, b)
    with pytest.raises(sd.StridedIndexError, match="mask"):
        t[sd.asarray([True, False, True])]
    with pytest.raises(sd.StridedIndexError, match="broadcast"):
        t[sd.asarray([[True, False, True], [False, False, False]])] = sd.asarray([1.0, 2.0, 3.0])
    assert sd.__array_namespace_info__().capabilities()["boolean indexing"] is True


@settings(max_examples=60, deadline=None)
@given(data=st.data(), right=st.booleans(), use_sorter=st.booleans())
def test_searchsorted_is_numpys(data, right, use_sorter):
    t, a = data.draw(tensors(np.float64, max_rank=1))
    v, b = data.draw(tensors(np.float64, max_rank=3))
    side = "right" if right else "left"
    if use_sorter:
        order = np.argsort(a, kind="stable")
        got = sd.searchsorted(t, v, side=side, sorter=sd.asarray(order))
        want = np.searchsorted(a, b, side=side, sorter=order)
    else:
        s = np.sort(a)
        got = sd.searchsorted(sd.asarray(s).flip([0]).flip([0]), v, side=side)
        want = np.searchsorted(s, b, side=side)
    exact(got, want.astype(np.int64))
    exact(sd.searchsorted(sd.asarray([1, 3, 5]), 3, side=side), np.searchsorted([1, 3, 5], 3, side=side))


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_unique_family_is_array_api_strict(data):
    # -0.0 and 0.0 are one value; which of them stands for it is left open (NumPy's unsorted
    # quicksort picks either), so signs of zeros are not compared.
    dtype = data.draw(st.sampled_from([np.float64, np.int64]), label="dtype")
    t, a = data.draw(tensors(dtype))
    s = strict(a)
    for g, w in zip(sd.unique_all(t), xps.unique_all(s)):
        exact(g, np.asarray(w), signs=False)
    vc = sd.unique_counts(t)
    exact(vc.values, np.asarray(xps.unique_counts(s).values), signs=False)
    exact(vc.counts, np.asarray(xps.unique_counts(s).counts))
    # strict's unique_inverse sorts without stability, so its NaNs (each its own value) come
    # in any order; its unique_all sorts stably, as strided does.
    exact(sd.unique_inverse(t).inverse_indices, np.asarray(xps.unique_all(s).inverse_indices))
    exact(sd.unique_values(t), np.asarray(xps.unique_values(s)), signs=False)
    # NumPy's np.unique puts NaNs together (equal_nan=True)
    for g, w in zip(np.unique(t, return_index=True, return_inverse=True, return_counts=True),
                    np.unique(a, return_index=True, return_inverse=True, return_counts=True)):
        exact(g, w, signs=False)


def test_unique_of_a_scalar_keeps_its_shape_in_the_inverse():
    r = sd.unique_all(sd.asarray(2.5))
    exact(r.values, np.array([2.5], np.float32))
    assert r.inverse_indices.shape == () and r.inverse_indices.item() == 0  # the standard: x's shape


def test_signbit_nextafter_sign_of_zero():
    a = np.array([-0.0, 0.0, -1.0, 2.0, np.nan, -np.nan, -np.inf], np.float32)
    t = sd.asarray(a)
    exact(sd.signbit(t.flip([0])), np.signbit(a[::-1]))
    exact(np.signbit(t), np.signbit(a))
    z = np.array([-0.0, 0.0, -2.0, np.nan])
    exact(sd.sign(sd.asarray(z)), np.sign(z))
    exact(sd.sign(sd.asarray(z, dtype=sd.f32)), np.asarray(xps.sign(xps.asarray(z, dtype=xps.float32))))
    for dtype in (np.float32, np.float64):
        x = np.array([0.0, 1.0, -1.0, np.inf, 1e-45], dtype)
        y = np.array([1.0, 0.0, -np.inf, 0.0, -1.0], dtype)
        exact(sd.nextafter(sd.asarray(x), sd.asarray(y)), np.nextafter(x, y))
        exact(np.nextafter(sd.asarray(x), sd.asarray(y)), np.nextafter(x, y))
    with pytest.raises(sd.StridedError, match="nextafter"):
        sd.nextafter(sd.asarray([1.0], dtype=sd.f16), 2.0)
    with pytest.raises(sd.StridedError, match="signbit"):
        sd.signbit(sd.asarray([1]))


@pytest.mark.parametrize("dtype", [np.int64, np.uint8])
def test_shifts_are_numpys(dtype):
    bits = np.dtype(dtype).itemsize * 8
    x = np.array([1, 5, 100, 3, 7, 0, 2, 9], dtype)
    if dtype == np.int64:
        x[3] = -3
    y = np.array([0, 1, 2, bits - 1, bits, bits + 3, 3, 1], dtype)
    t, u = sd.asarray(x), sd.asarray(y)
    exact(sd.bitwise_left_shift(t, u), np.left_shift(x, y))
    exact(sd.bitwise_right_shift(t.flip([0]), u.flip([0])), np.right_shift(x[::-1], y[::-1]))
    exact(t << u, x << y)
    exact(t >> 2, x >> 2)
    exact(3 << u[:3], np.left_shift(np.array(3, dtype), y[:3]))
    exact(np.left_shift(t, u), np.left_shift(x, y))
    v = sd.asarray(x.copy())
    v <<= 1
    w = x.copy()
    w <<= 1
    exact(v, w)
    v >>= 2
    w >>= 2
    exact(v, w)
    if dtype == np.int64:
        exact(t << -1, np.left_shift(x, -1))  # the operator is NumPy's: 0 (and -1 for >> of negatives)
        with pytest.raises(sd.StridedError, match="bitwise_left_shift: shift counts must be >= 0"):
            sd.bitwise_left_shift(t, -1)
        with pytest.raises(sd.StridedError, match="bitwise_right_shift"):
            sd.bitwise_right_shift(t, sd.asarray([1, -2, 0, 0, 0, 0, 0, 0]))
    with pytest.raises(sd.StridedError, match="bitwise_left_shift"):
        sd.bitwise_left_shift(sd.asarray([1.0]), 1)


def test_numpy_names_answer_with_strided():
    a = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    t = sd.asarray(a)
    for fn, args in [(np.sort, ()), (np.argsort, ()), (np.cumsum, ()), (np.cumprod, ()), (np.sort, (0,)),
                     (np.cumsum, (1,))]:
        got = fn(t, *args)
        assert isinstance(got, sd.Tensor), fn
        exact(got, fn(a, *args))
    for g, w in zip(np.nonzero(t), np.nonzero(a)):
        exact(g, w)
    exact(np.searchsorted(sd.asarray([1.0, 2.0, 3.0]), t), np.searchsorted([1.0, 2.0, 3.0], a))
    exact(np.unique(t), np.unique(a))


def _edge_values(dtype, rng, size):
    """``size`` values of ``dtype`` drawn from its edges (both zeros, NaNs of either sign,
    infinities, subnormals, the extremes, unsigned values past the signed range) with
    ties, and some random ones."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size).astype(np.bool_)
    if dtype.kind == "f":
        fi = np.finfo(dtype)
        pool = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, fi.smallest_subnormal, -fi.smallest_subnormal,
                         fi.max, fi.min, 1.0, -1.0, 2.5, -2.5], dtype)
        rand = rng.standard_normal(size).astype(dtype)
    else:
        ii = np.iinfo(dtype)
        pool = np.array([ii.min, ii.max, 0, 1, ii.max // 2, ii.max // 2 + 1, ii.min + 1, ii.max - 1], dtype)
        rand = rng.integers(ii.min, ii.max, size, dtype=dtype, endpoint=True)
    return np.where(rng.random(size) < 0.5, pool[rng.integers(0, len(pool), size)], rand)


@pytest.mark.parametrize("radix_min, rank_max",
                         [(1, 0), (ksort.RADIX_MIN, ksort.RANK_MAX), (1 << 40, 0), (1 << 40, 1 << 40)],
                         ids=["radix", "as-shipped", "merge", "rank"])
def test_sort_kernel_paths_order_every_dtype_as_numpy(monkeypatch, radix_min, rank_max):
    """Each path of the sort kernel (every line radix sorted, the shipped thresholds, every
    line merge sorted, every line ranked) on lines of 1 to 300 elements read backwards
    across a transposed buffer: values bit for bit and positions as NumPy's stable sort,
    both directions."""
    monkeypatch.setattr(ksort, "RADIX_MIN", radix_min)
    monkeypatch.setattr(ksort, "RANK_MAX", rank_max)
    rng = np.random.default_rng(11)
    for dtype in sorted(ksort.ORDERED, key=str):
        for n in (1, 2, 9, 40, 100, 300):
            buf = _edge_values(dtype, rng, 3 * n)
            lay = sd.Layout((3, n), (1, -3), 3 * (n - 1))  # lines of stride -3
            a = np_view(buf, lay)
            out, pos = np.empty(3 * n, buf.dtype), np.empty(3 * n, np.int64)
            c = sd.Layout.contiguous((3, n))
            up = np.sort(a, axis=1, kind="stable")
            for descending in (False, True):
                ksort.sort(out, c, buf, lay, 1, descending)
                want = up[:, ::-1] if descending else up
                assert out.reshape(3, n).tobytes() == np.ascontiguousarray(want).tobytes(), (dtype, n, descending)
                ksort.argsort(pos, c, buf, lay, 1, descending)
                if descending:  # the reversed line sorted, positions mapped back
                    want = (n - 1 - np.argsort(a[:, ::-1], axis=1, kind="stable"))[:, ::-1]
                else:
                    want = np.argsort(a, axis=1, kind="stable")
                np.testing.assert_array_equal(pos.reshape(3, n), want, err_msg=f"{dtype} {n} {descending}")


def test_scan_lines_four_at_a_time_and_alone_give_numpys_bits():
    """Lines run four at a time in lockstep, then the ones left one at a time: f32 running
    sums and products along unit-stride, reversed and strided lines, and down columns,
    bit for bit NumPy's (left to right in f32)."""
    rng = np.random.default_rng(8)
    for rows in (1, 3, 4, 5, 9):
        a = rng.standard_normal((rows, 37)).astype(np.float32)
        t = sd.asarray(a)
        for view, want in ((t, a), (t[:, ::-1], a[:, ::-1]), (t[::-1, ::3], a[::-1, ::3])):
            exact(sd.cumulative_sum(view, axis=1), np.cumsum(want, axis=1))
            exact(sd.cumulative_prod(view, axis=1), np.cumprod(want, axis=1))
            exact(sd.cumulative_sum(view.mT, axis=0), np.cumsum(want.T, axis=0))


def test_parallel_lines(monkeypatch):
    """Above the threshold the lines run in chunks under prange (sorts and scans): same results."""
    monkeypatch.setattr(ksort, "PARALLEL_MIN", 1)
    a = np.random.default_rng(4).integers(0, 50, (40, 33)).astype(np.float64)
    t = sd.asarray(a)
    exact(sd.argsort(t.mT, axis=0), np.argsort(a.T, axis=0, kind="stable"))  # (one parallel kernel: compiles cost)
    b = np.random.default_rng(5).integers(0, 50, (6, 300)).astype(np.float32)  # radix-sorted lines, in chunks
    exact(sd.argsort(sd.asarray(b), axis=1), np.argsort(b, axis=1, kind="stable"))
    exact(sd.cumulative_sum(t, axis=0), np.cumsum(a, axis=0))  # strided lines four at a time, in chunks


def test_kernel_entry_points_check_before_touching_memory():
    src = np.arange(6.0)
    with pytest.raises(sd.StridedError, match="sort: dst"):
        ksort.sort(np.empty(3), sd.Layout.contiguous((6,)), src, sd.Layout.contiguous((6,)), 0)
    with pytest.raises(sd.StridedError, match="argsort: dst has dtype float64"):
        ksort.argsort(np.empty(6), sd.Layout.contiguous((6,)), src, sd.Layout.contiguous((6,)), 0)
    with pytest.raises(sd.StridedError, match="cumulative_sum: dst layout"):
        kscan.cumulate("sum", np.empty(6), sd.Layout((2, 3), (0, 1)), src, sd.Layout.contiguous((2, 3)), 0)
    with pytest.raises(sd.StridedError, match="nonzero: expected out of count x ndim"):
        kscan.nonzero(np.ones(4, bool), sd.Layout.contiguous((4,)), np.empty(3, np.int64))
    with pytest.raises(sd.StridedError, match="searchsorted: expected a 1-D x1"):
        ksort.searchsorted(np.empty(2, np.int64), sd.Layout.contiguous((2,)), src, sd.Layout.contiguous((2, 3)),
                           src, sd.Layout.contiguous((2,)))
