"""The base layer: the 1-D buffer and its pool (``storage``), dtypes (``dtype``), the thread
count and numba's threading (``threads``, imported before numba), every cache (``caches``)
and the error classes (``errors``).  Nothing here imports a layer above it."""
