"""Every error path of the algebra: a StridedError (ShapeError) whose message
names the operation and the layouts involved; never an assert, never a wrong
layout."""

import pytest

from strided.cute import (
    Layout,
    blocked_product,
    coalesce,
    complement,
    composition,
    filter,
    flat_divide,
    flat_product,
    left_inverse,
    logical_divide,
    logical_product,
    raked_product,
    right_inverse,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from strided.errors import ShapeError, StridedError


def raises(fn, *args, contains=()):
    """Call fn(*args); require a ShapeError naming fn and every layout argument."""
    with pytest.raises(ShapeError) as info:
        fn(*args)
    msg = str(info.value)
    assert isinstance(info.value, StridedError) and isinstance(info.value, ValueError)
    assert msg.startswith(f"{fn.__name__}("), msg
    for a in args:
        if isinstance(a, Layout):
            assert str(a) in msg, msg
    for part in contains:
        assert part in msg, msg
    return msg


A = Layout((4, (2, 4)), (2, (1, 8)))


def test_not_a_layout():
    for fn in (coalesce, filter, right_inverse, left_inverse, complement):
        raises(fn, "4:1", contains=["expected a cute Layout"])
    raises(composition, 4.5, Layout(2), contains=["expected a cute Layout"])
    raises(composition, A, "2:1", contains=["a tiler is a Layout"])
    raises(logical_divide, A, 2.0, contains=["a tiler is"])
    raises(logical_product, A, [2], contains=["a tiler is"])
    raises(blocked_product, A, "x", contains=["expected a cute Layout"])


def test_profiles_and_tilers_longer_than_the_layout():
    raises(coalesce, A, (1, 1, 1), contains=["3 modes", "rank 2"])
    raises(filter, A, (1, 1, 1), contains=["3 modes"])
    raises(composition, A, (2, 2, 2), contains=["3 modes", "rank 2"])
    raises(logical_divide, A, (2, 2, 2), contains=["3 modes"])
    raises(logical_product, A, (2, 2, 2), contains=["3 modes"])
    raises(zipped_divide, A, (2, 2, 2), contains=["3 modes"])


def test_composition_errors():
    # C++ CuTe's two known wrong results.
    raises(composition, Layout((4, 6, 8), (2, 3, 5)), Layout(6, 3), contains=["stride divisibility"])
    raises(composition, Layout((6, 2), (1, 7)), Layout((3, 2), (2, 3)), contains=["overlap", "extent 6"])
    # Shape divisibility: 6 elements do not split over a mode of 4 and what follows.
    raises(composition, Layout((4, 3, 2), (1, 10, 100)), Layout(6, 1), contains=["shape divisibility"])
    # A negative tiler stride would read the layout before its start.
    raises(composition, Layout((4, 2), (1, 10)), Layout(4, -1), contains=["negative stride"])
    # Mode by mode: the message names the whole call.
    a = Layout(((4, 3), 6), ((1, 10), 40))
    msg = raises(composition, a, (Layout(3, 3), None), contains=["stride divisibility"])
    assert "(3:3,_)" in msg


def test_complement_errors():
    raises(complement, Layout((2, 2), (1, 1)), 8, contains=["not injective"])
    raises(complement, Layout((3, 2), (1, 2)), 8, contains=["not injective"])
    # (2,2):(2,3) is injective, but its mode 2:3 starts inside the span 4 of 2:2, where
    # C++'s fold makes an extent-0 mode (its static_assert "Non-injective Layout").
    raises(complement, Layout((2, 2), (2, 3)), contains=["starts inside the span 4"])
    raises(complement, Layout(4, 1), 0, contains=["must be positive"])
    raises(complement, Layout(4, 1), -3, contains=["must be positive"])
    raises(complement, Layout(4, 1), 2.5, contains=["expected an int"])


def test_inverse_errors():
    raises(left_inverse, Layout(4, -1), contains=["negative stride"])
    raises(left_inverse, Layout((4, 2), (1, 0)), contains=["not injective", "stride 0"])
    raises(left_inverse, Layout((3, 2), (1, 2)), contains=["not injective"])
    raises(left_inverse, Layout((2, 2), (2, 3)), contains=["divisibility"])
    raises(right_inverse, (2, "x"), contains=["expected an int"])


def test_divide_errors_name_the_divide():
    a = Layout((4, 6, 8), (2, 3, 5))
    for fn in (logical_divide, zipped_divide, tiled_divide, flat_divide):
        msg = raises(fn, a, Layout(6, 3), contains=["composition(", "stride divisibility"])
        assert msg.index(fn.__name__) < msg.index("composition(")
    # A None tile (keep the mode) only unzips a mode that is already a (tile, rest) pair.
    raises(zipped_divide, Layout((4, 6)), (None, 2), contains=["not a (tile, rest) pair"])


def test_product_errors_name_the_product():
    # A block with a gap of 3 leaves room a (2,2) tiler cannot index without carries.
    block, tiler = Layout(2, 3), Layout((2, 2), (1, 2))
    for fn in (logical_product, zipped_product, tiled_product, flat_product):
        raises(fn, block, tiler, contains=["composition(", "overlap"])
    raises(blocked_product, block, tiler, contains=["composition("])
    raises(raked_product, block, tiler, contains=["composition("])
    raises(logical_product, Layout(4, 1), Layout(3, -1), contains=["negative stride"])
    raises(blocked_product, Layout((4, 1), (1, 0)), Layout((3, 2), (2, -1)), contains=["negative stride"])
