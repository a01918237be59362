"""repr of tensors (literals, and PyTorch's own formatter as the oracle), print options, describe."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import strided as s
from strided import printing
from strided.printing import describe, format_values, get_printoptions, printoptions, set_printoptions

from strategies import view_chains


@pytest.fixture(autouse=True)
def restore_options():
    saved = get_printoptions()
    yield
    set_printoptions(**saved)


def f32(values):
    return s.from_numpy(np.asarray(values, dtype=np.float32))


# ---------------------------------------------------------------------------
# literals


def test_small_float_matrix():
    t = f32(np.arange(4).reshape(2, 2))
    assert repr(t) == "tensor([[0., 1.],\n        [2., 3.]], shape=(2, 2), dtype=f32)"


def test_non_contiguous_views_show_stride_and_offset():
    t = f32(np.arange(4).reshape(2, 2))
    assert repr(t.t()) == "tensor([[0., 2.],\n        [1., 3.]], shape=(2, 2), dtype=f32, stride=(1, 2), offset=0)"
    i = s.from_numpy(np.arange(6, dtype=np.int64).reshape(2, 3)).flip(1)
    assert repr(i) == "tensor([[2, 1, 0],\n        [5, 4, 3]], shape=(2, 3), dtype=i64, stride=(3, -1), offset=2)"
    b = f32([0, 1, 2])[None].broadcast_as((2, 3))
    assert repr(b) == "tensor([[0., 1., 2.],\n        [0., 1., 2.]], shape=(2, 3), dtype=f32, stride=(0, 1), offset=0)"
    # contiguous but not at the start of its buffer: the offset matters too
    assert repr(f32([1, 2, 3]).narrow(0, 1, 2)) == "tensor([2., 3.], shape=(2,), dtype=f32, stride=(1,), offset=1)"


def test_fixed_point_with_precision_4():
    assert repr(f32([0.5, 1.25, -3.0])) == "tensor([ 0.5000,  1.2500, -3.0000], shape=(3,), dtype=f32)"


@pytest.mark.parametrize(
    "values, text",
    [
        ([1e-5, 1.0], "tensor([1.0000e-05, 1.0000e+00], shape=(2,), dtype=f32)"),  # min < 1e-4
        ([1.5, 2000.0], "tensor([1.5000e+00, 2.0000e+03], shape=(2,), dtype=f32)"),  # max / min > 1000
        ([1e9, 1.0], "tensor([1.0000e+09, 1.0000e+00], shape=(2,), dtype=f32)"),  # integers, max > 1e8
        ([1.0, 1000.0], "tensor([   1., 1000.], shape=(2,), dtype=f32)"),  # ratio 1000 exactly: still fixed
    ],
)
def test_scientific_notation_is_chosen_from_the_values(values, text):
    assert repr(f32(values)) == text


def test_integers_bools_and_scalars_print_plainly():
    assert repr(s.from_numpy(np.array([True, False]))) == "tensor([ True, False], shape=(2,), dtype=bool)"
    assert repr(s.from_numpy(np.array([7, 300], dtype=np.uint32))) == "tensor([  7, 300], shape=(2,), dtype=u32)"
    assert repr(s.from_numpy(np.array(2.5))) == "tensor(2.5000, shape=(), dtype=f64)"
    assert repr(s.from_numpy(np.array(3, dtype=np.int64))) == "tensor(3, shape=(), dtype=i64)"


def test_three_dims_leave_a_blank_line_between_blocks():
    t = s.from_numpy(np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
    assert repr(t) == (
        "tensor([[[ 0,  1,  2],\n"
        "         [ 3,  4,  5]],\n"
        "\n"
        "        [[ 6,  7,  8],\n"
        "         [ 9, 10, 11]]], shape=(2, 2, 3), dtype=u8)"
    )


def test_empty_and_non_finite():
    assert repr(s.from_numpy(np.zeros((0, 3)))) == "tensor([], shape=(0, 3), dtype=f64)"
    t = s.from_numpy(np.array([np.nan, np.inf, 1.0], dtype=np.float16))
    assert repr(t) == "tensor([nan, inf, 1.], shape=(3,), dtype=f16)"
    t = f32([np.nan, 1.5, -np.inf])
    assert repr(t) == "tensor([   nan, 1.5000,   -inf], shape=(3,), dtype=f32)"


def test_half_types_print_their_values():
    t = s.from_numpy(np.array([1.5, 2.25, -0.1], dtype=ml_dtypes.bfloat16))
    # bf16 keeps 8 bits of mantissa: -0.1 is stored as -0.10009765625
    assert repr(t) == "tensor([ 1.5000,  2.2500, -0.1001], shape=(3,), dtype=bf16)"


def test_large_tensors_are_summarised():
    t = f32(np.arange(2000).reshape(40, 50))[1:]
    assert repr(t) == (
        "tensor([[  50.,   51.,   52.,  ...,   97.,   98.,   99.],\n"
        "        [ 100.,  101.,  102.,  ...,  147.,  148.,  149.],\n"
        "        [ 150.,  151.,  152.,  ...,  197.,  198.,  199.],\n"
        "        ...,\n"
        "        [1850., 1851., 1852.,  ..., 1897., 1898., 1899.],\n"
        "        [1900., 1901., 1902.,  ..., 1947., 1948., 1949.],\n"
        "        [1950., 1951., 1952.,  ..., 1997., 1998., 1999.]], shape=(39, 50),\n"
        "       dtype=f32, stride=(50, 1), offset=50)"
    )


def test_threshold_counts_elements():
    assert "..." not in repr(f32(np.arange(1000)))
    # the suffixes move to their own line when the first one would pass the 80 columns
    assert repr(f32(np.arange(1001))) == (
        "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.], shape=(1001,),\n"
        "       dtype=f32)"
    )


def test_long_rows_wrap_at_the_line_width():
    t = s.from_numpy(np.arange(30, dtype=np.int64) * 1000000)
    assert repr(t) == (
        "tensor([       0,  1000000,  2000000,  3000000,  4000000,  5000000,  6000000,\n"
        "         7000000,  8000000,  9000000, 10000000, 11000000, 12000000, 13000000,\n"
        "        14000000, 15000000, 16000000, 17000000, 18000000, 19000000, 20000000,\n"
        "        21000000, 22000000, 23000000, 24000000, 25000000, 26000000, 27000000,\n"
        "        28000000, 29000000], shape=(30,), dtype=i64)"
    )


def test_huge_broadcast_prints_without_materialising():
    t = f32([1.0, 2.0])[None].broadcast_as((10**9, 2))
    text = repr(t)
    assert text.startswith("tensor([[1., 2.],\n        [1., 2.],\n        [1., 2.],\n        ...,")
    assert text.endswith("shape=(1000000000, 2), dtype=f32, stride=(0, 1), offset=0)")


def test_autograd_state_is_shown():
    v = s.Var(f32([1.0, 2.0])) if hasattr(s, "Var") else None
    if v is None:
        pytest.skip("autograd not available")
    assert repr(v).endswith("dtype=f32, var=True)")


# ---------------------------------------------------------------------------
# print options


def test_defaults():
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def test_precision_and_sci_mode():
    t = s.from_numpy(np.array([0.123456, 2.5]))
    set_printoptions(precision=2)
    assert repr(t) == "tensor([0.12, 2.50], shape=(2,), dtype=f64)"
    set_printoptions(sci_mode=True)
    assert repr(t) == "tensor([1.23e-01, 2.50e+00], shape=(2,), dtype=f64)"
    set_printoptions(precision=3)  # leaves sci_mode alone
    assert get_printoptions()["sci_mode"] is True
    set_printoptions(sci_mode=None)
    assert repr(f32([1e-5, 1.0])) == "tensor([1.000e-05, 1.000e+00], shape=(2,), dtype=f32)"
    set_printoptions(sci_mode=False)
    assert repr(f32([1e-5, 1.0])) == "tensor([0.000, 1.000], shape=(2,), dtype=f32)"


def test_threshold_edgeitems_linewidth():
    set_printoptions(threshold=5, edgeitems=1)
    assert repr(s.from_numpy(np.arange(12.0).reshape(3, 4))) == (
        "tensor([[ 0.,  ...,  3.],\n        ...,\n        [ 8.,  ..., 11.]], shape=(3, 4), dtype=f64)"
    )
    set_printoptions(threshold=1000, edgeitems=3, linewidth=30)
    assert repr(s.from_numpy(np.arange(12.0))) == (
        "tensor([ 0.,  1.,  2.,  3.,\n"
        "         4.,  5.,  6.,  7.,\n"
        "         8.,  9., 10., 11.],\n"
        "       shape=(12,), dtype=f64)"
    )


def test_printoptions_context_restores():
    with printoptions(precision=1, sci_mode=False):
        assert repr(f32([0.25])) == "tensor([0.2], shape=(1,), dtype=f32)"
    assert get_printoptions()["precision"] == 4
    assert get_printoptions()["sci_mode"] is None


@pytest.mark.parametrize(
    "kwargs",
    [{"precision": -1}, {"precision": 1.5}, {"threshold": -3}, {"edgeitems": "3"}, {"linewidth": 0},
     {"sci_mode": "yes"}, {"precision": True}],
)
def test_bad_options_are_refused_and_change_nothing(kwargs):
    before = get_printoptions()
    with pytest.raises(s.StridedError, match="set_printoptions"):
        set_printoptions(**{"linewidth": 50, **kwargs})  # the valid option is not applied either
    assert get_printoptions() == before


# ---------------------------------------------------------------------------
# PyTorch's formatter as the oracle for the value part


@pytest.fixture(scope="module")
def torch_str():
    torch = pytest.importorskip("torch")
    fn = getattr(getattr(torch, "_tensor_str", None), "_tensor_str", None)
    if fn is None:
        pytest.skip("torch._tensor_str._tensor_str is gone")
    return torch, fn


DTYPES = ["f32", "f64", "i64", "bool", "f16", "bf16", "u8"]


@given(
    chain=view_chains(max_ops=4, max_rank=4),
    dtype=st.sampled_from(DTYPES),
    scale=st.sampled_from([1e-6, 1e-3, 0.1, 1.0, 1e3, 1e9]),
    integral=st.booleans(),
    opts=st.sampled_from([{}, {"precision": 2}, {"threshold": 10, "edgeitems": 2}, {"linewidth": 40},
                          {"sci_mode": False}, {"sci_mode": True, "precision": 2}]),
)
def test_values_match_pytorch(torch_str, chain, dtype, scale, integral, opts):
    torch, tensor_str = torch_str
    _, lay, view, base = chain
    rng = np.random.default_rng(int(base.size))
    raw = rng.standard_normal(base.size) * scale
    if integral:
        raw = np.round(raw)
    npd = s.dtype.as_dtype(dtype).np
    if dtype == "bool":
        data = raw > 0
    elif dtype in ("u8",):
        data = np.abs(raw).astype(np.int64) % 256
    else:
        data = raw
    with np.errstate(over="ignore"):  # 1e9 overflows f16 to inf: printed as inf by both
        data = data.astype(npd)
    t = s.as_strided(s.from_numpy(data), lay.shape, lay.stride, lay.offset)
    dense = np.array(t.numpy(), copy=True, order="C")  # (ascontiguousarray would make rank 0 rank 1)
    ref = torch.from_numpy(dense.astype(np.float32)).to(torch.bfloat16) if dtype == "bf16" else torch.from_numpy(dense)
    try:
        torch.set_printoptions(**{"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, **opts})
        with printoptions(**opts):
            assert format_values(t, 7) == tensor_str(ref, 7)
    finally:
        torch.set_printoptions(profile="default")


# ---------------------------------------------------------------------------
# layouts


def test_layout_repr_and_str():
    lay = s.Layout((2, 3, 4))
    assert repr(lay) == "Layout(shape=(2, 3, 4), stride=(12, 4, 1), offset=0)"
    assert str(lay) == "(2,3,4):(12,4,1)+0"
    assert str(lay.flip(0).narrow(2, 1, 2)) == "(2,3,2):(-12,4,1)+13"
    assert str(s.Layout(())) == "():()+0"


def test_describe_a_contiguous_layout():
    assert describe(s.Layout((2, 3, 4)), dtype=s.f32, buffer_len=24) == "\n".join([
        "layout      (2,3,4):(12,4,1)+0",
        "dims        (2, 3, 4)  rank 3, 24 elements",
        "stride      (12, 4, 1)",
        "offset      0",
        "contiguous  row-major yes, column-major no",
        "span        [0, 24)  cosize 24",
        "dtype       f32, 4 bytes per element, span 96 bytes",
        "buffer      24 elements, the layout fits",
        "kinds       contiguous",
        "overlap     none",
        "blocks      SingleBlock { start_offset: 0, len: 24 }",
        "decompose   dense (24,) -> Reshape(shape=(2, 3, 4))",
    ])


def test_describe_a_view_that_overruns_its_buffer():
    text = describe(s.Layout((2, 3, 4)).transpose(1, 2).narrow(2, 1, 2), buffer_len=10)
    lines = dict(line.split(None, 1) for line in text.splitlines())
    assert lines["layout"] == "(2,4,2):(12,1,4)+4"
    assert lines["contiguous"] == "row-major no, column-major no"
    assert lines["span"] == "[4, 24)  cosize 20"
    assert lines["buffer"] == "10 elements, OUT OF BOUNDS: the layout reaches [4, 24)"
    assert lines["kinds"] == "offset, slice, transpose"
    assert lines["blocks"] == "MultipleBlocks { block_len: 1, first starts: [4, 8, 5, 9, 6, 10] }"


def test_describe_overlapping_layouts():
    lines = dict(line.split(None, 1) for line in describe(s.Layout((2, 2), (1, 1))).splitlines())
    assert lines["overlap"] == "some elements share an offset"
    assert lines["decompose"] == "none (no dense base buffer replays it)"
    assert "dtype" not in lines and "buffer" not in lines


def test_tensor_describe_uses_its_buffer():
    t = f32(np.arange(12)).reshape(3, 4).t()
    lines = dict(line.split(None, 1) for line in t.describe().splitlines())
    assert lines["buffer"] == "12 elements, the layout fits"
    assert lines["dtype"].startswith("f32, 4 bytes")
    assert lines["kinds"] == "transpose"


def test_describe_prints_blocks_as_the_seed_does():
    from layout.test_layout_seed import SEED_000
    from strided.cli.tour import seed_layouts

    for name, lay in seed_layouts():
        lines = dict(line.split(None, 1) for line in printing.describe(lay).splitlines())
        assert lines["blocks"] == SEED_000[name][-1]
