"""Whether layouts overlap, exactly: within one layout (``is_non_overlapping``) and between
two over one buffer (``may_overlap``, the extent test; ``overlaps``, exact).

Pure integers, no numpy.  The exact questions are bounded knapsack problems, NP-hard in
general (NumPy's ``may_share_memory`` meets the same wall).  They are answered by exact
reductions first, then by an exact search whose work is capped; past the cap
``TooHardError`` is raised instead of a guess.  See ``is_non_overlapping`` for the
algorithm and the bound.  ``strided.layout.analysis`` re-exports the three and uses them
in ``classify``.
"""

from __future__ import annotations

import operator
from math import gcd, prod

from ..core.errors import ShapeError, TooHardError
from .layout import Layout

__all__ = ["is_non_overlapping", "may_overlap", "overlaps", "check_layout", "check_work", "DEFAULT_MAX_WORK",
           "MAX_PASSES"]

#: Work cap of the exact searches (see ``is_non_overlapping``): about a second.
DEFAULT_MAX_WORK = 1 << 20
#: Cap on reduction passes; each pass is O(rank) integer operations.
MAX_PASSES = 4096
# A bitset word is far cheaper than a set insertion (measured ~100x); one work
# unit is one insertion, or this many 64-bit words through a shift and an or.
_WORDS_PER_UNIT = 100
# Bitsets wider than this many words (32 MiB) are not built whatever the cap.
_MAX_WORDS = 1 << 22


def check_layout(op: str, layout) -> Layout:
    if not isinstance(layout, Layout):
        raise ShapeError(f"{op}: expected a Layout, got {type(layout).__name__} {layout!r}")
    return layout


def check_work(op: str, max_work) -> int:
    try:
        w = operator.index(max_work)
    except TypeError:
        raise ShapeError(f"{op}: expected an integer max_work, got {max_work!r}") from None
    if w < 1:
        raise ShapeError(f"{op}: max_work must be >= 1, got {w}")
    return w


# ---------------------------------------------------------------------------
# exact overlap: bounded linear Diophantine problems
# ---------------------------------------------------------------------------


def _too_hard(op: str, what: str, cost: int, max_work: int):
    raise TooHardError(
        f"{op}: deciding {what} exactly needs about {cost} work units after reduction, "
        f"over the bound max_work={max_work}; the answer is unknown (treat it as 'may overlap')"
    )


def _balanced_split(weights: list[int]) -> tuple[list[int], list[int]]:
    """Indices split in two with products as even as a greedy pass makes them."""
    left, right, pl, pr = [], [], 1, 1
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        if pl <= pr:
            left.append(i)
            pl *= weights[i]
        else:
            right.append(i)
            pr *= weights[i]
    return left, right


def _minkowski(mask: int, a: int, n: int) -> int:
    """The bitset ``mask + {0, a, .., (n-1)a}`` in O(log n) shifts."""
    have = 1
    while have * 2 <= n:
        mask |= mask << (have * a)
        have *= 2
    if have < n:
        # A_have and A_have shifted by n-have cover A_n because n-have <= have.
        mask |= mask << ((n - have) * a)
    return mask


def _enum_injective(items) -> bool:
    """Whether ``i -> sum i_k a_k`` is injective on the box, by listing the sums."""
    sums = {0}
    for n, a in items:
        nxt = {s + t * a for s in sums for t in range(n)}
        if len(nxt) != len(sums) * n:
            return False
        sums = nxt
    return True


def _bitset_injective(items) -> bool:
    mask, count = 1, 1
    for n, a in sorted(items, key=lambda it: it[1]):
        mask = _minkowski(mask, a, n)
        count *= n
        if mask.bit_count() != count:
            return False
    return True


def _box_sums(items) -> set[int]:
    """Every ``sum x_k a_k`` with ``|x_k| <= n_k - 1``."""
    sums = {0}
    for n, a in items:
        sums = {s + t * a for s in sums for t in range(1 - n, n)}
    return sums


def _mitm_injective(items) -> bool:
    """Meet in the middle: a collision is one inside a half, or nonzero half
    differences that cancel.  Difference sets are symmetric, so positive parts suffice."""
    li, ri = _balanced_split([2 * n - 1 for n, _ in items])
    left, right = [items[i] for i in li], [items[i] for i in ri]
    if not (_enum_injective(left) and _enum_injective(right)):
        return False
    dl = {v for v in _box_sums(left) if v > 0}
    return not any(v > 0 and v in dl for v in _box_sums(right))


def _homogeneous_costs(items) -> dict[str, int]:
    reach = sum((n - 1) * a for n, a in items)
    words = (reach + 1) // 64 + 1
    li, ri = _balanced_split([2 * n - 1 for n, _ in items])
    mitm = sum(prod(2 * items[i][0] - 1 for i in half) + prod(items[i][0] for i in half) for half in (li, ri))
    bitset = sum(n.bit_length() + 1 for n, _ in items) * words // _WORDS_PER_UNIT + 1
    return {
        "bitset": bitset if words <= _MAX_WORDS else float("inf"),
        "enumerate": prod(n for n, _ in items),
        "mitm": mitm,
    }


def _exact_collision(op: str, what: str, items, max_work: int, method: str | None = None) -> bool:
    """Exact search for a collision, by the cheapest of three methods, within ``max_work``."""
    costs = _homogeneous_costs(items)
    if method is None:
        method = min(costs, key=costs.get)
        if costs[method] > max_work:
            _too_hard(op, what, costs[method], max_work)
    injective = {"bitset": _bitset_injective, "enumerate": _enum_injective, "mitm": _mitm_injective}[method]
    return not injective(items)


def _gcds_of_others(values: list[int]) -> list[int]:
    """For each k, the gcd of every value but ``values[k]`` (from prefix and suffix gcds)."""
    pre, suf = [0], [0]
    for v in values:
        pre.append(gcd(pre[-1], v))
    for v in reversed(values):
        suf.append(gcd(suf[-1], v))
    suf.reverse()
    return [gcd(pre[k], suf[k + 1]) for k in range(len(values))]


def _collision_exists(op: str, what: str, items, max_work: int) -> bool:
    """Is there a nonzero integer x with ``|x_k| <= n_k - 1`` and ``sum x_k a_k == 0``?

    ``items`` are ``(n_k, a_k)`` with ``n_k >= 2`` and ``a_k > 0``.  Exact."""
    items = list(items)
    for _ in range(MAX_PASSES):
        if len(items) <= 1:
            return False
        g = gcd(*(a for _, a in items))
        if g > 1:
            items = [(n, a // g) for n, a in items]
        # Box tightening: |x_k| a_k is cancelled by the other terms, so it is at
        # most their reach.  A dim whose stride beats all others' reach drops.
        reach = sum((n - 1) * a for n, a in items)
        tight = [(min(n - 1, (reach - (n - 1) * a) // a) + 1, a) for n, a in items]
        if tight != items:
            items = [(n, a) for n, a in tight if n > 1]
            continue
        # Divisibility: with gcd 1, x_k * a_k == 0 modulo g_k = gcd(other strides)
        # forces g_k | x_k; substitute x_k = g_k * y_k.
        changed = False
        new = []
        for (n, a), gk in zip(items, _gcds_of_others([a for _, a in items])):
            if gk > 1:
                changed = True
                n, a = (n - 1) // gk + 1, a * gk
            if n > 1:
                new.append((n, a))
        items = new
        if not changed:
            break
    if len(items) <= 1:
        return False
    items.sort(key=lambda it: it[1])
    # Direct witnesses: a stride that is a small multiple of another one.
    for i, (ni, ai) in enumerate(items):
        for nj, aj in items[i + 1 :]:
            if aj % ai == 0 and aj // ai <= ni - 1:
                return True
    # Pigeonhole: more indices than offsets in reach.
    if prod(n for n, _ in items) > sum((n - 1) * a for n, a in items) + 1:
        return True
    return _exact_collision(op, what, items, max_work)


def ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _exact_target(op: str, what: str, terms, target: int, max_work: int, method: str | None = None) -> bool:
    """Exact search for ``sum z_k a_k == target``, ``0 <= z_k <= m_k``, ``a_k > 0``."""
    reach = sum(m * a for m, a in terms)
    if not 0 <= target <= reach:
        return False
    words = (reach + 1) // 64 + 1
    li, ri = _balanced_split([m + 1 for m, _ in terms])
    bitset = sum((m + 1).bit_length() + 1 for m, _ in terms) * words // _WORDS_PER_UNIT + 1
    costs = {
        "bitset": bitset if words <= _MAX_WORDS else float("inf"),
        "mitm": sum(prod(terms[i][0] + 1 for i in half) for half in (li, ri)),
    }
    if method is None:
        method = min(costs, key=costs.get)
        if costs[method] > max_work:
            _too_hard(op, what, costs[method], max_work)
    if method == "bitset":
        mask = 1
        for m, a in terms:
            mask = _minkowski(mask, a, m + 1)
        return bool((mask >> target) & 1)
    left = {0}
    for i in li:
        m, a = terms[i]
        left = {s + t * a for s in left for t in range(m + 1)}
    right = {0}
    for i in ri:
        m, a = terms[i]
        right = {s + t * a for s in right for t in range(m + 1)}
    return any(target - r in left for r in right)


def _merged(terms) -> list[tuple[int, int]]:
    """Terms with equal coefficients as one: ``z1*c + z2*c`` takes every value ``w*c``, ``0 <= w <= m1+m2``."""
    by_coef: dict[int, int] = {}
    for m, c in terms:
        if m > 0:
            by_coef[c] = by_coef.get(c, 0) + m
    return [(m, c) for c, m in by_coef.items()]


def _greedy_witness(terms, target: int) -> bool:
    """True only with a solution in hand: the largest coefficients first, as many as fit."""
    for m, c in sorted(terms, key=lambda t: -t[1]):
        target -= min(m, target // c) * c
    return target == 0


def _target_exists(op: str, what: str, terms, target: int, max_work: int) -> bool:
    """Is there an integer z with ``0 <= z_k <= m_k`` and ``sum z_k c_k == target``?

    ``terms`` are ``(m_k, c_k)`` with ``c_k != 0`` of either sign.  Exact."""
    pos = []
    for m, c in terms:
        if c < 0:
            # z -> m - z makes the coefficient positive.
            target -= c * m
            c = -c
        pos.append((m, c))
    terms = _merged(pos)
    for _ in range(MAX_PASSES):
        if not terms:
            return target == 0
        g = gcd(*(c for _, c in terms))
        if target % g:
            return False
        if g > 1:
            terms = [(m, c // g) for m, c in terms]
            target //= g
        reach = sum(m * c for m, c in terms)
        if not 0 <= target <= reach:
            return False
        # Bound propagation: z_k * c_k must leave the others a remainder they reach.
        changed = False
        shifted = []
        for m, c in terms:
            rest = reach - m * c
            zlo, zhi = max(0, ceil_div(target - rest, c)), min(m, target // c)
            if zlo > zhi:
                return False
            changed |= zlo > 0 or zhi < m
            shifted.append((zlo, zhi, c))
        if changed:
            target -= sum(zlo * c for zlo, _, c in shifted)
            terms = _merged((zhi - zlo, c) for zlo, zhi, c in shifted)
            continue
        # Divisibility: modulo g_k = gcd(other coefficients) only z_k c_k is
        # left, so z_k is fixed modulo g_k (c_k is invertible: the gcd is 1).
        new = []
        for (m, c), gk in zip(terms, _gcds_of_others([c for _, c in terms])):
            if gk > 1:
                r = (target * pow(c, -1, gk)) % gk
                if r > m:
                    return False
                changed = True
                target -= r * c
                m, c = (m - r) // gk, c * gk
            new.append((m, c))
        terms = _merged(new)
        if not changed:
            break
    if not terms:
        return target == 0
    pos = sorted(terms, key=lambda t: t[1])
    # When each coefficient fits inside the reach of the smaller ones and all
    # are multiples of the smallest, the sums fill an arithmetic progression.
    a0, reach, filled = pos[0][1], 0, True
    for m, a in pos:
        if a % a0 or a > reach + a0:
            filled = False
            break
        reach += m * a
    if filled:
        return 0 <= target <= reach and target % a0 == 0
    if _greedy_witness(pos, target):
        return True
    return _exact_target(op, what, pos, target, max_work)


def _moving_dims(layout: Layout) -> list[tuple[int, int]]:
    """``(size, |stride|)`` of the dims that move: size > 1 and stride != 0."""
    return [(n, abs(s)) for n, s in zip(layout.shape, layout.stride) if n > 1 and s != 0]


def is_non_overlapping(layout: Layout, *, max_work: int = DEFAULT_MAX_WORK) -> bool:
    """True when no two distinct indices reach the same offset.  Exact.

    Empty layouts and size-1 dims never overlap; a size > 1 dim with stride 0
    always does.  Otherwise two indices collide exactly when some nonzero
    integer x with ``|x_k| <= n_k - 1`` has ``sum x_k |s_k| == 0``; the
    algorithm:

    1. Exact reductions, repeated to a fixed point (at most ``MAX_PASSES``
       passes of O(rank) gcds and products): divide by the gcd of the strides;
       tighten ``|x_k| <= reach of the other dims / |s_k|`` (a dim whose
       stride exceeds the reach of all the others drops out: with every dim so,
       this is the "each stride beats the reach of the smaller ones" fast
       yes); substitute ``x_k = g_k * y_k`` where ``g_k`` is the gcd of the
       other strides (``x_k`` must be a multiple of it).  Every step keeps the
       solution set, and none makes an integer larger.
    2. Exact witnesses: a stride that is a multiple ``t * s_j`` with
       ``t <= n_j - 1`` (equal strides included) overlaps; more indices than
       offsets in reach overlaps (pigeonhole).
    3. An exact search over what is left, the cheapest of: a bitset of reachable
       sums (Python int, O(log n) shifts per dim; cost ~ sum(log n_k) * reach
       / 64 words), listing all ``prod(n_k)`` sums, or meet in the middle on the
       difference vectors (~ 2 * sqrt(prod(2 n_k - 1))).

    The bound: step 1 is at most ``MAX_PASSES`` passes of O(rank) operations on
    integers no larger than the inputs; step 2 is O(rank**2); step 3 runs only
    when its estimated cost is at most ``max_work`` units (one unit = one set
    insertion or 100 bitset words, bitsets at most 32 MiB; the default
    2**20 is about a second),
    otherwise TooHardError is raised.  The answer is never a guess.
    """
    check_layout("is_non_overlapping", layout)
    max_work = check_work("is_non_overlapping", max_work)
    if layout.numel == 0:
        return True
    if any(n > 1 and s == 0 for n, s in zip(layout.shape, layout.stride)):
        return False
    what = f"whether shape {layout.shape} stride {layout.stride} overlaps itself"
    return not _collision_exists("is_non_overlapping", what, _moving_dims(layout), max_work)


def may_overlap(a: Layout, b: Layout) -> bool:
    """Extent test: both layouts non-empty and their spans intersect.

    False proves that no element is shared; True proves nothing (see ``overlaps``)."""
    check_layout("may_overlap", a)
    check_layout("may_overlap", b)
    if a.numel == 0 or b.numel == 0:
        return False
    lo_a, hi_a = a.span()
    lo_b, hi_b = b.span()
    return lo_a < hi_b and lo_b < hi_a


def overlaps(a: Layout, b: Layout, *, max_work: int = DEFAULT_MAX_WORK) -> bool:
    """Exact: is there a buffer offset reached by both layouts (over one buffer)?

    With every stride made positive (a layout's set of offsets does not depend
    on the signs; its lowest offset is the span's low end), the question is
    whether ``sum i_k a_k - sum j_k b_k == lo_b - lo_a`` has a solution with
    ``0 <= i_k < n_k`` and ``0 <= j_k < m_k``.  All coefficients are made
    positive (``j -> m - 1 - j``) and equal ones merged (their sum takes every
    value in range), then exact reductions to a fixed point (gcd, interval
    propagation, divisibility; at most ``MAX_PASSES`` O(rank) passes), an
    arithmetic-progression closed form, a greedy witness (only ever proves
    True), and last the cheaper of a bitset over the sums and a meet in the
    middle, run only within ``max_work`` units (as ``is_non_overlapping``);
    TooHardError past it.
    """
    check_layout("overlaps", a)
    check_layout("overlaps", b)
    max_work = check_work("overlaps", max_work)
    if not may_overlap(a, b):
        return False
    dims_a, dims_b = _moving_dims(a), _moving_dims(b)
    if a.span()[0] == b.span()[0] and sorted(dims_a) == sorted(dims_b):
        return True  # the same set of offsets (a layout against itself, or its flip)
    terms = [(n - 1, s) for n, s in dims_a] + [(n - 1, -s) for n, s in dims_b]
    what = f"whether {a} and {b} share an element"
    return _target_exists("overlaps", what, terms, b.span()[0] - a.span()[0], max_work)
