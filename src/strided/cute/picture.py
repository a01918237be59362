"""Pictures of layouts as text: SVG (for notebooks and files) and LaTeX/TikZ (for papers).

Pure strings built from the integers of a layout; no drawing library.  Three
pictures:

* :func:`svg` - the grid of offsets of a rank-0/1/2 layout (a cute Layout, a
  ComposedLayout or a flat ``strided.Layout``) above the strip of the buffer
  it touches.  ``colour="offset"`` keys each cell's colour to its offset (the
  same offset, the same colour, in grid and buffer); ``colour="bank"`` to the
  shared-memory bank of the offset, which shows at a glance whether a column
  of a tile spreads over the banks (a swizzled or padded tile) or piles into
  one.
* :func:`tv_svg` - a thread-value layout's tile: each cell says which thread
  holds it and as which value, coloured by thread.
* :func:`tikz` / :func:`tv_tikz` - the same grids as a standalone LaTeX
  document with a ``tikzpicture``, as C++ ``print_latex`` writes them.

This module gives the cute classes (Layout, ComposedLayout, TVLayout) their
``_repr_svg_``, the picture a notebook shows (a swizzled layout coloured by
bank); it returns None (IPython then shows the text) for what is too big or
not drawable.  ``strided.layout`` gives the flat Layout its own from here.
"""

from __future__ import annotations

from colorsys import hls_to_rgb
from html import escape

from ..core.errors import LayoutBoundsError, ShapeError, StridedError
from .int_tuple import is_tuple, product
from .layout import Layout
from .memory import bank_of
from .swizzle import ComposedLayout, Swizzle
from .tv import TVLayout, tv_grid

__all__ = ["grid_of", "flat_parts", "flat_text", "svg", "tv_svg", "tikz", "tv_tikz", "repr_svg", "MAX_CELLS"]

# Largest picture we agree to draw: beyond this an SVG is no longer a picture.
MAX_CELLS = 1 << 16


def flat_parts(layout):
    try:
        return tuple(layout.shape), tuple(layout.stride), int(layout.offset)
    except (AttributeError, TypeError):
        raise ShapeError(
            f"show: expected a cute Layout, a flat strided Layout or layout text, got {layout!r}"
        ) from None


def flat_text(shape, stride, offset) -> str:
    """The text of a flat layout, ``(6,5):(10,1)+22``."""
    fmt = lambda t: "(" + ",".join(str(x) for x in t) + ")"
    return f"{fmt(shape)}:{fmt(stride)}+{offset}"


def grid_of(layout):
    """(title, rows, cols, value(m, n)) of a rank-0/1/2 layout of any kind."""
    if isinstance(layout, (Layout, ComposedLayout)):
        title = str(layout)
        if layout.rank == 2 and is_tuple(layout.shape):
            rows, cols = product(layout.shape[0]), product(layout.shape[1])
            return title, rows, cols, lambda m, n: layout(m, n)
        if layout.rank == 1:
            return title, 1, layout.size, lambda m, n: layout(n)
        if layout.rank == 0:
            return title, 1, 1, lambda m, n: 0
        raise ShapeError(f"show: layout {layout} has rank {layout.rank}; only ranks 0, 1 and 2 are drawn")
    shape, stride, offset = flat_parts(layout)
    title = flat_text(shape, stride, offset)
    if len(shape) == 2:
        return title, shape[0], shape[1], lambda m, n: offset + m * stride[0] + n * stride[1]
    if len(shape) == 1:
        return title, 1, shape[0], lambda m, n: offset + n * stride[0]
    if len(shape) == 0:
        return title, 1, 1, lambda m, n: offset
    raise ShapeError(f"show: layout {title} has {len(shape)} dims; only 0, 1 and 2 are drawn")


def check_cells(title, count, what):
    if count > MAX_CELLS:
        raise ShapeError(f"show: {title} has {count} {what}, more than the {MAX_CELLS} drawn at most")


def hue(key: int, of: int = 0) -> float:
    """The hue (degrees) of a colour key: ``of`` evenly spaced hues, or golden-angle steps.

    Golden-angle hues give neighbouring offsets clearly different colours and
    the same offset always the same colour."""
    return (key * 360 / of) % 360 if of else (key * 137.508) % 360


def _fill(h: float) -> str:
    return f"hsl({h:.1f},70%,78%)"


def _rgb(h: float) -> tuple:
    r, g, b = hls_to_rgb(h / 360, 0.78, 0.70)
    return round(r * 255), round(g * 255), round(b * 255)


def _cell_colours(colour, element_bytes, banks, bank_bytes):
    if colour == "offset":
        return lambda o: hue(o)
    if colour == "bank":
        return lambda o: hue(bank_of(o, element_bytes, banks, bank_bytes), banks)
    raise ShapeError(f"svg: colour must be 'offset' or 'bank', got {colour!r}")


def _svg_open(width, height, title):
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="12" y="26" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]


def _axis_labels(out, x0, y0, rows, cols, cell):
    for n in range(cols):
        out.append(f'<text x="{x0 + n * cell + cell / 2:g}" y="{y0 - 6}" text-anchor="middle" fill="#555">{n}</text>')
    for m in range(rows):
        out.append(f'<text x="{x0 - 6}" y="{y0 + m * cell + cell / 2 + 4:g}" text-anchor="end" fill="#555">{m}</text>')


def svg(layout, buffer_len=None, buffer_cols=None, *, colour="offset", element_bytes=4, banks=32,
        bank_bytes=4) -> str:
    """An SVG picture: the grid of offsets, then the buffer strip it touches.

    Each grid cell ``(m, n)`` shows its buffer offset on a colour keyed by
    that offset (``colour="offset"``) or by its shared-memory bank
    (``colour="bank"``, with ``element_bytes``, ``banks`` and ``bank_bytes``;
    the bank is written under the offset).  Below, the buffer
    ``0 .. buffer_len-1`` is drawn as a strip; cells the layout touches take
    the same colour, untouched cells stay grey, and cells touched more than
    once get a heavy red border and a count.  ``buffer_len`` defaults to the
    largest offset + 1 and ``buffer_cols`` (cells per strip row) to
    min(buffer_len, 32); a layout reaching below 0 or past ``buffer_len``
    raises LayoutBoundsError.
    """
    colour_of = _cell_colours(colour, element_bytes, banks, bank_bytes)
    title, rows, cols, value = grid_of(layout)
    check_cells(title, rows * cols, "cells")
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
    check_cells(title, buffer_len, "buffer elements")
    hits = {}
    for o in flat:
        hits[o] = hits.get(o, 0) + 1
    banked = colour == "bank"

    digits = max(len(str(max(high - 1, 0))), len(str(max(rows, cols))), 1)
    cell = max(30, 9 * digits + 14) + (6 if banked else 0)
    margin, head, label_w = 12, 22, max(26, 9 * len(str(rows)) + 10)
    grid_x, grid_y = margin + label_w, margin + 24 + head
    strip_per_row = buffer_cols or (max(1, min(buffer_len, 32)) if buffer_len else 1)
    scell = max(24, 8 * len(str(max(buffer_len - 1, 0))) + 10)
    strip_rows = -(-buffer_len // strip_per_row) if buffer_len else 0
    strip_y = grid_y + rows * cell + 40
    width = max(grid_x + cols * cell, margin + label_w + strip_per_row * scell) + margin
    height = strip_y + strip_rows * (scell + 12) + margin

    out = _svg_open(width, height, title)
    _axis_labels(out, grid_x, grid_y, rows, cols, cell)
    for m in range(rows):
        for n in range(cols):
            o = offsets[m][n]
            x, y = grid_x + n * cell, grid_y + m * cell
            text_y = y + cell / 2 + (0 if banked else 4)
            bank = (
                f'<text x="{x + cell / 2:g}" y="{y + cell / 2 + 12:g}" text-anchor="middle" font-size="9" '
                f'fill="#444">b{bank_of(o, element_bytes, banks, bank_bytes)}</text>'
                if banked else ""
            )
            out.append(
                f'<g class="cell" data-m="{m}" data-n="{n}" data-offset="{o}">'
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_fill(colour_of(o))}" '
                f'stroke="#333" stroke-width="1"/>'
                f'<text x="{x + cell / 2:g}" y="{text_y:g}" text-anchor="middle">{o}</text>{bank}</g>'
            )
    out.append(
        f'<text x="{margin}" y="{strip_y - 10}" fill="#333">buffer: {buffer_len} elements, '
        f"{len(hits)} touched" + (f"; colours: {banks} banks of {bank_bytes} bytes, "
                                  f"{element_bytes}-byte elements" if banked else "") + "</text>"
    )
    for i in range(buffer_len):
        x = margin + label_w + (i % strip_per_row) * scell
        y = strip_y + (i // strip_per_row) * (scell + 12)
        k = hits.get(i, 0)
        if k:
            fill, stroke, sw = _fill(colour_of(i)), ("#c00" if k > 1 else "#333"), (3 if k > 1 else 1)
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


def _tv_cells(tiler_mn, layout_tv):
    cells = tv_grid(tiler_mn, layout_tv)
    m_size, n_size = tiler_mn
    check_cells(f"TV layout {layout_tv}", m_size * n_size, "cells")
    return m_size, n_size, cells, layout_tv[0].size


def tv_svg(tiler_mn, layout_tv) -> str:
    """The (M, N) tile of a TV layout: each cell ``T<thread> V<value>``, coloured by thread.

    Cells that no (thread, value) reaches stay grey.
    """
    rows, cols, cells, threads = _tv_cells(tiler_mn, layout_tv)
    title = f"TV layout {layout_tv} over a {rows}x{cols} tile"
    cell = max(40, 8 * (len(str(threads)) + 4))
    margin, label_w = 12, max(26, 9 * len(str(rows)) + 10)
    grid_x, grid_y = margin + label_w, margin + 46
    width = grid_x + cols * cell + margin
    height = grid_y + rows * cell + margin
    out = _svg_open(width, height, title)
    _axis_labels(out, grid_x, grid_y, rows, cols, cell)
    for m in range(rows):
        for n in range(cols):
            x, y = grid_x + n * cell, grid_y + m * cell
            if (m, n) not in cells:
                out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#f4f4f4" stroke="#bbb"/>')
                continue
            t, v = cells[m, n]
            out.append(
                f'<g class="cell" data-m="{m}" data-n="{n}" data-thread="{t}" data-value="{v}">'
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{_fill(hue(t, threads))}" '
                f'stroke="#333" stroke-width="1"/>'
                f'<text x="{x + cell / 2:g}" y="{y + cell / 2 - 2:g}" text-anchor="middle">T{t}</text>'
                f'<text x="{x + cell / 2:g}" y="{y + cell / 2 + 12:g}" text-anchor="middle" font-size="10">'
                f'V{v}</text></g>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tikz_document(title, rows, cols, cells) -> str:
    """A standalone LaTeX document: one filled node per cell, a grid, row and column labels.

    ``cells[(m, n)] = (text, (r, g, b))``; rows go down and columns right, as
    C++ ``print_latex`` lays them out.
    """
    lines = [
        "\\documentclass[convert]{standalone}",
        "\\usepackage{tikz}",
        "\\begin{document}",
        f"% {title}",
        "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, outer sep=0pt}]",
    ]
    for (m, n), (text, (r, g, b)) in sorted(cells.items()):
        lines.append(f"\\node[fill={{rgb,255:red,{r};green,{g};blue,{b}}}] at ({m},{n}) {{{text}}};")
    lines.append(f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] (0,0) grid ({rows},{cols});")
    for m in range(rows):
        lines.append(f"\\node at ({m},-1) {{\\Large{{\\texttt{{{m}}}}}}};")
    for n in range(cols):
        lines.append(f"\\node at (-1,{n}) {{\\Large{{\\texttt{{{n}}}}}}};")
    lines += ["\\end{tikzpicture}", "\\end{document}"]
    return "\n".join(lines) + "\n"


def tikz(layout, *, colour="offset", element_bytes=4, banks=32, bank_bytes=4) -> str:
    """The grid of offsets of a rank-0/1/2 layout as a LaTeX/TikZ document (C++ ``print_latex``)."""
    colour_of = _cell_colours(colour, element_bytes, banks, bank_bytes)
    title, rows, cols, value = grid_of(layout)
    check_cells(title, rows * cols, "cells")
    cells = {}
    for m in range(rows):
        for n in range(cols):
            o = value(m, n)
            cells[(m, n)] = (str(o), _rgb(colour_of(o)))
    return _tikz_document(title, rows, cols, cells)


def tv_tikz(tiler_mn, layout_tv) -> str:
    """A TV layout's tile as a LaTeX/TikZ document (C++ ``print_latex`` of a TV layout)."""
    rows, cols, cells, threads = _tv_cells(tiler_mn, layout_tv)
    text = {mn: (f"T{t}V{v}", _rgb(hue(t, threads))) for mn, (t, v) in cells.items()}
    return _tikz_document(f"TV layout {layout_tv} over a {rows}x{cols} tile", rows, cols, text)


def repr_svg(draw, *args):
    """``draw(*args)``, or None where it cannot be drawn (too big, rank 3, negative offsets)."""
    try:
        return draw(*args)
    except StridedError:
        return None


def _layout_svg(self):
    return repr_svg(svg, self)


def _composed_svg(self):
    colour = "bank" if isinstance(self.layout_a, Swizzle) else "offset"
    return repr_svg(lambda x: svg(x, colour=colour), self)


def _tv_layout_svg(self):
    return repr_svg(tv_svg, self.tiler_mn, self.layout_tv)


Layout._repr_svg_ = _layout_svg
ComposedLayout._repr_svg_ = _composed_svg
TVLayout._repr_svg_ = _tv_layout_svg
