"""Pictures of layouts: parse layout text, draw ASCII grids and SVG.

Two kinds of layout text are understood:

* CuTe text, ``(4,(2,4)):(2,(1,8))``, ``8:2``, ``(_4,_2):(_1,_4)`` (static
  integers written ``_4``), or a bare shape ``(4,2)`` for the compact
  column-major layout: parsed as a :class:`strided.cute.Layout`.
* Flat text with an offset suffix, ``(6,5):(10,1)+22``: parsed as a flat
  ``strided.layout.Layout`` (the ``+offset`` is what marks it flat, so it is
  required there, even when it is ``+0``).

:func:`ascii_grid` returns the grid C++ ``print_layout`` prints, and
:func:`svg` draws the grid of offsets above the buffer it touches.  Both take
either kind of layout (or its text) of rank 0, 1 or 2.  Pure strings; the flat
layout class is imported only when flat text is parsed.
"""

from __future__ import annotations

import re
from html import escape

from .cute.int_tuple import Static, format_int_tuple, is_tuple
from .cute.layout import Layout as CuteLayout
from .cute.layout import grid_text
from .errors import LayoutBoundsError, ShapeError, StridedError

__all__ = ["parse_layout", "layout_text", "ascii_grid", "svg", "png"]

# Largest picture we agree to draw: beyond this an SVG is no longer a picture.
MAX_CELLS = 1 << 16

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
    from .layout.layout import Layout as FlatLayout  # the flat layer, loaded on demand

    return FlatLayout(flat(shape, "shape"), flat(stride, "stride"), int(offset))


def layout_text(layout) -> str:
    """The text :func:`parse_layout` reads back: CuTe form, or flat with ``+offset``."""
    if isinstance(layout, CuteLayout):
        return str(layout)
    shape, stride, offset = _flat_parts(layout)
    fmt = lambda t: "(" + ",".join(str(x) for x in t) + ")"
    return f"{fmt(shape)}:{fmt(stride)}+{offset}"


def _flat_parts(layout):
    try:
        return tuple(layout.shape), tuple(layout.stride), int(layout.offset)
    except (AttributeError, TypeError):
        raise ShapeError(
            f"show: expected a cute Layout, a flat strided Layout or layout text, got {layout!r}"
        ) from None


def _grid(layout):
    """(title, rows, cols, value(m, n)) of a rank-0/1/2 layout of either kind."""
    if isinstance(layout, str):
        layout = parse_layout(layout)
    if isinstance(layout, CuteLayout):
        title = str(layout)
        if layout.rank == 2 and is_tuple(layout.shape):
            rows, cols = layout[0].size, layout[1].size
            return title, rows, cols, lambda m, n: layout(m, n)
        if layout.rank == 1:
            return title, 1, layout.size, lambda m, n: layout(n)
        if layout.rank == 0:
            return title, 1, 1, lambda m, n: 0
        raise ShapeError(f"show: layout {layout} has rank {layout.rank}; only ranks 0, 1 and 2 are drawn")
    shape, stride, offset = _flat_parts(layout)
    title = layout_text(layout)
    if len(shape) == 2:
        return title, shape[0], shape[1], lambda m, n: offset + m * stride[0] + n * stride[1]
    if len(shape) == 1:
        return title, 1, shape[0], lambda m, n: offset + n * stride[0]
    if len(shape) == 0:
        return title, 1, 1, lambda m, n: offset
    raise ShapeError(f"show: layout {title} has {len(shape)} dims; only 0, 1 and 2 are drawn")


def _check_cells(title, count, what):
    if count > MAX_CELLS:
        raise ShapeError(f"show: {title} has {count} {what}, more than the {MAX_CELLS} drawn at most")


def ascii_grid(layout) -> str:
    """The text C++ ``print_layout`` prints for this layout (rank 1 as one row).

    First line the layout, then a header of column indices, ``+---+`` rules
    and one row of offsets per index of mode 0.  Cells are
    ``digits(cosize) + 2`` wide (cosize = largest offset + 1).
    """
    title, rows, cols, value = _grid(layout)
    _check_cells(title, rows * cols, "cells")
    top = max((value(m, n) for m in range(rows) for n in range(cols)), default=0)
    return grid_text(title, rows, cols, value, max(top, 0) + 1)


def _colour(offset: int) -> str:
    # Golden-angle hues: neighbouring offsets get clearly different colours,
    # and the same offset always gets the same colour in grid and buffer.
    return f"hsl({(offset * 137.508) % 360:.1f},70%,78%)"


def svg(layout, buffer_len=None, buffer_cols=None) -> str:
    """An SVG picture: the grid of offsets, then the buffer strip it touches.

    Each grid cell ``(m, n)`` shows its buffer offset on a colour keyed by
    that offset.  Below, the buffer ``0 .. buffer_len-1`` is drawn as a strip;
    cells the layout touches take the same colour, untouched cells stay grey,
    and cells touched more than once get a heavy red border and a count.
    ``buffer_len`` defaults to the largest offset + 1 and ``buffer_cols``
    (cells per strip row) to min(buffer_len, 32); a layout reaching below
    0 or past ``buffer_len`` raises LayoutBoundsError.
    """
    title, rows, cols, value = _grid(layout)
    _check_cells(title, rows * cols, "cells")
    offsets = [[value(m, n) for n in range(cols)] for m in range(rows)]
    flat = [o for row in offsets for o in row]
    low = min(flat, default=0)
    high = max(flat, default=-1) + 1
    if low < 0:
        raise LayoutBoundsError(
            f"svg: layout {title} reaches offset {low} < 0; draw it with an offset that lifts it "
            f"into the buffer (flat text such as '...+{-low}')"
        )
    if buffer_len is None:
        buffer_len = high
    if isinstance(buffer_len, bool) or not isinstance(buffer_len, int) or buffer_len < 0:
        raise ShapeError(f"svg: buffer_len must be a non-negative int, got {buffer_len!r}")
    if high > buffer_len:
        raise LayoutBoundsError(
            f"svg: layout {title} reaches offset {high - 1}, outside a buffer of {buffer_len} elements"
        )
    _check_cells(title, buffer_len, "buffer elements")
    hits = {}
    for o in flat:
        hits[o] = hits.get(o, 0) + 1

    digits = max(len(str(max(high - 1, 0))), len(str(max(rows, cols))), 1)
    cell = max(30, 9 * digits + 14)
    margin, head, label_w = 12, 22, max(26, 9 * len(str(rows)) + 10)
    grid_x, grid_y = margin + label_w, margin + 24 + head
    strip_per_row = buffer_cols or (max(1, min(buffer_len, 32)) if buffer_len else 1)
    scell = max(24, 8 * len(str(max(buffer_len - 1, 0))) + 10)
    strip_rows = -(-buffer_len // strip_per_row) if buffer_len else 0
    strip_y = grid_y + rows * cell + 40
    width = max(grid_x + cols * cell, margin + label_w + strip_per_row * scell) + margin
    height = strip_y + strip_rows * (scell + 12) + margin

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="{margin}" y="{margin + 14}" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for n in range(cols):
        cx = grid_x + n * cell + cell / 2
        out.append(f'<text x="{cx:g}" y="{grid_y - 6}" text-anchor="middle" fill="#555">{n}</text>')
    for m in range(rows):
        cy = grid_y + m * cell + cell / 2 + 4
        out.append(
            f'<text x="{grid_x - 6}" y="{cy:g}" text-anchor="end" fill="#555">{m}</text>'
        )
        for n in range(cols):
            o = offsets[m][n]
            x, y = grid_x + n * cell, grid_y + m * cell
            out.append(
                f'<g class="cell" data-m="{m}" data-n="{n}" data-offset="{o}">'
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_colour(o)}" '
                f'stroke="#333" stroke-width="1"/>'
                f'<text x="{x + cell / 2:g}" y="{y + cell / 2 + 4:g}" text-anchor="middle">{o}</text></g>'
            )
    out.append(
        f'<text x="{margin}" y="{strip_y - 10}" fill="#333">buffer: {buffer_len} elements, '
        f"{len(hits)} touched</text>"
    )
    for i in range(buffer_len):
        x = margin + label_w + (i % strip_per_row) * scell
        y = strip_y + (i // strip_per_row) * (scell + 12)
        k = hits.get(i, 0)
        if k:
            fill, stroke, sw = _colour(i), ("#c00" if k > 1 else "#333"), (3 if k > 1 else 1)
        else:
            fill, stroke, sw = "#f4f4f4", "#bbb", 1
        extra = (
            f'<text x="{x + scell / 2:g}" y="{y + scell + 9}" text-anchor="middle" font-size="9" '
            f'fill="#c00">x{k}</text>'
            if k > 1
            else ""
        )
        out.append(
            f'<g class="buf" data-index="{i}" data-hits="{k}">'
            f'<rect x="{x}" y="{y}" width="{scell}" height="{scell}" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="{sw}"/>'
            f'<text x="{x + scell / 2:g}" y="{y + scell / 2 + 4:g}" text-anchor="middle" '
            f'fill="{"#000" if k else "#999"}">{i}</text>{extra}</g>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def png(layout, path: str, buffer_len=None, buffer_cols=None) -> None:
    """The same picture as :func:`svg`, drawn with matplotlib (an optional dependency)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import hsv_to_rgb
    except ImportError:
        raise StridedError("show --png needs matplotlib: pip install 'strided[plot]'") from None
    svg(layout, buffer_len)  # the same bounds checks and errors as the SVG
    title, rows, cols, value = _grid(layout)
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
