"""``python -m strided bench --sweep``: twelve op families over sizes from 16^2 to 2048^2, f32.

Issue 24's target (which replaced issue 15's), judged cell by cell (one family at one
size):

* below ``SMALL`` elements, where the cost of a call is mostly its fixed overhead,
  strided is to take at most ``SMALL_FACTOR`` times PyTorch's time (the margin a Python
  dispatcher is granted over PyTorch's C++ one);
* from ``SMALL`` elements on, no slower than the faster of NumPy and PyTorch;
* and one op on a 16x16 tensor is to cost at most ``OP_COST_TARGET_S``.

Timing goes through the main bench's harness: each library in its own processes,
alternating (:func:`in_processes`), and inside one :func:`run_case` (blocks, pauses,
medians).  A sample is ``calls`` calls back to back (``Case.calls``; the harness
divides by it), so that the tiny sizes are timed well above the timer's resolution.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...api.sorting import cumulative_sum, sort
from .cases import random_pair, stream
from .harness import Case, keep, pyplot, ratio, save, time_cases, time_here, to_json, torch_or_none

SIZES = (16, 64, 128, 256, 512, 1024, 2048)  # n for n x n tensors
QUICK_SIZES = (16, 256, 1024)
SMALL = 65536  # elements: below, the target is SMALL_FACTOR x PyTorch; from here, the best peer
SMALL_FACTOR = 1.25
OP_COST_TARGET_S = 4e-6  # per op at 16x16
SAMPLE_S = 1e-3  # the shortest timed sample we aim for
MAX_CALLS = 1 << 14
MAX_SAMPLE_FACTOR = 20  # the slowest library's sample: at most this many times SAMPLE_S
GROUP = "sweep, f32"


@dataclass(frozen=True)
class Family:
    """One op, written three times: on strided tensors, NumPy arrays and torch tensors.
    Each takes ``(a, b, bias)``: two n x n operands and a length-n row vector."""

    name: str
    ours: Callable
    numpy: Callable
    torch: Callable
    max_n: int = SIZES[-1]


FAMILIES = (
    Family("a + b", lambda a, b, c: a + b, lambda a, b, c: a + b, lambda a, b, c: a + b),
    Family("a + bias", lambda a, b, c: a + c, lambda a, b, c: a + c, lambda a, b, c: a + c),
    Family("a + b.t()", lambda a, b, c: a + b.t(), lambda a, b, c: a + b.T, lambda a, b, c: a + b.t()),
    Family("a.exp()", lambda a, b, c: a.exp(), lambda a, b, c: np.exp(a), lambda a, b, c: a.exp()),
    Family("a.t().relu()", lambda a, b, c: a.t().relu(), lambda a, b, c: np.maximum(a.T, 0),
           lambda a, b, c: a.t().relu()),
    Family("a.sum(0)", lambda a, b, c: a.sum(0), lambda a, b, c: a.sum(0), lambda a, b, c: a.sum(0)),
    Family("a.sum(1)", lambda a, b, c: a.sum(1), lambda a, b, c: a.sum(1), lambda a, b, c: a.sum(1)),
    Family("a.t().contiguous()", lambda a, b, c: a.t().contiguous(), lambda a, b, c: np.ascontiguousarray(a.T),
           lambda a, b, c: a.t().contiguous()),
    Family("a[::2, 1::3].contiguous()", lambda a, b, c: a[::2, 1::3].contiguous(),
           lambda a, b, c: np.ascontiguousarray(a[::2, 1::3]), lambda a, b, c: a[::2, 1::3].contiguous()),
    # 2048^2 matmul would dominate the sweep's time; 1024^2 is already past every cache.
    Family("a @ b", lambda a, b, c: a @ b, lambda a, b, c: a @ b, lambda a, b, c: a @ b, max_n=1024),
    Family("cumulative_sum(a, axis=1)", lambda a, b, c: cumulative_sum(a, axis=1), lambda a, b, c: np.cumsum(a, 1),
           lambda a, b, c: a.cumsum(1)),
    # the peers' sorts of 1024^2 and up (40-300 ms a call) would dominate the sweep's time
    Family("sort(a, axis=1)", lambda a, b, c: sort(a, axis=1), lambda a, b, c: np.sort(a, 1, kind="stable"),
           lambda a, b, c: a.sort(dim=1, stable=True).values, max_n=512),
)


@dataclass
class SweepCase(Case):
    n: int = 0

    @property
    def elements(self) -> int:
        return self.n * self.n


def build(family: Family, n: int) -> dict:
    """``{lib: zero-argument callable}``, one call of the family's op each, on the same data.
    The sweep times exactly these callables, and the test compares their results."""
    import strided as sd

    a_np, b_np = random_pair(n)
    bias_np = a_np[0].copy()
    a, b, bias = sd.from_numpy(a_np), sd.from_numpy(b_np), sd.from_numpy(bias_np)
    fns = {"strided": lambda: family.ours(a, b, bias), "numpy": lambda: family.numpy(a_np, b_np, bias_np)}
    torch = torch_or_none()
    if torch is not None:
        a_t, b_t, bias_t = (torch.from_numpy(x) for x in (a_np, b_np, bias_np))
        fns["torch"] = lambda: family.torch(a_t, b_t, bias_t)
    return keep(fns)


def calls_for(fns, sample_s: float = SAMPLE_S) -> int:
    """Calls per timed sample: enough that the fastest library's sample lasts about
    ``sample_s``, so every library's lasts at least that.  The cost of one call differs by
    orders of magnitude between families, sizes and machines, so it is read off single calls
    (each library's fastest of three, after a compiling first one) instead of guessed from n.

    The slowest library's sample is held to ``MAX_SAMPLE_FACTOR`` times ``sample_s``: where
    one library is far slower than another, sizing for the fast one would stretch the sweep
    many times over, and a sample that long is well above the timer anyway."""
    single = []
    for fn in fns:
        fn()
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        single.append(max(best, 1e-9))
    calls = math.ceil(sample_s / min(single))
    return max(1, min(calls, MAX_CALLS, int(MAX_SAMPLE_FACTOR * sample_s / max(single))))


def sweep_cases(sizes=SIZES, families=FAMILIES, sample_s: float = SAMPLE_S) -> list[SweepCase]:
    cases = []
    for family in families:
        for n in sizes:
            if n > family.max_n:
                continue
            case = SweepCase(GROUP, family.name, f"{n}^2", make=None, n=n)

            def make(case=case, family=family, n=n):
                fns = build(family, n)
                case.calls = calls_for(fns.values(), sample_s)  # run_case divides the medians by it
                return {lib: stream(fn, case.calls) for lib, fn in fns.items()}

            case.make = make
            cases.append(case)
    return cases


def run(sizes=SIZES, rounds: int = 5, per_block: int = 5, budget_s: float = 3.0, families=FAMILIES,
        progress: bool = True, sample_s: float = SAMPLE_S) -> list[SweepCase]:
    """Time every cell; ``sample_s`` below the default only makes sense for a smoke test."""
    cases = sweep_cases(sizes, families, sample_s)
    time_here(cases, rounds, per_block, budget_s, progress)
    return cases


def meets_target(case: SweepCase) -> bool | None:
    """Whether the cell meets issue 24's target; None when it cannot be judged (no PyTorch)."""
    r = case.results
    ours, torch = r.get("strided"), r.get("torch")
    if ours is None or torch is None:
        return None
    if case.elements < SMALL:
        return ours <= SMALL_FACTOR * torch
    return ours <= min(torch, r.get("numpy", math.inf))


def _us(s: float | None) -> str:
    if s is None:
        return "-"
    us = s * 1e6
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:.0f}"


def _rat(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


_MARK = {True: "yes", False: "**no**", None: "-"}


def report(cases: list[SweepCase]) -> str:
    """The sweep as markdown: one row per (family, size), the target tally, then the
    per-op cost at 16x16."""
    lines = [
        "| op | size | elements | strided us | strided range | NumPy us | PyTorch us | / PyTorch | / best | target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        r = c.results
        lo, hi = c.spread.get("strided", (None, None))
        span = "-" if lo is None else f"{_us(lo)}-{_us(hi)}"
        lines.append(f"| {c.name} | {c.size} | {c.elements} | {_us(r.get('strided'))} | {span} | {_us(r.get('numpy'))} "
                     f"| {_us(r.get('torch'))} | {_rat(ratio(c, 'torch'))} | {_rat(ratio(c))} "
                     f"| {_MARK[meets_target(c)]} |")
    judged = [m for m in map(meets_target, cases) if m is not None]
    lines.append("")
    if judged:
        lines.append(f"{sum(judged)} of {len(judged)} cells meet the target "
                     f"(below {SMALL} elements: strided <= {SMALL_FACTOR:g} x PyTorch; "
                     f"from {SMALL}: strided <= min(NumPy, PyTorch)).")
    else:
        lines.append("PyTorch is not installed: the target cannot be judged.")
    tiny = [c for c in cases if c.n == 16]
    if tiny:
        limit = OP_COST_TARGET_S * 1e6
        lines += ["", f"Per-op cost at 16x16 (target: strided at most {limit:g} us):", "",
                  "| op | strided us | NumPy us | PyTorch us | <= target |", "|---|---|---|---|---|"]
        for c in tiny:
            ours = c.results.get("strided")
            ok = None if ours is None else ours <= OP_COST_TARGET_S
            lines.append(f"| {c.name} | {_us(ours)} | {_us(c.results.get('numpy'))} "
                         f"| {_us(c.results.get('torch'))} | {_MARK[ok]} |")
        met = sum(1 for c in tiny if c.results.get("strided", math.inf) <= OP_COST_TARGET_S)
        lines += ["", f"{met} of {len(tiny)} families cost at most {limit:g} us per op at 16x16."]
    return "\n".join(lines)


def json_rows(cases: list[SweepCase]) -> list[dict]:
    return [{**row, "n": c.n, "elements": c.elements, "calls": c.calls, "meets_target": meets_target(c)}
            for row, c in zip(to_json(cases), cases)]


def plot(cases: list[SweepCase], path: str) -> None:
    """Ratio to the best peer against element count, one line per family; below the line at
    1, strided is the fastest of the three."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    for name in dict.fromkeys(c.name for c in cases):
        pts = [(c.elements, ratio(c)) for c in cases if c.name == name and ratio(c) is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", ms=3, lw=1.2, label=name)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axvline(SMALL, color="grey", lw=0.6, ls=":")  # where the target switches from PyTorch to the best peer
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # ratios: 2x slower and 2x faster sit the same distance from 1
    ax.set_xlabel("elements per operand (n x n)")
    ax.set_ylabel("strided time / best peer time (lower is better)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(quick: bool = False, json_path: str | None = None, plot_path: str | None = None, only: str | None = None,
         one_process: bool = False, alternations: int = 2) -> int:
    families = [f for f in FAMILIES if not only or only.lower() in f.name.lower()]
    if not families:
        raise SystemExit(f"bench --sweep: no family matches {only!r}")
    if plot_path:
        pyplot()  # without matplotlib, say so now rather than after the sweep
    sizes, rounds, per_block, budget = (QUICK_SIZES, 2, 3, 0.5) if quick else (SIZES, 5, 5, 3.0)
    t0 = time.perf_counter()
    cases = sweep_cases(sizes, families)
    argv = ["--sweep"] + (["--quick"] if quick else []) + (["--only", only] if only else [])
    how = time_cases(cases, argv, rounds, per_block, budget, one_process, alternations)
    print(report(cases))
    print(f"\n{len(cases)} cells in {time.perf_counter() - t0:.1f} s ({how}); times are medians per call (the "
          "strided range: over the runs), ratios strided's median over the peer's (lower is better).")
    return save(cases, json_path, json_rows, plot_path, plot)
