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
from . import algebra, int_tuple, layout, memory, swizzle, tv
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

# The public names are the ones imported above, each listed in its own module's __all__; a
# module's __all__ also names helpers the package leaves out, and where two modules define a
# name (int_tuple's size and layout's, layout's slice_and_offset and swizzle's) the package
# exports the one it imports.
__all__ = list(dict.fromkeys(
    name
    for module in (int_tuple, layout, swizzle, tv, memory, algebra)
    for name in module.__all__
    if globals().get(name) is getattr(module, name)
))
