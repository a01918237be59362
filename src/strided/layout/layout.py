"""The flat layout: shape, signed element strides and an element offset.

Pure integer arithmetic, no data and no numpy.  Every view of a tensor is a new
Layout over the same buffer; nothing in this module ever touches memory.

This module imports nothing else of ``strided.layout``: the methods that walk or
analyse a layout are installed on ``Layout`` by ``strided.layout`` (its
``__init__``, which every import of this module runs first): ``strided_index``
and ``strided_blocks`` from ``iterate``; ``validate``, ``is_non_overlapping``,
``classify``, ``supports_reduce_fast_path`` and ``decompose`` from ``analysis``.
"""

from __future__ import annotations

import itertools
import operator
from functools import lru_cache
from math import prod

from ..core.errors import ShapeError, StridedIndexError


def _as_int(op: str, what: str, value) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise ShapeError(f"{op}: expected an integer {what}, got {value!r}") from None


def as_int_tuple(op: str, what: str, values) -> tuple[int, ...]:
    """``values`` (one integer or a sequence of them) as an exact tuple of ints; ShapeError
    naming ``op`` and ``what`` otherwise."""
    if type(values) is tuple and all(type(v) is int for v in values):
        return values  # the common case, on every view: already exact
    if isinstance(values, int) or hasattr(values, "__index__"):
        values = (values,)
    try:
        return tuple(_as_int(op, what, v) for v in values)
    except TypeError:
        raise ShapeError(f"{op}: expected a sequence of integers for {what}, got {values!r}") from None


def norm_dim(op: str, dim, ndim: int, *, extra: int = 0) -> int:
    """A dim in [-(ndim+extra), ndim+extra) mapped to [0, ndim+extra).

    ``extra=1`` is for ops that insert a dim (unsqueeze)."""
    d = _as_int(op, "dim", dim)
    n = ndim + extra
    if not -n <= d < n or n == 0:
        raise StridedIndexError(
            f"{op}: dim {d} out of range for a tensor of rank {ndim}"
            + (f" (expected a dim in [{-n}, {n - 1}])" if n else " (it has no dims)")
        )
    return d % n


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides: each dim steps over the product of the dims to its right."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def column_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in shape:
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(strides)


def infer_shape(op: str, shape, numel: int) -> tuple[int, ...]:
    """Resolve one -1 in ``shape`` so that it holds ``numel`` elements."""
    shape = as_int_tuple(op, "shape", shape)
    holes = [i for i, n in enumerate(shape) if n == -1]
    if len(holes) > 1 or any(n < -1 for n in shape):
        raise ShapeError(f"{op}: invalid shape {shape} (sizes must be >= 0, at most one -1)")
    known = prod(n for n in shape if n != -1)
    if holes:
        if known == 0 or numel % known:
            raise ShapeError(f"{op}: shape {shape} is invalid for input of size {numel}")
        shape = shape[: holes[0]] + (numel // known,) + shape[holes[0] + 1 :]
    if prod(shape) != numel:
        raise ShapeError(f"{op}: shape {shape} is invalid for input of size {numel}")
    return shape


def broadcast_shapes(op: str, *shapes) -> tuple[int, ...]:
    """NumPy's rule: align on the right; each dim must be equal or 1."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(-ndim, 0):
        size = 1
        for s in shapes:
            n = s[d] if -d <= len(s) else 1
            if n == 1 or n == size:
                continue
            if size != 1:
                raise ShapeError(
                    f"{op}: shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot be broadcast together"
                )
            size = n
        out.append(size)
    return tuple(out)


class Layout:
    """A strided view: element ``(i0, .., in-1)`` lives at ``offset + sum(ik * stride[k])``.

    Immutable and hashable; equality is by value.  Strides may be negative
    (flips) or zero (broadcasts).  Views return new layouts.
    """

    __slots__ = ("shape", "stride", "offset", "_hash", "_dense", "_derived", "_serial")

    def __init__(self, shape, stride=None, offset: int = 0):
        shape = as_int_tuple("Layout", "shape", shape)
        if any(n < 0 for n in shape):
            raise ShapeError(f"Layout: sizes must be >= 0, got shape {shape}")
        stride = contiguous_strides(shape) if stride is None else as_int_tuple("Layout", "stride", stride)
        if len(stride) != len(shape):
            raise ShapeError(
                f"Layout: shape {shape} and stride {stride} must have the same length"
            )
        _fill(self, shape, stride, _as_int("Layout", "offset", offset))

    # -- identity ---------------------------------------------------------
    def __setattr__(self, name, value):
        raise AttributeError("Layout is immutable")

    def __eq__(self, other):
        if other is self:
            return True
        if not isinstance(other, Layout):
            return NotImplemented
        return self.offset == other.offset and self.stride == other.stride and self.shape == other.shape

    def __hash__(self):
        h = self._hash  # computed on first use: most views never key a dict
        if h is None:
            h = hash((self.shape, self.stride, self.offset))
            _SET_HASH(self, h)
        return h

    def serial(self) -> int:
        """A number naming this layout's value, for the keys of the caches every op call
        reads (an int hashes and compares in C; a Layout's ``__hash__`` and ``__eq__`` are
        Python calls): equal layouts get equal numbers and unequal ones never share one.
        Numbers are never reused; past ``SERIALS_MAX`` values the table starts again, and a
        layout numbered after that gets a new number (a cache keyed by it misses once).
        Read ``layout._serial or layout.serial()`` on a hot path: the slot is None until
        the first call."""
        n = self._serial
        if n is None:
            value = (self.shape, self.stride, self.offset)
            n = _SERIALS.get(value)
            if n is None:
                if len(_SERIALS) >= SERIALS_MAX:
                    _SERIALS.clear()
                n = _SERIALS[value] = next(_NEXT_SERIAL)
            _SET_SERIAL(self, n)
        return n

    def __reduce__(self):
        return (Layout, (self.shape, self.stride, self.offset))

    def __repr__(self):
        return f"Layout(shape={self.shape}, stride={self.stride}, offset={self.offset})"

    def __str__(self):
        fmt = lambda t: "(" + ",".join(map(str, t)) + ")"
        return f"{fmt(self.shape)}:{fmt(self.stride)}+{self.offset}"

    # -- constructors -----------------------------------------------------
    @classmethod
    def from_parts(cls, shape: tuple, stride: tuple, offset: int) -> "Layout":
        """A layout from parts already known good: exact int tuples of one length, sizes >= 0
        (no conversion, no check; for views computed from a layout's own parts)."""
        return cls._trusted(shape, stride, offset)

    @classmethod
    def _trusted(cls, shape: tuple, stride: tuple, offset: int) -> "Layout":
        """A layout from parts already known good: exact int tuples of one length, sizes >= 0.

        Views of an existing layout build theirs from its own checked parts; skipping
        ``__init__``'s conversions makes a view a few times cheaper."""
        self = object.__new__(cls)
        _SET_SHAPE(self, shape)  # _fill's body, one frame less on the path of every view
        _SET_STRIDE(self, stride)
        _SET_OFFSET(self, offset)
        _SET_HASH(self, None)
        _SET_DENSE(self, None)
        _SET_DERIVED(self, None)
        _SET_SERIAL(self, None)
        return self

    @classmethod
    def contiguous(cls, shape, offset: int = 0) -> "Layout":
        shape = as_int_tuple("Layout.contiguous", "shape", shape)
        if offset == 0 and cls is Layout:
            return contiguous_layout(shape)
        return cls(shape, contiguous_strides(shape), offset)

    @classmethod
    def column_major(cls, shape, offset: int = 0) -> "Layout":
        shape = as_int_tuple("Layout.column_major", "shape", shape)
        return cls(shape, column_major_strides(shape), offset)

    def derived(self) -> dict:
        """The views of this layout kept so far, keyed by what made them; add to it with
        ``keep_derived``.  The keys of different makers never meet: ``("transpose", d0, d1)``
        starts with a str, which a basic index's key (a tuple of ints and slice triples,
        ``tensor._basic_key``) never holds.

        A view is a value of the layout it was taken from, so a kept one is exact; it
        comes back with its hash and facts (contiguity) already computed, which a model's
        step that takes ``w.t()`` or ``x[:, ::2]`` again would otherwise pay for each time,
        in the view and in every op cache its result keys."""
        d = self._derived
        if d is None:
            d = {}
            _SET_DERIVED(self, d)
        return d

    def _kept(self, key, make, arg):
        """``make(arg)``, kept in ``derived()`` under ``key`` (a view that exists only: a
        reshape that needs a copy is worked out again).  A backward's rules reshape and
        broadcast the same layouts on every step, and ``_trusted``'s few-times-cheaper view
        is still dearer than this lookup.  Only an argument of exact ints (or None) is
        kept: 1.0 hashes like 1, and must still be refused as ``make`` refuses it."""
        if not (arg is None or type(arg) is int
                or (type(arg) is tuple and all(type(n) is int for n in arg))):
            return make(arg)
        derived = self._derived
        if derived is None:
            derived = self.derived()
        got = derived.get(key)
        if got is None:
            got = make(arg)
            if got is not None:
                keep_derived(derived, key, got)
        return got

    # -- metadata ---------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return prod(self.shape)

    def is_contiguous(self) -> bool:
        """Row-major dense, as candle decides it: size-1 dims and the offset never matter.

        A layout with no elements is contiguous, as in NumPy and PyTorch.  Computed once
        per layout (every op asks it of its operands)."""
        dense = self._dense
        if dense is None:
            dense = True
            if 0 not in self.shape:
                acc = 1
                for n, s in zip(reversed(self.shape), reversed(self.stride)):
                    if n > 1 and s != acc:
                        dense = False
                        break
                    acc *= n
            _SET_DENSE(self, dense)
        return dense

    def is_fortran_contiguous(self) -> bool:
        if 0 in self.shape:
            return True
        acc = 1
        for n, s in zip(self.shape, self.stride):
            if n > 1 and s != acc:
                return False
            acc *= n
        return True

    def contiguous_offsets(self) -> tuple[int, int] | None:
        """``(start, end)`` of the dense run the layout covers when it is contiguous."""
        if not self.is_contiguous():
            return None
        return self.offset, self.offset + self.numel

    # -- addressing -------------------------------------------------------
    def offset_of(self, index) -> int:
        index = as_int_tuple("offset_of", "index", index)
        if len(index) != self.ndim:
            raise StridedIndexError(
                f"offset_of: expected an index of length {self.ndim} for shape {self.shape}, got {index}"
            )
        off = self.offset
        for d, (i, n, s) in enumerate(zip(index, self.shape, self.stride)):
            if not 0 <= i < n:
                raise StridedIndexError(
                    f"offset_of: index {i} is out of bounds for dim {d} with size {n}"
                )
            off += i * s
        return off

    def unravel(self, i: int) -> tuple[int, ...]:
        """The row-major multi-index of the ``i``-th element."""
        i = _as_int("unravel", "index", i)
        if not 0 <= i < self.numel:
            raise StridedIndexError(
                f"unravel: flat index {i} is out of bounds for shape {self.shape} ({self.numel} elements)"
            )
        out = []
        for n in reversed(self.shape):
            i, r = divmod(i, n)
            out.append(r)
        return tuple(reversed(out))

    # -- views ------------------------------------------------------------
    def _replace(self, d: int, size: int, stride: int, offset: int) -> "Layout":
        shape = self.shape[:d] + (size,) + self.shape[d + 1 :]
        strides = self.stride[:d] + (stride,) + self.stride[d + 1 :]
        return Layout._trusted(shape, strides, offset)

    def narrow(self, dim, start: int, length: int) -> "Layout":
        d = norm_dim("narrow", dim, self.ndim)
        n = self.shape[d]
        start = _as_int("narrow", "start", start)
        length = _as_int("narrow", "length", length)
        if start < 0:
            start += n
        if not (0 <= start <= n and 0 <= length and start + length <= n):
            raise StridedIndexError(
                f"narrow: start {start} + length {length} exceeds dimension size {n} "
                f"of dim {d} (shape {self.shape})"
            )
        offset = self.offset + start * self.stride[d] if length else self.offset
        return self._replace(d, length, self.stride[d], offset)

    def slice(self, dim, start=None, stop=None, step=None) -> "Layout":
        """Python slice semantics on one dim, any nonzero step."""
        d = norm_dim("slice", dim, self.ndim)
        start, stop = (None if v is None else _as_int("slice", what, v)
                       for v, what in ((start, "start"), (stop, "stop")))
        if step is not None and _as_int("slice", "step", step) == 0:
            raise ShapeError(f"slice: step must be nonzero, got 0 for dim {d} (shape {self.shape})")
        n = self.shape[d]
        r = range(*slice(start, stop, step).indices(n))
        offset = self.offset + r.start * self.stride[d] if len(r) else self.offset
        # A step past the dim's end selects at most one element, as a step of n does; clamping
        # keeps the stride in int64 range (t[::2**70] must not hand kernels a 2**70 stride).
        step = r.step if abs(r.step) <= n else (n if r.step > 0 else -n)
        return self._replace(d, len(r), self.stride[d] * step, offset)

    def select(self, dim, index: int) -> "Layout":
        d = norm_dim("select", dim, self.ndim)
        n = self.shape[d]
        i = _as_int("select", "index", index)
        if not -n <= i < n:
            raise StridedIndexError(
                f"select: index {i} is out of bounds for dim {d} with size {n}"
            )
        i %= n
        return Layout(
            self.shape[:d] + self.shape[d + 1 :],
            self.stride[:d] + self.stride[d + 1 :],
            self.offset + i * self.stride[d],
        )

    def transpose(self, d0, d1) -> "Layout":
        # A transposed layout is a value of this one: kept, it comes back with its hash and
        # facts already computed, so a model's step that takes ``w.t()`` again costs the
        # op caches no fresh layout (see docs/architecture.md, "One dispatch per call").
        # Kept under the dims as given, so t()'s (-2, -1) is found before any normalising.
        derived = self._derived
        if derived is None:
            derived = self.derived()
        key = None
        if type(d0) is int and type(d1) is int:
            key = ("transpose", d0, d1)
            got = derived.get(key)
            if got is not None:
                return got
        nd = len(self.shape)
        a = norm_dim("transpose", d0, nd)
        b = norm_dim("transpose", d1, nd)
        shape, stride = list(self.shape), list(self.stride)
        shape[a], shape[b] = shape[b], shape[a]
        stride[a], stride[b] = stride[b], stride[a]
        got = Layout._trusted(tuple(shape), tuple(stride), self.offset)
        return got if key is None else keep_derived(derived, key, got)

    def permute(self, dims) -> "Layout":
        dims = as_int_tuple("permute", "dims", dims)
        nd = len(self.shape)
        norm = [d % nd if nd and -nd <= d < nd else None for d in dims]
        if len(dims) != nd or None in norm or sorted(norm) != list(range(nd)):
            raise ShapeError(
                f"permute: dims {dims} are not a permutation of the {self.ndim} dims of shape {self.shape}"
            )
        return self._permuted(norm)

    def _permuted(self, perm) -> "Layout":
        return Layout._trusted(
            tuple([self.shape[p] for p in perm]), tuple([self.stride[p] for p in perm]), self.offset
        )

    def broadcast_as(self, shape) -> "Layout":
        """New leading dims and stretched size-1 dims read the same elements (stride 0)."""
        return self._kept(("broadcast_as", shape), self._broadcast_as, shape)

    def _broadcast_as(self, shape) -> "Layout":
        target = as_int_tuple("broadcast_as", "shape", shape)
        if target == self.shape:
            return self  # immutable: the same view
        lead = len(target) - self.ndim
        if lead < 0:
            raise ShapeError(f"broadcast_as: cannot broadcast {self.shape} to {target} (fewer dims)")
        out_shape, out_stride = list(target[:lead]), [0] * lead
        for n, s, want in zip(self.shape, self.stride, target[lead:]):
            if want == -1 or want == n:
                out_shape.append(n)
                out_stride.append(s)
            elif n == 1 and want >= 0:
                out_shape.append(want)
                out_stride.append(0)
            else:
                raise ShapeError(f"broadcast_as: cannot broadcast {self.shape} to {target}")
        if any(n < 0 for n in out_shape):
            raise ShapeError(f"broadcast_as: cannot broadcast {self.shape} to {target} (-1 in a new dim)")
        out = Layout(out_shape, out_stride, self.offset)
        if out.numel >= 2**63:  # the only view that adds elements: keep every count in int64, as NumPy does
            raise ShapeError(
                f"broadcast_as: {self.shape} to {target} gives {out.numel} elements, more than int64 holds")
        return out

    def unsqueeze(self, dim) -> "Layout":
        d = norm_dim("unsqueeze", dim, self.ndim, extra=1)
        # A size-1 dim never moves the address; candle (seed 004) repeats the next dim's stride.
        s = self.stride[d] if d < self.ndim else 1
        return Layout._trusted(self.shape[:d] + (1,) + self.shape[d:], self.stride[:d] + (s,) + self.stride[d:],
                               self.offset)

    def squeeze(self, dim=None) -> "Layout":
        """Drop size-1 dims; a named dim that is not 1 is left alone (PyTorch semantics)."""
        return self._kept(("squeeze", dim), self._squeeze, dim)

    def _squeeze(self, dim) -> "Layout":
        if dim is None:
            drop = {d for d, n in enumerate(self.shape) if n == 1}
        else:
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            drop = {d for d in (norm_dim("squeeze", x, self.ndim) for x in dims) if self.shape[d] == 1}
        keep = [d for d in range(self.ndim) if d not in drop]
        return Layout._trusted(tuple(self.shape[d] for d in keep), tuple(self.stride[d] for d in keep), self.offset)

    def flip(self, dims) -> "Layout":
        """Reverse dims: the stride changes sign and the offset moves to the last element."""
        dims = dims if isinstance(dims, (tuple, list)) else (dims,)
        norm = [norm_dim("flip", d, self.ndim) for d in dims]
        if len(set(norm)) != len(norm):
            raise ShapeError(f"flip: dims {tuple(dims)} repeat a dim (shape {self.shape})")
        shape, stride, offset = self.shape, list(self.stride), self.offset
        if 0 in shape:
            offset = self.offset
            for d in norm:
                stride[d] = -stride[d]
            return Layout(shape, stride, offset)
        for d in norm:
            offset += (shape[d] - 1) * stride[d]
            stride[d] = -stride[d]
        return Layout(shape, stride, offset)

    def reshape_view(self, shape) -> "Layout | None":
        """The view with ``shape`` over the same elements, or None when none exists.

        Dims are split into chunks that are dense within themselves (size-1 dims
        never end a chunk); the new shape must split into chunks of the same
        element counts, each new stride being the chunk's innermost stride times
        the new sizes to its right.  This is PyTorch's computeStride rule.
        """
        return self._kept(("reshape", shape), self._reshape_view, shape)

    def _reshape_view(self, shape) -> "Layout | None":
        new = infer_shape("reshape", shape, self.numel)
        old_shape, old_stride = self.shape, self.stride
        if self.numel == 0 or not old_shape:
            return Layout(new, contiguous_strides(new), self.offset)
        new_stride = [0] * len(new)
        view_d = len(new) - 1
        base = old_stride[-1]
        tensor_numel = view_numel = 1
        for d in range(len(old_shape) - 1, -1, -1):
            tensor_numel *= old_shape[d]
            if d == 0 or (old_shape[d - 1] != 1 and old_stride[d - 1] != tensor_numel * base):
                while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                    new_stride[view_d] = view_numel * base
                    view_numel *= new[view_d]
                    view_d -= 1
                if view_numel != tensor_numel:
                    return None
                if d > 0:
                    base = old_stride[d - 1]
                    tensor_numel = view_numel = 1
        if view_d != -1:
            return None
        return Layout(new, new_stride, self.offset)

    # -- extent (the other walks and analyses: see the module docstring) --
    def span(self) -> tuple[int, int]:
        """``(lowest, highest + 1)`` buffer offsets the layout reaches; ``(offset, offset)`` when empty.

        ``highest + 1 - lowest`` is ``cosize``: the buffer length the view needs, which is
        what must be allocated (seed 003: 12 elements of shape (4, 3) strides (20, 2) span
        67 offsets)."""
        if 0 in self.shape:
            return self.offset, self.offset
        lo = hi = self.offset
        for n, s in zip(self.shape, self.stride):
            reach = (n - 1) * s
            if reach < 0:
                lo += reach
            else:
                hi += reach
        return lo, hi + 1

    @property
    def cosize(self) -> int:
        lo, hi = self.span()
        return hi - lo



# Layout's slots are written through their descriptors (``__setattr__`` refuses): a third
# cheaper than ``object.__setattr__``, on the path of every view.
_SET_SHAPE, _SET_STRIDE, _SET_OFFSET, _SET_HASH, _SET_DENSE, _SET_DERIVED, _SET_SERIAL = (
    Layout.__dict__[n].__set__ for n in Layout.__slots__)

# Layout.serial's table: value -> number
SERIALS_MAX = 1 << 16
_SERIALS: dict = {}
_NEXT_SERIAL = itertools.count(1)


def _fill(self: Layout, shape: tuple, stride: tuple, offset: int) -> None:
    _SET_SHAPE(self, shape)
    _SET_STRIDE(self, stride)
    _SET_OFFSET(self, offset)
    _SET_HASH(self, None)  # computed on first use
    _SET_DENSE(self, None)
    _SET_DERIVED(self, None)
    _SET_SERIAL(self, None)


# Views kept per layout (``Layout.derived``): a loop over ``x[i]`` would otherwise keep one
# per step; past this many the store starts again.
DERIVED_MAX = 32


def keep_derived(derived: dict, key, view: "Layout") -> "Layout":
    """Keep ``view`` in a layout's ``derived()`` store under ``key``; returns ``view``."""
    if len(derived) >= DERIVED_MAX:
        derived.clear()
    derived[key] = view
    return view


@lru_cache(maxsize=1024)
def contiguous_layout(shape: tuple[int, ...]) -> Layout:
    """The row-major layout of ``shape`` at offset 0, one shared object per shape."""
    # Every fresh output asks for one; layouts are immutable, so one per shape serves all.
    return Layout(shape, contiguous_strides(shape), 0)
