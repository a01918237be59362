"""bench --sweep: the machinery on the smallest size, and that each family's three columns
compute the same thing (a family timing the wrong op would fail here, not in the table)."""

import importlib.util
import math
import time

import numpy as np
import pytest

from strided.cli.bench import sweep
from strided.cli.bench.harness import Case, run_case

HAVE_TORCH = importlib.util.find_spec("torch") is not None


@pytest.fixture(scope="module")
def cells():
    # short samples: this checks the machinery, not the numbers
    return sweep.run(sizes=(16,), rounds=1, per_block=1, budget_s=0.0, progress=False, sample_s=1e-4)


def test_sweep_has_one_row_per_family_with_positive_finite_times(cells):
    assert [c.name for c in cells] == [f.name for f in sweep.FAMILIES]
    libs = ("strided", "numpy", "torch") if HAVE_TORCH else ("strided", "numpy")
    for c in cells:
        assert c.calls >= 1
        assert set(c.results) == set(libs), c.name
        for lib in libs:
            assert 0 < c.results[lib] < math.inf, (c.name, lib)
    text = sweep.report(cells)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "| 16^2 |" in line]
    assert [r.split(" | ")[0][2:] for r in rows] == [f.name for f in sweep.FAMILIES]
    assert "Per-op cost at 16x16" in text
    if HAVE_TORCH:
        assert f"of {len(cells)} cells meet the target" in text
    rows = sweep.json_rows(cells)
    assert len(rows) == len(cells) and all(r["n"] == 16 and r["elements"] == 256 for r in rows)


@pytest.mark.parametrize("lib", [
    "numpy", pytest.param("torch", marks=pytest.mark.skipif(not HAVE_TORCH, reason="torch not installed")),
])
@pytest.mark.parametrize("family", sweep.FAMILIES, ids=lambda f: f.name)
def test_the_timed_callables_compute_the_same_thing(family, lib):
    # 24 is not a multiple of 2 or 3 times the other dim, so the slice family's shape is checked too
    for n in (16, 24):
        fns = sweep.build(family, n)
        ours, theirs = fns["strided"](), fns[lib]()
        theirs = theirs.numpy() if lib == "torch" else np.asarray(theirs)
        ours = np.asarray(ours)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
        # atol: the sums and the matmul add signed values in different orders near zero
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_run_case_reports_time_per_call():
    def ten_sleeps():
        for _ in range(10):
            time.sleep(0.001)

    case = Case("t", "sleep", "-", lambda: {"strided": ten_sleeps}, calls=10)
    run_case(case, rounds=1, per_block=1, budget_s=0.0)
    assert 0.001 <= case.results["strided"] < 0.005


def _cell(n, ours, numpy, torch):
    c = sweep.SweepCase(sweep.GROUP, "x", f"{n}^2", make=None, n=n)
    c.results = {"strided": ours, "numpy": numpy, **({} if torch is None else {"torch": torch})}
    return c


def test_the_target_is_a_quarter_over_pytorch_below_65536_elements_and_the_best_peer_from_there():
    assert sweep.meets_target(_cell(128, 2.0, 1.0, 3.0))  # 16384 elements: only PyTorch counts
    assert sweep.meets_target(_cell(128, 3.75, 1.0, 3.0))  # issue 24: at most 1.25x PyTorch
    assert not sweep.meets_target(_cell(128, 3.76, 1.0, 3.0))
    assert not sweep.meets_target(_cell(256, 2.0, 1.0, 3.0))  # 65536: the faster peer counts
    assert sweep.meets_target(_cell(256, 1.0, 1.0, 3.0))
    assert sweep.meets_target(_cell(256, 1.0, 2.0, None)) is None  # no PyTorch: not judged


def test_merge_takes_the_median_of_the_processes_and_their_range():
    from strided.cli.bench import harness

    cells = sweep.sweep_cases(sizes=(16,), families=sweep.FAMILIES[:1])
    key = (cells[0].group, cells[0].name, cells[0].size)
    harness.merge(cells, {key: {"strided": [3.0, 1.0, 2.0], "numpy": [5.0]}})
    assert cells[0].results == {"strided": 2.0, "numpy": 5.0}
    assert cells[0].spread == {"strided": (1.0, 3.0), "numpy": (5.0, 5.0)}
    assert "| 2000000 | 1000000-3000000 | 5000000 |" in sweep.report(cells)


def test_each_library_is_timed_in_its_own_processes(monkeypatch):
    # The separated sweep: a process that times one library keeps no other library's
    # callable; the parent gathers each library's figures from its own processes.
    from strided.cli.bench import harness

    for lib in harness.libraries():
        monkeypatch.setattr(harness, "ONLY", lib)
        assert sorted(sweep.build(sweep.FAMILIES[0], 16)) == [lib]
    monkeypatch.setattr(harness, "ONLY", None)
    found = harness.in_processes(["--sweep", "--quick", "--only", "a.sum(0)"], alternations=2,
                                 libs=["strided", "numpy"])
    assert set(found) == {(sweep.GROUP, "a.sum(0)", f"{n}^2") for n in sweep.QUICK_SIZES}
    for per_lib in found.values():
        assert set(per_lib) == {"strided", "numpy"}
        assert all(len(v) == 2 and all(0 < s < 1 for s in v) for v in per_lib.values())


def test_a_peers_process_runs_with_its_own_idle_spin_not_strideds(monkeypatch):
    # strided's import put GOMP_SPINCOUNT in this process's environment; a process that times
    # PyTorch or NumPy must not inherit it (PyTorch's own pool would then sleep between two
    # back-to-back ops), while strided's own processes keep it.
    from strided.cli.bench import harness
    from strided.core import threads

    monkeypatch.setitem(threads.ENV_SET, "GOMP_SPINCOUNT", str(threads.SPIN_COUNT))
    monkeypatch.setenv("GOMP_SPINCOUNT", str(threads.SPIN_COUNT))
    for lib in ("torch", "numpy", "numexpr", "torch.compile"):
        env = harness.process_env(lib)
        assert env["GOMP_SPINCOUNT"] == "300000" and env["STRIDED_BENCH_LIB"] == lib
        assert env["STRIDED_MALLOC"] == "default"  # a peer keeps glibc's malloc as its users do
    for lib in ("strided", "fused"):
        assert harness.process_env(lib)["GOMP_SPINCOUNT"] == str(threads.SPIN_COUNT)
    monkeypatch.delitem(threads.ENV_SET, "GOMP_SPINCOUNT")
    monkeypatch.setenv("GOMP_SPINCOUNT", "7")  # the user's own setting reaches every process
    assert harness.process_env("torch")["GOMP_SPINCOUNT"] == "7"
