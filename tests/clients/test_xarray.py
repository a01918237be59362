"""xarray wraps a tensor and keeps a tensor as ``.data`` through arithmetic, ``isel``,
``transpose`` and the skipna reductions (mean, std, max), with NumPy's values."""

import numpy as np
import pytest

import strided as sd

xr = pytest.importorskip("xarray")


def _pair():
    a = np.arange(24.0).reshape(4, 6) / 5
    a[1, 2] = a[3, 0] = np.nan
    coords = {"x": [10, 20, 30, 40], "y": list("abcdef")}
    return (xr.DataArray(sd.asarray(a), dims=("x", "y"), coords=coords),
            xr.DataArray(a, dims=("x", "y"), coords=coords))


STEPS = {
    "arithmetic": lambda d: (d * 2 + d) / (abs(d) + 1) - 0.5,
    "isel": lambda d: d.isel(x=slice(None, None, -1), y=slice(1, None, 2)),
    "isel array": lambda d: d.isel(y=[4, 0, 2]),
    "transpose": lambda d: d.transpose("y", "x"),
    "mean": lambda d: d.mean("x"),
    "std": lambda d: d.std("y"),
    "max": lambda d: d.max(),
    "mean of a transposed slice": lambda d: d.transpose()[::2].mean("y"),
    "ufunc": lambda d: np.exp(-d),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_data_stays_a_tensor_with_numpys_values(name):
    got_da, want_da = _pair()
    got, want = STEPS[name](got_da), STEPS[name](want_da)
    assert isinstance(got.data, sd.Tensor), type(got.data)
    assert got.dims == want.dims
    np.testing.assert_allclose(np.asarray(got.data), want.values, rtol=1e-12, equal_nan=True)


def test_skipna_reductions_skip_nans():
    d, _ = _pair()
    assert not np.isnan(np.asarray(d.mean().data)) and not np.isnan(np.asarray(d.std().data))
    assert np.isnan(np.asarray(d.mean(skipna=False).data))
