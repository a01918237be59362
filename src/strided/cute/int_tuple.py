"""IntTuples: the integers-or-nested-tuples that CuTe shapes, strides and
coordinates are made of.

An IntTuple is an ``int`` or a ``tuple`` of IntTuples.  Everything here is pure
Python integer arithmetic; nothing is approximate.

Static versus dynamic
---------------------
C++ CuTe distinguishes compile-time integers (``Int<4>{}``, printed ``_4``)
from run-time ones (``4``).  :class:`Static` is an ``int`` subclass playing the
compile-time role: ``static(4)`` prints as ``_4``, plain ints are dynamic.
Arithmetic follows CuTe's rule: the result of an operation is static only when
every operand is static (``_2 * _3 == _6`` but ``_2 * 3 == 6``).  A Static
*compares and hashes like the int it holds*, so the marker only changes how a
value prints, never which function a layout denotes.

Coordinates
-----------
CuTe orders coordinates colexicographically: the first mode varies fastest.
``idx2crd(5, (2, 3)) == (1, 2)`` and ``crd2idx((1, 2), (2, 3)) == 5``.
A coordinate may be given at any depth: an ``int`` in place of a tuple mode is
a 1-D index into that mode.  ``None`` in a coordinate plays CuTe's ``_``
(keep the whole mode) for :func:`slice_` and :func:`dice`.
"""

from __future__ import annotations

import operator
from abc import ABC

from ..core.errors import ShapeError

__all__ = [
    "Integer",
    "Static",
    "static",
    "dynamic",
    "is_static",
    "is_int",
    "is_tuple",
    "rank",
    "depth",
    "size",
    "product",
    "flatten",
    "unflatten",
    "inner_product",
    "prefix_product",
    "fold_modes",
    "shape_div",
    "ceil_div",
    "congruent",
    "weakly_congruent",
    "compatible",
    "crd2idx",
    "idx2crd",
    "crd2crd",
    "has_none",
    "slice_",
    "dice",
    "format_int_tuple",
    "normalize_int_tuple",
    "one_like",
    "zero_like",
    "leaves",
]


# ---------------------------------------------------------------------------
# Static integers
# ---------------------------------------------------------------------------


def _static_binop(name):
    op = getattr(int, name)

    def method(self, other):
        result = op(self, other)
        # Static op Static is static; anything touching a dynamic int is dynamic.
        if isinstance(other, Static) and type(result) is int:
            return Static(result)
        return result

    method.__name__ = name
    return method


def _static_unop(name):
    op = getattr(int, name)

    def method(self):
        return Static(op(self))

    method.__name__ = name
    return method


class Static(int):
    """A compile-time integer (CuTe's ``Int<N>{}``), printed ``_N``.

    Equal to, and hashing like, the plain ``int`` of the same value.
    """

    __slots__ = ()

    def __new__(cls, value=0):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ShapeError(f"static: expected an int, got {value!r}")
        return super().__new__(cls, value)

    def __repr__(self):
        return f"static({int(self)})"

    def __str__(self):
        return f"_{int(self)}"

    def __format__(self, spec):
        # An empty spec means str() (CuTe's `_4`); numeric specs format the value.
        return str(self) if not spec else format(int(self), spec)

    def __reduce__(self):
        return (Static, (int(self),))


# Arithmetic between statics stays static, in either operand order; sign and abs keep the mark.
for _op in ("add", "sub", "mul", "floordiv", "mod"):
    for _name in (f"__{_op}__", f"__r{_op}__"):
        setattr(Static, _name, _static_binop(_name))
for _name in ("__neg__", "__pos__", "__abs__"):
    setattr(Static, _name, _static_unop(_name))
del _op, _name


class Integer(ABC):
    """The integers of an IntTuple, for ``isinstance`` checks (pycute's ``Integer``).

    Any ``int`` subclass (a :class:`Static` too) except ``bool``.
    """

    @classmethod
    def __subclasshook__(cls, c):
        if cls is not Integer:
            return NotImplemented
        return issubclass(c, int) and not issubclass(c, bool)


def is_int(x) -> bool:
    """True for an integer leaf (``bool`` is not an integer here)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_tuple(x) -> bool:
    return isinstance(x, tuple)


def static(x):
    """Mark every integer of an IntTuple as static (``strided.cute.static`` also takes a Layout)."""
    if is_tuple(x):
        return tuple(static(e) for e in x)
    if is_int(x):
        return x if isinstance(x, Static) else Static(x)
    raise ShapeError(f"static: expected an int or a tuple of ints, got {x!r}")


def dynamic(x):
    """Strip the static marker from every integer of an IntTuple (``strided.cute.dynamic`` also
    takes a Layout)."""
    if is_tuple(x):
        return tuple(dynamic(e) for e in x)
    if is_int(x):
        return int(x)
    raise ShapeError(f"dynamic: expected an int or a tuple of ints, got {x!r}")


def is_static(x) -> bool:
    """True when every integer of an IntTuple is static (``strided.cute.is_static`` also takes a
    Layout)."""
    if is_tuple(x):
        return all(is_static(e) for e in x)
    return isinstance(x, Static)


def _any_static(*xs) -> bool:
    for x in xs:
        if is_tuple(x):
            if _any_static(*x):
                return True
        elif isinstance(x, Static):
            return True
    return False


def one_like(*xs):
    """The neutral 1 of a computation on ``xs``: static when any input is.

    C++ CuTe seeds its folds with ``Int<1>{}``; we do the same as soon as the
    caller has used a static integer, and keep an all-dynamic computation free
    of underscores (a layout written with plain ints prints with plain ints).
    """
    return Static(1) if _any_static(*xs) else 1


def zero_like(*xs):
    return Static(0) if _any_static(*xs) else 0


# ---------------------------------------------------------------------------
# Validation and printing
# ---------------------------------------------------------------------------


def normalize_int_tuple(x, what: str):
    """Turn lists into tuples and check that every leaf is an int."""
    if isinstance(x, (tuple, list)):
        return tuple(normalize_int_tuple(e, what) for e in x)
    if is_int(x):
        return x
    raise ShapeError(f"{what}: expected an int or a (nested) tuple of ints, got {x!r}")


def format_int_tuple(x) -> str:
    """CuTe's text form: ``(4,(2,4))``, static ints as ``_4``, None as ``_``."""
    if is_tuple(x):
        return "(" + ",".join(format_int_tuple(e) for e in x) + ")"
    if x is None:
        return "_"
    return str(x)


# ---------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------


def rank(t) -> int:
    """Number of top-level modes: ``len`` of a tuple, 1 for an int."""
    return len(t) if is_tuple(t) else 1


def depth(t) -> int:
    """Nesting depth: 0 for an int, 1 + deepest element for a tuple."""
    if is_tuple(t):
        return 1 + max((depth(e) for e in t), default=0)
    return 0


def flatten(t):
    """The leaves of an IntTuple as a flat tuple (an int stays an int).

    ``strided.cute.flatten`` (cute/layout.py) also takes a cute Layout.
    """
    if is_tuple(t):
        out = []
        for e in t:
            f = flatten(e)
            if is_tuple(f):
                out.extend(f)
            else:
                out.append(f)
        return tuple(out)
    return t


def leaves(t) -> list:
    """Leaves as a list (an int is one leaf)."""
    f = flatten(t)
    return list(f) if is_tuple(f) else [f]


def unflatten(flat, profile):
    """Re-nest the flat sequence ``flat`` into the tree shape of ``profile``.

    Each leaf of ``profile`` consumes one element of ``flat`` (which may itself
    be a tuple: that is how a leaf is replaced by a sub-tree).
    """
    items = list(flat) if is_tuple(flat) or isinstance(flat, list) else [flat]
    it = iter(items)

    def build(p):
        if is_tuple(p):
            return tuple(build(e) for e in p)
        try:
            return next(it)
        except StopIteration:
            raise ShapeError(
                f"unflatten: {len(items)} values are too few for profile {format_int_tuple(profile)}"
            ) from None

    result = build(profile)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ShapeError(
            f"unflatten: {len(items)} values are too many for profile {format_int_tuple(profile)}"
        )
    return result


_SENTINEL = object()


# ---------------------------------------------------------------------------
# Arithmetic on IntTuples
# ---------------------------------------------------------------------------


def product(t):
    """Product of all leaves (1 for the empty tuple)."""
    if is_tuple(t):
        result = Static(1)  # the empty product is the static 1, as in C++
        for e in t:
            result = result * product(e)
        return result
    if t is None:
        raise ShapeError("product: None is not an integer")
    return t


def size(x):
    """Number of elements of a shape (``strided.cute.size`` also takes a Layout)."""
    return product(x)


def inner_product(a, b):
    """Sum of the products of corresponding leaves of two congruent IntTuples."""
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise ShapeError(
                f"inner_product: {format_int_tuple(a)} and {format_int_tuple(b)} are not congruent"
            )
        result = Static(0)
        for x, y in zip(a, b):
            result = result + inner_product(x, y)
        return result
    if is_tuple(b):
        raise ShapeError(
            f"inner_product: {format_int_tuple(a)} and {format_int_tuple(b)} are not congruent"
        )
    return a * b


def fold_modes(fn, a, carried, step):
    """``fn(mode, carried)`` for each top-level mode of the tuple ``a``, left to right, where
    ``carried`` moves on past each mode to ``step(carried, product(mode))``: how C++ CuTe
    walks a tuple against one value (prefix_product's running stride, shape_div's and
    ceil_div's divisor, compact strides)."""
    out = []
    for e in a:
        out.append(fn(e, carried))
        carried = step(carried, product(e))
    return tuple(out)


def prefix_product(a, init=None):
    """Exclusive prefix product, congruent with ``a``.

    ``prefix_product((2, (3, 4))) == (1, (2, 6))``: the compact column-major
    (CuTe ``LayoutLeft``) strides of shape ``a``.
    """
    if init is None:
        init = one_like(a)
    if is_tuple(a):
        return fold_modes(prefix_product, a, init, operator.mul)
    if is_tuple(init):
        raise ShapeError(f"prefix_product: tuple init {format_int_tuple(init)} for an int")
    return init


def _int_shape_div(a, b, op="shape_div"):
    if b == 0:
        raise ShapeError(f"{op}: division of {a} by zero")
    if a % b == 0:
        return a // b
    if b % a == 0:
        # b is a multiple of a: a is used up, one (partial) step remains.
        return a // a
    raise ShapeError(f"{op}: neither of {a} and {b} divides the other")


def shape_div(a, b):
    """Divide shape ``a`` by ``b``, consuming ``a`` from the left.

    For ints, one must divide the other: ``shape_div(6, 2) == 3``,
    ``shape_div(2, 6) == 1``.  A tuple ``a`` divided by an int is divided mode
    by mode while ``b`` lasts: ``shape_div((4, 6), 8) == (1, 3)``.  Every step
    must divide one way or the other; otherwise a ShapeError names both.
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise ShapeError(
                    f"shape_div: {format_int_tuple(a)} and {format_int_tuple(b)} differ in rank"
                )
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        return fold_modes(shape_div, a, b, shape_div)
    if is_tuple(b):
        return shape_div(a, product(b))
    return _int_shape_div(a, b)


def ceil_div(a, b):
    """Ceiling division; a tuple ``a`` is divided left to right as in C++ CuTe."""
    if is_tuple(a):
        if is_tuple(b):
            if len(b) > len(a):
                raise ShapeError(
                    f"ceil_div: {format_int_tuple(b)} has more modes than {format_int_tuple(a)}"
                )
            b = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, b))
        return fold_modes(ceil_div, a, b, ceil_div)
    if is_tuple(b):
        return ceil_div(a, product(b))
    if b <= 0:
        raise ShapeError(f"ceil_div: divisor {b} must be positive")
    return -((-a) // b)


# ---------------------------------------------------------------------------
# Relations between IntTuples
# ---------------------------------------------------------------------------


def congruent(a, b) -> bool:
    """Same tree structure (profile), leaf values ignored."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def weakly_congruent(a, b) -> bool:
    """``a`` is congruent with a coarsening of ``b`` (an int in ``a`` matches any subtree)."""
    if not is_tuple(a):
        return True
    return is_tuple(b) and len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))


def compatible(a, b) -> bool:
    """Shape ``a`` is compatible with shape ``b`` (CuTe's partial order).

    Every coordinate of ``a`` is a valid coordinate of ``b``: an int of ``a``
    equals the size of the corresponding subtree of ``b``; tuples match rank.
    """
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return a == size(b)


# ---------------------------------------------------------------------------
# Coordinates
# ---------------------------------------------------------------------------


def _mismatch(op: str, what: str, x, shape) -> ShapeError:
    """``op``'s error for a coordinate or a stride whose structure is not ``shape``'s."""
    return ShapeError(f"{op}: {what} {format_int_tuple(x)} does not match shape {format_int_tuple(shape)}")


def _per_mode(op: str, crd, shape: tuple) -> tuple:
    """``crd`` as one coordinate a mode of the tuple ``shape``.  A tuple must have the
    shape's rank; an index is split over the modes colexicographically, the last mode not
    reduced, as in C++ CuTe (an index past the end continues along it)."""
    if is_tuple(crd):
        if len(crd) != len(shape):
            raise _mismatch(op, "coordinate", crd, shape)
        return crd
    out = []
    for s in shape[:-1]:
        n = product(s)
        out.append(crd % n)
        crd = crd // n
    return (*out, crd) if shape else ()


def crd2idx(crd, shape, stride=None):
    """Map a coordinate to an index: the inner product with the stride.

    ``stride`` defaults to the compact column-major strides of ``shape``, which
    makes this the colexicographic coordinate -> 1-D index map.  An int
    coordinate of a tuple mode is split colexicographically over that mode;
    as in C++ CuTe the last mode is not reduced, so an index past the end
    continues along the last mode (this is how a layout extends beyond its
    size in composition).  ``None`` (CuTe's ``_``) counts as 0.
    """
    if stride is None:
        stride = prefix_product(shape)
    if crd is None:
        return zero_like(stride)
    if is_tuple(shape):
        crd = _per_mode("crd2idx", crd, shape)
        if not is_tuple(stride) or len(stride) != len(shape):
            raise _mismatch("crd2idx", "stride", stride, shape)
        result = zero_like(stride)
        for c, s, d in zip(crd, shape, stride):
            result = result + crd2idx(c, s, d)
        return result
    if is_tuple(crd):
        raise _mismatch("crd2idx", "coordinate", crd, shape)
    if is_tuple(stride):
        raise _mismatch("crd2idx", "stride", stride, shape)
    return crd * stride


def idx2crd(idx, shape, stride=None):
    """Map an index to the natural (full-depth) coordinate of ``shape``.

    Colexicographic: the first mode varies fastest.  ``idx`` may itself be a
    (partial) hierarchical coordinate: each int in it is an index relative to
    its own mode (pycute uses the strides of the whole shape there, which is
    wrong for nested modes; C++ CuTe and this function do not).  As in C++,
    the last mode is not reduced modulo its extent.

    With ``stride`` (pycute's and C++'s three-argument form) each leaf of the
    coordinate is ``(idx // stride) % shape``: the inverse of ``crd2idx``
    with that stride wherever the stride is compact for the shape.
    """
    if stride is not None:
        return _idx2crd_strided(idx, shape, stride)
    if idx is None:
        raise ShapeError("idx2crd: None is not an index")
    if is_tuple(shape):
        return tuple(idx2crd(i, s) for i, s in zip(_per_mode("idx2crd", idx, shape), shape))
    if is_tuple(idx):
        raise _mismatch("idx2crd", "coordinate", idx, shape)
    return idx


def _idx2crd_strided(idx, shape, stride):
    if is_tuple(shape):
        if not is_tuple(stride) or len(stride) != len(shape):
            raise _mismatch("idx2crd", "stride", stride, shape)
        if is_tuple(idx):
            if len(idx) != len(shape):
                raise _mismatch("idx2crd", "coordinate", idx, shape)
            return tuple(_idx2crd_strided(i, s, d) for i, s, d in zip(idx, shape, stride))
        return tuple(_idx2crd_strided(idx, s, d) for s, d in zip(shape, stride))
    if is_tuple(idx) or is_tuple(stride):
        raise ShapeError(
            f"idx2crd: index {format_int_tuple(idx)} and stride {format_int_tuple(stride)} do not "
            f"match the mode {format_int_tuple(shape)}"
        )
    if idx is None or stride == 0:
        raise ShapeError(f"idx2crd: cannot invert index {idx!r} through stride {stride}")
    return (idx // stride) % shape


def crd2crd(crd, dst_shape, src_shape=None):
    """Re-express a coordinate as a coordinate of ``dst_shape`` (pycute's call form).

    Where ``crd`` and ``dst_shape`` are tuples of one rank, mode by mode; an
    int ``crd`` is unflattened into ``dst_shape``; a tuple ``crd`` into an
    int ``dst_shape`` needs ``src_shape``, the shape ``crd`` belongs to, and
    goes through the 1-D index.  (C++ CuTe's ``crd2crd`` takes
    ``(crd, src_shape, dst_shape)``; this is pycute's order, so that code
    written for pycute runs unchanged.)
    """
    if is_tuple(crd):
        if is_tuple(dst_shape):
            if len(crd) != len(dst_shape) or (is_tuple(src_shape) and len(src_shape) != len(crd)):
                raise ShapeError(
                    f"crd2crd: coordinate {format_int_tuple(crd)} and shape "
                    f"{format_int_tuple(dst_shape)} differ in rank"
                )
            srcs = src_shape if is_tuple(src_shape) else (None,) * len(crd)
            return tuple(crd2crd(c, d, s) for c, d, s in zip(crd, dst_shape, srcs))
        if src_shape is None:
            raise ShapeError(
                f"crd2crd: coordinate {format_int_tuple(crd)} into the int shape {dst_shape} needs "
                f"src_shape, the shape the coordinate belongs to"
            )
        return crd2idx(crd, src_shape)
    if crd is None:
        raise ShapeError("crd2crd: None is not a coordinate")
    if is_tuple(dst_shape):
        return idx2crd(crd, dst_shape)
    return crd


def has_none(x) -> bool:
    """True when a coordinate contains None (CuTe's ``_``) anywhere."""
    if x is None:
        return True
    return is_tuple(x) and any(has_none(e) for e in x)


def _select(crd, t, free: bool, op: str):
    """The parts of ``t`` that ``crd`` leaves free (None) when ``free``, else the parts it
    fixes: a leaf of ``crd`` keeps all of ``t`` or nothing; a tuple keeps each selected mode
    and splices nested selections into the enclosing tuple (C++ ``filter_tuple``)."""
    if not is_tuple(crd):
        return t if (crd is None) == free else ()
    if not is_tuple(t) or len(crd) != len(t):
        raise ShapeError(f"{op}: coordinate {format_int_tuple(crd)} does not match {format_int_tuple(t)}")
    out = []
    for c, e in zip(crd, t):
        if is_tuple(c):
            out.extend(_select(c, e, free, op))
        elif (c is None) == free:
            out.append(e)
    return tuple(out)


def slice_(crd, t):
    """Keep the parts of ``t`` selected by None in ``crd`` (CuTe ``slice``).

    A None at the top returns ``t``; inside a tuple each None keeps its whole
    mode and nested selections are spliced into the enclosing tuple, exactly
    like C++ ``filter_tuple``: ``slice_((None, (None, 1)), ((2, 3), (4, 5)))
    == ((2, 3), 4)``.
    """
    return _select(crd, t, True, "slice")


def dice(crd, t):
    """The complement of :func:`slice_`: keep the parts of ``t`` fixed by ``crd``."""
    return _select(crd, t, False, "dice")
