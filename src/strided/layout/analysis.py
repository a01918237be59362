"""What a layout touches, and what kind of view it is (the CANN ops-math model).

Pure integers, no numpy.  Everything here answers questions about the set of
buffer offsets ``offset + sum(i_k * stride_k)`` a layout reaches:

* ``span`` / ``validate``: the lowest and one-past-highest offset, and whether
  they fit a buffer.
* ``is_non_overlapping``: whether two distinct indices share an offset (exact).
* ``may_overlap`` / ``overlaps``: whether two layouts over one buffer can touch
  a common element (extent test / exact).
* ``classify``: which of CANN's primitive view kinds (offset, slice, strided
  slice, transpose, broadcast, flip, overlap) a layout shows.
* ``supports_reduce_fast_path``: ops-math's ``IsReduceNonContiguousSupport``
  layout predicate.
* ``decompose`` / ``replay``: the layout as a chain of primitive steps applied
  to a dense base, like ops-math's ``ContiguousParam``.

The overlap questions are ``strided.layout.overlap``'s (re-exported here): bounded
knapsack problems, NP-hard in general, answered by exact reductions and then an exact
search whose work is capped; past the cap ``TooHardError`` is raised instead of a guess.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from math import gcd, prod

from ..core.errors import LayoutBoundsError, ShapeError, StridedIndexError, TooHardError
from .layout import Layout
from .overlap import (  # the overlap search, re-exported (this module's __all__)
    DEFAULT_MAX_WORK, MAX_PASSES, ceil_div, check_layout as _check_layout, check_work as _check_work,
    is_non_overlapping, may_overlap, overlaps,
)

__all__ = [
    "span",
    "validate",
    "is_non_overlapping",
    "may_overlap",
    "overlaps",
    "Classification",
    "classify",
    "supports_reduce_fast_path",
    "Offset",
    "Slice",
    "StridedSlice",
    "Permute",
    "Broadcast",
    "Flip",
    "Reshape",
    "decompose",
    "replay",
    "equivalent",
    "DEFAULT_MAX_WORK",
    "MAX_PASSES",
]

# ---------------------------------------------------------------------------
# span and bounds
# ---------------------------------------------------------------------------


def span(layout: Layout) -> tuple[int, int]:
    """``(lowest, highest + 1)`` buffer offsets the layout reaches; ``(offset, offset)`` when empty.

    ``highest + 1 - lowest`` is ``Layout.cosize``: the buffer length the view
    needs, which is what must be allocated (seed 003: 12 elements of shape
    (4, 3) strides (20, 2) span 67 offsets).  ``Layout.span()`` computes it."""
    return _check_layout("span", layout).span()


_INT64_MAX = 2**63 - 1


def validate(layout: Layout, buffer_len: int) -> Layout:
    """Return the layout when every element lies in ``[0, buffer_len)`` and every integer of it
    fits in int64, else raise LayoutBoundsError.  An empty layout touches nothing: only its
    integers are checked."""
    _check_layout("validate", layout)
    try:
        buffer_len = operator.index(buffer_len)
    except TypeError:
        raise ShapeError(f"validate: expected an integer buffer length, got {buffer_len!r}") from None
    if layout.numel:
        lo, hi = layout.span()
        if lo < 0 or hi > buffer_len:
            raise LayoutBoundsError(
                f"validate: layout out of bounds: shape {layout.shape}, stride {layout.stride}, "
                f"offset {layout.offset} spans [{lo}, {hi}) but the buffer holds {buffer_len} elements"
            )
    # In bounds is not enough: kernels index with int64, and a size-1 dim's stride or an empty
    # layout's sizes are free to be anything.
    ints = layout.shape + layout.stride + (layout.offset, layout.numel)
    if any(not -_INT64_MAX - 1 <= v <= _INT64_MAX for v in ints):
        raise LayoutBoundsError(
            f"validate: layout shape {layout.shape}, stride {layout.stride}, offset {layout.offset} "
            f"(numel {layout.numel}) does not fit in int64"
        )
    return layout


# ---------------------------------------------------------------------------
# the dense-base structure shared by classify and decompose
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Core:
    """The moving dims, sorted by |stride| descending and coalesced, over a dense base.

    ``dims``: original dim indices of the moving dims in sorted order;
    ``groups``: for each coalesced dim, how many sorted dims it merges;
    ``sizes``/``strides``: the coalesced dims (strides > 0, descending);
    ``bases``: the row-major strides ``B`` of the dense base, ``B[d] = gcd of
    strides[0..d]`` except ``B[-1] = 1``; ``steps``: ``strides[d] // B[d]``.
    """

    dims: tuple[int, ...]
    groups: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    bases: tuple[int, ...]
    steps: tuple[int, ...]

    def nests(self) -> bool:
        """Whether every dim's window fits in one row of the next outer base dim."""
        return all(
            (self.sizes[d] - 1) * self.strides[d] + self.bases[d] <= self.bases[d - 1]
            for d in range(1, len(self.sizes))
        )


def _core(layout: Layout) -> _Core:
    shape, stride = layout.shape, layout.stride
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1 and stride[d] != 0), key=lambda d: -abs(stride[d]))
    groups, sizes, strides = [], [], []
    for d in dims:
        n, s = shape[d], abs(stride[d])
        if strides and strides[-1] == n * s:
            # The outer dim steps exactly over this one: one dim of a dense base.
            groups[-1] += 1
            sizes[-1] *= n
            strides[-1] = s
        else:
            groups.append(1)
            sizes.append(n)
            strides.append(s)
    k = len(strides)
    bases, g = [], 0
    for d, s in enumerate(strides):
        g = gcd(g, s)
        bases.append(g if d < k - 1 else 1)
    steps = [s // b for s, b in zip(strides, bases)]
    return _Core(tuple(dims), tuple(groups), tuple(sizes), tuple(strides), tuple(bases), tuple(steps))


# ---------------------------------------------------------------------------
# classification
# ---------------------------------------------------------------------------

_KINDS = ("contiguous", "offset", "slice", "strided_slice", "transpose", "broadcast", "flip", "overlapping")


@dataclass(frozen=True)
class Classification:
    """Which primitive view kinds a layout shows (see ``classify`` for the definitions)."""

    contiguous: bool
    offset: bool
    slice: bool
    strided_slice: bool
    transpose: bool
    broadcast: bool
    flip: bool
    overlapping: bool | None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The names of the flags that are True, in field order."""
        return tuple(k for k in _KINDS if getattr(self, k) is True)

    def __str__(self):
        text = ", ".join(self.kinds) or "none"
        if self.overlapping is None:
            text += " (overlap undecided)"
        return text


def classify(layout: Layout, *, max_work: int = DEFAULT_MAX_WORK) -> Classification:
    """The view kinds of a layout, each a precise predicate.

    "Moving dims" are the dims with size > 1 and stride != 0.  The *core* is the
    moving dims with |stride|, sorted by |stride| descending, adjacent ones
    merged when the outer stride equals the inner size times the inner stride;
    its dense base has row-major strides ``B[d] = gcd(core strides[0..d])``
    (``B[last] = 1``) and each core dim steps ``step[d] = stride[d] / B[d]``
    base elements (the largest base the strides allow: rows stay rows).

    - contiguous: ``Layout.is_contiguous()`` (row-major dense; size-1 dims and
      the offset ignored).
    - offset: ``offset != 0``.
    - slice: some core dim ``d >= 1`` with step 1 does not fill its base row:
      ``(size[d] - 1) * stride[d] + B[d] < B[d-1]`` (rows of a bigger buffer,
      seed 003 example 1).
    - strided_slice: some core dim has ``step[d] > 1`` (the innermost one moves
      by more than one element, or a dim skips base rows: seed example 2).  A
      stepped dim's own window is part of its strided slice, not a slice.
    - transpose: the |strides| of the moving dims, in dim order, are not
      non-increasing (equal |strides| are an overlap, not a transpose).
    - broadcast: a dim with size > 1 and stride 0.
    - flip: a dim with size > 1 and a negative stride.
    - overlapping: ``not is_non_overlapping(layout)``, exact, so a broadcast is
      also overlapping; ``None`` when that question exceeds ``max_work``
      (``overlapping`` is then absent from ``kinds``).
    """
    _check_layout("classify", layout)
    max_work = _check_work("classify", max_work)
    shape, stride = layout.shape, layout.stride
    core = _core(layout)
    sliced = any(
        core.steps[d] == 1 and (core.sizes[d] - 1) * core.strides[d] + core.bases[d] < core.bases[d - 1]
        for d in range(1, len(core.sizes))
    )
    moving = [abs(s) for n, s in zip(shape, stride) if n > 1 and s != 0]
    try:
        overlapping = not is_non_overlapping(layout, max_work=max_work)
    except TooHardError:
        overlapping = None
    return Classification(
        contiguous=layout.is_contiguous(),
        offset=layout.offset != 0,
        slice=sliced,
        strided_slice=any(step > 1 for step in core.steps),
        transpose=any(x < y for x, y in zip(moving, moving[1:])),
        broadcast=any(n > 1 and s == 0 for n, s in zip(shape, stride)),
        flip=any(n > 1 and s < 0 for n, s in zip(shape, stride)),
        overlapping=overlapping,
    )


def supports_reduce_fast_path(layout: Layout) -> bool:
    """ops-math's ``IsReduceNonContiguousSupport`` layout test (seed 003), verbatim.

    True when ``1 <= rank <= 4``, every stride is positive (so the last one is
    not 0), ``(shape[i] - 1) * stride[i] < stride[i-1]`` for each i >= 1 and
    ``stride[i] >= stride[i+1]`` (row-major order, no transpose).  As in
    ops-math, size-1 dims get no exemption.  The op-level condition (not every
    reduced axis of size 1) is the caller's.

    The extent test compares each dim with the next outer one only, so it does
    not rule out overlap from three dims on: (2,2,2):(3,2,1) passes and reads
    offset 3 twice.  ``is_non_overlapping`` is the exact answer.
    """
    _check_layout("supports_reduce_fast_path", layout)
    shape, stride = layout.shape, layout.stride
    n = len(shape)
    if not 1 <= n <= 4 or any(s <= 0 for s in stride):
        return False
    if any((shape[i] - 1) * stride[i] >= stride[i - 1] for i in range(1, n)):
        return False
    return all(stride[i] >= stride[i + 1] for i in range(n - 1))


# ---------------------------------------------------------------------------
# decomposition into primitive steps
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Offset:
    """Move the view by ``offset`` elements (CANN's view offset)."""

    offset: int

    def apply(self, layout: Layout) -> Layout:
        return Layout(layout.shape, layout.stride, layout.offset + self.offset)

    def __str__(self):
        return f"offset {self.offset:+d}"


def _check_window(op: str, layout: Layout, dim: int, start: int, stop: int) -> None:
    if not 0 <= dim < layout.ndim:
        raise StridedIndexError(f"{op}: dim {dim} out of range for shape {layout.shape}")
    n = layout.shape[dim]
    if not 0 <= start <= stop <= n:
        raise StridedIndexError(
            f"{op}: window [{start}, {stop}) is not inside dim {dim} of size {n} (shape {layout.shape})"
        )


@dataclass(frozen=True)
class Slice:
    """Keep ``[start, stop)`` of ``dim`` (step 1); the window must lie inside the dim."""

    dim: int
    start: int
    stop: int

    def apply(self, layout: Layout) -> Layout:
        _check_window("Slice", layout, self.dim, self.start, self.stop)
        return layout.narrow(self.dim, self.start, self.stop - self.start)

    def __str__(self):
        return f"slice dim {self.dim} [{self.start}:{self.stop}]"


@dataclass(frozen=True)
class StridedSlice:
    """Keep ``range(start, stop, step)`` of ``dim``, ``step >= 1``, inside the dim."""

    dim: int
    start: int
    stop: int
    step: int

    def apply(self, layout: Layout) -> Layout:
        _check_window("StridedSlice", layout, self.dim, self.start, self.stop)
        if self.step < 1:
            raise ShapeError(f"StridedSlice: step must be >= 1 (use Flip to reverse), got {self.step}")
        return layout.slice(self.dim, self.start, self.stop, self.step)

    def __str__(self):
        return f"strided slice dim {self.dim} [{self.start}:{self.stop}:{self.step}]"


@dataclass(frozen=True)
class Permute:
    """Result dim ``i`` is input dim ``dims[i]``."""

    dims: tuple[int, ...]

    def apply(self, layout: Layout) -> Layout:
        return layout.permute(self.dims)

    def __str__(self):
        return f"permute {self.dims}"


@dataclass(frozen=True)
class Broadcast:
    """``broadcast_as(shape)``: size-1 dims and new leading dims get stride 0."""

    shape: tuple[int, ...]

    def apply(self, layout: Layout) -> Layout:
        return layout.broadcast_as(self.shape)

    def __str__(self):
        return f"broadcast to {self.shape}"


@dataclass(frozen=True)
class Flip:
    """Reverse ``dims`` (stride sign flips, offset moves to the last element)."""

    dims: tuple[int, ...]

    def apply(self, layout: Layout) -> Layout:
        return layout.flip(self.dims)

    def __str__(self):
        return f"flip {self.dims}"


@dataclass(frozen=True)
class Reshape:
    """``reshape_view(shape)``; replay fails when no view exists."""

    shape: tuple[int, ...]

    def apply(self, layout: Layout) -> Layout:
        out = layout.reshape_view(self.shape)
        if out is None:
            raise ShapeError(f"Reshape: {layout} has no view of shape {self.shape}")
        return out

    def __str__(self):
        return f"reshape to {self.shape}"


_STEPS = (Offset, Slice, StridedSlice, Permute, Broadcast, Flip, Reshape)


def replay(base_shape, steps) -> Layout:
    """Apply ``steps`` in order to ``Layout.contiguous(base_shape)`` (offset 0).

    Raises LayoutBoundsError when the result leaves the base buffer of
    ``prod(base_shape)`` elements, and the step's own error when one cannot
    apply."""
    layout = Layout.contiguous(base_shape)
    for step in steps:
        if not isinstance(step, _STEPS):
            raise ShapeError(
                f"replay: expected a step ({', '.join(t.__name__ for t in _STEPS)}), got {step!r}"
            )
        layout = step.apply(layout)
    lo, hi = span(layout)
    if layout.numel and (lo < 0 or hi > prod(base_shape)):
        raise LayoutBoundsError(
            f"replay: the steps end at {layout} spanning [{lo}, {hi}), outside the base "
            f"{tuple(base_shape)} of {prod(base_shape)} elements"
        )
    return layout


def equivalent(a: Layout, b: Layout) -> bool:
    """Same shape and the same offset for every index.

    That is: equal shapes and, unless empty, equal offsets and equal strides on
    every dim of size > 1 (a size-1 dim's stride is never used)."""
    _check_layout("equivalent", a)
    _check_layout("equivalent", b)
    if a.shape != b.shape:
        return False
    if a.numel == 0:
        return True
    return a.offset == b.offset and all(
        s == t for n, s, t in zip(a.shape, a.stride, b.stride) if n > 1
    )


def decompose(layout: Layout):
    """``(base_shape, steps)`` with ``equivalent(replay(base_shape, steps), layout)``, or None.

    The steps come in this order, each only when needed:

    1. ``Slice`` / ``StridedSlice`` on each dim of the dense base, whose dims
       are the layout's *core* (see ``classify``): the moving dims sorted by
       |stride| descending and coalesced.  Row-major base strides are
       ``B[d] = gcd(core strides[0..d])`` (``B[-1] = 1``): the largest base the
       strides allow, so rows of a matrix stay rows (seed example 1 is a
       ``Slice`` of each dim of an (8, 10) base, example 2 a ``Slice`` of the
       rows and a ``StridedSlice`` step 2 of the columns of a (5, 20) base).
       The lowest offset is written in the base's mixed radix as the slice
       starts; when a digit does not leave room for its window the starts
       are 0 and
    2. ``Offset(lowest offset)`` moves the window instead.
    3. ``Reshape`` splits coalesced dims back; ``Permute`` restores the dim
       order; ``Flip`` the negative strides; ``Reshape`` inserts the size-1
       and broadcast dims as size 1; ``Broadcast`` stretches the latter.

    The base is the smallest with these row strides that holds the window.
    An empty layout is ``(shape, [])``.  Returns None when the lowest offset
    is negative (no base buffer holds it) or when the core does not nest in
    its base (some ``(size[d]-1) * stride[d] + B[d] > B[d-1]``); that happens
    exactly when the layout, broadcast dims aside, overlaps (e.g. (3,):(0,)
    is fine but (2, 2):(1, 1) is not), or interleaves, e.g. (2, 3):(6, 4)
    whose offsets {0, 4, 8, 6, 10, 14} no row structure separates.  Layouts
    made from a dense one by narrow / slice / select / permute / transpose /
    flip / broadcast / (un)squeeze / reshape_view always decompose.
    """
    _check_layout("decompose", layout)
    shape, stride = layout.shape, layout.stride
    if layout.numel == 0:
        return tuple(shape), []
    lo = span(layout)[0]
    if lo < 0:
        return None
    core = _core(layout)
    pre_shape = tuple(1 if s == 0 else n for n, s in zip(shape, stride))
    broadcast = pre_shape != shape
    steps: list = []
    if not core.sizes:
        # A single element (possibly broadcast): a 1-element window of a row.
        base = (lo + 1,)
        if lo:
            steps.append(Slice(0, lo, lo + 1))
        current = (1,)
    else:
        if not core.nests():
            return None
        k = len(core.sizes)
        b, sizes, steps_d = core.bases, core.sizes, core.steps
        base_dims = [0] + [b[d - 1] // b[d] for d in range(1, k)]
        starts = [lo // b[0]] + [(lo % b[d - 1]) // b[d] for d in range(1, k)]
        digits = all(starts[d] + (sizes[d] - 1) * steps_d[d] < base_dims[d] for d in range(1, k))
        if digits:
            base_dims[0] = starts[0] + (sizes[0] - 1) * steps_d[0] + 1
        else:
            starts = [0] * k
            reach = sum((n - 1) * s for n, s in zip(sizes, core.strides))
            base_dims[0] = max((sizes[0] - 1) * steps_d[0] + 1, ceil_div(lo + reach + 1, b[0]))
        base = tuple(base_dims)
        for d in range(k):
            stop = starts[d] + (sizes[d] - 1) * steps_d[d] + 1
            if steps_d[d] > 1:
                steps.append(StridedSlice(d, starts[d], stop, steps_d[d]))
            elif starts[d] or stop != base[d]:
                steps.append(Slice(d, starts[d], stop))
        if not digits and lo:
            steps.append(Offset(lo))
        sorted_shape = tuple(shape[d] for d in core.dims)
        if len(sorted_shape) != k:
            steps.append(Reshape(sorted_shape))
        # Sorted position of each moving dim, in the layout's own dim order.
        moving = sorted(core.dims)
        position = {d: i for i, d in enumerate(core.dims)}
        perm = tuple(position[d] for d in moving)
        if perm != tuple(range(len(perm))):
            steps.append(Permute(perm))
        flips = tuple(i for i, d in enumerate(moving) if stride[d] < 0)
        if flips:
            steps.append(Flip(flips))
        current = tuple(shape[d] for d in moving)
    if current != pre_shape:
        steps.append(Reshape(pre_shape))
    if broadcast:
        steps.append(Broadcast(tuple(shape)))
    return base, steps
