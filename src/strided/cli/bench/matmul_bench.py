"""Matmul timings: strided vs NumPy vs PyTorch on the same views of the same memory.

Cases (f32): a @ b, a @ b.t() (a transposed rhs read in place), a @
b.t().contiguous() (the copy the seed shows to be a net loss), a narrowed rhs
(row stride 2n > n columns, read in place), the seed's permuted batch
(x.permute(1, 0, 2, 3) @ y), and the seed's baseline, a naive i-k-j triple loop
(numba) at 256.  Each implementation is timed in alternation, round after round,
and the median (and the best) is kept: the first run of anything pays warm-up,
and a noisy machine drifts.

    PYTHONPATH=src python -m strided.cli.bench.matmul_bench [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import strided as sd  # first: fixes numba's threading before numba loads
from strided.kernels import PARALLEL_MIN  # noqa: F401
from numba import njit

from .harness import torch_or_none


@njit(cache=True)
def _naive(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in range(n):
        for j in range(m):
            c[i, j] = 0.0
        for p in range(k):
            x = a[i, p]
            for j in range(m):
                c[i, j] += x * b[p, j]


def _time(fns: dict, rounds: int, min_seconds: float, pause: float = 0.01) -> dict:
    """(median, best) seconds per call of each fn, timed in alternation.

    A short pause precedes each timed call: PyTorch's OpenMP workers (and
    OpenBLAS's) keep spinning for a while after a call and would otherwise take
    cycles from whichever library runs next.
    """
    for fn in fns.values():  # warm-up: compile, caches, thread pools
        fn()
    samples = {name: [] for name in fns}
    busy = 0.0
    r = 0
    while r < rounds or (busy < min_seconds and r < 20 * rounds):
        for name, fn in fns.items():
            time.sleep(pause)
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            samples[name].append(dt)
            busy += dt
        r += 1
    return {name: (statistics.median(s), min(s)) for name, s in samples.items()}


def _row(case: str, shape: str, flops: float, times: dict) -> dict:
    """Medians, and the ratio of best times too: on a shared machine noise only ever adds."""
    st, st_best = times["strided"]
    npt, np_best = times.get("numpy", (None, None))
    tt, t_best = times.get("torch", (None, None))
    return {
        "case": case,
        "shape": shape,
        "strided_ms": st * 1e3,
        "numpy_ms": npt * 1e3 if npt else None,
        "torch_ms": tt * 1e3 if tt else None,
        "gflops": flops / st / 1e9,
        "vs_numpy": st / npt if npt else None,
        "vs_torch": st / tt if tt else None,
        "vs_numpy_best": st_best / np_best if np_best else None,
        "vs_torch_best": st_best / t_best if t_best else None,
    }


def _has_copy() -> bool:
    try:
        from strided.kernels import copy  # noqa: F401
    except ImportError:
        return False
    return True


def run(quick: bool = False) -> list[dict]:
    torch = torch_or_none()
    sizes = (256, 512) if quick else (256, 512, 1024)
    rounds = 5 if quick else 9
    rng = np.random.default_rng(0)
    rows: list[dict] = []
    for n in sizes:
        a_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        w_np = rng.uniform(-1, 1, (n, 2 * n)).astype(np.float32)
        a, b, w = sd.from_numpy(a_np), sd.from_numpy(b_np), sd.from_numpy(w_np)
        ta, tb, tw = (torch.from_numpy(x) for x in (a_np, b_np, w_np)) if torch else (None,) * 3
        flops = 2.0 * n**3
        mins = 0.2 if quick else 0.5

        cases = {
            "a @ b": (lambda: a @ b, lambda: a_np @ b_np, lambda: ta @ tb),
            "a @ b.t()": (lambda: a @ b.t(), lambda: a_np @ b_np.T, lambda: ta @ tb.t()),
            "a @ b.narrow(1, 0, n) of (n, 2n)": (
                lambda: a @ w.narrow(1, 0, n),
                lambda: a_np @ w_np[:, :n],
                lambda: ta @ tw.narrow(1, 0, n),
            ),
        }
        if _has_copy():
            cases["a @ b.t().contiguous()"] = (
                lambda: a @ b.t().contiguous(),
                lambda: a_np @ np.ascontiguousarray(b_np.T),
                lambda: ta @ tb.t().contiguous(),
            )
        for case, (f_sd, f_np, f_t) in cases.items():
            fns = {"strided": f_sd, "numpy": f_np}
            if torch:
                fns["torch"] = f_t
            rows.append(_row(case, f"{n}x{n}", flops, _time(fns, rounds, mins)))

        if n == 256:
            c = np.empty((n, n), np.float32)
            t = _time({"strided": lambda: _naive(a_np, b_np, c), "numpy": lambda: a_np @ b_np}, 3, 0.2)
            np.testing.assert_allclose(c, a_np @ b_np, rtol=1e-3, atol=1e-3)
            rows.append(_row("naive i-k-j triple loop (numba)", f"{n}x{n}", flops, t))

    # The seed's permuted batch, at three scales: its own (2,3,4,5) @ (3,2,5,6), where
    # per-call overhead is everything, many small matrices, and few large ones.
    scales = ((2, 3, 4, 5, 6), (16, 32, 16, 16, 16), (4, 8, 128, 128, 128))
    for b1, b2, m, k, n in scales if not quick else scales[:2]:
        x_np = rng.uniform(-1, 1, (b1, b2, m, k)).astype(np.float32)
        y_np = rng.uniform(-1, 1, (b2, b1, k, n)).astype(np.float32)
        x, y = sd.from_numpy(x_np), sd.from_numpy(y_np)
        fns = {
            "strided": lambda: x.permute(1, 0, 2, 3) @ y,
            "numpy": lambda: np.matmul(x_np.transpose(1, 0, 2, 3), y_np),
        }
        if torch:
            tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
            fns["torch"] = lambda: tx.permute(1, 0, 2, 3) @ ty
        flops = 2.0 * b1 * b2 * m * k * n
        shape = f"({b1},{b2},{m},{k}).permute(1,0,2,3) @ ({b2},{b1},{k},{n})"
        rows.append(_row("permuted batch", shape, flops, _time(fns, rounds, 0.3)))
    return rows


def _fmt(v, spec):
    return format("-", ">" + spec.split(".")[0]) if v is None else format(v, spec)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    rows = run(quick="--quick" in argv)
    torch = torch_or_none()
    print(
        f"matmul f32, threads={sd.get_num_threads()}, numpy {np.__version__}"
        + (f", torch {torch.__version__}" if torch else ", torch not installed")
        + "; ratios are strided time / other time (below 1: strided faster), medians then best times"
    )
    head = (
        f"{'case':34} {'shape':46} {'strided ms':>10} {'numpy ms':>9} {'torch ms':>9} {'GFLOPS':>7} "
        f"{'/numpy':>7} {'/torch':>7} {'best/np':>7} {'best/pt':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['case']:34} {r['shape']:46} {r['strided_ms']:10.3f} {_fmt(r['numpy_ms'], '9.3f')} "
            f"{_fmt(r['torch_ms'], '9.3f')} {r['gflops']:7.1f} "
            f"{_fmt(r['vs_numpy'], '7.2f')} {_fmt(r['vs_torch'], '7.2f')} "
            f"{_fmt(r['vs_numpy_best'], '7.2f')} {_fmt(r['vs_torch_best'], '7.2f')}"
        )


if __name__ == "__main__":
    main()
