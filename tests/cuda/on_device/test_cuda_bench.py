"""``python -m strided bench --cuda --sizes small``: the device check's correctness part on tiny
layouts, which the simulator runs (the speed part needs a GPU)."""

from __future__ import annotations

from strided.cli.bench import cuda_bench
from strided.cli import main


def test_the_small_device_check_passes_every_correctness_check(capsys):
    assert main(["bench", "--cuda", "--sizes", "small"]) == 0
    out = capsys.readouterr().out
    assert "correctness: " in out and "FAILED" not in out
    checks, passed = out.split("correctness: ")[1].split(" checks")[0].split("/")[::-1]
    assert int(checks) == int(passed) >= 100


def test_a_wrong_result_is_reported_as_a_failure(monkeypatch):
    # the checker itself: every comparison failing is every check reported, with its layout
    monkeypatch.setattr(cuda_bench, "_close", lambda got, want, rtol: False)
    checks, failures = cuda_bench.correctness(2, 3, seed=5)
    assert checks > 0 and len(failures) == checks
    assert all(isinstance(name, str) and "(" in layout for name, layout in failures)
