"""The Python protocols an ndarray has, NumPy dtypes wherever a strided dtype goes, and buffer
identity by address ranges (issue 27, items 3 and 5 and the dtype point); NumPy is the oracle."""

import copy

import ml_dtypes
import numpy as np
import pytest

import strided as sd
from strided.interop import from_dlpack


def _t():
    a = np.arange(12.0).reshape(3, 4)
    return a, sd.asarray(a)


def test_iter_gives_rows_as_views():
    a, t = _t()
    for view in (t, t.T, t[::-1, ::2]):
        rows = list(view)
        want = list(np.asarray(view))
        assert len(rows) == len(want) and all(type(r) is sd.Tensor for r in rows)
        for r, w in zip(rows, want):
            assert sd.same_buffer(r, t)
            np.testing.assert_array_equal(np.asarray(r), w)
    rows = list(t)
    rows[1][0] = -1.0  # a row is a view: the write reaches t
    assert float(t[1, 0]) == -1.0
    assert [float(x) for x in sd.asarray(np.arange(3.0))] == [0.0, 1.0, 2.0]


def test_rank_0_has_no_len_and_no_iter_as_numpy():
    z = sd.asarray(np.array(2.5))
    for call in (len, iter):
        with pytest.raises(TypeError):  # as numpy: a TypeError, and a StridedError
            call(z)
        with pytest.raises(sd.StridedError, match="rank-0"):
            call(z)
    assert not np.iterable(z) and np.iterable(sd.ones(2))
    assert len(sd.ones((4, 2))) == 4


def test_contains_and_bool():
    a, t = _t()
    for v in (3.0, 11.0, -1.0, 2.5, None, "x"):
        assert (v in t) == (v in a)
    assert (a[1] in t) is True and (a[1] + 0.5 in t) is False  # (t == row).any(), broadcast, as numpy
    assert bool(sd.asarray([0.0])) is False and bool(sd.ones((1, 1))) is True
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)


def test_format_of_rank_0_tensors():
    x = sd.asarray(np.array(3.14159))
    assert f"{x:.2f}" == "3.14" and f"{x:>8.3f}" == format(np.float64(3.14159), ">8.3f")
    assert f"{sd.asarray(np.array(7, np.int32)):04d}" == "0007"
    assert f"{sd.ones(2)}" == str(sd.ones(2))
    with pytest.raises(sd.StridedError, match="format: the spec '.2f' formats rank-0 tensors only"):
        f"{sd.ones(2):.2f}"


def test_unhashable_as_an_ndarray_and_priority():
    _, t = _t()
    assert type(t).__hash__ is None
    with pytest.raises(TypeError):
        hash(t)
    with pytest.raises(TypeError):
        {t: 1}
    assert t.__array_priority__ > np.zeros(1).__array_priority__  # a tensor among arrays decides the type


def test_copy_and_deepcopy_make_new_buffers_with_the_layout():
    a, t = _t()
    for view in (t, t.T, t[::-1, 1::2], sd.broadcast_to(t[0], (5, 4))):
        for fn in (copy.copy, copy.deepcopy):
            c = fn(view)
            assert type(c) is sd.Tensor and c.shape == view.shape and c.dtype is view.dtype
            assert not sd.same_buffer(c, view)
            np.testing.assert_array_equal(np.asarray(c), np.asarray(view))
    c = copy.copy(t)
    c[0, 0] = 99.0
    assert float(t[0, 0]) == 0.0


@pytest.mark.parametrize("d", ["f16", "bf16", "f32", "f64", "c64", "c128", "u8", "u16", "u32", "u64", "i8", "i16",
                               "i32", "i64", "bool"])
def test_tolist_for_every_dtype(d):
    dtype = sd.as_dtype(d) if hasattr(sd, "as_dtype") else getattr(sd, d if d != "bool" else "bool_", None)
    src = np.array([[0, 1, 2], [3, 0, 1]]).astype(dtype.np)
    t = sd.asarray(src).T[::-1]
    got = t.tolist()
    want = src.astype(np.float64 if d == "bf16" else src.dtype).T[::-1].tolist()
    assert got == want
    kinds = {"b": bool, "f": float, "c": complex, "i": int, "u": int}
    assert all(type(x) is kinds[dtype.kind] for row in got for x in row)
    assert type(t[0, 0].tolist()) is kinds[dtype.kind]


def test_numpy_dtypes_wherever_a_strided_dtype_goes():
    assert sd.isdtype(np.dtype("float64"), "complex floating") is False
    assert sd.isdtype(np.dtype("complex64"), "complex floating") is True
    assert sd.isdtype(np.float32, ("integral", "real floating")) is True
    assert sd.isdtype(sd.f32, np.float32) and not sd.isdtype(np.int8, np.dtype("u1"))
    assert sd.isdtype(np.dtype("U3"), "numeric") is np.isdtype(np.dtype("U3"), "numeric")
    for bad in ("float64", float, None):
        with pytest.raises(sd.DTypeError, match="isdtype: expected a strided or NumPy dtype"):
            sd.isdtype(bad, "numeric")
    t = sd.zeros((2, 3), dtype=np.float64)
    assert t.dtype is sd.f64
    assert sd.astype(t, np.float16).dtype is sd.f16 and t.astype(np.dtype("i1")).dtype is sd.i8
    assert sd.asarray([1, 2], dtype=np.dtype("int32")).dtype is sd.i32
    assert sd.ones(2, dtype=np.complex64).dtype is sd.c64 and sd.full(2, 3, dtype=np.uint8).dtype is sd.u8
    assert sd.arange(3, dtype=np.float32).dtype is sd.f32 and sd.eye(2, dtype=np.int16).dtype is sd.i16
    assert sd.sum(t, dtype=np.float32).dtype is sd.f32 and sd.empty(1, dtype=ml_dtypes.bfloat16).dtype is sd.bf16
    assert sd.can_cast(np.float32, np.float64) and sd.result_type(np.float32, sd.ones(1, dtype=sd.i8)) is sd.f32
    assert sd.finfo(np.float32).eps == np.finfo(np.float32).eps and sd.iinfo(np.uint16).max == 65535
    # equality with NumPy's dtypes and types, as an ndarray's dtype compares
    assert t.dtype == np.float64 and t.dtype == np.dtype("f8") and np.dtype("f8") == t.dtype
    assert t.dtype != np.float32 and sd.f32 != sd.f64 and sd.bf16 == ml_dtypes.bfloat16
    assert {np.dtype("f8"): "f8"}[sd.f64] == "f8" and sd.f32 != "float32" and sd.f32 != None  # noqa: E711


def test_same_buffer_by_address_ranges_after_a_torch_round_trip():
    torch = pytest.importorskip("torch")
    a, t = _t()
    for view in (t, t.T, t[1:, 1:3]):  # (a negative stride is exported as a copy: torch cannot take it)
        back = from_dlpack(torch.from_dlpack(view))  # another owner of the same memory
        assert sd.same_buffer(back, t) and sd.same_buffer(t, back)
        np.testing.assert_array_equal(np.asarray(back), np.asarray(view))
    assert not sd.same_buffer(t, sd.asarray(a.copy()))
    # two tensors over disjoint parts of one allocation share no memory
    base = np.arange(10.0)
    assert not sd.same_buffer(sd.asarray(base[:5]), sd.asarray(base[5:]))
    assert sd.same_buffer(sd.asarray(base[:6]), sd.asarray(base[5:]))
    empty = sd.asarray(base[3:3])
    assert not sd.same_buffer(empty, sd.asarray(base))


def test_writes_between_owners_of_one_memory_are_right():
    """The overlap check of a write between two owners of one memory (the DLPack round trip)
    no longer raises NumPy's TooHardError: it copies through a temporary and gives NumPy's result."""
    torch = pytest.importorskip("torch")
    a = np.arange(16.0).reshape(4, 4)
    t = sd.asarray(a.copy())
    other = from_dlpack(torch.from_dlpack(t))
    t[...] = other.T  # reads and writes the same memory through two owners
    np.testing.assert_array_equal(np.asarray(t), a.T)
    u = sd.asarray(a.copy())
    u[1:] = from_dlpack(torch.from_dlpack(u))[:-1]
    want = a.copy()
    want[1:] = a[:-1]
    np.testing.assert_array_equal(np.asarray(u), want)
