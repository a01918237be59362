"""Foreign operands of a CUDA tensor (issue 27, item 1): host data (ndarrays, NumPy scalars,
sequences) is refused by name, never moved silently; Python numbers and CUDA tensors go in;
a CUDA array exposing ``__cuda_array_interface__`` is taken without a copy on a real GPU
(the simulator cannot wrap foreign device memory and says so)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config

import strided as sd

SIMULATED = bool(config.ENABLE_CUDASIM)


class DeviceArray:
    """Someone else's CUDA array: only the interface, over a CUDA tensor's memory."""

    def __init__(self, t):
        self.t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


def _g():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    return a, sd.from_numpy(a).to_device("cuda")


@pytest.mark.parametrize("host", [np.ones(3, np.float32), np.array(2.0), np.float64(2), [1.0, 2.0, 3.0]],
                         ids=["ndarray", "0-d", "numpy scalar", "list"])
def test_host_data_is_refused_by_name(host):
    _, g = _g()
    for call in (lambda: g + host, lambda: g.__rmul__(host), lambda: sd.where(g > 1, g, host)):
        with pytest.raises(sd.StridedError, match="is host data; strided moves nothing to a device unasked"):
            call()
    with pytest.raises(sd.StridedError, match="mul: .*(host data|one device)"):
        host * g  # through NumPy's dispatch for an ndarray or a NumPy scalar on the left
    with pytest.raises(sd.StridedError, match="host data"):
        g.copy().__iadd__(host)


def test_numbers_and_cuda_tensors_still_go_in():
    a, g = _g()
    np.testing.assert_allclose((g * 2.0 + g.T.T).numpy(), a * 2 + a)
    np.testing.assert_allclose(sd.where(g > 1, g, 0.0).numpy(), np.where(a > 1, a, 0))


def test_cuda_array_interface_operand_is_viewed_on_a_gpu_and_refused_by_name_in_the_simulator():
    # one test for both (the simulated run must skip nothing): the simulator cannot wrap a
    # device pointer, a GPU reads the operand where it lies
    a, g = _g()
    if SIMULATED:
        with pytest.raises(sd.StridedError, match="simulator cannot wrap foreign device memory"):
            g + DeviceArray(g.T.T)
        return
    other = sd.from_numpy(np.arange(3.0, dtype=np.float32)[::-1].copy()).to_device("cuda")
    got = g + DeviceArray(other)
    np.testing.assert_allclose(got.numpy(), a + np.arange(3.0, dtype=np.float32)[::-1])
    view = sd.asarray(DeviceArray(g))
    assert sd.same_buffer(view, g)
