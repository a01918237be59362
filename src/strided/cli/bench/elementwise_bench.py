"""Micro-benchmark of the elementwise and reduction kernels against NumPy and PyTorch.

Our kernels are called directly on flat buffers and layouts, twice: writing a
preallocated output ("ours") and writing a fresh ``np.empty`` ("ours+alloc",
which pays the first-touch page faults the tensor layer's buffer pool avoids).
Peers run both ways too when they can: allocating their result ("fresh") and
writing into a preallocated ``out=`` laid out as ours ("out=").  Each library
is timed in blocks of calls with a short pause between blocks, rotating the
order, and the median call is reported.

    PYTHONPATH=src python -m strided.cli.bench.elementwise_bench [--threads N] [n ...]

``--threads 1`` compares single-threaded kernels (ours, NumPy, PyTorch with
one thread): on a shared machine this is the steadier measure of the loops
themselves, since a parallel kernel waits for its slowest thread.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from ...kernels import elementwise as ew
from ...kernels import reduce as red
from ...layout import Layout
from ...core.threads import get_num_threads
from .harness import torch_or_none


def _time(fns: dict, rounds: int, per_block: int, pause: float = 0.05) -> dict:
    for f in fns.values():  # warm-up: compile, fault pages in
        f()
        f()
    samples = {k: [] for k in fns}
    keys = list(fns)
    for r in range(rounds):
        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
            f = fns[k]
            for _ in range(per_block):
                t0 = time.perf_counter()
                f()
                samples[k].append(time.perf_counter() - t0)
            time.sleep(pause)
    return {k: statistics.median(v) for k, v in samples.items()}


def _cases(n: int, torch):
    rng = np.random.default_rng(0)
    a2 = rng.standard_normal((n, n), dtype=np.float32)
    b2 = rng.standard_normal((n, n), dtype=np.float32)
    bias1 = rng.standard_normal(n, dtype=np.float32)
    a, b, bias = a2.reshape(-1), b2.reshape(-1), bias1
    L = Layout.contiguous((n, n))
    LT = L.transpose(0, 1)
    LB = Layout((n,)).broadcast_as((n, n))
    out = np.empty(n * n, np.float32)
    out2 = out.reshape(n, n)
    ta = tb = tbias = tout = None
    if torch is not None:
        ta, tb, tbias, tout = (torch.from_numpy(x) for x in (a2, b2, bias1, out2))

    def binary_case(name, op, la, lb, np_fn, np_out, t_fn, t_out):
        lo = ew.output_layout((n, n), la, lb)
        fns = {
            "ours": lambda: ew.binary(op, a, la, b if lb is not LB else bias, lb, out, lo),
            "ours+alloc": lambda: ew.binary(op, a, la, b if lb is not LB else bias, lb,
                                            np.empty(n * n, np.float32), lo),
            "numpy fresh": np_fn,
            "numpy out=": np_out,
        }
        if torch is not None:
            fns["torch fresh"] = t_fn
            fns["torch out="] = t_out
        return name, ew.plan(lo, la, lb), fns

    def unary_case(name, op, la, np_fn, np_out, t_fn, t_out):
        lo = ew.output_layout((n, n), la)
        fns = {
            "ours": lambda: ew.unary(op, a, la, out, lo),
            "ours+alloc": lambda: ew.unary(op, a, la, np.empty(n * n, np.float32), lo),
            "numpy fresh": np_fn,
            "numpy out=": np_out,
        }
        if torch is not None:
            fns["torch fresh"] = t_fn
            fns["torch out="] = t_out
        return name, ew.plan(lo, la), fns

    T = torch
    yield binary_case(
        "a + b", "add", L, L,
        lambda: a2 + b2, lambda: np.add(a2, b2, out=out2),
        lambda: ta + tb, lambda: T.add(ta, tb, out=tout),
    )
    yield binary_case(
        "a.t() + b.t()", "add", LT, LT,
        lambda: a2.T + b2.T, lambda: np.add(a2.T, b2.T, out=out2.T),
        lambda: ta.t() + tb.t(), lambda: T.add(ta.t(), tb.t(), out=tout.t()),
    )
    yield binary_case(
        "a + bias (row)", "add", L, LB,
        lambda: a2 + bias1, lambda: np.add(a2, bias1, out=out2),
        lambda: ta + tbias, lambda: T.add(ta, tbias, out=tout),
    )
    yield binary_case(
        "a + b.t()", "add", L, LT,
        lambda: a2 + b2.T, lambda: np.add(a2, b2.T, out=out2),
        lambda: ta + tb.t(), lambda: T.add(ta, tb.t(), out=tout),
    )
    yield unary_case(
        "a.exp()", "exp", L,
        lambda: np.exp(a2), lambda: np.exp(a2, out=out2),
        lambda: ta.exp(), lambda: T.exp(ta, out=tout),
    )
    yield unary_case(
        "a.t().exp()", "exp", LT,
        lambda: np.exp(a2.T), lambda: np.exp(a2.T, out=out2.T),
        lambda: ta.t().exp(), lambda: T.exp(ta.t(), out=tout.t()),
    )
    yield unary_case(
        "a.relu()", "relu", L,
        lambda: np.maximum(a2, 0), lambda: np.maximum(a2, np.float32(0), out=out2),
        lambda: ta.relu(), lambda: T.clamp_min(ta, 0, out=tout),
    )

    for dim in (0, 1):
        keep = (1, n) if dim == 0 else (n, 1)
        lo = Layout.contiguous(keep)
        rout = np.empty(n, np.float32)
        fns = {
            "ours": lambda lo=lo, dim=dim: red.reduce("sum", a, L, (dim,), rout, lo),
            "ours+alloc": lambda lo=lo, dim=dim: red.reduce("sum", a, L, (dim,), np.empty(n, np.float32), lo),
            "numpy fresh": lambda dim=dim: a2.sum(dim),
            "numpy out=": lambda dim=dim: np.sum(a2, axis=dim, out=rout),
        }
        if torch is not None:
            trout = torch.from_numpy(rout)
            fns["torch fresh"] = lambda dim=dim: ta.sum(dim)
            fns["torch out="] = lambda dim=dim: T.sum(ta, dim, out=trout)
        yield f"a.sum({dim})", red.plan(L, (dim,)), fns


def run(sizes=(1024, 2048, 4096), rounds: int = 5, per_block: int | None = None,
        threads: int | None = None) -> list[dict]:
    """One dict per (case, size): median seconds per implementation and the ratios.

    ``ratio_fresh`` is ours (preallocated output, as the tensor layer's pool
    gives us) over the best peer that allocates its result; ``ratio_alloc``
    is ours+alloc over the same; ``ratio_out`` is ours over the best peer
    writing into ``out=``: kernel against kernel.  ``threads`` sets strided's
    and PyTorch's thread count for the run (restored afterwards).
    """
    from ...core import threads as _threads

    saved = _threads.get_num_threads()
    if threads:
        _threads.set_num_threads(threads)
    try:
        return _run(sizes, rounds, per_block)
    finally:
        _threads.set_num_threads(saved)


def _run(sizes, rounds, per_block) -> list[dict]:
    torch = torch_or_none()
    rows = []
    for n in sizes:
        k = per_block or max(3, min(50, int(2e8 // (n * n * 4))))
        for name, p, fns in _cases(n, torch):
            med = _time(fns, rounds, k)
            fresh = min(v for key, v in med.items() if key.endswith("fresh"))
            outs = min(v for key, v in med.items() if key.endswith("out="))
            rows.append(
                dict(
                    case=name,
                    n=n,
                    path=ew.PATH_NAMES[p.path] if isinstance(p, ew.Plan) else p.case,
                    threads=get_num_threads(),
                    **{k2: v for k2, v in med.items()},
                    ratio_fresh=med["ours"] / fresh,
                    ratio_alloc=med["ours+alloc"] / fresh,
                    ratio_out=med["ours"] / outs,
                )
            )
    return rows


def format_table(rows: list[dict]) -> str:
    libs = ["ours", "ours+alloc", "numpy fresh", "numpy out=", "torch fresh", "torch out="]
    head = (f"{'case':<16}{'n':>6} {'path':<8}" + "".join(f"{l:>12}" for l in libs)
            + f"{'vs fresh':>10}{'+alloc':>8}{'vs out=':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = "".join(f"{r[l] * 1e3:>12.2f}" if l in r else f"{'-':>12}" for l in libs)
        lines.append(
            f"{r['case']:<16}{r['n']:>6} {r['path']:<8}{cells}"
            f"{r['ratio_fresh']:>10.2f}{r['ratio_alloc']:>8.2f}{r['ratio_out']:>9.2f}"
        )
    lines.append("times in ms (median); ratios: ours / best peer (fresh result, fresh with our np.empty, out=)")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    nthreads = None
    if "--threads" in args:
        i = args.index("--threads")
        nthreads = int(args[i + 1])
        del args[i : i + 2]
    sizes = tuple(int(x) for x in args) or (1024, 2048, 4096)
    print(f"threads: {nthreads or get_num_threads()}")
    print(format_table(run(sizes, threads=nthreads)))
