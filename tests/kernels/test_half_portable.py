"""The portable half conversions (``kernels.half.PORTABLE``: what the CUDA backend compiles for
the device) give the bits of the CPU's vectorising IR forms and of NumPy/ml_dtypes: every f16
and bf16 pattern, and the f32 rounding probes of test_copy (ties, boundaries, NaN payloads)."""

from __future__ import annotations

import numpy as np
from numba import njit

from strided.kernels import half as kh

from strategies import bits
from test_copy import ALL16, BF16, _f32_probes, _map_to_bits, _map_to_f32


def test_portable_half_to_f32_is_the_cpus_for_every_pattern():
    np.testing.assert_array_equal(bits(_map_to_f32(ALL16, njit(kh.f16_bits_as_f32))),
                                  bits(_map_to_f32(ALL16, kh.f16_bits_to_f32)))
    np.testing.assert_array_equal(bits(_map_to_f32(ALL16, njit(kh.bf16_bits_as_f32))),
                                  bits(ALL16.view(BF16).astype(np.float32)))


def test_portable_f32_to_half_is_the_cpus_on_the_rounding_probes():
    f = _f32_probes()
    np.testing.assert_array_equal(_map_to_bits(f, njit(kh.f32_as_f16_bits)), _map_to_bits(f, kh.f32_to_f16_bits))
    np.testing.assert_array_equal(_map_to_bits(f, njit(kh.f32_as_bf16_bits)), _map_to_bits(f, kh.f32_to_bf16_bits))


def test_portable_forms_run_as_python_on_numpy_scalars():
    # numba-cuda's simulator runs them as Python: the same bits from NumPy scalars
    for h in (0x0000, 0x8001, 0x3C00, 0x7BFF, 0x7C00, 0xFC00, 0x7E01, 0x03FF):
        f = kh.f16_bits_as_f32(np.uint16(h))
        assert f.dtype == np.float32 and bits(np.float32(f)) == bits(np.uint16(h).view(np.float16).astype(np.float32))
        assert kh.f32_as_f16_bits(f) == h
    for x in (np.float32(1e-8), np.float32(-3.0e-6), np.float32(65519.0), np.float32(65520.0), np.float32(np.nan)):
        assert kh.f32_as_f16_bits(x) == kh.f32_to_f16_bits(x)
        assert kh.f32_as_bf16_bits(x) == kh.f32_to_bf16_bits(x)
        assert (bits(np.float32(kh.bf16_bits_as_f32(kh.f32_as_bf16_bits(x))))
                == bits(np.float32(x).astype(BF16).astype(np.float32)))
