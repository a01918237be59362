"""Devices to kernel modules: the one place the op layer finds the kernels for a storage.

A backend is a module holding one submodule per kernel family (see
``strided.kernels``, the CPU backend, for the families and their entry
points).  ``kernels_for(device)`` loads it on first use; an op whose operands
live on different devices is refused here, naming both.
"""

from __future__ import annotations

import importlib

from .core.errors import StridedError
from .core.storage import alloc

_MODULES = {"cpu": "strided.kernels"}


class _Loaded(dict):
    def __missing__(self, device: str):
        name = _MODULES.get(device)
        if name is None:
            raise StridedError(f"backend: no kernels for device {device!r} (known devices: {', '.join(_MODULES)})")
        module = self[device] = importlib.import_module(name)
        return module


BACKENDS = _Loaded()


def register(device: str, module_name: str) -> None:
    """Make ``module_name`` the kernels of ``device`` (loaded when an op first needs it)."""
    _MODULES[device] = module_name
    BACKENDS.pop(device, None)


def kernels_for(device: str):
    """The kernel module of ``device``."""
    return BACKENDS[device]


def alloc_on(device: str, numel: int, np_dtype, op: str = "alloc"):
    """An uninitialised buffer of ``numel`` elements on ``device``: the CPU's pool, or the
    backend's own ``alloc`` (a device buffer)."""
    if device == "cpu":
        return alloc(numel, np_dtype, op)
    return BACKENDS[device].alloc(numel, np_dtype, op, device)


def common_device(op: str, *storages) -> str:
    """The one device of every storage; a StridedError naming the devices when they differ."""
    device = storages[0].device
    for s in storages[1:]:
        if s.device != device:
            raise StridedError(f"{op}: expected all operands on one device, got {device!r} and {s.device!r}")
    return device
