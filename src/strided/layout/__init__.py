"""Flat layouts: pure integer shape/stride/offset algebra, iteration and analysis."""

from .layout import Layout, contiguous_strides, column_major_strides
from .iterate import MultipleBlocks, NdIter, SingleBlock, StridedIndex, UniformBlocks, strided_blocks

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
