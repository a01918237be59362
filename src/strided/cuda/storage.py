"""CUDA buffers: a Storage over a 1-D numba-cuda device array, and the moves to and from the host.

A ``CudaStorage`` is what every view of a CUDA tensor shares, as a ``Storage`` is on
the CPU: views stay layout arithmetic over it.  Its ``data`` is the device array the
kernels read and write; ``device`` (``"cuda:0"``, ...) picks them (``strided.backend``).
Nothing here reads device memory implicitly: ``to_host`` is the one explicit copy back.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..core.errors import StridedError
from ..layout.layout import Layout
from ..core.storage import Storage, check_size
from .copy import copy_into
from ..kernels.common import BF16
from .device import Bf16Array, checked_dtype, empty, is_device_array
from .launch import SIMULATED

__all__ = ["CudaStorage", "alloc", "allocator", "from_host", "pointer", "wrap_interface", "synchronize"]


class CudaStorage(Storage):
    """A 1-D device buffer shared by every view over it, on ``device`` (``"cuda:N"``)."""

    __slots__ = ("device",)

    def __init__(self, data, device: str):
        if not is_device_array(data) or data.ndim != 1:
            raise StridedError(f"CudaStorage: expected a 1-D numba-cuda device array, got {type(data).__name__}")
        self.data = data
        self.device = device

    def to_host(self, layout: Layout) -> np.ndarray:
        """A fresh host array holding the elements of ``layout`` over this buffer, row-major.

        A layout that is not one dense run is compacted on the device first (the copy
        family, on the CPU planner's plan), so that one transfer moves only its elements."""
        n = layout.numel
        if n == 0:
            return np.empty(layout.shape, self.data.dtype)
        if layout.is_contiguous():
            run = self.data[layout.offset : layout.offset + n]
        else:
            run = empty(n, self.data.dtype)
            copy_into(run, Layout.contiguous(layout.shape), self.data, layout)
        return run.copy_to_host().reshape(layout.shape)


def alloc(numel: int, np_dtype, op: str = "alloc", device: str = "cuda:0") -> CudaStorage:
    """An uninitialised device buffer of ``numel`` elements on ``device``."""
    np_dtype = checked_dtype(op, np_dtype)
    check_size(op, numel, np_dtype)  # a host-sized bound, until the device's own is asked
    try:
        return CudaStorage(empty(numel, np_dtype), device)
    except Exception as e:  # numba-cuda's out-of-memory and driver errors
        raise StridedError(f"{op}: cannot allocate {numel} elements of {np_dtype} on {device}: {e}") from None


def allocator(device: str):
    """``alloc`` on ``device``, called as ``alloc_on`` calls an allocator: (numel, np_dtype, op)."""
    return lambda numel, np_dtype, op="alloc": alloc(numel, np_dtype, op, device)


def from_host(host: np.ndarray, device: str = "cuda:0", op: str = "to_device") -> CudaStorage:
    """A device buffer holding a copy of the 1-D contiguous host array ``host``."""
    checked_dtype(op, host.dtype)
    if host.ndim != 1 or not host.flags.c_contiguous:
        raise StridedError(f"{op}: expected a 1-D contiguous host array, got shape {host.shape}")
    if host.dtype == BF16:  # numba-cuda cannot type bfloat16: its bits travel
        return CudaStorage(Bf16Array(cuda.to_device(host.view(np.uint16))), device)
    return CudaStorage(cuda.to_device(host), device)


def pointer(data) -> int:
    """The device address of element 0 of the device array ``data``.  The simulator's
    device memory is host memory: its arrays give that address."""
    if isinstance(data, Bf16Array):
        data = data.bits
    if SIMULATED:
        return data.__array_interface__["data"][0]
    return data.__cuda_array_interface__["data"][0]


def wrap_interface(desc: dict, owner, device: str = "cuda:0") -> CudaStorage:
    """A storage over someone else's device memory: ``desc`` a 1-D contiguous
    ``__cuda_array_interface__`` (its span of the producer's memory), ``owner`` kept alive
    with it.  Needs a real device: numba-cuda's simulator cannot wrap a device pointer."""
    if SIMULATED:
        raise StridedError("asarray: numba-cuda's simulator cannot wrap foreign device memory "
                           "(__cuda_array_interface__ needs a real GPU)")
    checked_dtype("asarray", np.dtype(desc["typestr"]))
    return CudaStorage(cuda.from_cuda_array_interface(desc, owner=owner, sync=True), device)


def synchronize() -> None:
    """Wait for every kernel and copy queued on the device (before memory is handed out)."""
    cuda.synchronize()
