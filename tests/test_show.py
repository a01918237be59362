"""strided.show: parsing layout text, the print_layout grid, the SVG picture."""

import os
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "cute"))
from cpp_figures import CPP_FIGURE_7C
from cute_strategies import layouts

from strided.cli import show
from strided.cute import Layout, format_layout, static
from strided.errors import LayoutBoundsError, ShapeError, StridedError

SVG = "{http://www.w3.org/2000/svg}"


def flat_layout_class():
    return pytest.importorskip("strided.layout.layout").Layout


# ---------------------------------------------------------------------------
# parse_layout
# ---------------------------------------------------------------------------


def test_parse_cute_text():
    assert show.parse_layout("(4,(2,4)):(2,(1,8))") == Layout((4, (2, 4)), (2, (1, 8)))
    assert show.parse_layout("8:2") == Layout(8, 2)
    assert show.parse_layout("8:-1") == Layout(8, -1)
    assert show.parse_layout("(8):(2)") == Layout((8,), (2,))
    assert show.parse_layout("(8,):(2,)") == Layout((8,), (2,))
    assert show.parse_layout(" ( 3 , 4 ) : ( 4 , 1 ) ") == Layout((3, 4), (4, 1))
    assert show.parse_layout("(4,2)") == Layout((4, 2), (1, 4))  # shape only: compact
    static_four = show.parse_layout("_4")
    assert str(static_four) == "_4:_1" and static_four == Layout(4)
    mixed = show.parse_layout("(_4,(2,_4)):(_2,(_1,8))")
    assert str(mixed) == "(_4,(2,_4)):(_2,(_1,8))"


@given(layouts())
@settings(max_examples=40)
def test_cute_text_round_trips(L):
    for layout in (L, static(L)):
        back = show.parse_layout(str(layout))
        assert back == layout and str(back) == str(layout)
        assert show.layout_text(layout) == str(layout)


def test_parse_flat_text():
    FlatLayout = flat_layout_class()
    flat = show.parse_layout("(6,5):(10,1)+22")
    assert isinstance(flat, FlatLayout)
    assert (flat.shape, flat.stride, flat.offset) == ((6, 5), (10, 1), 22)
    one = show.parse_layout("8:2+3")
    assert (one.shape, one.stride, one.offset) == ((8,), (2,), 3)
    zero = show.parse_layout("(4):(-1)+3")
    assert (zero.shape, zero.stride, zero.offset) == ((4,), (-1,), 3)
    assert show.layout_text(flat) == "(6,5):(10,1)+22"
    assert show.parse_layout(show.layout_text(one)) == one


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty layout text"),
        ("   ", "empty layout text"),
        ("(4,2", "expected ')'"),
        ("4:2:1", "unexpected ':'"),
        ("x", "unexpected 'x'"),
        ("(4,(2,4)):(2,1)", "not congruent"),
        ("(4,0):(1,4)", "positive"),
        ("((2,2)):((1,2))+0", "flat shape"),
        ("(4,2)+1", "explicit strides"),
        ("_4:_1+0", "static integers"),
        ("4:1+_2", "plain int"),
        ("4:1+", "expected 'int'"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(ShapeError) as info:
        show.parse_layout(text)
    assert "parse_layout" in str(info.value) and message in str(info.value)
    assert isinstance(info.value, StridedError)


def test_parse_rejects_non_text():
    with pytest.raises(ShapeError, match="expected a string"):
        show.parse_layout(Layout(4))


# ---------------------------------------------------------------------------
# ascii_grid
# ---------------------------------------------------------------------------


def test_ascii_grid_is_print_layout():
    assert show.ascii_grid("(4,(2,4)):(2,(1,8))") == CPP_FIGURE_7C
    L = Layout(((2, 2), (2, 4)), ((1, 4), (2, 8)))
    assert show.ascii_grid(L) == format_layout(L)
    assert show.ascii_grid(Layout(4, 3)) == format_layout(Layout(4, 3))


def test_ascii_grid_of_flat_layouts():
    flat_layout_class()
    lines = show.ascii_grid("(2,3):(10,1)+22").splitlines()
    assert lines[0] == "(2,3):(10,1)+22"
    assert lines[1] == "       0    1    2 "
    assert lines[3] == " 0  | 22 | 23 | 24 |"
    assert lines[5] == " 1  | 32 | 33 | 34 |"
    row = show.ascii_grid("(3):(2)+1").splitlines()
    assert row[3] == " 0  | 1 | 3 | 5 |"
    assert show.ascii_grid("():()+7").splitlines()[3] == " 0  | 7 |"


def test_ascii_grid_errors():
    with pytest.raises(ShapeError, match="rank 3"):
        show.ascii_grid(Layout((2, 2, 2)))
    with pytest.raises(ShapeError, match="expected a cute Layout"):
        show.ascii_grid(42)


# ---------------------------------------------------------------------------
# svg
# ---------------------------------------------------------------------------


def parse_svg(text):
    root = ET.fromstring(text)
    assert root.tag == SVG + "svg"
    cells, buffer = {}, {}
    for g in root.iter(SVG + "g"):
        rect = g.find(SVG + "rect")
        label = g.find(SVG + "text")
        if g.get("class") == "cell":
            key = (int(g.get("data-m")), int(g.get("data-n")))
            cells[key] = (int(g.get("data-offset")), rect.get("fill"), label.text)
        elif g.get("class") == "buf":
            buffer[int(g.get("data-index"))] = (int(g.get("data-hits")), rect.get("fill"), rect.get("stroke"),
                                                label.text)
    return root, cells, buffer


def test_svg_grid_and_buffer():
    L = Layout((4, (2, 4)), (2, (1, 8)))
    root, cells, buffer = parse_svg(show.svg(L))
    assert root.find(SVG + "title").text == str(L)
    assert len(cells) == 32
    for (m, n), (offset, fill, label) in cells.items():
        assert offset == L(m, n) and label == str(offset)
    assert sorted(buffer) == list(range(32))  # buffer_len defaults to cosize
    for i, (hits, fill, stroke, label) in buffer.items():
        assert hits == 1 and label == str(i)
    # A grid cell and the buffer cell it touches share a colour keyed by offset.
    colour = {offset: fill for offset, fill, _ in cells.values()}
    assert all(buffer[o][1] == colour[o] for o in colour)
    assert len(set(colour.values())) > 16


def test_svg_buffer_highlights_touched_and_repeated_cells():
    flat_layout_class()
    root, cells, buffer = parse_svg(show.svg("(3,4):(2,2)+1", buffer_len=16))
    offsets = [1 + 2 * m + 2 * n for m in range(3) for n in range(4)]
    assert sorted(o for o, _, _ in cells.values()) == sorted(offsets)
    assert sorted(buffer) == list(range(16))
    for i, (hits, fill, stroke, _) in buffer.items():
        assert hits == offsets.count(i)
        if hits == 0:
            assert fill == "#f4f4f4"
        elif hits > 1:
            assert stroke == "#c00"
    assert "buffer: 16 elements, 6 touched" in show.svg("(3,4):(2,2)+1", buffer_len=16)


def test_svg_rank1_rank0_and_text_input():
    _, cells, buffer = parse_svg(show.svg(Layout(4, 3)))
    assert [cells[(0, n)][0] for n in range(4)] == [0, 3, 6, 9]
    assert len(buffer) == 10 and sum(h for h, *_ in buffer.values()) == 4
    _, cells, buffer = parse_svg(show.svg(Layout((), ())))
    assert cells == {(0, 0): (0, cells[(0, 0)][1], "0")} and len(buffer) == 1
    assert show.svg("8:2").startswith("<svg")


def test_svg_errors():
    with pytest.raises(LayoutBoundsError, match="offset 31, outside a buffer of 20"):
        show.svg(Layout((4, (2, 4)), (2, (1, 8))), buffer_len=20)
    with pytest.raises(LayoutBoundsError, match="offset -3 < 0"):
        show.svg(Layout(4, -1))
    with pytest.raises(ShapeError, match="buffer_len"):
        show.svg(Layout(4), buffer_len=-1)
    with pytest.raises(ShapeError, match="buffer_len"):
        show.svg(Layout(4), buffer_len=2.5)
    with pytest.raises(ShapeError, match="rank 3"):
        show.svg(Layout((2, 2, 2)))
    with pytest.raises(ShapeError, match="more than"):
        show.svg(Layout((512, 512)))
    for err in (LayoutBoundsError,):
        assert issubclass(err, StridedError)
