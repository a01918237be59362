"""Sliding windows: ``strided.sliding_window_view`` and ``Tensor.unfold``, views of one buffer.

Both are layout arithmetic (``strided.layout.windows``): no element is
copied.  Windows that overlap share memory, so writing through them is
refused unless ``allow_overlap=True`` (``copy_``, ``fill_``), the rule of
every write through an overlapping view.  Their gradient accumulates: an
element that appears in three windows gets the sum of the three gradients.
"""

from __future__ import annotations

from ..creation import expect_tensor
from ..core.errors import ShapeError
from ..layout import windows
from ..tensor import Tensor

__all__ = ["unfold", "sliding_window_view"]


def unfold(t: Tensor, dim: int, size: int, step: int) -> Tensor:
    """PyTorch's ``Tensor.unfold``: dim ``dim`` becomes the windows of ``size`` every ``step``.

    The windows are a new last dim.  ``arange(6).unfold(0, 3, 1)`` is the
    (4, 3) view ``[[0,1,2],[1,2,3],[2,3,4],[3,4,5]]``, strides (1, 1).
    """
    t = expect_tensor("unfold", t)
    return t._view(windows.unfold(t.layout, dim, size, step), "unfold", dim, size, step)


def sliding_window_view(x: Tensor, window_shape, axis=None, *, step=1) -> Tensor:
    """NumPy's ``sliding_window_view``, plus ``step``: windows of ``window_shape`` over ``axis``.

    The result keeps x's dims (each windowed one shortened to the number of
    window starts) and appends one dim per entry of ``window_shape``, in the
    order of ``axis`` (all dims when None).  ``step`` (an int or one per
    window dim) spaces the window starts.  A view on x's buffer.
    """
    op = "sliding_window_view"
    x = expect_tensor(op, x)
    axis, window_shape, step = windows.window_axes(x.ndim, window_shape, axis, step, op)
    out = x
    for a, w, s in zip(axis, window_shape, step):
        if w > out.shape[a]:
            raise ShapeError(
                f"{op}: the window {w} along axis {a} is larger than what is left of it "
                f"({out.shape[a]}; input shape {x.shape}, window_shape {window_shape})"
            )
        out = unfold(out, a, w, s)
    return out
