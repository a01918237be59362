"""``python -m strided bench``: strided against NumPy and PyTorch, each in its own processes."""

from __future__ import annotations

import time

from .harness import plot, pyplot, save, table, time_cases, to_json


def collect(quick: bool):
    from . import cases

    sizes = (1024, 4096) if quick else (1024, 2048, 4096)
    out = cases.kernel_cases(sizes) + cases.cat_cases() + cases.overhead_cases()
    for extra in ("half_cases", "matmul_cases", "graph_cases"):
        fn = getattr(cases, extra, None)
        if fn is not None:
            out += fn(quick)
    from .windows_bench import window_cases
    from .array_api_bench import array_api_cases

    return out + window_cases(quick) + array_api_cases(quick)


def main(quick: bool = False, json_path: str | None = None, plot_path: str | None = None, only: str | None = None,
         one_process: bool = False, alternations: int = 2) -> int:
    if plot_path:
        pyplot()  # without matplotlib, say so now rather than after the run
    all_cases = collect(quick)
    if only:
        all_cases = [c for c in all_cases if only.lower() in (c.group + " " + c.name).lower()]
    rounds, per_block, budget = (3, 3, 1.5) if quick else (5, 5, 6.0)
    t0 = time.perf_counter()
    argv = (["--quick"] if quick else []) + (["--only", only] if only else [])
    how = time_cases(all_cases, argv, rounds, per_block, budget, one_process, alternations)
    print(table(all_cases))
    print(f"\n{len(all_cases)} cases in {time.perf_counter() - t0:.1f} s ({how}); ratios are strided's median "
          "over the peer's (lower is better).")
    return save(all_cases, json_path, to_json, plot_path, plot)
