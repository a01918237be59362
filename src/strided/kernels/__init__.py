"""numba kernels: flat 1-D buffers in, layout integers in, one dispatcher per family.

Importing this package imports ``strided.threads`` first, which fixes numba's
thread pool and threading layer before numba starts.
"""

import functools

from ..errors import StridedError
from .. import threads as _threads  # noqa: F401  (must precede any numba import)

# Below this many elements a kernel runs on the calling thread: waking the pool costs more.
PARALLEL_MIN = 1 << 16


def check_in_buffer(op: str, what: str, buf, lay) -> None:
    """Raise unless every element of ``lay`` lies in ``buf``, naming the op and the operand.
    The span is cached: the repeat calls of a model step cost a dict lookup."""
    lo, hi = _reach(lay)
    if lo < 0 or hi > len(buf):
        try:
            lay.validate(len(buf))
        except StridedError as e:
            raise type(e)(f"{op}: {what}: {e}") from None


@functools.lru_cache(maxsize=4096)
def _reach(lay) -> tuple[int, int]:
    return lay.span() if lay.numel else (0, 0)


@functools.lru_cache(maxsize=1024)
def writes_twice(lay) -> bool:
    """A stride-0 dim of size > 1: writing through ``lay`` stores several elements at one address."""
    return any(s == 0 and n > 1 for n, s in zip(lay.shape, lay.stride))
