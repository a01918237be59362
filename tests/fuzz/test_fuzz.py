"""The differential fuzzer in CI: random programs of views, math and writes, strided against NumPy.

Hypothesis decides every choice of ``fuzzer.generate`` (tests/fuzz/fuzzer.py, so it shrinks
failures itself), with a bounded number of examples; the CI profile is derandomized.  Programs use
the fuzzer's "ci" profile: all views, every kernel family and writes, on f32 and the half types
(which compute in f32), so that cold numba compiles stay within about a minute.
``python tests/fuzz/fuzzer.py --minutes N`` runs the full profile (every dtype and op) for longer.

Failures already recorded as open bugs in test_regressions.py (``OPEN``) are tolerated here;
anything else fails with the program printed as strided code.
"""

import subprocess
import sys
from math import inf, nan
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fuzzer as fuzz
import strided as sd
from strategies import layouts_of_shape, shapes, view_chains
from test_regressions import known_open


def _choices(data):
    return fuzz.Choices(draw=lambda lo, hi: data.draw(st.integers(lo, hi)))


def _check(program):
    f = fuzz.check(program)
    if f is not None and known_open(f, program) is None:
        raise AssertionError(f"{f}\n{fuzz.to_python(program)}\nPROGRAM = {fuzz.render(program)}")


@settings(max_examples=150, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_programs_match_numpy(data):
    _check(fuzz.generate(_choices(data), profile="ci"))


@settings(max_examples=40, suppress_health_check=list(HealthCheck))
@given(view_chains(max_ops=6, max_rank=5), st.sampled_from(["f32", "f16", "bf16"]), st.data())
def test_ops_on_the_shared_view_chains(case, dtype, data):
    """The suite's view chains (tests/strategies.py) as the fuzzer's starting tensor."""
    ops, lay, arr, base = case
    prefix = [
        ("leaf", dtype, base.shape, [float(v) - 7 for v in base.ravel()]),
        ("as_strided", 0, lay.shape, lay.stride, lay.offset),
    ]
    _check(fuzz.generate(_choices(data), max_steps=3, prefix=prefix, profile="ci"))


@settings(max_examples=40, suppress_health_check=list(HealthCheck))
@given(shapes(max_rank=5, max_numel=256), st.data())
def test_binary_where_and_writes_on_random_layouts(shape, data):
    """Two operands of one shape in independent random layouts (tests/strategies.py), combined,
    selected between and written into one another (the destination never overlaps itself)."""
    progs = []
    for k in range(2):
        lay, buflen = data.draw(layouts_of_shape(shape, allow_broadcast=k == 1))
        vals = data.draw(st.lists(st.sampled_from([0.0, 1.0, -2.5, 0.25, 3.0]), min_size=buflen, max_size=buflen))
        progs += [("leaf", "f32", (buflen,), vals), ("as_strided", 2 * k, lay.shape, lay.stride, lay.offset)]
    op = data.draw(st.sampled_from(["add", "sub", "mul", "maximum", "gt"]))
    progs += [
        ("binary", op, 1, 3),
        ("binary", "gt", 1, 3),
        ("where", 5, 1, 3),
        ("copy_", 1, 3),
        ("reduce", "sum", 1, None, False),
    ]
    _check(progs)


def test_run_returns_counts():
    counts = fuzz.run(cases=6, seed=3, profile="ci", minimise_seconds=1)
    assert counts["cases"] == 6
    assert counts["steps"] == sum(counts["ops"].values()) >= 6
    assert counts["failures"] == sum(counts["signatures"].values())
    assert any(k.startswith("view.") for k in counts["ops"])


def test_main_parses_its_options(capsys):
    rc = fuzz.main(["--cases", "2", "--seed", "1", "--profile", "ci"])
    out = capsys.readouterr().out
    assert "cases 2," in out
    assert rc in (0, 1)


def test_the_documented_command_runs_from_the_repository_root():
    """``python tests/fuzz/fuzzer.py ...`` (the long-run command of the docs) runs as a script."""
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "tests/fuzz/fuzzer.py", "--cases", "2", "--seed", "1", "--profile", "ci"]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)
    assert out.returncode in (0, 1), out.stderr
    assert "cases 2," in out.stdout


def test_a_planted_bug_is_caught_and_minimised(monkeypatch):
    """The fuzzer finds a wrong sum and shrinks its reproducer to a few steps."""
    real_sum = sd.Tensor.sum
    monkeypatch.setattr(sd.Tensor, "sum", lambda self, dim=None, keepdim=False: real_sum(self, dim, keepdim) * 2)
    for i in range(200):
        ch = fuzz.Choices(seed=[11, i])
        f = fuzz.check(fuzz.generate(ch, profile="ci"))
        if f is not None and f.name == "reduce.sum":
            break
    else:
        pytest.fail("200 random programs never caught a sum that doubles its result")
    choices, program, g = fuzz.minimise(ch.record, f.signature, max_seconds=120, max_attempts=400)
    program = fuzz.simplify(program, f.signature, max_seconds=60)
    g = fuzz.check(program)
    assert g is not None and g.signature == ("values", "reduce.sum")
    assert len(program) <= 3, fuzz.render(program)


def test_a_planted_layout_bug_is_caught(monkeypatch):
    """A flip that forgets to flip (same buffer, same strides) is caught (values, then layout, are compared
    after every view)."""
    monkeypatch.setattr(sd.Tensor, "flip", lambda self, dims: self.clone())
    for i in range(300):
        f = fuzz.check(fuzz.generate(fuzz.Choices(seed=[12, i]), profile="ci"))
        if f is not None and f.name == "view.flip":
            assert f.category in ("values", "layout"), f
            return
    pytest.fail("300 random programs never caught a flip that does nothing")


def test_failures_print_as_runnable_strided_code():
    program = [
        ("leaf", "f32", (2, 3), [0.0, 1.0, -1.0, 0.5, nan, inf]),
        ("view", 0, "getitem", ((("slice", None, None, -1), 1),)),
        ("reduce", "max", 0, 1, True),
        ("setitem", 0, (0,), ("scalar", 2.0)),
    ]
    code = fuzz.to_python(program)
    env = {}
    exec(code, env)  # the printed reproducer runs as it is
    t1 = env["t1"].tolist()  # t0[::-1, 1], after t0[0] = 2.0 wrote through
    assert t1[1] == 2.0 and t1[0] != t1[0]
    again = eval(fuzz.render(program), {"nan": nan, "inf": inf})  # the literal evaluates back
    assert fuzz.render(again) == fuzz.render(program)
    fuzz.assert_ok(program)
