"""The index family on CUDA: ``index_select``, a gather along one dim by a grid-stride kernel.

The arguments and checks are ``strided.kernels.index.index_select``'s (the index is a host
int64 array, every value checked and negatives wrapped by ``check_index`` before it goes
to the device).  Each unit is one destination element: the odometer over dst's shape
gives its dst position, and its src position with the indexed dim's coordinate looked up
in the index.  Same-dtype bits move by itemsize, as the copies do.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..core.errors import StridedError
from ..kernels.common import BITS
from ..kernels.index import check_select
from ..layout.layout import Layout
from . import launch
from .device import is_device_array

__all__ = ["index_select"]


@cuda.jit
def _gather(dst, doff, dstr, src, soff, sstr, shape, d, index, n):
    for e in range(cuda.grid(1), n, cuda.gridsize(1)):
        r = e
        o = doff
        s = soff
        for k in range(len(shape) - 1, -1, -1):
            q = r % shape[k]
            r //= shape[k]
            o += q * dstr[k]
            s += (index[q] if k == d else q) * sstr[k]
        dst[o] = src[s]


def index_select(dst, dst_layout: Layout, src, src_layout: Layout, dim: int, index: np.ndarray) -> None:
    """``dst[.., k, ..] = src[.., index[k], ..]`` along ``dim`` on device buffers."""
    op = "index_select"
    for what, buf in (("dst", dst), ("src", src)):
        if not is_device_array(buf):
            got = "a host numpy array" if isinstance(buf, np.ndarray) else type(buf).__name__
            raise StridedError(f"{op}: expected {what} on the CUDA device, got {got}")
    d, idx = check_select(op, dst, dst_layout, src, src_layout, dim, index)
    n = dst_layout.numel
    if n == 0:
        return
    bits = BITS[dst.dtype.itemsize]
    _gather[launch.grid(n)](dst.view(bits), dst_layout.offset, tuple(dst_layout.stride), src.view(bits),
                            src_layout.offset, tuple(src_layout.stride), tuple(dst_layout.shape), d,
                            cuda.to_device(idx), n)
