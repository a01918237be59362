"""IntTuple helpers: structure, arithmetic, coordinates, slicing, static ints."""

import pickle

import pytest
from cute_strategies import leaves, natural_coords, shapes
from hypothesis import given, settings
from hypothesis import strategies as st

from strided.cute import (
    Static,
    ceil_div,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    dice,
    dynamic,
    flatten,
    has_none,
    idx2crd,
    inner_product,
    is_static,
    prefix_product,
    product,
    shape_div,
    size,
    slice_,
    static,
    unflatten,
    weakly_congruent,
)
from strided.cute.int_tuple import depth, format_int_tuple, rank
from strided.errors import ShapeError, StridedError

# ---------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------


def test_structure_literals():
    t = (4, (2, (3, 5)), 6)
    assert rank(t) == 3 and rank(7) == 1
    assert depth(7) == 0 and depth(()) == 1 and depth(t) == 3
    assert flatten(t) == (4, 2, 3, 5, 6) and flatten(7) == 7 and flatten(()) == ()
    assert product(t) == 4 * 2 * 3 * 5 * 6 and product(()) == 1
    assert size((2, (3, 4))) == 24
    assert unflatten([1, 2, 3, 4, 5], t) == (1, (2, (3, 4)), 5)
    assert unflatten([(1, 2), 3], (0, 0)) == ((1, 2), 3)
    assert format_int_tuple((4, (static(2), 4))) == "(4,(_2,4))"
    assert format_int_tuple((None, 3)) == "(_,3)"


def test_unflatten_wrong_count():
    with pytest.raises(ShapeError, match="too few"):
        unflatten([1], (0, 0))
    with pytest.raises(ShapeError, match="too many"):
        unflatten([1, 2, 3], (0, 0))


def test_inner_and_prefix_product():
    assert inner_product((2, (3, 4)), (1, (2, 6))) == 2 + 6 + 24
    assert prefix_product((2, (3, 4))) == (1, (2, 6))
    assert prefix_product((3, 4), 5) == (5, 15)
    assert prefix_product(7) == 1
    with pytest.raises(ShapeError, match="not congruent"):
        inner_product((1, 2), (1, (2, 3)))
    with pytest.raises(ShapeError, match="not congruent"):
        inner_product(3, (1, 2))


def test_shape_div_and_ceil_div():
    assert shape_div(6, 2) == 3 and shape_div(2, 6) == 1 and shape_div(6, 6) == 1
    assert shape_div((4, 6), 8) == (1, 3)
    assert shape_div((4, 6), 2) == (2, 6)
    assert shape_div((4, 6), (2, 3)) == (2, 2)
    assert shape_div(12, (2, 3)) == 2
    with pytest.raises(ShapeError, match="neither of 4 and 6"):
        shape_div(4, 6)
    with pytest.raises(ShapeError, match="rank"):
        shape_div((4, 6), (2, 3, 1))
    assert ceil_div(7, 2) == 4 and ceil_div(8, 2) == 4
    # C++ divides a tuple left to right: (3,3) by 4 is (1, ceil(3 / ceil(4/3))) = (1, 2).
    assert ceil_div((3, 3), 4) == (1, 2)
    assert ceil_div((4, 6), (2,)) == (2, 6)
    with pytest.raises(ShapeError):
        ceil_div(4, 0)


def test_relations():
    assert congruent((1, (2, 3)), (4, (5, 6)))
    assert not congruent((1, (2, 3)), (4, 5, 6))
    assert not congruent(1, (1,))
    assert weakly_congruent(1, (2, 3)) and weakly_congruent((1, 2), (3, (4, 5)))
    assert not weakly_congruent((1, 2), (3,))
    assert compatible(24, (4, (2, 3)))
    assert compatible((4, 6), (4, (2, 3)))
    assert not compatible((4, 6), (4, 6, 1))
    assert not compatible((4, (2, 3)), (4, 6))
    assert not compatible(12, (4, 6))


@given(shapes())
def test_flatten_unflatten_roundtrip(s):
    assert unflatten(leaves(s), s) == s
    assert product(s) == product(flatten(s)) == size(s)
    assert congruent(prefix_product(s), s)


# ---------------------------------------------------------------------------
# Coordinates
# ---------------------------------------------------------------------------


def test_coordinate_literals():
    # Colexicographic: the first mode is fastest.
    assert idx2crd(5, (2, 3)) == (1, 2)
    assert crd2idx((1, 2), (2, 3)) == 5
    assert idx2crd(11, (4, (2, 4))) == (3, (0, 1))
    assert crd2idx((3, (0, 1)), (4, (2, 4))) == 11
    # An int may stand for a whole mode: a 1-D index into it.
    assert crd2idx((3, 2), (4, (2, 4))) == 3 + 4 * 2
    # A hierarchical coordinate given partly as indices: each index is local to its mode.
    assert idx2crd((1, 3), ((2, 2), (2, 4))) == ((1, 0), (1, 1))
    assert idx2crd((3, (1, 2)), (4, (2, 4))) == (3, (1, 2))
    # crd2idx with an explicit stride is the layout function.
    assert crd2idx((1, (1, 2)), (4, (2, 4)), (2, (1, 8))) == 2 + 1 + 16
    # The last mode is not reduced: indices past the end continue along it.
    assert idx2crd(9, (2, 3)) == (1, 4)
    assert crd2idx(9, (2, 3), (1, 10)) == 1 + 40
    assert crd2idx(None, (2, 3)) == 0


def test_pycute_tuple_coordinate_bug_is_absent():
    # pycute reads each entry of a tuple coordinate with strides of the whole
    # shape; the entries are local indices into their own modes.
    shape = ((2, 2), (2, 4))
    for i in range(4):
        for j in range(8):
            assert idx2crd((i, j), shape) == (idx2crd(i, (2, 2)), idx2crd(j, (2, 4)))


@given(shapes())
@settings(max_examples=40)
def test_idx2crd_crd2idx_roundtrip(s):
    coords = natural_coords(s)
    assert len(set(coords)) == size(s)
    for i, c in enumerate(coords):
        assert crd2idx(c, s) == i
        assert congruent(c, s) or not isinstance(s, tuple)


@given(shapes(), st.data())
@settings(max_examples=40)
def test_hierarchical_coordinates_any_depth(s, data):
    """Replacing any sub-coordinate by its local index gives the same index."""
    if not isinstance(s, tuple):
        return
    i = data.draw(st.integers(0, size(s) - 1))
    natural = idx2crd(i, s)
    # Collapse the coordinate of a randomly chosen top mode to its 1-D index.
    k = data.draw(st.integers(0, len(s) - 1))
    partial = tuple(crd2idx(c, m) if j == k else c for j, (c, m) in enumerate(zip(natural, s)))
    assert crd2idx(partial, s) == i
    assert idx2crd(partial, s) == natural


@given(shapes(max_size=64))
@settings(max_examples=40)
def test_crd2crd(src):
    # pycute's order (crd, dst_shape, src_shape). Mode-wise conversion needs equal
    # ranks (C++ static_asserts it), else via the index.
    targets = [size(src)]
    if isinstance(src, tuple):
        targets.append(tuple(size(m) for m in src))
    for dst in targets:
        for i in range(size(src)):
            c = idx2crd(i, src)
            assert crd2idx(crd2crd(c, dst, src), dst) == i


def test_coordinate_errors():
    with pytest.raises(ShapeError, match=r"crd2idx: coordinate \(1,2,3\) does not match shape \(2,3\)"):
        crd2idx((1, 2, 3), (2, 3))
    with pytest.raises(ShapeError, match="idx2crd"):
        idx2crd((1, 2), 6)
    with pytest.raises(ShapeError, match="stride"):
        crd2idx((1, 1), (2, 3), 4)
    with pytest.raises(ShapeError, match="crd2crd"):
        crd2crd((1, 2), (6, 1, 1), (2, 3))
    with pytest.raises(ShapeError, match="crd2crd.*needs src_shape"):
        crd2crd((1, 2), 6)
    with pytest.raises(ShapeError, match="idx2crd.*stride"):
        idx2crd(5, (2, 3), (1, 2, 3))


# ---------------------------------------------------------------------------
# Slicing with None (CuTe's _)
# ---------------------------------------------------------------------------


def test_slice_and_dice_literals():
    t = ((2, 3), (4, 5))
    assert slice_((None, 1), t) == ((2, 3),)
    assert slice_((None, (None, 1)), t) == ((2, 3), 4)
    assert slice_(None, t) == t
    assert slice_(3, t) == ()
    assert dice((None, 1), t) == ((4, 5),)
    assert dice((None, (None, 1)), t) == (5,)
    assert dice(None, t) == ()
    assert has_none((1, (2, None))) and not has_none((1, (2, 3))) and has_none(None)
    with pytest.raises(ShapeError, match="slice"):
        slice_((None, 1, 2), t)
    with pytest.raises(ShapeError, match="dice"):
        dice((None,), t)


# ---------------------------------------------------------------------------
# Static integers
# ---------------------------------------------------------------------------


def test_static_arithmetic_propagates():
    a, b = static(6), static(4)
    assert isinstance(a * b, Static) and a * b == 24
    assert isinstance(a // b, Static) and isinstance(a % b, Static)
    assert isinstance(a + b, Static) and isinstance(a - b, Static)
    assert isinstance(-a, Static) and isinstance(abs(-a), Static)
    for mixed in (a * 4, 4 * a, a + 1, 1 + a, a // 2, 12 // a, a % 4, 13 % a, a - 1, 7 - a):
        assert type(mixed) is int
    assert str(a) == "_6" and repr(a) == "static(6)" and f"{a}" == "_6" and f"{a:3d}" == "  6"
    assert str(static(-1)) == "_-1"
    assert a == 6 and hash(a) == hash(6)
    assert pickle.loads(pickle.dumps(a)) == a and isinstance(pickle.loads(pickle.dumps(a)), Static)


def test_static_markers_on_tuples():
    t = static((4, (2, 4)))
    assert is_static(t) and format_int_tuple(t) == "(_4,(_2,_4))"
    assert not is_static((4, (static(2), 4)))
    assert dynamic(t) == (4, (2, 4)) and not is_static(dynamic(t)[0])
    assert format_int_tuple(prefix_product(t)) == "(_1,(_4,_8))"
    assert format_int_tuple(prefix_product((4, 2))) == "(1,4)"
    with pytest.raises(ShapeError):
        static(1.5)
    with pytest.raises(ShapeError):
        Static(True)
    with pytest.raises(StridedError):
        static("4")


def test_idx2crd_with_a_stride_is_pycutes_and_cpps_form():
    # (idx // stride) % shape at each leaf: row-major strides give row-major coordinates.
    assert idx2crd(5, (2, 3), (3, 1)) == (1, 2)
    assert idx2crd(5, (2, 3), (1, 2)) == idx2crd(5, (2, 3))
    assert idx2crd((1, 5), (2, (2, 3)), (1, (1, 2))) == (1, (1, 2))
    for i in range(24):
        c = idx2crd(i, (4, (2, 3)), (6, (3, 1)))
        assert crd2idx(c, (4, (2, 3)), (6, (3, 1))) == i


def test_integer_is_pycutes_isinstance_check():
    from strided.cute import Integer, static

    assert isinstance(3, Integer) and isinstance(static(3), Integer) and issubclass(int, Integer)
    assert not isinstance(True, Integer) and not isinstance(1.0, Integer) and not issubclass(str, Integer)
