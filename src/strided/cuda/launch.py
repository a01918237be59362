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
# in one to four operands, from each one's offset and strides (tuples).  One grid-stride
# unit unravels its own point, so there is no carry to share between threads.
from numba import cuda  # noqa: E402  (only this package imports numba.cuda)


def _odometer(k: int):
    """``point{k}(e, shape, o0, st0, ..., o{k-1}, st{k-1})``: the k operands' positions of point
    ``e``, a device function written out for k (numba-cuda takes no varargs)."""
    offs = [f"o{i}" for i in range(k)]
    src = (f"def point{k}(e, shape, {', '.join(f'o{i}, st{i}' for i in range(k))}):\n"
           "    r = e\n"
           "    for k in range(len(shape) - 1, -1, -1):\n"
           "        q = r % shape[k]\n"
           "        r //= shape[k]\n"
           + "".join(f"        o{i} += q * st{i}[k]\n" for i in range(k))
           + f"    return {', '.join(offs)}\n")
    scope: dict = {}
    exec(src, scope)  # our own template
    return cuda.jit(device=True)(scope[f"point{k}"])


point1, point2, point3, point4 = (_odometer(k) for k in range(1, 5))
