"""The kept decisions of the op layer: keyed by value, bounded, listed, cleared with the
thread count, and never a way around a buffer check."""

import numpy as np
import pytest

import strided as sd
from strided import caches
from strided.core.storage import Storage
from strided.tensor import Tensor


def _on(buf, layout, dtype=sd.f32):
    return Tensor(Storage(buf), layout, dtype)


def test_inventory_lists_every_op_cache_with_a_bound():
    import strided.ops.linalg  # noqa: F401  (its cache is listed once it is loaded)

    names = {name: (key, bound, threads) for name, key, bound, threads, _ in caches.inventory()}
    for name in ("ops.elementwise", "ops.reduce", "ops.copies", "ops.cat", "linalg.matmul", "ops.sort", "ops.scan"):
        key, bound, threads = names[name]
        assert key and bound > 0 and threads


def test_a_cache_empties_itself_at_its_bound():
    c = caches.Cache("test", "ints", 3, threads=False)
    for i in range(3):
        c.put(i, i)
    assert len(c) == 3
    c.put(3, 3)
    assert dict(c) == {3: 3}


def test_set_num_threads_clears_the_plans_made_for_the_old_count():
    a = sd.rand(8, 8)
    a.exp()
    a.sum(0)
    kept = {name: n for name, _, _, threads, n in caches.inventory() if threads}
    assert kept["ops.elementwise"] > 0 and kept["ops.reduce"] > 0
    sd.set_num_threads(sd.get_num_threads())
    after = {name: n for name, _, _, threads, n in caches.inventory() if threads}
    assert all(n == 0 for n in after.values()), after


def test_equal_layouts_share_a_decision_whatever_the_objects():
    """The key is the layout's value: a second tensor with an equal (not identical) layout
    finds the first one's decision and gets the same answer."""
    x = np.arange(12, dtype=np.float32)
    lay1 = sd.Layout((3, 4), (1, 3), 0)
    lay2 = sd.Layout((3, 4), (1, 3), 0)
    assert lay1 == lay2 and lay1 is not lay2
    want = np.exp(x.reshape(4, 3).T)
    np.testing.assert_allclose(_on(x.copy(), lay1).exp().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(_on(x.copy(), lay2).exp().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("op", ["exp", "add", "add_scalar", "rsub_scalar", "sum0", "sum_dims", "mean", "contiguous",
                                "to_f64", "matmul", "cumsum", "cumprod", "sort", "argsort", "argmax", "argmin"])
def test_a_kept_decision_still_measures_every_buffer(op):
    """The same layout over a buffer one element too short: the first call (full path) and
    every repeat (kept path) raise LayoutBoundsError; a long enough buffer still works."""
    lay = sd.Layout((3, 4), (1, 3), 0)  # a transpose: reaches 12 elements
    run = {
        "exp": lambda t: t.exp(),
        "add": lambda t: t + t,
        "add_scalar": lambda t: t + 1.5,
        "rsub_scalar": lambda t: 2 - t,
        "sum0": lambda t: t.sum(0),
        "sum_dims": lambda t: t.sum((1,), keepdim=True),  # a tuple of dims is kept too
        "mean": lambda t: t.mean(1),
        "contiguous": lambda t: t.contiguous(),
        "to_f64": lambda t: t.to_dtype(sd.f64),
        "matmul": lambda t: t @ t.t(),
        "cumsum": lambda t: sd.cumulative_sum(t, axis=0),
        "cumprod": lambda t: sd.cumulative_prod(t, axis=-1),
        "sort": lambda t: sd.sort(t, axis=0, descending=True),
        "argsort": lambda t: sd.argsort(t, axis=1),
        "argmax": lambda t: t.argmax(0),
        "argmin": lambda t: sd.argmin(t, axis=1, keepdims=True),
    }[op]
    good = _on(np.arange(12, dtype=np.float32), lay)
    want = run(_on(np.arange(12, dtype=np.float32), lay)).numpy()
    for _ in range(3):
        np.testing.assert_array_equal(run(good).numpy(), want)
        with pytest.raises(sd.LayoutBoundsError):
            run(_on(np.arange(11, dtype=np.float32), lay))


def test_a_kept_decision_never_reads_another_dtype():
    """A buffer of another dtype behind a tensor that claims f32 is refused by the kept path
    (it compares buffer dtypes) and reaches the checked path, which sees the mismatch."""
    lay = sd.Layout((2, 3), (3, 1), 0)
    f = _on(np.ones(6, np.float32), lay)
    (f + f).numpy()
    odd = _on(np.ones(6, np.float64), lay)  # claims f32, holds f64
    for _ in range(2):
        with pytest.raises(sd.DTypeError):
            odd + f


# -- the kept path against NumPy on drawn layouts --------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402

from strategies import layouts_of_shape, np_view, shapes  # noqa: E402

_UNARY = {"exp": np.exp, "neg": np.negative, "abs": np.abs, "sqr": np.square}
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "lt": np.less}


@given(shapes(max_rank=4), st.data())
def test_repeated_ops_on_fresh_buffers_match_numpy(shape, data):
    """Three calls on new buffers under the same drawn layouts (any order, gaps, flips,
    broadcasts): the first decides, the others take the kept path; every answer is NumPy's."""
    lay_a, na = data.draw(layouts_of_shape(shape))
    lay_b, nb = data.draw(layouts_of_shape(shape))
    uop = data.draw(st.sampled_from(sorted(_UNARY)))
    bop = data.draw(st.sampled_from(sorted(_BINARY)))
    scalar = data.draw(st.sampled_from([0.5, -3.0, 2]))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1)) if shape else None
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(3):
        xa, xb = rng.uniform(-2, 2, na).astype(np.float32), rng.uniform(-2, 2, nb).astype(np.float32)
        a, b = _on(xa, lay_a), _on(xb, lay_b)
        va, vb = np_view(xa, lay_a), np_view(xb, lay_b)
        np.testing.assert_allclose(getattr(a, uop)().numpy(), _UNARY[uop](va), rtol=2e-6)
        np.testing.assert_array_equal(sd.ops.binary(bop, a, b).numpy(), _BINARY[bop](va, vb))
        np.testing.assert_array_equal((a * scalar).numpy(), va * np.float32(scalar))
        np.testing.assert_array_equal((scalar - a).numpy(), np.float32(scalar) - va)
        np.testing.assert_array_equal(a.contiguous().numpy(), va)
        np.testing.assert_array_equal(a.to_dtype(sd.f64).numpy(), va.astype(np.float64))
        if dim is not None and va.shape[dim]:
            np.testing.assert_allclose(a.sum(dim).numpy(), va.sum(dim, dtype=np.float64), rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(a.max(dim, keepdim=True).numpy(), va.max(dim, keepdims=True))
            np.testing.assert_array_equal(a.argmax(dim).numpy(), va.argmax(dim))
            np.testing.assert_array_equal(sd.argmin(a, axis=dim, keepdims=True).numpy(), va.argmin(dim, keepdims=True))
        if dim is not None:  # the line families: NumPy's order left to right, its stable sort
            np.testing.assert_array_equal(sd.cumulative_sum(a, axis=dim).numpy(), np.cumsum(va, dim))
            np.testing.assert_array_equal(sd.sort(a, axis=dim).numpy(), np.sort(va, dim, kind="stable"))
            np.testing.assert_array_equal(sd.argsort(a, axis=dim).numpy(), np.argsort(va, dim, kind="stable"))


def test_a_reduction_over_a_tuple_of_dims_is_kept_and_reads_new_values():
    def kept():
        return {name: n for name, _, _, _, n in caches.inventory()}["ops.reduce"]

    lay = sd.Layout((3, 5), (1, 3), 0)  # a layout no other test reduces
    data = np.arange(15, dtype=np.float32)
    t = _on(data, lay)
    before = kept()
    first = t.sum((0,)).numpy()
    assert kept() == before + 1
    data *= 2  # the same buffer, new values: the kept call reads them
    np.testing.assert_array_equal(t.sum((0,)).numpy(), 2 * first)
    np.testing.assert_array_equal(first, data.reshape(5, 3).T.sum(0) / 2)


def test_a_kept_tuple_of_dims_serves_no_dim_the_checked_path_refuses():
    # (0.0,) equals (0,) as a key, and a list inside a tuple is unhashable: after (0,) was
    # kept, both still get the checked path's StridedError, not an answer or a TypeError.
    t = _on(np.arange(12, dtype=np.float32), sd.Layout((3, 4), (4, 1), 0))
    np.testing.assert_array_equal(t.sum((0,)).numpy(), np.arange(12).reshape(3, 4).sum(0))
    t.sum((0,))
    for bad in ((0.0,), ([0],)):
        with pytest.raises(sd.StridedError):
            t.sum(bad)


def test_an_equal_layout_finds_the_kept_decision():
    """A repeat on new tensors whose layouts are equal but not the same objects adds no
    decision: it found the first one's (the key holds the layouts' values), and both calls
    give NumPy's answer."""
    x = np.arange(24, dtype=np.float32) / 8
    v = x[:12].reshape(3, 4).T  # what Layout((4, 3), (1, 4), 0) reads
    make = lambda: _on(x.copy(), sd.Layout((4, 3), (1, 4), 0))
    calls = {"exp": (lambda t: t.exp(), np.exp(v)), "add": (lambda t: t + make(), v + v),
             "mul_scalar": (lambda t: t * 2.0, v * 2), "sum": (lambda t: t.sum(0), v.sum(0)),
             "copy": (lambda t: t.contiguous(), v), "matmul": (lambda t: t @ make().t(), v @ v.T)}
    for name, (f, want) in calls.items():
        np.testing.assert_allclose(f(make()).numpy(), want, rtol=1e-6, err_msg=name)
        kept = {n: k for n, _, _, _, k in caches.inventory()}
        np.testing.assert_allclose(f(make()).numpy(), want, rtol=1e-6, err_msg=name)
        assert {n: k for n, _, _, _, k in caches.inventory()} == kept, name


def test_kept_line_ops_on_strided_threads_read_each_new_buffer():
    """Past the line families' parallel threshold the kept call enters the prange driver; a
    flipped, strided layout over fresh buffers each time: NumPy's answers."""
    old = sd.get_num_threads()
    lay = sd.Layout((300, 200), (-400, 2), 299 * 400)  # every other column, rows flipped
    rng = np.random.default_rng(5)
    try:
        sd.set_num_threads(2)
        for _ in range(3):
            x = rng.uniform(-1, 1, 300 * 400).astype(np.float32)
            t, v = _on(x, lay), np_view(x, lay)
            np.testing.assert_array_equal(sd.cumulative_sum(t, axis=0).numpy(), np.cumsum(v, 0))
            np.testing.assert_array_equal(sd.cumulative_prod(t, axis=1).numpy(), np.cumprod(v, 1))
            np.testing.assert_array_equal(sd.argsort(t, axis=1).numpy(), np.argsort(v, 1, kind="stable"))
            np.testing.assert_array_equal(sd.sort(t, axis=0, descending=True).numpy(), np.sort(v, 0)[::-1])
    finally:
        sd.set_num_threads(old)
