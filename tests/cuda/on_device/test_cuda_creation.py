"""Creation with ``device=`` on CUDA: every constructor puts its tensor on the device asked
for, with the values the CPU constructor gives (expected values are NumPy's)."""

from __future__ import annotations

import numpy as np
import pytest

import strided as sd
from strided.cuda.storage import CudaStorage


def on_device(t: sd.Tensor, device: str = "cuda:0") -> np.ndarray:
    assert t.device == device and isinstance(t.storage, CudaStorage), (t.device, type(t.storage))
    return t.numpy()


@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_every_constructor_takes_a_cuda_device(device):
    assert np.array_equal(on_device(sd.zeros((2, 3), device=device)), np.zeros((2, 3), np.float32))
    assert np.array_equal(on_device(sd.ones((4,), dtype=sd.i64, device=device)), np.ones(4, np.int64))
    assert np.array_equal(on_device(sd.full((2, 2), 2.5, device=device)), np.full((2, 2), 2.5, np.float32))
    assert np.array_equal(on_device(sd.full((3,), True, device=device)), np.ones(3, bool))
    assert on_device(sd.empty((5, 0), device=device)).shape == (5, 0)
    assert np.array_equal(on_device(sd.arange(2, 11, 3, device=device)), np.arange(2, 11, 3))
    assert np.array_equal(on_device(sd.tensor([[1.5, 2.0]], device=device)), np.array([[1.5, 2.0]], np.float32))
    assert np.array_equal(on_device(sd.eye(3, 4, k=1, device=device)), np.eye(3, 4, k=1, dtype=np.float32))
    assert np.array_equal(on_device(sd.linspace(0, 1, 5, device=device)), np.linspace(0, 1, 5).astype(np.float32))
    assert np.array_equal(on_device(sd.asarray([1, 2, 3], device=device)), np.array([1, 2, 3]))
    assert np.array_equal(on_device(sd.asarray(np.arange(6.0).reshape(2, 3).T, device=device)),
                          np.arange(6.0).reshape(2, 3).T)


def test_random_tensors_are_the_seeded_draws_on_the_device():
    sd.manual_seed(7)
    want_u, want_n = np.random.default_rng(7).random((3, 4)), None
    got_u = on_device(sd.rand(3, 4, device="cuda"))
    assert np.array_equal(got_u, want_u.astype(np.float32))
    sd.manual_seed(7)
    want_n = np.random.default_rng(7).standard_normal(5).astype(np.float64)
    assert np.array_equal(on_device(sd.randn(5, dtype=sd.f64, device="cuda")), want_n)


def test_like_functions_keep_the_source_device_unless_told():
    g = sd.arange(6, device="cuda").reshape(2, 3)
    assert np.array_equal(on_device(sd.zeros_like(g)), np.zeros((2, 3), np.int64))
    assert np.array_equal(on_device(sd.ones_like(g, dtype=sd.f64)), np.ones((2, 3)))
    assert np.array_equal(on_device(sd.full_like(g, 4)), np.full((2, 3), 4))
    assert sd.empty_like(g).device == "cuda:0"
    assert sd.zeros_like(g, device="cpu").device == "cpu"
    assert sd.ones_like(sd.ones(2), device="cuda").device == "cuda:0"


def test_asarray_and_astype_move_between_devices():
    g = sd.arange(4, device="cuda")
    assert sd.asarray(g) is g and sd.asarray(g, device="cuda:0") is g
    c = sd.asarray(g, device="cpu")
    assert c.device == "cpu" and c.tolist() == [0, 1, 2, 3]
    with pytest.raises(sd.StridedError, match=r"asarray: moving a tensor on cuda:0 to cpu needs a copy"):
        sd.asarray(g, device="cpu", copy=False)
    h = sd.astype(g, sd.f64, device="cpu")
    assert h.device == "cpu" and h.dtype == sd.f64 and h.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert sd.astype(g, sd.f32).device == "cuda:0"
    assert np.array_equal(on_device(sd.tensor(g, dtype=sd.f32)), np.arange(4, dtype=np.float32))


def test_unknown_and_missing_devices_are_refused_by_the_constructor():
    with pytest.raises(sd.StridedError, match=r"zeros: no device 'cuda:5'"):
        sd.zeros(3, device="cuda:5")
    with pytest.raises(sd.StridedError, match=r"arange: unknown device 'gpu'"):
        sd.arange(3, device="gpu")
    with pytest.raises(sd.StridedError, match=r"full: no device 'cuda:9'"):
        sd.full((2,), 1.0, device="cuda:9")


def test_printing_a_constructed_tensor_names_the_device():
    assert repr(sd.ones((2,), device="cuda")).endswith("dtype=f32, device='cuda:0')")
