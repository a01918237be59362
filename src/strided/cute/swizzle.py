"""Swizzles and composed layouts: CuTe's ``Swizzle<B,M,S>`` and ``A o offset o B``.

A swizzle is a function on offsets that XORs ``B`` bits of an offset, taken
``S`` places higher up (or lower down, for a negative ``S``), into the ``B``
bits that start at bit ``M``:

    Sw<B,M,S>(x) = x ^ shiftr(x & yyy_msk, S)
    yyy_msk = (2^B - 1) << (M + max(0, S))     the bits read
    zzz_msk = (2^B - 1) << (M - min(0, S))     the bits flipped

``M`` low bits stay as they are (a vector of ``2^M`` elements moves as one),
and the function is its own inverse.  Shared-memory tiles use it to spread
the rows of a tile over the banks: ``Sw<3,3,3>`` on a row-major (8,64) tile
of halves moves the 8-element (16-byte) chunk ``c`` of row ``r`` to chunk
``c ^ r``.

A :class:`ComposedLayout` is the function ``c -> A(offset + B(c))`` of an
outer function ``A`` (a Swizzle or a Layout), an integer offset and an inner
Layout ``B``; its shape, modes and coordinates are ``B``'s.  The algebra
(``strided.cute.composition``, the divides and products, ...) takes composed
layouts where CuTe defines it on them; this module holds the two types.
"""

from __future__ import annotations

from operator import attrgetter

from ..core.errors import ShapeError, StridedIndexError
from .int_tuple import Static, format_int_tuple, has_none, is_int
from .layout import Layout
from .layout import slice_and_offset as slice_layout_and_offset

__all__ = ["Swizzle", "ComposedLayout", "make_swizzle", "slice_and_offset"]


def _shiftr(x: int, s: int) -> int:
    return x >> s if s >= 0 else x << -s


class _Value:
    """An immutable value made of its constructor's arguments, the attributes ``_ARGS``:
    equality, hashing, pickling and ``repr`` all follow from them."""

    __slots__ = ()
    _ARGS: tuple = ()

    def _args(self) -> tuple:
        return tuple(getattr(self, name) for name in self._ARGS)

    def __setattr__(self, name, value):
        raise AttributeError(f"cute.{type(self).__name__} is immutable")

    def __eq__(self, other):
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._args() == other._args()

    def __hash__(self):
        return hash((type(self).__name__, *self._args()))

    def __reduce__(self):
        return (type(self), self._args())

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(map(repr, self._args()))})"


class Swizzle(_Value):
    """CuTe's ``Swizzle<B, M, S>``: XOR ``B`` bits at ``M + max(0,S)`` into those at ``M - min(0,S)``.

    ``Swizzle(3, 4, 3)(x) == x ^ ((x & 0b1110000000) >> 3)``.  ``B``, ``M``
    must be non-negative and ``|S| >= B`` (the bits read and the bits flipped
    must not overlap), as C++ static_asserts; anything else raises ShapeError.
    """

    __slots__ = ("bits", "base", "shift", "yyy_msk", "zzz_msk")
    _ARGS = ("bits", "base", "shift")

    def __init__(self, bits, base, shift):
        for name, v in (("B (bits)", bits), ("M (base)", base), ("S (shift)", shift)):
            if not is_int(v):
                raise ShapeError(f"Swizzle({bits!r}, {base!r}, {shift!r}): {name} must be an int, got {v!r}")
        if bits < 0 or base < 0:
            raise ShapeError(
                f"Swizzle({bits}, {base}, {shift}): B (bits) and M (base) must be non-negative"
            )
        if abs(shift) < bits:
            raise ShapeError(
                f"Swizzle({bits}, {base}, {shift}): |S| = {abs(shift)} is below B = {bits}, so the "
                f"bits read and the bits flipped would overlap"
            )
        mask = (1 << bits) - 1
        for name, v in (
            ("bits", int(bits)),
            ("base", int(base)),
            ("shift", int(shift)),
            ("yyy_msk", mask << (base + max(0, shift))),
            ("zzz_msk", mask << (base - min(0, shift))),
        ):
            object.__setattr__(self, name, v)

    def __call__(self, offset):
        if not is_int(offset):
            raise ShapeError(f"{self}: expected an int offset, got {offset!r}")
        if offset < 0:
            raise StridedIndexError(f"{self}: a swizzle acts on offsets >= 0, got {offset}")
        return int(offset) ^ _shiftr(int(offset) & self.yyy_msk, self.shift)

    @property
    def size(self) -> int:
        """The period of the function: every bit it reads or flips lies below it."""
        return 1 << (self.bits + self.base + abs(self.shift))

    @property
    def cosize(self) -> int:
        return self.size

    def is_identity(self) -> bool:
        return self.bits == 0

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def _run(mask: int):
    """(lowest bit, length) of a mask that is one run of ones, else None."""
    if mask <= 0:
        return None
    low = (mask & -mask).bit_length() - 1
    length = (mask >> low).bit_length()
    return (low, length) if mask >> low == (1 << length) - 1 else None


def make_swizzle(yyy_msk: int, zzz_msk: int) -> Swizzle:
    """The Swizzle that reads the bits ``yyy_msk`` and flips the bits ``zzz_msk``.

    Both must be runs of ones of one length that do not overlap (C++
    ``make_swizzle<Y,Z>`` in the cases a ``Swizzle<B,M,S>`` can express).
    """
    if yyy_msk == 0 and zzz_msk == 0:
        return Swizzle(0, 0, 0)
    y, z = _run(yyy_msk), _run(zzz_msk)
    if y is None or z is None or y[1] != z[1] or yyy_msk & zzz_msk:
        raise ShapeError(
            f"make_swizzle({yyy_msk:#b}, {zzz_msk:#b}): the bits read and the bits flipped must be "
            f"two disjoint runs of ones of one length to form a Swizzle<B,M,S>"
        )
    bits = y[1]
    if z[0] < y[0]:
        return Swizzle(bits, z[0], y[0] - z[0])
    return Swizzle(bits, y[0], y[0] - z[0])


def _is_layout_like(x) -> bool:
    return isinstance(x, (Layout, ComposedLayout))


class ComposedLayout(_Value):
    """The function ``c -> layout_a(offset + layout_b(c))`` (CuTe's ``A o O o B``).

    ``layout_a`` is a :class:`Swizzle`, a cute Layout or a ComposedLayout;
    ``offset`` an int; ``layout_b`` a cute Layout, whose shape, rank, modes
    and coordinates the composed layout takes.  Printed as CuTe prints it,
    ``Sw<3,3,3> o _0 o (8,64):(64,1)``.
    """

    __slots__ = ("layout_a", "offset", "layout_b")
    _ARGS = __slots__

    def __init__(self, layout_a, offset, layout_b):
        if not (isinstance(layout_a, Swizzle) or _is_layout_like(layout_a)):
            raise ShapeError(
                f"ComposedLayout: the outer function must be a Swizzle or a cute Layout, got {layout_a!r}"
            )
        if not is_int(offset):
            raise ShapeError(f"ComposedLayout: the offset must be an int, got {offset!r}")
        if not isinstance(layout_b, Layout):
            raise ShapeError(f"ComposedLayout: the inner layout must be a cute Layout, got {layout_b!r}")
        object.__setattr__(self, "layout_a", layout_a)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "layout_b", layout_b)

    # -- like a Layout ------------------------------------------------------

    # its domain is the inner layout's, and so are the shape and sizes of it
    shape = property(attrgetter("layout_b.shape"), doc="The inner layout's shape.")
    size = property(attrgetter("layout_b.size"), doc="The inner layout's size.")
    rank = property(attrgetter("layout_b.rank"), doc="The inner layout's rank.")
    depth = property(attrgetter("layout_b.depth"), doc="The inner layout's depth.")

    @property
    def stride(self):
        raise ShapeError(
            f"ComposedLayout {self}: a composed layout has no strides (its outer function is not linear)"
        )

    @property
    def cosize(self) -> int:
        """The span the composed function reaches, counted over its domain.

        C++ answers ``cosize(layout_b)``; a swizzle that flips bits above the
        ones it reads (``S < 0``) reaches past that, so the offsets are counted.
        """
        offsets = [self(i) for i in range(self.size)]
        return max(offsets) - min(offsets) + 1

    # a sequence of its modes, as a Layout is
    __len__ = Layout.__len__
    __iter__ = Layout.__iter__

    def __getitem__(self, key):
        """Mode ``key`` of the inner layout, under the same outer function and offset."""
        return ComposedLayout(self.layout_a, self.offset, self.layout_b[key])

    def __call__(self, *args):
        """Evaluate at an index or coordinate; a coordinate with None slices.

        A slice keeps the outer function and moves the offset of the fixed
        modes inside it (``A(offset + B(c))`` is not ``A(offset) + ...``).
        """
        if not args:
            raise ShapeError(f"ComposedLayout {self}: call needs an index or a coordinate")
        crd = args[0] if len(args) == 1 else tuple(args)
        if isinstance(crd, list):
            crd = tuple(crd)
        if has_none(crd):
            return slice_and_offset(crd, self)[0]
        return self.layout_a(self.offset + self.layout_b(crd))

    def with_inner(self, layout_b) -> ComposedLayout:
        """The same outer function and offset over another inner layout."""
        return ComposedLayout(self.layout_a, self.offset, layout_b)

    def __str__(self):
        return f"{self.layout_a} o {format_int_tuple(self.offset)} o {self.layout_b}"


def slice_and_offset(crd, layout):
    """Slice a cute Layout or a ComposedLayout by a coordinate with None modes; also the offset.

    ``layout(crd) == sliced(j) + offset`` for every index ``j`` of ``sliced``,
    where the None modes of ``crd`` take the coordinates of ``j``.  A composed
    layout keeps its outer function, which is not linear, so the fixed modes'
    offset moves inside it and the offset returned is ``_0`` (as C++ does).
    """
    if isinstance(layout, ComposedLayout):
        sliced, off = slice_layout_and_offset(crd, layout.layout_b)
        return ComposedLayout(layout.layout_a, layout.offset + off, sliced), Static(0)
    if not isinstance(layout, Layout):
        raise ShapeError(f"slice_and_offset: expected a cute Layout or ComposedLayout, got {layout!r}")
    return slice_layout_and_offset(crd, layout)
