"""NumPy on views (issue 27): what strided has no kernel for, NumPy computes on zero-copy
ndarray views of the tensors; array answers come back as tensors, views of an input as views
of the same buffer, ``out=`` tensors are written in place, NumPy's errors become StridedErrors
naming the function."""

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import strided as sd
from strided import numpy_fallback
from strided.errors import StridedError
from strided.autograd import Var
from strided.layout import Layout
from strided.core.storage import Storage
from test_array_api_namespace import same, tensors


@given(tensors(min_rank=1, max_rank=3), st.data())
def test_fallbacks_on_drawn_layouts_give_numpys_values(tx, data):
    t, a = tx  # t and a view the same buffer through the same layout
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for f in (lambda x: np.median(x, axis=axis), lambda x: np.ptp(x, axis=axis),
                  lambda x: np.nanstd(x, axis=axis), lambda x: np.round(x, 2), lambda x: np.rot90(x, axes=(0, -1)),
                  lambda x: np.percentile(x, 25, axis=axis), lambda x: np.isclose(x, 0.5, atol=0.3),
                  lambda x: np.add.accumulate(x, axis=axis), lambda x: np.fmod(x, 0.3), np.ravel, np.argwhere,
                  lambda x: np.diagonal(x, axis1=0, axis2=-1), lambda x: np.pad(x, 1)):
            try:
                want = f(a)
            except Exception as e:  # then the tensor fails too, as a StridedError
                with pytest.raises(sd.StridedError, match=r"^numpy\.") as info:
                    f(t)
                assert isinstance(info.value, (type(e), StridedError) if isinstance(e, ValueError) else type(e))
                continue
            same(f(t), want)


def test_views_of_an_input_are_views_of_the_same_buffer():
    base = np.arange(24.0).reshape(4, 6)
    t = sd.asarray(base.copy())
    for view in (np.diagonal(t), np.ravel(t), np.split(t, 2)[1], np.atleast_3d(t), np.rot90(t), np.fliplr(t),
                 np.lib.stride_tricks.sliding_window_view(t, 3, axis=1)):
        assert isinstance(view, sd.Tensor) and view._storage is t._storage and sd.same_buffer(view, t)
    d = np.diagonal(t)
    d2 = d.copy()  # strided's own copy: then write through the view
    np.copyto(np.asarray(d2), -1.0)
    d.copy_(d2)
    assert t[1, 1].item() == -1.0 and t[3, 3].item() == -1.0
    # a view of another dtype over the same memory: a tensor over that memory, not a copy
    c = sd.asarray(np.array([1 + 2j, 3 + 4j, 5 + 6j]))[::-1]
    angle = np.angle(c, deg=True)  # a fresh answer: its own buffer
    assert isinstance(angle, sd.Tensor) and not sd.same_buffer(angle, c)
    # NumPy's f64 view of c128 memory: a tensor over that memory (np.real itself is native)
    re = numpy_fallback.run("numpy.real", np.real, (c,), {})
    assert re.dtype is sd.f64 and re.tolist() == [5.0, 3.0, 1.0] and sd.same_buffer(re, c)


def test_overlapping_views_are_read_only_to_numpy():
    t = sd.zeros((3,)).broadcast_as((4, 3))
    with pytest.raises(sd.StridedError, match=r"numpy\.put: .*read-only.*sharing memory"):
        np.put(t, [0], 1.0)
    w = np.lib.stride_tricks.sliding_window_view(sd.zeros((5,)), 3)
    with pytest.raises(sd.StridedError, match="sharing memory"):
        w.copy_(sd.ones((3, 3)))  # strided's overlap rule, not NumPy's read-only flag
    with pytest.raises(sd.StridedError, match=r"numpy\.fmod: the out= view"):
        np.fmod(sd.ones((4, 3)), 2.0, out=t)


def test_out_tensors_are_written_in_place():
    a = np.arange(12.0).reshape(3, 4)
    t = sd.asarray(a)
    o = sd.zeros((4,), sd.f64)
    assert np.median(t, axis=0, out=o) is o
    same(o, np.median(a, axis=0))
    o2 = sd.zeros((4, 3), sd.f64).mT  # any layout
    assert np.fmod(t, 5.0, out=o2) is o2 and np.heaviside(t, 0.5, out=(o2,)) is o2
    same(o2, np.heaviside(a, 0.5))
    nd = np.zeros(4)
    assert np.median(t, axis=0, out=nd) is nd  # an ndarray out= comes back as itself, as in NumPy
    u = sd.asarray(np.zeros(3))
    np.add.at(u, [0, 0, 2], 1.0)
    assert u.tolist() == [2.0, 0.0, 1.0]
    q, r = sd.zeros((3, 4), sd.f64), sd.zeros((3, 4), sd.f64)
    assert np.divmod(t, 5.0, out=(q, r)) == (q, r)
    same(q, a // 5.0)


def test_answers_are_tensors_of_numpys_dtype():
    t = sd.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    m = np.median(t)
    assert isinstance(m, sd.Tensor) and m.shape == () and m.item() == 2.5  # a NumPy scalar: rank 0
    assert np.gcd(t, 4).dtype is sd.i32 and np.bincount(t.reshape(-1)).dtype is sd.i64
    assert np.iscomplexobj(t) is False and np.result_type(t, 1.5) == np.float64
    assert isinstance(np.array2string(t), str)
    objects = np.frompyfunc(lambda z: z, 1, 1)(t)  # a dtype strided does not hold: NumPy's array
    assert type(objects) is np.ndarray and objects.dtype == object


def test_mixed_ndarray_and_tensor_arguments_give_tensors():
    t, a = sd.asarray(np.ones((2, 3))), np.zeros((1, 3))
    for r in (np.concatenate([t, a]), np.vstack([a, t]), np.kron(a, t), np.block([[t], [a]]), np.cov(a, t)):
        assert isinstance(r, sd.Tensor)
    same(np.concatenate([t, a]), np.concatenate([np.ones((2, 3)), a]))
    same(np.column_stack([a.T, t.mT]), np.column_stack([a.T, np.ones((3, 2))]))


BF16 = [lambda x: np.median(x), lambda x: np.round(x, 1), lambda x: np.fmod(x, 0.5), lambda x: np.add.accumulate(x),
        lambda x: np.ptp(x, axis=0), lambda x: np.cbrt(x), lambda x: np.pad(x, 1), lambda x: np.isclose(x, 1.0),
        lambda x: np.ravel(x.T), lambda x: np.flatnonzero(x)]


@pytest.mark.parametrize("call", BF16)
def test_bf16_goes_the_way_of_its_numpy_dtype(call):
    a = np.array([[1.5, -2.25], [0.0, 3.0], [7.0, 1.0]]).astype(sd.bf16.np)
    t = sd.asarray(a.copy())
    try:
        want, err = call(a), None
    except Exception as e:  # ml_dtypes lacks some loops: the tensor must fail alike
        want, err = None, e
    if err is not None:
        with pytest.raises(sd.StridedError, match="numpy"):
            call(t)
        return
    got = call(t)
    assert isinstance(got, sd.Tensor)
    same(got, want, dtype=True)


@pytest.mark.parametrize("call, cls", [
    (lambda t: np.median(t, axis=3), np.exceptions.AxisError),
    (lambda t: np.linalg.matrix_power(t, 2), np.linalg.LinAlgError),
    (lambda t: np.delete(t, 10), IndexError),
    (lambda t: np.unravel_index(t, (2, 3)), TypeError),
    (lambda t: np.pad(t, 1, mode="nope"), ValueError),
    (lambda t: np.fmod(t, 1.0, casting="bogus"), ValueError),
])
def test_numpys_errors_are_strided_errors_naming_the_function(call, cls):
    t = sd.asarray(np.ones((2, 3)))
    with pytest.raises(sd.StridedError, match=r"^numpy\.[\w.]+: ") as info:
        call(t)
    assert isinstance(info.value, cls)  # callers catching NumPy's class still catch it
    again = pickle.loads(pickle.dumps(info.value))  # Dask's workers send errors back pickled
    assert type(again) is type(info.value) and str(again) == str(info.value)


def test_warnings_pass_as_they_are():
    t = sd.asarray(np.full((2,), np.nan))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            np.nanmedian(t)


class _Device(Storage):
    device = "cuda:0"


def test_device_and_tracked_tensors_are_refused_by_name():
    on_device = sd.Tensor(_Device(np.zeros(3)), Layout.contiguous((3,)), sd.f64)
    with pytest.raises(sd.StridedError, match=r"numpy\.median: .*cuda:0.*no silent transfer"):
        np.median(on_device)
    v = Var(np.ones(3))
    with pytest.raises(sd.StridedError, match=r"numpy\.median: .*gradient.*detach"):
        np.median(v)
    assert np.median(v.detach()).item() == 1.0


def test_another_array_type_with_its_own_ufunc_override_answers():
    class Other:
        def __array_ufunc__(self, ufunc, method, *args, **kwargs):
            return "other"

    assert np.add(sd.ones((2,)), Other()) == "other"
    assert np.fmod(sd.ones((2,)), Other()) == "other"


def test_the_fallback_module_documents_its_table():
    assert all(name.startswith("numpy.") and why for name, why in numpy_fallback.REFUSED.items())


def test_native_ufuncs_answer_in_numpys_dtype():
    # the kernels compute; the answer is cast to the dtype of NumPy's loop (was f64 and bool)
    u = np.array([1, 4, 9], np.uint8)
    b = np.array([True, False])
    for got, want in ((np.sqrt(sd.asarray(u)), np.sqrt(u)), (np.square(sd.asarray(b)), np.square(b))):
        same(got, want)
    assert np.add(sd.asarray(u), 1).dtype is sd.u8  # a Python scalar stays weak


def test_nanmean_keeps_the_float_dtype():
    a = np.array([[1.0, np.nan], [2.0, 4.0]], np.float32)
    same(np.nanmean(sd.asarray(a), axis=0), np.nanmean(a, axis=0), rtol=1e-6)


def test_a_kernels_error_for_bad_input_stands():
    # bad input to a native call is strided's error, not a second try through NumPy
    with pytest.raises(sd.ShapeError, match=r"^add: shapes \(3,\) and \(4,\)"):
        np.add(sd.ones((3,), sd.f64), sd.ones((4,), sd.f64))
    with pytest.raises(sd.StridedIndexError, match="^sum: dim 4"):
        np.sum(sd.ones((3,), sd.f64), axis=4)
