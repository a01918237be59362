"""strided: one shared buffer seen through layouts."""

from .errors import (
    DTypeError,
    LayoutBoundsError,
    ShapeError,
    StridedError,
    StridedIndexError,
    TooHardError,
)
from .layout import Layout, MultipleBlocks, NdIter, SingleBlock, StridedIndex, UniformBlocks

__version__ = "0.1.0"
