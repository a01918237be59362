"""The command line: tour prints the seed tables, show draws layouts, bench runs."""

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from strided.cli import main


def test_tour_prints_the_seed_000_layout_table(capsys):
    from layout.test_layout_seed import SEED_000_LINES

    assert main(["tour"]) == 0
    out = capsys.readouterr().out
    assert SEED_000_LINES in out
    assert ("strided_index of x.transpose(1,2): "
            "[0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23]") in out
    assert "(4,1).t(): dims=[1, 4] stride=[1, 1] contiguous=true" in out
    assert "nodes behind z 5" in out and "[[], [1], [3], [3], [3]]" in out
    assert "copy.i(0).copy(): 1000 elements, buffer 4000 bytes" in out
    assert "[1, 3] -> 35" in out and "[1, 2] -> 46" in out
    assert "rank  9 permuted add: shape [2, 2, 2]... matches NumPy: true" in out


@pytest.mark.parametrize(
    "text,rows,cols,offset",
    [
        ("(6,5):(10,1)+22", 6, 5, lambda m, n: 22 + 10 * m + n),
        ("(4,3):(20,2)+22", 4, 3, lambda m, n: 22 + 20 * m + 2 * n),
        ("(4,(2,4)):(2,(1,8))", 4, 8, lambda m, n: 2 * m + (n % 2) + 8 * (n // 2)),
    ],
)
def test_show_writes_an_svg_whose_cells_carry_the_offsets(tmp_path, capsys, text, rows, cols, offset):
    path = tmp_path / "layout.svg"
    assert main(["show", text, "--svg", str(path), "--buffer", "100"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == text
    root = ET.parse(path).getroot()
    cells = {}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("class") == "cell":
            cells[int(g.get("data-m")), int(g.get("data-n"))] = int(g.get("data-offset"))
    assert cells == {(m, n): offset(m, n) for m in range(rows) for n in range(cols)}
    touched = {int(g.get("data-index")) for g in root.iter("{http://www.w3.org/2000/svg}g")
               if g.get("class") == "buf" and int(g.get("data-hits"))}
    assert touched == set(cells.values())


def test_show_reports_bad_layouts_without_a_traceback(capsys):
    assert main(["show", "(4,3):(20,2)+90", "--svg", "/dev/null", "--buffer", "100"]) == 2
    assert "error:" in capsys.readouterr().err


def test_module_entry_point_runs_tour():
    out = subprocess.run([sys.executable, "-m", "strided", "tour"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert re.search(r"x\.narrow\(1,1,2\): dims=\[2, 2, 4\] stride=\[12, 4, 1\] off=4", out.stdout)
