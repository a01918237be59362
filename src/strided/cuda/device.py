"""What the CUDA backend knows of devices and device arrays, below its storage and kernels."""

from __future__ import annotations

from operator import attrgetter

import numpy as np
from numba import cuda

from ..core.errors import DTypeError, StridedError
from ..kernels.common import BF16, DTYPES, F16

__all__ = ["device_count", "is_device_array", "checked_dtype", "kernel_view", "empty", "Bf16Array", "DTYPES_ON_DEVICE",
           "HALVES", "UINT16"]

# Every dtype strided stores.  numba-cuda types all of them but bfloat16 (ml_dtypes' numpy
# dtype is unknown to it), whose buffers are their bits in a uint16 device array (Bf16Array).
DTYPES_ON_DEVICE = frozenset(DTYPES)
HALVES = frozenset({F16, BF16})
UINT16 = np.dtype(np.uint16)


class Bf16Array:
    """A bf16 device buffer: its bits in a 1-D uint16 device array, ``bits``, with the dtype
    the rest of strided reads from a buffer (``dtype`` is bfloat16, as a CPU buffer's).

    It answers what the op layer and the exchange ask of a buffer (dtype, length, itemsize,
    a slice, the copy to the host as bfloat16); a kernel is launched on ``bits``
    (``kernel_view``), so numba-cuda never sees the dtype it cannot type."""

    __slots__ = ("bits",)
    dtype = BF16
    itemsize = 2
    ndim = 1

    def __init__(self, bits):
        if not is_device_array(bits) or bits.dtype != UINT16 or bits.ndim != 1:
            raise StridedError(f"Bf16Array: expected a 1-D uint16 device array, got {type(bits).__name__}")
        self.bits = bits

    def __len__(self) -> int:
        return len(self.bits)

    # two bytes an element, as its bits are: the same shape, size and bytes
    shape = property(attrgetter("bits.shape"))
    size = property(attrgetter("bits.size"))
    nbytes = property(attrgetter("bits.nbytes"))

    def __getitem__(self, key) -> "Bf16Array":
        return Bf16Array(self.bits[key])

    def view(self, dtype):
        """Itself as bf16; its bits as any other 2-byte dtype."""
        dtype = np.dtype(dtype)
        return self if dtype == BF16 else self.bits.view(dtype)

    def copy_to_host(self) -> np.ndarray:
        return self.bits.copy_to_host().view(BF16)


def empty(n: int, dtype):
    """An uninitialised 1-D device buffer of ``n`` elements of ``dtype`` (bf16 as a Bf16Array)."""
    dtype = np.dtype(dtype)
    if dtype == BF16:
        return Bf16Array(cuda.device_array(n, UINT16))
    return cuda.device_array(n, dtype)


def kernel_view(buf):
    """``buf`` as the kernels read it: the half types as their uint16 bits (the dispatchers
    know from the buffer's dtype which format they hold), anything else as it is."""
    if isinstance(buf, Bf16Array):
        return buf.bits
    return buf.view(UINT16) if buf.dtype == F16 else buf


def device_count() -> int:
    """How many CUDA devices numba-cuda sees (1 in the simulator; 0 without a driver)."""
    try:
        return len(cuda.gpus) if cuda.is_available() else 0
    except Exception:  # a driver that fails to load counts as none
        return 0


_DEVICE_ARRAY: type | None = None


def is_device_array(buf) -> bool:
    """Whether ``buf`` is a numba-cuda device array (the simulator has its own type)."""
    global _DEVICE_ARRAY
    if _DEVICE_ARRAY is None:
        _DEVICE_ARRAY = type(cuda.device_array(0, np.uint8))
    return isinstance(buf, (_DEVICE_ARRAY, Bf16Array))


def checked_dtype(op: str, np_dtype) -> np.dtype:
    """``np_dtype`` when a device buffer may hold it, else a DTypeError naming ``op``."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype not in DTYPES_ON_DEVICE:
        raise DTypeError(
            f"{op}: CUDA buffers hold {', '.join(sorted(DTYPES[d] for d in DTYPES_ON_DEVICE))}; "
            f"got {DTYPES.get(np_dtype, np_dtype)}"
        )
    return np_dtype
