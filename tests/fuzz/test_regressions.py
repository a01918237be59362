"""Every failure the differential fuzzer (``tests/fuzz/fuzzer.py``) has found, as a literal program.

Each PROGRAM is what the fuzzer printed (minimised), and ``fuzz.assert_ok`` runs it on strided
and on NumPy, comparing after every step.  Bugs still open in the library are marked
``xfail(strict=True)`` with the place to fix: when a fix lands the test passes, strict xfail
turns that into a failure, and the marker (and the matching entry of ``OPEN``) must go.

``OPEN`` also tells the random fuzz tests (test_fuzz.py) which failures are already known, so
that they keep looking for new ones instead of stopping at the same open bug.
"""

from math import inf, nan  # noqa: F401  (the programs are literals the fuzzer printed)

import pytest

import fuzzer as fuzz

WRITES = ("copy_", "fill_", "setitem", "iop.add", "iop.sub", "iop.mul")

# Open bugs: a predicate on (Failure, program) per bug.
OPEN: dict = {}  # none open now; add an entry with its xfail test when a new bug is found


def known_open(f, program) -> str | None:
    for name, pred in OPEN.items():
        if pred(f, program):
            return name
    return None


def _open(name):
    return pytest.mark.xfail(strict=True, reason=f"open bug {name}: see OPEN in this file")


# ---------------------------------------------------------------------------
# bugs found in the library (fixed; each failed before its fix)


def test_write_into_empty_view_checks_source_shape():
    # t1[-3:-3] is empty (shape (0, 1, 1, 1)); the source t2 has shape (2, 1, 1, 1): NumPy raises.
    fuzz.assert_ok([
        ('leaf', 'f16', (2, 1, 1, 1), [0.0, 0.0]),
        ('to_dtype', 0, 'f16'),
        ('view', 1, 'flip', ((0,),)),
        ('setitem', 1, (('slice', -3, -3, None),), 2),
    ])


def test_write_into_empty_view_checks_source_rank():
    fuzz.assert_ok([
        ('leaf', 'f16', (1, 0, 1, 1, 1), []),
        ('view', 0, 'flip', ((0,),)),
        ('setitem', 0, (-1, ('slice', -1, -1, None), ('slice', -2, -2, None), -1), 1),
    ])


def test_write_into_empty_view_checks_scalar_range():
    fuzz.assert_ok([
        ('leaf', 'u8', (1,), [0]),
        ('view', 0, 'expand', ((0, 1),)),
        ('setitem', 1, (('slice', -1, -1, None),), ('scalar', -1)),
    ])


def test_binary_with_out_of_range_int_scalar_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (), [0]),
        ('copy', 'contiguous', 0),
        ('binary', 'sub', 1, ('scalar', -1)),
    ])


def test_comparison_with_out_of_range_int_scalar_is_exact():
    fuzz.assert_ok([
        ('leaf', 'u8', (), [0]),
        ('view', 0, 'unsqueeze', (-1,)),
        ('view', 1, 'unsqueeze', (-2,)),
        ('view', 2, 'slice', (-2, -3, -3, None)),
        ('binary', 'gt', 3, ('scalar', -1)),
    ])


def test_pow_with_out_of_range_int_scalar_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (2,), [0, 1]),
        ('binary', 'pow', 0, ('scalar', 256)),
    ])


def test_comparison_of_i64_with_int_beyond_int64_is_exact():
    fuzz.assert_ok([
        ('leaf', 'i64', (2, 1), [3, -4]),
        ('binary', 'le', 0, ('scalar', 1180591620717411303424)),
    ])


def test_maximum_with_out_of_range_int_scalar_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (3,), [0, 7, 255]),
        ('binary', 'maximum', 0, ('scalar', -1)),
    ])


def test_setitem_with_out_of_range_int_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (2, 2), [0, 1, 2, 3]),
        ('setitem', 0, (1,), ('scalar', -1)),
    ])


def test_where_with_out_of_range_int_scalar_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (2,), [0, 1]),
        ('binary', 'gt', 0, ('scalar', 0)),
        ('where', 1, 0, ('scalar', -1)),
    ])


def test_fill_with_out_of_range_int_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (2,), [0, 1]),
        ('fill_', 0, -1),
    ])


def test_copy_with_out_of_range_int_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (2,), [0, 1]),
        ('copy_', 0, ('scalar', 256)),
    ])


def test_in_place_op_with_out_of_range_int_raises_strided_error():
    fuzz.assert_ok([
        ('leaf', 'u8', (2,), [0, 1]),
        ('iop', 'add', 0, ('scalar', -1)),
    ])


def test_scalar_and_tensor():
    fuzz.assert_ok([
        ('leaf', 'f16', (2,), [0.0, 1.0]),
        ('binary', 'logical_and', ('scalar', 0.5), 0),
    ])


def test_scalar_or_tensor():
    fuzz.assert_ok([
        ('leaf', 'bool', (3,), [False, True, False]),
        ('binary', 'logical_or', ('scalar', False), 0),
    ])


def test_setitem_drops_leading_size_one_dims_of_the_value():
    fuzz.assert_ok([
        ('leaf', 'f16', (), [0.0]),
        ('view', 0, 'unsqueeze', (-1,)),
        ('view', 1, 'unsqueeze', (-2,)),
        ('view', 2, 'flip', ((0,),)),
        ('setitem', 2, (-1, ('slice', -2, None, None)), 3),
    ])


def test_bf16_copy_of_huge_python_int():
    fuzz.assert_ok([
        ('leaf', 'bf16', (6, 4, 1), [0.0] * 24),
        ('copy_', 0, ('scalar', 1180591620717411303424)),
    ])


def test_bf16_fill_with_huge_python_int():
    fuzz.assert_ok([
        ('leaf', 'bf16', (3, 1), [0.0, 0.0, 0.0]),
        ('view', 0, 't', ()),
        ('fill_', 1, 1180591620717411303424),
    ])


def test_setitem_of_an_overlapping_row_with_a_leading_one():
    # t2 is a (1, 3) view, t3 its flip; t2[-1] = t3 must drop t3's leading 1 (and copy first: they overlap)
    fuzz.assert_ok([
        ('leaf', 'f16', (3, 3, 1), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
        ('view', 0, 'permute', ((2, 0, 1),)),
        ('view', 1, 'select', (2, 0)),
        ('view', 2, 'flip', ((0,),)),
        ('setitem', 2, (-1,), 3),
    ])


# ---------------------------------------------------------------------------
# failures that were the oracle's (fixed in tests/fuzz/fuzzer.py): they must stay fixed


def test_oracle_converts_scalars_in_the_compute_dtype():
    # ml_dtypes cannot make a bf16 array from 2**70; strided computes bf16 in f32, so must the oracle.
    fuzz.assert_ok([
        ('leaf', 'bf16', (1, 0, 1, 1, 1, 1, 1, 1), []),
        ('binary', 'maximum', 0, ('scalar', 1180591620717411303424)),
    ])


def test_oracle_keeps_rank_zero_copies_rank_zero():
    # np.ascontiguousarray turns a 0-d array into shape (1,); the mirrored result then hid the
    # difference.  The oracle copies with np.array(order="C") and never mirrors a wrong shape.
    fuzz.assert_ok([
        ('leaf', 'f32', (), [5.0]),
        ('copy', 'force_contiguous', 0),
        ('index_select', 1, (), 0),
    ])


def test_oracle_broadcasts_writes_one_way():
    # np.broadcast_shapes((2, 4, 1), (0, 1, 1, 4)) is (0, 2, 4, 4): the oracle took a source that
    # only broadcasts both ways as writable, where NumPy's assignment (and strided) refuse it.
    fuzz.assert_ok([
        ('leaf', 'f32', (2, 1, 4), [0.0] * 8),
        ('view', 0, 'unsqueeze', (0,)),
        ('view', 0, 'transpose', (1, 2)),
        ('setitem', 0, (('slice', 0, 0, None), None), 2),
    ])
