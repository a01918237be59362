"""The CUDA backend: numba-cuda kernels over 1-D device buffers, driven by the CPU's planners.

Imported only when a CUDA device is asked for (``strided.devices`` loads it and
registers its devices with ``strided.backend``): a CPU-only ``import strided`` never
imports numba.cuda.  It has the layout of ``strided.kernels``, one submodule per kernel
family with the same entry points over buffers and layouts (never a Tensor); the
families are those of the CPU (a family it lacked would raise ``NotOnCuda``, naming it):

============  ==========================================  ==============================
family        entry points                                plan
============  ==========================================  ==============================
copy          ``copy_into``, ``ManyCopy``                 ``kernels.copy.plan_copy``
elementwise   ``unary``, ``binary``, ``where`` (general   ``NdIter``'s merged dims, as
              path), ``output_layout``,                   the CPU's planner merges them
              ``expression_kernel`` and ``refusal``
              (``strided.fuse``'s groups)
reduce        ``reduce``, ``arg_reduce``                  ``kernels.reduce.plan``
index         ``index_select``                            (one path)
matmul        ``matmul`` (cuBLAS; the simulator's stand-  ``kernels.matmul.plan``, then
              in kernel without a GPU), ``program``       ``program``: the gemm calls
============  ==========================================  ==============================

It satisfies ``strided.backend.Backend`` (``tests/test_backend_contract.py`` checks it in
the simulator).  ``storage`` holds ``CudaStorage`` (a 1-D numba-cuda device array and its
device name), ``alloc``/``allocator`` and the host transfers; ``checks`` the one check
that a buffer is on the device; ``device`` the device count, the dtypes a
device buffer holds (bf16 as its bits, ``Bf16Array``) and how a device array is told from a
host one; ``scalar`` the op table's scalar definitions (``kernels.optable``, the
CPU's portable Python) compiled for the device, which the elementwise kernels call per
element; ``half`` the CPU's f16/bf16 conversions compiled the same way, which every
family uses to compute half types in f32; ``launch`` the grid sizes.  Under ``NUMBA_ENABLE_CUDASIM=1`` numba-cuda
runs these kernels in its simulator, on the host: the tests do so on every run.
"""

from __future__ import annotations

from . import copy, device, elementwise, half, index, launch, matmul, reduce, scalar, storage
from .device import device_count
from .storage import alloc, allocator

__all__ = ["copy", "device", "elementwise", "half", "index", "launch", "matmul", "reduce", "scalar", "storage", "alloc",
           "allocator", "device_count", "NotOnCuda", "KIND", "DEVICES", "NAMES", "DLPACK", "HOST_MEMORY",
           "HALF_MATMUL"]

from ..core.errors import StridedError

# What strided.backend.Backend asks of a backend besides its families (strided.devices
# registers the same KIND, DEVICES and NAMES before this module is imported).
KIND = "cuda"
DEVICES = r"cuda(?::(?P<index>\d+))?"
NAMES = ("cuda", "cuda:N")
DLPACK = 2  # kDLCUDA
HOST_MEMORY = False  # device arrays: only views of one storage share memory
HALF_MATMUL = True  # cuBLAS's GemmEx multiplies f16/bf16 as they are, summing in f32


class NotOnCuda(StridedError, AttributeError):
    """A kernel family the CUDA backend does not have yet (an AttributeError too, so that
    ``hasattr`` on the backend stays false)."""


def __getattr__(name):
    if name in ("sort", "scan"):  # CPU families CUDA does not have yet
        raise NotOnCuda(f"{name}: this kernel family is not done on CUDA yet; t.cpu() moves a tensor to the host")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
