"""python -m strided check: each library's verdict on the seeds' layouts, with its source.

Expected verdicts are the seeds' own observations (seed 000's candle runs, seed 003's CANN
views) and the rules of ANCHORS.md; strided's verdict is checked against NumPy."""

import json

import numpy as np
import pytest

from strided.cli.check import LIBRARIES, check, parse_op
from strided.cli import main
from strided.errors import StridedError


def run_json(capsys, *argv):
    assert main(["check", *argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == set(LIBRARIES)
    for v in report.values():
        assert v["verdict"] and v["detail"] and v["source"]
    return report


def test_seed_003_views_are_representable_everywhere(capsys):
    for text in ("(6,5):(10,1)+22", "(4,3):(20,2)+22"):
        r = run_json(capsys, text)
        assert all(r[lib]["verdict"] == "representable" for lib in LIBRARIES)
        r = run_json(capsys, text, "--op", "as_strided(100)")
        assert r["numpy"]["verdict"] == r["pytorch"]["verdict"] == r["strided"]["verdict"] == "view"


def test_flipped_layout_exists_only_where_strides_are_signed(capsys):
    r = run_json(capsys, "8:-1")
    # seed 000: candle's strides are usize ("no flip view"); ANCHORS: PyTorch rejects negative strides.
    assert r["candle"]["verdict"] == r["pytorch"]["verdict"] == "not representable"
    assert "Negative strides are not supported" in r["pytorch"]["detail"]
    assert r["numpy"]["verdict"] == r["cute"]["verdict"] == r["strided"]["verdict"] == "representable"


def test_seed_000_permuted_batch_matmul(capsys):
    # seed 000: candle CPU says MatMulUnexpectedStriding for lhs [3,2,4,5] stride [20,60,5,1].
    r = run_json(capsys, "(3,2,4,5):(20,60,5,1)+0", "--op", "matmul")
    assert r["candle"]["verdict"] == "error" and "MatMulUnexpectedStriding" in r["candle"]["detail"]
    assert r["strided"]["verdict"] == "ok" and "matches NumPy" in r["strided"]["detail"]
    # seed 000's Metal case: (2,4,3,5).narrow(1,0,2), strides [60,15,5,1]: Metal reads wrong batches.
    r = run_json(capsys, "(2,2,3,5):(60,15,5,1)+0", "--op", "matmul")
    assert "stride[-3] = 15 alone: wrong numbers" in r["candle"]["detail"]
    # A stride-0 left batch: candle issue #3744 (ANCHORS).
    r = run_json(capsys, "(4,3,5):(0,5,1)+0", "--op", "matmul")
    assert r["candle"]["verdict"] == "wrong" and "#3744" in r["candle"]["detail"]
    r = run_json(capsys, "(8,32):(32,1)+0", "--op", "matmul")
    assert r["candle"]["verdict"] == "ok"


def test_seed_000_rank_9_add_panics_in_candle_only(capsys):
    a = "(" + ",".join(["2"] * 9) + "):(" + ",".join(str(2 ** k) for k in range(9)) + ")+0"
    b = "(" + ",".join(["2"] * 9) + "):(" + ",".join(str(2 ** k) for k in reversed(range(9))) + ")+0"
    r = run_json(capsys, a, "--op", f"elementwise({b})")
    assert r["candle"]["verdict"] == "panic" and "MAX_DIMS" in r["candle"]["detail"]
    assert r["strided"]["verdict"] == "ok" and "no rank limit" in r["strided"]["detail"]
    # Contiguous operands merge into one dim: candle's release build computes them (seed 000).
    c = "(" + ",".join(["2"] * 9) + "):(" + ",".join(str(2 ** k) for k in reversed(range(9))) + ")+0"
    assert run_json(capsys, c, "--op", f"elementwise({c})")["candle"]["verdict"] == "ok"


def test_contiguous_and_reshape_of_a_transpose(capsys):
    r = run_json(capsys, "(4,3):(1,4)+0", "--op", "contiguous")
    assert r["candle"]["verdict"] == "copy" and "element-by-element" in r["candle"]["detail"]
    assert r["pytorch"]["verdict"] == "copy" and "transposed-copy fast path" in r["pytorch"]["detail"]
    assert r["strided"]["verdict"] == "copy"
    r = run_json(capsys, "(3,4):(4,1)+0", "--op", "contiguous")
    assert all(r[lib]["verdict"] == "view" for lib in ("candle", "numpy", "pytorch", "strided"))
    r = run_json(capsys, "(4,3):(1,4)+0", "--op", "reshape(12)")
    assert r["numpy"]["verdict"] == r["pytorch"]["verdict"] == r["strided"]["verdict"] == "copy"
    assert "Use .reshape(...) instead" in r["pytorch"]["detail"]
    assert r["cute"]["verdict"] == "view"  # a hierarchical mode describes it
    # seed 000: candle's reshape is a view only for contiguous input, even where strides exist.
    r = run_json(capsys, "(2,3,4):(24,4,1)+0", "--op", "reshape(2,12)")
    assert r["candle"]["verdict"] == "copy" and r["numpy"]["verdict"] == "view" == r["strided"]["verdict"]


def test_as_strided_past_the_buffer(capsys):
    r = run_json(capsys, "(4):(4)+0", "--op", "as_strided(10)")
    assert r["numpy"]["verdict"] == "wrong"  # ANCHORS: NumPy validates nothing
    # PyTorch's rule: (offset + 1 + sum(stride*(size-1))) * itemsize <= storage bytes: 13 * 4 > 40.
    assert r["pytorch"]["verdict"] == "error" and "requiring a storage size of 52" in r["pytorch"]["detail"]
    assert r["strided"]["verdict"] == "error" and "[0, 13)" in r["strided"]["detail"]


def test_cute_layouts_are_checked_through_their_flattening():
    r = check("(4,(2,4)):(2,(1,8))")
    assert "flattened from the CuTe layout (4,(2,4)):(2,(1,8))" in r["numpy"]["detail"]
    assert "(4,(2,4)):(2,(1,8))" in r["cute"]["detail"]


def test_text_report_and_errors(capsys):
    assert main(["check", "(3,4):(4,1)+0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("check (3,4):(4,1)+0") and out.count("[source: ") == 5
    assert main(["check", "(4,"]) == 2
    assert "error: parse_layout" in capsys.readouterr().err
    assert main(["check", "(4):(1)+0", "--op", "transpose"]) == 2
    assert "unknown op 'transpose'" in capsys.readouterr().err
    with pytest.raises(StridedError, match="reshape needs a shape"):
        parse_op("reshape(a,b)")
    with pytest.raises(StridedError, match="as_strided needs an argument"):
        parse_op("as_strided")
    assert parse_op("reshape:3,8") == ("reshape", (3, 8)) == parse_op("reshape(3,8)")
    assert np.prod((3, 8)) == 24
