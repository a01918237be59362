"""``python -m strided check "<layout>" [--op OP] [--json]``: what each library does with a layout.

For one layout (CuTe text, or flat text with ``+offset``; see ``strided.show``)
and optionally one op, a verdict per library: candle 0.11, NumPy 2, PyTorch 2,
CuTe and strided.  A verdict says whether the layout is representable, and
what the op gives: a view, a copy (and which path copies), an error (with the
library's own words) or a wrong answer.  The facts about the other libraries
are the rules written down in ``../shared/ANCHORS.md`` and the seeds, applied
to the layout, and each verdict names its source; strided's verdict is
computed by running strided on a buffer of the layout's span.

Ops (``--op``):

* ``contiguous``                    make it row-major
* ``reshape(3,8)``                  reshape to a shape (``reshape:3,8`` also reads)
* ``matmul``                        use it as the left operand (..., M, K) of a matmul
* ``as_strided(100)``               view a buffer of 100 elements through it
* ``elementwise((4,3):(1,4)+0)``    add a tensor of this second layout to it
"""

from __future__ import annotations

import json
import re
from math import prod

from ..core.errors import ShapeError, StridedError

__all__ = ["check", "parse_op", "format_report", "LIBRARIES", "main"]

LIBRARIES = ("candle", "numpy", "pytorch", "cute", "strided")
OPS = ("contiguous", "reshape", "matmul", "as_strided", "elementwise")

ANCHORS = "ANCHORS.md"
SEED_CANDLE = "seed 000 (candle-core 0.11.0 layouts)"
SEED_CUTE = "seed 002 (CuTe layouts)"
SEED_CANN = "seed 003 (CANN non-contiguous tensors)"

_OP = re.compile(r"^\s*(?P<name>[a-z_]+)\s*(?:[:=]\s*(?P<arg1>.+?)|\((?P<arg2>.*)\))?\s*$", re.S)


def _verdict(verdict: str, detail: str, source: str) -> dict:
    return {"verdict": verdict, "detail": detail, "source": source}


def parse_op(text):
    """``(name, argument)`` of ``--op`` text; the argument is a shape, an int, a layout or None."""
    if text is None:
        return None, None
    m = _OP.match(text)
    if not m or m["name"] not in OPS:
        raise ShapeError(f"check: unknown op {text!r}; expected one of {', '.join(OPS)} (see --help)")
    name, raw = m["name"], m["arg1"] if m["arg1"] is not None else m["arg2"]
    if name in ("contiguous", "matmul"):
        if raw:
            raise ShapeError(f"check: {name} takes no argument, got {raw!r}")
        return name, None
    if not raw:
        raise ShapeError(f"check: {name} needs an argument, as in {_EXAMPLES[name]}")
    if name == "reshape":
        try:
            shape = tuple(int(x) for x in raw.strip("() ").split(",") if x.strip())
        except ValueError:
            raise ShapeError(f"check: reshape needs a shape of ints, as in reshape(3,8); got {raw!r}") from None
        return name, shape
    if name == "as_strided":
        try:
            n = int(raw)
        except ValueError:
            raise ShapeError(f"check: as_strided needs a buffer length, as in as_strided(100); got {raw!r}") from None
        if n < 0:
            raise ShapeError(f"check: as_strided needs a buffer length >= 0, got {n}")
        return name, n
    return name, _flat(_parse(raw))


_EXAMPLES = {"reshape": "reshape(3,8)", "as_strided": "as_strided(100)", "elementwise": "elementwise((4,3):(1,4)+0)"}


def _parse(text):
    from .show import parse_layout

    return parse_layout(text)


def _flat(layout):
    """The flat layout a tensor library sees: a CuTe layout's flattening at offset 0."""
    from ..cute import ComposedLayout
    from ..layout import Layout

    if isinstance(layout, ComposedLayout):
        raise ShapeError(
            f"check: {layout} is a swizzled layout, a function no strided tensor library represents; "
            f"check its inner layout {layout.layout_b}"
        )
    if isinstance(layout, Layout):
        return layout
    return layout.flatten()


# ---------------------------------------------------------------------------
# facts applied to a flat layout


def _fmt(lay) -> str:
    return f"shape {list(lay.shape)} stride {list(lay.stride)} offset {lay.offset}"


def _negative(lay) -> bool:
    return any(s < 0 for s, n in zip(lay.stride, lay.shape) if n > 1) or lay.offset < 0


def _candle_contiguous(lay) -> bool:
    """candle's Shape::is_contiguous: from the last dim, each stride is the product of the dims to
    its right; size-1 dims are skipped (seed 000)."""
    acc = 1
    for n, s in zip(reversed(lay.shape), reversed(lay.stride)):
        if n > 1 and s != acc:
            return False
        acc *= n
    return True


def _merged_rank(layouts) -> int:
    """NdIter's rank after merging adjacent dims that every operand allows (no reordering)."""
    shape = list(layouts[0].shape)
    if not shape:
        return 0
    groups = 1
    for i in range(len(shape) - 1):
        if not all(
            lay.shape[i] == 1 or lay.shape[i + 1] == 1 or lay.stride[i] == lay.stride[i + 1] * lay.shape[i + 1]
            for lay in layouts
        ):
            groups += 1
    return groups


def _blocks_text(lay) -> str:
    from ..printing import format_blocks

    return format_blocks(lay.strided_blocks())


def _candle_copy_path(lay) -> str:
    from ..layout import MultipleBlocks, SingleBlock, UniformBlocks

    b = lay.strided_blocks()
    if isinstance(b, SingleBlock):
        return "one slice copy (SingleBlock)"
    if isinstance(b, UniformBlocks):
        rows = "one memcpy" if b.src_stride == b.block_len else f"{b.count} row copies"
        return f"copy2d over UniformBlocks(count {b.count}, block {b.block_len}, stride {b.src_stride}): {rows}"
    assert isinstance(b, MultipleBlocks)
    if b.block_len == 1:
        return f"MultipleBlocks of 1 element: {lay.numel} element-by-element copies"
    return f"MultipleBlocks: one copy per block of {b.block_len}"


def _batch_collapses(shape, stride) -> bool:
    for i in range(len(shape) - 1):
        if shape[i] > 1 and shape[i + 1] > 1 and stride[i] != stride[i + 1] * shape[i + 1]:
            return False
    return True


# ---------------------------------------------------------------------------
# per library


def _representable(lay, cute_text) -> dict:
    neg = _negative(lay)
    nested = cute_text is not None and cute_text != _flat_cute_text(lay)
    flat_note = f" (flattened from the CuTe layout {cute_text})" if nested else ""
    out = {
        "candle": _verdict(
            "not representable" if neg else "representable",
            "strides and start_offset are usize: no negative strides, so no flipped views (flip copies "
            "through index_select)" if neg
            else f"Layout {{{_fmt(lay)}}}{flat_note}; size-1 dims never affect addressing",
            SEED_CANDLE,
        ),
        "numpy": _verdict(
            "representable" if lay.ndim <= 64 else "not representable",
            f"any strides, in bytes (x itemsize){flat_note}" if lay.ndim <= 64 else "NumPy arrays hold at most 64 dims",
            ANCHORS + ": NumPy 2.x",
        ),
        "pytorch": _verdict(
            "not representable" if neg else "representable",
            "as_strided refuses it: 'as_strided: Negative strides are not supported at the moment'"
            if neg else f"sizes {list(lay.shape)}, strides {list(lay.stride)}, storage offset {lay.offset}{flat_note}",
            ANCHORS + ": PyTorch 2.x (as_strided rejects negative strides and offsets)",
        ),
        "cute": _verdict(
            "representable",
            f"the layout {cute_text} (any signs; the offset goes with the pointer)" if cute_text
            else f"the layout {_flat_cute_text(lay)} with the offset {lay.offset} on the pointer",
            SEED_CUTE,
        ),
    }
    return out


def _flat_cute_text(lay) -> str:
    if lay.ndim == 1:
        return f"{lay.shape[0]}:{lay.stride[0]}"
    return "(" + ",".join(map(str, lay.shape)) + "):(" + ",".join(map(str, lay.stride)) + ")"


def _cute_of(lay):
    """The CuTe layout of a flat one, modes reversed: CuTe's index i walks the flat row-major order."""
    from .. import cute

    return cute.Layout(tuple(reversed(lay.shape)) or 1, tuple(reversed(lay.stride)) or 0)


def _op_contiguous(lay, neg) -> dict:
    out = {}
    if neg:
        out["candle"] = _verdict("n/a", "not representable (negative strides)", SEED_CANDLE)
    elif _candle_contiguous(lay):
        out["candle"] = _verdict("view", "is_contiguous: contiguous() returns self.clone(), sharing the storage",
                                 SEED_CANDLE)
    else:
        out["candle"] = _verdict("copy", _candle_copy_path(lay), ANCHORS + ": candle CPU copy")
    c_cont = lay.is_contiguous()
    out["numpy"] = _verdict(
        "view" if c_cont else "copy",
        "already C-contiguous: ascontiguousarray returns it" if c_cont
        else "ascontiguousarray copies, walking in nditer order K (axes sorted by |stride|)",
        ANCHORS + ": NumPy 2.x",
    )
    if neg:
        out["pytorch"] = _verdict("n/a", "not representable (negative strides)", ANCHORS + ": PyTorch 2.x")
    else:
        fast = lay.ndim == 2 and lay.stride[0] == 1 and lay.stride[1] == lay.shape[0] and lay.shape[0] > 1
        out["pytorch"] = _verdict(
            "view" if c_cont else "copy",
            "is_contiguous: returns self" if c_cont else (
                "the transposed-copy fast path: 60x60 tiles through a scratch buffer" if fast
                else "a TensorIterator copy into a new row-major tensor"),
            ANCHORS + ": PyTorch 2.x",
        )
    from .. import cute

    co = cute.coalesce(_cute_of(lay))
    compact = _is_compact(co)
    out["cute"] = _verdict(
        "n/a",
        f"no runtime contiguous(): a copy is a kernel between two layouts; coalesce gives {co}"
        + (", already compact" if compact else ", not compact"),
        SEED_CUTE,
    )
    return out


def _is_compact(co) -> bool:
    """A bijection onto 0 .. size-1 (coalesced, that is one mode of stride 1, or size 1)."""
    return co.size == 1 or (co.rank == 1 and co.stride == 1)


def _op_reshape(lay, shape, neg) -> dict:
    n = lay.numel
    out = {}
    if prod(shape) != n:
        msg = f"shape {list(shape)} has {prod(shape)} elements, the layout {n}"
        for lib, src in (("candle", SEED_CANDLE), ("numpy", ANCHORS + ": NumPy 2.x"),
                         ("pytorch", ANCHORS + ": PyTorch 2.x"), ("cute", SEED_CUTE)):
            out[lib] = _verdict("error", msg, src)
        return out
    view = lay.reshape_view(shape)
    if neg:
        out["candle"] = _verdict("n/a", "not representable (negative strides)", SEED_CANDLE)
    else:
        out["candle"] = _verdict(
            "view" if _candle_contiguous(lay) else "copy",
            "contiguous input: a new layout on the same storage" if _candle_contiguous(lay)
            else "reshape is a view only for contiguous input: it copies"
            + (f" (a view exists: strides {list(view.stride)})" if view is not None else ""),
            ANCHORS + ": candle semantics",
        )
    out["numpy"] = _verdict(
        "view" if view is not None else "copy",
        f"no-copy reshape (the chunk rule): strides {list(view.stride)}" if view is not None
        else "no strides describe it: reshape copies",
        ANCHORS + ": NumPy 2.x (no-copy reshape uses PyTorch's chunk idea)",
    )
    if neg:
        out["pytorch"] = _verdict("n/a", "not representable (negative strides)", ANCHORS + ": PyTorch 2.x")
    else:
        out["pytorch"] = _verdict(
            "view" if view is not None else "copy",
            f"computeStride: strides {list(view.stride)} (view() works too)" if view is not None
            else "reshape copies; view() raises 'view size is not compatible with input tensor's size and stride "
            "(at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.'",
            ANCHORS + ": PyTorch 2.x (computeStride)",
        )
    from .. import cute

    try:
        target = cute.Layout(tuple(reversed(shape)) or 1)
        got = cute.composition(_cute_of(lay), target)
        flat_ok = view is not None
        out["cute"] = _verdict(
            "view",
            f"composition(L, {target}) = {got}, modes reversed to the row-major shape"
            + ("" if flat_ok else "; a hierarchical layout where flat strides have none"),
            SEED_CUTE + "; " + ANCHORS + ": CuTe composition",
        )
    except StridedError as e:
        out["cute"] = _verdict("error", str(e), ANCHORS + ": CuTe composition")
    return out


def _op_matmul(lay, neg) -> dict:
    if lay.ndim < 2:
        msg = f"a matmul operand needs 2 dims or more, this layout has {lay.ndim}"
        return {lib: _verdict("error", msg, ANCHORS) for lib in ("candle", "numpy", "pytorch", "cute")}
    out = {}
    batch_shape, batch_stride = lay.shape[:-2], lay.stride[:-2]
    m_, k_ = lay.shape[-2:]
    sm, sk = lay.stride[-2:]
    # BLAS's N and T, as candle's accelerate and Metal paths take them: dense rows or dense columns.
    nt = (sk == 1 and sm == k_) or (sm == 1 and sk == m_) or m_ * k_ <= 1
    if neg:
        out["candle"] = _verdict("n/a", "not representable (negative strides)", SEED_CANDLE)
    else:
        notes = []
        verdict = "ok"
        broadcast_batch = any(n > 1 and s == 0 for n, s in zip(batch_shape, batch_stride))
        if len(batch_shape) > 2 or not _batch_collapses(batch_shape, batch_stride):
            verdict = "error"
            why = ("has more than two batch dims" if len(batch_shape) > 2
                   else "has batch dims whose strides do not collapse into one stride")
            notes.append(
                f"CPU: the operand {why} (batch {list(batch_shape)}, strides {list(batch_stride)}; ab_skip): "
                f"MatMulUnexpectedStriding"
            )
            if len(batch_shape) >= 2:
                notes.append(
                    f"Metal: runs, but takes the batch stride from stride[-3] = {lay.stride[-3]} alone: wrong numbers"
                )
        elif broadcast_batch:
            verdict = "wrong"
            notes.append("a stride-0 left batch gives wrong numbers (candle issue #3744)")
        else:
            notes.append("CPU (gemm crate): any row and column strides; batch collapses into one stride")
        if not nt:
            notes.append(
                f"with accelerate or on Metal only row-major or transposed (N/T) inner dims pass: strides "
                f"({sm}, {sk}) give MatMulUnexpectedStriding / MatMulNonContiguous"
            )
        out["candle"] = _verdict(verdict, "; ".join(notes), SEED_CANDLE + "; " + ANCHORS + ": candle matmul")
    out["numpy"] = _verdict("ok", "np.matmul takes any strides (copies what BLAS cannot read)", ANCHORS + ": NumPy 2.x")
    out["pytorch"] = (
        _verdict("n/a", "not representable (negative strides)", ANCHORS + ": PyTorch 2.x") if neg
        else _verdict("ok", "torch.matmul takes any strides", ANCHORS + ": PyTorch 2.x")
    )
    out["cute"] = _verdict(
        "ok", "a CuTe GEMM partitions any (M,K) layout into tiles (local_tile); the copy atoms decide the speed",
        SEED_CUTE,
    )
    return out


def _op_as_strided(lay, n, neg) -> dict:
    lo, hi = lay.span() if lay.numel else (lay.offset, lay.offset)
    inside = lay.numel == 0 or (lo >= 0 and hi <= n)
    out = {"candle": _verdict("n/a", "candle builds layouts only through its view ops (narrow, transpose, "
                                     "broadcast, ...); the seeds show no as_strided", SEED_CANDLE)}
    out["numpy"] = _verdict(
        "view" if inside else "wrong",
        "a view" if inside else f"as_strided validates nothing: the view reaches [{lo}, {hi}) of a buffer of {n}, "
        f"reading outside it (garbage or a crash)",
        ANCHORS + ": NumPy 2.x (\"can corrupt results or crash your program\")",
    )
    if neg:
        out["pytorch"] = _verdict(
            "error",
            "as_strided: Negative strides are not supported at the moment" if any(s < 0 for s in lay.stride)
            else f"Tensor: invalid storage offset {lay.offset}",
            ANCHORS + ": PyTorch 2.x",
        )
    else:
        need = lay.offset + 1 + sum(s * (d - 1) for s, d in zip(lay.stride, lay.shape)) if lay.numel else 0
        ok = lay.numel == 0 or need <= n
        out["pytorch"] = _verdict(
            "view" if ok else "error",
            "a view (overlap allowed; checked only when an op writes)" if ok
            else f"setStorage: sizes {list(lay.shape)}, strides {list(lay.stride)}, storage offset {lay.offset}, "
            f"and itemsize 4 requiring a storage size of {need * 4} are out of bounds for storage of size {n * 4}",
            ANCHORS + ": PyTorch 2.x (offset + 1 + sum(stride*(size-1)) <= storage)",
        )
    out["cute"] = _verdict(
        "view" if inside else "wrong",
        "a tensor is a pointer and a layout; nothing is checked" + ("" if inside else
                                                                     f": it reaches [{lo}, {hi}), outside {n}"),
        SEED_CUTE,
    )
    return out


def _op_elementwise(lay, other, neg) -> dict:
    from ..layout.layout import broadcast_shapes

    out = {}
    try:
        shape = broadcast_shapes("check", lay.shape, other.shape)
    except StridedError as e:
        return {lib: _verdict("error", str(e), ANCHORS) for lib in ("candle", "numpy", "pytorch", "cute")}
    a, b = lay.broadcast_as(shape), other.broadcast_as(shape)
    neg = neg or _negative(other)
    rank = _merged_rank([a, b])
    if neg:
        out["candle"] = _verdict("n/a", "not representable (negative strides)", SEED_CANDLE)
    elif rank > 8:
        out["candle"] = _verdict(
            "panic",
            f"NdIter merges to {rank} dims, past MAX_DIMS = 8: release builds panic at an array index "
            f"('index out of bounds'), debug builds with 'rank {rank} exceeds MAX_DIMS=8'",
            SEED_CANDLE + " (NdIter); " + ANCHORS,
        )
    else:
        inner = (a.stride[-1] if a.ndim else 0, b.stride[-1] if b.ndim else 0)
        loop = ("vectorised (both inner strides 1)" if inner == (1, 1) else
                "scalar-broadcast vectorised (inner strides 1 and 0)" if inner == (1, 0)
                else "element by element")
        out["candle"] = _verdict("ok", f"NdIter merges to {rank} dims (never reorders); inner loop {loop}",
                                 SEED_CANDLE + " (NdIter)")
    out["numpy"] = _verdict("ok", "nditer order K sorts axes by |stride|; the output follows the inputs' order",
                            ANCHORS + ": NumPy 2.x")
    out["pytorch"] = (
        _verdict("n/a", "not representable (negative strides)", ANCHORS + ": PyTorch 2.x") if neg
        else _verdict("ok", "TensorIterator sorts dims by stride and allocates the output in that order",
                      ANCHORS + ": PyTorch 2.x")
    )
    out["cute"] = _verdict("n/a", "layouts only: an elementwise kernel would walk both layouts", SEED_CUTE)
    return out


# ---------------------------------------------------------------------------
# strided itself, run live


def _buffer_for(lay):
    """(tensor over a buffer arange(N), the layout on it): the layout lifted to offsets >= 0."""
    import numpy as np

    import strided as sd

    lo, hi = lay.span() if lay.numel else (0, 0)
    shift = -lo if lo < 0 else 0
    view_lay = type(lay)(lay.shape, lay.stride, lay.offset + shift)
    n = max(hi + shift, 1)
    base = sd.from_numpy(np.arange(n, dtype=np.float32))
    return sd.as_strided(base, view_lay.shape, view_lay.stride, view_lay.offset), base, shift


def _strided(lay, op, arg) -> dict:
    import numpy as np

    import strided as sd

    src = "strided, run on a buffer of the layout's span"
    try:
        if op == "as_strided":
            base = sd.zeros(arg)
            try:
                t = sd.as_strided(base, lay.shape, lay.stride, lay.offset)
            except StridedError as e:
                return _verdict("error", str(e), src)
            return _verdict("view", f"validated against the {arg}-element buffer: {_fmt(t.layout)}", src)
        t, base, shift = _buffer_for(lay)
        lifted = f" (lifted by {shift} so that every offset is >= 0)" if shift else ""
        if op is None:
            kinds = ", ".join(t.layout.classify().kinds)
            return _verdict("representable", f"{_fmt(t.layout)}{lifted}; {kinds}; blocks {_blocks_text(t.layout)}", src)
        if op == "contiguous":
            c = t.contiguous()
            if sd.same_buffer(c, t):
                return _verdict("view", "already contiguous: contiguous() returns it", src)
            return _verdict("copy", f"a row-major copy; the source walks {_blocks_text(t.layout)}", src)
        if op == "reshape":
            r = t.reshape(arg)
            same = sd.same_buffer(r, t)
            return _verdict("view" if same else "copy",
                            (f"strides {list(r.stride)}" if same else "no strides describe it: a row-major copy")
                            + lifted, src)
        if op == "matmul":
            k = t.shape[-1]
            rhs_np = np.arange(k * 3, dtype=np.float32).reshape(k, 3) / 7
            got = (t @ sd.from_numpy(rhs_np)).numpy()
            want = np.matmul(t.numpy(), rhs_np)
            ok = np.allclose(got, want, rtol=1e-4, atol=1e-3)
            return _verdict("ok" if ok else "wrong",
                            f"computed with a ({k},3) right operand: {'matches' if ok else 'differs from'} NumPy"
                            + lifted, src)
        if op == "elementwise":
            u, _, _ = _buffer_for(arg)
            got = t + u
            ok = np.array_equal(got.numpy(), t.numpy() + u.numpy())
            it = sd.NdIter(t.layout.broadcast_as(got.shape), u.layout.broadcast_as(got.shape))
            return _verdict("ok" if ok else "wrong",
                            f"NdIter: {len(it)} outer steps of {it.inner_size} (no rank limit); output strides "
                            f"{list(got.stride)}; {'matches' if ok else 'differs from'} NumPy", src)
    except StridedError as e:
        return _verdict("error", str(e), src)
    raise ShapeError(f"check: unknown op {op!r}")


# ---------------------------------------------------------------------------


def check(layout_text: str, op: str | None = None) -> dict:
    """The verdicts of candle, NumPy, PyTorch, CuTe and strided for a layout (and an op)."""
    if not isinstance(layout_text, str):
        raise ShapeError(f"check: expected layout text, got {layout_text!r}")
    parsed = _parse(layout_text)
    from ..cute import Layout as CuteLayout

    cute_text = str(parsed) if isinstance(parsed, CuteLayout) else None
    lay = _flat(parsed)
    name, arg = parse_op(op)
    neg = _negative(lay)
    if name is None:
        out = _representable(lay, cute_text)
    elif name == "contiguous":
        out = _op_contiguous(lay, neg)
    elif name == "reshape":
        out = _op_reshape(lay, arg, neg)
    elif name == "matmul":
        out = _op_matmul(lay, neg)
    elif name == "as_strided":
        out = _op_as_strided(lay, arg, neg)
    else:
        out = _op_elementwise(lay, arg, neg)
    out["strided"] = _strided(lay, name, arg)
    return {lib: out[lib] for lib in LIBRARIES}


def format_report(layout_text: str, op, report: dict) -> str:
    lines = [f"check {layout_text}" + (f" --op {op}" if op else "")]
    for lib in LIBRARIES:
        v = report[lib]
        lines.append(f"  {lib:<8} {v['verdict']:<18} {v['detail']}")
        lines.append(f"  {'':<8} {'':<18} [source: {v['source']}]")
    return "\n".join(lines) + "\n"


def main(layout_text: str, op: str | None = None, as_json: bool = False) -> int:
    import sys

    try:
        report = check(layout_text, op)
    except StridedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(report, indent=1))
    else:
        print(format_report(layout_text, op, report), end="")
    return 0
