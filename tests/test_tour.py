"""The tour covers every seed: 001's ravel/unravel, 002's CuTe layouts and figure 7, 004's threads,
and a first run says that kernels compile once and times each section."""

import pytest

from strided import cute, threads

from strided.cli import tour
from strided.cli import main


@pytest.fixture(scope="module")
def tour_text():
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["tour"]) == 0
    return buf.getvalue()


def test_seed_001_ravel_and_unravel(tour_text):
    # Row-major by hand: i = 4a + 2b + c; column-major (CuTe's order): i = a + 2b + 4c.
    for i in range(8):
        row = [i // 4, (i // 2) % 2, i % 2]
        col = [i % 2, (i // 2) % 2, i // 4]
        assert f"{i} -> row-major {row} (ravel back: {i})   column-major {col}" in tour_text
    assert "t[1, 2] = 5, ravel_index([1,2]) = 1*3 + 2 = 5" in tour_text


def test_seed_002_layouts_sizes_cosizes_and_figure_7(tour_text):
    # The seed: 8:2 has size 8 and cosize 15; 8:0 cosize 1; 8:-1 runs backwards over 8 elements.
    assert "8:2: offsets [0, 2, 4, 6, 8, 10, 12, 14]  size 8 cosize 15" in tour_text
    assert "8:0: offsets [0, 0, 0, 0, 0, 0, 0, 0]  size 8 cosize 1" in tour_text
    assert "8:-1: offsets [0, -1, -2, -3, -4, -5, -6, -7]  size 8 cosize 8" in tour_text
    for text in ("(3,4):(1,3)", "(3,4):(4,1)", "(4,(2,4)):(2,(1,8))", "((2,2),(2,4)):((1,4),(2,8))"):
        assert cute.format_layout(cute.Layout(*_parts(text))) in tour_text
    # Figure 7-c's first row, read off the seed's picture: 0 1 8 9 16 17 24 25.
    assert " 0  |  0 |  1 |  8 |  9 | 16 | 17 | 24 | 25 |" in tour_text
    assert "static:  (_2,_3):(_1,_2)" in tour_text and "dynamic: (2,3):(1,2)" in tour_text


def _parts(text):
    from strided.cli import show

    L = show.parse_layout(text)
    return L.shape, L.stride


def test_bank_conflicts_of_the_32x32_tile(tour_text):
    assert "row-major (32,32):(32,1): 32 wavefronts" in tour_text
    assert "padded (32,32):(33,1):  1 wavefronts" in tour_text
    assert "swizzled Sw<5,0,5> o (32,32):(32,1):  1 wavefronts" in tour_text


def test_seed_004_threads(tour_text):
    r = threads.cpu_report()
    assert f"threads used here: {r['threads']}" in tour_text
    assert f"CPU affinity {r['affinity']} CPUs" in tour_text
    if r["physical_cores"]:
        assert f"would start {r['physical_cores']} threads here" in tour_text


def test_a_first_run_says_kernels_compile_and_times_each_section(monkeypatch, capsys):
    monkeypatch.setattr(tour, "kernels_cached", lambda: False)
    assert tour.main() == 0
    out = capsys.readouterr().out
    assert "first run: numba compiles strided's kernels once" in out
    n = len(tour.SECTIONS)
    assert all(f"[{i}/{n} done in " in out for i in range(1, n + 1))


def test_kernels_cached_looks_where_numba_caches(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not tour.kernels_cached()
    (tmp_path / "kernels_abc").mkdir()
    (tmp_path / "kernels_abc" / "elementwise._add-1.py311.nbi").write_text("")
    assert tour.kernels_cached()
