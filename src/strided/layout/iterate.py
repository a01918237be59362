"""Walking a layout: the element odometer, contiguous blocks, and the N-operand iterator.

These are the reference (pure Python) walks.  Kernels receive the same integers
(the blocks, or NdIter's merged shape and strides) and walk them in numba.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Iterator

from ..core.errors import ShapeError
from .layout import Layout


@dataclass(frozen=True)
class StridedIndex:
    """Buffer offsets of a layout in row-major logical order.

    The position is kept incrementally, like an odometer: a carry adds one
    stride and a wrap subtracts what the wrapped dim had added, so no step
    multiplies.  Iterable any number of times; equal by value.
    """

    dims: tuple[int, ...]
    stride: tuple[int, ...]
    start_offset: int

    def __iter__(self) -> Iterator[int]:
        dims, stride = self.dims, self.stride
        if 0 in dims:
            return
        n = len(dims)
        index = [0] * n
        pos = self.start_offset
        remaining = prod(dims)
        while True:
            yield pos
            remaining -= 1
            if not remaining:
                return
            d = n - 1
            while True:
                i = index[d] + 1
                if i < dims[d]:
                    index[d] = i
                    pos += stride[d]
                    break
                pos -= index[d] * stride[d]
                index[d] = 0
                d -= 1

    def __len__(self) -> int:
        return prod(self.dims)


@dataclass(frozen=True)
class SingleBlock:
    """The whole layout is one dense ascending run."""

    start_offset: int
    len: int

    def offsets(self) -> Iterator[int]:
        return iter(range(self.start_offset, self.start_offset + self.len))


@dataclass(frozen=True)
class UniformBlocks:
    """``count`` dense runs of ``block_len`` starting every ``src_stride`` elements."""

    start_offset: int
    block_len: int
    count: int
    src_stride: int

    def offsets(self) -> Iterator[int]:
        for i in range(self.count):
            start = self.start_offset + i * self.src_stride
            yield from range(start, start + self.block_len)


@dataclass(frozen=True)
class MultipleBlocks:
    """Dense runs of ``block_len`` whose starts come from an odometer over the outer dims."""

    block_start_index: StridedIndex
    block_len: int

    def offsets(self) -> Iterator[int]:
        for start in self.block_start_index:
            yield from range(start, start + self.block_len)


def strided_blocks(layout: Layout) -> SingleBlock | UniformBlocks | MultipleBlocks:
    """Split a layout into its dense innermost run and the dims left to index.

    Scan from the last dim while each stride equals the block length so far; a
    size-1 dim never breaks the run whatever its stride.
    """
    shape, stride = layout.shape, layout.stride
    if layout.numel == 0:
        return SingleBlock(layout.offset, 0)
    block_len = 1
    contiguous_dims = 0
    for n, s in zip(reversed(shape), reversed(stride)):
        if n == 1:
            contiguous_dims += 1
            continue
        if s != block_len:
            break
        block_len *= n
        contiguous_dims += 1
    index_dims = len(shape) - contiguous_dims
    if index_dims == 0:
        return SingleBlock(layout.offset, block_len)
    if index_dims == 1:
        return UniformBlocks(layout.offset, block_len, shape[0], stride[0])
    return MultipleBlocks(
        StridedIndex(shape[:index_dims], stride[:index_dims], layout.offset), block_len
    )


class NdIter:
    """Walk several same-shaped layouts together, in memory order, with merged dims.

    Size-1 dims are dropped; the rest are ordered outermost to innermost by
    stride magnitude (a stable insertion sort: the first operand with nonzero
    strides on both dims decides, zero strides never decide, row-major order
    wins ties), the way NumPy's order='K' and PyTorch's TensorIterator do, so
    that ``a.t() + b.t()`` reads memory forwards.  Then adjacent dims that
    every operand can merge (outer stride = inner stride * inner size) become
    one.  The innermost merged dim is walked by the caller (``inner_size``,
    ``inner_strides``); iterating yields one tuple of base offsets per outer
    step.  There is no rank limit.

    ``perm`` is the order chosen, as original dims from outermost to innermost
    (size-1 dims first): transposing every operand by it and walking it in
    row-major order visits the elements in this iterator's order.
    """

    def __init__(self, *layouts: Layout, reorder: bool = True):
        if not layouts:
            raise ShapeError("NdIter: expected at least one layout")
        for lay in layouts:
            if not isinstance(lay, Layout):
                raise ShapeError(f"NdIter: expected Layouts, got {type(lay).__name__}")
        shape = layouts[0].shape
        for lay in layouts[1:]:
            if lay.shape != shape:
                raise ShapeError(
                    f"NdIter: every operand must have the same shape, got "
                    f"{' and '.join(str(l.shape) for l in layouts)}"
                )
        self.layouts = layouts
        ndim = len(shape)
        dims = [d for d in range(ndim) if shape[d] != 1]
        if reorder:
            dims = _sort_by_stride(dims, [l.stride for l in layouts])
        self.perm = tuple(d for d in range(ndim) if shape[d] == 1) + tuple(dims)

        # Merge from the innermost dim outwards.
        merged_shape: list[int] = []
        merged_strides: list[list[int]] = [[] for _ in layouts]
        for d in reversed(dims):
            n = shape[d]
            if merged_shape and all(
                l.stride[d] == ms[-1] * merged_shape[-1] for l, ms in zip(layouts, merged_strides)
            ):
                merged_shape[-1] *= n  # the merged dim keeps its inner stride
                continue
            merged_shape.append(n)
            for l, ms in zip(layouts, merged_strides):
                ms.append(l.stride[d])
        merged_shape.reverse()
        for ms in merged_strides:
            ms.reverse()
        if not merged_shape:  # rank 0 or all dims of size 1: one element
            merged_shape = [1]
            merged_strides = [[1] for _ in layouts]
        self.shape: tuple[int, ...] = tuple(merged_shape)
        self.strides: tuple[tuple[int, ...], ...] = tuple(tuple(ms) for ms in merged_strides)
        self.offsets: tuple[int, ...] = tuple(l.offset for l in layouts)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def inner_size(self) -> int:
        return self.shape[-1]

    @property
    def inner_strides(self) -> tuple[int, ...]:
        return tuple(s[-1] for s in self.strides)

    @property
    def steps(self) -> int:
        """Outer steps (``len()``, but also past sys.maxsize, where len() cannot answer)."""
        return prod(self.shape[:-1]) if self.shape[-1] else 0

    def __len__(self) -> int:
        return self.steps

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        if not self.steps:
            return
        outer = self.shape[:-1]
        per_dim = [tuple(s[d] for s in self.strides) for d in range(len(outer))]
        for starts in _odometer(outer, per_dim, self.offsets):
            yield starts

    def offsets_of(self, operand: int = 0) -> Iterator[int]:
        """Every element offset of one operand, in iteration order."""
        n, s = self.inner_size, self.inner_strides[operand]
        for base in self:
            b = base[operand]
            yield from range(b, b + n * s, s) if s else (b for _ in range(n))


def _odometer(dims, per_dim_strides, starts) -> Iterator[tuple[int, ...]]:
    """The odometer of StridedIndex carrying one position per operand."""
    pos = list(starts)
    k = len(pos)
    n = len(dims)
    index = [0] * n
    remaining = prod(dims)
    while True:
        yield tuple(pos)
        remaining -= 1
        if remaining <= 0:
            return
        d = n - 1
        while True:
            i = index[d] + 1
            st = per_dim_strides[d]
            if i < dims[d]:
                index[d] = i
                for j in range(k):
                    pos[j] += st[j]
                break
            for j in range(k):
                pos[j] -= index[d] * st[j]
            index[d] = 0
            d -= 1


def _sort_by_stride(dims: list[int], strides: list[tuple[int, ...]]) -> list[int]:
    """Order dims outermost-first by |stride|; a stable insertion sort as NumPy's order='K'."""

    def inner_first(a: int, b: int) -> bool:
        # True when dim a (currently outside b) should move inside b.
        for st in strides:
            sa, sb = abs(st[a]), abs(st[b])
            if sa == 0 or sb == 0 or sa == sb:
                continue
            return sa < sb
        return False

    out: list[int] = []
    for d in dims:
        out.append(d)
        i = len(out) - 1
        while i > 0 and inner_first(out[i - 1], out[i]):
            out[i - 1], out[i] = out[i], out[i - 1]
            i -= 1
    return out
