"""Zero-copy exchange: the array interface, DLPack out (numpy, torch) and DLPack in.

NumPy is the oracle for addresses, strides and values: a numpy view built by
the same ops as our view must sit at the same address with the same strides.
"""

from __future__ import annotations

import ctypes
import re
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given

import strided as s
from strided import interop
from strided.interop import DLManagedTensorVersioned, DLPackError, from_dlpack
from strided.tensor import Tensor
from strided.core.storage import wrap

from strategies import view_chains


def addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def view_of(base: np.ndarray, lay: s.Layout) -> Tensor:
    return s.as_strided(s.from_numpy(base), lay.shape, lay.stride, lay.offset)


def moving_strides(shape, strides):
    """Strides of the dims that move (size > 1): the only ones a layout is judged by."""
    return tuple(x for n, x in zip(shape, strides) if n > 1)


def capsule_name(cap) -> str:
    return re.match(r'<capsule object "([^"]+)"', repr(cap)).group(1)


_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def versioned_header(cap) -> DLManagedTensorVersioned:
    return DLManagedTensorVersioned.from_address(_get_pointer(cap, b"dltensor_versioned"))


def counts():
    # No gc.collect(): every object here dies by reference counting, the moment it is dropped.
    return interop.dlpack_counters()


def base12():
    return np.arange(12.0).reshape(3, 4)


# Every kind of view, by name: (tensor view, the numpy view made by the same ops).
def named_views():
    a = base12()
    t = s.from_numpy(a)
    return {
        "contiguous": (t, a),
        "transposed": (t.t(), a.T),
        "flipped": (t.flip(0), a[::-1]),
        "flipped both": (t.flip((0, 1)), a[::-1, ::-1]),
        "broadcast": (t[0].broadcast_as((5, 4)), np.broadcast_to(a[0], (5, 4))),
        "narrowed": (t.narrow(1, 1, 2), a[:, 1:3]),
        "stepped": (t.slice(1, None, None, 2), a[:, ::2]),
        "stepped back": (t.slice(1, 3, None, -2), a[:, 3::-2]),
        "rank 0": (t.select(0, 2).select(0, 1), a[2, 1, ...]),
        "zero-size": (t.narrow(0, 1, 0), a[1:1]),
        "unsqueezed": (t.unsqueeze(1), a[:, None]),
    }


VIEW_NAMES = list(named_views())


# ---------------------------------------------------------------------------
# array interface


@pytest.mark.parametrize("name", VIEW_NAMES)
def test_asarray_is_a_zero_copy_view_for_every_layout_kind(name):
    t, want = named_views()[name]
    got = np.asarray(t)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if want.size:
        assert addr(got) == addr(want)
        assert moving_strides(got.shape, got.strides) == moving_strides(want.shape, want.strides)
        assert np.shares_memory(got, t._storage.data)


def test_asarray_writes_reach_the_tensor_buffer():
    a = base12()
    t = s.from_numpy(a).flip(1).t()
    np.asarray(t)[0, 2] = -7.0
    assert a[2, 3] == -7.0


def test_array_interface_dict_is_version_3_with_byte_strides_and_element_zero_address():
    a = base12()
    t = s.from_numpy(a).flip(0).t()
    iface = t.__array_interface__
    assert iface["version"] == 3
    assert iface["shape"] == (4, 3)
    assert iface["typestr"] == "<f8"
    assert iface["strides"] == (8, -32)
    assert iface["data"] == (addr(a) + 8 * 8, False)


def test_read_only_buffers_export_read_only():
    a = base12()
    a.flags.writeable = False
    got = np.asarray(s.from_numpy(a).t())
    assert not got.flags.writeable
    assert s.from_numpy(a).__array_interface__["data"][1] is True


@given(view_chains(max_ops=5, max_rank=4))
def test_asarray_matches_numpy_views(chain):
    ops, lay, want, base = chain
    got = np.asarray(view_of(base, lay))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if want.size:
        assert addr(got) == addr(want), ops
        assert moving_strides(got.shape, got.strides) == moving_strides(want.shape, want.strides), ops


def test_bf16_goes_through_array_not_the_interface_and_stays_zero_copy():
    a = np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 3)
    t = s.from_numpy(a).t()
    assert not hasattr(t, "__array_interface__")
    got = np.asarray(t)
    assert got.dtype == ml_dtypes.bfloat16
    assert addr(got) == addr(a)
    np.testing.assert_array_equal(got.astype(np.float32), a.T.astype(np.float32))


@pytest.mark.parametrize("np_dtype", [np.float16, np.uint8, np.uint32, np.int64, np.bool_])
def test_asarray_keeps_every_other_dtype(np_dtype):
    a = (np.arange(6) % 2 == 0) if np_dtype is np.bool_ else np.arange(6).astype(np_dtype)
    got = np.asarray(s.from_numpy(a).flip(0))
    assert got.dtype == a.dtype
    assert addr(got) == addr(a[::-1])
    np.testing.assert_array_equal(got, a[::-1])


# ---------------------------------------------------------------------------
# DLPack out, consumed by numpy


NON_NEGATIVE = [n for n in VIEW_NAMES if "flipped" not in n and n != "stepped back"]


@pytest.mark.parametrize("name", NON_NEGATIVE)
def test_numpy_from_dlpack_shares_address_and_strides(name):
    t, want = named_views()[name]
    got = np.from_dlpack(t)
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape
    if want.size:
        assert addr(got) == addr(want)
        assert moving_strides(got.shape, got.strides) == moving_strides(want.shape, want.strides)


def test_numpy_from_dlpack_deleter_runs_once_when_numpy_lets_go():
    before = counts()
    got = np.from_dlpack(s.from_numpy(base12()).t())
    mid = counts()
    assert mid["exported"] == before["exported"] + 1
    assert mid["released"] == before["released"]
    del got
    after = counts()
    assert after["released"] == before["released"] + 1


def test_export_keeps_the_buffer_alive_after_the_tensor_dies():
    t = s.tensor(np.arange(10.0)).narrow(0, 2, 5)
    got = np.from_dlpack(t)
    del t
    np.testing.assert_array_equal(got, np.arange(2.0, 7.0))


def test_unconsumed_capsules_run_the_deleter_once_when_collected():
    t = s.from_numpy(base12())
    for kwargs in ({}, {"max_version": (1, 0)}):
        before = counts()
        cap = t.__dlpack__(**kwargs)
        assert counts()["released"] == before["released"]
        del cap
        assert counts()["released"] == before["released"] + 1


def test_deleter_runs_when_the_consumer_fails_with_a_pending_exception():
    # numpy cannot import bf16: it raises and drops our capsule with its error set.
    t = s.from_numpy(np.zeros(3, ml_dtypes.bfloat16))
    before = counts()
    with pytest.raises(Exception) as info:
        np.from_dlpack(t)
    assert not isinstance(info.value, SystemError)
    assert "dtype" in str(info.value).lower()
    after = counts()
    assert after["exported"] == before["exported"] + 1
    assert after["released"] == before["released"] + 1


@pytest.mark.parametrize(
    "max_version, name",
    [(None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"), ((1, 3), "dltensor_versioned"),
     ((2, 0), "dltensor_versioned")],
)
def test_capsule_name_follows_max_version(max_version, name):
    cap = s.from_numpy(base12()).__dlpack__(max_version=max_version)
    assert capsule_name(cap) == name


def test_versioned_header_version_flags_and_tensor():
    a = base12()
    t = s.from_numpy(a).t().narrow(0, 1, 2)
    cap = t.__dlpack__(max_version=(1, 0))
    m = versioned_header(cap)
    assert (m.version.major, m.version.minor) == (1, 0)
    assert m.flags == 0
    dl = m.dl_tensor
    assert (dl.device.device_type, dl.device.device_id) == (1, 0)
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (2, 64, 1)
    assert dl.ndim == 2
    assert [dl.shape[i] for i in range(2)] == [2, 3]
    assert [dl.strides[i] for i in range(2)] == [1, 4]  # elements, not bytes
    assert dl.data + dl.byte_offset == addr(a) + 1 * 8

    ro = a.copy()
    ro.flags.writeable = False
    assert versioned_header(s.from_numpy(ro).__dlpack__(max_version=(1, 0))).flags == interop.FLAG_READ_ONLY
    copied = versioned_header(s.from_numpy(ro).__dlpack__(max_version=(1, 0), copy=True))
    assert copied.flags == interop.FLAG_IS_COPIED


def test_copy_true_exports_a_compact_copy():
    a = base12()
    t = s.from_numpy(a).t()
    got = np.from_dlpack(t, copy=True)
    np.testing.assert_array_equal(got, a.T)
    assert not np.shares_memory(got, a)
    assert got.flags.c_contiguous


def test_negative_strides_copy_when_allowed_and_refuse_with_copy_false():
    a = base12()
    t = s.from_numpy(a).flip(0)
    got = np.from_dlpack(t)  # copy=None: the consumer allows a copy when needed
    np.testing.assert_array_equal(got, a[::-1])
    assert not np.shares_memory(got, a)
    assert versioned_header(t.__dlpack__(max_version=(1, 0))).flags == interop.FLAG_IS_COPIED
    with pytest.raises(BufferError, match="negative strides"):
        t.__dlpack__(max_version=(1, 0), copy=False)
    with pytest.raises(BufferError, match="negative strides"):
        np.from_dlpack(t, copy=False)
    # a negative stride on a size-1 dim moves nothing: exported as is
    one = s.as_strided(s.from_numpy(a), (1, 4), (-4, 1), 4)
    assert addr(np.from_dlpack(one, copy=False)) == addr(a[1:])


def test_dlpack_argument_errors_are_buffer_errors_and_strided_errors():
    t = s.from_numpy(base12())
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(s.StridedError, match="device"):
        t.__dlpack__(dl_device=(2, 0))
    assert capsule_name(t.__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(s.StridedError, match="copy"):
        t.__dlpack__(copy="yes")
    ro = base12()
    ro.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        s.from_numpy(ro).__dlpack__()
    assert t.__dlpack_device__() == (1, 0)


def test_bool_and_f16_through_numpy():
    for a in (np.array([True, False, True]), np.arange(4, dtype=np.float16)):
        got = np.from_dlpack(s.from_numpy(a))
        assert got.dtype == a.dtype
        assert addr(got) == addr(a)


# ---------------------------------------------------------------------------
# DLPack in, from numpy


@given(view_chains(max_ops=5, max_rank=4))
def test_from_dlpack_imports_numpy_views_without_copying(chain):
    ops, lay, want, base = chain
    got = from_dlpack(want)
    assert got.shape == want.shape
    assert got.dtype is s.i64
    np.testing.assert_array_equal(got.numpy(), want)
    if want.size:
        assert addr(got.numpy()) == addr(want), ops
        want_strides = tuple(x // 8 for x in want.strides)
        assert moving_strides(got.shape, got.stride) == moving_strides(want.shape, want_strides), ops
        # back out through the array interface: the same memory again
        assert addr(np.asarray(got)) == addr(want)


def test_numpy_round_trip_keeps_address_and_strides():
    a = np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)[1:, :, ::2]
    got = np.from_dlpack(from_dlpack(a))
    assert addr(got) == addr(a)
    assert got.strides == a.strides
    np.testing.assert_array_equal(got, a)


def test_from_dlpack_negative_strides_from_numpy():
    a = base12()
    got = from_dlpack(a[::-1, ::2])
    assert got.stride == (-4, 2)
    assert addr(got.numpy()) == addr(a[::-1, ::2])
    np.testing.assert_array_equal(got.numpy(), a[::-1, ::2])


def test_from_dlpack_shares_memory_both_ways():
    a = base12()
    t = from_dlpack(a)
    np.asarray(t)[1, 1] = 99.0
    assert a[1, 1] == 99.0
    a[0, 0] = -1.0
    assert t.numpy()[0, 0] == -1.0


def test_from_dlpack_calls_the_producer_deleter_once():
    a = base12()
    refs = sys.getrefcount(a)
    before = counts()
    t = from_dlpack(a)
    assert sys.getrefcount(a) == refs + 1  # numpy's export holds the array
    v = t.t()
    del t
    assert sys.getrefcount(a) == refs + 1  # a view still reads it
    del v
    assert sys.getrefcount(a) == refs
    after = counts()
    assert after["imported"] == before["imported"] + 1
    assert after["import_released"] == before["import_released"] + 1


def test_read_only_numpy_arrays_import_read_only():
    a = base12()
    a.flags.writeable = False
    t = from_dlpack(a)
    assert not t.numpy().flags.writeable
    with pytest.raises(s.StridedError, match="read-only"):
        t.fill_(0.0)


@pytest.mark.parametrize(
    "a, dtype",
    [(np.arange(3, dtype=np.float16), s.f16), (np.arange(3, dtype=np.float32), s.f32),
     (np.arange(3, dtype=np.uint8), s.u8), (np.arange(3, dtype=np.uint32), s.u32),
     (np.array([True, False]), s.bool), (np.zeros((0, 3)), s.f64), (np.array(4.5), s.f64)],
)
def test_from_dlpack_dtypes_and_shapes(a, dtype):
    t = from_dlpack(a)
    assert t.dtype is dtype
    assert t.shape == a.shape
    np.testing.assert_array_equal(t.numpy(), a)


def test_from_dlpack_refuses_unsupported_dtypes_and_still_frees_the_export():
    # NumPy exports only dtypes strided holds; PyTorch's complex32 is one it does not
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ComplexHalf support is experimental"
        a = torch.zeros(4, dtype=torch.complex32)
    refs = sys.getrefcount(a)
    with pytest.raises(s.DTypeError, match="complex32"):
        from_dlpack(a)
    assert sys.getrefcount(a) == refs


def test_from_dlpack_accepts_capsules_once():
    a = base12()
    cap = a.__dlpack__(max_version=(1, 0))
    t = from_dlpack(cap)
    assert addr(t.numpy()) == addr(a)
    assert capsule_name(cap) == "used_dltensor_versioned"
    with pytest.raises(s.StridedError, match="already consumed"):
        from_dlpack(cap)
    legacy = from_dlpack(a.__dlpack__())
    assert addr(legacy.numpy()) == addr(a)


@pytest.mark.parametrize("field, value, match", [("major", 2, "version 2.0"), ("byte_offset", 1, "multiple of")])
def test_refused_capsules_stay_unconsumed_and_their_producer_frees_them(field, value, match):
    before = counts()
    cap = s.from_numpy(base12()).__dlpack__(max_version=(1, 0))
    header = versioned_header(cap)
    if field == "major":
        header.version.major = value
    else:
        header.dl_tensor.byte_offset = value
    with pytest.raises(DLPackError, match=match):
        from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"
    assert counts()["released"] == before["released"]
    del cap, header
    assert counts()["released"] == before["released"] + 1


def test_from_dlpack_copy_true_is_independent():
    a = base12()
    t = from_dlpack(a, copy=True)
    a[0, 0] = 100.0
    assert t.numpy()[0, 0] == 0.0


def test_from_dlpack_of_a_strided_tensor_round_trips():
    a = base12()
    t = s.from_numpy(a).t().narrow(0, 1, 2)
    back = from_dlpack(t)
    assert back.shape == t.shape and back.stride == t.stride
    assert addr(back.numpy()) == addr(t.numpy())


def test_from_dlpack_argument_errors():
    with pytest.raises(s.StridedError, match="__dlpack__"):
        from_dlpack([1, 2, 3])
    with pytest.raises(s.StridedError, match="device"):
        from_dlpack(base12(), device="cuda")

    class OnGpu:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be asked")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(BufferError, match="device"):
        from_dlpack(OnGpu())


def test_dlpack_error_is_both_families():
    assert issubclass(DLPackError, s.StridedError)
    assert issubclass(DLPackError, BufferError)
    assert issubclass(DLPackError, ValueError)


# ---------------------------------------------------------------------------
# torch (optional)


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def torch_views(torch):
    base = torch.arange(24.0, dtype=torch.float64).reshape(4, 6)
    return base, {
        "contiguous": base,
        "transposed": base.t(),
        "narrowed": base[1:3, 2:5],
        "stepped": base[:, 1::2],
        "expanded": base[0:1].expand(3, 6),
        "rank 0": base[2, 3],
        "zero-size": base[2:2],
    }


@pytest.mark.parametrize("name", NON_NEGATIVE)
def test_torch_from_dlpack_shares_address_and_strides(torch, name):
    t, want = named_views()[name]
    got = torch.from_dlpack(t)
    np.testing.assert_array_equal(got.numpy(), want)
    assert tuple(got.shape) == want.shape
    if want.size:
        assert got.data_ptr() == addr(want)
        want_strides = tuple(x // 8 for x in want.strides)
        assert moving_strides(got.shape, got.stride()) == moving_strides(want.shape, want_strides)


def test_torch_writes_reach_our_buffer_and_the_deleter_runs_once(torch):
    a = base12()
    before = counts()
    got = torch.from_dlpack(s.from_numpy(a).t())
    got[1, 2] = -5.0
    assert a[2, 1] == -5.0
    del got
    after = counts()
    assert after["exported"] == before["exported"] + 1
    assert after["released"] == before["released"] + 1


def test_torch_gets_a_copy_of_negative_strides_never_a_crash(torch):
    a = base12()
    t = s.from_numpy(a).flip(1)
    got = torch.from_dlpack(t)
    np.testing.assert_array_equal(got.numpy(), a[:, ::-1])
    assert got.data_ptr() != addr(a)
    with pytest.raises(BufferError, match="negative strides"):
        torch.from_dlpack(t, copy=False)


@pytest.mark.parametrize("name", ["contiguous", "transposed", "narrowed", "stepped", "expanded", "rank 0", "zero-size"])
def test_from_dlpack_torch_round_trip_keeps_address_and_strides(torch, name):
    _, views = torch_views(torch)
    src = views[name]
    t = from_dlpack(src)
    assert t.shape == tuple(src.shape)
    np.testing.assert_array_equal(t.numpy(), src.numpy())
    back = torch.from_dlpack(t)
    assert torch.equal(back, src)
    if src.numel():
        assert addr(t.numpy()) == src.data_ptr()
        assert t.stride == tuple(src.stride())
        assert back.data_ptr() == src.data_ptr()
        assert back.stride() == src.stride()


def test_from_dlpack_torch_memory_outlives_the_torch_tensor(torch):
    before = counts()
    src = torch.arange(10.0)
    t = from_dlpack(src[2:8])
    del src
    np.testing.assert_array_equal(t.numpy(), np.arange(2.0, 8.0, dtype=np.float32))
    del t
    assert counts()["import_released"] == before["import_released"] + 1


def test_from_dlpack_torch_legacy_capsule(torch):
    from torch.utils.dlpack import to_dlpack

    src = torch.arange(12.0).reshape(3, 4)[:, 1:]
    cap = to_dlpack(src)
    assert capsule_name(cap) == "dltensor"
    t = from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"
    assert addr(t.numpy()) == src.data_ptr() and t.stride == tuple(src.stride())


@pytest.mark.parametrize("name", ["bf16", "f16", "bool", "u8", "i64", "f32"])
def test_dtypes_through_torch_both_ways(torch, name):
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "bool": torch.bool, "u8": torch.uint8,
           "i64": torch.int64, "f32": torch.float32}[name]
    src = (torch.arange(6) % 3 == 0) if name == "bool" else torch.arange(6).to(tdt)
    src = src.reshape(2, 3).t()
    t = from_dlpack(src)
    assert t.dtype is s.dtype.as_dtype(name)
    assert addr(t.numpy()) == src.data_ptr()
    np.testing.assert_array_equal(t.numpy().astype(np.float32), src.float().numpy())
    back = torch.from_dlpack(t)
    assert back.dtype == tdt
    assert back.data_ptr() == src.data_ptr() and back.stride() == src.stride()


def test_bf16_export_to_torch(torch):
    vals = np.array([1.5, -2.0, 3.25, 0.0], dtype=np.float32)
    t = s.from_numpy(vals.astype(ml_dtypes.bfloat16)).narrow(0, 1, 3)
    got = torch.from_dlpack(t)
    assert got.dtype == torch.bfloat16
    assert got.data_ptr() == addr(t.numpy())
    np.testing.assert_array_equal(got.float().numpy(), vals[1:])


def test_u32_export_to_torch(torch):
    a = np.arange(4, dtype=np.uint32)
    got = torch.from_dlpack(s.from_numpy(a))
    assert got.data_ptr() == addr(a)
    assert got.dtype == torch.uint32


def test_storage_built_by_hand_exports(torch):
    buf = np.arange(8, dtype=np.int64)
    t = Tensor(wrap(buf), s.Layout((2, 2), (1, 4), 1), s.i64)
    got = torch.from_dlpack(t)
    assert got.tolist() == [[1, 5], [2, 6]]
    assert got.data_ptr() == addr(buf) + 8
