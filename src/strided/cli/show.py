"""Pictures of layouts: parse layout text, draw ASCII grids and SVG.

Two kinds of layout text are understood:

* CuTe text, ``(4,(2,4)):(2,(1,8))``, ``8:2``, ``(_4,_2):(_1,_4)`` (static
  integers written ``_4``), or a bare shape ``(4,2)`` for the compact
  column-major layout: parsed as a :class:`strided.cute.Layout`.
* Swizzled CuTe text as CuTe prints it, ``Sw<3,3,3> o _0 o (8,64):(64,1)``
  (the offset and its ``o`` may be left out): a :class:`strided.cute.ComposedLayout`.
* Flat text with an offset suffix, ``(6,5):(10,1)+22``: parsed as a flat
  ``strided.layout.Layout`` (the ``+offset`` is what marks it flat, so it is
  required there, even when it is ``+0``).

:func:`ascii_grid` returns the grid C++ ``print_layout`` prints, :func:`svg`
draws the grid of offsets above the buffer it touches and :func:`tikz` writes
the grid as LaTeX (both from :mod:`strided.cute.picture`).  All take any kind
of layout (or its text) of rank 0, 1 or 2.  Pure strings; the flat layout
class is imported only when flat text is parsed.
"""

from __future__ import annotations

import re

from ..cute import picture
from ..cute.int_tuple import Static, format_int_tuple, is_tuple
from ..cute.layout import Layout as CuteLayout
from ..cute.layout import grid_text
from ..cute.swizzle import ComposedLayout, Swizzle
from ..core.errors import ShapeError, StridedError

__all__ = ["parse_layout", "layout_text", "ascii_grid", "svg", "tikz", "png", "tv_layout", "tv_text"]

MAX_CELLS = picture.MAX_CELLS

_SWIZZLED = re.compile(
    r"\s*Sw\s*<\s*(?P<b>-?\d+)\s*,\s*(?P<m>-?\d+)\s*,\s*(?P<s>-?\d+)\s*>\s*o\s*"
    r"(?:(?P<offset>_?-?\d+)\s*o\s*)?(?P<rest>.*)$", re.S
)
_TOKEN = re.compile(r"\s*(?:(?P<int>_?-?\d+)|(?P<sym>[(),:+]))")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = []  # (kind, value, column)
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                self.fail(f"unexpected {text[pos:].lstrip()[:1]!r}", len(text) - len(text[pos:].lstrip()))
            if m.group("int") is not None:
                raw = m.group("int")
                value = Static(int(raw[1:])) if raw.startswith("_") else int(raw)
                self.tokens.append(("int", value, m.start("int")))
            else:
                self.tokens.append((m.group("sym"), m.group("sym"), m.start("sym")))
            pos = m.end()
        self.i = 0

    def fail(self, why: str, column=None):
        if column is None:
            column = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text)
        raise ShapeError(f"parse_layout: {why} at column {column} in {self.text!r}")

    def peek(self):
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self, kind):
        if self.peek() != kind:
            found = self.tokens[self.i][1] if self.i < len(self.tokens) else "end of text"
            self.fail(f"expected {kind!r}, found {found!r}")
        tok = self.tokens[self.i]
        self.i += 1
        return tok[1]

    def int_tuple(self):
        if self.peek() == "int":
            return self.take("int")
        self.take("(")
        items = []
        if self.peek() != ")":
            items.append(self.int_tuple())
            while self.peek() == ",":
                self.take(",")
                if self.peek() == ")":  # allow a trailing comma, as Python prints (8,)
                    break
                items.append(self.int_tuple())
        self.take(")")
        return tuple(items)


def parse_layout(text: str):
    """Parse CuTe layout text (a cute Layout) or flat text with ``+offset``.

    >>> str(parse_layout("(4,(2,4)):(2,(1,8))"))
    '(4,(2,4)):(2,(1,8))'
    >>> parse_layout("(6,5):(10,1)+22").offset
    22
    """
    if not isinstance(text, str):
        raise ShapeError(f"parse_layout: expected a string, got {text!r}")
    swizzled = _SWIZZLED.match(text)
    if swizzled:
        return _composed_from_text(text, swizzled)
    p = _Parser(text)
    if p.peek() is None:
        p.fail("empty layout text")
    shape = p.int_tuple()
    stride = None
    if p.peek() == ":":
        p.take(":")
        stride = p.int_tuple()
    offset = None
    if p.peek() == "+":
        p.take("+")
        offset = p.take("int")
    if p.peek() is not None:
        p.fail(f"unexpected {p.tokens[p.i][1]!r}")
    if offset is None:
        try:
            return CuteLayout(shape, stride)
        except StridedError as e:
            raise type(e)(f"parse_layout: {text!r}: {e}") from e
    return _flat_from_text(text, shape, stride, offset)


def _composed_from_text(text, match):
    """``Sw<B,M,S> o [offset o] layout``: a swizzled CuTe layout, as CuTe prints one."""
    try:
        sw = Swizzle(int(match["b"]), int(match["m"]), int(match["s"]))
    except StridedError as e:
        raise type(e)(f"parse_layout: {text!r}: {e}") from e
    raw = match["offset"] or "_0"
    offset = Static(int(raw[1:])) if raw.startswith("_") else int(raw)
    inner = parse_layout(match["rest"])
    if not isinstance(inner, CuteLayout):
        raise ShapeError(f"parse_layout: a swizzle composes with CuTe layout text, not flat text: {text!r}")
    return ComposedLayout(sw, offset, inner)


def _flat_from_text(text, shape, stride, offset):
    def flat(t, what):
        if not is_tuple(t):
            t = (t,)
        for e in t:
            if is_tuple(e):
                raise ShapeError(
                    f"parse_layout: a flat layout (text with +offset) has a flat {what}, got "
                    f"{format_int_tuple(t)} in {text!r}"
                )
            if isinstance(e, Static):
                raise ShapeError(
                    f"parse_layout: static integers like {e} belong to CuTe text, not to a flat "
                    f"layout with +offset: {text!r}"
                )
        return tuple(int(e) for e in t)

    if stride is None:
        raise ShapeError(
            f"parse_layout: flat text needs explicit strides, as in (6,5):(10,1)+22; got {text!r}"
        )
    if isinstance(offset, Static):
        raise ShapeError(f"parse_layout: the offset of flat text is a plain int, got {offset} in {text!r}")
    from ..layout.layout import Layout as FlatLayout  # the flat layer, loaded on demand

    return FlatLayout(flat(shape, "shape"), flat(stride, "stride"), int(offset))


def layout_text(layout) -> str:
    """The text :func:`parse_layout` reads back: CuTe form, or flat with ``+offset``."""
    if isinstance(layout, (CuteLayout, ComposedLayout)):
        return str(layout)
    return picture.flat_text(*picture.flat_parts(layout))


def is_swizzled(layout) -> bool:
    return isinstance(layout, ComposedLayout) and isinstance(layout.layout_a, Swizzle)


def bank_summary(layout, element_bytes: int = 4) -> str:
    """What a warp reading one row or one column of a rank-2 cute layout costs in wavefronts."""
    from ..cute.memory import bank_conflicts

    layout = _layout(layout)
    if not isinstance(layout, (CuteLayout, ComposedLayout)) or layout.rank != 2:
        return "banks: rows and columns are counted for rank-2 CuTe layouts only"
    rows, cols = layout[0].size, layout[1].size
    by_col = [bank_conflicts(layout(None, n), element_bytes) for n in range(cols)]
    by_row = [bank_conflicts(layout(m, None), element_bytes) for m in range(rows)]
    return (
        f"banks ({element_bytes}-byte elements, 32 banks of 4 bytes): a warp reading one column takes "
        f"{min(by_col)}..{max(by_col)} wavefronts, one row {min(by_row)}..{max(by_row)} (1 is conflict-free)"
    )


def tv_layout(thr_text, val_text):
    """``make_layout_tv`` of two layout texts (threads, values per thread)."""
    from ..cute.tv import make_layout_tv

    thr, val = parse_layout(thr_text), parse_layout(val_text)
    return make_layout_tv(thr, val)


def tv_text(tiler_mn, layout_tv) -> str:
    """The tile of a TV layout as text: ``T<thread>V<value>`` per cell, rows by columns."""
    from ..cute.tv import tv_grid

    cells = tv_grid(tiler_mn, layout_tv)
    rows, cols = tiler_mn
    picture.check_cells(f"TV layout {layout_tv}", rows * cols, "cells")
    text = {mn: f"T{t}V{v}" for mn, (t, v) in cells.items()}
    w = max(len(t) for t in text.values()) + 2
    lines = [f"TV layout {layout_tv} over a {rows}x{cols} tile (tiler {tiler_mn})"]
    lines.append("    " + "".join(f" {n:>{w - 1}d}" for n in range(cols)))
    for m in range(rows):
        lines.append(f"{m:2d}  " + "".join(f"|{text.get((m, n), '-'):>{w - 1}}" for n in range(cols)) + "|")
    return "\n".join(lines) + "\n"


def _layout(layout):
    return parse_layout(layout) if isinstance(layout, str) else layout


def ascii_grid(layout) -> str:
    """The text C++ ``print_layout`` prints for this layout (rank 1 as one row).

    First line the layout, then a header of column indices, ``+---+`` rules
    and one row of offsets per index of mode 0.  Cells are
    ``digits(cosize) + 2`` wide (cosize = largest offset + 1).
    """
    title, rows, cols, value = picture.grid_of(_layout(layout))
    picture.check_cells(title, rows * cols, "cells")
    top = max((value(m, n) for m in range(rows) for n in range(cols)), default=0)
    return grid_text(title, rows, cols, value, max(top, 0) + 1)


def svg(layout, buffer_len=None, buffer_cols=None, **colouring) -> str:
    """:func:`strided.cute.picture.svg` of a layout or of layout text."""
    return picture.svg(_layout(layout), buffer_len, buffer_cols, **colouring)


def tikz(layout, **colouring) -> str:
    """:func:`strided.cute.picture.tikz` of a layout or of layout text: LaTeX/TikZ."""
    return picture.tikz(_layout(layout), **colouring)


def png(layout, path: str, buffer_len=None, buffer_cols=None) -> None:
    """The same picture as :func:`svg`, drawn with matplotlib (an optional dependency)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import hsv_to_rgb
    except ImportError:
        raise StridedError("show --png needs matplotlib: pip install 'strided[plot]'") from None
    layout = _layout(layout)
    svg(layout, buffer_len)  # the same bounds checks and errors as the SVG
    title, rows, cols, value = picture.grid_of(layout)
    offsets = [[value(m, n) for n in range(cols)] for m in range(rows)]
    flat = [o for row in offsets for o in row]
    if buffer_len is None:
        buffer_len = max(flat, default=-1) + 1
    hits = {}
    for o in flat:
        hits[o] = hits.get(o, 0) + 1
    per_row = buffer_cols or (max(1, min(buffer_len, 32)) if buffer_len else 1)
    strip_rows = -(-buffer_len // per_row) if buffer_len else 0
    colour = lambda o: hsv_to_rgb(((o * 137.508) % 360 / 360, 0.45, 0.97))
    fig_w = max(cols, per_row) * 0.45 + 1
    fig_h = (rows + strip_rows * 1.3 + 2) * 0.45 + 0.5
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    ax.set_axis_off()
    ax.set_title(title, fontsize=10, family="monospace")
    for m in range(rows):
        for n in range(cols):
            o = offsets[m][n]
            ax.add_patch(plt.Rectangle((n, -m), 1, 1, facecolor=colour(o), edgecolor="#333"))
            ax.text(n + 0.5, -m + 0.5, str(o), ha="center", va="center", fontsize=8, family="monospace")
    top = -rows - 1.5
    for i in range(buffer_len):
        x, y = i % per_row, top - (i // per_row) * 1.3
        k = hits.get(i, 0)
        ax.add_patch(plt.Rectangle((x, y), 1, 1, facecolor=colour(i) if k else "#f4f4f4",
                                   edgecolor="#c00" if k > 1 else ("#333" if k else "#bbb"), lw=2.5 if k > 1 else 0.8))
        ax.text(x + 0.5, y + 0.5, str(i), ha="center", va="center", fontsize=7, color="#000" if k else "#999")
    ax.set_xlim(-0.2, max(cols, per_row) + 0.2)
    ax.set_ylim(top - max(strip_rows - 1, 0) * 1.3 - 0.3, 1.3)
    ax.set_aspect("equal")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
