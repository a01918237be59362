"""Pictures where people look: _repr_svg_ in notebooks (valid SVG, parsed without a browser),
bank-coloured swizzled tiles, TV layouts, and LaTeX/TikZ from show --tikz."""

import re
import xml.etree.ElementTree as ET

import pytest

import strided as sd
from strided import cute
from strided.cli import show
from strided.cli import main

SVG = "{http://www.w3.org/2000/svg}"


def cells(svg_text):
    root = ET.fromstring(svg_text)
    assert root.tag == SVG + "svg"
    return [g for g in root.iter(SVG + "g") if g.get("class") == "cell"]


def fill_of(g):
    return g.find(SVG + "rect").get("fill")


@pytest.mark.parametrize("layout, rows, cols", [
    (cute.Layout((4, (2, 4)), (2, (1, 8))), 4, 8),
    (cute.Layout(8, 2), 1, 8),
    (sd.Layout((6, 5), (10, 1), 22), 6, 5),
    (cute.composition(cute.Swizzle(3, 0, 3), cute.Layout((8, 8), (8, 1))), 8, 8),
])
def test_repr_svg_is_valid_svg_with_one_cell_per_point(layout, rows, cols):
    found = cells(layout._repr_svg_())
    assert len(found) == rows * cols
    for g in found:
        m, n = int(g.get("data-m")), int(g.get("data-n"))
        want = layout.offset + m * layout.stride[0] + n * layout.stride[1] if isinstance(layout, sd.Layout) else (
            layout(m, n) if rows > 1 else layout(n))
        assert int(g.get("data-offset")) == want


def test_repr_svg_is_none_where_nothing_can_be_drawn():
    assert cute.Layout((2, 2, 2))._repr_svg_() is None  # rank 3
    assert sd.Layout((1024, 1024), (1024, 1), 0)._repr_svg_() is None  # too big
    assert cute.Layout(4, -1)._repr_svg_() is None  # negative offsets


def test_swizzled_tile_is_coloured_by_bank():
    tile = cute.Layout((32, 32), (32, 1))
    plain = cells(show.svg(tile, colour="bank"))
    swizzled = cells(cute.composition(cute.Swizzle(5, 0, 5), tile)._repr_svg_())
    column = lambda cs: [fill_of(g) for g in cs if g.get("data-n") == "0"]
    assert len(set(column(plain))) == 1  # every row of column 0 in bank 0
    assert len(set(column(swizzled))) == 32  # one bank per row
    # The bank under each offset is (offset * 4 // 4) % 32.
    for g in swizzled[:64]:
        assert g.findall(SVG + "text")[1].text == f"b{int(g.get('data-offset')) % 32}"


def test_tv_layout_picture_names_thread_and_value():
    tv = cute.make_layout_tv(cute.Layout((2, 3), (3, 1)), cute.Layout((2, 2), (2, 1)))
    found = cells(tv._repr_svg_())
    assert len(found) == 24
    by_cell = {(int(g.get("data-m")), int(g.get("data-n"))): (int(g.get("data-thread")), int(g.get("data-value")))
               for g in found}
    assert by_cell[(0, 2)] == (1, 0) and by_cell[(1, 1)] == (0, 3) and by_cell[(3, 5)] == (5, 3)  # CuTe DSL's table
    assert len({fill_of(g) for g in found}) == 6  # one colour per thread


NODE = re.compile(r"\\node\[fill=\{rgb,255:red,\d+;green,\d+;blue,\d+\}\] at \((\d+),(\d+)\) \{([^}]*)\};")


def test_tikz_has_one_node_per_cell_at_its_row_and_column():
    L = cute.Layout((4, (2, 4)), (2, (1, 8)))
    tex = show.tikz(L)
    assert tex.startswith("\\documentclass[convert]{standalone}") and "\\begin{tikzpicture}" in tex
    nodes = {(int(m), int(n)): int(t) for m, n, t in NODE.findall(tex)}
    assert nodes == {(m, n): L(m, n) for m in range(4) for n in range(8)}
    assert "grid (4,8);" in tex and tex.rstrip().endswith("\\end{document}")
    tv = cute.make_layout_tv(cute.Layout((2, 3), (3, 1)), cute.Layout((2, 2), (2, 1)))
    texts = dict(((int(m), int(n)), t) for m, n, t in NODE.findall(cute.picture.tv_tikz(*tv)))
    assert texts[(2, 0)] == "T3V0" and len(texts) == 24


def test_show_tikz_and_bank_colours_from_the_command_line(tmp_path, capsys):
    tex, svg = tmp_path / "sw.tex", tmp_path / "sw.svg"
    assert main(["show", "Sw<5,0,5> o _0 o (32,32):(32,1)", "--tikz", str(tex), "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "one column takes 1..1 wavefronts" in out and f"wrote {tex}" in out
    assert len(NODE.findall(tex.read_text())) == 1024
    assert len(cells(svg.read_text())) == 1024
    assert main(["show", "(32,32):(32,1)", "--colour", "bank"]) == 0
    assert "one column takes 32..32 wavefronts" in capsys.readouterr().out


def test_parse_swizzled_text():
    S = show.parse_layout("Sw<3,3,3> o _0 o (8,64):(64,1)")
    assert S == cute.composition(cute.Swizzle(3, 3, 3), cute.Layout((8, 64), (64, 1)))
    assert show.parse_layout("Sw<3,3,3> o (8,64):(64,1)") == S
    assert show.parse_layout("Sw<1,0,1> o 4 o 8:1") == cute.ComposedLayout(cute.Swizzle(1, 0, 1), 4, cute.Layout(8))
    with pytest.raises(sd.StridedError, match="parse_layout.*Swizzle\\(3, 0, 2\\)"):
        show.parse_layout("Sw<3,0,2> o 8:1")
    with pytest.raises(sd.StridedError, match="parse_layout: a swizzle composes with CuTe layout text"):
        show.parse_layout("Sw<1,0,1> o (8):(1)+0")


def test_show_tv_draws_cute_dsls_table(tmp_path, capsys):
    svg = tmp_path / "tv.svg"
    assert main(["show", "(2,3):(3,1)", "--tv", "(2,2):(2,1)", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    # Rows 0 and 2 of make_layout_tv's table in CuTe DSL's docstring.
    assert " 0  | T0V0| T0V1| T1V0| T1V1| T2V0| T2V1|" in out
    assert " 2  | T3V0| T3V1| T4V0| T4V1| T5V0| T5V1|" in out
    assert len(cells(svg.read_text())) == 24
    assert main(["show", "(2,2):(1,4)", "--tv", "2"]) == 2
    assert "error: make_layout_tv: thr_layout (2,2):(1,4) is not compact" in capsys.readouterr().err
