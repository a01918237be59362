"""The copy family on CUDA: the CPU's ``plan_copy`` decides, a grid-stride kernel per path runs it.

``copy_into`` checks the buffers and layouts as the CPU's does, asks
``strided.kernels.copy.plan_copy`` for the path and its integers, and launches that
path's kernel here:

=========  ====================================================================
path       kernel (every one a grid-stride loop over a bounded grid)
=========  ====================================================================
run        one element per unit: ``dst[doff + e] = src[soff + e]``
rows       element e is row ``e // cols``, column ``e % cols``; a row stride of 0
           on src broadcasts it
blocks     element e is block ``e // blen`` (its src start from the odometer over
           the block-start dims), position ``e % blen`` in it
tiled      a 32 x 32 tile per unit through shared memory: read along src's fast
           dim, written along dst's, rows padded to 33 so that the column reads hit
           33 different banks; the outer dims from the odometer
general    the odometer over the merged dims per element: right for every layout
=========  ====================================================================

Same-dtype copies move bits (both buffers viewed as unsigned integers of their
itemsize), so one compiled kernel serves every dtype of a width, f16 and bf16 included.
Conversions take the general kernel, which casts as it stores (numba's casts, C's, as
NumPy's ``astype``); a conversion from or to a half type takes a general kernel of its
own pair, the CPU's conversion pasted in (``cuda.half.convert``: the same bits as the
CPU's, NumPy's and ml_dtypes').

Layout integers travel as tuples of ints (one compiled kernel per tuple length), never
as host arrays: a simulated launch writes its host array arguments back, which fails on
the planner's read-only cached arrays, and a real one would copy them to the device at
every launch.
"""

from __future__ import annotations

from math import prod

import numpy as np
from numba import cuda, from_dtype

from ..core import caches
from ..core.errors import DTypeError, StridedError
from ..kernels.common import BITS, DTYPES, check_conversion, reach
from ..kernels.copy import CopyPlan, check_views, plan_copy, tile_plan
from ..layout.layout import Layout
from . import half, launch
from .checks import check_on_device
from .device import DTYPES_ON_DEVICE, HALVES, is_device_array, kernel_view

__all__ = ["copy_into", "convert_kernel", "ManyCopy", "PATHS"]

PATHS = ("run", "rows", "blocks", "tiled", "general")


# ---------------------------------------------------------------------------
# kernels


@cuda.jit
def _run(dst, doff, src, soff, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        dst[doff + e] = src[soff + e]


@cuda.jit
def _rows(dst, doff, drow, src, soff, srow, rows, cols):
    for e in range(cuda.grid(1), rows * cols, cuda.gridsize(1)):
        r = e // cols
        c = e - r * cols
        dst[doff + r * drow + c] = src[soff + r * srow + c]


@cuda.jit
def _blocks(dst, doff, src, soff, dims, strides, blen, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = e // blen
        s = soff + (e - b * blen)
        for d in range(len(dims) - 1, -1, -1):  # the odometer, innermost block dim first
            q = b % dims[d]
            b //= dims[d]
            s += q * strides[d]
        dst[doff + e] = src[s]


@cuda.jit
def _general(dst, doff, dstr, src, soff, sstr, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, s = launch.point2(e, shape, doff, dstr, soff, sstr)
        dst[d] = src[s]


_CONVERT_SRC = """
def kernel(dst, doff, dstr, src, soff, sstr, shape, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        d, s = point2(e, shape, doff, dstr, soff, sstr)
        dst[d] = {expr}
"""
_CONVERT = caches.table("cuda.copy.conversions", "dtype pair")


def convert_kernel(dst_dtype, src_dtype):
    """The general kernel converting ``src_dtype`` to ``dst_dtype``: one per pair that has a
    half type or an integer dst, ``_general``'s implicit casts for the others."""
    key = (np.dtype(dst_dtype), np.dtype(src_dtype))
    halves = key[0] in HALVES or key[1] in HALVES
    if not halves and key[0].kind not in "iu":
        return _general
    if key not in _CONVERT:
        # An integer dst casts explicitly: the same C cast a store makes on a GPU, and in the
        # simulator, which stores as NumPy does, a wrap where a store would raise.
        expr = half.convert(*key, "src[s]") if halves else "DST(src[s])"
        scope = {"cuda": cuda, "point2": launch.point2, "DST": key[0].type, **half.SCOPE}
        exec(_CONVERT_SRC.format(expr=expr), scope)  # our own template
        _CONVERT[key] = cuda.jit(scope["kernel"])
    return _CONVERT[key]


def _make_tiled(bits):
    """The tiled transpose for buffers of unsigned ``bits`` (the shared tile's type is fixed
    when numba compiles, so each width gets its own kernel)."""
    T, R = launch.TILE, launch.TILE_ROWS
    # The tile's shape as a constant of the closure: written ``(T, T + 1)`` inside the kernel
    # it would be computed, and shared memory needs its size when the kernel compiles.
    padded = (T, T + 1)
    elem = from_dtype(np.dtype(bits))

    @cuda.jit
    def tiled(dst, doff, odstr, dp, dq, src, soff, osstr, sp, sq, oshape, P, Q, units):
        # tile[q - q0, p - p0]: filled along p (src's fast dim), read along q (dst's).
        tile = cuda.shared.array(padded, elem)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        ptiles = (P + T - 1) // T
        qtiles = (Q + T - 1) // T
        per = ptiles * qtiles
        u = cuda.blockIdx.x
        while u < units:  # every thread of a block takes the same units: syncthreads is safe
            o = u // per
            r = u - o * per
            p0 = (r // qtiles) * T
            q0 = (r - (r // qtiles) * qtiles) * T
            d0, s0 = launch.point2(o, oshape, doff, odstr, soff, osstr)
            p = p0 + tx
            for j in range(ty, T, R):
                q = q0 + j
                if p < P and q < Q:
                    tile[j, tx] = src[s0 + p * sp + q * sq]
            cuda.syncthreads()
            q = q0 + tx
            for j in range(ty, T, R):
                p = p0 + j
                if p < P and q < Q:
                    dst[d0 + p * dp + q * dq] = tile[tx, j]
            cuda.syncthreads()
            u += cuda.gridDim.x

    return tiled


_TILED = {size: _make_tiled(bits) for size, bits in BITS.items()}


# ---------------------------------------------------------------------------
# the dispatcher


def _dims(shape, *strides) -> tuple:
    """Dims and their strides as the tuples of ints a kernel takes.  No dims becomes one dim
    of size 1 and stride 0, which walks the same single point and still types as a tuple
    of ints (numba cannot index an empty tuple)."""
    if not shape:
        return ((1,),) + ((0,),) * len(strides)
    return (tuple(map(int, shape)),) + tuple(tuple(map(int, st)) for st in strides)


def _prepare(path: str, args: tuple, n: int, itemsize: int, general=_general):
    """``run(dst, src)``: the kernel of ``path`` with its grid and integers fixed (``general``
    the general path's kernel: a conversion's)."""
    if path == "run":
        doff, soff, count = args
        g = launch.grid(count)
        return lambda d, s: _run[g](d, doff, s, soff, count)
    if path == "rows":
        doff, drow, soff, srow, rows, cols = args
        g = launch.grid(rows * cols)
        return lambda d, s: _rows[g](d, doff, drow, s, soff, srow, rows, cols)
    if path == "blocks":
        doff, soff, dims, strides, blen = args
        dims, strides = _dims(dims, strides)
        g = launch.grid(n)
        return lambda d, s: _blocks[g](d, doff, s, soff, dims, strides, blen, n)
    if path == "tiled":
        doff, odstr, dp, dq, soff, osstr, sp, sq, oshape, P, Q = args
        oshape, odstr, osstr = _dims(oshape, odstr, osstr)
        T = launch.TILE
        units = prod(oshape) * (-(-P // T)) * (-(-Q // T))
        blocks, threads = launch.tile_grid(units)
        kernel = _TILED[itemsize]
        return lambda d, s: kernel[blocks, threads](d, doff, odstr, dp, dq, s, soff, osstr, sp, sq, oshape, P, Q, units)
    doff, dstr, soff, sstr, shape = args  # general
    shape, dstr, sstr = _dims(shape, dstr, sstr)
    g = launch.grid(n)
    return lambda d, s: general[g](d, doff, dstr, s, soff, sstr, shape, n)


def _check_buffer(op: str, what: str, buf) -> None:
    check_on_device(op, what, buf)
    if buf.ndim != 1:
        raise StridedError(f"{op}: expected {what} to be a 1-D device array, got shape {buf.shape}")
    if buf.dtype not in DTYPES_ON_DEVICE:
        raise DTypeError(f"{op}: {what} has dtype {DTYPES.get(buf.dtype, buf.dtype)}, which CUDA buffers do not hold")


def _bits(buf):
    return buf.view(BITS[buf.dtype.itemsize])


def copy_into(dst, dst_layout: Layout, src, src_layout: Layout, keep: bool = False):
    """Write every element of the src view into the dst view (both device buffers), in
    row-major correspondence: ``strided.kernels.copy.copy_into``'s contract on CUDA.

    src may broadcast (stride 0), dst may not; both layouts are validated against their
    buffers before any launch.  The path is ``plan_copy``'s;
    where a conversion would tile, the general kernel converts directly (its odometer is
    right for any layout, so there is no scratch buffer as on the CPU).  With ``keep``, returns
    the copy prepared to run again, as on the CPU."""
    op = "copy_into"
    _check_buffer(op, "dst", dst)
    _check_buffer(op, "src", src)
    n = check_views(op, dst_layout, len(dst), src_layout, len(src))
    if n == 0:
        return None
    run = _kernel(dst_layout, src_layout, dst.dtype, src.dtype)
    run(dst, src)
    return (run, (reach(dst_layout)[1], reach(src_layout)[1])) if keep else None


def _kernel(dst_layout: Layout, src_layout: Layout, dst_dtype, src_dtype):
    same = dst_dtype == src_dtype
    if not same:
        check_conversion("copy_into", dst_dtype, src_dtype)
    plan = plan_copy(dst_layout, src_layout, same)
    n = dst_layout.numel
    if plan.path == "convert_via_scratch":
        # The CPU tiles into a scratch buffer first because its general kernel would walk
        # src across cache lines; here the general kernel converts the pair directly, on
        # the planner's merged dims.
        it, _ = tile_plan(dst_layout, src_layout)
        (dstr, sstr), (doff, soff) = it.strides, it.offsets
        plan = CopyPlan("general", (doff, dstr, soff, sstr, it.shape))
    if same:
        kernel = _prepare(plan.path, plan.args, n, np.dtype(src_dtype).itemsize)
        return lambda d, s: kernel(_bits(d), _bits(s))
    kernel = _prepare(plan.path, plan.args, n, np.dtype(src_dtype).itemsize, convert_kernel(dst_dtype, src_dtype))
    return lambda d, s: kernel(kernel_view(d), kernel_view(s))


class ManyCopy:
    """``strided.kernels.copy.ManyCopy``'s contract on CUDA (cat's copies): src i into dst
    layout i, each by ``copy_into`` (the path its layouts need), one launch per source.
    The CPU batches the copies into one kernel call to save the per-call cost of small
    ones; here each is a grid-stride launch over a whole source."""

    def __init__(self, op: str, dst, dst_layouts: tuple, srcs: tuple, src_layouts: tuple):
        if len(dst_layouts) != len(srcs) or len(srcs) != len(src_layouts):
            raise StridedError(f"{op}: expected one dst layout per source, got {len(dst_layouts)} layouts "
                               f"for {len(srcs)} sources")
        self.op, self.dst_layouts, self.src_layouts = op, tuple(dst_layouts), tuple(src_layouts)

    @classmethod
    def dense_rows(cls, op: str, dst, srcs: tuple, specs):
        """None: the CPU's layout-free plan for dense inputs is not taken; the caller builds
        the layouts and takes ``ManyCopy``."""
        return None

    def run(self, dst, srcs) -> bool:
        """Every copy, or False (nothing written) when a buffer is not a device array."""
        if not is_device_array(dst) or any(not is_device_array(s) for s in srcs):
            return False
        for dl, s, sl in zip(self.dst_layouts, srcs, self.src_layouts):
            copy_into(dst, dl, s, sl)
        return True
