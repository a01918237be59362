"""Side-by-side timing of strided, NumPy and PyTorch, each library in its own processes.

A library's thread pool can stall the next library's work in one process (NumPy's
OpenBLAS workers spin for a tenth of a second after a product), so ``in_processes``
runs the bench once per library, ``python -m strided bench ... --lib LIB``, in
alternating processes (strided, NumPy, PyTorch, strided, ...): each case's figure is
the median of the processes' medians, and ``Case.spread`` keeps their lowest and
highest.  Inside a process, ``run_case`` times blocks of calls back to back (with a short pause
between libraries' blocks where several share the process) and reports medians; ratios
are ours over the best peer.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable

LIBS = ("strided", "numpy", "torch")


@dataclass
class Case:
    group: str
    name: str
    size: str
    make: Callable[[], dict]  # returns {lib: zero-argument callable}
    flops: float = 0.0  # for GFLOPS columns
    calls: int = 1  # each callable makes this many calls back to back; results are per call
    results: dict = field(default_factory=dict)  # lib -> median seconds
    spread: dict = field(default_factory=dict)  # lib -> (lowest, highest) over processes


# The one library this process times (``--lib``), or None for all of them in one process.
ONLY = os.environ.get("STRIDED_BENCH_LIB") or None


@functools.cache
def torch_or_none():
    """PyTorch, the optional peer, holding strided's thread count; None when not installed.

    ``torch.set_num_threads`` is called only when the count differs, and once per process:
    even setting the count it already has leaves PyTorch's next small ops taking milliseconds
    each on the 2-core development machine (OpenMP's pool being rebuilt), so calling it per
    case made PyTorch look slow in whole rows of the sweep."""
    if ONLY not in (None, "torch", "torch.compile"):
        return None  # another library's process: PyTorch is not even imported
    try:
        import torch
    except Exception:
        return None
    from ...core.threads import get_num_threads

    if torch.get_num_threads() != get_num_threads():
        torch.set_num_threads(get_num_threads())
    return torch


class Progress:
    """A progress bar through rich or tqdm when installed, a plain counter otherwise."""

    def __init__(self, total: int, enabled: bool = True):
        self.total, self.done, self.enabled = total, 0, enabled and sys.stderr.isatty()
        self._bar = None
        if not self.enabled:
            return
        try:
            from tqdm import tqdm

            self._bar = tqdm(total=total, file=sys.stderr, leave=False)
        except Exception:
            self._bar = None

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_description(label[:40])
            self._bar.update(1)
        else:
            sys.stderr.write(f"\r[{self.done}/{self.total}] {label[:60]:<60}")
            sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            sys.stderr.write("\r" + " " * 80 + "\r")


def _time_block(fn: Callable, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def keep(fns: dict) -> dict:
    """``{lib: fn}`` less the libraries this process does not time (``ONLY``)."""
    return fns if ONLY is None else {lib: fn for lib, fn in fns.items() if lib == ONLY}


def run_case(case: Case, rounds: int, per_block: int, budget_s: float) -> None:
    fns = keep(case.make())
    for fn in fns.values():  # warm-up: compile, fault in pages, fill the buffer pool
        fn()
        fn()
    times = {lib: [] for lib in fns}
    start = time.perf_counter()
    for r in range(rounds):
        for lib, fn in fns.items():
            gc.disable()
            try:
                times[lib] += _time_block(fn, per_block)
            finally:
                gc.enable()
            if len(fns) > 1:  # let this library's pool go quiet before the next one's block
                time.sleep(0.02)
        if r >= 1 and time.perf_counter() - start > budget_s:
            break
    case.results = {lib: statistics.median(ts) / case.calls for lib, ts in times.items()}


def libraries() -> list[str]:
    """The libraries this machine can time: strided and NumPy, and PyTorch when installed."""
    import importlib.util

    return [lib for lib in LIBS if lib != "torch" or importlib.util.find_spec("torch") is not None]


# libgomp's own idle spin (rounds) when neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set.
LIBGOMP_SPIN = "300000"


def process_env(lib: str) -> dict:
    """The environment of a process that times ``lib``: a peer runs as its users run it.

    The bench's own process imported strided, which put its idle spin in the environment
    (``threads.ENV_SET``); a child inherits it, and the child that times PyTorch imports
    strided too.  So a peer's process gets libgomp's default spin back explicitly, a
    setting strided's import then leaves alone, and keeps glibc's malloc settings
    (``STRIDED_MALLOC=default``)."""
    from ...core.threads import ENV_SET

    env = {**os.environ, "STRIDED_BENCH_LIB": lib}
    if lib not in ("strided", "fused"):
        env["STRIDED_MALLOC"] = "default"
        if "GOMP_SPINCOUNT" in ENV_SET:
            env["GOMP_SPINCOUNT"] = LIBGOMP_SPIN
    return env


def in_processes(argv: list[str], alternations: int = 2, libs: list[str] | None = None,
                 firsts: dict | None = None) -> dict:
    """Run ``python -m strided bench *argv --json FILE`` once per library and alternation,
    each in a fresh process that times that library alone (``STRIDED_BENCH_LIB``), the
    libraries alternating.  Returns ``{(group, case, size): {lib: [seconds, ...]}}``.  A
    process may write ``{"rows": [...], "first": [[key, seconds], ...]}``: the first-call
    figures go into ``firsts``, the first process's (the coldest) kept."""
    libs = libs or libraries()
    found: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(alternations):
            for lib in libs:
                path = os.path.join(tmp, f"{lib}-{r}.json")
                run = subprocess.run([sys.executable, "-m", "strided", "bench", *argv, "--json", path],
                                     env=process_env(lib), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if run.returncode != 0:
                    raise SystemExit(f"bench: the {lib} process failed:\n{run.stderr[-2000:]}")
                with open(path) as f:
                    data = json.load(f)
                if isinstance(data, dict):
                    for k, v in data.get("first", []):
                        if firsts is not None:
                            firsts.setdefault(tuple(k), v)
                    data = data["rows"]
                for row in data:
                    for name, secs in row["seconds"].items():
                        found.setdefault((row["group"], row["case"], row["size"]), {}).setdefault(name, []).append(secs)
    return found


def time_here(cases: list, rounds: int, per_block: int, budget_s: float, progress: bool = True) -> None:
    """Time every case in this process (``run_case``), a progress bar on stderr."""
    bar = Progress(len(cases), enabled=progress)
    for case in cases:
        run_case(case, rounds, per_block, budget_s)
        bar.step(f"{case.name} {case.size}")
    bar.close()


def time_cases(cases: list, argv: list[str], rounds: int, per_block: int, budget_s: float, one_process: bool,
               alternations: int) -> str:
    """Time ``cases`` in this process (``one_process``, or in a child run for the library ``ONLY``
    names), else each library in its own processes (``python -m strided bench *argv``), merged
    into ``cases``; says how, for the report."""
    if one_process or ONLY is not None:
        time_here(cases, rounds, per_block, budget_s, progress=ONLY is None)
        return "all libraries in this process" if ONLY is None else f"{ONLY} alone"
    merge(cases, in_processes(argv, alternations))
    return f"each library in its own process, {alternations} alternating runs"


def save(cases: list, json_path: str | None, rows: Callable, plot_path: str | None, draw: Callable) -> int:
    """The end of a bench run: its rows as JSON (``rows(cases)``) and its plot (``draw(cases,
    path)``), each where the command line asked for it; the exit status."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows(cases), f, indent=1)
    if plot_path:
        draw(cases, plot_path)
    return 0


def merge(cases: list[Case], found: dict) -> None:
    """Give each case the median of its processes' figures per library, and their range."""
    for c in cases:
        for lib, values in found.get((c.group, c.name, c.size), {}).items():
            c.results[lib] = statistics.median(values)
            c.spread[lib] = (min(values), max(values))


def ratio(case: Case, peer: str | None = None) -> float | None:
    ours = case.results.get("strided")
    if peer is None:
        peers = [v for k, v in case.results.items() if k != "strided"]
        best = min(peers) if peers else None
    else:
        best = case.results.get(peer)
    if ours is None or not best:
        return None
    return ours / best


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    return f"{s * 1e3:8.2f} ms"


def table(cases: list[Case]) -> str:
    head = (f"{'case':<34} {'size':>10} {'strided':>12} {'numpy':>12} {'torch':>12} "
            f"{'/numpy':>7} {'/torch':>7} {'/best':>7}")
    lines = [head, "-" * len(head)]
    group = None
    for c in cases:
        if c.group != group:
            group = c.group
            lines.append(f"[{group}]")
        r = c.results
        cells = [_fmt_time(r.get(lib)) for lib in LIBS]
        rat = [ratio(c, "numpy"), ratio(c, "torch"), ratio(c)]
        rs = [f"{x:7.2f}" if x is not None else "      -" for x in rat]
        line = f"{c.name:<34} {c.size:>10} {cells[0]:>12} {cells[1]:>12} {cells[2]:>12} {rs[0]} {rs[1]} {rs[2]}"
        if c.flops and r.get("strided"):
            line += f"  {c.flops / r['strided'] / 1e9:7.1f} GFLOPS"
        lines.append(line)
    return "\n".join(lines)


def to_json(cases: list[Case]) -> list[dict]:
    return [
        {
            "group": c.group, "case": c.name, "size": c.size, "seconds": c.results,
            **({"spread": c.spread} if c.spread else {}),
            "ratio_numpy": ratio(c, "numpy"), "ratio_torch": ratio(c, "torch"), "ratio_best": ratio(c),
            **({"gflops": {k: c.flops / v / 1e9 for k, v in c.results.items() if v}} if c.flops else {}),
        }
        for c in cases
    ]


def pyplot():
    """matplotlib's pyplot on the file-only backend; a clear exit, not a traceback, without it
    (matplotlib is an optional dependency)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        raise SystemExit("bench --plot needs matplotlib (pip install 'strided[plot]')")
    return plt


def plot(cases: list[Case], path: str) -> None:
    plt = pyplot()
    rows = [(f"{c.name} {c.size}", ratio(c)) for c in cases if ratio(c) is not None]
    fig, ax = plt.subplots(figsize=(9, 0.28 * len(rows) + 1.2))
    names = [r[0] for r in rows][::-1]
    vals = [r[1] for r in rows][::-1]
    ax.barh(names, vals, color=["#2a9d8f" if v <= 1 else "#e76f51" for v in vals])
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("strided time / best peer time (lower is better)")
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
