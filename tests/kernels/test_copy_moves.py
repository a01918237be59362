"""Same-dtype copies move elements as f32/f64 when 4/8 bytes wide (``copy.MOVES``): every
bit pattern must come out as it went in, NaN payloads (quiet and signalling), -0.0,
denormals and the integers that share the width alike, on every copy path."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strided as sd

PATHS = {  # a view of a (6, 40) tensor taking each of plan_copy's paths
    "run": lambda t: t[1:3],
    "rows": lambda t: t[:, 2:30],
    "blocks": lambda t: t.reshape(6, 2, 20)[:, :, 1:19],
    "tiled": lambda t: t.t(),
    "general": lambda t: t[::2, ::3],
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("width, view_as", [(4, np.float32), (4, np.uint32), (8, np.float64), (8, np.int64)])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_bit_pattern_survives(path, width, view_as, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**63, 240, dtype=np.uint64).astype(np.uint32 if width == 4 else np.uint64)
    if width == 4:  # signalling and quiet NaNs with payloads, -0.0, a denormal, infinities
        bits[:6] = [0x7F800001, 0xFFC00123, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000]
    else:
        bits[:6] = [0x7FF0000000000001, 0xFFF8000000000123, 1 << 63, 1, 0x7FF0 << 48, 0xFFF0 << 48]
    buf = bits.view(view_as).reshape(6, 40)
    view = PATHS[path](sd.from_numpy(buf))
    want = PATHS[path](buf) if path != "tiled" else buf.T
    got = view.contiguous().numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(bits.dtype), np.ascontiguousarray(want).view(bits.dtype))
