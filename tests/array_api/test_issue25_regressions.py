"""Wrong or refused answers found by suites written elsewhere (issue 25), each pinned against
NumPy or array_api_strict."""

import numpy as np
import pytest

import array_api_strict as xps
import strided as sd


def _np(t):
    return t.numpy()


@pytest.mark.parametrize("shape", [-1, (-1,), (-1, 2), (2, -1)])
def test_broadcast_to_refuses_negative_sizes(shape):
    x = sd.asarray(np.arange(2.0))
    with pytest.raises(ValueError):
        np.broadcast_to(np.arange(2.0), shape)  # NumPy's answer, which the standard shares
    with pytest.raises(sd.ShapeError, match=r"broadcast_to: expected a shape of sizes >= 0.*-1"):
        sd.broadcast_to(x, shape)
    # Tensor.broadcast_as keeps PyTorch's expand rule, where -1 keeps a size
    assert x.broadcast_as((3, -1)).shape == (3, 2)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_sort_search_and_unique_take_the_16_bit_integers(dtype):
    a = np.array([3, 1, 2, 3, 60000 if dtype == np.uint16 else -30000], dtype)
    t = sd.asarray(a)
    got = sd.sort(t)
    assert got.dtype.np == dtype
    np.testing.assert_array_equal(_np(got), np.sort(a))
    np.testing.assert_array_equal(_np(sd.sort(t, descending=True)), np.sort(a)[::-1])
    np.testing.assert_array_equal(_np(sd.argsort(t)), np.argsort(a, kind="stable"))
    s = np.sort(a)
    np.testing.assert_array_equal(_np(sd.searchsorted(sd.asarray(s), t)), np.searchsorted(s, a))
    values, counts = sd.unique_counts(t)
    want_values, want_counts = np.unique(a, return_counts=True)
    assert values.dtype.np == dtype
    np.testing.assert_array_equal(_np(values), want_values)
    np.testing.assert_array_equal(_np(counts), want_counts)
    np.testing.assert_array_equal(_np(sd.unique_values(t)), want_values)
    v, inv = sd.unique_inverse(t)
    np.testing.assert_array_equal(_np(v)[_np(inv)], a)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_cumulative_sum_and_prod_in_the_16_bit_integers_wrap_as_numpy(dtype):
    a = np.array([[300, 200, 250], [7, 9000, 11]], dtype)  # the running products pass 2^16
    t = sd.asarray(a)
    for fn, ref in ((sd.cumulative_sum, np.cumsum), (sd.cumulative_prod, np.cumprod)):
        got = fn(t, axis=1, dtype=getattr(sd, np.dtype(dtype).name))
        assert got.dtype.np == dtype
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(_np(got), ref(a, axis=1, dtype=dtype))
    np.testing.assert_array_equal(_np(sd.cumulative_sum(t, axis=0)), np.cumsum(a, axis=0, dtype=np.int64
                                                                              if dtype == np.int16 else np.uint64))


def test_matmul_and_the_operator_follow_type_promotion():
    rng = np.random.default_rng(6)
    pairs = [(np.float32, np.float64), (np.int16, np.int8), (np.uint8, np.uint32), (np.complex64, np.float64),
             (np.float64, np.complex64)]
    for da, db in pairs:
        a = rng.integers(0 if np.dtype(da).kind == "u" else -3, 4, (2, 3)).astype(da)
        b = rng.integers(0, 4, (3, 4)).astype(db)
        want = xps.matmul(xps.asarray(a), xps.asarray(b))
        want_dtype = np.dtype(str(want.dtype).split(".")[-1])
        ta, tb = sd.asarray(a), sd.asarray(b)
        for got in (sd.matmul(ta, tb), sd.linalg.matmul(ta, tb), ta @ tb, tb.__rmatmul__(ta)):
            assert got.dtype.np == want_dtype, (da, db, got.dtype)
            np.testing.assert_allclose(_np(got), np.from_dlpack(want), rtol=1e-6)
    # Tensor.matmul keeps candle's rule (and linalg.matmul's promote=False): one dtype
    f32, f64 = sd.ones((2, 3)), sd.ones((3, 2), dtype=sd.f64)
    with pytest.raises(sd.DTypeError, match=r"matmul: expected both operands to have the same dtype.*f32.*f64"):
        f32.matmul(f64)
    with pytest.raises(sd.DTypeError, match="same dtype"):
        sd.linalg.matmul(f32, f64, promote=False)


def test_matmul_of_mixed_dtypes_has_a_gradient():
    a = sd.Var(sd.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3)))
    b = sd.Var(sd.asarray(np.arange(12.0).reshape(3, 4)))
    grads = (a @ b).sum_all().backward()
    np.testing.assert_allclose(_np(grads[a]), np.ones((2, 4)) @ np.arange(12.0).reshape(3, 4).T)
    np.testing.assert_allclose(_np(grads[b]), np.arange(6.0).reshape(2, 3).T @ np.ones((2, 4)))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unique_takes_complex(dtype):
    a = np.array([[1 + 2j, 3 - 1j, 1 + 2j], [3 + 1j, 1 + 2j, -0.0 + 0j]], dtype)
    t = sd.asarray(a)
    values, indices, inverse, counts = sd.unique_all(t)
    want_values, want_indices, want_inverse, want_counts = np.unique(
        a, return_index=True, return_inverse=True, return_counts=True)
    assert values.dtype.np == dtype
    # the standard leaves the order open; strided's is NumPy's, by (real, imag)
    np.testing.assert_array_equal(_np(values), want_values)
    np.testing.assert_array_equal(_np(indices), want_indices)
    np.testing.assert_array_equal(_np(inverse), want_inverse.reshape(a.shape))
    np.testing.assert_array_equal(_np(counts), want_counts)
    np.testing.assert_array_equal(_np(sd.unique_values(t)), want_values)
    np.testing.assert_array_equal(_np(sd.unique_counts(t).counts), want_counts)
    np.testing.assert_array_equal(_np(sd.unique_inverse(t).inverse_indices), want_inverse.reshape(a.shape))


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16", "uint64", "int64", "float32"])
def test_real_takes_every_real_numeric_dtype(dtype):
    a = np.array([1, -2 if dtype[0] != "u" else 2], dtype)
    want = xps.real(xps.asarray(a))
    got = sd.real(sd.asarray(a))
    assert got.dtype.np == np.dtype(dtype) and str(want.dtype).endswith(dtype)
    np.testing.assert_array_equal(_np(got), np.from_dlpack(want))
    with pytest.raises(sd.DTypeError, match="real: expected a numeric tensor, got bool"):
        sd.real(sd.asarray([True]))


@pytest.mark.parametrize("shape, axis, keepdims", [((0, 3), 1, False), ((0, 3), 1, True), ((3, 0), 0, False),
                                                   ((2, 0, 3), (0, 2), False), ((0, 3), None, False)])
def test_vector_norm_over_a_zero_size_dim(shape, axis, keepdims):
    a = np.zeros(shape, np.float32)
    want = xps.linalg.vector_norm(xps.asarray(a), axis=axis, keepdims=keepdims)
    got = sd.linalg.vector_norm(sd.asarray(a), axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype is sd.float32
    np.testing.assert_array_equal(_np(got), np.from_dlpack(want))


@pytest.mark.parametrize("obj, dtype", [(-1, "uint8"), (256, "uint8"), ([1, 300], "uint8"), ([[0], [-1]], "uint16"),
                                        (2**63, "int64"), (-1, "uint64"), ([1, 2**40], "int16"), (128, "int8")])
def test_asarray_refuses_python_ints_out_of_range(obj, dtype):
    with pytest.raises(OverflowError):  # NumPy 2's rule, which strided takes
        np.asarray(obj, dtype=dtype)
    with pytest.raises(sd.StridedError, match=r"asarray: cannot make a tensor of strided\.\w+ from"):
        sd.asarray(obj, dtype=getattr(sd, dtype))
    with pytest.raises(sd.StridedError, match=r"tensor: cannot make a tensor of"):
        sd.tensor(obj, dtype=getattr(sd, dtype))


def test_asarray_names_the_value_and_the_dtype():
    with pytest.raises(sd.StridedError, match=r"asarray: .*strided\.u8.*\[1, 300\].*300 out of bounds for uint8"):
        sd.asarray([1, 300], dtype=sd.uint8)
    with pytest.raises(sd.StridedError, match=r"asarray: .* -1.*-1 out of bounds for uint8"):
        sd.asarray(-1, dtype=sd.uint8)
    with pytest.raises(sd.StridedError, match=r"asarray: .*2\*\*64|asarray: .*18446744073709551616.*beyond"):
        sd.asarray(2**64)
    # in range, and NumPy integers, which cast as NumPy casts them
    assert sd.asarray([0, 255], dtype=sd.uint8).tolist() == [0, 255]
    assert sd.asarray(True, dtype=sd.uint8).tolist() == 1
    assert sd.asarray(np.int64(300), dtype=sd.uint8).tolist() == np.asarray(np.int64(300), dtype=np.uint8).item()
    assert sd.asarray([1.5, -2.5], dtype=sd.int8).tolist() == np.asarray([1.5, -2.5], dtype=np.int8).tolist()


def test_matrix_rank_of_integer_and_bool_matrices_is_numpys():
    # The every-dtype sweep found it: array_api_strict (and NumPy) rank integer matrices.
    for a in (np.array([[1, 2], [2, 4]], np.int16), np.array([[3, 1, 0], [6, 2, 0]], np.uint8), np.eye(3, dtype=bool)):
        got = sd.linalg.matrix_rank(sd.asarray(a))
        assert got.dtype == sd.int64 and int(got) == np.linalg.matrix_rank(a)
