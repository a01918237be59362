"""Flat layouts: pure integer shape/stride/offset algebra, iteration and analysis.

The modules import downward only: ``layout`` (the Layout itself) below
``iterate`` and ``analysis``.  The Layout methods that walk or analyse a layout
are installed here, above all three, so that ``Layout`` has them whichever
module is imported first (Python runs this file before any of its modules).
"""

from . import analysis
from .iterate import MultipleBlocks, NdIter, SingleBlock, StridedIndex, UniformBlocks, strided_blocks
from .layout import Layout, column_major_strides, contiguous_strides


def _strided_index(self) -> StridedIndex:
    """Buffer offsets in row-major logical order (an odometer, iterable many times)."""
    return StridedIndex(self.shape, self.stride, self.offset)


# Each method is its module's function with the layout as first argument.
Layout.strided_index = _strided_index
Layout.strided_blocks = strided_blocks
Layout.validate = analysis.validate
Layout.is_non_overlapping = analysis.is_non_overlapping
Layout.classify = analysis.classify
Layout.supports_reduce_fast_path = analysis.supports_reduce_fast_path
Layout.decompose = analysis.decompose


def _repr_svg_(self):
    """The picture a notebook shows: the grid of offsets over its buffer (None if not drawable)."""
    from ..cute.picture import repr_svg, svg  # the pictures are strings built on cute's grid

    return repr_svg(svg, self)


Layout._repr_svg_ = _repr_svg_

__all__ = [
    "Layout",
    "contiguous_strides",
    "column_major_strides",
    "NdIter",
    "StridedIndex",
    "SingleBlock",
    "UniformBlocks",
    "MultipleBlocks",
    "strided_blocks",
]
