"""Buffers: the 1-D numpy arrays every view shares, and the pool that recycles them.

A fresh large allocation costs its first-touch page faults (about 145 ms for
64 MiB on these machines), which dominate simple kernels on big outputs.  So a
buffer whose last view dies goes back to a bounded pool keyed by byte size and
is handed out again for the next allocation of that size.

Safety: a buffer is recycled only when nothing but its Storage refers to it
(no numpy view, no exported array), checked with its reference count when the
Storage dies.  ``zeros`` still zero-fills whatever it receives.

Below the pool's sizes, buffers are glibc malloc's.  Its defaults hand freed memory
back to the OS as soon as more than 128 KiB lies free at the top of the heap (a
threshold that grows only to twice the largest mapped block freed so far), so a
program that frees a few hundred KiB of buffers and allocates them again (a training
step's gradients and activations) takes fresh page faults on every step.  So, on
glibc, strided sets malloc's mmap threshold to 32 MiB and its trim threshold to twice
that (where glibc's own adaptive rule ends, once a 32 MiB block has been freed) when the
process starts, unless the user set any of glibc's malloc variables or
``STRIDED_MALLOC=default``; ``MALLOC_SET`` records what strided set.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict

import numpy as np

from .errors import StridedError

_POOL_ENV = "STRIDED_POOL_BYTES"
# Pooled from 16 MiB.  Below that glibc's malloc hands freed memory back warm by itself
# (its mmap threshold adapts up to 32 MiB), and the pool's bookkeeping (5 to 10 us a
# buffer, a fifth of a 1 MiB cat) would only add cost; from 32 MiB glibc maps fresh pages
# for every allocation (7.5 ms of page faults at 32 MiB, measured), and from 24 MiB it
# already sometimes does.
_MIN_POOLED = 1 << 24
_SMALL_NUMEL = _MIN_POOLED // 16  # never pooled, whatever the dtype (itemsize at most 16)
_new = object.__new__
_empty = np.empty

_MALLOC_ENV = "STRIDED_MALLOC"  # "default": leave glibc's malloc settings alone
_GLIBC_MALLOC_ENV = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
                     "MALLOC_ARENA_MAX", "GLIBC_TUNABLES")
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
_GLIBC_MMAP_MAX = 1 << 25  # the largest mmap threshold glibc's adaptive rule sets on 64-bit
MALLOC_SET: dict = {}  # mallopt parameter name -> the bytes strided set


def _keep_freed_memory() -> None:
    if os.environ.get(_MALLOC_ENV, "").strip().lower() == "default" or \
            any(v in os.environ for v in _GLIBC_MALLOC_ENV):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):
            return  # another C library (musl's has no mallopt; macOS's none of these rules)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    for name, param, value in (("M_MMAP_THRESHOLD", _M_MMAP_THRESHOLD, _GLIBC_MMAP_MAX),
                               ("M_TRIM_THRESHOLD", _M_TRIM_THRESHOLD, 2 * _GLIBC_MMAP_MAX)):
        if mallopt(param, value) == 1:
            MALLOC_SET[name] = value


_keep_freed_memory()


def _env_pool_bytes() -> int:
    raw = os.environ.get(_POOL_ENV)
    if raw is None:
        return 1 << 30
    try:
        return max(0, int(raw))
    except ValueError:
        return 1 << 30


class _Pool:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.free: OrderedDict[int, list[np.ndarray]] = OrderedDict()
        self.lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray | None:
        if nbytes < _MIN_POOLED or not self.max_bytes:
            return None
        with self.lock:
            bucket = self.free.get(nbytes)
            if not bucket:
                return None
            raw = bucket.pop()
            if not bucket:
                del self.free[nbytes]
            self.bytes -= nbytes
            return raw

    def give(self, raw: np.ndarray) -> None:
        nbytes = raw.nbytes
        if nbytes < _MIN_POOLED or nbytes > self.max_bytes:
            return
        with self.lock:
            while self.bytes + nbytes > self.max_bytes and self.free:
                size, bucket = next(iter(self.free.items()))  # evict the oldest size class
                bucket.pop()
                self.bytes -= size
                if not bucket:
                    del self.free[size]
            self.free.setdefault(nbytes, []).append(raw)
            self.free.move_to_end(nbytes)
            self.bytes += nbytes

    def clear(self) -> None:
        with self.lock:
            self.free.clear()
            self.bytes = 0


_pool = _Pool(_env_pool_bytes())


def set_buffer_pool(max_bytes: int) -> None:
    """Bound the bytes kept for reuse; 0 turns the pool off and frees what it held."""
    if not isinstance(max_bytes, int) or max_bytes < 0:
        raise StridedError(f"set_buffer_pool: expected a byte count >= 0, got {max_bytes!r}")
    _pool.max_bytes = max_bytes
    if max_bytes == 0:
        _pool.clear()


def pool_bytes() -> int:
    """Bytes currently held by the pool."""
    return _pool.bytes


class Storage:
    """A 1-D buffer shared by every view over it, on a device.

    ``data`` is the typed 1-D numpy array kernels read and write; ``device`` names
    where it lives (``"cpu"`` for these), which picks the kernels that run on it
    (``strided.backend``).  Buffers that came from the pool are ``_Pooled``
    storages, which give them back as they die.
    """

    __slots__ = ("data", "__weakref__")
    device = "cpu"

    def __init__(self, data: np.ndarray):
        if not isinstance(data, np.ndarray) or data.ndim != 1 or not data.flags.c_contiguous:
            got = (f"an array of shape {data.shape} and strides {data.strides}" if isinstance(data, np.ndarray)
                   else type(data).__name__)
            raise StridedError(f"Storage: expected a 1-D contiguous numpy array, got {got}")
        self.data = data

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    def __len__(self) -> int:
        return self.data.shape[0]


class _Pooled(Storage):
    """A Storage over a pool buffer (``raw``): it returns to the pool as the Storage dies,
    provided no outside reference to it survives.  Kept apart so that the many small
    storages pay no finaliser call."""

    __slots__ = ("_raw",)

    def __init__(self, data: np.ndarray, raw: np.ndarray):
        self.data = data
        self._raw = raw

    def __del__(self):
        raw = self._raw
        data = self.data
        self.data = None
        # Only our `raw` local, `data`'s base link and the argument hold it: no one else sees it.
        if data is not None and sys.getrefcount(data) == 2 and sys.getrefcount(raw) <= 4:
            del data
            _pool.give(raw)


def _memory_limit() -> int:
    """Bytes this process may hold at most: physical memory, or the cgroup's limit when lower."""
    limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            raw = f.read().strip()
        if raw != "max":
            limit = min(limit, int(raw))
    except (OSError, ValueError):
        pass
    return limit


_MEMORY_LIMIT = _memory_limit()


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.1f} GiB" if nbytes < 2**100 else f"about 2**{nbytes.bit_length() - 1} bytes"


def check_size(op: str, numel: int, np_dtype: np.dtype) -> int:
    """The byte size of ``numel`` elements, refused when it exceeds the machine's memory."""
    nbytes = numel * np.dtype(np_dtype).itemsize
    if nbytes > _MEMORY_LIMIT:
        raise StridedError(
            f"{op}: cannot allocate {numel} elements of {np.dtype(np_dtype)} ({_gib(nbytes)}): "
            f"more than this machine's memory ({_MEMORY_LIMIT / 2**30:.1f} GiB)"
        )
    return nbytes


def unpooled(numel: int, np_dtype) -> bool:
    """Whether ``alloc`` hands out a plain new array for ``numel`` elements of ``np_dtype``
    (the pool starts at ``_MIN_POOLED`` bytes): a caller that allocates one size again and
    again (a kept op) may then make that Storage itself, a call fewer."""
    return numel < _SMALL_NUMEL or numel * np.dtype(np_dtype).itemsize < _MIN_POOLED


def alloc(numel: int, np_dtype: np.dtype, op: str = "alloc") -> Storage:
    """An uninitialised buffer of ``numel`` elements, recycled when possible.

    A size beyond the machine's memory is refused up front: asking the OS would fail late
    (MemoryError) or succeed lazily and die on first touch."""
    try:
        # first: every small result comes this way, and asks nothing else (``unpooled``,
        # spelled out: a call is a fair share of a small op)
        if numel < _SMALL_NUMEL or numel * np.dtype(np_dtype).itemsize < _MIN_POOLED:
            s = _new(Storage)  # a fresh buffer needs none of __init__'s checks
            s.data = _empty(numel, np_dtype)
            return s
        np_dtype = np.dtype(np_dtype)
        nbytes = numel * np_dtype.itemsize
        if nbytes > _MEMORY_LIMIT:
            check_size(op, numel, np_dtype)  # raises, naming the op and the size
        raw = _pool.take(nbytes)
        if raw is None:
            raw = np.empty(nbytes, np.uint8)
    except MemoryError:
        raise StridedError(f"{op}: out of memory allocating {numel} elements of {np_dtype} "
                           f"({_gib(numel * np.dtype(np_dtype).itemsize)})") from None
    return _Pooled(raw.view(np_dtype), raw)


def wrap(data: np.ndarray) -> Storage:
    """A Storage over memory someone else owns (never pooled)."""
    return Storage(data)
