import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def allocations(monkeypatch):
    """Every buffer the op layer, the tensor layer or a copy kernel takes from storage.alloc,
    as (numel, numpy dtype): the tests that promise "no full-size temporary" read it."""
    import importlib

    import strided.core.storage as storage

    mods = [storage] + [importlib.import_module(m) for m in (
        "strided.kernels.copy", "strided.creation", "strided.backend", "strided.ops.elementwise",
        "strided.ops.reduce", "strided.ops.copies", "strided.ops.join")]
    seen = []
    real = storage.alloc

    def spy(numel, np_dtype, *rest):
        seen.append((int(numel), np.dtype(np_dtype)))
        return real(numel, np_dtype, *rest)

    for mod in mods:
        if hasattr(mod, "alloc"):
            monkeypatch.setattr(mod, "alloc", spy)
    backend = mods[3]  # backend.alloc_on allocates through the host backend's allocator, the pool's alloc
    monkeypatch.setitem(backend.ALLOCATORS, backend.HOST, spy)
    return seen
