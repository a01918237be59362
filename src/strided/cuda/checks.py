"""The check every CUDA entry point makes first: each buffer it is given is a device array.

One wording for the mixed-device call a buffer from the host would be (the op layer never
makes one: it moves operands to one device first; a direct caller of a family might)."""

from __future__ import annotations

import numpy as np

from ..core.errors import StridedError
from .device import is_device_array


def check_on_device(op: str, what: str, buf) -> None:
    """A StridedError naming ``op`` and ``what`` unless ``buf`` is a CUDA device array."""
    if not is_device_array(buf):
        got = "a host numpy array" if isinstance(buf, np.ndarray) else type(buf).__name__
        raise StridedError(f"{op}: expected {what} on the CUDA device, got {got}")
