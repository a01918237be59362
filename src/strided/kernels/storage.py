"""The CPU backend's storage hooks: host buffers are NumPy arrays from ``strided.storage``.

What the tensor and exchange layers ask of any backend's storage (``backend.StorageHooks``),
answered for host memory: an array's address, nothing to wait for, and a host array that
already is a CPU buffer.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import StridedError
from ..core.storage import Storage, alloc as _pool_alloc, wrap

__all__ = ["alloc", "allocator", "from_host", "pointer", "synchronize"]


def alloc(numel: int, np_dtype, op: str = "alloc", device: str = "cpu") -> Storage:
    """An uninitialised host buffer of ``numel`` elements from the recycling pool."""
    return _pool_alloc(numel, np_dtype, op)


def allocator(device: str):
    """The pool's own ``alloc``: ``backend.alloc_on`` calls it with no wrapper in between."""
    return _pool_alloc


def from_host(host: np.ndarray, device: str = "cpu", op: str = "to_device") -> Storage:
    """A CPU storage over the 1-D contiguous host array ``host`` (no copy: it is host memory
    already; the caller hands it over)."""
    if not isinstance(host, np.ndarray) or host.ndim != 1 or not host.flags.c_contiguous:
        raise StridedError(f"{op}: expected a 1-D contiguous host array, got {type(host).__name__} "
                           f"of shape {getattr(host, 'shape', None)}")
    return wrap(host)


def pointer(data) -> int:
    """The address of element 0 of the host array ``data``."""
    return data.__array_interface__["data"][0]


def synchronize() -> None:
    """Nothing to wait for: a CPU kernel has finished when it returns."""
