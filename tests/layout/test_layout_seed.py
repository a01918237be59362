"""Seed 000 and seed 004 tables at the layout level, as literal values from the seeds."""

import pytest

from strided import Layout, MultipleBlocks, SingleBlock, StridedIndex, UniformBlocks
from strided.printing import format_blocks
from strided.cli.tour import format_layout_row, seed_layouts

# Seed 000, "layout experiment": name -> (dims, stride, off, contiguous, blocks as printed)
SEED_000 = {
    "x (2,3,4)": ((2, 3, 4), (12, 4, 1), 0, True, "SingleBlock { start_offset: 0, len: 24 }"),
    "x.narrow(2,1,2)": ((2, 3, 2), (12, 4, 1), 1, False, "MultipleBlocks { block_len: 2, first starts: [1, 5, 9, 13, 17, 21] }"),
    "x.narrow(1,1,2)": ((2, 2, 4), (12, 4, 1), 4, False, "UniformBlocks { start_offset: 4, block_len: 8, count: 2, src_stride: 12 }"),
    "x.transpose(1,2)": ((2, 4, 3), (12, 1, 4), 0, False, "MultipleBlocks { block_len: 1, first starts: [0, 4, 8, 1, 5, 9] }"),
    "x.i(0).t()": ((4, 3), (1, 4), 0, False, "MultipleBlocks { block_len: 1, first starts: [0, 4, 8, 1, 5, 9] }"),
    "x.narrow(0,1,1).narrow(1,1,1)": ((1, 1, 4), (12, 4, 1), 16, True, "SingleBlock { start_offset: 16, len: 4 }"),
    "bcast (1,4)->(3,4)": ((3, 4), (0, 1), 0, False, "UniformBlocks { start_offset: 0, block_len: 4, count: 3, src_stride: 0 }"),
}

SEED_000_LINES = """\
                     x (2,3,4): dims=[2, 3, 4] stride=[12, 4, 1] off=0 contiguous=true -> SingleBlock { start_offset: 0, len: 24 }
               x.narrow(2,1,2): dims=[2, 3, 2] stride=[12, 4, 1] off=1 contiguous=false -> MultipleBlocks { block_len: 2, first starts: [1, 5, 9, 13, 17, 21] }
               x.narrow(1,1,2): dims=[2, 2, 4] stride=[12, 4, 1] off=4 contiguous=false -> UniformBlocks { start_offset: 4, block_len: 8, count: 2, src_stride: 12 }
              x.transpose(1,2): dims=[2, 4, 3] stride=[12, 1, 4] off=0 contiguous=false -> MultipleBlocks { block_len: 1, first starts: [0, 4, 8, 1, 5, 9] }
                    x.i(0).t(): dims=[4, 3] stride=[1, 4] off=0 contiguous=false -> MultipleBlocks { block_len: 1, first starts: [0, 4, 8, 1, 5, 9] }
 x.narrow(0,1,1).narrow(1,1,1): dims=[1, 1, 4] stride=[12, 4, 1] off=16 contiguous=true -> SingleBlock { start_offset: 16, len: 4 }
            bcast (1,4)->(3,4): dims=[3, 4] stride=[0, 1] off=0 contiguous=false -> UniformBlocks { start_offset: 0, block_len: 4, count: 3, src_stride: 0 }"""


@pytest.mark.parametrize("name,lay", seed_layouts())
def test_seed_000_layout_table(name, lay):
    dims, stride, off, contiguous, blocks = SEED_000[name]
    assert lay.shape == dims
    assert lay.stride == stride
    assert lay.offset == off
    assert lay.is_contiguous() is contiguous
    assert format_blocks(lay.strided_blocks()) == blocks


def test_seed_000_table_prints_identically():
    assert "\n".join(format_layout_row(n, l) for n, l in seed_layouts()) == SEED_000_LINES


def test_seed_000_block_objects():
    x = Layout.contiguous((2, 3, 4))
    assert x.strided_blocks() == SingleBlock(start_offset=0, len=24)
    assert x.narrow(1, 1, 2).strided_blocks() == UniformBlocks(start_offset=4, block_len=8, count=2, src_stride=12)
    assert x.narrow(2, 1, 2).strided_blocks() == MultipleBlocks(StridedIndex((2, 3), (12, 4), 1), block_len=2)
    assert list(x.narrow(2, 1, 2).strided_blocks().block_start_index) == [1, 5, 9, 13, 17, 21]


def test_seed_000_strided_index_sequence():
    x = Layout.contiguous((2, 3, 4))
    assert list(x.transpose(1, 2).strided_index()) == [
        0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23,
    ]


def test_seed_000_puzzle_transpose_of_4_by_1():
    odd = Layout.contiguous((4, 1)).transpose(0, 1)
    assert (odd.shape, odd.stride, odd.is_contiguous()) == ((1, 4), (1, 1), True)


def test_contiguous_offsets_ignore_offset_like_candle():
    lay = Layout.contiguous((2, 3, 4)).narrow(0, 1, 1).narrow(1, 1, 1)
    assert lay.contiguous_offsets() == (16, 20)
    assert Layout.contiguous((2, 3)).transpose(0, 1).contiguous_offsets() is None


# Seed 004, the fifteen operations on a (3, 4) tensor, at the layout level (dims, stride, offset, contiguous).
def _seed_004():
    a = Layout.contiguous((3, 4))
    return {
        "a": a,
        "a.reshape((2, 6))": a.reshape_view((2, 6)),
        "a.unsqueeze(0)": a.unsqueeze(0),
        "a.t()": a.transpose(0, 1),
        "a.i((1.., 1..3))": a.slice(0, 1, None).slice(1, 1, 3),
        "a.i(2)": a.select(0, 2),
        "a.i((.., 2))": a.select(1, 2),
        "a.broadcast_as((2, 3, 4))": a.broadcast_as((2, 3, 4)),
    }


SEED_004 = {
    "a": ((3, 4), (4, 1), 0, True),
    "a.reshape((2, 6))": ((2, 6), (6, 1), 0, True),
    "a.unsqueeze(0)": ((1, 3, 4), (4, 4, 1), 0, True),
    "a.t()": ((4, 3), (1, 4), 0, False),
    "a.i((1.., 1..3))": ((2, 2), (4, 1), 5, False),
    "a.i(2)": ((4,), (1,), 8, True),
    "a.i((.., 2))": ((3,), (4,), 2, False),
    "a.broadcast_as((2, 3, 4))": ((2, 3, 4), (0, 4, 1), 0, False),
}


@pytest.mark.parametrize("name", list(SEED_004))
def test_seed_004_view_table(name):
    lay = _seed_004()[name]
    assert (lay.shape, lay.stride, lay.offset, lay.is_contiguous()) == SEED_004[name]


def test_seed_004_transposed_reshape_is_not_a_view():
    # a.t().reshape(12) must copy: the buffer does not hold 0, 4, 8, 1, ... in order.
    assert Layout.contiguous((3, 4)).transpose(0, 1).reshape_view((12,)) is None


def test_seed_004_exercise_1_at_layout_level():
    a = Layout.contiguous((2, 3, 4))
    assert a.permute((2, 0, 1)).is_contiguous() is False
    assert a.permute((2, 0, 1)).reshape_view((24,)) is None  # flatten_all must copy
    assert a.reshape_view((24,)).is_contiguous()
    assert a.slice(1, 1, 2).squeeze(1).is_contiguous() is False  # a.i((.., 1, ..))
    assert a.select(0, 1).is_contiguous() and a.select(0, 1).offset == 12
    assert a.squeeze(0) == a  # dim 0 has size 2: nothing to remove (PyTorch and candle)
    assert a.transpose(1, 1) == a
