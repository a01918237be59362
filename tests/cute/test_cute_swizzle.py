"""Swizzle<B,M,S> and composed layouts, against C++ CuTe's bit definition and CUTLASS's cases."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strided.cute import (
    ComposedLayout,
    Layout,
    Swizzle,
    blocked_product,
    coalesce,
    complement,
    composition,
    cosize,
    flat_divide,
    left_inverse,
    logical_divide,
    logical_product,
    make_swizzle,
    raked_product,
    right_inverse,
    size,
    static,
    tiled_divide,
    zipped_divide,
)
from strided.errors import ShapeError, StridedError


def bitwise_swizzle(x, b, m, s):
    """C++ CuTe's Swizzle, one bit at a time: bit z of the B bits at M - min(0,S)
    becomes bit z XOR bit z + S (S > 0 reads higher bits, S < 0 lower)."""
    bits = [(x >> k) & 1 for k in range(max(x.bit_length(), m + b + abs(s)) + 1)]
    out = list(bits)
    for j in range(b):
        z = m - min(0, s) + j
        y = m + max(0, s) + j
        out[z] = bits[z] ^ bits[y]
    return sum(v << k for k, v in enumerate(out))


@st.composite
def swizzles(draw):
    b = draw(st.integers(0, 4))
    m = draw(st.integers(0, 4))
    s = draw(st.integers(b, 6)) * draw(st.sampled_from([1, -1]))
    if s == 0 and b == 0:
        s = draw(st.integers(0, 3))
    return b, m, s


@given(swizzles(), st.integers(0, 1 << 14))
@settings(max_examples=200)
def test_swizzle_is_cpps_bit_formula(bms, x):
    b, m, s = bms
    sw = Swizzle(b, m, s)
    assert sw(x) == bitwise_swizzle(x, b, m, s)
    assert sw(sw(x)) == x  # an involution


@given(swizzles())
@settings(max_examples=50)
def test_swizzle_permutes_its_period(bms):
    sw = Swizzle(*bms)
    n = sw.size
    assert n == 1 << (bms[0] + bms[1] + abs(bms[2]))
    assert sorted(sw(i) for i in range(n)) == list(range(n))


def test_swizzle_masks_and_text():
    sw = Swizzle(3, 4, 3)
    assert (sw.yyy_msk, sw.zzz_msk) == (0b1110000000, 0b1110000)
    assert Swizzle(2, 1, -3).yyy_msk == 0b110 and Swizzle(2, 1, -3).zzz_msk == 0b110000
    assert str(sw) == "Sw<3,4,3>" and repr(sw) == "Swizzle(3, 4, 3)"
    assert pickle.loads(pickle.dumps(sw)) == sw and hash(sw) == hash(Swizzle(3, 4, 3))
    assert size(sw) == cosize(sw) == 1 << 10


@pytest.mark.parametrize("args, what", [
    ((-1, 0, 3), "non-negative"),
    ((3, -2, 3), "non-negative"),
    ((3, 0, 2), "|S| = 2 is below B = 3"),
    ((3, 0, -1), "|S| = 1 is below B = 3"),
    ((1.5, 0, 3), "must be an int"),
])
def test_swizzle_errors_name_the_values(args, what):
    with pytest.raises(ShapeError) as e:
        Swizzle(*args)
    assert "Swizzle(" in str(e.value) and what in str(e.value)
    with pytest.raises(StridedError, match="offsets >= 0"):
        Swizzle(3, 0, 3)(-1)


def test_inverse_of_a_swizzle_whose_bits_scatter_is_refused():
    # B^-1 carries Sw<2,1,3>'s bits to offset bits 0,5 and 1,3: no Swizzle<B,M,S>
    # reads or flips those (C++'s make_swizzle static_asserts there too).
    S = composition(*CUTLASS_SWIZZLED[2])
    for inverse in (right_inverse, left_inverse):
        with pytest.raises(ShapeError, match="make_swizzle.*runs of ones"):
            inverse(S)


def test_make_swizzle_from_masks():
    # The examples of C++ make_swizzle<Y,Z>'s comment.
    assert make_swizzle(0b1000, 0b0100) == Swizzle(1, 2, 1)
    assert make_swizzle(0b11000000, 0b00000110) == Swizzle(2, 1, 5)
    assert make_swizzle(0b111000, 0b111) == Swizzle(3, 0, 3)
    assert make_swizzle(0b11, 0b1100) == Swizzle(2, 0, -2)
    with pytest.raises(ShapeError, match="runs of ones"):
        make_swizzle(0b101, 0b10)


# CUTLASS test/unit/cute/core/swizzle_layout.cpp: the three swizzled layouts it slices.
CUTLASS_SWIZZLED = [
    (Swizzle(3, 0, 3), Layout((8, 8), (8, 1))),
    (Swizzle(3, 0, -3), Layout((8, 8), (8, 1))),
    (Swizzle(2, 1, 3), Layout(((2, 2, 2), (2, 2, 2)), ((32, 2, 8), (4, 1, 16)))),
]


@pytest.mark.parametrize("sw, B", CUTLASS_SWIZZLED, ids=lambda x: str(x))
def test_composed_layout_is_the_composed_function_and_slices(sw, B):
    S = composition(sw, B)
    assert isinstance(S, ComposedLayout) and S.shape == B.shape and size(S) == size(B)
    rows, cols = size(B[0]), size(B[1])
    for i in range(rows):
        row = S(i, None)
        for j in range(cols):
            assert S(i, j) == sw(B(i, j)) == row(j)
    for j in range(cols):
        col = S(None, j)
        assert [col(i) for i in range(rows)] == [S(i, j) for i in range(rows)]
    assert [S(i) for i in range(size(S))] == [sw(B(i)) for i in range(size(B))]
    # A bijection onto the same buffer: the swizzle only permutes within its period.
    assert sorted(S(i) for i in range(size(S))) == sorted(B(i) for i in range(size(B)))


def test_composed_layout_prints_as_cute_does():
    S = composition(Swizzle(3, 0, 3), static(Layout((8, 8), (8, 1))))
    assert str(S) == "Sw<3,0,3> o _0 o (_8,_8):(_8,_1)"
    assert str(S[1]) == "Sw<3,0,3> o _0 o _8:_1"
    assert str(S(2, None)) == "Sw<3,0,3> o 16 o (_8):(_1)"
    assert pickle.loads(pickle.dumps(S)) == S
    assert composition(Swizzle(0, 4, 3), Layout(8)) == Layout(8)  # the identity swizzle drops out
    # C++ counts cosize(B); a swizzle that flips higher bits reaches past it, and the span is counted.
    assert cosize(composition(Swizzle(1, 0, -1), Layout(2))) == 4


OPS = [
    (logical_divide, (2, 4)),
    (zipped_divide, (2, 4)),
    (tiled_divide, (4, 2)),
    (flat_divide, Layout(4, 2)),
    (logical_product, Layout(2, 1)),
    (blocked_product, Layout((2, 2))),
    (raked_product, Layout((2, 2))),
    (composition, Layout((4, 2), (2, 16))),
    (coalesce, None),
]


@pytest.mark.parametrize("op, tiler", OPS, ids=[o[0].__name__ for o in OPS])
def test_reindexing_ops_act_on_the_inner_layout(op, tiler):
    sw, B = Swizzle(3, 0, 3), Layout((8, 8), (8, 1))
    S = composition(sw, B)
    R = op(S) if tiler is None else op(S, tiler)
    inner = op(B) if tiler is None else op(B, tiler)
    assert isinstance(R, ComposedLayout) and R.layout_b == inner and R.layout_a == sw
    for i in range(size(R)):
        assert R(i) == sw(inner(i))


def test_complement_of_a_composed_layout_is_its_inner_layouts():
    S = composition(Swizzle(2, 0, 2), Layout(4, 2))
    assert complement(S, 32) == complement(Layout(4, 2), 32)


@pytest.mark.parametrize("sw, B", CUTLASS_SWIZZLED[:2], ids=lambda x: str(x))
def test_inverses_of_a_swizzled_layout(sw, B):
    S = composition(sw, B)
    R = right_inverse(S)
    assert size(R) == size(S)
    for i in range(size(R)):
        assert S(R(i)) == i
    Linv = left_inverse(S)
    for i in range(size(S)):
        assert Linv(S(i)) == i


def test_layout_after_a_swizzle_becomes_a_swizzle_after_the_layout():
    # (4,4):(4,1) carries index bits 0-1 to offset bits 2-3 and back: the swizzle's
    # read and flipped bits trade places.
    T = Layout((4, 4), (4, 1))
    R = composition(T, Swizzle(2, 0, 2))
    assert R == ComposedLayout(Swizzle(2, 0, -2), 0, T)
    assert [R(i) for i in range(16)] == [T(Swizzle(2, 0, 2)(i)) for i in range(16)]
    with pytest.raises(ShapeError, match="runs of ones"):
        composition(Layout((3, 4), (4, 1)), Swizzle(1, 0, 2))
    # make_swizzle accepts the masks, but the layout does not move bits one to one.
    with pytest.raises(ShapeError, match="does not carry the bits"):
        composition(Layout((3, 4), (1, 4)), Swizzle(1, 0, 1))


def test_composed_layout_errors():
    S = composition(Swizzle(3, 0, 3), Layout((8, 8), (8, 1)))
    with pytest.raises(ShapeError, match="composition.*cute Layout on its right"):
        composition(Swizzle(3, 0, 3), 8)
    with pytest.raises(ShapeError, match="offset to be 0"):
        composition(Layout(64), ComposedLayout(Swizzle(3, 0, 3), 5, Layout(8)))
    with pytest.raises(ShapeError, match="right_inverse.*Swizzle outside and offset 0"):
        right_inverse(ComposedLayout(Swizzle(3, 0, 3), 4, Layout(8)))
    with pytest.raises(ShapeError, match="no strides"):
        S.stride
    with pytest.raises(ShapeError, match="outer function"):
        ComposedLayout(4, 0, Layout(8))
    with pytest.raises(ShapeError, match="inner layout"):
        ComposedLayout(Swizzle(1, 0, 1), 0, (8, 8))


def test_a_swizzle_is_its_own_inverse_and_composed_layouts_flatten_inside():
    from strided.cute import flatten

    sw = Swizzle(2, 1, 3)
    assert right_inverse(sw) == left_inverse(sw) == sw
    S = composition(sw, Layout(((2, 2), 4), ((1, 2), 4)))
    F = flatten(S)
    assert F == ComposedLayout(sw, 0, Layout((2, 2, 4), (1, 2, 4)))
    assert [F(i) for i in range(16)] == [S(i) for i in range(16)]


# ---------------------------------------------------------------------------
# A layout composed with a composed layout: a o (O o B) is i -> a(O(B(i)))
# ---------------------------------------------------------------------------


def test_a_swizzle_rewrite_is_checked_where_the_inner_layout_reaches():
    # 8:2 reaches offsets up to 14, past size((2,4):(4,1)) = 8, where the layout
    # no longer moves Sw<1,0,2>'s bits one to one: the function there is
    # [0,1,6,7,4,5,10,11], which no Sw' o _0 o 8:1 equals (C++ returns
    # Sw<1,1,-1> o _0 o 8:1, i.e. [0,1,6,7,4,5,2,3]).
    A, sw, B = Layout((2, 4), (4, 1)), Swizzle(1, 0, 2), Layout(8, 2)
    assert [A(sw(B(i))) for i in range(8)] == [0, 1, 6, 7, 4, 5, 10, 11]
    with pytest.raises(ShapeError, match=r"composition\(\(2,4\):\(4,1\), Sw<1,0,2> o _0 o 8:2\).*does not carry"):
        composition(A, composition(sw, B))
    # A single mode moves bits one to one past its size as well: still exact.
    R = composition(Layout(4, 2), composition(sw, Layout(16, 1)))
    assert [R(i) for i in range(16)] == [2 * sw(i) for i in range(16)]


def test_a_layout_outside_a_composed_layout_is_followed_past_its_size():
    # 4:1 reaches index 3 of the outer 2:1 (offset 3, past its size 2), where
    # (2,4):(4,1) o 2:1 = 2:4 no longer follows (2,4):(4,1): C++'s (a o L) o B is 4:4.
    A, C = Layout((2, 4), (4, 1)), ComposedLayout(Layout(2, 1), 0, Layout(4, 1))
    R = composition(A, C)
    assert [R(i) for i in range(4)] == [A(C(i)) for i in range(4)] == [0, 4, 1, 5]


@st.composite
def composed_on_the_right(draw):
    """(A, O o B): any small A and any outer O (a swizzle mostly, or a layout)."""
    from cute_strategies import layouts, pow2_layouts

    A = draw(st.one_of(pow2_layouts(max_depth=1, max_size=16), layouts(max_depth=1, max_size=16)))
    inner = draw(pow2_layouts(max_depth=1, max_size=32, max_stride=16))
    if draw(st.integers(0, 3)):
        return A, ComposedLayout(Swizzle(*draw(swizzles())), 0, inner)
    return A, ComposedLayout(draw(layouts(max_depth=1, max_size=16, stride_range=(0, 8))), 0, inner)


@st.composite
def swizzle_past_the_left_layout(draw):
    """(A, Sw o B) where A permutes the bits of its index but, past its size, its
    last mode (not its largest stride) carries into lower bits, and B reaches there."""
    ext = draw(st.lists(st.sampled_from([2, 4]), min_size=2, max_size=3))
    order = draw(st.permutations(range(len(ext))).filter(lambda o: o[-1] != len(ext) - 1))
    strides, span = [0] * len(ext), 1
    for k in order:
        strides[k] = span
        span *= ext[k]
    bits = (span - 1).bit_length()
    b = draw(st.integers(1, 2))
    s = draw(st.integers(b, bits)) * draw(st.sampled_from([1, -1]))
    m = draw(st.integers(0, max(0, bits - b - abs(s))))
    B = Layout(draw(st.sampled_from([4, 8, 16])), draw(st.sampled_from([1, 2, 4])))
    return Layout(tuple(ext), tuple(strides)), ComposedLayout(Swizzle(b, m, s), 0, B)


@given(st.one_of(swizzle_past_the_left_layout(), composed_on_the_right()))
@settings(max_examples=200, deadline=None)
def test_composition_with_a_composed_layout_is_the_nested_function(case):
    A, C = case
    try:
        R = composition(A, C)
    except ShapeError:
        return  # refused: allowed, a wrong layout is not
    assert size(R) == size(C)
    assert [R(i) for i in range(size(C))] == [A(C(i)) for i in range(size(C))]


def test_slice_and_offset_of_a_composed_layout_keeps_the_offset_inside():
    from strided.cute import slice_and_offset

    for sw, B in CUTLASS_SWIZZLED:
        S = composition(sw, B)
        for crd in [(None, 3), (5, None), (2, 6)]:
            sliced, off = slice_and_offset(crd, S)
            assert off == 0  # the outer swizzle is not linear: the offset stays inside
            if None in crd:
                assert sliced == S(crd)
            free = [n for n, c in zip((size(B[0]), size(B[1])), crd) if c is None]
            for j in range(free[0] if free else 1):
                full = tuple(j if c is None else c for c in crd)
                assert sliced(j) + off == S(full)
    with pytest.raises(ShapeError, match="slice_and_offset: expected a cute Layout or ComposedLayout"):
        slice_and_offset((None, 1), Swizzle(1, 0, 1))
