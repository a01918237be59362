"""What a warp's access through a layout costs, counted exactly, without a GPU.

Thread ``t`` of a warp (``0 <= t < 32``) touches the element at offset
``layout(t)``: ``element_bytes`` bytes from byte ``layout(t) * element_bytes``
of a tile whose base is aligned (to 128 bytes for shared memory, to a sector
for global memory).

Shared memory is ``banks`` banks of ``bank_bytes``-byte words; word ``w``
lives in bank ``w % banks``.  One *wavefront* delivers at most one word from
each bank, to every thread that asked for that word (a broadcast), so an
access takes as many wavefronts as the busiest bank has distinct words.
Accesses wider than a word are served in phases of ``banks * bank_bytes``
bytes (16 threads for 8-byte elements, 8 for 16-byte ones), each phase
counted on its own.  One wavefront per phase is conflict-free.

Global memory moves ``sector_bytes``-byte sectors: an access costs the
sectors its bytes touch, against the fewest that could hold those bytes.
"""

from __future__ import annotations

from typing import NamedTuple

from ..core.errors import ShapeError
from .int_tuple import is_int

__all__ = ["bank_conflicts", "bank_of", "global_sectors", "Sectors"]


def _positive(op: str, **values) -> None:
    for name, v in values.items():
        if not is_int(v) or v < 1:
            raise ShapeError(f"{op}: {name} must be a positive int, got {v!r}")


def _warp_offsets(op: str, layout, threads: int) -> list:
    if not (callable(layout) and hasattr(layout, "size") and not isinstance(layout, type)):
        raise ShapeError(f"{op}: expected a cute Layout or ComposedLayout (thread -> offset), got {layout!r}")
    return [layout(t) for t in range(min(threads, layout.size))]


def bank_of(offset: int, element_bytes: int = 4, banks: int = 32, bank_bytes: int = 4) -> int:
    """The bank holding the first byte of the element at ``offset``."""
    return (offset * element_bytes // bank_bytes) % banks


def bank_conflicts(layout, element_bytes: int = 4, banks: int = 32, bank_bytes: int = 4, threads: int = 32) -> int:
    """Shared-memory wavefronts one warp takes when thread ``t`` reads ``layout(t)``.

    1 is conflict-free (for elements of up to ``bank_bytes``); 32 threads
    reading one column of a row-major 32x32 f32 tile take 32.

    >>> from strided import cute
    >>> tile = cute.Layout((32, 32), (32, 1))
    >>> cute.bank_conflicts(tile(None, 0)), cute.bank_conflicts(cute.Layout((32, 32), (33, 1))(None, 0))
    (32, 1)
    """
    op = "bank_conflicts"
    _positive(op, element_bytes=element_bytes, banks=banks, bank_bytes=bank_bytes, threads=threads)
    offsets = _warp_offsets(op, layout, threads)
    per_phase = max(1, banks * bank_bytes // element_bytes)
    total = 0
    for start in range(0, len(offsets), per_phase):
        words = {}  # bank -> the distinct words this phase asks of it
        for o in offsets[start:start + per_phase]:
            first = o * element_bytes
            for w in range(first // bank_bytes, (first + element_bytes - 1) // bank_bytes + 1):
                words.setdefault(w % banks, set()).add(w)
        total += max(len(ws) for ws in words.values())
    return total


class Sectors(NamedTuple):
    """The sectors a warp's global access touches, and the fewest that hold its bytes."""

    touched: int
    minimum: int


def global_sectors(layout, element_bytes: int = 4, sector_bytes: int = 32, threads: int = 32) -> Sectors:
    """The ``sector_bytes``-byte sectors one warp's access through ``layout`` touches.

    32 consecutive f32 take 4 sectors, the minimum; a column of a row-major
    32x32 f32 tile touches 32 sectors where 4 would hold its 128 bytes.
    """
    op = "global_sectors"
    _positive(op, element_bytes=element_bytes, sector_bytes=sector_bytes, threads=threads)
    offsets = _warp_offsets(op, layout, threads)
    touched, distinct = set(), set()
    for o in offsets:
        first = o * element_bytes
        distinct.update(range(first, first + element_bytes))
        touched.update(range(first // sector_bytes, (first + element_bytes - 1) // sector_bytes + 1))
    return Sectors(len(touched), -(-len(distinct) // sector_bytes))
