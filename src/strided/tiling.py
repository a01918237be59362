"""Tiling tensors with the CuTe algebra: a tensor's layout divided into tiles, as views.

A flat tensor layout is the CuTe layout ``shape:stride`` plus an offset (both
map a coordinate to ``sum(c_k * stride_k)``), so ``zipped_divide`` of it by a
tile shape is ``((tile modes), (rest modes))``: the first mode walks inside a
tile, the second picks the tile.  Flattened, that is an ordinary strided view
of the same buffer; nothing is copied.
"""

from __future__ import annotations

from . import cute
from .core.errors import ShapeError
from .layout.layout import as_int_tuple
from .tensor import Tensor


def cute_layout(t: Tensor) -> "cute.Layout":
    """The CuTe layout of ``t``'s coordinates (the offset is kept apart by the tensor)."""
    return cute.Layout(tuple(t.shape), tuple(t.stride)) if t.ndim else cute.Layout(1, 0)


def _tiler(t: Tensor, tile_shape) -> tuple:
    tile_shape = as_int_tuple("tile", "tile shape", tile_shape)
    if len(tile_shape) != t.ndim:
        raise ShapeError(f"tile: expected one tile size per dim of shape {t.shape}, got {tile_shape}")
    for n, b in zip(t.shape, tile_shape):
        if b <= 0 or n % b:
            raise ShapeError(f"tile: tile {tile_shape} does not divide shape {t.shape}")
    return tuple(cute.Layout(b, 1) for b in tile_shape)


def tiles(t: Tensor, tile_shape) -> Tensor:
    """All tiles as one view of shape ``tile_shape + (number of tiles per dim)``.

    ``tiles(t, (bm, bn))[i, j, p, q] == t[p*bm + i, q*bn + j]``: CuTe's
    ``zipped_divide`` flattened into a flat layout over the same buffer.
    """
    divided = cute.zipped_divide(cute_layout(t), _tiler(t, tile_shape))
    return t.view_as(divided, offset=t.offset)


def local_tile(t: Tensor, tile_shape, coord) -> Tensor:
    """Tile number ``coord`` of ``t`` (CuTe's ``local_tile``): a view of shape ``tile_shape``."""
    divided = cute.zipped_divide(cute_layout(t), _tiler(t, tile_shape))
    coord = as_int_tuple("local_tile", "tile coordinate", coord)
    rest = divided[1]
    if len(coord) != t.ndim or any(not 0 <= c < n for c, n in zip(coord, cute.flatten(rest.shape))):
        raise ShapeError(f"local_tile: tile coordinate {coord} is outside the tile grid {cute.flatten(rest.shape)}")
    tile, offset = cute.slice_and_offset((None, coord), divided)
    return t.view_as(tile, offset=t.offset + offset)
