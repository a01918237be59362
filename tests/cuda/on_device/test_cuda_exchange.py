"""CUDA exchange: ``__cuda_array_interface__`` v3 and kDLCUDA DLPack capsules of CUDA tensors,
and reading the interface of other CUDA arrays.  The dicts, strides and capsule
contents are checked in the simulator (its device memory is host memory, so addresses
can be compared); wrapping foreign device memory needs a real GPU and runs there
(``STRIDED_CUDA_DEVICE=1``), with PyTorch when it is installed."""

from __future__ import annotations

import ctypes
import importlib.util

import numpy as np
import pytest
from numba import config

import strided as sd
from strided.interop import DLManagedTensor, DLManagedTensorVersioned, interface_layout

SIMULATED = bool(config.ENABLE_CUDASIM)


def on_cuda(host):
    return sd.from_numpy(host).to_device("cuda")


def test_cuda_array_interface_of_views():
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = on_cuda(host)
    base = g.__cuda_array_interface__
    assert base["version"] == 3 and base["shape"] == (2, 3, 4) and base["typestr"] == "<f4"
    assert base["strides"] is None and base["data"][1] is False and base["stream"] == 1
    ptr = base["data"][0]
    v = g.permute((2, 0, 1))[1:, :, ::-2]
    cai = v.__cuda_array_interface__
    assert cai["shape"] == (3, 2, 2)
    assert cai["strides"] == (4, 48, -32)  # bytes: NumPy's view of the same elements has them too
    assert cai["strides"] == host.transpose(2, 0, 1)[1:, :, ::-2].strides
    assert cai["data"][0] == ptr + v.offset * 4
    assert on_cuda(np.zeros((2, 0))).__cuda_array_interface__["shape"] == (2, 0)
    assert not hasattr(sd.ones(3), "__cuda_array_interface__")  # a CPU tensor has none


def test_interface_layout_reads_every_stride_sign():
    # a (4, 3) view whose dim 0 walks backwards: the span starts at its lowest address
    desc = {"shape": (4, 3), "typestr": "<i8", "data": (1000 + 3 * 8, False), "strides": (-8, 32), "version": 3}
    addr, length, lay = interface_layout("asarray", desc)
    assert (addr, length) == (1000, 12) and lay.shape == (4, 3) and lay.stride == (-1, 4) and lay.offset == 3
    addr, length, lay = interface_layout("asarray", {"shape": (2, 5), "typestr": "|u1", "data": (7, False),
                                                     "version": 3})
    assert (addr, length, lay.stride, lay.offset) == (7, 10, (5, 1), 0)
    addr, length, lay = interface_layout("asarray", {"shape": (3, 2), "typestr": "<f4", "data": (64, False),
                                                     "strides": (0, 4), "version": 3})
    assert (addr, length, lay.stride) == (64, 2, (0, 1))  # a broadcast spans one row
    with pytest.raises(sd.StridedError, match=r"asarray: byte strides \(6,\) are not whole 4-byte elements"):
        interface_layout("asarray", {"shape": (2,), "typestr": "<f4", "data": (0, False), "strides": (6,)})
    with pytest.raises(sd.StridedError, match="asarray: a masked __cuda_array_interface__"):
        interface_layout("asarray", {"shape": (2,), "typestr": "<f4", "data": (0, False), "mask": object()})


def _dltensor(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    n = name(capsule)
    cls = DLManagedTensorVersioned if n == b"dltensor_versioned" else DLManagedTensor
    managed = cls.from_address(get(capsule, n))
    dl = managed.dl_tensor
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    strides = tuple(dl.strides[i] for i in range(dl.ndim))
    flags = managed.flags if cls is DLManagedTensorVersioned else None
    return dl, shape, strides, flags


def test_dlpack_export_is_kdlcuda_with_the_cpu_rules_for_negative_strides():
    host = np.arange(12, dtype=np.int64).reshape(3, 4)
    g = on_cuda(host)
    v = g.t()[1:]
    assert v.__dlpack_device__() == (2, 0)
    dl, shape, strides, flags = _dltensor(v.__dlpack__(max_version=(1, 0)))
    assert (dl.device.device_type, dl.device.device_id) == (2, 0)
    assert shape == (3, 3) and strides == (1, 4) and flags == 0  # element strides, zero-copy, writable
    assert dl.data == v.__cuda_array_interface__["data"][0]
    dl, shape, strides, flags = _dltensor(g.flip(0).__dlpack__(max_version=(1, 0)))
    assert strides == (4, 1) and flags == 2  # a flagged compact copy, as on the CPU
    with pytest.raises(BufferError, match="negative strides on dims"):
        g.flip(0).__dlpack__(copy=False)
    with pytest.raises(BufferError, match=r"not exported to DLPack device \(1, 0\)"):
        g.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError, match="expected stream None, -1 or a CUDA stream"):
        g.__dlpack__(stream=0)


def test_foreign_device_memory_is_wrapped_on_a_gpu_and_refused_by_name_in_the_simulator():
    # one test for both (the simulated run must skip nothing): the simulator cannot wrap a
    # device pointer, a GPU shares the memory both ways
    if SIMULATED:
        class Foreign:
            __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (64, False), "version": 3}

        with pytest.raises(sd.StridedError, match="asarray: numba-cuda's simulator cannot wrap foreign device memory"):
            sd.asarray(Foreign())
        return
    from numba import cuda

    host = np.arange(20, dtype=np.float32).reshape(4, 5)
    g = on_cuda(host)
    v = g.t()[::-1]
    arr = cuda.as_cuda_array(v)  # numba reads our interface
    assert np.array_equal(arr.copy_to_host(), host.T[::-1])
    back = sd.asarray(arr)  # and strided reads numba's
    assert back.device == "cuda:0" and np.array_equal(back.numpy(), host.T[::-1])
    back[0, 0] = -1.0
    assert g.numpy()[4, 0] == -1.0  # the same memory
    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            tt = torch.as_tensor(g.t(), device="cuda")
            assert tt.stride() == (1, 5) and tt.data_ptr() == g.t().__cuda_array_interface__["data"][0]
            s = sd.asarray(torch.arange(6, device="cuda").reshape(2, 3).t())
            assert s.device == "cuda:0" and s.stride == (1, 3) and s.tolist() == [[0, 3], [1, 4], [2, 5]]
            d = torch.from_dlpack(g.t())
            assert d.stride() == (1, 5) and d.data_ptr() == tt.data_ptr()
            f = sd.from_dlpack(torch.ones(3, device="cuda"))
            assert f.device == "cuda:0" and f.tolist() == [1.0, 1.0, 1.0]


def test_bf16_exchanges_through_dlpack_and_has_no_array_interface():
    import ml_dtypes

    host = np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 3)
    g = on_cuda(host)
    with pytest.raises(AttributeError, match="bf16 has no typestr .*DLPack"):
        g.__cuda_array_interface__
    assert not hasattr(g, "__cuda_array_interface__")
    dl, shape, strides, _ = _dltensor(g.t().__dlpack__(max_version=(1, 0)))
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (4, 16, 1)  # kDLBfloat
    assert shape == (3, 2) and strides == (1, 3)
    from strided.cuda.storage import pointer

    assert dl.data == pointer(g.storage.data)  # its bits' device memory
