"""Bench rows for Array API functions with a layout story (issue 16): compositions of the op
layer on views, against NumPy and PyTorch doing the same on the same views.

- ``std`` over a tuple of axes of a permuted view: strided composes mean, sub, sqr and sum
  over dims (0, 2) of the view; NumPy and PyTorch run their own std.
- ``take`` of rows of a transposed source: strided's gather reads the transposed layout in
  place; NumPy's ``take`` and PyTorch's ``index_select`` the same.
- ``cumulative_sum`` along each axis of a square f32: the scan family's lines run along the
  axis in the output's order, strided ones four at a time (NumPy's ``cumsum``, PyTorch's
  ``cumsum``).
- ``sort`` of a transposed view along its last axis: each line is gathered from its stride
  into scratch as integer keys, sorted (stable: radix for long lines, merge for short ones)
  and written out (NumPy's and PyTorch's stable sorts).
"""

from __future__ import annotations

import numpy as np

from .harness import Case, torch_or_none

SHAPE = (64, 256, 256)
N = 2048
ROWS = 512
SQUARE = 1024


def array_api_cases(quick: bool = False) -> list[Case]:
    import strided as sd

    torch = torch_or_none()

    def std_case():
        a_np = np.random.default_rng(5).standard_normal(SHAPE, dtype=np.float32).transpose(1, 0, 2)
        a = sd.from_numpy(a_np)
        out = {"strided": lambda: sd.std(a, axis=(0, 2)), "numpy": lambda: np.std(a_np, axis=(0, 2))}
        if torch is not None:
            a_t = torch.from_numpy(np.ascontiguousarray(a_np.transpose(1, 0, 2))).permute(1, 0, 2)
            out["torch"] = lambda: torch.std(a_t, dim=(0, 2), correction=0)
        return out

    def take_case():
        rng = np.random.default_rng(6)
        a_np = rng.standard_normal((N, N), dtype=np.float32)
        idx_np = rng.integers(0, N, ROWS).astype(np.int64)
        a, idx = sd.from_numpy(a_np), sd.from_numpy(idx_np)
        out = {"strided": lambda: sd.take(a.mT, idx, axis=0), "numpy": lambda: np.take(a_np.T, idx_np, axis=0)}
        if torch is not None:
            a_t, idx_t = torch.from_numpy(a_np), torch.from_numpy(idx_np)
            out["torch"] = lambda: torch.index_select(a_t.T, 0, idx_t)
        return out

    def cumsum_case(axis):
        def make():
            a_np = np.random.default_rng(7).standard_normal((SQUARE, SQUARE), dtype=np.float32)
            a = sd.from_numpy(a_np)
            out = {"strided": lambda: sd.cumulative_sum(a, axis=axis), "numpy": lambda: np.cumsum(a_np, axis=axis)}
            if torch is not None:
                a_t = torch.from_numpy(a_np)
                out["torch"] = lambda: torch.cumsum(a_t, dim=axis)
            return out

        return make

    def sort_case():
        a_np = np.random.default_rng(8).standard_normal((SQUARE, SQUARE), dtype=np.float32)
        a = sd.from_numpy(a_np)
        out = {"strided": lambda: sd.sort(a.mT, axis=-1), "numpy": lambda: np.sort(a_np.T, axis=-1, kind="stable")}
        if torch is not None:
            a_t = torch.from_numpy(a_np)
            out["torch"] = lambda: torch.sort(a_t.T, dim=-1, stable=True)
        return out

    return [
        Case("array API, f32", "std over axes (0, 2) of a permuted view", "64x256x256", std_case),
        Case("array API, f32", "cumulative_sum along axis 0", f"{SQUARE}^2", cumsum_case(0)),
        Case("array API, f32", "cumulative_sum along axis 1", f"{SQUARE}^2", cumsum_case(1)),
        Case("array API, f32", "sort a transposed view along its last axis", f"{SQUARE}^2", sort_case),
        Case("array API, f32", f"take {ROWS} rows of a transposed source", f"{N}^2", take_case),
    ]
