"""Run on a CUDA device only: numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``, as
``tests/cuda/test_cuda_backend.py`` starts this directory) or a real GPU
(``STRIDED_CUDA_DEVICE=1``)."""

import pytest

pytest.importorskip("numba_cuda")

from numba import config, cuda

if not config.ENABLE_CUDASIM and not cuda.is_available():
    pytest.exit("tests/cuda/on_device: no CUDA device (set NUMBA_ENABLE_CUDASIM=1 for the simulator)", returncode=1)
