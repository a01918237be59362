"""Views kept on the layout they were taken from (``Layout.derived``): a kept view must be
the view itself, whatever was asked before it, and an index that merely hashes like a
kept one (True, 1.0, np.int64(1)) must not be answered from the store."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd
from strided.errors import StridedError
from strided.layout import Layout
from strided.layout.layout import DERIVED_MAX
from strided.tensor import index_layout

from strategies import numpy_offset, numpy_strides, view_chains


@settings(max_examples=60, deadline=None)
@given(view_chains(max_ops=4), st.data())
def test_kept_transpose_is_the_transpose(chain, data):
    _, lay, arr, base = chain
    nd = lay.ndim
    if nd < 2:
        return
    d0, d1 = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
    first = lay.transpose(d0, d1)
    again = lay.transpose(d1, d0)  # the same view asked the other way round: from the store
    fresh = Layout(lay.shape, lay.stride, lay.offset).transpose(d0, d1)  # a layout with no store
    view = np.swapaxes(arr, d0, d1)  # NumPy is the oracle
    assert first == again == fresh
    assert first.shape == view.shape
    if view.size:  # an empty view's strides and offset mean nothing, a size-1 dim's stride neither
        assert [s for s, n in zip(first.stride, first.shape) if n > 1] == [
            s for s, n in zip(numpy_strides(view), view.shape) if n > 1]
        assert first.offset == numpy_offset(view, base)


def test_transposes_and_indices_kept_side_by_side():
    # Both kinds of view live in one store: x[0, 1] after x.t() must not find the transpose.
    base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = sd.from_numpy(base)
    assert x.t().shape == (4, 3)
    assert x[0, 1].shape == () and x[0, 1].item() == base[0, 1]
    y = sd.from_numpy(base.copy())
    assert y[0, 1].item() == base[0, 1]
    assert y.t().numpy().tolist() == base.T.tolist()
    assert y.transpose(0, 1).shape == y.transpose(-2, -1).shape == y.transpose(1, 0).shape == (4, 3)


@settings(max_examples=60, deadline=None)
@given(view_chains(max_ops=3), st.data())
def test_any_order_of_kept_views_matches_numpy(chain, data):
    # A run of transposes and int/slice indices on one layout, each asked maybe more than
    # once and in any order: every answer is NumPy's view, whatever the store held.
    _, lay, arr, base = chain
    nd = lay.ndim
    dim = st.integers(-nd, nd - 1) if nd else st.nothing()
    part = st.one_of(st.integers(-3, 3), st.tuples(st.sampled_from([None, -2, 0, 1]), st.sampled_from([None, -1, 2]),
                                                   st.sampled_from([None, 1, 2, -1])))
    steps = data.draw(st.lists(st.one_of(st.tuples(st.just("t"), dim, dim) if nd else st.nothing(),
                                         st.tuples(st.just("i"), st.lists(part, max_size=nd))), max_size=6))
    for step in steps:
        if step[0] == "t":
            got, want = lay.transpose(step[1], step[2]), np.swapaxes(arr, step[1], step[2])
        else:
            index = tuple(p if isinstance(p, int) else slice(*p) for p in step[1])
            try:
                want = arr[index + (Ellipsis,)]  # a 0-d view, not a NumPy scalar, for all-int indices
            except IndexError:
                with pytest.raises(StridedError):
                    index_layout(lay, index)
                continue
            got = index_layout(lay, index)[0]
        assert got.shape == want.shape
        if want.size:
            assert [s for s, n in zip(got.stride, got.shape) if n > 1] == [
                s for s, n in zip(numpy_strides(want), want.shape) if n > 1]
            assert got.offset == numpy_offset(want, base)


def test_store_is_bounded():
    x = sd.from_numpy(np.arange(200.0, dtype=np.float32))
    for i in range(5 * DERIVED_MAX):
        assert x[i : i + 2].numpy().tolist() == [float(i), float(i + 1)]
        assert len(x.layout.derived()) <= DERIVED_MAX


def test_indices_that_hash_alike_are_not_confused():
    base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = sd.from_numpy(base)
    assert x[1].numpy().tolist() == base[1].tolist()
    assert x[1:].numpy().tolist() == base[1:].tolist()
    assert x[np.int64(1)].numpy().tolist() == base[1].tolist()
    with pytest.raises(StridedError):
        x[1.0:]  # a float bound is refused even after the int one was kept
    with pytest.raises(StridedError):
        x[True]  # hashes like 1
    assert x[::2, 1].numpy().tolist() == base[::2, 1].tolist()
    assert x[::2, -1].numpy().tolist() == base[::2, -1].tolist()
    assert x[(slice(None, None, 2), 1)].numpy().tolist() == base[::2, 1].tolist()


def test_views_of_kept_views_follow_writes():
    base = np.zeros((4, 4), np.float32)
    x = sd.from_numpy(base)
    v1 = x.t()[1:, ::2]
    base[2, 1] = 7.0  # the buffer changes after the views were kept: views read it live
    v2 = x.t()[1:, ::2]
    assert v1.layout == v2.layout
    assert v2.numpy().tolist() == base.T[1:, ::2].tolist() == v1.numpy().tolist()


def _same_view(got: Layout, want: np.ndarray, base: np.ndarray) -> None:
    assert got.shape == want.shape
    if want.size:
        assert [s for s, n in zip(got.stride, got.shape) if n > 1] == [
            s for s, n in zip(numpy_strides(want), want.shape) if n > 1]
        assert got.offset == numpy_offset(want, base)


@settings(max_examples=80, deadline=None)
@given(view_chains(max_ops=3), st.data())
def test_kept_reshapes_broadcasts_and_squeezes_are_numpys_views(chain, data):
    # A backward's rules ask these of the same layouts every step, so they are kept too; asked
    # in any order and again, each answer is still NumPy's view (or no view where NumPy copies).
    _, lay, arr, base = chain
    nd = lay.ndim
    asks = [("reshape", (-1,)), ("reshape", (1, *lay.shape)), ("reshape", (*lay.shape, 1)),
            ("reshape", list(lay.shape)), ("broadcast", (2, *lay.shape)), ("squeeze", None)]
    if nd >= 2:
        asks.append(("reshape", (lay.shape[0] * lay.shape[1], *lay.shape[2:])))
    if nd:
        asks += [("squeeze", data.draw(st.integers(-nd, nd - 1))), ("unsqueeze", data.draw(st.integers(-nd - 1, nd)))]
    for what, arg in data.draw(st.lists(st.sampled_from(asks), min_size=1, max_size=12)):
        if what == "reshape":
            got, want = lay.reshape_view(arg), arr.reshape(arg)
            if got is None:
                assert want.size > 1 and not np.shares_memory(want, base)
                continue
            if want.size > 1:
                assert np.shares_memory(want, base)
        elif what == "broadcast":
            got, want = lay.broadcast_as(arg), np.broadcast_to(arr, arg)
        elif what == "squeeze":
            got = lay.squeeze(arg)
            want = np.squeeze(arr) if arg is None else np.squeeze(arr, arg) if arr.shape[arg] == 1 else arr
        else:
            got, want = lay.unsqueeze(arg), np.expand_dims(arr, arg)
        _same_view(got, want, base)


@pytest.mark.parametrize("kept, bad", [
    (lambda lay: lay.squeeze(1), lambda lay: lay.squeeze(1.0)),
    (lambda lay: lay.reshape_view((6,)), lambda lay: lay.reshape_view((6.0,))),
    (lambda lay: lay.broadcast_as((2, 1, 2, 3)), lambda lay: lay.broadcast_as((2.0, 1, 2, 3))),
])
def test_a_kept_view_does_not_answer_an_argument_that_merely_hashes_like_its_own(kept, bad):
    fresh = Layout((1, 2, 3))
    with pytest.raises(StridedError):
        bad(fresh)
    lay = Layout((1, 2, 3))
    kept(lay)  # now in the store, under a key that 1.0 hashes like
    with pytest.raises(StridedError):
        bad(lay)
