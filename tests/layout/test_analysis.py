"""Layout analysis (the CANN ops-math model, seed 003): span, bounds, overlap,
classification, the reduce fast path and decomposition into primitive steps.

The oracle is brute force: every offset of a layout, listed with
itertools.product.  Huge inputs get answers built into their construction.
"""

from __future__ import annotations

import random
from itertools import product
from math import prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import view_chains

from strided.errors import LayoutBoundsError, ShapeError, StridedError, StridedIndexError, TooHardError
from strided.layout import Layout
from strided.layout import analysis as A
from strided.layout import overlap  # the exact searches (their private steps are checked one by one)
from strided.layout.analysis import (
    Broadcast,
    Classification,
    Flip,
    Offset,
    Permute,
    Reshape,
    Slice,
    StridedSlice,
    classify,
    decompose,
    equivalent,
    is_non_overlapping,
    may_overlap,
    overlaps,
    replay,
    span,
    supports_reduce_fast_path,
    validate,
)

# ---------------------------------------------------------------------------
# brute force
# ---------------------------------------------------------------------------


def offsets(lay: Layout) -> list[int]:
    return [lay.offset + sum(i * s for i, s in zip(idx, lay.stride)) for idx in product(*map(range, lay.shape))]


def brute_non_overlapping(lay: Layout) -> bool:
    offs = offsets(lay)
    return len(set(offs)) == len(offs)


def brute_collision(items) -> bool:
    """A nonzero x, |x_k| <= n_k - 1, with sum x_k a_k == 0."""
    sums = [sum(i * a for i, (_, a) in zip(idx, items)) for idx in product(*(range(n) for n, _ in items))]
    return len(set(sums)) != len(sums)


def brute_target(terms, target) -> bool:
    return any(
        sum(z * c for z, (_, c) in zip(zs, terms)) == target for zs in product(*(range(m + 1) for m, _ in terms))
    )


@st.composite
def layouts(draw, max_rank=4, max_size=4, max_stride=7, min_offset=0, max_offset=30):
    rank = draw(st.integers(0, max_rank))
    shape = draw(st.lists(st.integers(0, max_size), min_size=rank, max_size=rank))
    stride = draw(st.lists(st.integers(-max_stride, max_stride), min_size=rank, max_size=rank))
    return Layout(shape, stride, draw(st.integers(min_offset, max_offset)))


# Mostly sizes >= 2 so that dims interact; the exact search gets real work.
dense_layouts = layouts(max_rank=4, max_size=5, max_stride=12).filter(lambda l: l.numel <= 1200)

SEED1 = Layout((6, 5), (10, 1), 22)
SEED2 = Layout((4, 3), (20, 2), 22)


# ---------------------------------------------------------------------------
# span and validate
# ---------------------------------------------------------------------------


@given(layouts(max_offset=40))
def test_span_and_cosize_match_brute_force(lay):
    offs = offsets(lay)
    if offs:
        assert span(lay) == lay.span() == (min(offs), max(offs) + 1)
        assert lay.cosize == max(offs) + 1 - min(offs)
    else:
        assert span(lay) == (lay.offset, lay.offset) and lay.cosize == 0


@given(layouts(min_offset=-20, max_offset=40), st.integers(0, 80))
def test_validate_matches_brute_force(lay, buffer_len):
    offs = offsets(lay)
    inside = all(0 <= o < buffer_len for o in offs)
    if inside:
        assert validate(lay, buffer_len) is lay and lay.validate(buffer_len) is lay
    else:
        with pytest.raises(LayoutBoundsError) as info:
            lay.validate(buffer_len)
        msg = str(info.value)
        lo, hi = min(offs), max(offs) + 1
        for part in ("validate", f"shape {lay.shape}", f"stride {lay.stride}", f"offset {lay.offset}",
                     f"[{lo}, {hi})", f"buffer holds {buffer_len}"):
            assert part in msg


def test_span_negative_and_zero_strides_and_sizes():
    assert Layout((3, 4), (-4, 1), 8).span() == (0, 12)
    assert Layout((3, 4), (0, -2), 6).span() == (0, 7)
    assert Layout((5, 0, 3), (7, 100, -9), 3).span() == (3, 3)
    assert Layout((), (), 9).span() == (9, 10)
    assert Layout((0,), (1,), -4).validate(0).numel == 0  # empty touches nothing


# ---------------------------------------------------------------------------
# seed 003, both examples, end to end
# ---------------------------------------------------------------------------


def test_seed_examples_addresses_span_and_bounds():
    assert SEED1.offset_of((1, 3)) == 35  # a(3,5) of the 10x10 buffer
    assert SEED2.offset_of((1, 2)) == 46  # a(4,6)
    # The seed's inclusive end offset + sum((n-1)*s) is 76 and 86: one past is 77 and 87.
    assert SEED1.span() == (22, 77) and SEED2.span() == (22, 87)
    assert (max(offsets(SEED1)), max(offsets(SEED2))) == (76, 86)
    assert SEED2.cosize == 65 and SEED2.numel == 12  # the buffer must cover the span, not numel
    for lay in (SEED1, SEED2):
        assert lay.validate(100) is lay
        with pytest.raises(LayoutBoundsError, match=r"validate: .*buffer holds 50"):
            lay.validate(50)


def test_seed_examples_classification_and_fast_path():
    c1, c2 = SEED1.classify(), SEED2.classify()
    assert c1.kinds == ("offset", "slice") and str(c1) == "offset, slice"
    assert c2.kinds == ("offset", "strided_slice")
    for c in (c1, c2):
        assert not c.transpose and not c.contiguous and c.overlapping is False
    assert SEED1.supports_reduce_fast_path() and SEED2.supports_reduce_fast_path()
    assert SEED1.is_non_overlapping() and SEED2.is_non_overlapping()


def test_seed_examples_decomposition():
    base1, steps1 = SEED1.decompose()
    assert base1 == (8, 10) and steps1 == [Slice(0, 2, 8), Slice(1, 2, 7)]
    base2, steps2 = SEED2.decompose()
    assert base2 == (5, 20) and steps2 == [Slice(0, 1, 5), StridedSlice(1, 2, 7, 2)]
    assert replay(base1, steps1) == SEED1 and replay(base2, steps2) == SEED2
    assert [str(s) for s in steps2] == ["slice dim 0 [1:5]", "strided slice dim 1 [2:7:2]"]


# ---------------------------------------------------------------------------
# overlap
# ---------------------------------------------------------------------------


@given(layouts(max_size=5, max_stride=9))
@settings(max_examples=100)
def test_is_non_overlapping_matches_brute_force(lay):
    assert is_non_overlapping(lay) == lay.is_non_overlapping() == brute_non_overlapping(lay)


@given(dense_layouts)
@settings(max_examples=100)
def test_is_non_overlapping_bigger_layouts(lay):
    assert is_non_overlapping(lay) == brute_non_overlapping(lay)


collision_items = st.lists(st.tuples(st.integers(2, 5), st.integers(1, 40)), min_size=0, max_size=5).filter(
    lambda it: prod(n for n, _ in it) <= 600
)


@given(collision_items, st.sampled_from(["bitset", "enumerate", "mitm"]))
def test_each_exact_collision_search_matches_brute_force(items, method):
    # The reductions decide most small cases; the searches are checked on raw input.
    assert overlap._exact_collision("t", "t", items, 1, method) == brute_collision(items)
    assert overlap._collision_exists("t", "t", items, A.DEFAULT_MAX_WORK) == brute_collision(items)


target_terms = st.lists(st.tuples(st.integers(1, 4), st.integers(-30, 30).filter(bool)), max_size=5)


@given(target_terms, st.integers(-60, 60), st.sampled_from(["bitset", "mitm"]))
@settings(max_examples=100)
def test_each_exact_target_search_matches_brute_force(terms, target, method):
    want = brute_target(terms, target)
    assert overlap._target_exists("t", "t", terms, target, A.DEFAULT_MAX_WORK) == want
    # The raw searches take positive coefficients: flip the negative ones.
    pos = [(m, abs(c)) for m, c in terms]
    shifted = target - sum(c * m for m, c in terms if c < 0)
    if pos:
        assert overlap._exact_target("t", "t", pos, shifted, 1, method) == want


@given(layouts(max_rank=3, max_size=4, max_stride=9), layouts(max_rank=3, max_size=4, max_stride=9))
@settings(max_examples=100)
def test_overlaps_and_may_overlap_match_brute_force(a, b):
    oa, ob = offsets(a), offsets(b)
    shared = bool(set(oa) & set(ob))
    assert overlaps(a, b) == overlaps(b, a) == shared
    extent = bool(oa and ob) and min(oa) <= max(ob) and min(ob) <= max(oa)
    assert may_overlap(a, b) == extent
    assert not shared or extent


@given(layouts(max_size=5, max_stride=9))
def test_a_layout_overlaps_itself_and_its_flip(lay):
    nonempty = lay.numel > 0
    assert overlaps(lay, lay) == nonempty
    if lay.ndim:
        assert overlaps(lay, lay.flip(list(range(lay.ndim)))) == nonempty


def test_overlap_examples():
    evens, odds = Layout((5,), (2,), 0), Layout((5,), (2,), 1)
    assert may_overlap(evens, odds) and not overlaps(evens, odds)
    assert overlaps(evens, Layout((3,), (3,), 0))  # 0 and 6
    assert not may_overlap(Layout((4,), (1,), 0), Layout((4,), (1,), 4))
    assert not is_non_overlapping(Layout((3, 3), (1, 1)))  # as_strided windows
    assert not is_non_overlapping(Layout((2, 4), (0, 1)))  # broadcast
    assert is_non_overlapping(Layout((1, 4, 1), (0, 1, 0)))  # stride 0 on size-1 dims is harmless
    assert is_non_overlapping(Layout((2, 3), (6, 4)))  # interleaved but distinct
    assert not is_non_overlapping(Layout((3, 4), (6, 4)))  # 0 + 3*4 == 2*6


# ---------------------------------------------------------------------------
# huge inputs: answers built into the construction
# ---------------------------------------------------------------------------


def _extras(sizes, reach: int) -> list[tuple[int, int]]:
    """Dims whose strides each beat twice the reach of all below them plus ``reach``:
    their index sums differ by more than any offset difference of the small
    parts, so they change no overlap answer (twice: pairs of them cancel in ``overlaps``)."""
    out, below = [], reach
    for n in sizes:
        s = below + 1
        out.append((n, s))
        below += 2 * (n - 1) * s
    return out


def _with_extras(small: Layout, extras, rng: random.Random) -> Layout:
    dims = list(zip(small.shape, small.stride)) + list(extras)
    rng.shuffle(dims)
    lay = Layout([n for n, _ in dims], [s for _, s in dims], small.offset)
    flips = [d for d in range(lay.ndim) if rng.random() < 0.3]  # a flip keeps the set of offsets
    return lay.flip(flips) if flips else lay


def test_huge_layouts_with_known_answers():
    rng = random.Random(3)

    def small():
        rank = rng.randint(1, 4)
        return Layout(
            [rng.randint(1, 4) for _ in range(rank)], [rng.randint(-9, 9) for _ in range(rank)], rng.randint(0, 30)
        )

    for _ in range(20):
        a, b = small(), small()
        (_, ha), (_, hb) = a.span(), b.span()
        extras = _extras([rng.choice([2, 3, 2**40]) for _ in range(64 - max(a.ndim, b.ndim))], max(ha, hb) + 60)
        big_a, big_b = _with_extras(a, extras, rng), _with_extras(b, extras, rng)
        assert big_a.ndim == 64 or big_b.ndim == 64
        assert max(map(abs, big_a.stride)) > 2**70
        assert is_non_overlapping(big_a) == brute_non_overlapping(a)
        assert is_non_overlapping(big_b) == brute_non_overlapping(b)
        assert overlaps(big_a, big_b) == bool(set(offsets(a)) & set(offsets(b)))


def test_huge_random_layouts_answer_or_refuse():
    rng = random.Random(7)
    for kind in ("twos", "huge", "mixed") * 4:
        shape = [
            2 if kind == "twos" else rng.randrange(2, 2**60) if kind == "huge" else rng.choice([1, 2, 3, 2**40])
            for _ in range(64)
        ]
        stride = [rng.choice([-1, 1]) * rng.randrange(2**69, 2**70) for _ in range(64)]
        lay = Layout(shape, stride, rng.randrange(2**72))
        try:
            ok = is_non_overlapping(lay)
        except TooHardError as e:
            assert "is_non_overlapping" in str(e) and "max_work" in str(e)
            ok = None
        else:
            # Only a proof can answer here: huge sizes collide by pigeonhole.
            assert ok is False and kind != "twos"
        c = classify(lay)
        assert c.overlapping == (None if ok is None else not ok) and c.flip and c.offset
        assert overlaps(lay, lay) and overlaps(lay, lay.flip(0))
        try:
            overlaps(lay, Layout(shape[::-1], stride[::-1], rng.randrange(2**72)))
        except TooHardError as e:
            assert "overlaps" in str(e)
        assert decompose(lay) is None  # huge random strides never nest


def test_too_hard_is_raised_not_guessed():
    items = [(2, a) for a in (3, 5, 7, 11, 13, 17, 19, 23, 29, 31)]
    lay = Layout([n for n, _ in items], [a * 1000 + 1 for _, a in items])
    with pytest.raises(TooHardError, match="is_non_overlapping: .*max_work=1"):
        is_non_overlapping(lay, max_work=1)
    assert is_non_overlapping(lay) == brute_non_overlapping(lay)
    lay2 = Layout([2] * 6, [a * 1000 + 7 for a in (3, 5, 7, 11, 13, 17)], 1)
    with pytest.raises(TooHardError, match="overlaps: .*max_work=1"):
        overlaps(lay, lay2, max_work=1)
    assert overlaps(lay, lay2) == bool(set(offsets(lay)) & set(offsets(lay2)))
    assert classify(lay, max_work=1).overlapping is None
    assert "overlap undecided" in str(classify(lay, max_work=1))


# ---------------------------------------------------------------------------
# classification
# ---------------------------------------------------------------------------


@given(layouts(max_size=5, max_stride=9))
def test_classification_flags_against_brute_force(lay):
    c = lay.classify()
    assert isinstance(c, Classification)
    big = [(n, s) for n, s in zip(lay.shape, lay.stride) if n > 1]
    assert c.contiguous == lay.is_contiguous()
    assert c.offset == (lay.offset != 0)
    assert c.broadcast == any(s == 0 for _, s in big)
    assert c.flip == any(s < 0 for _, s in big)
    assert c.overlapping == (not brute_non_overlapping(lay))
    moving = [abs(s) for _, s in big if s]
    assert c.transpose == (moving != sorted(moving, reverse=True))
    assert set(c.kinds) == {k for k in A._KINDS if getattr(c, k)}
    if lay.numel:
        # Contiguous exactly when nothing but the offset is flagged.
        others = ("slice", "strided_slice", "transpose", "broadcast", "flip", "overlapping")
        assert c.contiguous == (not any(getattr(c, k) for k in others))


def test_classification_examples():
    def kinds(lay):
        return classify(lay).kinds

    assert kinds(Layout.contiguous((3, 4))) == ("contiguous",)
    assert kinds(Layout.contiguous((3, 4)).transpose(0, 1)) == ("transpose",)
    assert kinds(Layout.contiguous((3, 4)).broadcast_as((2, 3, 4))) == ("broadcast", "overlapping")
    assert kinds(Layout.contiguous((5,)).flip(0)) == ("offset", "flip")
    assert kinds(Layout((3, 3), (1, 1))) == ("overlapping",)
    assert kinds(Layout.contiguous((4, 5)).select(1, 2)) == ("offset", "strided_slice")  # a column
    assert kinds(Layout.contiguous((3, 100)).narrow(1, 0, 4)) == ("slice",)
    # The dense base may be 3-D: a middle dim stepped by 2.
    assert kinds(Layout((2, 2, 10), (30, 20, 1))) == ("strided_slice",)
    assert str(Classification(*([False] * 8))) == "none"


@st.composite
def row_slices(draw):
    """Narrows and selects of a dense tensor: slices without steps."""
    shape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    lay = Layout.contiguous(shape)
    for _ in range(draw(st.integers(0, 4))):
        if not lay.ndim:
            break
        d = draw(st.integers(0, lay.ndim - 1))
        n = lay.shape[d]
        if draw(st.booleans()):
            start = draw(st.integers(0, n - 1))
            lay = lay.narrow(d, start, draw(st.integers(1, n - start)))
        else:
            lay = lay.select(d, draw(st.integers(0, n - 1)))
    return lay


@given(row_slices())
def test_narrow_and_select_only_never_transpose_or_overlap(lay):
    c = lay.classify()
    assert not (c.transpose or c.broadcast or c.flip or c.overlapping)
    assert (c.slice or c.strided_slice) == (not c.contiguous)
    assert lay.supports_reduce_fast_path() == (1 <= lay.ndim <= 4)


# ---------------------------------------------------------------------------
# the reduce fast path
# ---------------------------------------------------------------------------


@given(layouts(max_rank=5, max_size=5, max_stride=12))
@settings(max_examples=100)
def test_reduce_fast_path_implies_what_it_promises(lay):
    ok = supports_reduce_fast_path(lay)
    assert ok == lay.supports_reduce_fast_path()
    if ok:
        assert 1 <= lay.ndim <= 4 and all(s > 0 for s in lay.stride)
        assert not lay.classify().transpose
        assert all(x >= y for x, y in zip(lay.stride, lay.stride[1:]))
        if lay.ndim <= 2:  # beyond two dims the pairwise test misses overlap: see the next test
            assert brute_non_overlapping(lay)


def test_reduce_fast_path_admits_overlap_from_three_dims():
    """CANN's check compares each dim only with the next outer one, so (2,2,2):(3,2,1), whose
    two inner dims together reach the outer stride (offset 3 is read twice), passes it.
    The exact analysis says what the predicate does not."""
    lay = Layout((2, 2, 2), (3, 2, 1))
    assert supports_reduce_fast_path(lay)
    assert not brute_non_overlapping(lay) and not lay.is_non_overlapping()


def test_reduce_fast_path_examples():
    for shape in [(7,), (2, 3), (2, 1, 3), (4, 3, 2, 5), (0, 3)]:
        assert supports_reduce_fast_path(Layout.contiguous(shape))
    assert not supports_reduce_fast_path(Layout.contiguous(()))  # rank 0
    assert not supports_reduce_fast_path(Layout.contiguous((2, 2, 2, 2, 2)))  # rank 5
    assert not supports_reduce_fast_path(Layout((3, 4), (4, 0)))  # last stride 0
    assert not supports_reduce_fast_path(Layout((3, 4), (1, 3)))  # transpose
    assert not supports_reduce_fast_path(Layout((3, 4), (2, 1)))  # overlapping rows
    assert not supports_reduce_fast_path(Layout((3, 4), (-10, 1), 20))  # flip
    assert not supports_reduce_fast_path(Layout((1, 4), (1, 1)))  # size-1 dims get no exemption
    assert supports_reduce_fast_path(Layout((1, 4), (4, 1)))


# ---------------------------------------------------------------------------
# decomposition
# ---------------------------------------------------------------------------


def check_replay(lay: Layout):
    out = decompose(lay)
    if out is None:
        return None
    base, steps = out
    got = replay(base, steps)
    assert equivalent(got, lay), (lay, base, steps, got)
    assert all(isinstance(s, (Offset, Slice, StridedSlice, Permute, Broadcast, Flip, Reshape)) for s in steps)
    if lay.numel:
        lo, hi = lay.span()
        assert 0 <= lo and hi <= prod(base)
    return out


@given(view_chains(max_ops=6, max_rank=4))
@settings(max_examples=80)
def test_views_of_a_dense_tensor_always_decompose(chain):
    ops, lay, _, _ = chain
    assert check_replay(lay) is not None, (ops, lay)


@given(layouts(max_size=4, max_stride=9, min_offset=-10))
@settings(max_examples=100)
def test_random_layouts_decompose_or_overlap(lay):
    out = check_replay(lay)
    if lay.numel == 0:
        assert out == (lay.shape, [])
        return
    # Broadcast dims are a step of their own; the rest must not overlap.
    kept = [d for d in range(lay.ndim) if lay.stride[d] or lay.shape[d] <= 1]
    moving = Layout([lay.shape[d] for d in kept], [lay.stride[d] for d in kept], lay.offset)
    if not brute_non_overlapping(moving) or lay.span()[0] < 0:
        assert out is None
    elif out is None:
        assert "strided_slice" in lay.classify().kinds  # only interleaved dims refuse, e.g. (2,3):(6,4)


def test_decompose_examples():
    assert decompose(Layout((2, 3), (6, 4))) is None
    assert decompose(Layout((3, 3), (1, 1))) is None
    assert decompose(Layout((3,), (1,), -1)) is None
    assert decompose(Layout((0, 5), (99, -3), 7)) == ((0, 5), [])
    assert decompose(Layout((), (), 5)) == ((6,), [Slice(0, 5, 6), Reshape(())])
    # A window that straddles base rows needs a view offset.
    assert decompose(Layout((2, 3), (10, 1), 8)) == ((3, 10), [Slice(0, 0, 2), Slice(1, 0, 3), Offset(8)])
    # (4,3):(1,4): sorted by stride it is (3,4):(4,1), one dense run of 12.
    assert decompose(Layout.contiguous((3, 4)).transpose(0, 1)) == ((12,), [Reshape((3, 4)), Permute((1, 0))])
    base, steps = decompose(Layout.contiguous((1, 4)).broadcast_as((3, 4)).flip(1))
    assert base == (4,) and steps == [Flip((0,)), Reshape((1, 4)), Broadcast((3, 4))]


def test_equivalent_ignores_only_unused_strides():
    assert equivalent(Layout((1, 3), (5, 1), 2), Layout((1, 3), (-7, 1), 2))
    assert equivalent(Layout((0, 3), (5, 1), 2), Layout((0, 3), (1, 9), 0))
    assert not equivalent(Layout((2, 3), (5, 1), 2), Layout((2, 3), (4, 1), 2))
    assert not equivalent(Layout((3,), (1,), 2), Layout((3,), (1,), 3))
    assert not equivalent(Layout((3,), (1,)), Layout((1, 3), (3, 1)))


# ---------------------------------------------------------------------------
# errors: type and a message naming the op
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, parts",
    [
        (lambda: span((3,)), ShapeError, ["span", "expected a Layout", "tuple"]),
        (lambda: validate("x", 3), ShapeError, ["validate", "expected a Layout"]),
        (lambda: validate(SEED1, 2.5), ShapeError, ["validate", "integer buffer length", "2.5"]),
        (lambda: validate(SEED1, 76), LayoutBoundsError,
         ["validate", "(6, 5)", "(10, 1)", "offset 22", "[22, 77)", "76"]),
        (lambda: is_non_overlapping(None), ShapeError, ["is_non_overlapping", "expected a Layout"]),
        (lambda: is_non_overlapping(SEED1, max_work=0), ShapeError, ["is_non_overlapping", "max_work", ">= 1"]),
        (lambda: is_non_overlapping(SEED1, max_work="x"), ShapeError, ["is_non_overlapping", "integer max_work"]),
        (lambda: may_overlap(SEED1, [1]), ShapeError, ["may_overlap", "expected a Layout"]),
        (lambda: overlaps(1, SEED1), ShapeError, ["overlaps", "expected a Layout"]),
        (lambda: overlaps(SEED1, SEED2, max_work=-3), ShapeError, ["overlaps", "max_work", "-3"]),
        (lambda: classify(object()), ShapeError, ["classify", "expected a Layout"]),
        (lambda: classify(SEED1, max_work=0), ShapeError, ["classify", "max_work"]),
        (lambda: supports_reduce_fast_path((6, 5)), ShapeError, ["supports_reduce_fast_path", "expected a Layout"]),
        (lambda: decompose("(6,5):(10,1)"), ShapeError, ["decompose", "expected a Layout"]),
        (lambda: equivalent(SEED1, None), ShapeError, ["equivalent", "expected a Layout"]),
        (lambda: replay((4,), ["slice"]), ShapeError, ["replay", "expected a step", "'slice'"]),
        (lambda: replay((4,), [Slice(0, 2, 5)]), StridedIndexError, ["Slice", "[2, 5)", "size 4"]),
        (lambda: replay((4,), [Slice(1, 0, 1)]), StridedIndexError, ["Slice", "dim 1", "(4,)"]),
        (lambda: replay((4,), [StridedSlice(0, 3, 1, 2)]), StridedIndexError, ["StridedSlice", "[3, 1)"]),
        (lambda: replay((4,), [StridedSlice(0, 0, 4, 0)]), ShapeError, ["StridedSlice", "step", "got 0"]),
        (lambda: replay((4, 5), [Slice(1, 0, 3), Reshape((12,))]), ShapeError, ["Reshape", "(12,)"]),
        (lambda: replay((4,), [Offset(1)]), LayoutBoundsError, ["replay", "[1, 5)", "(4,)", "4 elements"]),
        (lambda: replay((4,), [Permute((1,))]), StridedError, ["permute"]),
    ],
)
def test_error_paths(call, exc, parts):
    with pytest.raises(exc) as info:
        call()
    for part in parts:
        assert part in str(info.value), (part, str(info.value))
