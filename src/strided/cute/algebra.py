"""The CuTe layout algebra, exact, on pure Python integers.

Every operation either returns a layout with its defining property holding at
every point, or raises a :class:`~strided.errors.ShapeError` (a StridedError,
hence a ValueError) whose message names the operation and its layouts.  The
reference is C++ CuTe (CUTLASS 4.x) with static integers; where that code
would return a wrong layout (it checks divisibility only with static
integers, and never checks that the modes of a tiler stay apart inside the
layout they index) we raise instead.

Conventions shared by all operations:

* A layout is a function of its 1-D index, colexicographic (first mode
  fastest).  Beyond its size a layout continues along its last flat mode
  (C++ ``coalesce_x``); composition relies on this, as in CuTe.
* A *tiler* is a Layout, an int ``n`` (the layout ``n:1``), None (CuTe's
  ``_``: leave that mode alone) or a tuple of tilers applied mode by mode.
* On a :class:`ComposedLayout` ``A o O o B`` the operations that only
  re-index its domain (coalesce, filter, composition on the right, the
  divides and products) act on ``B`` and keep ``A o O``, as CuTe defines
  them; complement looks at ``B``; the inverses need a swizzle outside and
  offset 0.  Anything else on a composed layout raises.
"""

from __future__ import annotations

from ..core.errors import ShapeError, StridedError
from .int_tuple import (Static, ceil_div, format_int_tuple, is_int, is_tuple, leaves, normalize_int_tuple, one_like,
                        prefix_product, product, unflatten, zero_like)
from .layout import Layout
from .swizzle import ComposedLayout, Swizzle, make_swizzle

__all__ = [
    "coalesce",
    "filter",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
]


# ---------------------------------------------------------------------------
# Plumbing: argument coercion, error naming, mode-wise application
# ---------------------------------------------------------------------------


def _fmt(x) -> str:
    if isinstance(x, (Layout, Swizzle, ComposedLayout)):
        return str(x)
    if x is None:
        return "_"
    if is_tuple(x):
        return "(" + ",".join(_fmt(e) for e in x) + ")"
    return str(x) if is_int(x) else repr(x)


def _named(op: str, fn, *args):
    """Run ``fn(*args)``; prefix any StridedError with ``op(args...)``.

    Inner public operations prefix their own name too, so a failure deep in a
    divide reads ``logical_divide(A, B): composition(A', B'): <reason>``.
    """
    try:
        return fn(*args)
    except StridedError as e:
        shown = ", ".join(_fmt(a) for a in args if a is not _MISSING)
        raise type(e)(f"{op}({shown}): {e}") from e


_MISSING = object()


def _inner(fn, a, *rest):
    """``A o O o fn(B, ...)`` for a composed ``a`` (CuTe's rule for re-indexing ops)."""
    return a.with_inner(fn(a.layout_b, *rest))


# The largest domain on which a layout o swizzle rewrite is checked point by point.
MAX_CHECKED = 1 << 22


def _as_layout(x, what: str = "layout") -> Layout:
    """A Layout, or a shape (int / tuple of ints) taken as its compact layout."""
    if isinstance(x, Layout):
        return x
    if is_int(x) or is_tuple(x):
        return Layout(normalize_int_tuple(x, what))
    raise ShapeError(f"expected a cute Layout (or a shape) as the {what}, got {x!r}")


def _as_tiler_layout(t) -> Layout:
    """A non-tuple tiler as a Layout: an int ``n`` is ``n:1``."""
    if isinstance(t, Layout):
        return t
    if is_int(t):
        return Layout(t)
    raise ShapeError(f"a tiler is a Layout, an int, None or a tuple of tilers, got {t!r}")


def _concat(modes) -> Layout:
    """The layout whose modes are ``modes`` (C++ ``make_layout(layouts...)``)."""
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _check_tiler_rank(layout: Layout, tiler: tuple):
    if len(tiler) > layout.rank:
        raise ShapeError(
            f"the tiler {_fmt(tiler)} has {len(tiler)} modes but the layout {layout} has rank {layout.rank}"
        )


def _by_mode(layout: Layout, tiler: tuple, fn, keep_rest: bool) -> Layout:
    """Apply ``fn(mode_i, tiler_i)`` to the leading modes of ``layout``.

    ``keep_rest`` keeps the modes past the tiler unchanged (C++
    ``transform_layout``, used by coalesce/filter/divide/product);
    composition instead drops them, as C++ CuTe does ("drop any modes of lhs
    that aren't hit by rhs") and unlike pycute.
    """
    _check_tiler_rank(layout, tiler)
    modes = [fn(layout[i], t) for i, t in enumerate(tiler)]
    if keep_rest:
        modes += [layout[i] for i in range(len(tiler), layout.rank)]
    return _concat(modes)


def _mode_wise(whole, what: str = "layout"):
    """An operation CuTe applies mode by mode under a tuple profile or tiler (the modes past
    it kept), to a composed layout's inner layout, and as ``whole(layout, arg)`` otherwise
    (``what`` names the layout operand in errors)."""
    def op(layout, arg=None) -> Layout:
        if isinstance(layout, ComposedLayout):
            return _inner(op, layout, arg)
        layout = _as_layout(layout, what)
        if is_tuple(arg):
            return _by_mode(layout, arg, op, keep_rest=True)
        return whole(layout, arg)

    return op


# ---------------------------------------------------------------------------
# Coalesce and filter
# ---------------------------------------------------------------------------


def _coalesce_flat(shapes, strides, ref) -> Layout:
    """Merge adjacent flat modes: drop size-1 modes, join s0:d0 s1:(s0*d0)."""
    out_s, out_d = [], []
    for s, d in zip(shapes, strides):
        if s == 1:
            continue
        if out_s and out_s[-1] * out_d[-1] == d:
            out_s[-1] = out_s[-1] * s
        else:
            out_s.append(s)
            out_d.append(d)
    if not out_s:
        return Layout(one_like(ref), zero_like(ref))
    if len(out_s) == 1:
        return Layout(out_s[0], out_d[0])
    return Layout(tuple(out_s), tuple(out_d))


def _coalesce_whole(layout: Layout, profile) -> Layout:
    return _coalesce_flat(leaves(layout.shape), leaves(layout.stride), layout.shape)


_coalesce = _mode_wise(_coalesce_whole)


def coalesce(layout, profile=None) -> Layout:
    """The same function with the fewest modes: depth <= 1, same size.

    ``coalesce((2,(1,6)):(1,(6,2))) == 12:1``.  With a tuple ``profile`` each
    top-level mode is coalesced on its own (C++ ``coalesce(layout, profile)``),
    keeping the rank.  Unlike C++ (which can only merge modes it can prove
    mergeable at compile time), merging uses the values, so static and
    dynamic layouts coalesce alike; the result is static where its inputs were.
    """
    return _named("coalesce", _coalesce, layout, profile if profile is not None else _MISSING)


def _filter_whole(layout: Layout, profile) -> Layout:
    shapes = [
        one_like(s, d) if d == 0 else s
        for s, d in zip(leaves(layout.shape), leaves(layout.stride))
    ]
    return _coalesce_flat(shapes, leaves(layout.stride), layout.shape)


_filter = _mode_wise(_filter_whole)


def filter(layout, profile=None) -> Layout:  # CuTe's name
    """Coalesce after dropping stride-0 modes: the distinct-offset skeleton."""
    return _named("filter", _filter, layout, profile if profile is not None else _MISSING)


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------


def _lhs_digits(a: Layout):
    """The mixed-radix digits through which composition reads ``a``.

    Returns ``(radix, dstride)``: ``a(x) = sum_k digit_k(x) * dstride[k]``
    where ``x`` is written with radices ``radix[0], radix[1], ...`` and a last
    digit that is unbounded.  This is C++ ``coalesce_x``: size-1 and mergeable
    modes are folded away (so no carry between two digits can leave the
    offset unchanged), but the last flat mode keeps its stride even when its
    extent is 1, because that is where ``a`` continues past its size.
    """
    shapes, strides = leaves(a.shape), leaves(a.stride)
    if not shapes:  # the rank-0 layout ():() is the constant 0
        return [], [zero_like(a.stride)]
    last_d = strides[-1]
    out = []
    for s, d in zip(shapes[:-1], strides[:-1]):
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1] = (out[-1][0] * s, out[-1][1])
        else:
            out.append((s, d))
    # The last mode is unbounded: fold in the mode before it when it continues it.
    if out and out[-1][0] * out[-1][1] == last_d:
        last_d = out.pop()[1]
    return [s for s, _ in out], [d for _, d in out] + [last_d]


def _unit(*xs):
    """A 1 that is static only when every input is."""
    return Static(1) if all(isinstance(x, Static) for x in xs) else 1


def _compose_leaf(radix, dstride, s, e, usage):
    """Compose the digits of the lhs with one flat tiler mode ``s:e``.

    Returns the (shape, stride) of ``j -> lhs(j * e)`` for ``0 <= j < s`` and
    records in ``usage[k]`` the largest value this mode puts into digit ``k``
    so that the caller can check that different modes never carry into each
    other.
    """
    n = len(dstride)
    if e == 0:
        # Every index maps to lhs(0) = 0 (C++'s static stride-0 shortcut).
        return s, e
    if n == 1:
        # A single unbounded mode: the lhs is linear (C++'s integral shortcut).
        return s, e * dstride[0]
    if s == 1:
        # One point, lhs(0) = 0; the stride is C++'s (the stride divided
        # through the lhs modes), kept only so that printing matches.
        r = abs(e)
        for a in radix:
            r = ceil_div(r, a)
        return s, (r if e > 0 else -r) * dstride[-1]
    if e < 0:
        raise ShapeError(
            f"the tiler mode {s}:{e} has a negative stride: it reads the layout at negative "
            f"indices, where a layout is not defined"
        )
    # Stride divisibility: walk e through the digits it skips entirely.
    r, m = e, 0
    while m < n - 1 and r % radix[m] == 0:
        r = r // radix[m]
        m += 1
    if m == n - 1:
        return s, r * dstride[m]
    a = radix[m]
    if a % r != 0:
        if (s - 1) * r < a:
            # The mode stays inside one digit: no wrap, a single exact mode.
            usage[m].append((s - 1) * r)
            return s, r * dstride[m]
        raise ShapeError(
            f"stride divisibility condition: the tiler mode {s}:{e} steps by {r} through a mode "
            f"of extent {a}, and neither divides the other"
        )
    # Shape divisibility: take s elements, digit by digit.
    out_s, out_d = [], []
    count, rest = a // r, s
    while True:
        if m == n - 1:
            out_s.append(rest)
            out_d.append(r * dstride[m])
            break
        if rest <= count:
            out_s.append(rest)
            out_d.append(r * dstride[m])
            usage[m].append((rest - 1) * r)
            break
        if rest % count != 0:
            raise ShapeError(
                f"shape divisibility condition: the tiler mode {s}:{e} needs {rest} more elements "
                f"where {count} remain in a mode of extent {radix[m]}, and {count} does not divide "
                f"{rest}"
            )
        out_s.append(count)
        out_d.append(r * dstride[m])
        usage[m].append((count - 1) * r)
        rest = rest // count
        r = _unit(r, radix[m])
        m += 1
        count = radix[m] if m < n - 1 else None
    if len(out_s) == 1:
        return out_s[0], out_d[0]
    return tuple(out_s), tuple(out_d)


def _compose_layouts(a: Layout, b: Layout) -> Layout:
    radix, dstride = _lhs_digits(a)
    usage = [[] for _ in radix]
    shapes, strides = [], []
    for s, e in zip(leaves(b.shape), leaves(b.stride)):
        rs, rd = _compose_leaf(radix, dstride, s, e, usage)
        shapes.append(rs)
        strides.append(rd)
    # Right-distributivity a o (b0, b1) = (a o b0, a o b1) holds only when the
    # offsets that different tiler modes put into one digit of a never sum
    # past its extent: a carry would move to the next digit of a, whose stride
    # differs (a is coalesced).  C++ CuTe skips this check and returns a wrong
    # layout, e.g. for (6,2):(1,7) o (3,2):(2,3).
    for m, used in enumerate(usage):
        if len(used) > 1 and sum(used) >= radix[m]:
            raise ShapeError(
                f"the tiler's modes overlap inside a mode of extent {radix[m]} "
                f"(their largest offsets there add up to {sum(used)}); indices of the tiler "
                f"carry into the next mode, so no layout compatible with the tiler equals it"
            )
    return Layout(unflatten(shapes, b.shape), unflatten(strides, b.stride))


def _compose_layout_swizzle(a: Layout, sw: Swizzle, points=None):
    """``a o sw`` rewritten as ``sw' o a`` (C++: the swizzle of the bits ``a`` moves).

    ``sw'`` reads the bits ``a(yyy_msk)`` and flips ``a(zzz_msk)``; that is
    the same function only when ``a`` carries each bit of its index to one
    bit of its offset, so the rewrite is checked at every point where it will
    be evaluated: ``points`` (a Layout whose offsets are those points), by
    default every index of ``a``.
    """
    if sw.is_identity():
        return a
    new = make_swizzle(a(sw.yyy_msk), a(sw.zzz_msk))
    result = ComposedLayout(new, Static(0), a)
    points = a if points is None else points
    if points.size > MAX_CHECKED:
        raise ShapeError(
            f"the layout {points} has {points.size} points, more than the {MAX_CHECKED} at which "
            f"{a} o {sw} = {result} is checked"
        )
    for j in range(points.size):
        i = points(j) if points is not a else j
        if result(i) != a(sw(i)):
            raise ShapeError(
                f"{a} does not carry the bits of {sw} to bits of its offsets (at index {i}, "
                f"{a} o {sw} gives {a(sw(i))} but {result} gives {result(i)}), so no swizzle "
                f"outside it is the same function"
            )
    return result


def _composition(a, b) -> Layout:
    if isinstance(a, Swizzle):
        if not isinstance(b, Layout):
            raise ShapeError(f"a swizzle composes with a cute Layout on its right, got {_fmt(b)}")
        return b if a.is_identity() else ComposedLayout(a, Static(0), b)
    if isinstance(a, ComposedLayout):
        if isinstance(b, (Swizzle, ComposedLayout)):
            raise ShapeError(f"a composed layout composes with a Layout or a tiler on its right, got {b}")
        return _inner(_composition, a, b)
    if isinstance(b, Swizzle):
        return _compose_layout_swizzle(_as_layout(a, "left-hand layout"), b)
    if isinstance(b, ComposedLayout):
        if b.offset != 0:
            raise ShapeError(f"composition with {b} on the right needs its offset to be 0, got {b.offset}")
        if isinstance(b.layout_a, Swizzle):
            # (a o sw) o B = (sw' o a) o B needs a o sw = sw' o a on the offsets B
            # reaches, which may lie past size(a) (C++ never checks, and errs there).
            a = _as_layout(a, "left-hand layout")
            return _composition(_compose_layout_swizzle(a, b.layout_a, b.layout_b), b.layout_b)
        # C++ composes a o L first, but that follows a(L(.)) on the indices of L
        # only, and B may reach past them; L o B is exact wherever B reaches.
        return _composition(a, _composition(b.layout_a, b.layout_b))
    a = _as_layout(a, "left-hand layout")
    if b is None:
        return a
    if is_tuple(b):
        return _by_mode(a, b, _composition, keep_rest=False)
    if is_int(b):
        # C++ composes with n:_1 here, not with make_layout(n) (which is _1:_0 for n = _1).
        return _compose_layouts(a, Layout(b, one_like(b)))
    return _compose_layouts(a, _as_tiler_layout(b))


def composition(a, b) -> Layout:
    """``a o b``: the layout R with ``R(i) == a(b(i))`` and shape compatible with b.

    ``b`` may be a Layout, an int ``n`` (``n:1``), None, or a tuple of tilers
    applied to the modes of ``a`` one by one; as in C++ CuTe, modes of ``a``
    past the tuple are dropped.  A tuple of ints is a Shape tiler: each int is
    a ``n:1`` layout for its mode.  Example:
    ``composition((6,2):(8,2), (4,3):(3,1)) == ((2,2),3):((24,2),8)``.

    Past its size, ``a`` continues along its last mode (CuTe's convention),
    so a tiler may reach beyond ``size(a)``.  A negative tiler stride is
    accepted only when ``a`` coalesces to a single mode, which C++ (and this
    function) extends linearly to negative indices.

    With a :class:`Swizzle` on the left the result is the composed layout
    ``sw o _0 o b``; a composed layout on the left composes its inner layout;
    ``layout o swizzle`` is rewritten as ``swizzle' o layout`` where the
    layout moves the swizzle's bits to other bits (raises where it does not);
    with a composed layout ``O o B`` on the right, that rewrite is checked at
    every offset ``B`` reaches, and an outer layout ``O`` composes with ``B``
    first, so the result is ``i -> a(O(B(i)))`` wherever ``B`` reaches.

    Raises ShapeError when no such layout exists: a tiler stride or shape that
    does not divide the modes of ``a`` (C++'s divisibility conditions, relaxed
    only where a tiler mode stays inside one mode of ``a``), a negative tiler
    stride into a multi-mode ``a``, or two tiler modes whose offsets carry
    into each other inside ``a`` (C++ returns a wrong layout there).
    """
    return _named("composition", _composition, a, b)


# ---------------------------------------------------------------------------
# Complement
# ---------------------------------------------------------------------------


def _check_cotarget(cotarget):
    cotarget = normalize_int_tuple(cotarget, "complement cotarget")
    for x in leaves(cotarget):
        if x < 1:
            raise ShapeError(f"the cotarget {format_int_tuple(cotarget)} must be positive")
    return cotarget


def _complement(layout, cotarget=_MISSING) -> Layout:
    if isinstance(layout, ComposedLayout):
        # CuTe: the complement of the inner layout; the outer function does not enter.
        return _complement(layout.layout_b, cotarget)
    layout = _as_layout(layout)
    # Only the codomain's structure matters: a mode of stride -d covers the
    # same gaps as one of stride d, so negative strides are taken by absolute
    # value (C++ sorts signed strides and goes wrong there).  C++ filters
    # first (drop stride-0 and size-1 modes, merge adjacent modes).
    flat = _filter(Layout(layout.shape, _abs_tuple(layout.stride)))
    modes = [
        (d, s)
        for s, d in zip(leaves(flat.shape), leaves(flat.stride))
        if s != 1 and d != 0
    ]
    modes.sort(key=lambda m: m[0])  # stable: ties keep mode order, like C++ find(min)
    one = one_like(layout.shape, layout.stride)
    if cotarget is _MISSING:
        cotarget = one
        for d, s in modes:
            cotarget = cotarget + (s - 1) * d  # cosize of the filtered layout
    else:
        cotarget = _check_cotarget(cotarget)
    # C++'s fold: between consecutive modes (by stride) goes a mode of the
    # result whose extent is how many steps of the span so far fit below the
    # next stride (a floor division, as in C++).
    current = one
    shapes, strides, prev, exact = [], [], None, True
    for d, s in modes:
        if d < current:
            if prev is not None and d % prev[0] == 0:
                # d = k * prev stride with k < prev extent: two coordinates meet.
                raise ShapeError(
                    f"the layout is not injective: its mode {s}:{d} lands on the offsets of "
                    f"its mode {prev[1]}:{prev[0]}"
                )
            raise ShapeError(
                f"the mode {s}:{d} starts inside the span {current} of the modes with smaller "
                f"strides, so no mode fits between them (C++ stops here too: an extent-0 mode)"
            )
        exact = exact and d % current == 0
        shapes.append(d // current)
        strides.append(current)
        current = d * s
        prev = (d, s)
    shapes.append(product(ceil_div(cotarget, current)))
    strides.append(current)
    result = _coalesce_flat(shapes, strides, layout.shape)
    if not exact:
        # The modes of the result no longer fill the gaps exactly: keep C++'s
        # result only when it still is a complement.
        _check_complement(flat, result, product(cotarget))
    return result


def _abs_tuple(t):
    return tuple(_abs_tuple(e) for e in t) if is_tuple(t) else abs(t)


def _check_complement(flat: Layout, result: Layout, target: int) -> None:
    """Raise unless ``result`` is ordered, meets ``flat`` only at offset 0 and,
    beside ``flat``, reaches ``target``.

    Ordered: every mode's stride exceeds the largest offset of the modes
    before it, so the offsets strictly increase.  Disjoint: only the offsets
    of ``result`` below the span of ``flat`` can meet it; they are few.
    """
    reach = 0
    for s, d in zip(leaves(result.shape), leaves(result.stride)):
        if s > 1 and d <= reach:
            raise ShapeError(
                f"C++'s result {result} is not ordered: its mode {s}:{d} steps back to offsets "
                f"already reached"
            )
        reach += (s - 1) * d
    span = flat.cosize
    if span + reach < target:
        raise ShapeError(
            f"C++'s result {result} is not a complement: beside the layout it reaches offset "
            f"{span + reach - 1}, short of the cotarget {target} (the gaps it rounds down are lost)"
        )
    taken = {flat(i) for i in range(flat.size)}
    for i in range(1, result.size):
        r = result(i)
        if r >= span:
            break
        if r in taken:
            raise ShapeError(
                f"C++'s result {result} is not a complement: its offset {r} is also an offset "
                f"of the layout"
            )


def complement(layout, cotarget=_MISSING) -> Layout:
    """The ordered layout that fills the gaps of ``layout`` up to ``cotarget``.

    R = complement(L, M) is ordered (its offsets strictly increase), its
    offsets meet those of L only at 0, and ``cosize(make_layout(filter(L), R))
    >= M`` with the last mode of R no longer than needed.
    ``complement(4:1, 24) == 6:4``, ``complement((2,2):(1,6), 24) ==
    (3,2):(2,12)``.  ``cotarget`` defaults to the cosize of L; a tuple
    cotarget is divided mode by mode as in C++.  Negative strides count by
    their absolute value.

    The result is C++ CuTe's: where each stride of L (sorted) is a multiple
    of the span of the smaller modes, R fills the gaps exactly and
    ``make_layout(L, R)`` is a bijection onto its cosize; where one is not,
    C++ rounds the gap down and R only covers part of it (CUTLASS's
    ``complement((4,6):(1,6)) == 1:0``), and R is returned after checking
    that it is ordered, disjoint from L and, beside L, still reaches the
    cotarget.  Raises ShapeError where C++ stops (two modes of L overlap, or
    a mode starts inside the span of the smaller ones) or where its result
    is not a complement (``complement((2,2):(2,6), 83)``: C++'s
    ``(2,7):(1,12)`` beside the layout stops at offset 81).
    """
    return _named("complement", _complement, layout, cotarget)


# ---------------------------------------------------------------------------
# Inverses
# ---------------------------------------------------------------------------


def _swizzled_parts(layout, op):
    if not isinstance(layout.layout_a, Swizzle) or layout.offset != 0:
        raise ShapeError(
            f"{op} of a composed layout needs a Swizzle outside and offset 0 (CuTe's case), got {layout}"
        )
    return layout.layout_a, layout.layout_b


def _inverse(op: str, of_modes):
    """An inverse: a swizzle is its own, ``(sw o B)^-1 = B^-1 o sw``, and a layout's is
    ``of_modes(layout, shapes, strides, one, zero, pre)`` of its coalesced flat modes (``pre``
    the exclusive prefix products of their shapes, ``one`` and ``zero`` static as the
    layout is)."""
    def inverse(layout) -> Layout:
        if isinstance(layout, Swizzle):
            return layout
        if isinstance(layout, ComposedLayout):
            sw, b = _swizzled_parts(layout, op)
            return _compose_layout_swizzle(inverse(b), sw)
        layout = _as_layout(layout)
        flat = _coalesce(layout)
        shapes, strides = leaves(flat.shape), leaves(flat.stride)
        one = one_like(layout.shape, layout.stride)
        zero = zero_like(layout.shape, layout.stride)
        return of_modes(layout, shapes, strides, one, zero, prefix_product(tuple(shapes), one))

    return inverse


def _right_inverse_modes(layout, shapes, strides, one, zero, pre) -> Layout:
    # Follow the chain of strides 1, s*d, ... through the positive strides:
    # those modes alone reach the offsets 0, 1, 2, ... in order.  (C++ also
    # filters out dynamic strides; we know every value, so we do not.)
    result_s, result_d, curr = [one], [zero], one
    for i in sorted(range(len(shapes)), key=lambda i: strides[i]):
        if strides[i] == curr:
            result_s.append(shapes[i])
            result_d.append(pre[i])
            curr = shapes[i] * strides[i]
    return _coalesce_flat(result_s, result_d, layout.shape)


_right_inverse = _inverse("right_inverse", _right_inverse_modes)


def right_inverse(layout) -> Layout:
    """The largest R with ``layout(R(i)) == i`` for every ``i < size(R)``.

    R walks the offsets 0, 1, 2, ... that the layout reaches through its
    modes of stride 1, s0, s0*s1, ...; it is ``1:0`` when offset 1 is never
    reached.  Negative-stride modes never take part (C++ follows |stride| and
    then leaves the domain).
    """
    return _named("right_inverse", _right_inverse, layout)


def _left_inverse_modes(layout, shapes, strides, one, zero, pre) -> Layout:
    for s, d in zip(shapes, strides):
        if s > 1 and d < 0:
            raise ShapeError(
                f"the mode {s}:{d} has a negative stride: the layout reaches negative offsets, "
                f"which no layout can take as input"
            )
        if s > 1 and d == 0:
            raise ShapeError(f"the layout is not injective: its mode {s}:{d} has stride 0")
    order = sorted(range(len(shapes)), key=lambda i: strides[i])
    # Result (C++ form): mode k has stride = the domain stride of the k-th
    # smallest-stride mode of L and shape = how many of its steps fit below
    # the next stride; offsets that L never reaches map somewhere harmless.
    result_s, result_d, span, prev = [], [zero], one, None
    for i in order:
        d = strides[i]
        if d == 0:
            continue
        if d % span != 0:
            raise ShapeError(
                f"left inverse divisibility condition: stride {d} is not a multiple of the "
                f"previous stride {span}, so offsets cannot be decoded digit by digit"
            )
        if prev is not None and d < prev[0] * prev[1]:
            # d = k * prev stride with k < prev extent: two coordinates meet.
            raise ShapeError(
                f"the layout is not injective: its mode {shapes[i]}:{d} lands on the offsets "
                f"of its mode {prev[0]}:{prev[1]}"
            )
        result_s.append(d // span)
        result_d.append(pre[i])
        span = d
        prev = (shapes[i], d)
    result_s.append(shapes[order[-1]])
    return _coalesce_flat(result_s, result_d, layout.shape)


_left_inverse = _inverse("left_inverse", _left_inverse_modes)


def left_inverse(layout) -> Layout:
    """An R with ``R(layout(i)) == i`` for every ``i < size(layout)``.

    Needs an injective layout with non-negative strides whose sorted strides
    each divide the next (C++ CuTe's condition); raises ShapeError otherwise
    (C++ returns a mere quasi-inverse for non-injective layouts).
    ``left_inverse(4:2) == (2,4):(0,1)``.
    """
    return _named("left_inverse", _left_inverse, layout)


# ---------------------------------------------------------------------------
# Divide
# ---------------------------------------------------------------------------


def _divide(layout: Layout, tiler) -> Layout:
    if tiler is None:
        return layout
    b = _as_tiler_layout(tiler)
    # A / B = A o (B, complement(B, shape(coalesce(A)))): the tile, then
    # the layout of the tiles (the "rest").
    rest = complement(b, _coalesce(layout).shape)
    return composition(layout, _concat([b, rest]))


_logical_divide = _mode_wise(_divide)


def logical_divide(layout, tiler) -> Layout:
    """Split ``layout`` into (tile, rest): ``A o (B, complement(B, size(A)))``.

    ``logical_divide((4,2,3):(2,1,8), 4:2) == ((2,2),(2,3)):((4,1),(2,8))``.
    A tuple tiler divides mode by mode (modes past it are kept).
    """
    return _named("logical_divide", _logical_divide, layout, tiler)


def _tile_unzip(layout: Layout, tiler) -> Layout:
    """Gather the (tile, rest) pairs at the terminals of ``tiler``.

    ((T0,R0),(T1,R1),X) with tiler (t0,t1) becomes ((T0,T1),(R0,R1,X)), as C++
    ``zip2_by``.  A non-tuple tiler (None included) leaves a rank-2 mode alone.
    """
    if not is_tuple(tiler):
        if layout.rank != 2:
            raise ShapeError(
                f"the mode {layout} under tiler {_fmt(tiler)} is not a (tile, rest) pair"
            )
        return layout
    _check_tiler_rank(layout, tiler)
    tiles, rests = [], []
    for i, t in enumerate(tiler):
        pair = _tile_unzip(layout[i], t)
        tiles.append(pair[0])
        rests.append(pair[1])
    rests += [layout[i] for i in range(len(tiler), layout.rank)]
    return _concat([_concat(tiles), _concat(rests)])


def _unpack(layout: Layout) -> list:
    """The top-level modes of ``layout`` for splicing into a result.

    C++ slices with ``repeat<R>(_)``, which for R == 1 is a single ``_`` that
    keeps the mode whole: a rank-1 mode ``(2):(1)`` stays ``(2):(1)``.
    """
    return [layout] if layout.rank == 1 else list(layout)


# The zipped, tiled and flat divides and products are the logical one with its (tile, rest)
# pairs gathered (zipped), and then the rest's modes, or both halves' modes, spliced in.
def _as_zipped(z: Layout) -> Layout:
    return z


def _as_tiled(z: Layout) -> Layout:
    return _concat([z[0], *_unpack(z[1])])


def _as_flat(z: Layout) -> Layout:
    return _concat([*_unpack(z[0]), *_unpack(z[1])])


def _regrouped(logical, regroup):
    """``regroup`` of the zipped form of ``logical(layout, tiler)``; a composed layout keeps
    its outer function and regroups its inner layout."""
    def op(layout, tiler) -> Layout:
        if isinstance(layout, ComposedLayout):
            return _inner(op, layout, tiler)
        return regroup(_tile_unzip(logical(layout, tiler), tiler))

    return op


def zipped_divide(layout, tiler) -> Layout:
    """``((TileM,TileN,...),(RestM,RestN,...,L...))``."""
    return _named("zipped_divide", _regrouped(_logical_divide, _as_zipped), layout, tiler)


def tiled_divide(layout, tiler) -> Layout:
    """``((TileM,TileN,...),RestM,RestN,...,L...)``."""
    return _named("tiled_divide", _regrouped(_logical_divide, _as_tiled), layout, tiler)


def flat_divide(layout, tiler) -> Layout:
    """``(TileM,TileN,...,RestM,RestN,...,L...)``."""
    return _named("flat_divide", _regrouped(_logical_divide, _as_flat), layout, tiler)


# ---------------------------------------------------------------------------
# Product
# ---------------------------------------------------------------------------


def _product(block: Layout, tiler) -> Layout:
    if tiler is None:
        return block
    # An int tiler n is the layout n:1 (pycute divides instead: a bug).
    b = _as_tiler_layout(tiler)
    for s, d in zip(leaves(b.shape), leaves(b.stride)):
        if s > 1 and d < 0:
            raise ShapeError(
                f"the tiler {b} has a negative stride; the product places copies of the block "
                f"at the offsets of the tiler, which must not be negative"
            )
    # A x B = (A, complement(A, size(A) * cosize(B)) o B): B lays out copies
    # of A in the space that A leaves free.
    free = complement(block, block.size * b.cosize)
    return _concat([block, composition(free, b)])


_logical_product = _mode_wise(_product, "block")


def logical_product(block, tiler) -> Layout:
    """(block, copies): ``(A, complement(A, size(A)*cosize(B)) o B)``.

    ``logical_product((2,2):(4,1), 6:1) == ((2,2),(2,3)):((4,1),(2,8))``.
    A tuple tiler multiplies mode by mode (modes past it are kept); an int
    tiler ``n`` is ``n:1`` as in C++ CuTe.
    """
    return _named("logical_product", _logical_product, block, tiler)


def zipped_product(block, tiler) -> Layout:
    """``((BlockM,BlockN,...),(CopiesM,CopiesN,...,L...))``."""
    return _named("zipped_product", _regrouped(_logical_product, _as_zipped), block, tiler)


def tiled_product(block, tiler) -> Layout:
    """``((BlockM,BlockN,...),CopiesM,CopiesN,...,L...)``."""
    return _named("tiled_product", _regrouped(_logical_product, _as_tiled), block, tiler)


def flat_product(block, tiler) -> Layout:
    """``(BlockM,BlockN,...,CopiesM,CopiesN,...,L...)``."""
    return _named("flat_product", _regrouped(_logical_product, _as_flat), block, tiler)


def _append_to_rank(layout: Layout, r: int) -> Layout:
    """Pad with ``1:0`` modes up to rank r (C++ ``append<R>(layout)``)."""
    if layout.rank >= r:
        return layout
    one = one_like(layout.shape, layout.stride)
    zero = zero_like(layout.shape, layout.stride)
    pad = Layout(one, zero)
    return _concat(list(layout) + [pad] * (r - layout.rank))


def _rank_sensitive_product(block, tiler, raked: bool) -> Layout:
    if isinstance(block, ComposedLayout):
        return _inner(_rank_sensitive_product, block, tiler, raked)
    block = _as_layout(block, "block")
    tiler = _as_layout(tiler, "tiler")
    r = max(block.rank, tiler.rank)
    block, tiler = _append_to_rank(block, r), _append_to_rank(tiler, r)
    product_ = _logical_product(block, tiler)

    # Mode i of each half follows the structure of its operand.  The copies
    # half is (complement o tiler): when the tiler has an int shape, that
    # composition may come out tuple-shaped, yet it is still the tiler's one
    # mode (C++ zips its sub-modes instead and loses elements for rank 1).
    def mode(half, operand, i):
        return half[i] if is_tuple(operand.shape) else half

    pairs = [(mode(product_[0], block, i), mode(product_[1], tiler, i)) for i in range(r)]
    if raked:
        return _concat([_concat([c, b]) for b, c in pairs])
    return _concat([_concat([b, c]) for b, c in pairs])


def blocked_product(block, tiler) -> Layout:
    """Mode i of the result is (block mode i, tiler mode i): whole blocks tiled.

    Both are padded to a common rank R; the result has rank R (C++ CuTe).
    """
    return _named("blocked_product", lambda a, b: _rank_sensitive_product(a, b, False), block, tiler)


def raked_product(block, tiler) -> Layout:
    """Mode i of the result is (tiler mode i, block mode i): blocks interleaved."""
    return _named("raked_product", lambda a, b: _rank_sensitive_product(a, b, True), block, tiler)
