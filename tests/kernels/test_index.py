"""index_select against np.take, and gather_offsets against NumPy's own views.

Sources are random view chains of a flat buffer (see test_copy.py); the NumPy
view of an ``arange`` base gives every element's offset, so ``buf[view]`` is
the source as NumPy sees it and ``np.take(buf[view], index, axis=dim)`` the
oracle.  Destinations are contiguous or random strided layouts of a sentinel
buffer, compared whole.
"""

from __future__ import annotations


import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import bits, destinations, np_view, random_buffer, view_chains

from strided.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError, StridedIndexError
from strided.kernels import copy as kcopy
from strided.kernels.index import gather_offsets, index_select
from strided.layout import Layout

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f32": np.dtype(np.float32), "u8": np.dtype(np.uint8), "bool": np.dtype(np.bool_),
          "f64": np.dtype(np.float64), "bf16": BF16}



def check_select(src, src_lay, offsets, dim, index, dst_lay, dst_len, rng):
    dst = random_buffer(rng, src.dtype, dst_len)
    want = dst.copy()
    np_view(want, dst_lay)[...] = np.take(src[offsets], index, axis=dim)
    index_select(dst, dst_lay, src, src_lay, dim, index)
    np.testing.assert_array_equal(bits(dst), bits(want), err_msg=f"{src_lay} dim {dim} index {index}")


@settings(max_examples=150)
@given(chain=view_chains(), dt=st.sampled_from(["f32", "u8", "bool", "f64", "bf16"]), data=st.data())
def test_index_select_random_views(chain, dt, data):
    ops, lay, offsets, base = chain
    if lay.ndim == 0:
        return
    dim = data.draw(st.integers(-lay.ndim, lay.ndim - 1), label="dim")
    n = lay.shape[dim]
    index = np.array(
        data.draw(st.lists(st.integers(-n, n - 1), max_size=6), label="index") if n else [], dtype=np.int64
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    src = random_buffer(rng, DTYPES[dt], base.size)
    shape = lay.shape[: dim % lay.ndim] + (len(index),) + lay.shape[dim % lay.ndim + 1:]
    dst_lay, dst_len = data.draw(destinations(shape), label="dst")
    check_select(src, lay, offsets, dim, index, dst_lay, dst_len, rng)


def test_embedding_rows_large(monkeypatch):
    """Rows of a dense table, above a (lowered) parallel threshold, with repeats and negatives."""
    monkeypatch.setattr(kcopy, "COPY_PARALLEL_MIN", 40_000)
    rng = np.random.default_rng(0)
    rows, cols = 600, 700
    table = rng.standard_normal(rows * cols).astype(np.float32)
    lay = Layout.contiguous((rows, cols))
    offsets = np.arange(rows * cols).reshape(rows, cols)
    for k in (3, 40_000 // cols + 7):
        index = rng.integers(-rows, rows, k)
        check_select(table, lay, offsets, 0, index, Layout.contiguous((k, cols)), k * cols, rng)
    # Columns of a transposed table: the selected slices are strided.
    t = lay.transpose(0, 1)
    index = rng.integers(-rows, rows, 500)
    check_select(table, t, offsets.T, 1, index, Layout.contiguous((cols, 500)), cols * 500, rng)


def test_index_select_errors_name_the_op_dim_value_and_size():
    src = np.arange(12, dtype=np.float32)
    lay = Layout.contiguous((3, 4))
    dst = np.full(8, -1.0, np.float32)
    with pytest.raises(StridedIndexError, match=r"index_select: index 4 is out of bounds for dim 1 with size 4"):
        index_select(dst, Layout((3, 2)), src, lay, 1, np.array([0, 4]))
    with pytest.raises(StridedIndexError, match=r"index -4 is out of bounds for dim 0 with size 3"):
        index_select(dst, Layout((2, 4)), src, lay, -2, np.array([-4, 0]))
    assert (dst == -1).all()
    with pytest.raises(StridedIndexError, match="dim 2 out of range"):
        index_select(dst, Layout((3, 2)), src, lay, 2, np.array([0, 1]))
    with pytest.raises(ShapeError, match=r"expected dst shape \(3, 2\)"):
        index_select(dst, Layout((2, 3)), src, lay, 1, np.array([0, 1]))
    with pytest.raises(DTypeError, match="integer index"):
        index_select(dst, Layout((3, 2)), src, lay, 1, np.array([0.0, 1.0]))
    with pytest.raises(ShapeError, match="1-D index"):
        index_select(dst, Layout((3, 2)), src, lay, 1, np.array([[0, 1]]))
    with pytest.raises(DTypeError, match="must be equal"):
        index_select(dst.astype(np.float64), Layout((3, 2)), src, lay, 1, np.array([0, 1]))
    with pytest.raises(ShapeError, match="scalar"):
        index_select(dst, Layout(()), src, Layout(()), 0, np.array([0]))
    with pytest.raises(LayoutBoundsError):
        index_select(dst, Layout((3, 2)), src, Layout((3, 4), (4, 1), 1), 1, np.array([0, 1]))
    with pytest.raises(LayoutBoundsError):
        index_select(dst, Layout((3, 3)), src, lay, 1, np.array([0, 1, 2]))
    assert (dst == -1).all()
    with pytest.raises(StridedIndexError, match="out of bounds"):
        index_select(dst, Layout((3, 1)), src, lay, 1, np.array([2**64 - 1], dtype=np.uint64))


def test_index_select_empty_and_unsigned():
    src = np.arange(12, dtype=np.uint8)
    lay = Layout.contiguous((3, 4))
    dst = np.zeros(12, np.uint8)
    index_select(dst, Layout((3, 0)), src, lay, 1, np.array([], np.int64))
    assert not dst.any()
    index_select(dst, Layout((3, 2)), src, lay, 1, np.array([3, 0], np.uint32))
    assert dst[:6].tolist() == [3, 0, 7, 4, 11, 8]


# ---------------------------------------------------------------------------
# gather_offsets


@settings(max_examples=100)
@given(chain=view_chains())
def test_gather_offsets_matches_numpy_views(chain):
    ops, lay, offsets, base = chain
    got = gather_offsets(lay)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.asarray(offsets).reshape(-1))


def test_gather_offsets_small_cases():
    assert gather_offsets(Layout((), (), 7)).tolist() == [7]
    assert gather_offsets(Layout((0, 5))).tolist() == []
    assert gather_offsets(Layout((2, 3), (1, 2), 1)).tolist() == [1, 3, 5, 2, 4, 6]
    assert gather_offsets(Layout((2, 2), (0, -1), 1)).tolist() == [1, 0, 1, 0]
    with pytest.raises(StridedError):
        gather_offsets((2, 3))
