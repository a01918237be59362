"""The CuTe bridge: tiles of tensors are views whose elements match NumPy slicing."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import strided as sd
from strided import cute
from strided.tiling import local_tile, tiles


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.booleans(), st.booleans())
def test_local_tile_matches_numpy_slicing(bm, bn, gm, gn, transposed, flipped):
    m, n = bm * gm, bn * gn
    if transposed:  # column-major memory order
        view = np.arange(m * n, dtype=np.float32).reshape(n, m).T
    else:  # every other row and column of a bigger buffer
        view = np.arange(m * n * 4, dtype=np.float32).reshape(2 * m, 2 * n)[1::2, ::2]
    if flipped:
        view = view[::-1]
    t = sd.from_numpy(view)
    for i in range(gm):
        for j in range(gn):
            tile = local_tile(t, (bm, bn), (i, j))
            assert sd.same_buffer(tile, t)
            np.testing.assert_array_equal(tile.numpy(), view[i * bm:(i + 1) * bm, j * bn:(j + 1) * bn])
    all_tiles = tiles(t, (bm, bn))
    assert all_tiles.shape == (bm, bn, gm, gn)
    want = view.reshape(gm, bm, gn, bn).transpose(1, 3, 0, 2)
    np.testing.assert_array_equal(all_tiles.numpy(), want)


def test_view_as_a_figure_7_layout_and_validation():
    buf = sd.arange(32, dtype=sd.i64)
    v = buf.view_as(cute.Layout((4, (2, 4)), (2, (1, 8))))
    assert v.shape == (4, 2, 4)
    L = cute.Layout((4, (2, 4)), (2, (1, 8)))
    for m in range(4):
        for a in range(2):
            for b in range(4):
                assert v.numpy()[m, a, b] == L((m, (a, b)))
    with pytest.raises(sd.StridedError, match="out of bounds"):
        sd.arange(31).view_as(cute.Layout((4, (2, 4)), (2, (1, 8))))
    with pytest.raises(sd.ShapeError, match="does not divide"):
        tiles(sd.zeros((6, 4)), (4, 2))
