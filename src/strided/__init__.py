"""strided: one shared buffer seen through layouts.

A Tensor is a Storage (a 1-D buffer shared by every view) plus a Layout
(shape, signed element strides, offset).  Views only build layouts; kernels
read any layout; the CuTe algebra (``strided.cute``) and autograd sit on top.
"""

import sys

from .core import threads as _threads  # fixes numba's threading before numba loads
from .core import moved as _moved
from .core.dtype import DType, bf16, bool_, c64, c128, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64
from .core.errors import (
    DTypeError,
    LayoutBoundsError,
    ShapeError,
    StridedError,
    StridedIndexError,
    TooHardError,
)
from .layout import Layout, MultipleBlocks, NdIter, SingleBlock, StridedIndex, UniformBlocks
from .core.storage import Storage, pool_bytes, set_buffer_pool
from .tensor import Tensor, as_strided, same_buffer
from .creation import (
    arange, empty, from_numpy, full, manual_seed, ones, ones_like, rand, randn, tensor, zeros, zeros_like,
)
from . import ops  # installs Tensor's math, copies and writes from the op registry
from .ops import cat, index_select, sliding_window_view, where
from . import interop  # installs the array interface and DLPack methods
from .interop import DLPackError, from_dlpack
from . import printing
from .autograd import GradStore, Var, backward, sorted_nodes  # installs Tensor.backward
from .core.threads import get_num_threads, set_num_threads

_moved.install()  # import strided.errors, strided.fft, ...: the paths from before the layers had folders
Tensor.__repr__ = printing.format_tensor


def _describe(self) -> str:
    """Dims, stride, offset, contiguity, span, classification and StridedBlocks on one screen."""
    return printing.describe(self.layout, dtype=self.dtype, buffer_len=len(self._storage))


Tensor.describe = _describe

globals()["bool"] = bool_  # strided.bool, as in the contract; the builtin stays untouched elsewhere

# The Array API namespace: the standard's names beside the short ones (array_api's docstring).
from .core.dtype import bfloat16, complex64, complex128, float16, float32, float64  # noqa: E402
from .core.dtype import int8, int16, int32, int64, uint8, uint16, uint32, uint64  # noqa: E402
from .api import array_api  # noqa: E402  (also installs size, mT, to_device, __index__, ... on Tensor)
from .api.array_api import *  # noqa: E402,F403
from .api.array_api import __array_api_version__, __array_namespace_info__  # noqa: E402
from .api import numpy_api  # noqa: E402  (installs __array_ufunc__ and __array_function__ on Tensor)
from .api import dask_chunks  # noqa: E402  (installs __dask_tokenize__; registers with Dask when Dask is loaded)
from .fusion import Fused, fuse  # noqa: E402
from .kernels.optable import register_op  # noqa: E402  (one op-table entry: docs/architecture.md)

if "dask.array" in sys.modules:
    dask_chunks.register()


def _array_namespace(self, /, *, api_version=None):
    """The namespace of a tensor: this module (as NumPy 2's arrays answer with numpy)."""
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise StridedError(f"__array_namespace__: unsupported api_version {api_version!r} (strided is 2024.12)")
    return sys.modules[__name__]


Tensor.__array_namespace__ = _array_namespace

__version__ = "0.1.0"


def __getattr__(name):
    # Heavier layers load on first use so that `import strided` stays quick; what is
    # found is kept as a module attribute, so later lookups (strided.cat in a loop) are plain.
    value = _lazy(name)
    globals()[name] = value
    return value


def _lazy(name):
    if name in ("matmul",):
        from .ops import linalg

        return linalg.matmul
    if name in ("linalg", "tensordot", "vecdot", "matrix_transpose"):
        # The linalg extension loads BLAS: only when asked for.
        import importlib

        linalg = importlib.import_module(".api.linalg_api", __name__)
        return linalg if name == "linalg" else getattr(linalg, name)
    if name in ("set_printoptions", "get_printoptions", "printoptions"):
        return getattr(printing, name)
    if name in ("may_overlap", "overlaps"):
        from .layout import analysis

        return getattr(analysis, name)
    if name in ("tiles", "local_tile"):
        from . import tiling

        return getattr(tiling, name)
    if name == "cute":
        import importlib

        return importlib.import_module(".cute", __name__)
    if name == "fft":  # the Array API's fft extension (NumPy's pocketfft), loaded when asked for
        import importlib

        return importlib.import_module(".api.fft", __name__)
    if name in _moved.MOVED:  # strided.errors, strided.threads, ...: the old path of a module now in a folder
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in array_api.__all__:  # a namespace function made since import (strided.register_op)
        return getattr(array_api, name)
    raise AttributeError(f"module 'strided' has no attribute {name!r}")
