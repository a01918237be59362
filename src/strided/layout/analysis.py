"""What a layout touches: its span in the buffer and its validity against a buffer.

Pure integers.  The CANN-style analysis (overlap, classification,
decomposition) builds on these two facts.
"""

from __future__ import annotations

from ..errors import LayoutBoundsError
from .layout import Layout


def span(layout: Layout) -> tuple[int, int]:
    """``(lowest, highest + 1)`` buffer offsets the layout reaches; ``(offset, offset)`` when empty."""
    if layout.numel == 0:
        return layout.offset, layout.offset
    lo = hi = layout.offset
    for n, s in zip(layout.shape, layout.stride):
        reach = (n - 1) * s
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi + 1


def validate(layout: Layout, buffer_len: int) -> Layout:
    """Return the layout when every element lies in ``[0, buffer_len)``, else raise."""
    if layout.numel == 0:
        return layout
    lo, hi = span(layout)
    if lo < 0 or hi > buffer_len:
        raise LayoutBoundsError(
            f"layout out of bounds: shape {layout.shape}, stride {layout.stride}, "
            f"offset {layout.offset} spans [{lo}, {hi}) but the buffer holds {buffer_len} elements"
        )
    return layout
