"""The hierarchical CuTe Layout: a function from coordinates to offsets.

A Layout is a pair (shape, stride) of congruent IntTuples.  Its domain is the
set of coordinates of ``shape`` (or, equivalently, the 1-D indices
``0 <= i < size``, read colexicographically: first mode fastest); its value at
a coordinate is the inner product of the natural coordinate with ``stride``.

    >>> L = Layout((4, (2, 4)), (2, (1, 8)))
    >>> str(L)
    '(4,(2,4)):(2,(1,8))'
    >>> L(1, (1, 2)), L(21)
    (19, 19)

Layouts are immutable and compare by value (the static marker of an integer
changes its printing, not the function, so ``Layout(static(4)) == Layout(4)``).

int_tuple.py, below this module, knows nothing of layouts: the functions of
``strided.cute`` that take an IntTuple or a Layout (``size``, ``rank``,
``depth``, ``flatten``, ``static``, ``dynamic``, ``is_static``) are defined
here and hand IntTuples on to int_tuple.py.
"""

from __future__ import annotations

import operator
import sys

from ..core.errors import ShapeError, StridedIndexError
from . import int_tuple
from .int_tuple import (
    Static,
    congruent,
    crd2idx,
    fold_modes,
    format_int_tuple,
    has_none,
    is_int,
    is_tuple,
    leaves,
    normalize_int_tuple,
    one_like,
    product,
    slice_,
)

__all__ = [
    "Layout",
    "make_layout",
    "size",
    "cosize",
    "rank",
    "depth",
    "shape",
    "stride",
    "flatten",
    "static",
    "dynamic",
    "is_static",
    "slice_and_offset",
    "format_layout",
    "print_layout",
    "grid_text",
]


def _compact_left(shape, current):
    """Compact column-major strides (C++ ``compact_major<LayoutLeft>``).

    A static extent 1 gets the static stride 0, as in C++ (``make_layout(_1)``
    is ``_1:_0``); otherwise this is the exclusive prefix product.
    """
    if is_tuple(shape):
        return fold_modes(_compact_left, shape, current, operator.mul)
    if isinstance(shape, Static) and shape == 1:
        return Static(0)
    return current


def _check_shape(shape, what: str):
    if is_tuple(shape):
        for e in shape:
            _check_shape(e, what)
    elif shape < 1:
        raise ShapeError(f"{what}: every extent must be a positive integer, got {shape}")


class Layout:
    """A CuTe layout ``shape:stride`` with nested-tuple shape and stride.

    ``Layout(shape)`` gets the compact column-major strides (CuTe's
    ``LayoutLeft``): ``Layout((3, 4))`` is ``(3,4):(1,3)``.  Lists are accepted
    and stored as tuples.
    """

    __slots__ = ("_shape", "_stride", "_hash")

    def __init__(self, shape, stride=None):
        shape = normalize_int_tuple(shape, "Layout shape")
        _check_shape(shape, f"Layout({format_int_tuple(shape)})")
        if stride is None:
            stride = _compact_left(shape, one_like(shape))
        else:
            stride = normalize_int_tuple(stride, "Layout stride")
            if not congruent(shape, stride):
                raise ShapeError(
                    f"Layout: shape {format_int_tuple(shape)} and stride "
                    f"{format_int_tuple(stride)} are not congruent"
                )
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_stride", stride)
        object.__setattr__(self, "_hash", hash((shape, stride)))

    def __setattr__(self, name, value):
        raise AttributeError("cute.Layout is immutable")

    __delattr__ = __setattr__

    def __reduce__(self):
        return (Layout, (self._shape, self._stride))

    # -- attributes ---------------------------------------------------------

    @property
    def shape(self):
        return self._shape

    @property
    def stride(self):
        return self._stride

    @property
    def size(self) -> int:
        """Number of coordinates in the domain."""
        return product(self._shape)

    @property
    def cosize(self) -> int:
        """The span length: highest offset minus lowest, plus one (never below 1).

        For non-negative strides this is ``L(size - 1) + 1`` as in CuTe; for
        any signs it is the flat ``strided.Layout``'s ``cosize``, the length of
        the buffer the layout reaches (``8:-1`` reaches 8 elements), where
        C++'s and pycute's formula would go to 0 or below.
        """
        span = 1
        for s, d in zip(leaves(self._shape), leaves(self._stride)):
            span += (s - 1) * abs(d)
        return span

    @property
    def rank(self) -> int:
        return int_tuple.rank(self._shape)

    @property
    def depth(self) -> int:
        return int_tuple.depth(self._shape)

    # -- modes ----------------------------------------------------------------

    def __len__(self) -> int:
        return self.rank

    def __iter__(self):
        for i in range(self.rank):
            yield self[i]

    def __getitem__(self, key):
        """Mode ``key`` as a Layout; a tuple key walks into nested modes.

        ``L[1]`` is the second mode, ``L[1, 0]`` the first sub-mode of it and
        ``L[0:2]`` the layout of the first two modes.  A rank-1 layout with an
        integer shape is its own mode 0.
        """
        if is_tuple(key):
            result = self
            for k in key:
                result = result[k]
            return result
        if isinstance(key, slice):
            modes = [self[i] for i in range(self.rank)[key]]
            return make_layout(*modes) if modes else Layout((), ())
        if not is_int(key):
            raise ShapeError(f"Layout {self}: mode index must be an int, got {key!r}")
        n = self.rank
        i = key + n if key < 0 else key
        if not 0 <= i < n:
            raise StridedIndexError(f"Layout {self}: mode {key} out of range for rank {n}")
        if not is_tuple(self._shape):
            return self
        return Layout(self._shape[i], self._stride[i])

    # -- the function ---------------------------------------------------------

    def __call__(self, *args):
        """Evaluate at a 1-D index or a (nested) coordinate, or slice.

        ``L(i)`` for ``0 <= i`` (past ``size`` the layout continues along its
        last mode, as in CuTe), ``L(m, n)`` or ``L((m, (a, b)))`` for
        coordinates (any int may stand for a whole sub-mode as its 1-D index).
        A coordinate containing None (CuTe's ``_``) returns the sliced Layout of
        the None modes, like C++ ``layout(_, 2)``; :func:`slice_and_offset`
        also gives the offset dropped there.
        """
        if not args:
            raise ShapeError(f"Layout {self}: call needs an index or a coordinate")
        crd = args[0] if len(args) == 1 else tuple(args)
        if is_int(crd) and crd >= product(self._shape):
            # Past its size a layout continues along its last mode (C++ and
            # pycute evaluate it there; composition is defined through it).
            return int(crd2idx(crd, self._shape, self._stride))
        crd = _check_coord(crd, self._shape, self)
        if has_none(crd):
            return Layout(slice_(crd, self._shape), slice_(crd, self._stride))
        return int(crd2idx(crd, self._shape, self._stride))

    # -- conversions ------------------------------------------------------------

    def flatten(self):
        """The same function as a flat ``strided.Layout`` (offset 0).

        The flat layout has ``shape = flatten(self.shape)`` and
        ``stride = flatten(self.stride)``, so for every natural coordinate
        ``c`` of this layout, ``flat.offset_of(flatten(c)) == self(c)``.

        Enumeration order differs: a flat layout walks row-major (last dim
        fastest), CuTe walks colexicographically (first mode fastest).  To get
        the offsets in CuTe's 1-D order ``self(0), self(1), ...`` from the flat
        layout, walk it with its dims reversed, e.g.
        ``strided.layout.Layout(shape[::-1], stride[::-1])`` row-major, or
        ``flat.offset_of(idx2crd(i, flat.shape))`` for each ``i``.
        """
        from strided.layout.layout import Layout as FlatLayout  # lazy: optional layer

        shape = int_tuple.flatten(self._shape)
        stride = int_tuple.flatten(self._stride)
        if not is_tuple(shape):
            shape, stride = (shape,), (stride,)
        return FlatLayout(tuple(int(s) for s in shape), tuple(int(d) for d in stride), 0)

    # -- value semantics --------------------------------------------------------

    def __eq__(self, other):
        if not isinstance(other, Layout):
            return NotImplemented
        return self._shape == other._shape and self._stride == other._stride

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return self._hash

    def __str__(self):
        return f"{format_int_tuple(self._shape)}:{format_int_tuple(self._stride)}"

    def __repr__(self):
        return f"Layout({self._shape!r}, {self._stride!r})"


def _check_coord(crd, shape, layout):
    """Validate a coordinate against ``shape``; returns it with lists as tuples."""
    if isinstance(crd, list):
        crd = tuple(crd)
    if crd is None:
        return None
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise ShapeError(
                f"Layout {layout}: coordinate {format_int_tuple(crd)} does not match "
                f"shape {format_int_tuple(shape)}"
            )
        return tuple(_check_coord(c, s, layout) for c, s in zip(crd, shape))
    if not is_int(crd):
        raise ShapeError(f"Layout {layout}: coordinate entries must be ints or None, got {crd!r}")
    n = product(shape)
    if not 0 <= crd < n:
        raise StridedIndexError(
            f"Layout {layout}: index {crd} out of range [0, {n}) for mode {format_int_tuple(shape)}"
        )
    return crd


def make_layout(*args, stride=None):
    """Build a Layout.

    ``make_layout(shape, stride=None)`` is ``Layout(shape, stride)``;
    ``make_layout(L0, L1, ...)`` with Layouts concatenates them into the layout
    whose modes are ``L0, L1, ...`` (shape ``(L0.shape, L1.shape, ...)``), as
    C++ ``make_layout(layouts...)`` does, even for a single layout;
    ``make_layout([L0, L1, ...])`` (or a tuple of Layouts) is the same, as in
    pycute.
    """
    if (len(args) == 1 and isinstance(args[0], (list, tuple)) and args[0]
            and all(isinstance(a, Layout) for a in args[0])):
        args = tuple(args[0])  # pycute's make_layout([L0, L1, ...])
    if args and isinstance(args[0], Layout):
        if stride is not None or not all(isinstance(a, Layout) for a in args):
            raise ShapeError(
                "make_layout: either Layouts to concatenate or (shape, stride), got "
                + ", ".join(repr(a) for a in args)
            )
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))
    if len(args) == 1:
        return Layout(args[0], stride)
    if len(args) == 2 and stride is None:
        return Layout(args[0], args[1])
    raise ShapeError(f"make_layout: expected (shape, stride=None) or Layouts, got {args!r}")


def _layout_like(x) -> bool:
    # A cute Layout, or a composed layout or swizzle (swizzle.py, above this
    # module) that answers the same questions.
    return isinstance(x, Layout) or (hasattr(x, "size") and hasattr(x, "cosize") and not is_tuple(x))


def size(x):
    """Size of a Layout's (or composed layout's) domain or of a shape."""
    if _layout_like(x):
        return x.size
    return product(normalize_int_tuple(x, "size"))


def cosize(x):
    """Cosize of a Layout (or composed layout): the span of offsets it reaches."""
    if not _layout_like(x):
        raise ShapeError(f"cosize: expected a cute Layout, got {x!r}")
    return x.cosize


def rank(x):
    """Number of top-level modes of a Layout or an IntTuple."""
    return x.rank if _layout_like(x) else int_tuple.rank(x)


def depth(x):
    """Nesting depth of a Layout's shape or of an IntTuple."""
    return x.depth if _layout_like(x) else int_tuple.depth(x)


def shape(x):
    return x.shape if _layout_like(x) else x


def flatten(x):
    """The leaves of an IntTuple as a flat tuple (an int stays an int).

    Given a cute Layout, returns the cute Layout with flattened shape and
    stride (C++ ``flatten(layout)``); the *method* ``Layout.flatten()`` is the
    bridge to a flat ``strided.Layout`` instead.
    """
    if isinstance(x, Layout):
        return type(x)(int_tuple.flatten(x.shape), int_tuple.flatten(x.stride))
    if hasattr(x, "with_inner"):  # a composed layout: C++ flattens its inner layout
        return x.with_inner(flatten(x.layout_b))
    return int_tuple.flatten(x)


def _check_int_tuple_or_layout(op: str, x) -> None:
    if not (isinstance(x, Layout) or is_tuple(x) or is_int(x)):
        raise ShapeError(f"{op}: expected an int, a tuple of ints or a Layout, got {x!r}")


def static(x):
    """Mark every integer of an IntTuple (or a cute Layout) as static."""
    _check_int_tuple_or_layout("static", x)
    if isinstance(x, Layout):
        return type(x)(int_tuple.static(x.shape), int_tuple.static(x.stride))
    return int_tuple.static(x)


def dynamic(x):
    """Strip the static marker from every integer of an IntTuple (or Layout)."""
    _check_int_tuple_or_layout("dynamic", x)
    if isinstance(x, Layout):
        return type(x)(int_tuple.dynamic(x.shape), int_tuple.dynamic(x.stride))
    return int_tuple.dynamic(x)


def is_static(x) -> bool:
    """True when every integer of an IntTuple (or of a Layout) is static."""
    if isinstance(x, Layout):
        return int_tuple.is_static(x.shape) and int_tuple.is_static(x.stride)
    return int_tuple.is_static(x)


def stride(x):
    if not isinstance(x, Layout):
        raise ShapeError(f"stride: expected a cute Layout, got {x!r}")
    return x.stride


def slice_and_offset(crd, layout: Layout):
    """Slice ``layout`` by a coordinate with None modes; also return the offset.

    ``layout(crd) == sliced(j) + offset`` for every index ``j`` of ``sliced``,
    where the None modes of ``crd`` take the coordinates of ``j``.
    """
    if not isinstance(layout, Layout):
        raise ShapeError(f"slice_and_offset: expected a cute Layout, got {layout!r}")
    crd = _check_coord(crd, layout.shape, layout)
    offset = int(crd2idx(crd, layout.shape, layout.stride))
    if not has_none(crd):
        return Layout((), ()), offset
    return Layout(slice_(crd, layout.shape), slice_(crd, layout.stride)), offset


# ---------------------------------------------------------------------------
# Pictures
# ---------------------------------------------------------------------------


def grid_text(title: str, rows: int, cols: int, value, width_hint: int) -> str:
    """The grid C++ ``print_layout`` draws, with ``value(m, n)`` in each cell.

    Cell width is ``digits(width_hint) + 2`` as in CuTe; it only grows when a
    (negative) value needs more room, so the grid never loses its alignment.
    """
    values = [[value(m, n) for n in range(cols)] for m in range(rows)]
    digits = len(str(width_hint))
    widest = max((len(str(v)) for row in values for v in row), default=1)
    w = max(digits, widest) + 2
    lines = [title]
    lines.append("    " + "".join(f"  {n:>{w - 2}d} " for n in range(cols)))
    rule = "    " + ("+" + "-" * w) * cols + "+"
    for m in range(rows):
        lines.append(rule)
        lines.append(f"{m:2d}  " + "".join(f"| {v:>{w - 2}d} " for v in values[m]) + "|")
    lines.append(rule)
    return "\n".join(lines) + "\n"


def format_layout(layout: Layout) -> str:
    """The text of C++ ``print_layout``: the layout, then its grid of offsets.

    Rank-2 layouts are drawn ``size(mode 0)`` rows by ``size(mode 1)`` columns
    with cell ``(m, n) = L(m, n)``; a rank-1 layout is drawn as one row.
    """
    if not isinstance(layout, Layout):
        raise ShapeError(f"print_layout: expected a cute Layout, got {layout!r}")
    if layout.rank == 2:
        rows, cols = product(layout.shape[0]), product(layout.shape[1])
        return grid_text(str(layout), rows, cols, lambda m, n: layout(m, n), layout.cosize)
    if layout.rank == 1:
        cols = layout.size
        return grid_text(str(layout), 1, cols, lambda m, n: layout(n), layout.cosize)
    raise ShapeError(f"print_layout: layout {layout} has rank {layout.rank}; only rank 1 and 2 are drawn")


def print_layout(layout: Layout, file=None) -> None:
    """Print the CuTe ASCII grid of a rank-1 or rank-2 layout."""
    (file or sys.stdout).write(format_layout(layout))

