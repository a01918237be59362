"""Sliding windows as layout arithmetic: no element moves, only strides repeat.

``unfold(layout, dim, size, step)`` is PyTorch's ``Tensor.unfold``: dim
``dim`` becomes the window starts ``0, step, 2*step, ...`` (stride times
``step``) and a new last dim walks the ``size`` elements of each window (the
dim's own stride).  Windows that overlap (``step < size``) share offsets, so
the result is a view that overlaps itself; writes through it are refused
unless allowed, as for any overlapping view.

NumPy's ``sliding_window_view`` (with steps) is one ``unfold`` per entry of
its ``axis``, whose window dims come last in the order of ``axis``;
``window_axes`` normalises its arguments.
"""

from __future__ import annotations

from ..core.errors import ShapeError
from .layout import Layout, as_int_tuple, norm_dim

__all__ = ["unfold", "window_axes"]


def unfold(layout: Layout, dim, size, step, op: str = "unfold") -> Layout:
    """The layout of ``t.unfold(dim, size, step)`` for a tensor of layout ``layout``."""
    (size,) = as_int_tuple(op, "size", size)
    (step,) = as_int_tuple(op, "step", step)
    if size < 0:
        raise ShapeError(f"{op}: the window size must be >= 0, got {size}")
    if step < 1:
        raise ShapeError(f"{op}: the step must be >= 1, got {step}")
    shape, stride = layout.shape, layout.stride
    if not shape:
        # A 0-d tensor is one element along dim 0 (PyTorch's rule): a window of 0 or 1.
        norm_dim(op, dim, 1)
        if size > 1:
            raise ShapeError(f"{op}: a window of {size} does not fit a 0-d tensor (one element)")
        return Layout((size,), (1,), layout.offset)
    d = norm_dim(op, dim, len(shape))
    n = shape[d]
    if size > n:
        raise ShapeError(
            f"{op}: the window size {size} is larger than dim {d} of size {n} (shape {shape})"
        )
    count = (n - size) // step + 1
    return Layout(
        shape[:d] + (count,) + shape[d + 1:] + (size,),
        stride[:d] + (stride[d] * step,) + stride[d + 1:] + (stride[d],),
        layout.offset,
    )


def window_axes(ndim: int, window_shape, axis, step, op: str = "sliding_window_view"):
    """``(axis, window_shape, step)`` as tuples of one length, dims made non-negative."""
    window_shape = as_int_tuple(op, "window_shape", window_shape)
    if axis is None:
        if len(window_shape) != ndim:
            raise ShapeError(
                f"{op}: without axis, window_shape needs one entry per dim ({ndim}), got {window_shape}"
            )
        axis = tuple(range(ndim))
    else:
        axis = tuple(norm_dim(op, a, ndim) for a in as_int_tuple(op, "axis", axis))
    if len(axis) != len(window_shape):
        raise ShapeError(
            f"{op}: window_shape {window_shape} and axis {axis} must have one length"
        )
    step = as_int_tuple(op, "step", step)
    if len(step) == 1:
        step = step * len(axis)
    if len(step) != len(axis):
        raise ShapeError(f"{op}: step {step} needs one entry per window dim ({len(axis)}) or a single int")
    for w in window_shape:
        if w < 0:
            raise ShapeError(f"{op}: window_shape {window_shape} cannot contain negative sizes")
    for s in step:
        if s < 1:
            raise ShapeError(f"{op}: the step must be >= 1, got {step}")
    return axis, window_shape, step
