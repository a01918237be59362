"""Micro-benchmark of the copy and index kernels against NumPy and PyTorch.

Every contender of a case runs in the same process, in alternating blocks of
a few calls with a short pause between blocks (PyTorch's OpenMP workers, and
numba's, spin for a while after a parallel call and would otherwise steal the
cores from whichever library runs next).  The machines this runs on are
shared and their memory bandwidth swings by 2-3x from one second to the next,
so only timings interleaved like this compare.  Each number is the minimum
over all calls (the least disturbed run); the median is reported beside it.

Contenders, in two modes:
  * ``prealloc``: into a destination allocated once (the kernel itself):
    ``copy_into`` / ``np.copyto(out, view)`` / ``out.copy_(view)``;
  * ``alloc``: a fresh destination each call, as ``contiguous()`` does:
    ``np.empty`` + ``copy_into`` / ``np.array(view, order="C", copy=True)``
    (what ``np.ascontiguousarray`` does for a non-contiguous view) /
    ``view.to(dtype, memory_format=contiguous, copy=True)`` (what
    ``.contiguous()`` does).  The copy is forced so that a view that is
    already contiguous is copied too.  Fresh large buffers pay their page
    faults here.
``strided`` runs with strided's thread count (parallel above
``COPY_PARALLEL_MIN`` elements), ``strided-1t`` with one thread.

Run: ``PYTHONPATH=src python -m strided.cli.bench.copy_bench [N ...]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ...core import threads
from ...kernels.copy import copy_into
from ...kernels.index import index_select
from ...layout import Layout
from .harness import torch_or_none

torch = torch_or_none()  # optional peer, never a dependency

PEERS = ("numpy", "torch")


def _cases(n: int):
    """(name, base numpy array, strided layout of the view, numpy view, torch view maker, dst dtype)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    full = Layout.contiguous((n, n))
    yield "transpose a.T", a, full.transpose(0, 1), a.T, lambda t: t.t(), np.float32
    yield "narrow a[:, :n/2]", a, full.narrow(1, 0, n // 2), a[:, : n // 2], lambda t: t[:, : n // 2], np.float32
    yield "contiguous a", a, full, a, lambda t: t, np.float32
    row = a[0]
    yield ("broadcast row", row, Layout.contiguous((n,)).broadcast_as((n, n)), np.broadcast_to(row, (n, n)),
           lambda t: t.expand(n, n), np.float32)
    m = max(2, round((n * n // 8) ** 0.5))
    b = rng.standard_normal((m, m, 8), dtype=np.float32)
    yield (f"permute ({m},{m},8) (1,0,2)", b, Layout.contiguous(b.shape).permute((1, 0, 2)), b.transpose(1, 0, 2),
           lambda t: t.permute(1, 0, 2), np.float32)
    yield "f32 -> f16 of a.T", a, full.transpose(0, 1), a.T, lambda t: t.t(), np.float16


class _OneThread:
    """Run a contender with strided on one thread (set outside the timed call)."""

    def __init__(self, f):
        self.f = f

    def __call__(self):
        self.f()

    def before(self):
        self.saved = threads.get_num_threads()
        threads.set_num_threads(1)

    def after(self):
        threads.set_num_threads(self.saved)


def _time(fns: dict, rounds: int, block: int = 3) -> dict:
    """(min, median) milliseconds per call; contenders alternate in blocks of calls."""
    times = {k: [] for k in fns}
    for f in fns.values():  # warm up: numba compiles or loads its cache here
        getattr(f, "before", lambda: None)()
        f()
        getattr(f, "after", lambda: None)()
    for _ in range(rounds):
        for k, f in fns.items():
            getattr(f, "before", lambda: None)()
            time.sleep(0.02)
            for _ in range(block):
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
            getattr(f, "after", lambda: None)()
    return {k: (min(v) * 1e3, float(np.median(v)) * 1e3) for k, v in times.items()}


def _copy_contenders(base, lay, view, tview, ddt):
    n_out = lay.numel
    flat = base.reshape(-1)
    out = np.empty(n_out, ddt)
    dlay = Layout.contiguous(lay.shape)
    out_np = np.empty(view.shape, ddt)
    fns = {
        ("strided", "prealloc"): lambda: copy_into(out, dlay, flat, lay),
        ("strided-1t", "prealloc"): _OneThread(lambda: copy_into(out, dlay, flat, lay)),
        ("numpy", "prealloc"): lambda: np.copyto(out_np, view, casting="unsafe"),
        ("strided", "alloc"): lambda: copy_into(np.empty(n_out, ddt), dlay, flat, lay),
        ("numpy", "alloc"): lambda: np.array(view, dtype=ddt, order="C", copy=True),
    }
    if torch is not None:
        tdt = {np.dtype(np.float32): torch.float32, np.dtype(np.float16): torch.float16}[np.dtype(ddt)]
        tv = tview(torch.from_numpy(base))
        tout = torch.empty(tuple(view.shape), dtype=tdt)
        fns[("torch", "prealloc")] = lambda: tout.copy_(tv)
        fns[("torch", "alloc")] = lambda: tv.to(tdt, memory_format=torch.contiguous_format, copy=True)
    check = lambda: np.array_equal(out.view(np.uint8), np.ascontiguousarray(view, dtype=ddt).reshape(-1).view(np.uint8))
    return fns, check


def _index_contenders(n):
    """Embedding lookup: n/2 random rows (negative indices too) of an (n, n) f32 table."""
    rng = np.random.default_rng(1)
    table = rng.standard_normal((n, n), dtype=np.float32)
    idx = rng.integers(-n, n, n // 2).astype(np.int64)
    lay, dlay = Layout.contiguous((n, n)), Layout.contiguous((n // 2, n))
    flat = table.reshape(-1)
    out = np.empty(dlay.numel, np.float32)
    out_np = np.empty((n // 2, n), np.float32)
    fns = {
        ("strided", "prealloc"): lambda: index_select(out, dlay, flat, lay, 0, idx),
        ("strided-1t", "prealloc"): _OneThread(lambda: index_select(out, dlay, flat, lay, 0, idx)),
        ("numpy", "prealloc"): lambda: np.take(table, idx, axis=0, out=out_np, mode="wrap"),
        ("strided", "alloc"): lambda: index_select(np.empty(dlay.numel, np.float32), dlay, flat, lay, 0, idx),
        ("numpy", "alloc"): lambda: np.take(table, idx, axis=0),
    }
    if torch is not None:
        tt, ti = torch.from_numpy(table), torch.from_numpy(idx % n)
        tout = torch.empty((n // 2, n))
        fns[("torch", "prealloc")] = lambda: torch.index_select(tt, 0, ti, out=tout)
        fns[("torch", "alloc")] = lambda: torch.index_select(tt, 0, ti)
    check = lambda: np.array_equal(out.reshape(n // 2, n), np.take(table, idx, axis=0))
    return fns, check


def _rows(case, n, res):
    out = []
    for mode in ("prealloc", "alloc"):
        for ours in ("strided", "strided-1t"):
            t = res.get((ours, mode))
            if t is None:
                continue
            row = {"case": case, "n": n, "mode": mode, "impl": ours, "ms": round(t[0], 3),
                   "median_ms": round(t[1], 3)}
            for peer in PEERS:
                p = res.get((peer, mode))
                if p is not None:
                    row[f"{peer}_ms"] = round(p[0], 3)
                    row[f"{peer}_median_ms"] = round(p[1], 3)
                    row[f"vs_{peer}"] = round(t[0] / p[0], 3)
                    row[f"vs_{peer}_median"] = round(t[1] / p[1], 3)
            # the targets compare the kernel (prealloc) with the peers' own allocating calls
            if mode == "prealloc":
                for peer in PEERS:
                    p = res.get((peer, "alloc"))
                    if p is not None:
                        row[f"vs_{peer}_alloc"] = round(t[0] / p[0], 3)
            out.append(row)
    return out


def run(sizes=(1024, 2048, 4096), rounds: int | None = None) -> list[dict]:
    """Time each case at each size; one dict per (case, size, mode, strided variant)."""
    rows = []
    for n in sizes:
        r = rounds or (7 if n <= 2048 else 5)
        contenders = [(case, _copy_contenders(base, lay, view, tview, ddt))
                      for case, base, lay, view, tview, ddt in _cases(n)]
        contenders.append(("index_select rows", _index_contenders(n)))
        for case, (fns, check) in contenders:
            res = _time(fns, r)
            if not check():
                raise AssertionError(f"copy_bench: strided disagrees with numpy on {case} at n={n}")
            rows += _rows(case, n, res)
    return rows


def targets(rows: list[dict]) -> list[str]:
    """The issue's targets at the largest size measured, one line each."""
    if not rows:
        return []
    n = max(r["n"] for r in rows)
    out = []
    for impl in ("strided", "strided-1t"):
        sel = {r["case"]: r for r in rows if r["n"] == n and r["mode"] == "prealloc" and r["impl"] == impl}
        t = sel.get("transpose a.T")
        if t and "vs_torch_alloc" in t:
            out.append(f"{impl}: transpose {n}^2 into a buffer / torch a.t().contiguous() = "
                       f"{t['vs_torch_alloc']:.3f} (target <= 0.6)")
        if t:
            out.append(f"{impl}: transpose {n}^2 into a buffer / np.ascontiguousarray(a.T) = "
                       f"{t['vs_numpy_alloc']:.3f} (target <= 0.2)")
        w = sel.get("narrow a[:, :n/2]")
        if w:
            best = min(w.get(f"{p}_ms", float("inf")) for p in PEERS)
            out.append(f"{impl}: narrow {n}^2 / best peer (into a buffer) = {w['ms'] / best:.3f} (target <= 1.1)")
    return out


def format_table(rows: list[dict]) -> str:
    head = (f"{'case':28} {'n':>5} {'mode':8} {'impl':10} {'ms':>8} {'numpy':>8} {'torch':>8} "
            f"{'/numpy':>7} {'/torch':>7} {'/np med':>7} {'/th med':>7}")
    lines = [head, "-" * len(head)]

    def g(r, k, fmt):
        v = r.get(k)
        return format(v, fmt) if v is not None else "-"

    for r in rows:
        lines.append(
            f"{r['case']:28} {r['n']:>5} {r['mode']:8} {r['impl']:10} {g(r, 'ms', '8.3f'):>8} "
            f"{g(r, 'numpy_ms', '8.3f'):>8} {g(r, 'torch_ms', '8.3f'):>8} {g(r, 'vs_numpy', '7.3f'):>7} "
            f"{g(r, 'vs_torch', '7.3f'):>7} {g(r, 'vs_numpy_median', '7.3f'):>7} {g(r, 'vs_torch_median', '7.3f'):>7}"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    sizes = tuple(int(a) for a in argv) or (1024, 2048, 4096)
    peers = f"numpy {np.__version__}, " + (
        f"torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "torch absent")
    print(f"copy_bench: strided with {threads.get_num_threads()} threads; {peers}; "
          f"times in ms (min over calls); ratios < 1 mean strided is faster")
    rows = run(sizes)
    print(format_table(rows))
    print()
    print("\n".join(targets(rows)))


if __name__ == "__main__":
    main()
