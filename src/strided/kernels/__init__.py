"""The CPU backend: numba kernels over flat 1-D buffers and integer layout arguments.

A backend is a module satisfying ``strided.backend.Backend``: one submodule per kernel
family, an allocator, the storage hooks (``storage``), its device names, DLPack type and
capabilities; the op layer finds it from a storage's device (``strided.backend``) and
never reaches a kernel any other way.  Each family has one checked entry point taking buffers and
layouts (never Tensors) and a pure ``plan()`` that returns integers only, so
that another backend can run the same plans; with ``keep=True`` an entry point
returns the call it ran, prepared to run again (``backend``'s docstring):

============  ====================================  ==============================
family        entry points                          plan
============  ====================================  ==============================
elementwise   ``unary``, ``binary``, ``where``      ``plan(out, *inputs)``
reduce        ``reduce``, ``arg_reduce``            ``plan(src, dims, out)``
                                                    (``reduce_plan.choose``)
copy          ``copy_into``, ``copy_many_into``,    ``plan_copy(dst, src)``
              ``ManyCopy``
index         ``index_select``                      (one path)
matmul        ``matmul`` (loads BLAS on first use)  ``plan(...)``
sort          ``sort``, ``argsort``,                ``plan_lines(dst, src, axis)``
              ``searchsorted``
scan          ``cumulate``, ``count_true``,         (sort's ``plan_lines``)
              ``nonzero``
============  ====================================  ==============================

``storage`` holds the storage hooks (host memory: a pointer, nothing to synchronise,
a host array taken as it is) and ``alloc``/``allocator`` (the pool's ``alloc``).

The families share ``common`` (every tuning threshold with its reason, the
dtype tables, the buffer, layout, bounds and stride-0 write checks, the shape and
conversion checks every backend makes), ``walk``
(the odometer that carries k operands' positions through merged dims, and the
launcher: how many chunks, the serial or the parallel driver) and ``half``
(the f16/bf16 bit conversions and how kernels see half buffers).
"""

from . import common, copy, elementwise, half, index, reduce, scan, sort, storage, walk
from .common import PARALLEL_MIN  # tests and benchmarks read it here
from .storage import alloc, allocator

DEVICE = "cpu"
# What strided.backend.Backend asks of a backend besides its families.
KIND = DEVICES = "cpu"
NAMES = ("cpu",)
DLPACK = 1  # kDLCPU
HOST_MEMORY = True
HALF_MATMUL = False  # f16/bf16 products run in f32 (BLAS has no half gemm), rounded once after


def device_count() -> int:
    """The host is one device."""
    return 1


def __getattr__(name):
    # matmul loads scipy's BLAS, a third of the import time: only when a product is asked for.
    if name == "matmul":
        import importlib

        return importlib.import_module(".matmul", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
