"""strided.cute: the hierarchical CuTe layout algebra, exact, in pure Python.

A :class:`Layout` is a function from (nested) coordinates to offsets given by a
nested shape and a congruent nested stride; ``(4,(2,4)):(2,(1,8))`` is the
layout of seed 002's figure 7-c.  The algebra (coalesce, composition,
complement, inverses, divides and products) follows C++ CuTe with static
integers, and raises :class:`strided.errors.ShapeError` wherever C++ would
return a wrong layout.  ``static(n)`` marks compile-time integers (printed
``_n``); plain ints are dynamic.  Nothing here depends on numpy or on the flat
``strided.Layout`` (``Layout.flatten()`` imports it on demand).
"""

from .algebra import (
    blocked_product,
    coalesce,
    complement,
    composition,
    filter,
    flat_divide,
    flat_product,
    left_inverse,
    logical_divide,
    logical_product,
    raked_product,
    right_inverse,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from .int_tuple import (
    Integer,
    Static,
    ceil_div,
    compatible,
    congruent,
    crd2crd,
    crd2idx,
    dice,
    has_none,
    idx2crd,
    inner_product,
    is_int,
    is_tuple,
    prefix_product,
    product,
    shape_div,
    slice_,
    unflatten,
    weakly_congruent,
)
from .memory import Sectors, bank_conflicts, bank_of, global_sectors
from .swizzle import ComposedLayout, Swizzle, make_swizzle, slice_and_offset
from .tv import TVLayout, make_layout_tv, product_each, tv_grid
from . import picture  # gives the layout classes their notebook pictures
from .layout import (
    Layout,
    cosize,
    depth,
    dynamic,
    flatten,
    format_layout,
    is_static,
    make_layout,
    print_layout,
    rank,
    shape,
    size,
    static,
    stride,
)

__all__ = [
    # IntTuple helpers
    "Integer",
    "Static",
    "static",
    "dynamic",
    "is_static",
    "is_int",
    "is_tuple",
    "flatten",
    "unflatten",
    "product",
    "inner_product",
    "prefix_product",
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
    # Layout
    "Layout",
    "make_layout",
    "size",
    "cosize",
    "rank",
    "depth",
    "shape",
    "stride",
    "slice_and_offset",
    "format_layout",
    "print_layout",
    # Swizzles and composed layouts
    "Swizzle",
    "ComposedLayout",
    "make_swizzle",
    # Thread-value layouts
    "make_layout_tv",
    "TVLayout",
    "product_each",
    "tv_grid",
    # What a warp's access costs
    "bank_conflicts",
    "bank_of",
    "global_sectors",
    "Sectors",
    # Algebra
    "coalesce",
    "filter",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
]
