"""The CUDA tests: ``on_device/`` runs on a CUDA device, simulated or real, in a process of its own.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, when numba.cuda is first imported, and the
rest of the suite imports numba for the CPU kernels first; so ``on_device/`` is left
out of a normal run, and ``test_cuda_backend.py`` runs it in a subprocess with the
simulator chosen.  A run started with ``NUMBA_ENABLE_CUDASIM=1`` collects it directly;
so does one with ``STRIDED_CUDA_DEVICE=1``, on a real GPU.
"""

import os

ON_DEVICE = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or os.environ.get("STRIDED_CUDA_DEVICE") == "1"
collect_ignore = [] if ON_DEVICE else ["on_device"]
