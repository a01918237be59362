"""Bank conflicts and global sectors, against a wavefront-by-wavefront simulation."""

import pytest
from cute_strategies import layouts
from hypothesis import given, settings
from hypothesis import strategies as st

from strided.cute import Layout, Sectors, Swizzle, bank_conflicts, composition, global_sectors
from strided.errors import ShapeError


def simulate_wavefronts(offsets, element_bytes, banks=32, bank_bytes=4):
    """Serve the requests one wavefront at a time: each round, every bank hands out
    one of the words still wanted from it (to all threads wanting that word). Wide
    accesses go in phases of banks*bank_bytes bytes."""
    per_phase = max(1, banks * bank_bytes // element_bytes)
    rounds = 0
    for start in range(0, len(offsets), per_phase):
        pending = set()
        for o in offsets[start:start + per_phase]:
            for byte in range(o * element_bytes, (o + 1) * element_bytes):
                pending.add(byte // bank_bytes)
        while pending:
            served = {}
            for w in sorted(pending):
                served.setdefault(w % banks, w)
            pending -= set(served.values())
            rounds += 1
    return rounds


def brute_sectors(offsets, element_bytes, sector_bytes=32):
    data = {b for o in offsets for b in range(o * element_bytes, (o + 1) * element_bytes)}
    sectors = {b // sector_bytes for b in data}
    return len(sectors), -(-len(data) // sector_bytes)


TILE = Layout((32, 32), (32, 1))  # row-major 32x32 f32


def test_column_of_a_row_major_tile_padded_and_swizzled():
    column = TILE(None, 0)  # thread i reads row i of column 0
    padded = Layout((32, 32), (33, 1))(None, 0)
    swizzled = composition(Swizzle(5, 0, 5), TILE)(None, 0)
    assert bank_conflicts(column) == 32
    assert bank_conflicts(padded) == 1
    assert bank_conflicts(swizzled) == 1
    row = TILE(0, None)
    assert bank_conflicts(row) == 1
    assert global_sectors(row) == Sectors(4, 4)
    assert global_sectors(column) == Sectors(32, 4)
    for j in range(32):  # every column, not just the first
        assert bank_conflicts(composition(Swizzle(5, 0, 5), TILE)(None, j)) == 1


def test_broadcast_and_wide_elements():
    assert bank_conflicts(Layout(32, 0)) == 1  # one word for everyone
    assert bank_conflicts(Layout(32, 1), element_bytes=2) == 1  # two halves per word
    assert bank_conflicts(Layout(32, 1), element_bytes=8) == 2  # two phases of 16 threads
    assert bank_conflicts(Layout(32, 1), element_bytes=16) == 4
    assert bank_conflicts(Layout(32, 2), element_bytes=8) == 4  # stride 16 bytes: two words per bank per phase
    assert bank_conflicts(Layout(32, 2)) == 2
    assert global_sectors(Layout(32, 1), element_bytes=2) == Sectors(2, 2)
    assert global_sectors(Layout(32, 0)) == Sectors(1, 1)


@given(layouts(max_size=64), st.sampled_from([1, 2, 4, 8, 16]))
@settings(max_examples=80, deadline=None)
def test_counts_match_a_simulation(L, eb):
    offsets = [L(t) for t in range(min(32, L.size))]
    assert bank_conflicts(L, element_bytes=eb) == simulate_wavefronts(offsets, eb)
    assert tuple(global_sectors(L, element_bytes=eb)) == brute_sectors(offsets, eb)


@given(st.integers(0, 5), st.integers(0, 3), st.integers(1, 64))
@settings(max_examples=60, deadline=None)
def test_swizzled_tiles_match_a_simulation(b, m, row):
    sw = Swizzle(b, m, max(b, 1) + 2)
    L = composition(sw, Layout((32, 64), (row, 1)))(None, 3)
    offsets = [L(t) for t in range(32)]
    assert bank_conflicts(L) == simulate_wavefronts(offsets, 4)


def test_errors_name_the_function():
    with pytest.raises(ShapeError, match="bank_conflicts: element_bytes must be a positive int, got 0"):
        bank_conflicts(Layout(32), element_bytes=0)
    with pytest.raises(ShapeError, match="bank_conflicts: expected a cute Layout"):
        bank_conflicts([0, 1, 2])
    with pytest.raises(ShapeError, match="global_sectors: sector_bytes"):
        global_sectors(Layout(32), sector_bytes=-32)
