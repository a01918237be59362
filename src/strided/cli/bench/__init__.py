"""``python -m strided bench``: strided against NumPy and PyTorch, each in its own processes."""

from __future__ import annotations

import json
import time

from .harness import ONLY, Progress, in_processes, merge, plot, pyplot, run_case, table, to_json


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
    if one_process or ONLY is not None:
        progress = Progress(len(all_cases), enabled=ONLY is None)
        for case in all_cases:
            run_case(case, rounds, per_block, budget)
            progress.step(f"{case.name} {case.size}")
        progress.close()
        how = "all libraries in this process" if ONLY is None else f"{ONLY} alone"
    else:
        argv = (["--quick"] if quick else []) + (["--only", only] if only else [])
        merge(all_cases, in_processes(argv, alternations))
        how = f"each library in its own process, medians of {alternations} alternating runs"
    print(table(all_cases))
    print(f"\n{len(all_cases)} cases in {time.perf_counter() - t0:.1f} s ({how}); ratios are strided's median "
          "over the peer's (lower is better).")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(to_json(all_cases), f, indent=1)
    if plot_path:
        plot(all_cases, plot_path)
    return 0
