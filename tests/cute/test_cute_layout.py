"""cute.Layout: construction, the function, printing, pictures, the flat bridge.

The seed-002 examples are checked against offsets computed here, independently,
by the inner-product formula written out by hand.
"""

import io
import itertools
import pickle

import pytest
from cpp_figures import CPP_FIGURE_7C, CPP_FIGURE_7D
from cute_strategies import layouts, leaves, natural_coords
from hypothesis import given, settings

from strided.cute import (
    Layout,
    cosize,
    crd2idx,
    depth,
    flatten,
    format_layout,
    idx2crd,
    is_static,
    make_layout,
    print_layout,
    rank,
    size,
    slice_and_offset,
    static,
)
from strided.errors import ShapeError, StridedError, StridedIndexError

# ---------------------------------------------------------------------------
# Seed 002: 1-D and 2-D layouts
# ---------------------------------------------------------------------------


def test_seed_vector_layouts():
    l81 = Layout(8, 1)
    assert [l81(i) for i in range(8)] == list(range(8))
    assert (l81.size, l81.cosize) == (8, 8)

    l82 = Layout(8, 2)  # domain 8, codomain 15 (seed figure 2)
    assert [l82(i) for i in range(8)] == [2 * i for i in range(8)]
    assert (size(l82), cosize(l82)) == (8, 15)

    l80 = Layout(8, 0)  # every element reads offset 0 (figure 3)
    assert [l80(i) for i in range(8)] == [0] * 8
    assert l80.cosize == 1

    l8m = Layout(8, -1)  # reversed access (figure 4)
    assert [l8m(i) for i in range(8)] == [-i for i in range(8)]
    # The span it reaches, as the flat Layout counts it (DESIGN.md; issue 18).
    assert l8m.cosize == 8 == l8m.flatten().cosize


def test_seed_matrix_layouts():
    col = Layout((3, 4), (1, 3))  # column-major (figure 5)
    row = Layout((3, 4), (4, 1))  # row-major (figure 6)
    for i, j in itertools.product(range(3), range(4)):
        assert col(i, j) == i * 1 + j * 3
        assert row(i, j) == i * 4 + j * 1
    assert sorted(col(i) for i in range(12)) == list(range(12))
    assert [col(i) for i in range(12)] == list(range(12))  # colexicographic 1-D order
    assert [row(i) for i in range(4)] == [0, 4, 8, 1]
    assert col == Layout((3, 4))  # the default stride is column-major
    assert (col.cosize, row.cosize) == (12, 12)


def test_seed_figure_7c():
    # Inner (4,2):(2,1) blocks, four of them 8 apart along the columns.
    L = Layout((4, (2, 4)), (2, (1, 8)))
    assert str(L) == "(4,(2,4)):(2,(1,8))"
    assert (L.rank, L.depth, L.size, L.cosize) == (2, 2, 32, 32)
    for r in range(4):
        for c0 in range(2):
            for c1 in range(4):
                expected = r * 2 + c0 * 1 + c1 * 8  # the inner product, by hand
                c = c0 + 2 * c1  # column index of the 4x8 matrix
                assert L(r, (c0, c1)) == expected
                assert L(r, c) == expected
                assert L((r, c)) == expected
                assert L(r + 4 * c) == expected  # 1-D, colexicographic


def test_seed_figure_7d():
    L = Layout(((2, 2), (2, 4)), ((1, 4), (2, 8)))
    assert str(L) == "((2,2),(2,4)):((1,4),(2,8))"
    assert (L.rank, L.depth, L.size, L.cosize) == (2, 2, 32, 32)
    seen = set()
    for r0, r1, c0, c1 in itertools.product(range(2), range(2), range(2), range(4)):
        expected = r0 * 1 + r1 * 4 + c0 * 2 + c1 * 8
        r, c = r0 + 2 * r1, c0 + 2 * c1
        assert L((r0, r1), (c0, c1)) == expected
        assert L(r, c) == expected
        assert L(r + 4 * c) == expected
        seen.add(expected)
    assert seen == set(range(32))  # a bijection onto 0..31


@given(layouts())
@settings(max_examples=50)
def test_function_is_inner_product(L):
    """L(i) is the inner product of the natural coordinate of i with the stride."""
    shape_leaves, stride_leaves = leaves(L.shape), leaves(L.stride)
    for i, c in enumerate(natural_coords(L.shape)):
        flat_c = leaves(c)
        assert L(i) == sum(x * d for x, d in zip(flat_c, stride_leaves))
        assert L(c) == L(i)
        assert all(0 <= x < s for x, s in zip(flat_c, shape_leaves))
    # cosize: the span reached, highest minus lowest offset plus one, for any signs.
    offsets = [L(i) for i in range(L.size)]
    assert L.cosize == max(offsets) - min(offsets) + 1 == L.flatten().cosize


# ---------------------------------------------------------------------------
# Construction, value semantics, modes
# ---------------------------------------------------------------------------


def test_default_strides_and_static_printing():
    assert str(Layout((8, 4))) == "(8,4):(1,8)"
    assert str(Layout(static((8, 4)))) == "(_8,_4):(_1,_8)"
    # As C++ compact_major: a static extent 1 gets the static stride 0.
    assert str(Layout((static(1), 4, static(3)))) == "(_1,4,_3):(_0,_1,4)"
    assert str(Layout(static(4), 2)) == "_4:2"
    assert str(Layout((8,), (2,))) == "(8):(2)"
    assert str(Layout(())) == "():()"
    assert repr(Layout((4, static(2)), (1, 4))) == "Layout((4, static(2)), (1, 4))"
    assert str(Layout([4, [2, 2]], [1, [4, 8]])) == "(4,(2,2)):(1,(4,8))"


def test_equality_hash_immutability():
    a = Layout((4, (2, 4)), (2, (1, 8)))
    b = Layout((4, (2, 4)), (2, (1, 8)))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Layout((4, 2, 4), (2, 1, 8))  # same function, different structure
    assert Layout(8) != Layout((8,))
    assert static(a) == a  # static marks change printing, not the function
    assert is_static(static(a)) and not is_static(a)
    assert a != "(4,(2,4)):(2,(1,8))"
    with pytest.raises(AttributeError):
        a.shape = 3
    assert pickle.loads(pickle.dumps(static(a))) == a
    assert str(pickle.loads(pickle.dumps(static(a)))) == str(static(a))


def test_modes_and_make_layout():
    L = Layout((4, (2, 4), 3), (2, (1, 8), 32))
    assert L[0] == Layout(4, 2)
    assert L[1] == Layout((2, 4), (1, 8))
    assert L[1, 1] == Layout(4, 8)
    assert L[-1] == Layout(3, 32)
    assert L[0:2] == Layout((4, (2, 4)), (2, (1, 8)))
    assert list(L) == [L[0], L[1], L[2]] and len(L) == rank(L) == 3
    assert Layout(8, 2)[0] == Layout(8, 2)  # an int-shaped layout is its own mode
    assert make_layout(L[0], L[1], L[2]) == L
    assert make_layout(Layout(8, 2)) == Layout((8,), (2,))
    assert make_layout((4, 2)) == Layout((4, 2), (1, 4))
    assert make_layout((4, 2), (2, 1)) == make_layout((4, 2), stride=(2, 1))
    assert depth(L) == 2 and depth(Layout(8)) == 0
    assert flatten(L) == Layout((4, 2, 4, 3), (2, 1, 8, 32))


def test_slicing_with_none():
    L = Layout((4, (2, 4)), (2, (1, 8)))
    assert L(None, 3) == Layout((4,), (2,))
    assert L(2, None) == Layout(((2, 4),), ((1, 8),))
    assert L(2, (None, 1)) == Layout((2,), (1,))
    assert L(None, (1, None)) == Layout((4, 4), (2, 8))
    assert L(None) == L
    sub, off = slice_and_offset((None, (1, None)), L)
    assert sub == Layout((4, 4), (2, 8)) and off == 1
    for i in range(4):
        for j in range(4):
            assert L(i, (1, j)) == sub(i, j) + off
    assert slice_and_offset((1, 5), L) == (Layout((), ()), L(1, 5))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_construction_errors():
    with pytest.raises(ShapeError, match=r"shape \(4,\(2,4\)\) and stride \(2,1\) are not congruent"):
        Layout((4, (2, 4)), (2, 1))
    with pytest.raises(ShapeError, match="positive"):
        Layout((4, 0))
    with pytest.raises(ShapeError, match="positive"):
        Layout(-3)
    with pytest.raises(ShapeError, match="expected an int"):
        Layout((4, 2.0))
    with pytest.raises(ShapeError):
        Layout(True)
    with pytest.raises(ShapeError, match="make_layout"):
        make_layout(Layout(4), (2, 2))
    with pytest.raises(ShapeError, match="make_layout"):
        make_layout(1, 2, 3)


def test_call_and_index_errors():
    L = Layout((4, (2, 4)), (2, (1, 8)))
    # Past its size a layout continues along its last mode (C++, pycute): by
    # hand, 33 = 1 + 4*(0 + 2*4) -> 1*2 + 4*8.
    assert (L(32), L(33)) == (32, 34)
    with pytest.raises(IndexError):  # also an IndexError
        L(-1)
    with pytest.raises(StridedIndexError, match="index 8 out of range"):
        L(0, 8)
    with pytest.raises(StridedIndexError, match="index 2 out of range"):
        L(0, (2, 0))
    with pytest.raises(ShapeError, match="does not match shape"):
        L(1, 2, 3)
    with pytest.raises(ShapeError, match="does not match shape"):
        L((1, (1, 1, 1)))
    with pytest.raises(ShapeError, match="needs an index"):
        L()
    with pytest.raises(ShapeError, match="ints or None"):
        L(1.5)
    with pytest.raises(StridedIndexError, match="mode 3 out of range for rank 2"):
        L[3]
    with pytest.raises(ShapeError, match="mode index"):
        L["a"]
    with pytest.raises(ShapeError, match="cosize"):
        cosize((4, 2))
    for err in (StridedIndexError, ShapeError):
        assert issubclass(err, StridedError) and issubclass(err, ValueError)


# ---------------------------------------------------------------------------
# print_layout: the grid C++ CuTe prints
# ---------------------------------------------------------------------------

CPP_STATIC_ROW_MAJOR = """\
(_2,_12):(_12,_1)
       0    1    2    3    4    5    6    7    8    9   10   11 
    +----+----+----+----+----+----+----+----+----+----+----+----+
 0  |  0 |  1 |  2 |  3 |  4 |  5 |  6 |  7 |  8 |  9 | 10 | 11 |
    +----+----+----+----+----+----+----+----+----+----+----+----+
 1  | 12 | 13 | 14 | 15 | 16 | 17 | 18 | 19 | 20 | 21 | 22 | 23 |
    +----+----+----+----+----+----+----+----+----+----+----+----+
"""  # noqa: W291  (C++ CuTe ends the column-number row with a space)


def test_print_layout_matches_cpp():
    assert format_layout(Layout((4, (2, 4)), (2, (1, 8)))) == CPP_FIGURE_7C
    assert format_layout(Layout(((2, 2), (2, 4)), ((1, 4), (2, 8)))) == CPP_FIGURE_7D
    assert format_layout(static(Layout((2, 12), (12, 1)))) == CPP_STATIC_ROW_MAJOR
    buf = io.StringIO()
    print_layout(Layout((4, (2, 4)), (2, (1, 8))), file=buf)
    assert buf.getvalue() == CPP_FIGURE_7C


def test_print_layout_widths_and_rank1():
    text = format_layout(Layout((2, 3), (100, 1)))  # cosize 103: 3 digits, cells 5 wide
    lines = text.splitlines()
    assert lines[2] == "    " + "+-----" * 3 + "+"
    assert lines[3] == " 0  |   0 |   1 |   2 |"
    assert lines[5] == " 1  | 100 | 101 | 102 |"
    one_row = format_layout(Layout(4, 2)).splitlines()
    assert one_row[0] == "4:2" and one_row[3] == " 0  | 0 | 2 | 4 | 6 |" and len(one_row) == 5
    negative = format_layout(Layout(3, -4)).splitlines()  # widened to keep alignment
    assert negative[3] == " 0  |  0 | -4 | -8 |"
    with pytest.raises(ShapeError, match="rank 3"):
        format_layout(Layout((2, 2, 2)))
    with pytest.raises(ShapeError, match="expected a cute Layout"):
        format_layout((2, 2))


# ---------------------------------------------------------------------------
# Bridge to the flat strided.Layout
# ---------------------------------------------------------------------------


def _flat_layout_class():
    mod = pytest.importorskip("strided.layout.layout")
    return mod.Layout


@given(layouts())
@settings(max_examples=30)
def test_flatten_is_the_same_function(L):
    FlatLayout = _flat_layout_class()
    flat = L.flatten()
    assert isinstance(flat, FlatLayout)
    assert flat.offset == 0
    shape = flatten(L.shape)
    stride = flatten(L.stride)
    assert flat.shape == (shape if isinstance(shape, tuple) else (shape,))
    assert flat.stride == (stride if isinstance(stride, tuple) else (stride,))
    for i, c in enumerate(natural_coords(L.shape)):
        flat_c = tuple(leaves(c))
        assert flat.offset_of(flat_c) == L(c) == L(i)
        # CuTe's 1-D order: the colexicographic coordinate of i over the flat shape.
        assert flat.offset_of(tuple(leaves(idx2crd(i, flat.shape)))) == L(i)


def test_flatten_literal_and_static():
    _flat_layout_class()
    flat = static(Layout((4, (2, 4)), (2, (1, 8)))).flatten()
    assert flat.shape == (4, 2, 4) and flat.stride == (2, 1, 8) and flat.offset == 0
    assert all(type(x) is int for x in flat.shape + flat.stride)
    assert Layout(8, 2).flatten().shape == (8,)
    # The reversed flat layout walked row-major gives CuTe's 1-D order.
    L = Layout((4, (2, 4)), (2, (1, 8)))
    rev = type(flat)(flat.shape[::-1], flat.stride[::-1], 0)
    walked = [rev.offset_of(idx) for idx in itertools.product(*(range(n) for n in rev.shape))]
    assert walked == [L(i) for i in range(L.size)]
    assert crd2idx((1, (1, 2)), L.shape, L.stride) == L(1, (1, 2))


def test_make_layout_takes_pycutes_list_of_layouts():
    a, b = Layout(4, 2), Layout((2, 3), (1, 8))
    want = Layout((4, (2, 3)), (2, (1, 8)))
    assert make_layout([a, b]) == make_layout((a, b)) == make_layout(a, b) == want
    assert make_layout([a]) == Layout((4,), (2,))
