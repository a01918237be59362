"""matplotlib draws tensors (transposed, flipped) as it draws the same ndarrays (Agg backend)."""

import numpy as np
import pytest

import strided as sd

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


def _t():
    a = np.arange(24.0).reshape(4, 6) ** 1.5 / 10
    return a, sd.asarray(a)


def test_plot_of_transposed_tensors():
    a, t = _t()
    fig, ax = plt.subplots()
    got = ax.plot(t.T)
    want = ax.plot(a.T)
    assert len(got) == len(want) == 4
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g.get_ydata()), np.asarray(w.get_ydata()))
    ax.plot(t[0], t[1, ::-1], "o")
    fig.canvas.draw()
    plt.close(fig)


def test_imshow_and_hist():
    a, t = _t()
    fig, ax = plt.subplots()
    im = ax.imshow(t.T[::-1])
    np.testing.assert_array_equal(np.asarray(im.get_array()), a.T[::-1])
    n, bins, _ = ax.hist(t.T.reshape(-1), bins=5)
    wn, wbins = np.histogram(a.T.reshape(-1), bins=5)
    np.testing.assert_array_equal(n, wn)
    np.testing.assert_allclose(bins, wbins)
    n2, _, _ = ax.hist(t.T, bins=3)  # one dataset per column, as for an ndarray
    wn2, _, _ = ax.hist(a.T, bins=3)
    np.testing.assert_array_equal(np.asarray(n2), np.asarray(wn2))
    fig.canvas.draw()
    plt.close(fig)
