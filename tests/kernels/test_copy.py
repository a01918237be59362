"""The copy kernels and the half-precision conversions, against NumPy.

Sources are random chains of views of a flat buffer (``view_chains``: narrow,
slice with any step, transpose, permute, flip, select, broadcast, reshape...):
the chain is applied to a Layout and, in NumPy, to an ``arange`` base, so the
NumPy view holds the buffer offset of every element and ``buf[view]`` is the
oracle of the values in row-major order.  Destinations are contiguous or
random strided layouts (any dim order, gaps, flips, an offset) of a larger
buffer filled with a sentinel; the expected buffer is NumPy's assignment
through ``as_strided`` views, so a write outside the dst view is caught.

Compile time counts: same-dtype copies compile one kernel per itemsize and
path, conversions one per dtype pair and path, so the conversion sweep is a
representative set and the parallel kernels run with one dtype per path.
"""

from __future__ import annotations

from math import prod

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from strategies import bits, destinations, np_view, random_buffer, view_chains

from strided.errors import DTypeError, LayoutBoundsError, ShapeError, StridedError
from strided.kernels import copy as kc
from strided.kernels import half as kh
from strided.kernels import walk as kw
from strided.kernels.copy import COPY_PARALLEL_MIN, copy_into, plan_copy, tile_edge
from strided.layout import Layout

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {
    "f16": np.dtype(np.float16), "bf16": BF16, "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "u8": np.dtype(np.uint8), "u32": np.dtype(np.uint32), "i64": np.dtype(np.int64), "bool": np.dtype(np.bool_),
}


def check_copy(src_buf, src_lay, dst_dtype, dst_lay, dst_len, rng, src_offsets=None):
    """copy_into against NumPy's assignment; the whole dst buffer is compared, bit for bit."""
    dst = random_buffer(rng, dst_dtype, dst_len)
    want = dst.copy()
    src_vals = src_buf[src_offsets] if src_offsets is not None else np_view(src_buf, src_lay)
    with np.errstate(all="ignore"):
        np_view(want, dst_lay)[...] = src_vals
    copy_into(dst, dst_lay, src_buf, src_lay)
    np.testing.assert_array_equal(bits(dst), bits(want), err_msg=f"{src_lay} -> {dst_lay}")


# ---------------------------------------------------------------------------
# half precision, exhaustively


@njit
def _map_to_f32(a, f):
    out = np.empty(a.size, np.float32)
    for i in range(a.size):
        out[i] = f(a[i])
    return out


@njit
def _map_to_f64(a, f):
    out = np.empty(a.size, np.float64)
    for i in range(a.size):
        out[i] = f(a[i])
    return out


@njit
def _map_to_bits(a, f):
    out = np.empty(a.size, np.uint16)
    for i in range(a.size):
        out[i] = f(a[i])
    return out


ALL16 = np.arange(1 << 16, dtype=np.uint16)


def _f32_probes() -> np.ndarray:
    rng = np.random.default_rng(16)
    rand = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    # Every f16 and bf16 value as f32, and the patterns around each rounding boundary and tie.
    f16_grid = ALL16.view(np.float16).astype(np.float32).view(np.uint32)[:, None]
    near16 = f16_grid + np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF, -1 & 0xFFFFFFFF], np.uint32)
    bf_grid = ALL16.astype(np.uint32)[:, None] << 16
    nearbf = bf_grid + np.array([1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    return np.concatenate([rand, near16.ravel(), nearbf.ravel()]).view(np.float32)


def _f64_probes() -> np.ndarray:
    rng = np.random.default_rng(64)
    rand = rng.integers(0, 1 << 63, 1 << 19, dtype=np.int64).view(np.uint64)
    rand |= rng.integers(0, 2, rand.size).astype(np.uint64) << np.uint64(63)
    grid = ALL16.view(np.float16).astype(np.float64).view(np.uint64)[:, None]
    near = grid + np.array([0, 1, (1 << 41) - 1, 1 << 41, (1 << 41) + 1, (1 << 42) - 1, 1 << 29], np.uint64)
    bfgrid = (ALL16.astype(np.uint64) << np.uint64(48))[:, None]
    nearbf = bfgrid + np.array([1, (1 << 44) - 1, 1 << 44, (1 << 44) + 1, 1 << 15], np.uint64)
    return np.concatenate([rand, near.ravel(), nearbf.ravel()]).view(np.float64)


def test_f16_bits_to_f32_all_patterns():
    np.testing.assert_array_equal(bits(_map_to_f32(ALL16, kh.f16_bits_to_f32)),
                                  bits(ALL16.view(np.float16).astype(np.float32)))


def test_f16_bits_to_f64_all_patterns():
    np.testing.assert_array_equal(bits(_map_to_f64(ALL16, kh.f16_bits_to_f64)),
                                  bits(ALL16.view(np.float16).astype(np.float64)))


def test_bf16_bits_to_f32_all_patterns():
    np.testing.assert_array_equal(bits(_map_to_f32(ALL16, kh.bf16_bits_to_f32)),
                                  bits(ALL16.view(BF16).astype(np.float32)))


def test_half_to_half_all_patterns():
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_map_to_bits(ALL16, kh.bf16_bits_to_f16_bits),
                                      bits(ALL16.view(BF16).astype(np.float16)))
        np.testing.assert_array_equal(_map_to_bits(ALL16, kh.f16_bits_to_bf16_bits),
                                      bits(ALL16.view(np.float16).astype(BF16)))


def test_f32_to_f16_bits_round_to_nearest_even():
    f = _f32_probes()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_map_to_bits(f, kh.f32_to_f16_bits), bits(f.astype(np.float16)))


def test_f32_to_bf16_bits_round_to_nearest_even():
    f = _f32_probes()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_map_to_bits(f, kh.f32_to_bf16_bits), bits(f.astype(BF16)))


def test_f64_to_half_bits():
    d = _f64_probes()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_map_to_bits(d, kh.f64_to_f16_bits), bits(d.astype(np.float16)))
        np.testing.assert_array_equal(_map_to_bits(d, kh.f64_to_bf16_bits), bits(d.astype(BF16)))


def test_half_round_trip_and_specials():
    """Values NumPy round-trips exactly survive f16 -> f32 -> f16; the named special cases hold."""
    back = _map_to_bits(_map_to_f32(ALL16, kh.f16_bits_to_f32), kh.f32_to_f16_bits)
    np.testing.assert_array_equal(back, ALL16)
    specials = np.array([65504.0, 65519.99, 65520.0, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0000001, -0.0], np.float32)
    got = _map_to_bits(specials, kh.f32_to_f16_bits)
    assert list(got) == [0x7BFF, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0x0001, 0x8000]
    nan_bf = _map_to_bits(np.array([np.nan, -np.nan], np.float32), kh.f32_to_bf16_bits)
    assert list(nan_bf) == [0x7FC0, 0xFFC0]


# ---------------------------------------------------------------------------
# same-dtype copies: random views, every dtype


@settings(max_examples=150)
@given(chain=view_chains(), dt=st.sampled_from(sorted(DTYPES)), data=st.data())
def test_copy_random_views_every_dtype(chain, dt, data):
    ops, lay, offsets, base = chain
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    src = random_buffer(rng, DTYPES[dt], base.size)
    dst_lay, dst_len = data.draw(destinations(lay.shape), label="dst")
    check_copy(src, lay, DTYPES[dt], dst_lay, dst_len, rng, src_offsets=offsets)


# ---------------------------------------------------------------------------
# conversions: a representative set of pairs

FLOATS = ("f16", "bf16", "f32", "f64")
PAIRS = [
    ("f32", "f16"), ("f64", "f16"), ("f32", "bf16"), ("f64", "bf16"), ("f16", "f32"), ("bf16", "f32"),
    ("f16", "bf16"), ("bf16", "f16"), ("f16", "f64"), ("i64", "f32"), ("f64", "i64"), ("u8", "f32"),
    ("f32", "bool"), ("bool", "f32"), ("i64", "u8"), ("u32", "i64"), ("i64", "bf16"), ("bool", "f16"),
    ("f16", "bool"), ("f32", "u8"), ("bf16", "i64"),
]


def conversion_values(rng, src: str, dst: str, n: int) -> np.ndarray:
    """Values whose conversion NumPy defines: floats headed for an integer type stay in its range."""
    sd = DTYPES[src]
    if src in FLOATS:
        if dst in ("u8", "u32", "i64"):
            hi = {"u8": 255, "u32": 4e9, "i64": 1e15}[dst]
            lo = 0 if DTYPES[dst].kind == "u" else -hi
            v = rng.uniform(lo, hi, n)
            if sd.itemsize == 2:
                v = np.clip(v, -60000, 60000)
            return v.astype(sd)
        v = rng.standard_normal(n) * rng.choice([1e-8, 1e-3, 1.0, 300.0, 7e4, 1e40], n)
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65520.0, 6e-8, 3e-8, 2.0**-126], np.float64)
        v[: min(n, special.size)] = special[: min(n, special.size)]
        with np.errstate(all="ignore"):
            out = v.astype(sd)
        return out
    if sd == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    info = np.iinfo(sd)
    return rng.integers(info.min, info.max, n, dtype=sd, endpoint=True)


@settings(max_examples=80)
@given(chain=view_chains(max_ops=4), pair=st.sampled_from(PAIRS), data=st.data())
def test_copy_converts_like_numpy(chain, pair, data):
    ops, lay, offsets, base = chain
    src_dt, dst_dt = pair
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    src = conversion_values(rng, src_dt, dst_dt, base.size)
    dst_lay, dst_len = data.draw(destinations(lay.shape), label="dst")
    check_copy(src, lay, DTYPES[dst_dt], dst_lay, dst_len, rng, src_offsets=offsets)


@pytest.mark.parametrize("pair", PAIRS)
def test_conversion_pairs_dense_and_transposed(pair):
    """Every pair through both conversion paths (general, and via a tiled scratch), across a tile edge."""
    src_dt, dst_dt = pair
    rng = np.random.default_rng(len(src_dt) * 7 + len(dst_dt))
    for shape in [(3, 70), (129, 33)]:
        src = conversion_values(rng, src_dt, dst_dt, prod(shape))
        lay = Layout.contiguous(shape)
        check_copy(src, lay, DTYPES[dst_dt], Layout.contiguous(shape), prod(shape), rng)
        t = lay.transpose(0, 1)
        assert plan_copy(Layout.contiguous(t.shape), t, same_dtype=False).path == "convert_via_scratch"
        check_copy(src, t, DTYPES[dst_dt], Layout.contiguous(t.shape), prod(shape), rng)


def test_float_to_bool_is_nonzero():
    src = np.array([0.0, -0.0, np.nan, 1e-45, -np.inf, 2.0], np.float32)
    dst = np.ones(6, np.bool_)
    copy_into(dst, Layout((6,)), src, Layout((6,)))
    assert dst.tolist() == [False, False, True, True, True, True]


# ---------------------------------------------------------------------------
# the dispatch table and the sizes that change paths


def test_plan_paths():
    c = Layout.contiguous
    a = c((64, 96))
    assert plan_copy(c((64, 96)), a).path == "run"
    assert plan_copy(c((64, 48)), a.narrow(1, 0, 48)).path == "rows"
    assert plan_copy(c((64, 96)), c((96,)).broadcast_as((64, 96))).path == "rows"
    assert plan_copy(c((4, 16, 48)), c((4, 32, 48)).narrow(1, 0, 16)).path == "rows"
    assert plan_copy(c((4, 8, 32)), c((4, 16, 64)).narrow(1, 0, 8).narrow(2, 0, 32)).path == "blocks"
    assert plan_copy(c((96, 64)), a.transpose(0, 1)).path == "tiled"
    assert plan_copy(c((3, 96, 64)), c((3, 64, 96)).transpose(1, 2)).path == "tiled"
    assert plan_copy(c((4, 8, 2)), c((4, 16, 4)).narrow(1, 0, 8).narrow(2, 0, 2)).path == "general"
    # A transposed destination of a contiguous source: dst's memory order decides, src disagrees.
    assert plan_copy(c((96, 64)).transpose(0, 1), a).path == "tiled"
    # Broadcast along dst's innermost dim: src repeats, no tiling.
    assert plan_copy(c((64, 96)), c((64, 1)).broadcast_as((64, 96))).path == "general"


def test_kv_cache_append_into_padded_buffer():
    """cat into a preallocated cache: dst is a narrow (UniformBlocks) of a padded buffer; padding untouched."""
    rng = np.random.default_rng(7)
    b, h, cap, d = 2, 3, 40, 64
    cache = Layout.contiguous((b, h, cap, d))
    new = Layout.contiguous((b, h, 5, d))
    dst = cache.narrow(2, 17, 5)
    assert plan_copy(dst, new).path == "general"
    src = random_buffer(rng, DTYPES["bf16"], new.numel)
    check_copy(src, new, DTYPES["bf16"], dst, cache.numel, rng)


def _cases_around(n_edge):
    return [n_edge - 1, n_edge, n_edge + 1, 2 * n_edge + 3]


@pytest.mark.parametrize("dt", ["u8", "f16", "f32", "f64"])
def test_transpose_sizes_around_the_tile(dt):
    rng = np.random.default_rng(3)
    b = tile_edge(DTYPES[dt].itemsize)
    for p in _cases_around(b):
        for q in (1, 5, b + 1):
            src = random_buffer(rng, DTYPES[dt], p * q)
            lay = Layout.contiguous((q, p)).transpose(0, 1)
            check_copy(src, lay, DTYPES[dt], Layout.contiguous((p, q)), p * q, rng)
    # A batch of transposes with an offset, a flip, and a strided destination.
    src = random_buffer(rng, DTYPES[dt], 3 * 70 * 40 + 5)
    lay = Layout((3, 70, 40), (2800, 40, 1), 5).permute((0, 2, 1)).flip(1)
    check_copy(src, lay, DTYPES[dt], Layout.contiguous((3, 40, 70)), 3 * 40 * 70, rng)
    dlay = Layout.contiguous((70, 3, 81)).narrow(2, 1, 40).permute((1, 2, 0))
    check_copy(src, lay, DTYPES[dt], dlay, 70 * 3 * 81, rng)
    # Destinations whose innermost stride is not 1 (every other element, reversed).
    p, q = 2 * b + 3, b + 5
    src = random_buffer(rng, DTYPES[dt], p * q)
    lay = Layout.contiguous((q, p)).transpose(0, 1)
    check_copy(src, lay, DTYPES[dt], Layout.contiguous((p, 2 * q + 1)).slice(1, 1, None, 2), p * (2 * q + 1), rng)
    check_copy(src, lay, DTYPES[dt], Layout.contiguous((p, q)).flip(1), p * q, rng)


@st.composite
def big_views(draw):
    """Rank 1-3 views with dims past a tile edge: permuted, narrowed, stepped, flipped, broadcast."""
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 150 if nd < 3 else 40)) for _ in range(nd))
    base = Layout.contiguous(shape, draw(st.integers(0, 3)))
    lay = base.permute(draw(st.permutations(range(nd))))
    for d in range(nd):
        n = lay.shape[d]
        if n > 1 and draw(st.booleans()):
            start = draw(st.integers(0, n - 1))
            lay = lay.slice(d, start, None, draw(st.sampled_from([1, 2, -1, -3])))
    if draw(st.integers(0, 4)) == 0:
        d = draw(st.integers(0, nd - 1))
        lay = lay.narrow(d, 0, 1).broadcast_as(lay.shape[:d] + (draw(st.integers(1, 70)),) + lay.shape[d + 1:])
    return lay, base.offset + prod(shape)


@settings(max_examples=60)
@given(view=big_views(), dt=st.sampled_from(["u8", "f32"]), convert=st.booleans(), data=st.data())
def test_copy_big_views(view, dt, convert, data):
    lay, n = view
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    src = random_buffer(rng, DTYPES[dt], n) if not convert else conversion_values(rng, "f32", "f16", n)
    dst_lay, dst_len = data.draw(destinations(lay.shape), label="dst")
    check_copy(src, lay, DTYPES["f16" if convert else dt], dst_lay, dst_len, rng)


# The real threshold is 4M elements; the parallel kernels are exercised on a
# lowered one so that the test stays small.
BIG = 40_000


@pytest.mark.parametrize("numel", [BIG - 1, BIG + 2600])
def test_every_path_around_the_parallel_threshold(numel, monkeypatch):
    """Each path just below (serial) and above (parallel) the threshold, f32 bits."""
    monkeypatch.setattr(kc, "COPY_PARALLEL_MIN", BIG)
    if numel >= BIG and kw.get_num_threads() > 1:
        assert kc.nchunks(numel, numel) > 1
    rng = np.random.default_rng(numel)
    f32 = DTYPES["f32"]
    rows = 2048  # two tile blocks of P for the tiled case
    cols = numel // rows + 1
    src = random_buffer(rng, f32, 2 * rows * cols + 8)
    full = Layout.contiguous((rows, 2 * cols), 3)
    cases = {
        "run": Layout.contiguous((numel,), 5),
        "rows": full.narrow(1, 1, numel // rows),
        "blocks": Layout.contiguous((2, rows // 2, 2 * cols), 3).narrow(2, 0, numel // rows),
        "tiled": Layout.contiguous((2 * cols, rows), 3).narrow(0, 0, numel // rows).transpose(0, 1),
        "general": full.narrow(1, 1, numel // rows).flip(1),
    }
    for path, lay in cases.items():
        assert plan_copy(Layout.contiguous(lay.shape), lay).path == path
        check_copy(src, lay, f32, Layout.contiguous(lay.shape), lay.numel, rng)
    # Broadcast fill of rows, and a conversion, above the threshold.
    bc = Layout((cols,), (1,), 2).broadcast_as((rows, cols))
    check_copy(src, bc, f32, Layout.contiguous(bc.shape), bc.numel, rng)
    t = cases["tiled"]
    vals = conversion_values(rng, "f32", "f16", len(src))
    check_copy(vals, t, DTYPES["f16"], Layout.contiguous(t.shape), t.numel, rng)


def test_parallel_chunks(monkeypatch):
    monkeypatch.setattr(kw, "get_num_threads", lambda: 4)
    assert kc.nchunks(10**7, 10**7) == 4 * kw.CHUNKS_PER_THREAD
    assert kc.nchunks(3, 10**7) == 3
    assert kc.nchunks(10**7, COPY_PARALLEL_MIN - 1) == 1
    monkeypatch.setattr(kw, "get_num_threads", lambda: 1)
    assert kc.nchunks(10**7, 10**7) == 1


def test_rank0_and_empty():
    rng = np.random.default_rng(0)
    src = random_buffer(rng, np.float64, 5)
    check_copy(src, Layout((), (), 3), np.float64, Layout((), (), 1), 2, rng)
    check_copy(src, Layout((), (), 3), np.float16, Layout((), (), 0), 1, rng)
    dst = np.zeros(4)
    copy_into(dst, Layout((0, 3)), src, Layout((0, 3), (1, 1), 99))  # empty: nothing is touched
    assert not dst.any()


# ---------------------------------------------------------------------------
# rejected before any access

HOSTILE = [
    (Layout((3,), (1,), 8), 8),  # offset past the end
    (Layout((3,), (1,), -1), 8),  # negative offset
    (Layout((2, 3), (3, 1), 0), 5),  # the last row reaches past the end
    (Layout((3,), (-1,), 1), 8),  # a negative stride reaches below 0
    (Layout((2, 2), (1 << 40, 1), 0), 8),  # a huge stride
    (Layout((2, 2), (-(1 << 62), 1), 1 << 62), 8),  # offsets that would wrap in 64 bits
]


@pytest.mark.parametrize("lay,buflen", HOSTILE)
def test_hostile_layouts_are_rejected(lay, buflen):
    src = np.arange(buflen, dtype=np.float32)
    good = Layout.contiguous(lay.shape)
    dst = np.full(max(good.numel, 1), -1.0, np.float32)
    with pytest.raises(LayoutBoundsError, match="out of bounds"):
        copy_into(dst, good, src, lay)
    assert (dst == -1).all()
    big = np.full(buflen, -1.0, np.float32)
    with pytest.raises(StridedError):
        copy_into(big, lay, np.arange(max(good.numel, 1), dtype=np.float16), good)
    assert (big == -1).all()


def test_bad_arguments():
    src = np.arange(6, dtype=np.float32)
    dst = np.zeros(6, np.float32)
    with pytest.raises(ShapeError, match="copy_into: dst shape"):
        copy_into(dst, Layout((2, 3)), src, Layout((3, 2)))
    with pytest.raises(ShapeError, match="broadcast dim"):
        copy_into(dst, Layout((2, 3), (0, 1)), src, Layout((2, 3)))
    with pytest.raises(StridedError, match="1-D contiguous"):
        copy_into(dst.reshape(2, 3), Layout((2, 3)), src, Layout((2, 3)))
    with pytest.raises(StridedError, match="1-D contiguous"):
        copy_into(dst, Layout((3,)), src[::2], Layout((3,)))
    with pytest.raises(DTypeError, match="float128"):  # a dtype strided does not hold
        copy_into(dst, Layout((6,)), src.astype(np.longdouble), Layout((6,)))
    ro = np.zeros(6, np.float32)
    ro.flags.writeable = False
    with pytest.raises(StridedError, match="read-only"):
        copy_into(ro, Layout((6,)), src, Layout((6,)))
    with pytest.raises(StridedError, match="Layout"):
        copy_into(dst, (6,), src, Layout((6,)))
