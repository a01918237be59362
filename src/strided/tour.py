"""``python -m strided tour``: the seed experiments, reproduced live from the library.

Each section prints what the library computes now, never stored text, with a
one-line note on what to look at.
"""

from __future__ import annotations

from .layout import Layout, MultipleBlocks, SingleBlock, UniformBlocks


def _list(t) -> str:
    return "[" + ", ".join(map(str, t)) + "]"


def format_blocks(blocks) -> str:
    """StridedBlocks the way the seed prints them (the first six block starts)."""
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
    return f"MultipleBlocks {{ block_len: {blocks.block_len}, first starts: {_list(starts)} }}"


def format_layout_row(name: str, lay: Layout) -> str:
    return (
        f"{name:>30}: dims={_list(lay.shape)} stride={_list(lay.stride)} off={lay.offset} "
        f"contiguous={str(lay.is_contiguous()).lower()} -> {format_blocks(lay.strided_blocks())}"
    )


def seed_layouts() -> list[tuple[str, Layout]]:
    """The views of seed 000's layout experiment on a (2, 3, 4) tensor."""
    x = Layout.contiguous((2, 3, 4))
    return [
        ("x (2,3,4)", x),
        ("x.narrow(2,1,2)", x.narrow(2, 1, 2)),
        ("x.narrow(1,1,2)", x.narrow(1, 1, 2)),
        ("x.transpose(1,2)", x.transpose(1, 2)),
        ("x.i(0).t()", x.select(0, 0).transpose(0, 1)),
        ("x.narrow(0,1,1).narrow(1,1,1)", x.narrow(0, 1, 1).narrow(1, 1, 1)),
        ("bcast (1,4)->(3,4)", Layout.contiguous((1, 4)).broadcast_as((3, 4))),
    ]


def section(title: str, note: str) -> None:
    print()
    print(f"== {title}")
    print(f"   {note}")


def tour_layouts() -> None:
    section(
        "seed 000: layouts of views of a (2,3,4) tensor, and their StridedBlocks",
        "views only change (shape, stride, offset); kernels walk the blocks on the right.",
    )
    for name, lay in seed_layouts():
        print(format_layout_row(name, lay))

    section("seed 000: the strided_index odometer", "row-major logical order, positions kept incrementally.")
    x = Layout.contiguous((2, 3, 4))
    print(f"strided_index of x.transpose(1,2): {_list(x.transpose(1, 2).strided_index())}")

    section("seed 000: the (4,1).t() puzzle", "size-1 dims never affect addressing, so contiguity ignores them.")
    odd = Layout.contiguous((4, 1)).transpose(0, 1)
    print(f"(4,1).t(): dims={_list(odd.shape)} stride={_list(odd.stride)} contiguous={str(odd.is_contiguous()).lower()}")


SECTIONS = [tour_layouts]


def main() -> int:
    print("strided tour: the seed experiments, computed live")
    for run in SECTIONS:
        run()
    return 0
