"""How tensors and layouts print.

``repr(t)`` follows PyTorch's ``tensor(...)`` (its number formatting,
summarisation and line breaking, so the value part reads the same), then adds
what a strided library must show: ``shape=``, ``dtype=`` and, for a view that
is not plain row-major from offset 0, ``stride=`` and ``offset=``::

    tensor([[0., 1.],
            [2., 3.]], shape=(2, 2), dtype=f32)
    tensor([[0., 2.],
            [1., 3.]], shape=(2, 2), dtype=f32, stride=(1, 2), offset=0)

Floats switch to scientific notation, like PyTorch, when the nonzero finite
magnitudes span more than 1000x, exceed 1e8 or go below 1e-4 (``sci_mode``
forces either way).  A Var ends with ``var=True``, a recorded result with
``op=<name>``.  Values are read through ``t.numpy()`` (f16/bf16 printed via
float64); a summarised print only ever copies the elements it shows.

``describe(layout)`` puts everything known about a layout on one screen.
"""

from __future__ import annotations

import math
import numbers
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np

from .core.errors import StridedError

__all__ = [
    "format_tensor", "format_values", "set_printoptions", "get_printoptions", "printoptions", "describe",
    "format_blocks", "format_list",
]


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000  # more elements than this are summarised
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None  # None: chosen from the values, like PyTorch


_OPTS = _PrintOptions()
_UNSET = object()


def get_printoptions() -> dict:
    return asdict(_OPTS)


def _nonneg_int(name: str, value, minimum: int = 0, allow_inf: bool = False):
    if allow_inf and isinstance(value, float) and value == math.inf:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise StridedError(
            f"set_printoptions: {name} must be an int >= {minimum}"
            f"{' (or math.inf)' if allow_inf else ''}, got {value!r}"
        )
    return int(value)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, sci_mode=_UNSET):
    """Change how tensors print; arguments left out (None) keep their value.

    ``sci_mode=True/False`` forces scientific / fixed notation for floats,
    ``sci_mode=None`` goes back to choosing it from the values.
    """
    new = _PrintOptions(**asdict(_OPTS))
    if precision is not None:
        new.precision = _nonneg_int("precision", precision)
    if threshold is not None:
        new.threshold = _nonneg_int("threshold", threshold, allow_inf=True)
    if edgeitems is not None:
        new.edgeitems = _nonneg_int("edgeitems", edgeitems)
    if linewidth is not None:
        new.linewidth = _nonneg_int("linewidth", linewidth, minimum=1)
    if sci_mode is not _UNSET:
        if sci_mode is not None and not isinstance(sci_mode, bool):
            raise StridedError(f"set_printoptions: sci_mode must be True, False or None, got {sci_mode!r}")
        new.sci_mode = sci_mode
    for k, v in asdict(new).items():
        setattr(_OPTS, k, v)


@contextmanager
def printoptions(**options):
    """``with printoptions(precision=2): ...`` sets options for the block only."""
    saved = get_printoptions()
    try:
        set_printoptions(**options)
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------
# values


class _Formatter:
    """PyTorch's _Formatter: one width and one notation for every element printed."""

    def __init__(self, values: np.ndarray, is_float: bool, opts: _PrintOptions):
        self.is_float = is_float
        self.precision = opts.precision
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not is_float:
            for v in values.ravel().tolist():
                self.max_width = max(self.max_width, len(str(v)))
        else:
            flat = values.ravel()
            nz = flat[np.isfinite(flat) & (flat != 0)]
            if nz.size:  # (all zeros / non-finite: plain "0." whatever sci_mode says, like PyTorch)
                mags = np.abs(nz)
                lo, hi = float(mags.min()), float(mags.max())
                self.int_mode = bool(np.all(nz == np.ceil(nz)))
                auto = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                self.sci_mode = auto if opts.sci_mode is None else opts.sci_mode
                p = self.precision
                for v in nz.tolist():
                    if self.sci_mode:
                        w = len(f"{v:.{p}e}")
                    elif self.int_mode:
                        w = len(f"{v:.0f}") + 1  # the trailing "." that marks a float
                    else:
                        w = len(f"{v:.{p}f}")
                    self.max_width = max(self.max_width, w)

    def format(self, v) -> str:
        if self.is_float:
            p = self.precision
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if math.isfinite(v):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return " " * (self.max_width - len(s)) + s


def _edge_values(a: np.ndarray, edge: int) -> np.ndarray:
    """The elements a summarised print shows (the first and last ``edge`` along every dim).

    Built from basic slices (views), so only the shown elements are ever copied:
    ``take`` would first make the whole operand contiguous (a huge broadcast included).
    """
    for axis, n in enumerate(a.shape):
        if n > 2 * edge:
            head = [slice(None)] * a.ndim
            tail = list(head)
            head[axis] = slice(0, edge)
            tail[axis] = slice(n - edge, n)
            a = np.concatenate([a[tuple(head)], a[tuple(tail)]], axis=axis)
    return a


def _vector(a: np.ndarray, n: int, indent: int, summarize: bool, fmt: _Formatter, opts: _PrintOptions) -> str:
    edge = opts.edgeitems
    per_line = max(1, (opts.linewidth - indent) // (fmt.max_width + 2))
    values = a.tolist()
    if summarize and not edge:
        items = ["..."]
    elif summarize and n > 2 * edge:
        items = [fmt.format(v) for v in values[:edge]] + [" ..."] + [fmt.format(v) for v in values[edge:]]
    else:
        items = [fmt.format(v) for v in values]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, shape: tuple, indent: int, summarize: bool, fmt: _Formatter, opts: _PrintOptions) -> str:
    """``a`` holds the shown elements only; ``shape`` is the full one (where the "..." go)."""
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, shape[0], indent, summarize, fmt, opts)
    n, edge = shape[0], opts.edgeitems
    rows = [_nested(a[i], shape[1:], indent + 1, summarize, fmt, opts) for i in range(a.shape[0])]
    if summarize and n > 2 * edge:
        rows = rows[:edge] + ["..."] + rows[edge:]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


_NUMPY_MAXDIMS = 64


def format_values(t, indent: int = 0) -> str:
    """The bracketed values of ``t`` as PyTorch's repr prints them (``[]`` when empty)."""
    opts = _OPTS
    if t.numel == 0:
        return "[]"
    if t.ndim > _NUMPY_MAXDIMS:  # values are read through NumPy, which stops at 64 dims
        return "[...]"
    a = t.numpy()
    summarize = t.numel > opts.threshold
    if summarize:
        a = _edge_values(a, opts.edgeitems)
    if t.dtype.is_float:
        a = a.astype(np.float64)  # f16/bf16/f32 print through doubles, exactly, as Python formats them
    return _nested(a, t.shape, indent, summarize, _Formatter(a, t.dtype.is_float, opts), opts)


def _tuple(t) -> str:
    return repr(tuple(t))


def _add_suffixes(body: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    parts = [body]
    last = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(t) -> str:
    prefix = "tensor("
    indent = len(prefix)
    lay = t.layout
    suffixes = [f"shape={_tuple(lay.shape)}", f"dtype={t.dtype.name}"]
    if not lay.is_contiguous() or lay.offset:
        suffixes += [f"stride={_tuple(lay.stride)}", f"offset={lay.offset}"]
    if t.device != "cpu":
        suffixes.append(f"device={t.device!r}")
    if t.is_variable():
        suffixes.append("var=True")
    elif t._op is not None:
        suffixes.append(f"op={t._op.name}")
    return _add_suffixes(prefix + format_values(t, indent), suffixes, indent, _OPTS.linewidth)


# ---------------------------------------------------------------------------
# layouts


def format_list(t) -> str:
    """Integers the way the seeds print them: ``[1, 2, 3]``."""
    return "[" + ", ".join(map(str, t)) + "]"


def format_blocks(blocks) -> str:
    """StridedBlocks the way the seed prints them (the first six block starts), as the tour does."""
    from .layout import MultipleBlocks, SingleBlock, UniformBlocks

    if isinstance(blocks, SingleBlock):
        return f"SingleBlock {{ start_offset: {blocks.start_offset}, len: {blocks.len} }}"
    if isinstance(blocks, UniformBlocks):
        return (
            f"UniformBlocks {{ start_offset: {blocks.start_offset}, block_len: {blocks.block_len}, "
            f"count: {blocks.count}, src_stride: {blocks.src_stride} }}"
        )
    assert isinstance(blocks, MultipleBlocks)
    starts = []
    for s in blocks.block_start_index:
        starts.append(s)
        if len(starts) == 6:
            break
    return f"MultipleBlocks {{ block_len: {blocks.block_len}, first starts: {format_list(starts)} }}"


def _yes(flag) -> str:
    return "yes" if flag else "no"


def describe(layout, dtype=None, buffer_len=None) -> str:
    """Dims, stride, offset, contiguity, span, classification and StridedBlocks of a layout."""
    lay = layout
    lo, hi = lay.span()
    rows = [
        ("layout", f"{lay}"),
        ("dims", f"{_tuple(lay.shape)}  rank {lay.ndim}, {lay.numel} elements"),
        ("stride", _tuple(lay.stride)),
        ("offset", str(lay.offset)),
        ("contiguous", f"row-major {_yes(lay.is_contiguous())}, column-major {_yes(lay.is_fortran_contiguous())}"),
        ("span", f"[{lo}, {hi})  cosize {hi - lo}"),
    ]
    if dtype is not None:
        from .core.dtype import as_dtype

        d = as_dtype(dtype)
        rows.append(("dtype", f"{d.name}, {d.itemsize} bytes per element, span {(hi - lo) * d.itemsize} bytes"))
    if buffer_len is not None:
        try:
            lay.validate(buffer_len)
            fits = f"{buffer_len} elements, the layout fits"
        except StridedError:
            fits = f"{buffer_len} elements, OUT OF BOUNDS: the layout reaches [{lo}, {hi})"
        rows.append(("buffer", fits))
    if hasattr(lay, "classify"):
        try:
            rows.append(("kinds", str(lay.classify())))
        except StridedError as e:
            rows.append(("kinds", f"undecided ({e})"))
    if hasattr(lay, "is_non_overlapping"):
        try:
            rows.append(("overlap", "none" if lay.is_non_overlapping() else "some elements share an offset"))
        except StridedError as e:
            rows.append(("overlap", f"undecided ({e})"))
    rows.append(("blocks", format_blocks(lay.strided_blocks())))
    if hasattr(lay, "decompose"):
        try:
            dec = lay.decompose()
        except StridedError as e:
            dec = None
            rows.append(("decompose", f"undecided ({e})"))
        else:
            if dec is None:
                rows.append(("decompose", "none (no dense base buffer replays it)"))
            else:
                base, steps = dec
                rows.append(("decompose", " -> ".join([f"dense {_tuple(base)}"] + [repr(s) for s in steps])))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
