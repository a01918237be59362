"""make_layout_tv against CuTe DSL's documented example and a by-hand placement of every value."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strided.cute import Layout, make_layout_tv, tv_grid
from strided.errors import ShapeError


def test_cute_dsl_example():
    tiler, tv = make_layout_tv(Layout((2, 3), (3, 1)), Layout((2, 2), (2, 1)))
    assert tiler == (4, 6)
    assert tv == Layout(((3, 2), (2, 2)), ((8, 2), (4, 1)))
    # The table of make_layout_tv's docstring in CuTe DSL, row by row.
    table = [
        ["T0V0", "T0V1", "T1V0", "T1V1", "T2V0", "T2V1"],
        ["T0V2", "T0V3", "T1V2", "T1V3", "T2V2", "T2V3"],
        ["T3V0", "T3V1", "T4V0", "T4V1", "T5V0", "T5V1"],
        ["T3V2", "T3V3", "T4V2", "T4V3", "T5V2", "T5V3"],
    ]
    cells = tv_grid(tiler, tv)
    assert [[f"T{cells[m, n][0]}V{cells[m, n][1]}" for n in range(6)] for m in range(4)] == table


@st.composite
def compact(draw):
    """A compact rank-2 layout: a random shape, row- or column-major."""
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return Layout((m, n), (n, 1)) if draw(st.booleans()) else Layout((m, n), (1, m))


@given(compact(), compact())
@settings(max_examples=60, deadline=None)
def test_every_value_lands_where_the_raked_tile_puts_it(thr, val):
    tiler, tv = make_layout_tv(thr, val)
    (tm_, tn_), (vm_, vn_) = thr.shape, val.shape
    assert tiler == (tm_ * vm_, tn_ * vn_)
    M = tiler[0]
    for tm, tn, vm, vn in itertools.product(range(tm_), range(tn_), range(vm_), range(vn_)):
        # By hand: thread (tm, tn) holds the block of values at rows tm*VM.., columns tn*VN..
        m, n = vm + vm_ * tm, vn + vn_ * tn
        assert tv(thr(tm, tn), val(vm, vn)) == m + M * n


def test_cute_dsl_elementwise_add_layout():
    # 4x32 threads (row-major), 4x4 values each (row-major): a 16x128 tile.
    tiler, tv = make_layout_tv(Layout((4, 32), (32, 1)), Layout((4, 4), (4, 1)))
    assert tiler == (16, 128)
    cells = tv_grid(tiler, tv)
    assert len(cells) == 16 * 128 and cells[0, 0] == (0, 0) and cells[0, 4] == (1, 0) and cells[4, 0] == (32, 0)


def test_make_layout_tv_refuses_non_compact_layouts():
    with pytest.raises(ShapeError, match="make_layout_tv: thr_layout .* is not compact"):
        make_layout_tv(Layout((2, 2), (1, 4)), Layout(2))
    with pytest.raises(ShapeError, match="make_layout_tv: val_layout must be a cute Layout"):
        make_layout_tv(Layout(2), (2, 2))


def test_product_each_is_always_a_tuple():
    from strided.cute import product_each

    # C++ wraps a lone integer first: product_each(16) is the rank-1 tuple (16,).
    assert product_each(16) == (16,)
    assert product_each(((2, 2), (3, 2))) == (4, 6)
    assert product_each((4, (2, 3), 5)) == (4, 6, 5)
