"""Devices: their names, and moving a tensor's elements from one to another.

A device name is resolved through the registered backends' name patterns
(``strided.backend``): ``"cpu"`` is always there; this module registers the CUDA
backend (``strided.cuda``: ``"cuda"``, the same as ``"cuda:0"``, and ``"cuda:N"``) as a
loader, so that it is imported on first use and nothing else imports numba.cuda: a
CPU-only program never pays for it.  A move copies the view's elements only, row-major,
into a fresh buffer on the other device: views of the result are again layout arithmetic
over that buffer.
"""

from __future__ import annotations

import importlib

import numpy as np

from . import backend
from .layout import Layout
from .tensor import Tensor

__all__ = ["canonical", "load", "cuda_backend", "to_device"]

backend.register(lambda: importlib.import_module("strided.cuda"), kind="cuda", devices=r"cuda(?::(?P<index>\d+))?",
                 names=("cuda", "cuda:N"), requires="a working numba-cuda (pip install 'strided[cuda]')")


def canonical(op: str, device) -> str:
    """``device`` as strided names it (``"cpu"``, ``"cuda:N"``); a StridedError naming ``op``
    and the value for a name no backend claims.  Says nothing about whether the device exists."""
    return backend.canonical(op, device)


def load(op: str, device) -> object:
    """The backend of ``device`` (any accepted name), loaded on first use; a StridedError naming
    ``op`` when it cannot load or has no such device."""
    return backend.load(op, backend.canonical(op, device))


def cuda_backend(op: str, device: str = "cuda:0"):
    """The CUDA backend module (``load`` for a CUDA device)."""
    return load(op, device)


def to_device(t: Tensor, device, op: str = "to_device") -> Tensor:
    """``t`` itself when it is on ``device`` already, else its elements copied there."""
    target = backend.canonical(op, device)
    if target == t.device:
        return t
    module = backend.load(op, target)
    host = np.ascontiguousarray(t.numpy()).reshape(-1)  # a device storage copies the view to a fresh host array
    return Tensor(module.storage.from_host(host, target, op), Layout.contiguous(t.shape), t.dtype)
