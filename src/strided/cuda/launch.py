"""How the CUDA kernels are launched: grid-stride loops over a bounded grid.

Every kernel walks its work units with a grid-stride loop (unit ``cuda.grid(1)``, then
every ``cuda.gridsize(1)``-th), so one launch of a bounded grid covers any size: never
one launch per row or per block.
"""

from __future__ import annotations

from numba import config

# numba-cuda's simulator runs each thread of a block as a Python thread and the blocks
# one after another, so what costs on a GPU (too few threads) is free there and what is
# free on a GPU (many threads) costs thread switches: it gets one small block.
SIMULATED = bool(config.ENABLE_CUDASIM)
THREADS = 32 if SIMULATED else 256
# A grid-stride loop needs no more blocks than keep every SM busy: 132 SMs (H100/H200)
# times 16 resident blocks of 256 threads is about 2048; more blocks only add scheduling.
MAX_BLOCKS = 1 if SIMULATED else 2048
# The tiled transpose: a TILE x TILE tile moved by TILE x TILE_ROWS threads, each thread
# TILE / TILE_ROWS elements (the layout of NVIDIA's transpose sample).  The simulator gets
# the same kernel on 8 x 8 tiles: 32 Python threads a block rather than 256, and more
# partial tiles per test shape.
TILE = 8 if SIMULATED else 32
TILE_ROWS = 4 if SIMULATED else 8


def grid(units: int) -> tuple[int, int]:
    """(blocks, threads) for a grid-stride loop over ``units`` work units."""
    blocks = min(MAX_BLOCKS, max(1, -(-units // THREADS)))
    if SIMULATED:  # a simulated thread is a Python thread: no more of them than units
        return blocks, max(1, min(THREADS, units))
    return blocks, THREADS


def tile_grid(tiles: int) -> tuple[int, tuple[int, int]]:
    """(blocks, (TILE, TILE_ROWS)) for the tiled transpose over ``tiles`` tiles."""
    return min(MAX_BLOCKS, max(1, tiles)), (TILE, TILE_ROWS)


# The odometer of the CUDA kernels: the positions of a flat point of ``shape`` (row-major)
# in two or three operands, from each one's offset and strides (tuples).  One grid-stride
# unit unravels its own point, so there is no carry to share between threads.
from numba import cuda  # noqa: E402  (only this package imports numba.cuda)


@cuda.jit(device=True)
def point2(e, shape, o0, st0, o1, st1):
    r = e
    for k in range(len(shape) - 1, -1, -1):
        q = r % shape[k]
        r //= shape[k]
        o0 += q * st0[k]
        o1 += q * st1[k]
    return o0, o1


@cuda.jit(device=True)
def point3(e, shape, o0, st0, o1, st1, o2, st2):
    r = e
    for k in range(len(shape) - 1, -1, -1):
        q = r % shape[k]
        r //= shape[k]
        o0 += q * st0[k]
        o1 += q * st1[k]
        o2 += q * st2[k]
    return o0, o1, o2


@cuda.jit(device=True)
def point1(e, shape, o0, st0):
    r = e
    for k in range(len(shape) - 1, -1, -1):
        q = r % shape[k]
        r //= shape[k]
        o0 += q * st0[k]
    return o0


@cuda.jit(device=True)
def point4(e, shape, o0, st0, o1, st1, o2, st2, o3, st3):
    r = e
    for k in range(len(shape) - 1, -1, -1):
        q = r % shape[k]
        r //= shape[k]
        o0 += q * st0[k]
        o1 += q * st1[k]
        o2 += q * st2[k]
        o3 += q * st3[k]
    return o0, o1, o2, o3
