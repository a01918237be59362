"""The CUDA backend: numba-cuda kernels over 1-D device buffers, driven by the CPU's planners.

Imported only when a CUDA device is asked for (``strided.devices`` loads it and
registers its devices with ``strided.backend``): a CPU-only ``import strided`` never
imports numba.cuda.  It has the layout of ``strided.kernels``, one submodule per kernel
family with the same entry points over buffers and layouts (never a Tensor); the
families it does not have yet are missing attributes, so an op that needs one fails
naming the family:

============  ==========================================  ==============================
family        entry points                                plan
============  ==========================================  ==============================
copy          ``copy_into``, ``bind``                     ``kernels.copy.plan_copy``
============  ==========================================  ==============================

``storage`` holds ``CudaStorage`` (a 1-D numba-cuda device array and its device
name), ``alloc`` and the host transfers; ``device`` the device count, the dtypes a
device buffer holds and how a device array is told from a host one; ``launch`` the grid
sizes.  Under ``NUMBA_ENABLE_CUDASIM=1`` numba-cuda
runs these kernels in its simulator, on the host: the tests do so on every run.
"""

from __future__ import annotations

from . import copy, device, launch, storage  # noqa: F401
from .device import device_count  # noqa: F401
from .storage import alloc  # noqa: F401

__all__ = ["copy", "device", "launch", "storage", "alloc", "device_count"]
