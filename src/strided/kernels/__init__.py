"""numba kernels: flat 1-D buffers in, layout integers in, one dispatcher per family.

Importing this package imports ``strided.threads`` first, which fixes numba's
thread pool and threading layer before numba starts.
"""

from .. import threads as _threads  # noqa: F401  (must precede any numba import)

# Below this many elements a kernel runs on the calling thread: waking the pool costs more.
PARALLEL_MIN = 1 << 16
