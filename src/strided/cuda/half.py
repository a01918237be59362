"""f16 and bf16 on CUDA: the CPU's conversions compiled for the device, and how kernels use them.

The kernels read a half buffer as its uint16 bits (``device.kernel_view``) and compute in
f32 registers, as the CPU's do: each element is widened exactly, each result rounded once
(ties to even) as it is stored.  The conversions are ``kernels.half.PORTABLE``, the plain
scalar forms of the CPU's own (int64 arithmetic and scalar bit views, which numba-cuda
compiles and its simulator runs as Python), so a value rounds to the same bits on both
devices.  ``load`` and ``store`` give the expressions a kernel template pastes around an
element; the names they use are in ``SCOPE``.
"""

from __future__ import annotations

import numpy as np

from ..kernels.common import BF16, F16
from ..kernels.half import PORTABLE
from .scalar import device_function

__all__ = ["DEVICE", "NAMED", "SCOPE", "load", "store", "convert"]

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# Each conversion compiled for the device, the portable forms it calls bound to their device
# forms (its own globals name the CPU's registrations, which numba-cuda cannot call).
DEVICE = {name: device_function(fn) for name, fn in PORTABLE.items()}
# Each by the name of the CPU's portable form, as a fused expression's source calls it (``strided.fuse``).
NAMED = {fn.__name__: DEVICE[k] for k, fn in PORTABLE.items()}
# Names the kernel templates may use: each conversion as ``h_<name>``, and numpy for the casts.
SCOPE = {f"h_{k}": v for k, v in DEVICE.items()} | {"np": np}
_TAG = {F16: "f16", BF16: "bf16"}


def load(dtype, expr: str) -> str:
    """An element ``expr`` of a buffer of ``dtype`` as a kernel computes with it (half bits as f32)."""
    tag = _TAG.get(np.dtype(dtype))
    return f"h_{tag}_f32({expr})" if tag else expr


def store(dtype, expr: str) -> str:
    """A computed value ``expr`` as a buffer of ``dtype`` holds it (f32 rounded once to half bits)."""
    tag = _TAG.get(np.dtype(dtype))
    return f"h_f32_{tag}(np.float32({expr}))" if tag else expr


def convert(dst_dtype, src_dtype, expr: str) -> str:
    """An element ``expr`` of a ``src_dtype`` buffer as a ``dst_dtype`` buffer stores it,
    the CPU copy's conversions (``kernels.copy``'s ``_move``): a half to the other half or
    from/to f64 directly, to bool by its nonzero bits, from bool as 1 or 0; everything
    else through f32, as NumPy and ml_dtypes convert (an integer is exact in f32 wherever
    its half is finite)."""
    dst, src = np.dtype(dst_dtype), np.dtype(src_dtype)
    if src in _TAG:
        if dst in _TAG:
            return f"h_{_TAG[src]}_{_TAG[dst]}({expr})"
        if dst == np.bool_:
            return f"(({expr}) & 0x7FFF) != 0"
        if src == F16 and dst == F64:
            return f"h_f16_f64({expr})"
        return f"h_{_TAG[src]}_f32({expr})"
    if dst in _TAG:
        if src == np.bool_:
            return f"np.uint16({0x3C00 if dst == F16 else 0x3F80} if {expr} else 0)"
        if dst == F16 and src == F64:
            return f"h_f64_f16({expr})"
        return f"h_f32_{_TAG[dst]}(np.float32({expr}))"
    return expr
