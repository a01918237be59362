"""Every error path of the flat layout: exception type, and a message naming the op and the values."""

import pytest

from strided import Layout, NdIter, ShapeError, StridedError, StridedIndexError


L = Layout.contiguous((2, 3, 4))


@pytest.mark.parametrize(
    "call,exc,words",
    [
        (lambda: Layout((2, -1), (1, 1)), ShapeError, ["Layout", "(2, -1)"]),
        (lambda: Layout((2, 3), (1,)), ShapeError, ["Layout", "(2, 3)", "(1,)"]),
        (lambda: Layout((2.5,), (1,)), ShapeError, ["Layout", "2.5"]),
        (lambda: L.offset_of((1, 3, 0)), StridedIndexError, ["offset_of", "index 3", "dim 1", "size 3"]),
        (lambda: L.offset_of((1, 2)), StridedIndexError, ["offset_of", "length 3"]),
        (lambda: L.unravel(24), StridedIndexError, ["unravel", "24", "(2, 3, 4)"]),
        (lambda: L.narrow(3, 0, 1), StridedIndexError, ["narrow", "dim 3", "rank 3"]),
        (lambda: L.narrow(2, 3, 2), StridedIndexError, ["narrow", "start 3", "length 2", "size 4"]),
        (lambda: L.transpose(0, -4), StridedIndexError, ["transpose", "dim -4"]),
        (lambda: L.permute((0, 0, 1)), ShapeError, ["permute", "(0, 0, 1)", "(2, 3, 4)"]),
        (lambda: L.permute((0, 1)), ShapeError, ["permute", "(0, 1)", "(2, 3, 4)"]),
        (lambda: L.broadcast_as((2, 5, 4)), ShapeError, ["broadcast_as", "cannot broadcast", "(2, 3, 4)", "(2, 5, 4)"]),
        (lambda: L.broadcast_as((3, 4)), ShapeError, ["broadcast_as", "cannot broadcast", "(3, 4)"]),
        (lambda: L.unsqueeze(5), StridedIndexError, ["unsqueeze", "dim 5"]),
        (lambda: L.squeeze(7), StridedIndexError, ["squeeze", "dim 7"]),
        (lambda: L.flip((0, -3)), ShapeError, ["flip", "repeat"]),
        (lambda: L.slice(1, 0, 3, 0), ShapeError, ["slice", "step", "0"]),
        (lambda: L.select(1, 3), StridedIndexError, ["select", "index 3", "dim 1", "size 3"]),
        (lambda: L.select(1, -4), StridedIndexError, ["select", "index -4"]),
        (lambda: L.reshape_view((5, 5)), ShapeError, ["reshape", "(5, 5)", "24"]),
        (lambda: L.reshape_view((-1, -1)), ShapeError, ["reshape", "-1"]),
        (lambda: L.reshape_view((-1, 5)), ShapeError, ["reshape", "(-1, 5)", "24"]),
        (lambda: Layout((), ()).narrow(0, 0, 1), StridedIndexError, ["narrow", "rank 0"]),
        (lambda: NdIter(Layout.contiguous((2, 3)), Layout.contiguous((3, 2))), ShapeError,
         ["NdIter", "(2, 3)", "(3, 2)"]),
        (lambda: NdIter(), ShapeError, ["NdIter"]),
        (lambda: Layout.contiguous((4,)).validate(3), StridedError, ["shape (4,)", "buffer holds 3"]),
    ],
)
def test_errors_name_the_op_and_values(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert isinstance(info.value, StridedError)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_index_errors_are_index_errors():
    with pytest.raises(IndexError):
        L.select(0, 2)
    with pytest.raises(ValueError):
        L.permute((1, 1, 1))


def test_layout_is_immutable_and_hashable():
    with pytest.raises(AttributeError):
        L.offset = 3
    assert {L, Layout((2, 3, 4), (12, 4, 1), 0)} == {L}
    assert L != Layout((2, 3, 4), (12, 4, 1), 1)
    assert repr(L) == "Layout(shape=(2, 3, 4), stride=(12, 4, 1), offset=0)"
    assert str(L) == "(2,3,4):(12,4,1)+0"


def test_signed_strides_and_flip_offset():
    f = Layout.contiguous((3, 4)).flip(1)
    assert (f.stride, f.offset) == ((4, -1), 3)
    assert f.offset_of((2, 0)) == 11 and f.span() == (0, 12)
    assert Layout.contiguous((0, 4)).flip(0).offset == 0  # no element to move to
    assert Layout.column_major((2, 3)).stride == (1, 2)
    assert Layout.column_major((2, 3)).is_fortran_contiguous() and not Layout.column_major((2, 3)).is_contiguous()


def test_slice_follows_python_semantics():
    lay = Layout.contiguous((10,))
    for sl in [slice(None, None, -1), slice(8, 2, -3), slice(-3, None), slice(20, 30), slice(None, None, 4)]:
        got = lay.slice(0, sl.start, sl.stop, sl.step)
        assert list(got.strided_index()) == list(range(10))[sl]


def test_a_step_past_the_end_keeps_strides_in_int64():
    """t[::2**70] selects one element; its stride must still fit the int64 kernels index with."""
    lay = Layout((5, 3), (3, 1), 0)
    for step in (2**70, -(2**70), 5, 6):
        got = lay.slice(0, None, None, step)
        assert got.shape == (1, 3) and abs(got.stride[0]) < 2**63
        want_start = 0 if step > 0 else 4
        assert list(got.strided_index()) == [want_start * 3 + j for j in range(3)]


@pytest.mark.parametrize("lay,what", [
    (Layout((1, 2), (2**70, 1)), "stride"),
    (Layout((2, 0), (1, 1), -(2**63) - 1), "offset"),
    (Layout((2**63, 0), (0, 1)), "shape"),
    (Layout((2**32, 2**32), (0, 0)), "numel"),
])
def test_validate_refuses_what_int64_cannot_index(lay, what):
    with pytest.raises(StridedError, match=r"validate: .*does not fit in int64"):
        lay.validate(1 << 20)


def test_broadcast_beyond_int64_elements_is_refused_like_numpy():
    with pytest.raises(ShapeError, match=r"broadcast_as: .*more than int64"):
        Layout((1,), (1,)).broadcast_as((2**40, 2**40))
    assert Layout((1,), (1,)).broadcast_as((2**31, 2**31)).numel == 2**62  # below the line: allowed
