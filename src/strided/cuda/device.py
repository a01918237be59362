"""What the CUDA backend knows of devices and device arrays, below its storage and kernels."""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..errors import DTypeError
from ..kernels.common import BF16, DTYPES

__all__ = ["device_count", "is_device_array", "checked_dtype", "DTYPES_ON_DEVICE"]

# numba-cuda types every dtype strided stores but bfloat16 (ml_dtypes' numpy dtype is
# unknown to it); bf16 buffers would have to travel as their uint16 bits, not done yet.
DTYPES_ON_DEVICE = frozenset(d for d in DTYPES if d != BF16)


def device_count() -> int:
    """How many CUDA devices numba-cuda sees (1 in the simulator; 0 without a driver)."""
    try:
        return len(cuda.gpus) if cuda.is_available() else 0
    except Exception:  # a driver that fails to load counts as none  # noqa: BLE001
        return 0


_DEVICE_ARRAY: type | None = None


def is_device_array(buf) -> bool:
    """Whether ``buf`` is a numba-cuda device array (the simulator has its own type)."""
    global _DEVICE_ARRAY
    if _DEVICE_ARRAY is None:
        _DEVICE_ARRAY = type(cuda.device_array(0, np.uint8))
    return isinstance(buf, _DEVICE_ARRAY)


def checked_dtype(op: str, np_dtype) -> np.dtype:
    """``np_dtype`` when a device buffer may hold it, else a DTypeError naming ``op``."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype not in DTYPES_ON_DEVICE:
        raise DTypeError(
            f"{op}: CUDA buffers hold {', '.join(sorted(DTYPES[d] for d in DTYPES_ON_DEVICE))}; "
            f"got {DTYPES.get(np_dtype, np_dtype)}"
        )
    return np_dtype
