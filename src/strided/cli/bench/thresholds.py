"""``python -m strided bench --thresholds``: each family on one thread and on all, across sizes.

The parallel thresholds in ``strided.kernels.common`` come from this table, taken on a
quiet machine: a family goes parallel from the size where its parallel time drops below
its serial time.  Each row forces one way by moving the families' thresholds (then
restores them), beside NumPy and PyTorch in the same process.
"""

from __future__ import annotations

import timeit

import numpy as np

from .harness import torch_or_none

SIZES = (128, 181, 256, 362, 512, 1024, 2048)


def _best(fn, number: int, repeat: int = 7) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> int:
    import strided as sd
    from strided.kernels import copy as kc
    from strided.kernels import elementwise as kew
    from strided.kernels import reduce as kred

    torch = torch_or_none()
    saved = kew.PARALLEL_MIN, kred.PARALLEL_MIN, kc.COPY_PARALLEL_MIN

    def force(parallel: bool) -> None:
        value = 1 if parallel else 1 << 60
        kew.PARALLEL_MIN = kred.PARALLEL_MIN = kc.COPY_PARALLEL_MIN = value
        sd.set_num_threads(sd.get_num_threads())  # drops the plans made under the other setting

    families = {
        "a + b": (lambda a, b, c: a + b, lambda a, b, c: a + b),
        "a + bias": (lambda a, b, c: a + c, lambda a, b, c: a + c),
        "a.exp()": (lambda a, b, c: a.exp(), lambda a, b, c: np.exp(a) if isinstance(a, np.ndarray) else a.exp()),
        "a.sum(0)": (lambda a, b, c: a.sum(0), lambda a, b, c: a.sum(0)),
        "a.sum(1)": (lambda a, b, c: a.sum(1), lambda a, b, c: a.sum(1)),
        "a.t().contiguous()": (lambda a, b, c: a.t().contiguous(),
                               lambda a, b, c: np.ascontiguousarray(a.T) if isinstance(a, np.ndarray)
                               else a.t().contiguous()),
    }
    print(f"threads: {sd.get_num_threads()}; times in us, best of 7 repeats")
    print("| op | size | elements | one thread | parallel | NumPy | PyTorch |")
    print("|---|---|---|---|---|---|---|")
    try:
        for n in SIZES:
            a, b, c = sd.rand(n, n), sd.rand(n, n), sd.rand(n)
            an, bn, cn = a.numpy(), b.numpy(), c.numpy()
            number = max(5, (1 << 21) // (n * n))
            for name, (ours, peer) in families.items():
                force(False)
                serial = _best(lambda: ours(a, b, c), number)
                force(True)
                par = _best(lambda: ours(a, b, c), number)
                npv = _best(lambda: peer(an, bn, cn), number)
                tv = float("nan")
                if torch is not None:
                    at, bt, ct = (torch.from_numpy(x) for x in (an, bn, cn))
                    tv = _best(lambda: peer(at, bt, ct), number)
                print(f"| {name} | {n}^2 | {n * n} | {serial * 1e6:.1f} | {par * 1e6:.1f} | {npv * 1e6:.1f} | "
                      f"{tv * 1e6:.1f} |", flush=True)
    finally:
        kew.PARALLEL_MIN, kred.PARALLEL_MIN, kc.COPY_PARALLEL_MIN = saved
        sd.set_num_threads(sd.get_num_threads())
    return 0
