"""The garbage-argument sweep over the Array API entry points: each, given each kind of garbage,
works or raises a StridedError naming it, never a raw TypeError/ValueError from NumPy or Python
(tests/test_reliability.py sweeps the older entry points the same way)."""

import numpy as np
import pytest

import strided as sd

_T = sd.arange(12.0).reshape((3, 4))
_SQ = sd.asarray(np.eye(3) * 2.0)
_GARBAGE = [None, "x", 1.5, -1, 2**70, 10**400, 1e-300, float("inf"), (1, "a"), [1, 2], (), np.int64(2),
            float("nan"), True, sd.zeros(2), [], [[1], [2, 3]], 1j, object()]
L = sd.linalg
_ENTRY_POINTS = {
    "asarray": lambda a: sd.asarray(a), "asarray_dtype": lambda a: sd.asarray([1.0], dtype=a),
    "asarray_copy": lambda a: sd.asarray(_T, copy=a), "asarray_device": lambda a: sd.asarray(_T, device=a),
    "astype": lambda a: sd.astype(_T, a), "can_cast": lambda a: sd.can_cast(a, sd.f32),
    "finfo": lambda a: sd.finfo(a), "iinfo": lambda a: sd.iinfo(a), "isdtype": lambda a: sd.isdtype(sd.f32, a),
    "isdtype_dtype": lambda a: sd.isdtype(a, "integral"), "result_type": lambda a: sd.result_type(_T, a),
    "eye": lambda a: sd.eye(a), "eye_k": lambda a: sd.eye(3, k=a), "linspace": lambda a: sd.linspace(0, 1, a),
    "linspace_start": lambda a: sd.linspace(a, 1, 3), "meshgrid": lambda a: sd.meshgrid(a),
    "tril": lambda a: sd.tril(_T, k=a), "triu": lambda a: sd.triu(a), "full_like": lambda a: sd.full_like(_T, a),
    "zeros_like": lambda a: sd.zeros_like(a), "empty_like_dtype": lambda a: sd.empty_like(_T, dtype=a),
    "broadcast_shapes": lambda a: sd.broadcast_shapes(a, (3, 4)), "broadcast_to": lambda a: sd.broadcast_to(_T, a),
    "broadcast_arrays": lambda a: sd.broadcast_arrays(_T, a), "concat": lambda a: sd.concat([_T, a]),
    "concat_axis": lambda a: sd.concat([_T, _T], axis=a), "stack": lambda a: sd.stack(a),
    "stack_axis": lambda a: sd.stack([_T, _T], axis=a), "unstack": lambda a: sd.unstack(_T, axis=a),
    "expand_dims": lambda a: sd.expand_dims(_T, axis=a), "squeeze": lambda a: sd.squeeze(_T, a),
    "flip": lambda a: sd.flip(_T, axis=a), "permute_dims": lambda a: sd.permute_dims(_T, a),
    "moveaxis": lambda a: sd.moveaxis(_T, a, 0), "reshape": lambda a: sd.reshape(_T, a),
    "reshape_copy": lambda a: sd.reshape(_T, (12,), copy=a), "roll": lambda a: sd.roll(_T, a),
    "roll_axis": lambda a: sd.roll(_T, 1, axis=a), "repeat": lambda a: sd.repeat(_T, a),
    "repeat_axis": lambda a: sd.repeat(_T, 2, axis=a), "tile": lambda a: sd.tile(_T, a),
    "take": lambda a: sd.take(_T, a, axis=0), "take_along_axis": lambda a: sd.take_along_axis(_T, a, axis=0),
    "take_along_axis_axis": lambda a: sd.take_along_axis(_T, sd.zeros((1, 4), sd.i64), axis=a),
    "getitem_array": lambda a: _T[sd.asarray([0, 1]), a], "setitem_mask": lambda a: _T.copy().__setitem__(_T > 3, a),
    "take_axis": lambda a: sd.take(_T, sd.asarray([0]), axis=a),
    "add": lambda a: sd.add(_T, a), "clip": lambda a: sd.clip(_T, a, None), "isnan": lambda a: sd.isnan(a),
    "logical_xor": lambda a: sd.logical_xor(_T > 1, a), "positive": lambda a: sd.positive(a),
    "sum": lambda a: sd.sum(_T, axis=a), "sum_dtype": lambda a: sd.sum(_T, dtype=a),
    "prod": lambda a: sd.prod(_T, axis=a),
    "mean": lambda a: sd.mean(_T, axis=a), "max": lambda a: sd.max(_T, axis=a), "var": lambda a: sd.var(_T, axis=a),
    "var_correction": lambda a: sd.var(_T, correction=a), "std": lambda a: sd.std(a),
    "argmax": lambda a: sd.argmax(_T, axis=a), "count_nonzero": lambda a: sd.count_nonzero(_T, axis=a),
    "all": lambda a: sd.all(_T, axis=a), "any": lambda a: sd.any(a), "diff": lambda a: sd.diff(_T, axis=a),
    "diff_n": lambda a: sd.diff(_T, n=a), "diff_prepend": lambda a: sd.diff(_T, prepend=a),
    "to_device": lambda a: _T.to_device(a), "namespace": lambda a: _T.__array_namespace__(api_version=a),
    "info_dtypes": lambda a: sd.__array_namespace_info__().dtypes(kind=a),
    "tensordot": lambda a: sd.tensordot(_T, _T, axes=a), "tensordot_b": lambda a: sd.tensordot(_T, a),
    "vecdot": lambda a: sd.vecdot(_T, _T, axis=a), "matrix_transpose": lambda a: sd.matrix_transpose(a),
    "diagonal": lambda a: L.diagonal(_T, offset=a), "trace": lambda a: L.trace(a), "outer": lambda a: L.outer(_T[0], a),
    "cross": lambda a: L.cross(_T[:, :3], _T[:, :3], axis=a), "cholesky": lambda a: L.cholesky(a),
    "inv": lambda a: L.inv(a), "det": lambda a: L.det(a), "solve": lambda a: L.solve(_SQ, a),
    "qr_mode": lambda a: L.qr(_T, mode=a), "svd": lambda a: L.svd(a), "pinv_rtol": lambda a: L.pinv(_T, rtol=a),
    "matrix_rank_rtol": lambda a: L.matrix_rank(_T, rtol=a), "matrix_power": lambda a: L.matrix_power(_SQ, a),
    "matrix_norm_ord": lambda a: L.matrix_norm(_T, ord=a), "vector_norm_ord": lambda a: L.vector_norm(_T, ord=a),
    "vector_norm_axis": lambda a: L.vector_norm(_T, axis=a),
    "sort": lambda a: sd.sort(a), "sort_axis": lambda a: sd.sort(_T, axis=a),
    "sort_descending": lambda a: sd.sort(_T, descending=a), "argsort_stable": lambda a: sd.argsort(_T, stable=a),
    "argsort_axis": lambda a: sd.argsort(_T, axis=a), "method_sort": lambda a: _T.sort(a),
    "cumulative_sum": lambda a: sd.cumulative_sum(a), "cumulative_sum_axis": lambda a: sd.cumulative_sum(_T, axis=a),
    "cumulative_sum_dtype": lambda a: sd.cumulative_sum(_T, axis=0, dtype=a),
    "cumulative_sum_initial": lambda a: sd.cumulative_sum(_T, axis=0, include_initial=a),
    "cumulative_prod_axis": lambda a: sd.cumulative_prod(_T, axis=a), "nonzero": lambda a: sd.nonzero(a),
    "getitem_mask": lambda a: _T[_T > a], "setitem_mask_value": lambda a: _T.copy().__setitem__(_T > 3, sd.asarray(a)),
    "searchsorted": lambda a: sd.searchsorted(_T[0], a), "searchsorted_x1": lambda a: sd.searchsorted(a, _T),
    "searchsorted_side": lambda a: sd.searchsorted(_T[0], _T, side=a),
    "searchsorted_sorter": lambda a: sd.searchsorted(_T[0], _T, sorter=a),
    "unique_all": lambda a: sd.unique_all(a), "unique_counts": lambda a: sd.unique_counts(a),
    "unique_inverse": lambda a: sd.unique_inverse(a), "unique_values": lambda a: sd.unique_values(a),
    "signbit": lambda a: sd.signbit(a), "nextafter": lambda a: sd.nextafter(_T, a),
    "bitwise_left_shift": lambda a: sd.bitwise_left_shift(sd.asarray([1, 2]), a),
    "bitwise_right_shift": lambda a: sd.bitwise_right_shift(a, sd.asarray([1, 2])),
    "lshift_operator": lambda a: sd.asarray([1, 2]) << a,
    "fft": lambda a: sd.fft.fft(a), "fft_n": lambda a: sd.fft.fft(_T, n=a),
    "fft_axis": lambda a: sd.fft.ifft(_T, axis=a),
    "fft_norm": lambda a: sd.fft.rfft(_T, norm=a), "irfft_n": lambda a: sd.fft.irfft(_T, n=a),
    "fftn_s": lambda a: sd.fft.fftn(_T, s=a, axes=(0, 1)), "fftn_axes": lambda a: sd.fft.irfftn(_T, axes=a),
    "fftfreq": lambda a: sd.fft.fftfreq(a), "fftfreq_d": lambda a: sd.fft.rfftfreq(4, d=a),
    "fftfreq_dtype": lambda a: sd.fft.fftfreq(4, dtype=a), "fftfreq_device": lambda a: sd.fft.fftfreq(4, device=a),
    "fftshift_axes": lambda a: sd.fft.fftshift(_T, axes=a), "ifftshift": lambda a: sd.fft.ifftshift(a),
}


@pytest.mark.parametrize("name", sorted(_ENTRY_POINTS))
def test_garbage_arguments_raise_strided_error(name):
    call = _ENTRY_POINTS[name]
    escaped = []
    for a in _GARBAGE:
        try:
            call(a)
        except sd.StridedError:
            pass
        except Exception as e:  # the point is to catch anything else
            escaped.append(f"{a!r}: {type(e).__name__}: {e}")
    assert not escaped, f"{name}:\n" + "\n".join(escaped)
