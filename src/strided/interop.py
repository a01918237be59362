"""Zero-copy exchange with NumPy and PyTorch: the array interface and DLPack.

Array interface
    ``np.asarray(t)`` reads ``t.__array_interface__`` (v3): the address of
    element 0 of the view, byte strides (negative and zero included) and the
    read-only bit, so NumPy builds a view of the same memory for every layout.
    bf16 has no typestr (NumPy would see 2-byte voids), so for bf16 the
    property raises AttributeError and NumPy falls back to ``Tensor.__array__``,
    which returns a bf16 view of the same memory (still no copy).

DLPack, producer (``Tensor.__dlpack__`` -> ``to_dlpack``)
    The structs are ctypes structures; the capsule is made with
    ``PyCapsule_New``.  A versioned capsule ("dltensor_versioned", DLPack 1.0,
    read-only and is-copied flags) is produced when the consumer passes
    ``max_version >= (1, 0)``, the legacy "dltensor" one otherwise.  The
    manager context is a Python object holding the structs and the Storage;
    the deleter drops one reference to it, exactly once: the consumer calls it
    once it renamed the capsule to "used_dltensor[_versioned]", and the
    capsule's destructor calls it when the capsule dies unconsumed.

    The deleter and the capsule destructor are three tiny native functions
    (LLVM IR compiled once with llvmlite, which numba already depends on).  They
    cannot be ctypes Python callbacks: consumers drop capsules while an
    exception is pending (``np.from_dlpack`` of a bf16 tensor raises
    "unsupported dtype" and then frees our capsule), and a Python callback
    entered with a pending exception turns it into a SystemError and never
    runs, leaking the export.  The native code only compares the capsule name,
    takes the GIL (torch may free from any thread) and calls ``Py_DecRef``;
    every Python-level finaliser it triggers saves and restores the pending
    exception itself.  (A callback declared with a py_object argument would
    also resurrect a dying capsule and segfault; the native functions take
    plain pointers.)

    Negative strides: PyTorch 2.13 cannot import them and aborts the whole
    process ("Storage size calculation overflowed" thrown through a noexcept
    frame), so a view with a negative stride is never exported as is: with
    ``copy=None`` (the consumer allows a copy when needed) the capsule holds a
    compact copy and says so (the is-copied flag); with ``copy=False`` it is a
    BufferError.  ``np.asarray(t)`` stays the zero-copy path for flipped views.
    Read-only buffers go out with the read-only flag (and never as a legacy
    capsule, which cannot carry it); note that PyTorch 2.13 ignores that flag
    (as it does for NumPy's own exports) and hands out a writable tensor.

DLPack, consumer (``from_dlpack``)
    Asks the producer for a versioned capsule (falling back to legacy), reads
    the DLTensor with ctypes, renames the capsule "used_..." (we now own the
    deleter) and builds a 1-D numpy buffer over exactly the span the export
    touches; the buffer's base is a holder whose finaliser calls the producer's
    deleter once.  The result shares the producer's memory, strides and
    address; read-only exports import read-only.
"""

from __future__ import annotations

import ctypes
import numbers
import threading

import numpy as np

from . import devices
from .core import dtype as dt
from .backend import alloc_on, device_index, kernels_for
from .core.errors import DTypeError, StridedError
from .layout import Layout
from .layout.layout import contiguous_strides
from .creation import from_numpy
from .core.storage import wrap
from .tensor import Tensor

__all__ = ["array_interface", "cuda_array_interface", "interface_layout", "from_cuda_array_interface", "to_dlpack",
           "from_dlpack", "DLPackError", "dlpack_counters", "operand", "NotNumeric"]


class DLPackError(StridedError, BufferError):
    """A DLPack exchange that cannot happen (the spec asks for BufferError)."""


# ---------------------------------------------------------------------------
# foreign arrays as operands


class NotNumeric(DTypeError):
    """An operand NumPy reads as an array of non-numbers (None, strings, objects); ``shape`` is
    that array's, which ``==`` and ``!=`` broadcast their constant answer to (NumPy's rule)."""

    def __init__(self, message: str, shape: tuple):
        super().__init__(message)
        self.shape = shape


_NUMERIC_KINDS = frozenset("biufc")


def operand(op: str, x, device: str):
    """``x`` as an operand of ``op`` beside tensors on ``device``.

    A tensor and a Python number stay as they are (a number is weak: it only widens the
    tensor's kind).  Anything else is an array with NumPy's dtype, NumPy scalars and 0-d
    arrays included (typed, as in NumPy 2): a NumPy array is viewed where it lies (any
    strides), a DLPack producer (PyTorch) through its capsule, an object with
    ``__array_interface__`` or ``__array__`` through ``np.asarray`` (a view when the object
    gives one), a nested sequence by NumPy's dtype discovery.  For a tensor on a device,
    device memory (``__cuda_array_interface__``) is taken as it is and host data is refused:
    nothing moves between host and device unasked."""
    if isinstance(x, Tensor) or (isinstance(x, numbers.Number) and not isinstance(x, np.generic)):
        return x
    if device != "cpu":
        if hasattr(x, "__cuda_array_interface__"):
            return _foreign(op, x, from_cuda_array_interface, x, op)
        raise StridedError(
            f"{op}: the tensor is on {device} and the {_kind(x)} operand is host data; strided moves "
            f"nothing to a device unasked (strided.asarray(x, device={device!r}) copies it there)")
    if isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "__cuda_array_interface__"):
        raise StridedError(f"{op}: the tensor is on the CPU and the {_kind(x)} operand is device memory; "
                           "strided moves nothing between devices unasked (t.to_device(...) moves the tensor)")
    elif hasattr(x, "__dlpack__") and not isinstance(x, np.generic):
        return _foreign(op, x, from_dlpack, x)
    else:
        a = _foreign(op, x, np.asarray, x)
    if a.dtype.kind not in _NUMERIC_KINDS:
        raise NotNumeric(f"{op}: expected a tensor, a number or an array of numbers, got a {_kind(x)} "
                         f"that NumPy reads as dtype {a.dtype}", a.shape)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))  # byte-swapped data computes only after a swap
    try:
        return from_numpy(a)
    except DTypeError as e:
        raise DTypeError(f"{op}: the {_kind(x)} operand has dtype {a.dtype}, which strided does not hold "
                         f"({e})") from None


def _kind(x) -> str:
    """``x``'s type as its package spells it (``numpy.ndarray``, ``torch.Tensor``)."""
    cls = type(x)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


def _foreign(op: str, x, read, *args):
    """``read(*args)``, with whatever the foreign object raises turned into a StridedError naming ``op``."""
    try:
        return read(*args)
    except StridedError:
        raise
    except Exception as e:  # a foreign protocol may raise anything
        raise StridedError(f"{op}: cannot read the {_kind(x)} operand as an array: "
                           f"{type(e).__name__}: {e}") from None


# ---------------------------------------------------------------------------
# array interface


def array_interface(t) -> dict:
    """``__array_interface__`` v3 of a tensor: a zero-copy NumPy view for every layout."""
    if t.dtype is dt.bf16:
        # AttributeError makes hasattr() false, so NumPy goes on to __array__ (a bf16 view).
        raise AttributeError(
            "__array_interface__: bf16 has no array-interface typestr (NumPy would read 2-byte "
            "voids); np.asarray(t) uses Tensor.__array__ instead, which is also zero-copy"
        )
    if t._storage.device != "cpu":
        # Device memory has no host address: NumPy goes on to __array__, an explicit host copy
        # (numba-cuda's simulated arrays would hand out host memory here, real ones have none).
        raise AttributeError(f"__array_interface__: a tensor on {t._storage.device} has no host memory to view")
    data = t._storage.data
    item = data.itemsize
    base = data.__array_interface__["data"][0]
    lay = t.layout
    # Element 0 of the view; an empty view points at the buffer itself (never past it).
    addr = base + lay.offset * item if lay.numel else base
    return {
        "version": 3,
        "shape": lay.shape,
        "typestr": data.dtype.str,
        "descr": data.dtype.descr,
        "strides": tuple(s * item for s in lay.stride),
        "data": (addr, not data.flags.writeable),
    }


# ---------------------------------------------------------------------------
# CUDA array interface (numba, CuPy, PyTorch)

# The stream the CUDA backend's kernels and copies run on: the legacy default stream,
# which the interface spells 1 (0 is disallowed, None would say "no synchronisation").
CAI_STREAM = 1


def cuda_array_interface(t) -> dict:
    """``__cuda_array_interface__`` v3 of a tensor on a CUDA device: the device address of
    element 0 of the view, byte strides (None when the view is C-contiguous, negative and
    zero strides as they are, like ``__array_interface__``), never read-only, and the
    stream its writes were queued on.  A CPU tensor has none (AttributeError, so that
    ``hasattr`` is false and consumers go on to other protocols)."""
    device = t._storage.device
    if device == "cpu":
        raise AttributeError("__cuda_array_interface__: a tensor on the CPU has no device memory")
    if t.dtype is dt.bf16:  # as for __array_interface__: DLPack (kDLBfloat) exports it
        raise AttributeError("__cuda_array_interface__: bf16 has no typestr (consumers would read 2-byte "
                             "voids); DLPack exports it (torch.from_dlpack(t))")
    data = t._storage.data
    lay = t.layout
    contiguous = lay.stride == contiguous_strides(lay.shape)
    return {
        "version": 3,
        "shape": lay.shape,
        "typestr": data.dtype.str,
        "descr": data.dtype.descr,
        "data": (_device_address(t), False),
        "strides": None if contiguous else tuple(s * data.itemsize for s in lay.stride),
        "stream": CAI_STREAM,
    }


def _device_address(t) -> int:
    """The device address of element 0 of a CUDA tensor's view (the buffer's own when it is
    empty, never past it)."""
    data = t._storage.data
    base = kernels_for(t._storage.device).storage.pointer(data)
    return base + t.layout.offset * data.itemsize if t.layout.numel else base


def interface_layout(op: str, desc: dict) -> tuple:
    """``(address, length, Layout)`` of a ``__cuda_array_interface__`` dict: the lowest
    address the view touches, how many elements from there it spans, and its layout over
    that span (element strides, signed; offset the position of element 0).  A StridedError
    naming ``op`` for what strided cannot take: a mask, strides that are not whole
    elements, an unknown typestr."""
    if not isinstance(desc, dict) or "shape" not in desc or "typestr" not in desc or "data" not in desc:
        raise StridedError(f"{op}: expected a __cuda_array_interface__ dict with shape, typestr and data, got {desc!r}")
    if desc.get("mask") is not None:
        raise StridedError(f"{op}: a masked __cuda_array_interface__ is not supported")
    try:
        np_dtype = np.dtype(desc["typestr"])
        shape = tuple(int(n) for n in desc["shape"])
        ptr = int(desc["data"][0] or 0)
    except (TypeError, ValueError) as e:
        raise StridedError(f"{op}: cannot read __cuda_array_interface__ {desc!r}: {e}") from None
    dt.as_dtype(np_dtype)  # a dtype strided holds, or a DTypeError naming it
    item = np_dtype.itemsize
    byte_strides = desc.get("strides")
    if byte_strides is None:
        strides = contiguous_strides(shape)
    else:
        byte_strides = tuple(int(s) for s in byte_strides)
        if len(byte_strides) != len(shape) or any(s % item for s in byte_strides):
            raise StridedError(f"{op}: byte strides {byte_strides} are not whole {item}-byte elements "
                               f"of shape {shape}")
        strides = tuple(s // item for s in byte_strides)
    if any(n == 0 for n in shape):
        return ptr, 0, Layout(shape, contiguous_strides(shape))
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return ptr + low * item, high - low + 1, Layout(shape, strides, -low)


def alloc_copy(t: Tensor):
    """A fresh dense storage on ``t``'s device holding its elements (the backend's copy)."""
    dense = Layout.contiguous(t.shape)
    store = alloc_on(t.device, dense.numel, t._storage.data.dtype, "copy")
    if dense.numel:
        kernels_for(t.device).copy.copy_into(store.data, dense, t._storage.data, t.layout)
    return store


def from_cuda_array_interface(obj, op: str = "asarray") -> Tensor:
    """A tensor over the device memory ``obj.__cuda_array_interface__`` describes (no copy):
    a CUDA storage spanning exactly what the view touches, kept alive with ``obj``."""
    desc = obj.__cuda_array_interface__
    addr, length, lay = interface_layout(op, desc)
    np_dtype = np.dtype(desc["typestr"])
    flat = {"version": 3, "shape": (length,), "typestr": np_dtype.str, "data": (addr, False), "strides": None,
            "stream": desc.get("stream")}
    module = devices.cuda_backend(op)
    return Tensor(module.storage.wrap_interface(flat, obj), lay, dt.as_dtype(np_dtype))


# ---------------------------------------------------------------------------
# DLPack structures (dlpack.h v1.0)

K_DL_CPU = 1
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1
DLPACK_VERSION = (1, 0)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),  # void (*)(DLManagedTensor *)
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),  # void (*)(DLManagedTensorVersioned *)
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# DType name <-> DLDataType (code, bits): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
# kDLComplex 5 (bits count both parts: complex64 is 64), kDLBool 6.
_DL_CODES = {
    "f16": (2, 16), "bf16": (4, 16), "f32": (2, 32), "f64": (2, 64), "c64": (5, 64), "c128": (5, 128),
    "u8": (1, 8), "u16": (1, 16), "u32": (1, 32), "u64": (1, 64),
    "i8": (0, 8), "i16": (0, 16), "i32": (0, 32), "i64": (0, 64), "bool": (6, 8),
}
_FROM_DL = {code: dt.as_dtype(name) for name, code in _DL_CODES.items()}
_DL_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex", 6: "bool"}

# Capsule names live as long as the process: PyCapsule keeps the pointer, not a copy.
_NAMES = {
    key: ctypes.create_string_buffer(value)
    for key, value in (
        ("legacy", b"dltensor"),
        ("versioned", b"dltensor_versioned"),
        ("used_legacy", b"used_dltensor"),
        ("used_versioned", b"used_dltensor_versioned"),
    )
}


def _name(key: str) -> int:
    return ctypes.addressof(_NAMES[key])


def _c_api(name: str, restype, *argtypes):
    # Own prototypes: the attributes of ctypes.pythonapi are shared, and other code sets their argtypes.
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_PyCapsule_New = _c_api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_PyCapsule_IsValid = _c_api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_PyCapsule_GetPointer = _c_api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)
_PyCapsule_GetName = _c_api("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_PyCapsule_SetName = _c_api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_Py_IncRef = _c_api("Py_IncRef", None, ctypes.py_object)
_Py_DecRef = _c_api("Py_DecRef", None, ctypes.py_object)

# Foreign deleters are called with the GIL held (PYFUNCTYPE): NumPy's takes it
# anyway, and a deleter that assumes it is then safe too.
_FOREIGN_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


# ---------------------------------------------------------------------------
# the native deleters and capsule destructor

_native = None  # (engine, {name: address}) once compiled
_native_lock = threading.Lock()


def _ir(opaque: bool) -> str:
    p, pp = ("ptr", "ptr") if opaque else ("i8*", "i8**")
    legacy_ctx = DLManagedTensor.manager_ctx.offset
    versioned_ctx = DLManagedTensorVersioned.manager_ctx.offset

    def const(key):
        return f"inttoptr i64 {_name(key)} to {p}"

    return f"""
declare i32 @Py_IsInitialized()
declare i32 @PyGILState_Ensure()
declare void @PyGILState_Release(i32)
declare void @Py_DecRef({p})
declare i32 @PyCapsule_IsValid({p}, {p})
declare {p} @PyCapsule_GetPointer({p}, {p})

; Drop the manager context (one Python reference) stored at byte ctx_offset of
; the managed tensor.  The context owns the struct, so nothing touches it after.
define internal void @release_ctx({p} %m, i64 %ctx_offset) {{
entry:
  %alive = call i32 @Py_IsInitialized()
  %ok = icmp ne i32 %alive, 0
  br i1 %ok, label %load, label %done
load:
  %slot = getelementptr i8, {p} %m, i64 %ctx_offset
  %slotp = bitcast {p} %slot to {pp}
  %ctx = load {p}, {pp} %slotp
  %none = icmp eq {p} %ctx, null
  br i1 %none, label %done, label %drop
drop:
  %gil = call i32 @PyGILState_Ensure()
  store {p} null, {pp} %slotp
  call void @Py_DecRef({p} %ctx)
  call void @PyGILState_Release(i32 %gil)
  br label %done
done:
  ret void
}}

define void @strided_dlpack_deleter_legacy({p} %m) {{
  call void @release_ctx({p} %m, i64 {legacy_ctx})
  ret void
}}

define void @strided_dlpack_deleter_versioned({p} %m) {{
  call void @release_ctx({p} %m, i64 {versioned_ctx})
  ret void
}}

; A capsule still carrying its original name was never consumed: free it here.
; A consumer renamed it "used_..." and owns the deleter call then.
define internal i1 @release_if_named({p} %cap, {p} %name, i64 %ctx_offset) {{
entry:
  %valid = call i32 @PyCapsule_IsValid({p} %cap, {p} %name)
  %named = icmp ne i32 %valid, 0
  br i1 %named, label %release, label %done
release:
  %m = call {p} @PyCapsule_GetPointer({p} %cap, {p} %name)
  call void @release_ctx({p} %m, i64 %ctx_offset)
  br label %done
done:
  ret i1 %named
}}

define void @strided_dlpack_capsule_destructor({p} %cap) {{
entry:
  %vname = {const("versioned")}
  %released = call i1 @release_if_named({p} %cap, {p} %vname, i64 {versioned_ctx})
  br i1 %released, label %done, label %legacy
legacy:
  %lname = {const("legacy")}
  %ignored = call i1 @release_if_named({p} %cap, {p} %lname, i64 {legacy_ctx})
  br label %done
done:
  ret void
}}
"""


def _native_functions() -> dict:
    global _native
    with _native_lock:
        if _native is None:
            _native = _compile_native()
    return _native[1]


def _compile_native():
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for sym in (
        "Py_IsInitialized", "PyGILState_Ensure", "PyGILState_Release", "Py_DecRef",
        "PyCapsule_IsValid", "PyCapsule_GetPointer",
    ):
        llvm.add_symbol(sym, ctypes.cast(getattr(ctypes.pythonapi, sym), ctypes.c_void_p).value)
    mod = llvm.parse_assembly(_ir(opaque=llvm.llvm_version_info[0] >= 15))
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    addrs = {
        name: engine.get_function_address(f"strided_dlpack_{name}")
        for name in ("deleter_legacy", "deleter_versioned", "capsule_destructor")
    }
    # Capsules and imported tensors can die after this module is torn down at exit:
    # the code and the capsule names they point at must outlive everything, so
    # they are deliberately never freed.
    _Py_IncRef(engine)
    _Py_IncRef(_NAMES)
    return engine, addrs


# ---------------------------------------------------------------------------
# producer

_counts = {"exported": 0, "released": 0, "imported": 0, "import_released": 0}


def dlpack_counters() -> dict:
    """How many capsules were exported / released and imports made / released (for tests)."""
    return dict(_counts)


class _Export:
    """The manager context: owns the structs and keeps the buffer alive until the deleter."""

    __slots__ = ("managed", "shape", "strides", "storage")

    def __init__(self, managed, shape, strides, storage):
        self.managed = managed
        self.shape = shape
        self.strides = strides
        self.storage = storage

    def __del__(self, _counts=_counts):
        _counts["released"] += 1


def _check_copy(op: str, copy):
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise StridedError(f"{op}: copy must be None, True or False, got {copy!r}")
    return None if copy is None else bool(copy)


def _wants_versioned(max_version) -> bool:
    if max_version is None:
        return False
    try:
        major, minor = (int(v) for v in max_version)
    except (TypeError, ValueError):
        raise StridedError(
            f"__dlpack__: max_version must be a (major, minor) tuple of ints, got {max_version!r}"
        ) from None
    return (major, minor) >= (1, 0)


def to_dlpack(t, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule over ``t`` (see the module notes for copies and negative strides)."""
    if t._storage.device != "cpu":
        return _to_dlpack_cuda(t, stream, max_version, dl_device, copy)
    if stream is not None:
        raise DLPackError(
            f"__dlpack__: strided tensors live on the CPU, which has no streams; "
            f"expected stream=None, got {stream!r}"
        )
    if dl_device is not None:
        try:
            dev = tuple(int(v) for v in dl_device)
        except (TypeError, ValueError):
            raise DLPackError(f"__dlpack__: dl_device must be a (type, id) pair, got {dl_device!r}") from None
        if dev != (K_DL_CPU, 0):
            raise DLPackError(
                f"__dlpack__: strided tensors live on the CPU (kDLCPU, device 0) and cannot be "
                f"exported to DLPack device {dev}"
            )
    copy = _check_copy("__dlpack__", copy)
    versioned = _wants_versioned(max_version)
    lay = t.layout
    negative = [d for d, (n, s) in enumerate(zip(lay.shape, lay.stride)) if s < 0 and n > 1]
    copied = False
    if copy or (copy is None and negative):
        t = from_numpy(np.array(t.numpy(), copy=True, order="C"))
        lay = t.layout
        copied = True
    elif negative:
        raise DLPackError(
            f"__dlpack__: the view {lay} has negative strides on dims {negative}; PyTorch cannot "
            "import them (it aborts the process), so a zero-copy export is refused with copy=False; "
            "allow a copy (copy=None or True) or use np.asarray(t) for a zero-copy NumPy view"
        )
    data = t._storage.data
    readonly = not data.flags.writeable
    if readonly and not versioned:
        raise DLPackError(
            "__dlpack__: the buffer is read-only and a legacy (pre-1.0) DLPack capsule cannot say "
            "so; ask for max_version >= (1, 0) or copy=True"
        )
    item = data.itemsize
    base = data.__array_interface__["data"][0]
    return _capsule(t, base + lay.offset * item if lay.numel else base, (K_DL_CPU, 0), readonly, copied, versioned)


def _capsule(t, address: int, device: tuple, readonly: bool, copied: bool, versioned: bool):
    """The DLPack capsule of ``t``'s layout at ``address`` (element 0) on DLPack ``device``,
    versioned (with the read-only and is-copied flags) or legacy; the export holds ``t``'s
    storage until the consumer's deleter runs."""
    lay = t.layout
    native = _native_functions()
    ndim = lay.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*lay.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*lay.stride)
    if versioned:
        managed = DLManagedTensorVersioned()
        managed.version = DLPackVersion(*DLPACK_VERSION)
        managed.flags = (FLAG_READ_ONLY if readonly else 0) | (FLAG_IS_COPIED if copied else 0)
        managed.deleter = native["deleter_versioned"]
        name = _name("versioned")
    else:
        managed = DLManagedTensor()
        managed.deleter = native["deleter_legacy"]
        name = _name("legacy")
    dl = managed.dl_tensor
    dl.data = address
    dl.device = DLDevice(*device)
    dl.ndim = ndim
    dl.dtype = DLDataType(*_DL_CODES[t.dtype.name], 1)
    dl.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    dl.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    ctx = _Export(managed, shape, strides, t._storage)
    managed.manager_ctx = id(ctx)
    _Py_IncRef(ctx)  # the reference the deleter drops
    _counts["exported"] += 1
    try:
        return _PyCapsule_New(ctypes.addressof(managed), name, native["capsule_destructor"])
    except BaseException:
        managed.manager_ctx = None
        _Py_DecRef(ctx)
        raise


# ---------------------------------------------------------------------------
# consumer


class _Imported:
    """The base of an imported buffer: calls the producer's deleter once, when the last view dies."""

    __slots__ = ("_managed", "_deleter", "_iface", "__weakref__")

    def __init__(self, managed: int, deleter: int | None):
        self._managed = managed
        self._deleter = deleter
        self._iface = None

    @property
    def __array_interface__(self):
        return self._iface

    # Defaults, not globals: this may run at exit, after the module's globals are gone.
    def __del__(self, _counts=_counts, _call=_FOREIGN_DELETER):
        deleter, self._deleter = self._deleter, None
        if deleter:
            _counts["import_released"] += 1
            _call(deleter)(self._managed)


def _is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _request_capsule(x, copy):
    """``x.__dlpack__``, versioned when the producer can, legacy otherwise (the torch fallbacks)."""
    attempts = []
    if copy is not None:
        attempts.append({"max_version": DLPACK_VERSION, "copy": copy})
    attempts += [{"max_version": DLPACK_VERSION}, {}]
    for i, kwargs in enumerate(attempts):
        try:
            return x.__dlpack__(**kwargs)
        except TypeError:
            if i == len(attempts) - 1:
                raise


def _capsule_name(cap) -> str:
    if not _is_capsule(cap):
        return f"<{type(cap).__name__}, not a capsule>"
    try:
        name = _PyCapsule_GetName(cap)
    except Exception:  # an invalid capsule
        return "<unreadable>"
    return name.decode(errors="replace") if name is not None else "<unnamed>"


def _dl_dtype_name(code: int, bits: int, lanes: int) -> str:
    kind = _DL_CODE_NAMES.get(code, f"code {code}")
    text = f"{kind}{bits}"
    return text if lanes == 1 else f"{text}x{lanes}"


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor over memory exported through DLPack (NumPy arrays, PyTorch tensors, capsules).

    Zero-copy: the result shares the producer's memory, address and strides
    (negative and zero strides included); read-only exports import read-only.
    ``copy=True`` returns a compact copy; ``copy=False`` asks the producer never to copy.
    """

    copy = _check_copy("from_dlpack", copy)
    if (not _is_capsule(x) and hasattr(x, "__cuda_array_interface__") and hasattr(x, "__dlpack_device__")
            and int(x.__dlpack_device__()[0]) == K_DL_CUDA
            and device in (None, "cuda", f"cuda:{int(x.__dlpack_device__()[1])}")):
        # A CUDA producer (a PyTorch or CuPy tensor): the same memory through its CUDA array
        # interface, which says everything the capsule would (a capsule alone is not read yet).
        t = from_cuda_array_interface(x, "from_dlpack")
        return Tensor(alloc_copy(t), Layout.contiguous(t.shape), t.dtype) if copy else t
    if device is not None and device not in ("cpu", (K_DL_CPU, 0)):
        raise DLPackError(
            f"from_dlpack: strided tensors live on the CPU; expected device=None or 'cpu', got {device!r}")
    if _is_capsule(x):
        cap = x
    elif hasattr(x, "__dlpack__"):
        if hasattr(x, "__dlpack_device__"):
            dev = tuple(int(v) for v in x.__dlpack_device__())
            if dev[0] != K_DL_CPU:
                raise DLPackError(
                    f"from_dlpack: strided only reads CPU memory (kDLCPU, 1); "
                    f"the {type(x).__name__} is on DLPack device {dev}"
                )
        cap = _request_capsule(x, copy)
    else:
        raise StridedError(
            f"from_dlpack: expected an object with __dlpack__ (a NumPy array, a PyTorch tensor, ...) "
            f"or a DLPack capsule, got {type(x).__name__}"
        )

    if _PyCapsule_IsValid(cap, _name("versioned")):
        versioned = True
        ptr = _PyCapsule_GetPointer(cap, _name("versioned"))
        managed = DLManagedTensorVersioned.from_address(ptr)
        if managed.version.major != 1:
            # Left unconsumed: the producer's capsule destructor frees it.
            raise DLPackError(
                f"from_dlpack: DLPack version {managed.version.major}.{managed.version.minor} is not "
                "supported (expected major version 1)"
            )
        flags = managed.flags
    elif _PyCapsule_IsValid(cap, _name("legacy")):
        versioned = False
        ptr = _PyCapsule_GetPointer(cap, _name("legacy"))
        managed = DLManagedTensor.from_address(ptr)
        flags = 0
    else:
        raise DLPackError(
            f"from_dlpack: expected a 'dltensor' or 'dltensor_versioned' capsule, got one named "
            f"{_capsule_name(cap)!r} (a 'used_' capsule was already consumed)"
        )

    dl = managed.dl_tensor
    if dl.device.device_type != K_DL_CPU:
        raise DLPackError(
            f"from_dlpack: strided only reads CPU memory (kDLCPU, 1); the capsule is on DLPack device "
            f"({dl.device.device_type}, {dl.device.device_id})"
        )
    code, bits, lanes = dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
    dtype = _FROM_DL.get((code, bits)) if lanes == 1 else None
    if dtype is None:
        raise DTypeError(
            f"from_dlpack: DLPack dtype {_dl_dtype_name(code, bits, lanes)} (code {code}, bits {bits}, "
            f"lanes {lanes}) is not supported (expected one of {', '.join(_DL_CODES)})"
        )
    ndim = dl.ndim
    if ndim < 0:
        raise DLPackError(f"from_dlpack: the capsule has ndim {ndim}")
    shape = tuple(dl.shape[i] for i in range(ndim))
    if any(n < 0 for n in shape):
        raise DLPackError(f"from_dlpack: the capsule has negative sizes {shape}")
    strides = tuple(dl.strides[i] for i in range(ndim)) if dl.strides else contiguous_strides(shape)
    readonly = bool(flags & FLAG_READ_ONLY)
    producer_copied = bool(flags & FLAG_IS_COPIED)
    address = (dl.data or 0) + dl.byte_offset
    itemsize = dtype.np.itemsize
    if 0 not in shape:
        if not dl.data:
            raise DLPackError(f"from_dlpack: the capsule holds {shape} elements at a NULL data pointer")
        if address % itemsize:
            # numba kernels (and NumPy's fast paths) assume element-aligned buffers.
            raise DLPackError(
                f"from_dlpack: element 0 is at address {address:#x}, not a multiple of the "
                f"{itemsize}-byte {dtype.name} itemsize; copy it on the producer's side first"
            )

    # From here on we own the export: the holder calls its deleter exactly once.
    holder = _Imported(ptr, managed.deleter)
    _PyCapsule_SetName(cap, _name("used_versioned" if versioned else "used_legacy"))
    _counts["imported"] += 1

    np_dtype = dtype.np
    if 0 in shape:
        del holder  # nothing to read: hand the memory back now
        return Tensor(wrap(np.empty(0, np_dtype)), Layout(shape, contiguous_strides(shape)), dtype)
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    # bf16 has no typestr: read 2-byte unsigned ints and view them as bf16.
    typestr = np.dtype(np.uint16).str if dtype is dt.bf16 else np_dtype.str
    holder._iface = {
        "version": 3,
        "shape": (high - low + 1,),
        "typestr": typestr,
        "data": (address + low * itemsize, readonly),
    }
    buf = np.asarray(holder)  # its base is the holder: the memory lives as long as any view
    if dtype is dt.bf16:
        buf = buf.view(np_dtype)
    lay = Layout(shape, strides, -low)
    lay.validate(len(buf))
    out = Tensor(wrap(buf), lay, dtype)
    if copy and not producer_copied:
        return from_numpy(np.array(out.numpy(), copy=True, order="C"))
    return out


# ---------------------------------------------------------------------------
# Tensor's exchange methods

K_DL_CUDA = 2


def _dlpack_device(t) -> tuple[int, int]:
    """(DLPack device type, device id) of the storage behind ``t``: its backend's type
    (kDLCPU, kDLCUDA) and the device's number (N for ``cuda:N``)."""
    device = t._storage.device
    return kernels_for(device).DLPACK, device_index(device)


def _to_dlpack_cuda(t, stream, max_version, dl_device, copy):
    """A kDLCUDA capsule over a CUDA tensor: the CPU's rules for copies and negative strides
    (a flagged compact copy, made on the device, or BufferError with copy=False).  The
    kernels run on the legacy default stream; unless the consumer says it needs no
    synchronisation (stream=-1), the device is synchronised before the capsule goes out."""
    device = t._storage.device
    here = _dlpack_device(t)
    if dl_device is not None:
        try:
            dev = tuple(int(v) for v in dl_device)
        except (TypeError, ValueError):
            raise DLPackError(f"__dlpack__: dl_device must be a (type, id) pair, got {dl_device!r}") from None
        if dev != here:
            raise DLPackError(f"__dlpack__: the tensor is on {device} (DLPack device {here}) and is not exported "
                              f"to DLPack device {dev}; t.to_device(...) moves it")
    if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int) or stream == 0):
        raise DLPackError(f"__dlpack__: expected stream None, -1 or a CUDA stream handle (1 the legacy default), "
                          f"got {stream!r}")
    copy = _check_copy("__dlpack__", copy)
    versioned = _wants_versioned(max_version)
    lay = t.layout
    negative = [d for d, (n, s) in enumerate(zip(lay.shape, lay.stride)) if s < 0 and n > 1]
    copied = False
    K = kernels_for(device)
    if copy or (copy is None and negative):
        t = Tensor(alloc_copy(t), Layout.contiguous(lay.shape), t.dtype)
        lay, copied = t.layout, True
    elif negative:
        raise DLPackError(
            f"__dlpack__: the view {lay} has negative strides on dims {negative}; PyTorch cannot "
            "import them, so a zero-copy export is refused with copy=False; allow a copy (copy=None or True)"
        )
    if stream != -1:
        K.storage.synchronize()
    # device memory is always writable
    return _capsule(t, _device_address(t), here, False, copied, versioned)


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


Tensor.__array_interface__ = property(array_interface)
Tensor.__cuda_array_interface__ = property(cuda_array_interface)
Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
