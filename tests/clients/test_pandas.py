"""pandas takes tensors as it takes ndarrays: DataFrame(t), Series(t), and .to_numpy() back,
sharing memory where pandas shares an ndarray's."""

import numpy as np
import pytest

import strided as sd

pd = pytest.importorskip("pandas")


def _t():
    a = np.arange(12.0).reshape(3, 4) / 3
    return a, sd.asarray(a)


@pytest.mark.parametrize("view", ["dense", "transposed", "flipped"])
def test_dataframe_of_a_tensor_equals_numpys(view):
    a, t = _t()
    pick = {"dense": lambda x: x, "transposed": lambda x: x.T, "flipped": lambda x: x[::-1, ::2]}[view]
    df = pd.DataFrame(pick(t), columns=None)
    want = pd.DataFrame(pick(a))
    pd.testing.assert_frame_equal(df, want)
    np.testing.assert_array_equal(df.to_numpy(), pick(a))


def test_series_and_round_trip_share_memory_where_pandas_allows():
    a, t = _t()
    s = pd.Series(t[1], copy=False)
    pd.testing.assert_series_equal(s, pd.Series(a[1]))
    assert np.shares_memory(s.to_numpy(), a)  # a 1-D tensor is viewed, not copied
    df = pd.DataFrame(t, copy=False)
    assert np.shares_memory(df.to_numpy(), a)
    back = sd.asarray(df.to_numpy())
    assert sd.same_buffer(back, t)
    np.testing.assert_array_equal(np.asarray(back), a)


def test_frames_of_tensors_compute_as_frames_of_arrays():
    a, t = _t()
    df = pd.DataFrame(t, columns=list("abcd"))
    pd.testing.assert_series_equal(df.mean(), pd.DataFrame(a, columns=list("abcd")).mean())
    got = t[0] + pd.Series(a[0])  # the Series answers (the tensor's operator defers to it)
    assert isinstance(got, pd.Series)
    np.testing.assert_array_equal(got.to_numpy(), a[0] * 2)
