"""Thread-value layouts: which thread holds which value of a tile (CuTe DSL's ``make_layout_tv``).

``make_layout_tv(thr_layout, val_layout)`` repeats the values one thread
holds (``val_layout``: (ValM, ValN) -> value index) over the threads
(``thr_layout``: (ThrM, ThrN) -> thread index).  The tile is their raked
product, ``layout_mn``: (M, N) -> thread + size(thr) * value, each thread's
values side by side and the threads interleaved by whole value blocks.  Its
right inverse, read as (thread, value), is the TV layout:
(thread, value) -> the column-major index of (m, n) in the (M, N) tile.
"""

from __future__ import annotations

from typing import NamedTuple

from ..core.errors import ShapeError
from .algebra import composition, raked_product, right_inverse
from .int_tuple import is_tuple, product
from .layout import Layout

__all__ = ["make_layout_tv", "product_each", "tv_grid", "TVLayout"]


class TVLayout(NamedTuple):
    """``(tiler_mn, layout_tv)``, a tuple as CuTe DSL returns it, that a notebook draws."""

    tiler_mn: tuple
    layout_tv: Layout


def product_each(shape):
    """The size of each top-level mode: ``product_each(((2,2),(3,2))) == (4, 6)``.

    Always a tuple, as C++ (which wraps an integer first): ``product_each(16) == (16,)``.
    """
    return tuple(product(m) for m in shape) if is_tuple(shape) else (product(shape),)


def make_layout_tv(thr_layout, val_layout):
    """``(tiler_mn, layout_tv)``: the tile's shape and (thread, value) -> index in the tile.

    CuTe DSL's example: threads ``(2,3):(3,1)`` holding values ``(2,2):(2,1)``
    make a ``(4, 6)`` tile with TV layout ``((3,2),(2,2)):((8,2),(4,1))``.
    Both layouts must be compact (each a bijection onto ``0 .. size-1``);
    otherwise some (m, n) of the tile has no thread, and ShapeError says so.
    """
    for what, lay in (("thr_layout", thr_layout), ("val_layout", val_layout)):
        if not isinstance(lay, Layout):
            raise ShapeError(f"make_layout_tv: {what} must be a cute Layout, got {lay!r}")
        if sorted(lay(i) for i in range(lay.size)) != list(range(lay.size)):
            raise ShapeError(
                f"make_layout_tv: {what} {lay} is not compact: its offsets are not 0 .. {lay.size - 1}, "
                f"so thread and value indices would not cover the tile"
            )
    layout_mn = raked_product(thr_layout, val_layout)
    inverse = right_inverse(layout_mn)
    if inverse.size != layout_mn.size:
        raise ShapeError(
            f"make_layout_tv: the tile {layout_mn} of {thr_layout} and {val_layout} is not a bijection "
            f"onto its {layout_mn.size} (thread, value) pairs"
        )
    layout_tv = composition(inverse, Layout((thr_layout.size, val_layout.size)))
    return TVLayout(product_each(layout_mn.shape), layout_tv)


def tv_grid(tiler_mn, layout_tv):
    """``{(m, n): (thread, value)}`` for every cell of the (M, N) tile of a TV layout."""
    if not (is_tuple(tiler_mn) and len(tiler_mn) == 2):
        raise ShapeError(f"tv_grid: expected a rank-2 tiler (M, N), got {tiler_mn!r}")
    m_size, n_size = tiler_mn
    threads, values = layout_tv[0].size, layout_tv[1].size
    cells = {}
    for t in range(threads):
        for v in range(values):
            i = layout_tv(t, v)
            m, n = i % m_size, i // m_size
            if (m, n) in cells or not 0 <= n < n_size:
                raise ShapeError(
                    f"tv_grid: {layout_tv} sends (thread {t}, value {v}) to index {i}, which is outside "
                    f"the {m_size}x{n_size} tile or already held"
                )
            cells[(m, n)] = (t, v)
    return cells
