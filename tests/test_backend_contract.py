"""Every backend against ``strided.backend.Backend``: the CPU's ``strided.kernels`` here, CUDA's
``strided.cuda`` in numba-cuda's simulator, in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``
(as ``tests/cuda/test_cuda_backend.py`` runs ``on_device/``: numba chooses the simulator when
numba.cuda is first imported, and this process has imported numba for the CPU already).

Each member is present with the Protocol's call shape, and each family does one small job
on its backend's own buffers, checked against NumPy."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import strided as sd
from strided import backend
from strided.layout import Layout

ROOT = Path(__file__).resolve().parent.parent
ON_DEVICE = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or os.environ.get("STRIDED_CUDA_DEVICE") == "1"
DEVICES = {"strided.kernels": "cpu", "strided.cuda": "cuda:0"}


def _module(name: str):
    if name == "strided.cuda" and not ON_DEVICE:
        if importlib.util.find_spec("numba_cuda") is None:
            pytest.skip("numba-cuda is not installed")
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
             "-k", "cuda", __file__],
            capture_output=True, text=True, timeout=600, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}, cwd=ROOT,
        )
        summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
        assert out.returncode == 0 and " passed" in summary and "skipped" not in summary, \
            out.stdout[-4000:] + out.stderr[-2000:]
        return None
    return backend.load("test", DEVICES[name])


BACKENDS = pytest.mark.parametrize("name", list(DEVICES))


@BACKENDS
def test_every_member_has_the_protocols_call_shape(name):
    module = _module(name)
    if module is None:
        return  # checked in the simulator's process
    assert backend.problems(module) == []
    device = DEVICES[name]
    # its own name pattern gives back its canonical names, which is how devices.py resolves them
    assert backend.canonical("test", device) == device
    assert backend.canonical("test", module.KIND) == device
    assert all(isinstance(n, str) for n in module.NAMES) and module.device_count() >= 1
    assert sd.arange(3, device=device).__dlpack_device__() == (module.DLPACK, backend.device_index(device))


@BACKENDS
def test_each_family_does_a_small_job(name):
    module = _module(name)
    if module is None:
        return
    device = DEVICES[name]
    rng = np.random.default_rng(0)
    host = rng.standard_normal(12).astype(np.float32)
    up = lambda a: module.storage.from_host(np.ascontiguousarray(a).reshape(-1), device, "test").data
    src, lay = up(host), Layout((3, 4), (4, 1))
    t_lay = Layout((4, 3), (1, 4))  # the transpose, read in place

    out = module.alloc(12, np.float32, "test", device).data
    module.copy.copy_into(out, Layout.contiguous((4, 3)), src, t_lay)
    np.testing.assert_array_equal(down(out, Layout.contiguous((4, 3))), host.reshape(3, 4).T)

    out = module.allocator(device)(12, np.dtype(np.float32), "test").data
    module.elementwise.binary("add", src, lay, src, lay, out, lay)
    np.testing.assert_array_equal(down(out, lay), host.reshape(3, 4) * 2)

    red = module.alloc(3, np.float32, "test", device).data
    module.reduce.reduce("max", src, lay, (1,), red, Layout((3, 1), (1, 1)))
    np.testing.assert_array_equal(down(red, Layout((3,), (1,))), host.reshape(3, 4).max(1))

    picked = module.alloc(6, np.float32, "test", device).data
    module.index.index_select(picked, Layout.contiguous((3, 2)), src, lay, 1, np.array([3, 0]))
    np.testing.assert_array_equal(down(picked, Layout.contiguous((3, 2))), host.reshape(3, 4)[:, [3, 0]])

    c = module.alloc(9, np.float32, "test", device).data
    module.matmul.matmul(src, ((3, 4), (4, 1), 0), src, ((4, 3), (1, 4), 0), c)
    a = host.reshape(3, 4).astype(np.float64)
    np.testing.assert_allclose(down(c, Layout.contiguous((3, 3))), a @ a.T, rtol=1e-5)

    module.storage.synchronize()
    assert isinstance(module.storage.pointer(src), int) and module.storage.pointer(src) != 0
    for family in ("sort", "scan"):
        try:
            fam = getattr(module, family)
        except sd.StridedError as e:  # a family not done on this backend: refused by name
            assert family in str(e) and isinstance(e, AttributeError)
            continue
        if family == "sort":
            out = module.alloc(12, np.float32, "test", device).data
            fam.sort(out, lay, src, lay, 1)
            np.testing.assert_array_equal(down(out, lay), np.sort(host.reshape(3, 4), 1))
        else:
            out = module.alloc(12, np.float32, "test", device).data
            fam.cumulate("sum", out, lay, src, lay, 0)
            np.testing.assert_allclose(down(out, lay), np.cumsum(host.reshape(3, 4), 0), rtol=1e-6)


def down(buf, lay: Layout) -> np.ndarray:
    """The elements of ``lay`` over a backend's buffer, on the host."""
    host = buf.copy_to_host() if hasattr(buf, "copy_to_host") else np.array(buf)
    return np.lib.stride_tricks.as_strided(host[lay.offset:], lay.shape, [s * host.itemsize for s in lay.stride])


def test_a_module_that_is_not_a_backend_is_refused_by_what_it_lacks():
    fake = type(sys)("fake_backend")
    fake.KIND, fake.DEVICES, fake.NAMES, fake.DLPACK = "fake", "fake", ("fake",), 1
    fake.HOST_MEMORY = fake.HALF_MATMUL = False
    fake.alloc = lambda numel, np_dtype: None  # no op or device parameter
    with pytest.raises(sd.StridedError, match=r"backend.register: .* alloc: takes \(numel, np_dtype\).*allocator: "
                                              r"missing.*device_count: missing"):
        backend.register(fake)
    assert "fake" not in [e.kind for e in backend.ENTRIES]


def test_an_unknown_device_names_the_op_and_the_value():
    with pytest.raises(sd.StridedError, match=r"zeros: unknown device 'tpu:0' \(expected 'cpu', 'cuda' or 'cuda:N'\)"):
        sd.zeros(2, device="tpu:0")
    with pytest.raises(sd.StridedError, match=r"empty: unknown device 3"):
        sd.empty(2, device=3)


def test_a_registered_backend_s_names_resolve_through_its_pattern(monkeypatch):
    # devices.py hard-codes no name: a third backend (here the CPU's families under other
    # names) is found by its pattern, numbered by its index group, and loaded when first used
    import strided.kernels as cpu

    twin = type(sys)("twin_backend")
    twin.__dict__.update({k: getattr(cpu, k) for k in (*backend.FAMILIES, "storage", "alloc", "allocator",
                                                         "DLPACK", "HOST_MEMORY", "HALF_MATMUL")})
    twin.KIND, twin.DEVICES, twin.NAMES = "twin", r"twin(?::(?P<index>\d+))?", ("twin", "twin:N")
    twin.device_count = lambda: 2
    monkeypatch.setattr(backend, "ENTRIES", list(backend.ENTRIES))
    loads = []
    backend.register(lambda: loads.append(1) or twin, kind="twin", devices=twin.DEVICES, names=twin.NAMES)
    try:
        assert backend.canonical("zeros", "twin") == "twin:0" and backend.canonical("zeros", "twin:1") == "twin:1"
        assert loads == []  # resolving a name loads nothing
        with pytest.raises(sd.StridedError, match=r"zeros: unknown device 'twin:x' \(expected 'cpu', 'cuda', "
                                                  r"'cuda:N', 'twin' or 'twin:N'\)"):
            backend.canonical("zeros", "twin:x")
        assert backend.load("zeros", "twin:1") is twin and loads == [1]
        assert backend.alloc_on("twin:1", 3, np.dtype(np.float32)).data.shape == (3,)
        with pytest.raises(sd.StridedError, match=r"zeros: no device 'twin:2': the twin backend sees 2 devices"):
            backend.load("zeros", "twin:2")
    finally:
        for name in ("twin:0", "twin:1"):
            backend.BACKENDS.pop(name, None)
            backend.ALLOCATORS.pop(name, None)
