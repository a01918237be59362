"""The layout algebra: defining properties checked pointwise, plus CuTe's examples.

Every property test evaluates the layouts at every point of their (small)
domains; the literal tests are the examples of the CuTe documentation (the
C++-generated table lives in test_cute_reference.py).
"""

import pytest
from cute_strategies import (
    ext,
    image,
    injective_layouts,
    layouts,
    leaves,
    natural_coords,
    pow2_layouts,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from strided.cute import (
    Layout,
    blocked_product,
    coalesce,
    compatible,
    complement,
    composition,
    dynamic,
    filter,
    flat_divide,
    flat_product,
    is_static,
    left_inverse,
    logical_divide,
    logical_product,
    make_layout,
    raked_product,
    right_inverse,
    size,
    static,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from strided.errors import ShapeError

FAST = settings(max_examples=40, deadline=None)


def abs_layout(L):
    return Layout(L.shape, tuple_map(abs, L.stride))


def tuple_map(f, t):
    return tuple(tuple_map(f, e) for e in t) if isinstance(t, tuple) else f(t)


def is_injective(L):
    offs = image(L)
    return len(set(offs)) == len(offs)


# ---------------------------------------------------------------------------
# coalesce and filter
# ---------------------------------------------------------------------------


def test_coalesce_examples():
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2)))) == Layout(12, 1)
    assert str(coalesce(static(Layout((2, (1, 6)), (1, (6, 2)))))) == "_12:_1"
    assert str(coalesce(static(Layout((2, (1, 6)), (1, (6, 2)))), (1, 1))) == "(_2,_6):(_1,_2)"
    assert coalesce(Layout((4, 2), (1, 10))) == Layout((4, 2), (1, 10))
    assert coalesce(Layout((2, 2), (-1, -2))) == Layout(4, -1)
    assert coalesce(Layout((3, 2), (0, 0))) == Layout(6, 0)
    assert coalesce(Layout((1, 1), (5, 7))) == Layout(1, 0)
    assert str(coalesce(static(Layout((1, 1), (5, 7))))) == "_1:_0"


@given(layouts())
@FAST
def test_coalesce_preserves_function_and_is_minimal(L):
    C = coalesce(L)
    assert C.size == L.size
    assert C.depth <= 1
    assert image(C) == image(L)
    cs, cd = leaves(C.shape), leaves(C.stride)
    if C.size == 1:
        assert C == Layout(1, 0)
    else:
        assert all(s > 1 for s in cs)
        assert all(cs[k] * cd[k] != cd[k + 1] for k in range(len(cs) - 1))
    assert coalesce(C) == C


@given(layouts())
@FAST
def test_coalesce_by_mode(L):
    assume(isinstance(L.shape, tuple))
    C = coalesce(L, (1,) * L.rank)
    assert C.rank == L.rank
    assert all(C[i] == coalesce(L[i]) for i in range(L.rank))
    assert image(C) == image(L)
    # A shorter profile leaves the remaining modes untouched.
    P = coalesce(L, (1,))
    assert P[0] == coalesce(L[0]) and all(P[i] == L[i] for i in range(1, L.rank))


@given(layouts())
@FAST
def test_filter_keeps_the_codomain(L):
    F = filter(L)
    assert set(image(F)) == set(image(L))
    assert F.depth <= 1
    if F.size > 1:
        assert 0 not in leaves(F.stride)
    expected_size = 1
    for s, d in zip(leaves(L.shape), leaves(L.stride)):
        expected_size *= s if d != 0 else 1
    assert F.size == expected_size


def test_filter_examples():
    assert filter(Layout((4, 2, 3), (1, 0, 4))) == Layout(12, 1)
    assert filter(Layout((4, 2), (0, 0))) == Layout(1, 0)
    assert filter(Layout((4, (2, 3)), (1, (0, 8))), (1, 1)) == Layout((4, 3), (1, 8))


# ---------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------


def test_composition_examples():
    # CuTe documentation.
    assert composition(Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1))) == Layout(((2, 2), 3), ((24, 2), 8))
    assert composition(Layout(20, 2), Layout((5, 4), (4, 1))) == Layout((5, 4), (8, 2))
    assert composition(Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5))) == Layout((5, (2, 2)), (16, (80, 4)))
    a = Layout((12, (4, 8)), (59, (13, 1)))
    # By-mode with a tuple of layouts, and with a Shape tiler (each int n is n:1).
    assert composition(a, (Layout(3, 4), Layout(8, 2))) == Layout((3, (2, 4)), (236, (26, 1)))
    assert composition(a, (3, 8)) == Layout((3, (4, 2)), (59, (13, 1)))
    assert composition(a, (None, Layout(8, 2))) == Layout((12, (2, 4)), (59, (26, 1)))
    # C++ drops the modes of a that a shorter tiler does not reach (pycute keeps them).
    assert composition(Layout((4, 6, 8), (1, 4, 24)), (2,)) == Layout((2,), (1,))
    # An int tiler is n:1 on the whole layout; None is the identity.
    assert composition(Layout((4, 6), (1, 4)), 8) == Layout(8, 1)
    assert composition(a, None) == a
    # A single-mode lhs is linear, so a negative tiler stride is fine there (as in C++).
    assert composition(Layout(8, 1), Layout(8, -1)) == Layout(8, -1)
    assert composition(Layout(8, 2), Layout((2, 2), (-1, 2))) == Layout((2, 2), (-2, 4))
    # Static ints print static, as C++ does.
    r = composition(static(Layout((6, 2), (8, 2))), static(Layout((4, 3), (3, 1))))
    assert str(r) == "((_2,_2),_3):((_24,_2),_8)"


def test_composition_extends_past_the_size_along_the_last_mode():
    # CuTe reads a layout past its size along its last mode.
    assert composition(Layout(4, 1), Layout(8, 1)) == Layout(8, 1)
    assert composition(Layout((4, 2), (1, 10)), Layout(16, 1)) == Layout((4, 4), (1, 10))
    # coalesce_x: a size-1 last mode keeps its stride for that extension.
    assert composition(Layout((4, 1), (1, 0)), Layout(8, 1)) == Layout((4, 2), (1, 0))


@given(layouts(max_size=64), layouts(max_size=32, stride_range=(0, 12)))
@settings(max_examples=80, deadline=None)
def test_composition_is_pointwise(A, B):
    try:
        R = composition(A, B)
    except ShapeError:
        assume(False)
    assert compatible(B.shape, R.shape)
    for i in range(B.size):
        assert R(i) == ext(A, B(i))
    for c in natural_coords(B.shape):
        assert R(c) == ext(A, B(c))


@given(pow2_layouts(max_size=64), pow2_layouts(max_size=32))
@settings(max_examples=80, deadline=None)
def test_composition_raises_exactly_when_modes_carry(A, B):
    """With power-of-two layouts every single mode of B composes with A; then
    composition must succeed exactly when composing mode by mode is right."""
    modes = [Layout(s, d) for s, d in zip(leaves(B.shape), leaves(B.stride))]
    parts = [composition(A, m) for m in modes]
    by_mode_right = all(
        sum(p(c) for p, c in zip(parts, leaves(crd))) == ext(A, B(crd)) for crd in natural_coords(B.shape)
    )
    try:
        R = composition(A, B)
    except ShapeError as e:
        assert not by_mode_right, str(e)
        assert "overlap" in str(e)
    else:
        assert by_mode_right
        assert image(R) == [ext(A, B(i)) for i in range(B.size)]


@given(layouts(max_size=64), st.data())
@FAST
def test_composition_by_mode(A, data):
    assume(isinstance(A.shape, tuple))
    k = data.draw(st.integers(1, A.rank))
    tiler = tuple(data.draw(st.sampled_from([None, 1, 2, Layout(2, 1), Layout(2, 2)])) for _ in range(k))
    try:
        R = composition(A, tiler)
    except ShapeError:
        assume(False)
    assert R.rank == k
    for i, t in enumerate(tiler):
        assert R[i] == composition(A[i], t)


def test_known_cpp_faults_raise():
    # C++ CuTe returns wrong layouts for these two (issues #3177 and #2955).
    with pytest.raises(ShapeError, match=r"composition\(\(4,6,8\):\(2,3,5\), 6:3\): stride divisibility"):
        composition(Layout((4, 6, 8), (2, 3, 5)), Layout(6, 3))
    with pytest.raises(ShapeError, match=r"composition\(\(6,2\):\(1,7\), \(3,2\):\(2,3\)\): .*overlap"):
        composition(Layout((6, 2), (1, 7)), Layout((3, 2), (2, 3)))
    # ... while each of their modes alone is fine.
    assert composition(Layout((6, 2), (1, 7)), Layout(3, 2)) == Layout(3, 2)
    assert composition(Layout((6, 2), (1, 7)), Layout(2, 3)) == Layout(2, 3)


def test_composition_accepts_exact_cases_cpp_rejects():
    # The mode stays inside one digit of the lhs, so no divisibility is needed.
    assert composition(Layout((6, 2), (1, 7)), Layout(4, 1)) == Layout(4, 1)
    assert composition(Layout((4, 3), (1, 10)), Layout(2, 3)) == Layout(2, 3)


# ---------------------------------------------------------------------------
# complement
# ---------------------------------------------------------------------------


def test_complement_examples():
    # CuTe documentation.
    assert complement(Layout(4, 1), 24) == Layout(6, 4)
    assert complement(Layout(6, 4), 24) == Layout(4, 1)
    assert complement(Layout((4, 6), (1, 4)), 24) == Layout(1, 0)
    assert complement(Layout(4, 2), 24) == Layout((2, 3), (1, 8))
    assert complement(Layout((2, 4), (1, 6)), 24) == Layout(3, 2)
    assert complement(Layout((2, 2), (1, 6)), 24) == Layout((3, 2), (2, 12))
    assert complement(Layout(4, 2)) == Layout(2, 1)  # default cotarget: cosize
    assert complement(Layout(4, 0), 8) == Layout(8, 1)  # stride-0 modes are invisible
    assert complement(Layout(4, -2), 24) == complement(Layout(4, 2), 24)
    assert complement(Layout(4, 1), (2, 12)) == complement(Layout(4, 1), 24)
    assert str(complement(static(Layout(4, 2)), static(24))) == "(_2,_3):(_1,_8)"


def _sorted_modes(L):
    F = filter(abs_layout(L))
    return sorted((d, s) for s, d in zip(leaves(F.shape), leaves(F.stride)) if s > 1 and d > 0)


def _gaps_are_exact(L):
    """Each sorted stride of |L| filtered is a multiple of the span of the smaller modes."""
    span = 1
    for d, s in _sorted_modes(L):
        if d % span:
            return False
        span = d * s
    return True


def _check_complement(L, M, R, cutlass_bound=False):
    """CUTLASS's test_complement conditions (complement.cpp), counted by brute force.

    Its bound (2), cosize(R) <= round_up(M, cosize(L)), holds for the layouts
    it tests but not for all (2:3 with M = 139 has R = (3,24):(1,6)); the bound
    that always holds rounds up to the span of L's largest-stride mode.
    """
    F = filter(abs_layout(L))
    both = make_layout(F, R)
    assert R.depth <= 1
    # (3) ordered: the offsets of R strictly increase.
    offsets = image(R)
    assert all(offsets[i - 1] < offsets[i] for i in range(1, len(offsets)))
    # (4) disjoint codomains: only 0 is shared.
    assert set(offsets) & set(image(L if all(d >= 0 for d in leaves(L.stride)) else F)) <= {0}
    assert set(offsets) & set(image(F)) == {0}
    # (1) the completed layout reaches the cotarget; (2) R is no longer than needed.
    assert max(image(both)) + 1 >= M
    modes = _sorted_modes(L)
    unit = max(image(F)) + 1 if cutlass_bound else (modes[-1][0] * modes[-1][1] if modes else 1)
    assert max(offsets) + 1 <= -(-M // unit) * unit
    if _gaps_are_exact(L):
        # Then (|L| filtered, R) is a bijection onto [0, N), M <= N.
        n = both.size
        assert sorted(image(both)) == list(range(n))
        span = max([s * d for s, d in zip(leaves(F.shape), leaves(F.stride))] + [1])
        assert M <= n < M + span


@given(injective_layouts(negative=True), st.integers(1, 300))
@FAST
def test_complement_properties(L, M):
    R = complement(L, M)
    _check_complement(L, M, R)
    assert complement(L, M) == complement(abs_layout(L), M)
    if all(d >= 0 for d in leaves(L.stride)):
        assert is_injective(make_layout(L, R))


@given(injective_layouts())
@FAST
def test_complement_default_target(L):
    R = complement(L)
    _check_complement(L, filter(L).cosize, R)


def cpp_complement(L, M):
    """C++ CuTe's complement fold (layout.hpp), on |L| filtered: None where it static_asserts."""
    cur, shapes, strides = 1, [], []
    for d, s in _sorted_modes(L):
        if d // cur == 0:
            return None
        shapes.append(d // cur)
        strides.append(cur)
        cur = d * s
    shapes.append(-(-M // cur))
    strides.append(cur)
    return coalesce(Layout(tuple(shapes), tuple(strides)))


@given(layouts(max_size=64), st.integers(1, 200))
@FAST
def test_complement_of_any_layout_is_cpps_or_raises(L, M):
    want = cpp_complement(L, M)
    try:
        R = complement(L, M)
    except ShapeError as e:
        assert "complement" in str(e) and str(L) in str(e)
        # It raises only where C++'s fold stops (an extent-0 mode: its static_assert),
        # or where C++'s result is not a complement.
        if want is not None:
            with pytest.raises(AssertionError):
                _check_complement(L, M, want)
    else:
        assert want is not None and R == want
        _check_complement(L, M, R)


def test_complement_refuses_cpps_result_where_it_falls_short_of_the_cotarget():
    # C++: (2,2):(2,6) -> 2:1 between the modes (6 // 4 = 1 leaves 4, 5 out), rest 7:12;
    # beside the layout it reaches 8 + 73 = 81, short of 83.
    with pytest.raises(ShapeError, match="short of the cotarget 83"):
        complement(Layout((2, 2), (2, 6)), 83)
    assert complement(Layout((2, 2), (2, 6)), 81) == Layout((2, 7), (1, 12))


# CUTLASS test/unit/cute/core/complement.cpp: every layout and cotarget it tests
# (static and dynamic), with its conditions checked in _check_complement.
CUTLASS_COMPLEMENT = [
    ((1, 0), [None, 2, 5, (2, 2)]),
    ((1, 1), [None, 2, 5, (2, 2)]),
    ((1, 2), [1, 2, 8, 5, (2, 2)]),
    ((4, 0), [1, 2, 8]),
    ((4, 1), [1, 2, 8]),
    ((4, 2), [1, None, 16, 19, (2, 2)]),
    ((4, 4), [1, None, 17, (2, 2)]),
    (((2, 4), None), [None]),
    (((2, 3), None), [None]),
    (((2, 4), (1, 4)), [None]),
    (((2, 4), (1, 6)), [None]),
    (((2, 4, 8), (8, 1, 64)), [None]),
    (((2, 4, 8), (8, 1, 0)), [None, 460]),
    ((((2, 2), (2, 2)), ((1, 4), (8, 32))), [None]),
    ((((2, 2), (2, 2)), ((1, 32), (8, 4))), [None]),
    (((4, 6), (1, 6)), [None]),
    (((4, 2), (1, 10)), [None]),
    (((4, 2), (1, 16)), [None]),
    ((12, None), [1, None, 53, 128]),
    ((12, 1), [1, None, 53, 128]),
    ((12, 2), [1, None, 53, 128]),
    (((3, 6), (1, 3)), [None]),
    (((3, 6), (1, 9)), [None]),
    (((3, 6), (1, 10)), [None]),
    ((64, None), [(32, 4, 4)]),
]


@pytest.mark.parametrize("layout, cotargets", CUTLASS_COMPLEMENT, ids=[str(c[0]) for c in CUTLASS_COMPLEMENT])
def test_complement_cutlass_cases(layout, cotargets):
    L = Layout(*layout)
    for M in cotargets:
        R = complement(L) if M is None else complement(L, M)
        target = filter(L).cosize if M is None else size(M)
        _check_complement(L, target, R, cutlass_bound=True)


def test_complement_keeps_cpps_result_where_gaps_are_not_exact():
    # C++ divides the gap by the span with a floor: (4,6):(1,6) leaves 4,5 uncovered
    # between its modes, so nothing fits there, and its complement is trivial.
    assert complement(Layout((4, 6), (1, 6))) == Layout(1, 0)
    assert complement(Layout((4, 10), (1, 10))) == Layout(2, 4)
    assert complement(Layout((3, 6), (1, 10))) == Layout(3, 3)
    assert complement(Layout((2, 2), (1, 3)), 8) == Layout(2, 6)
    assert str(complement(static(Layout((4, 6), (1, 6))))) == "_1:_0"


# ---------------------------------------------------------------------------
# inverses
# ---------------------------------------------------------------------------


def test_inverse_examples():
    assert right_inverse(Layout((3, 2), (2, 1))) == Layout((2, 3), (3, 1))
    assert right_inverse(Layout(4, 2)) == Layout(1, 0)
    assert right_inverse(Layout((4, 2), (1, -4))) == Layout(4, 1)
    assert right_inverse(Layout(8, -1)) == Layout(1, 0)
    assert left_inverse(Layout(4, 2)) == Layout((2, 4), (0, 1))
    assert left_inverse(Layout((2, 2), (1, 3))) == Layout((3, 2), (1, 2))  # injective, not complementable
    assert left_inverse(Layout((4, 1), (1, 7))) == Layout(4, 1)
    assert str(right_inverse(static(Layout((3, 2), (2, 1))))) == "(_2,_3):(_3,_1)"


@given(layouts())
@FAST
def test_right_inverse(L):
    R = right_inverse(L)
    for i in range(R.size):
        j = R(i)
        assert 0 <= j < L.size
        assert L(j) == i
    # It is as long as the run 0, 1, 2, ... of offsets reached through whole modes:
    # offset size(R) is never reached by a mode of stride size(R).
    assert all(not (d == R.size and s > 1) for s, d in zip(leaves(coalesce(L).shape), leaves(coalesce(L).stride)))


@given(injective_layouts(gaps=False))
@FAST
def test_inverses_of_a_bijection(L):
    R = right_inverse(L)
    Li = left_inverse(L)
    assert R.size == L.size
    for i in range(L.size):
        assert L(R(i)) == i
        assert R(L(i)) == i
        assert Li(L(i)) == i


@given(injective_layouts())
@FAST
def test_left_inverse(L):
    R = left_inverse(L)
    for i in range(L.size):
        o = L(i)
        assert 0 <= o < R.size
        assert R(o) == i


@given(layouts(max_size=64))
@FAST
def test_left_inverse_of_any_layout_is_right_or_raises(L):
    try:
        R = left_inverse(L)
    except ShapeError as e:
        assert "left_inverse" in str(e) and str(L) in str(e)
        negative = any(d < 0 and s > 1 for s, d in zip(leaves(coalesce(L).shape), leaves(coalesce(L).stride)))
        if not negative and is_injective(L):
            # Injective but its sorted strides do not divide each other: the C++ condition.
            C = coalesce(L)
            ds = sorted(d for d in leaves(C.stride))
            assert any(b % a for a, b in zip(ds, ds[1:]))
    else:
        for i in range(L.size):
            assert R(L(i)) == i


# ---------------------------------------------------------------------------
# divide
# ---------------------------------------------------------------------------


def test_divide_examples():
    a = Layout((4, 2, 3), (2, 1, 8))
    assert logical_divide(a, Layout(4, 2)) == Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))
    # The 2-D example of the CuTe documentation.
    A = Layout((9, (4, 8)), (59, (13, 1)))
    T = (Layout(3, 3), Layout((2, 4), (1, 8)))
    assert str(logical_divide(A, T)) == "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
    assert str(zipped_divide(A, T)) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    assert str(tiled_divide(A, T)) == "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
    assert str(flat_divide(A, T)) == "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"
    # An int tiler is the layout n:1; a Shape tiler divides mode by mode.
    assert logical_divide(Layout(24), 4) == Layout((4, 6), (1, 4))
    assert zipped_divide(Layout((8, 6)), (4, 3)) == Layout(((4, 3), (2, 2)), ((1, 8), (4, 24)))
    assert logical_divide(A, None) == A


@given(layouts(max_size=64), injective_layouts(max_size=16, gaps=True))
@FAST
def test_logical_divide_definition(A, B):
    try:
        D = logical_divide(A, B)
    except ShapeError as e:
        assert "logical_divide" in str(e)
        assume(False)
    C = complement(B, coalesce(A).shape)
    assert D == composition(A, make_layout(B, C))
    assert D[0] == composition(A, B)  # the tile
    for t in range(B.size):
        for r in range(C.size):
            assert D(t, r) == ext(A, B(t) + C(r))


@given(layouts(max_size=64), st.data())
@FAST
def test_divide_variants_regroup_logical_divide(A, data):
    assume(isinstance(A.shape, tuple))
    k = data.draw(st.integers(1, A.rank))
    tiler = tuple(data.draw(st.sampled_from([1, 2, Layout(2, 1), Layout(2, 2), Layout((2, 2), (1, 4))]))
                  for _ in range(k))
    try:
        L = logical_divide(A, tiler)
    except ShapeError:
        assume(False)
    assert L.rank == A.rank
    for i in range(k):
        assert L[i] == logical_divide(A[i], tiler[i])
    for i in range(k, A.rank):
        assert L[i] == A[i]
    Z = zipped_divide(A, tiler)
    assert Z[0] == make_layout(*(L[i][0] for i in range(k)))
    assert Z[1] == make_layout(*(L[i][1] for i in range(k)), *(L[i] for i in range(k, A.rank)))
    unpack = lambda M: [M] if M.rank == 1 else list(M)
    assert tiled_divide(A, tiler) == make_layout(Z[0], *unpack(Z[1]))
    assert flat_divide(A, tiler) == make_layout(*unpack(Z[0]), *unpack(Z[1]))


# ---------------------------------------------------------------------------
# product
# ---------------------------------------------------------------------------


def test_product_examples():
    assert logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)) == Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))
    # An int tiler is n:1 (pycute divides here instead).
    assert logical_product(Layout((2, 2), (4, 1)), 6) == Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))
    tile = static(Layout((2, 2), (1, 2)))
    grid = static(Layout((3, 4), (4, 1)))
    # C++ CuTe (CUTLASS 4.2) output for the documentation's tile and matrix of tiles.
    assert str(blocked_product(tile, grid)) == "((_2,_3),(_2,_4)):((_1,_16),(_2,_4))"
    assert str(raked_product(tile, grid)) == "((_3,_2),(_4,_2)):((_16,_1),(_4,_2))"
    assert str(blocked_product(static(Layout(4, 1)), static(Layout(3, 1)))) == "((_4,_3)):((_1,_4))"
    # Rank 1 with a tiler whose copies split (C++ returns a layout of size 4 here).
    assert blocked_product(Layout(2, 2), Layout(4, 1)) == Layout(((2, (2, 2)),), ((2, (1, 4)),))
    assert raked_product(Layout(2, 2), Layout(4, 1)) == Layout((((2, 2), 2),), (((1, 4), 2),))
    assert str(logical_product(tile, grid)) == "((_2,_2),(_3,_4)):((_1,_2),(_16,_4))"
    assert str(zipped_product(tile, grid)) == "((_2,_2),(_3,_4)):((_1,_2),(_16,_4))"
    assert str(tiled_product(tile, grid)) == "((_2,_2),_3,_4):((_1,_2),_16,_4)"
    assert str(flat_product(tile, grid)) == "(_2,_2,_3,_4):(_1,_2,_16,_4)"
    # Mode by mode with a tuple tiler.
    a = Layout((2, 5), (5, 1))
    assert logical_product(a, (3, 4)) == Layout(((2, 3), (5, 4)), ((5, 1), (1, 5)))
    assert logical_product(a, (3, 4)) == make_layout(logical_product(a[0], 3), logical_product(a[1], 4))
    assert logical_product(a, Layout((3, 4), (1, 3))) == Layout(((2, 5), (3, 4)), ((5, 1), (10, 30)))
    assert logical_product(Layout(4, 1), None) == Layout(4, 1)


@given(injective_layouts(max_size=16, negative=True), injective_layouts(max_size=16))
@FAST
def test_logical_product_definition(A, B):
    try:
        P = logical_product(A, B)
    except ShapeError as e:
        # e.g. a block with a gap of 3 leaves room that a power-of-two tiler cannot index
        assert str(e).startswith(f"logical_product({A}, {B}): composition(")
        assume(False)
    C = complement(A, A.size * B.cosize)
    assert P[0] == A
    assert P[1] == composition(C, B)
    for a in range(A.size):
        for b in range(B.size):
            assert P(a, b) == A(a) + ext(C, B(b))
    # Copies of an injective block at injective places never collide.
    assert is_injective(P)


@given(injective_layouts(max_size=16), injective_layouts(max_size=16))
@FAST
def test_product_variants(A, B):
    try:
        P = logical_product(A, B)
    except ShapeError:
        assume(False)
    assert zipped_product(A, B) == P  # a layout tiler is already (block, copies)
    unpack = lambda M: [M] if M.rank == 1 else list(M)
    assert tiled_product(A, B) == make_layout(P[0], *unpack(P[1]))
    assert flat_product(A, B) == make_layout(*unpack(P[0]), *unpack(P[1]))


@given(injective_layouts(max_size=16), injective_layouts(max_size=16))
@FAST
def test_blocked_and_raked_products(A, B):
    r = max(A.rank, B.rank)

    def pad(L):
        modes = list(L) if L.rank > 1 or isinstance(L.shape, tuple) else [L]
        if L.rank >= r:
            return L
        return make_layout(*modes, *[Layout(1, 0)] * (r - L.rank))

    try:
        P = logical_product(pad(A), pad(B))
    except ShapeError:
        with pytest.raises(ShapeError, match=r"^blocked_product\("):
            blocked_product(A, B)
        assume(False)
    blocked, raked = blocked_product(A, B), raked_product(A, B)
    assert blocked.rank == raked.rank == r
    # Mode i of each half: the operand's mode i (an int-shaped operand is its own mode).
    half = lambda H, operand, i: H[i] if isinstance(pad(operand).shape, tuple) else H
    for i in range(r):
        assert blocked[i] == make_layout(half(P[0], A, i), half(P[1], B, i))
        assert raked[i] == make_layout(half(P[1], B, i), half(P[0], A, i))
    assert sorted(image(blocked)) == sorted(image(P)) == sorted(image(raked))
    assert blocked.size == raked.size == A.size * B.size


# ---------------------------------------------------------------------------
# static versus dynamic
# ---------------------------------------------------------------------------

UNARY = [coalesce, filter, right_inverse, left_inverse, complement]
BINARY = [
    composition,
    logical_divide,
    zipped_divide,
    tiled_divide,
    flat_divide,
    logical_product,
    zipped_product,
    tiled_product,
    flat_product,
    blocked_product,
    raked_product,
]


@given(injective_layouts(max_size=32), injective_layouts(max_size=16), st.sampled_from(UNARY + BINARY))
@settings(max_examples=60, deadline=None)
def test_static_and_dynamic_agree(A, B, op):
    """Same layouts either way; static in, static out; dynamic in, no underscore out."""
    args = (A,) if op in UNARY else (A, B)
    try:
        dyn = op(*args)
    except ShapeError:
        with pytest.raises(ShapeError):
            op(*(static(x) for x in args))
        return
    sta = op(*(static(x) for x in args))
    assert sta == dyn
    assert is_static(sta)
    assert "_" not in str(dyn)
    assert str(dynamic(sta)) == str(dyn)
