"""Devices to backends: the one place the op layer finds the kernels for a storage.

A backend is what ``Backend`` below names: a module (``strided.kernels`` for the CPU,
``strided.cuda`` for CUDA) holding one family of kernels per job, an allocator, the
storage hooks the tensor and exchange layers call, its DLPack device type, the pattern of
its device names and the capabilities the op layer asks instead of testing a device's
name.  ``register`` adds one, as a module or as a loader that imports it when one of its
devices is first used (CUDA: a CPU-only program never imports numba.cuda).
``BACKENDS[device]`` is a backend by its canonical device name; an op whose operands live
on different devices is refused here, naming both.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any, Callable, Protocol

from .core.errors import StridedError
from .core.storage import Storage

# The kernel families every backend has, in the order the docs list them.
FAMILIES = ("elementwise", "reduce", "copy", "index", "matmul", "sort", "scan")
# The device a tensor made without ``device=`` lives on, and whose buffers NumPy reads.
HOST = "cpu"


# One rule set per family: an entry point checks everything (raising), runs, and with
# ``keep=True`` returns the call it ran prepared to run again on buffers of the same dtypes,
# ``(run, reach)`` (``run`` takes the output's buffer where the entry does), or None where it
# has nothing to keep.  The op layer keeps that pair (``ops.kept.Kept``) and calls ``run``
# once each buffer is at least ``reach[i]`` long; nothing is decided a second time.


class ElementwiseFamily(Protocol):
    def unary(self, op: str, src, src_layout, out, out_layout, keep: bool = False) -> tuple | None: ...
    def binary(self, op: str, a, a_layout, b, b_layout, out, out_layout, keep: bool = False) -> tuple | None: ...
    def where(self, cond, cond_layout, a, a_layout, b, b_layout, out, out_layout,
              keep: bool = False) -> tuple | None: ...
    def output_layout(self, shape, *layouts): ...
    def refusal(self, op: str, comp: str) -> str | None: ...
    def expression_kernel(self, source, out_layout, layouts: tuple, dtypes: tuple): ...


class ReduceFamily(Protocol):
    def reduce(self, op: str, src, src_layout, dims, out, out_layout, keep: bool = False) -> tuple | None: ...
    def arg_reduce(self, op: str, src, src_layout, dim: int, out, out_layout, keep: bool = False) -> tuple | None: ...


class CopyFamily(Protocol):
    # ManyCopy(op, dst, dst_layouts, srcs, src_layouts), ManyCopy.dense_rows(op, dst, srcs, specs)
    # (None when it does not apply), and .run(dst, srcs) -> bool: cat's planned copies.
    ManyCopy: Any

    def copy_into(self, dst, dst_layout, src, src_layout, keep: bool = False) -> tuple | None: ...


class IndexFamily(Protocol):
    def index_select(self, dst, dst_layout, src, src_layout, dim: int, index) -> None: ...


class MatmulFamily(Protocol):
    # Returns the plan it ran; with ``keep``, the prepared call (``run(a, b, c)``) or None.
    def matmul(self, a_buf, a_layout, b_buf, b_layout, c_buf, *, chunk: int | None = None, keep: bool = False): ...


class SortFamily(Protocol):
    def sort(self, dst, dst_layout, src, src_layout, axis: int, descending: bool = False,
             keep: bool = False) -> tuple | None: ...
    def argsort(self, dst, dst_layout, src, src_layout, axis: int, descending: bool = False,
                keep: bool = False) -> tuple | None: ...
    def searchsorted(self, out, out_layout, x1, x1_layout, x2, x2_layout, right: bool = False) -> None: ...


class ScanFamily(Protocol):
    def cumulate(self, op: str, dst, dst_layout, src, src_layout, axis: int, keep: bool = False) -> tuple | None: ...
    def count_true(self, src, layout) -> int: ...
    def nonzero(self, src, layout, out) -> None: ...


class StorageHooks(Protocol):
    def pointer(self, data) -> int: ...
    def synchronize(self) -> None: ...
    def from_host(self, host, device: str, op: str = "to_device") -> Storage: ...


class Backend(Protocol):
    """What a device's backend provides.

    A family the backend has not done yet raises, when asked for, a StridedError that is
    also an AttributeError and names the family (``strided.cuda.NotOnCuda``).
    """

    KIND: str  # the stem of its device names: "cpu", "cuda"
    # A regular expression matching every name of its devices; a group named ``index``
    # (optional in the name, 0 when absent) numbers them, and the canonical name is then
    # ``KIND:index``, else ``KIND``.  NAMES lists the accepted forms, for an error message.
    DEVICES: str
    NAMES: tuple
    DLPACK: int  # the DLPack device type (kDLCPU 1, kDLCUDA 2)
    # Capabilities the op layer asks instead of a device's name:
    # HOST_MEMORY: buffers are NumPy arrays in host memory: NumPy may compute on them in
    #   place, their read-only flag holds, two storages may share memory (one array wrapped
    #   twice), a complex buffer's real parts are a view of it, and a kept decision may
    #   allocate from the host pool (``storage.alloc``).
    # HALF_MATMUL: matmul takes f16 and bf16 operands as they are (summing in f32);
    #   otherwise they are multiplied in f32 and rounded after.
    HOST_MEMORY: bool
    HALF_MATMUL: bool
    elementwise: ElementwiseFamily
    reduce: ReduceFamily
    copy: CopyFamily
    index: IndexFamily
    matmul: MatmulFamily
    sort: SortFamily
    scan: ScanFamily
    storage: StorageHooks

    def alloc(self, numel: int, np_dtype, op: str = "alloc", device: str = HOST) -> Storage: ...
    def allocator(self, device: str) -> Callable[..., Storage]: ...
    def device_count(self) -> int: ...


# The members of the Protocols above, with their call shapes (for ``problems``).
_VALUES = {"KIND": str, "DEVICES": str, "NAMES": tuple, "DLPACK": int, "HOST_MEMORY": bool, "HALF_MATMUL": bool}
_FAMILY_PROTOCOLS = {"elementwise": ElementwiseFamily, "reduce": ReduceFamily, "copy": CopyFamily,
                     "index": IndexFamily, "matmul": MatmulFamily, "sort": SortFamily, "scan": ScanFamily,
                     "storage": StorageHooks}


def _params(fn) -> list:
    params = list(inspect.signature(fn).parameters.values())
    return params[1:] if params and params[0].name == "self" else params


def _same_shape(fn, proto) -> bool:
    """Whether ``fn`` takes the Protocol method's parameters: the same names and kinds, and a
    default wherever the Protocol has one (the op layer leaves those out)."""
    got, want = _params(fn), _params(proto)
    return len(got) == len(want) and all(
        g.name == w.name and g.kind == w.kind and (w.default is w.empty or g.default is not g.empty)
        for g, w in zip(got, want))


def _calls(protocol) -> dict:
    return {n: f for n, f in vars(protocol).items() if inspect.isfunction(f) and not n.startswith("_")}


def problems(backend, members=None) -> list[str]:
    """What ``backend`` lacks of ``Backend``: each missing member, a value of the wrong type,
    or a call shape (parameter names, kinds and defaults) unlike the Protocol's.  A family
    the backend declares not done (its StridedError) is no problem.  ``members`` limits the
    check (``register`` checks the backend's own members, not its families, some of which
    load on first use: the CPU's matmul loads BLAS)."""
    found = []
    names = members if members is not None else (*_VALUES, *_calls(Backend), *_FAMILY_PROTOCOLS)
    for name in names:
        try:
            value = getattr(backend, name)
        except StridedError:
            continue  # a family not done yet, declared by name
        except AttributeError:
            found.append(f"{name}: missing")
            continue
        if name in _VALUES:
            if not isinstance(value, _VALUES[name]):
                found.append(f"{name}: expected a {_VALUES[name].__name__}, got {value!r}")
            continue
        want = _calls(_FAMILY_PROTOCOLS[name]) if name in _FAMILY_PROTOCOLS else {name: _calls(Backend)[name]}
        owner = value if name in _FAMILY_PROTOCOLS else backend
        for fname, proto in want.items():
            fn = getattr(owner, fname, None)
            where = f"{name}.{fname}" if owner is value else fname
            if not callable(fn):
                found.append(f"{where}: missing")
            elif not _same_shape(fn, proto):
                found.append(f"{where}: takes {inspect.signature(fn)}, expected {inspect.signature(proto)}")
        if name == "copy" and not hasattr(value, "ManyCopy"):
            found.append("copy.ManyCopy: missing")
    return found


class _Entry:
    """One registered backend: its name pattern and the module, or the loader that imports it."""

    __slots__ = ("kind", "pattern", "names", "requires", "module", "load")

    def __init__(self, kind: str, devices: str, names: tuple, requires: str, module, load):
        self.kind, self.pattern, self.names, self.requires = kind, re.compile(devices), tuple(names), requires
        self.module, self.load = module, load


# Registered backends, in the order names are tried; the host's first.
ENTRIES = [_Entry(HOST, HOST, (HOST,), "", None, lambda: importlib.import_module("strided.kernels"))]


def register(backend, *, kind: str | None = None, devices: str | None = None, names: tuple | None = None,
             requires: str = "") -> None:
    """Make ``backend`` serve the device names its pattern matches.

    ``backend`` is a module satisfying ``Backend`` (checked now), or a function of no
    arguments importing one, called when one of its devices is first used; then ``kind``,
    ``devices`` and ``names`` say its names before it is loaded (and must be its own), and
    ``requires`` what its import needs, for the error when it fails."""
    if callable(backend) and not hasattr(backend, "KIND"):
        if kind is None or devices is None or names is None:
            raise StridedError("backend.register: a backend loaded later needs kind=, devices= and names=")
        entry = _Entry(kind, devices, names, requires, None, backend)
    else:
        bad = problems(backend, (*_VALUES, *_calls(Backend)))
        if bad:
            raise StridedError(f"backend.register: {backend!r} is not a backend: {'; '.join(bad)}")
        entry = _Entry(backend.KIND, backend.DEVICES, backend.NAMES, requires, backend, None)
    for i, old in enumerate(ENTRIES):
        if old.kind == entry.kind:
            ENTRIES[i] = entry
            break
    else:
        ENTRIES.append(entry)
    for device in [d for d in BACKENDS if d.partition(":")[0] == entry.kind]:  # loaded again when next used
        BACKENDS.pop(device)
        ALLOCATORS.pop(device, None)


def _match(name: str):
    """(entry, index) of the backend whose pattern matches ``name``; (None, 0) for none."""
    for entry in ENTRIES:
        m = entry.pattern.fullmatch(name)
        if m is not None:
            index = m.groupdict().get("index")
            return entry, (int(index) if index else 0)
    return None, 0


def canonical(op: str, device) -> str:
    """``device`` as strided names it (``"cpu"``, ``"cuda:N"``): None is the host; a name is
    resolved through the registered backends' patterns (nothing is loaded); a StridedError
    naming ``op`` and the value for anything else."""
    if device is None:
        return HOST
    if not isinstance(device, str):
        entry, index = None, 0
    elif device in BACKENDS:  # a canonical name already in use
        return device
    else:
        entry, index = _match(device)
    if entry is None:
        known = [repr(n) for e in ENTRIES for n in e.names]
        expected = known[0] if len(known) == 1 else f"{', '.join(known[:-1])} or {known[-1]}"
        raise StridedError(f"{op}: unknown device {device!r} (expected {expected})")
    return f"{entry.kind}:{index}" if "index" in entry.pattern.groupindex else entry.kind


def load(op: str, device: str):
    """The backend of the canonical ``device``, loaded on first use; a StridedError naming ``op``
    when its import fails or it has no such device."""
    module = BACKENDS.get(device)
    if module is not None:
        return module
    entry, index = _match(device)
    if entry is None or canonical(op, device) != device:
        raise StridedError(f"{op}: no backend for device {device!r} (known devices: {', '.join(BACKENDS)})")
    module = entry.module
    if module is None:
        try:
            module = entry.load()
        except Exception as e:  # missing, or failing to import (numba-cuda 0.30.0 next to numba 0.68)
            raise StridedError(f"{op}: device {device!r} needs {entry.requires}: {type(e).__name__}: {e}") from None
        bad = problems(module, (*_VALUES, *_calls(Backend)))
        if bad or (module.KIND, module.DEVICES) != (entry.kind, entry.pattern.pattern):
            raise StridedError(f"{op}: the backend of {device!r} is not a backend: "
                               f"{'; '.join(bad) or 'its KIND and DEVICES differ from those registered'}")
        entry.module = module
    count = module.device_count()
    if index >= count:
        raise StridedError(f"{op}: no device {device!r}: the {entry.kind} backend sees {count} "
                           f"device{'s' * (count != 1)}")
    BACKENDS[device] = module
    return module


class _Loaded(dict):
    def __missing__(self, device: str):
        return load("backend", device)


class _Allocators(dict):
    def __missing__(self, device: str):
        fn = self[device] = BACKENDS[device].allocator(device)
        return fn


# canonical device name -> its backend, and -> the function allocating there
BACKENDS = _Loaded()
ALLOCATORS = _Allocators()


def kernels_for(device: str):
    """The backend of ``device``."""
    return BACKENDS[device]


def alloc_on(device: str, numel: int, np_dtype, op: str = "alloc") -> Storage:
    """An uninitialised buffer of ``numel`` elements on ``device``: its backend's allocator (on
    the CPU, ``storage.alloc`` itself, the recycling pool)."""
    return ALLOCATORS[device](numel, np_dtype, op)


def device_index(device: str) -> int:
    """The number of a canonical device name (``cuda:1``: 1), 0 for an unnumbered one."""
    return int(device.partition(":")[2] or 0)


def common_device(op: str, *storages) -> str:
    """The one device of every storage; a StridedError naming the devices when they differ."""
    device = storages[0].device
    for s in storages[1:]:
        if s.device != device:
            raise StridedError(f"{op}: expected all operands on one device, got {device!r} and {s.device!r}")
    return device
