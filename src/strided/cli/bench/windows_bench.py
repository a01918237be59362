"""The sliding-window row: a moving sum of windows of 64 over 2^20 f32 (issue 18).

Each library sums its own window view along the window dim: strided's
``sliding_window_view(x, 64).sum(-1)``, NumPy's ``sliding_window_view(x, 64).sum(-1)``
and PyTorch's ``x.unfold(0, 64, 1).sum(-1)``.  No library copies the windows.
"""

from __future__ import annotations

import numpy as np

from .harness import Case, torch_or_none

N, WINDOW = 1 << 20, 64


def window_cases(quick: bool = False) -> list[Case]:
    import strided as sd

    torch = torch_or_none()

    def make():
        x_np = np.random.default_rng(3).standard_normal(N, dtype=np.float32)
        x = sd.from_numpy(x_np)
        out = {
            "strided": lambda: sd.sliding_window_view(x, WINDOW).sum(-1),
            "numpy": lambda: np.lib.stride_tricks.sliding_window_view(x_np, WINDOW).sum(-1),
        }
        if torch is not None:
            x_t = torch.from_numpy(x_np)
            out["torch"] = lambda: x_t.unfold(0, WINDOW, 1).sum(-1)
        return out

    return [Case("sliding windows, f32", f"moving sum, windows of {WINDOW}", "2^20", make)]
