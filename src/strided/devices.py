"""Devices: their names, and moving a tensor's elements from one to another.

``"cpu"`` is always there.  ``"cuda"`` (the same as ``"cuda:0"``) and ``"cuda:N"`` load
the CUDA backend (``strided.cuda``) on first use and register its devices with
``strided.backend``; nothing else imports numba.cuda, so a CPU-only program never pays
for it.  A move copies the view's elements only, row-major, into a fresh buffer on the
other device: views of the result are again layout arithmetic over that buffer.
"""

from __future__ import annotations

import importlib
import re

import numpy as np

from .backend import register
from .core.errors import StridedError
from .layout import Layout
from .core.storage import wrap
from .tensor import Tensor

__all__ = ["canonical", "cuda_backend", "to_device"]

_CUDA = re.compile(r"cuda(?::(\d+))?\Z")
_loaded: list = []


def canonical(op: str, device) -> str:
    """``device`` as strided names it: ``"cpu"`` or ``"cuda:N"``; a StridedError naming ``op``
    for anything else.  Says nothing about whether the CUDA device exists."""
    if device is None or device == "cpu":
        return "cpu"
    m = _CUDA.match(device) if isinstance(device, str) else None
    if m is None:
        raise StridedError(f"{op}: unknown device {device!r} (expected 'cpu', 'cuda' or 'cuda:N')")
    return f"cuda:{int(m.group(1) or 0)}"


def cuda_backend(op: str, device: str = "cuda:0"):
    """The CUDA backend module, loaded and its devices registered on first use; a StridedError
    naming ``op`` when numba-cuda is missing or ``device`` is not one it sees."""
    if not _loaded:
        try:
            module = importlib.import_module("strided.cuda")
        except Exception as e:  # missing, or failing to import (numba-cuda 0.30.0 next to numba 0.68)
            raise StridedError(
                f"{op}: device {device!r} needs a working numba-cuda (pip install 'strided[cuda]'): "
                f"{type(e).__name__}: {e}"
            ) from None
        for i in range(module.device_count()):
            register(f"cuda:{i}", "strided.cuda")
        _loaded.append(module)
    module = _loaded[0]
    count = module.device_count()
    if int(device.partition(":")[2]) >= count:
        raise StridedError(f"{op}: no device {device!r}: numba-cuda sees {count} CUDA device{'s' * (count != 1)}")
    return module


def to_device(t: Tensor, device, op: str = "to_device") -> Tensor:
    """``t`` itself when it is on ``device`` already, else its elements copied there."""
    target = canonical(op, device)
    here = t.device
    if target == here:
        return t
    lay = Layout.contiguous(t.shape)
    if target == "cpu":
        host = t.numpy()  # a CUDA storage copies the view to a fresh host array
        return Tensor(wrap(np.ascontiguousarray(host).reshape(-1)), lay, t.dtype)
    module = cuda_backend(op, target)
    host = np.ascontiguousarray(t.numpy()).reshape(-1)
    return Tensor(module.storage.from_host(host, target, op), lay, t.dtype)
