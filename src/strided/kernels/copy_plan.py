"""The copy family's planner: which path a copy takes and the integers its kernel gets.

Pure: layouts in, a ``CopyPlan`` (a path name and plain integers) out, so that every
backend runs the CPU's plans (``strided.cuda.copy`` launches the same paths).
``plan_copy``'s docstring is the family's dispatch table; ``strided.kernels.copy``
runs the plans and re-exports what is public here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import caches
from ..layout.iterate import MultipleBlocks, NdIter, SingleBlock, UniformBlocks
from ..layout.layout import Layout
from .common import BLOCK_MIN, SHORT_P


@dataclass(frozen=True)
class CopyPlan:
    """The path ``copy_into`` takes and the integers its kernel receives."""

    path: str  # "run" | "rows" | "blocks" | "tiled" | "general" | "convert_via_scratch"
    args: tuple


def plan_copy(dst_layout: Layout, src_layout: Layout, same_dtype: bool = True) -> CopyPlan:
    """Choose the copy kernel.  The whole dispatch table of the copy family:

    =========  ===========================================================  ==========================
    path       when                                                         kernel
    =========  ===========================================================  ==========================
    run        same dtype, dst contiguous, src ``SingleBlock`` (or          one memmove, cut into
               ``UniformBlocks`` whose rows abut)                           parallel chunks
    rows       same dtype, dst contiguous, src ``UniformBlocks``; or src    copy2d: a memmove per row
               dense and dst rows of one dense run each (cat's slices of    of block_len; src_stride
               its output), runs at least ``BLOCK_MIN`` long                0 = broadcast fill
    blocks     same dtype, dst contiguous, src ``MultipleBlocks`` with      a memmove per block, the
               ``block_len >= BLOCK_MIN``                                   starts from an odometer
    tiled      otherwise, on ``NdIter(dst, src)``'s merged dims, when src   tiled transpose of those
               walks some dim faster than dst's innermost (``a.t()``, a     two dims, odometer over
               permute that swaps the innermost dims, a transposed dst)     the others
    general    everything else (short blocks, any dst layout whose          odometer over the merged
               innermost dim src agrees with, broadcasts, conversions)      outer dims, inner run
    =========  ===========================================================  ==========================

    Conversions (``same_dtype=False``) take only general, which converts as it
    stores (on dense operands NdIter merges everything into one run anyway);
    where a same-dtype copy would tile, a conversion is ``convert_via_scratch``:
    tiled into a scratch buffer of src's dtype in dst's memory order, then
    converted by general.  Large work runs in parallel chunks (``nchunks``).
    """
    n = dst_layout.numel
    if same_dtype and dst_layout.is_contiguous():
        doff = dst_layout.offset
        blocks = src_layout.strided_blocks()
        if isinstance(blocks, SingleBlock):
            return CopyPlan("run", (doff, blocks.start_offset, n))
        if isinstance(blocks, UniformBlocks):
            if blocks.src_stride == blocks.block_len:
                return CopyPlan("run", (doff, blocks.start_offset, n))
            return CopyPlan("rows", (doff, blocks.block_len, blocks.start_offset, blocks.src_stride,
                                     blocks.count, blocks.block_len))
        if isinstance(blocks, MultipleBlocks) and blocks.block_len >= BLOCK_MIN:
            idx = blocks.block_start_index
            return CopyPlan("blocks", (doff, idx.start_offset, idx.dims, idx.stride, blocks.block_len))
    elif same_dtype and src_layout.is_contiguous():
        rows = _dense_rows(dst_layout)
        if rows is not None and rows[2] >= BLOCK_MIN:
            count, drow, cols = rows
            return dense_src_rows(dst_layout.offset, drow, src_layout.offset, count, cols)
    it, p = tile_plan(dst_layout, src_layout)
    dstr, sstr = it.strides
    doff, soff = it.offsets
    if p is None:
        return CopyPlan("general", (doff, dstr, soff, sstr, it.shape))
    if not same_dtype:
        return CopyPlan("convert_via_scratch", ())
    q = it.ndim - 1
    outer = [k for k in range(q) if k != p]
    return CopyPlan("tiled", (
        doff, tuple(dstr[k] for k in outer), dstr[p], dstr[q],
        soff, tuple(sstr[k] for k in outer), sstr[p], sstr[q],
        tuple(it.shape[k] for k in outer), it.shape[p], it.shape[q],
    ))


def dense_src_rows(doff: int, drow: int, soff: int, rows: int, cols: int) -> CopyPlan:
    """A dense src from ``soff`` into ``rows`` rows of ``cols`` elements, ``drow`` apart."""
    return CopyPlan("rows", (doff, drow, soff, cols, rows, cols))


def _dense_rows(layout: Layout) -> tuple[int, int, int] | None:
    """(rows, row stride, row length) when ``layout`` is rows of one dense run each: at
    most one dim of size > 1 outside its dense innermost run; else None."""
    blocks = layout.strided_blocks()
    if isinstance(blocks, SingleBlock):
        return 1, blocks.len, blocks.len
    if isinstance(blocks, UniformBlocks):
        return blocks.count, blocks.src_stride, blocks.block_len
    idx = blocks.block_start_index
    outer = [(n, s) for n, s in zip(idx.dims, idx.stride) if n != 1]  # candle keeps size-1 dims there
    return (*outer[0], blocks.block_len) if len(outer) == 1 else None


def tile_plan(dst_layout: Layout, src_layout: Layout):
    """NdIter's merged dims (in dst's memory order) and the src dim to tile against dst's innermost.

    Returns ``(it, p)``: ``p`` is the merged dim with src's smallest nonzero
    |stride| when that beats src's |stride| on dst's innermost dim, else None
    (the two agree, or src repeats along dst's innermost dim)."""
    it = NdIter(dst_layout, src_layout)
    sstr = it.strides[1]
    last = it.ndim - 1
    q_src = abs(sstr[last])
    cands = [k for k in range(last) if sstr[k] and abs(sstr[k]) < q_src]
    if not cands:
        return it, None
    best = min(cands, key=lambda k: abs(sstr[k]))
    if it.shape[best] < SHORT_P:
        # Tile against a longer dim that src also walks faster than dst's innermost (the
        # short one becomes an outer dim), as in cat's pieces of zeros(64,128,4).transpose(0,2).
        longer = [k for k in cands if it.shape[k] >= SHORT_P]
        if longer:
            best = min(longer, key=lambda k: abs(sstr[k]))
    return it, best



# Layouts are immutable and hashable: a loop that copies the same views again
# (a model's step) skips the planning, which costs more than a small copy.
cached_plan = caches.lru("copy.plans", "dst layout, src layout, same dtype", 1024)(plan_copy)


@caches.lru("copy.dense_in_order", "layout", 256)
def dense_in_order_of(layout: Layout) -> Layout:
    """A dense layout of ``layout``'s shape whose dims nest in ``layout``'s memory order."""
    perm = NdIter(layout).perm  # outermost first
    stride = [0] * layout.ndim
    acc = 1
    for d in reversed(perm):
        stride[d] = acc
        acc *= layout.shape[d]
    return Layout(layout.shape, stride, 0)
