"""Differential property tests: Layout views against NumPy views of the same buffer."""

import itertools
from math import prod

import numpy as np
import pytest
from hypothesis import given, strategies as st

from strided import Layout, NdIter
from strategies import numpy_offset, numpy_strides, view_chains


def _blocks_offsets(lay):
    return list(lay.strided_blocks().offsets())


@given(view_chains())
def test_views_match_numpy_offsets_order_and_strides(case):
    ops, lay, arr, base = case
    assert lay.shape == arr.shape, ops
    want = arr.ravel().tolist()
    assert list(lay.strided_index()) == want, ops
    assert _blocks_offsets(lay) == want, ops
    assert [lay.offset_of(i) for i in itertools.islice(np.ndindex(*lay.shape), 64)] == want[:64]
    if lay.numel:
        assert lay.offset == numpy_offset(arr, base), ops
        for n, s, ns in zip(lay.shape, lay.stride, numpy_strides(arr)):
            if n > 1:
                assert s == ns, ops
    assert lay.is_contiguous() == (arr.flags.c_contiguous or lay.numel == 0 or _c_dense_ignoring_size1(arr))


def _c_dense_ignoring_size1(arr):
    acc = 1
    for n, s in zip(reversed(arr.shape), reversed(numpy_strides(arr))):
        if n > 1 and s != acc:
            return False
        acc *= n
    return True


@given(view_chains())
def test_ndindex_single_operand_follows_memory_order(case):
    ops, lay, arr, _ = case
    it = NdIter(lay)
    assert sorted(it.perm) == list(range(lay.ndim))
    got = list(it.offsets_of(0))
    assert got == np.transpose(arr, it.perm).ravel().tolist(), ops
    assert len(it) * it.inner_size == lay.numel or lay.numel == 0


@given(view_chains(), st.data())
def test_ndindex_two_operands_visit_matching_elements(case, data):
    ops, lay, arr, _ = case
    other = Layout.contiguous(lay.shape, offset=data.draw(st.integers(0, 5)))
    first = data.draw(st.booleans())
    layouts = (lay, other) if first else (other, lay)
    it = NdIter(*layouts)
    pairs = list(zip(it.offsets_of(0), it.offsets_of(1)))
    want = list(zip(layouts[0].strided_index(), layouts[1].strided_index()))
    assert sorted(pairs) == sorted(want), ops
    # and in the order of the exposed permutation
    perm_views = [np.transpose(np.array(list(l.strided_index()) or [0][:0], dtype=np.int64).reshape(l.shape), it.perm)
                  for l in layouts]
    assert pairs == list(zip(perm_views[0].ravel().tolist(), perm_views[1].ravel().tolist()))


@given(view_chains(max_ops=4), st.data())
def test_reshape_view_exists_exactly_when_numpy_can_view(case, data):
    ops, lay, arr, _ = case
    sizes = [d for d in range(1, 7)]
    target = tuple(data.draw(st.lists(st.sampled_from(sizes), max_size=4)))
    if lay.numel and prod(target) != lay.numel:
        # use a factorisation of numel so the reshape is legal
        target = (lay.numel,) if data.draw(st.booleans()) else (1, lay.numel, 1)
    elif not lay.numel:
        target = (0,) + target
    got = lay.reshape_view(target)
    try:
        want = arr.reshape(target, copy=False)
    except ValueError:
        want = None
    assert (got is None) == (want is None), (ops, lay, target)
    if got is not None:
        assert list(got.strided_index()) == want.ravel().tolist()


def test_reshape_view_infers_minus_one_and_keeps_chunks():
    lay = Layout.contiguous((4, 6)).narrow(1, 0, 4)  # rows of 4 inside rows of 6
    assert lay.reshape_view((2, 2, 2, 2)) == Layout((2, 2, 2, 2), (12, 6, 2, 1))
    assert lay.reshape_view((-1, 4)) == Layout((4, 4), (6, 1))
    assert lay.reshape_view((16,)) is None
    flipped = Layout.contiguous((6,)).flip(0)
    assert flipped.reshape_view((2, 3)) == Layout((2, 3), (-3, -1), 5)


def _rank_n_unmergeable(n):
    shape = (2,) * n
    a = Layout.contiguous(shape).permute(tuple(reversed(range(n))))
    b = Layout.contiguous(a.shape)
    return a, b


@pytest.mark.parametrize("rank", [9, 32, 64])
def test_ndindex_has_no_rank_limit(rank):
    a, b = _rank_n_unmergeable(rank)
    it = NdIter(a, b)
    assert it.ndim == rank  # nothing merges: the two operands disagree on every pair of dims
    steps = 4096 if rank > 9 else None
    got = list(itertools.islice(zip(it.offsets_of(0), it.offsets_of(1)), steps))
    # reference: walk the permuted row-major order by unravelling each position
    a_p, b_p = a.permute(it.perm), b.permute(it.perm)
    for k, (oa, ob) in enumerate(got):
        idx = a_p.unravel(k)
        assert (oa, ob) == (a_p.offset_of(idx), b_p.offset_of(idx))
    if rank == 9:
        assert sorted(o for o, _ in got) == list(range(512))


def test_ndindex_orders_two_transposed_operands_in_memory_order():
    a = Layout.contiguous((3, 4)).transpose(0, 1)
    b = Layout.contiguous((3, 4)).transpose(0, 1)
    it = NdIter(a, b)
    assert it.perm == (1, 0)
    assert it.shape == (12,) and it.inner_strides == (1, 1)
    assert list(it.offsets_of(0)) == list(range(12))


def test_ndindex_merges_broadcast_and_size_one_dims():
    bias = Layout.contiguous((4,)).broadcast_as((3, 4))
    out = Layout.contiguous((3, 4))
    it = NdIter(out, bias)
    assert it.shape == (3, 4) and it.strides == ((4, 1), (0, 1))
    scalar = Layout((), ()).broadcast_as((3, 1, 4))
    it = NdIter(Layout.contiguous((3, 1, 4)), scalar)
    assert it.shape == (12,) and it.inner_strides == (1, 0) and len(it) == 1


def test_ndindex_zero_size_and_rank_zero():
    it = NdIter(Layout.contiguous((3, 0, 2)))
    assert len(it) == 0 and list(it) == [] and list(it.offsets_of(0)) == []
    it = NdIter(Layout((), (), 7))
    assert list(it.offsets_of(0)) == [7] and it.inner_size == 1


_small = st.lists(st.integers(0, 3), min_size=0, max_size=3)


@given(st.lists(st.tuples(_small, st.lists(st.integers(-4, 4), min_size=3, max_size=3), st.integers(0, 5)),
                min_size=2, max_size=12))
def test_layout_serials_are_equal_exactly_for_equal_layouts(parts):
    """``serial`` names a value: two Layout objects get one number iff they are equal,
    whichever is numbered first, so a cache keyed by it is keyed by value."""
    lays = [Layout(tuple(shape), tuple(stride[: len(shape)]), offset) for shape, stride, offset in parts]
    twins = [Layout(lay.shape, lay.stride, lay.offset) for lay in reversed(lays)][::-1]
    for lay, twin in zip(lays, twins):
        assert lay is not twin and lay.serial() == twin.serial()
    for a, b in itertools.combinations(lays, 2):
        assert (a.serial() == b.serial()) == (a == b)


def test_a_layout_numbered_after_the_table_restarts_shares_no_number(monkeypatch):
    """Past ``SERIALS_MAX`` values the table starts again; numbers are never reused, so an
    old layout's number never names a new value, and an equal layout numbered afterwards
    gets a fresh one (a cache keyed by it misses, never answers for another layout)."""
    from strided.layout import layout as mod

    monkeypatch.setattr(mod, "SERIALS_MAX", 3)
    monkeypatch.setattr(mod, "_SERIALS", {})
    first = [Layout((n,)) for n in range(1, 5)]  # the fourth restarts the table
    numbers = [lay.serial() for lay in first]
    assert len(set(numbers)) == 4
    again = Layout((1,))
    assert again == first[0] and again.serial() not in numbers
    assert Layout((1,)).serial() == again.serial() and first[0].serial() == numbers[0]
