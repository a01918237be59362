"""The command line: ``python -m strided {tour,bench,threads,show,check}``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m strided", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="walk the seed experiments live")
    bench = sub.add_parser("bench", help="time strided against NumPy and PyTorch, each in its own processes")
    bench.add_argument("--quick", action="store_true", help="fewer sizes and rounds (about a minute)")
    bench.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    bench.add_argument("--plot", metavar="FILE.png", help="draw the ratio chart (needs matplotlib)")
    bench.add_argument("--only", metavar="TEXT", help="run only the cases whose name contains TEXT")
    bench.add_argument("--startup", action="store_true", help="measure import time and first-call latency instead")
    bench.add_argument("--sweep", action="store_true",
                       help="twelve op families from 16^2 to 2048^2 against issue 24's target instead")
    bench.add_argument("--fused", action="store_true",
                       help="chains of ops fused by strided.fuse beside eager, NumPy, numexpr and PyTorch instead")
    bench.add_argument("--thresholds", action="store_true",
                       help="each family on one thread and in parallel across sizes instead")
    bench.add_argument("--threads", action="store_true",
                       help="the thread-pool checks instead: op handoffs (strided alone, then beside PyTorch) "
                            "and a 3-layer network")
    bench.add_argument("--one-process", action="store_true",
                       help="time every library in this one process (default: each in its own, alternating)")
    bench.add_argument("--cuda", action="store_true",
                       help="the CUDA device check: correctness on random layouts, then bandwidth vs PyTorch")
    bench.add_argument("--sizes", choices=("full", "small"), default="full",
                       help="with --cuda: 'small' runs only the correctness part on tiny layouts (the simulator can)")
    show = sub.add_parser("show", help="draw a layout: an ASCII grid, and an SVG or PNG picture")
    show.add_argument("layout", help="CuTe text like '(4,(2,4)):(2,(1,8))' or flat text like '(6,5):(10,1)+22'")
    show.add_argument("--buffer", type=int, metavar="N",
                      help="buffer length to draw (default: what the layout reaches)")
    show.add_argument("--buffer-cols", type=int, metavar="K",
                      help="buffer cells per row in the picture (10 draws a 10x10 buffer)")
    show.add_argument("--svg", metavar="FILE", help="write an SVG picture (no dependency)")
    show.add_argument("--png", metavar="FILE", help="write a PNG picture (needs matplotlib)")
    show.add_argument("--tikz", metavar="FILE.tex", help="write the grid as a LaTeX/TikZ document (C++ print_latex)")
    show.add_argument("--colour", choices=("offset", "bank"), default=None,
                      help="colour cells by offset or by shared-memory bank (default: bank for swizzled layouts)")
    show.add_argument("--element-bytes", type=int, default=4, metavar="B", help="element size for banks (default 4)")
    show.add_argument("--tv", metavar="VAL_LAYOUT",
                      help="the layout is the threads; draw make_layout_tv(layout, VAL_LAYOUT), "
                           "thread and value per cell")
    sub.add_parser("threads", help="every thread pool in this process, its size, and the CPUs it may use")
    stubs = sub.add_parser("stubs",
                           help="write src/strided/tensor.pyi, Tensor's whole surface for editors and type checkers")
    stubs.add_argument("--check", action="store_true", help="only say whether the committed stub is up to date")
    check = sub.add_parser("check", help="what candle, NumPy, PyTorch, CuTe and strided do with a layout")
    check.add_argument("layout", help="CuTe text like '(4,(2,4)):(2,(1,8))' or flat text like '(6,5):(10,1)+22'")
    check.add_argument("--op", help="contiguous | reshape(3,8) | matmul | as_strided(100) | elementwise(<layout>)")
    check.add_argument("--json", action="store_true", help="print one JSON object with a key per library")
    args = parser.parse_args(argv)
    if args.command == "check":
        from .check import main as check_main

        return check_main(args.layout, args.op, args.json)
    if args.command == "show":
        return _show(args)
    if args.command == "tour":
        from .tour import main as tour

        return tour()
    if args.command == "stubs":
        from .stubs import main as stubs_main

        return stubs_main(check=args.check)
    if args.command == "threads":
        from ..core.storage import MALLOC_SET
        from ..core.threads import pools_report
        from ..kernels import matmul

        print(pools_report())
        how = {"sequential": "sequential, each gemm on the strided thread that calls it",
               "shared": "on GNU OpenMP threads that are strided's own pool",
               "pinned": "pinned to one thread while strided's gemms run"}[matmul.BLAS_THREADING]
        name = {"numpy": "NumPy's OpenBLAS", "scipy": "scipy's OpenBLAS", "mkl": "MKL"}[matmul.BLAS_LIBRARY]
        print(f"gemm: {name} ({how}; {matmul.BLAS_ENV}=mkl or openblas chooses)")
        kept = ", ".join(f"{k}={v}" for k, v in MALLOC_SET.items())
        how = f"{kept} (set by strided; STRIDED_MALLOC=default leaves glibc alone)" if kept else "the C library's own"
        print(f"malloc: {how}")
        return 0
    if args.command == "bench" and args.threads:
        from .bench.pools import main as pools_main

        return pools_main(quick=args.quick)
    if args.command == "bench" and args.startup:
        from .bench.startup import main as startup_main

        return startup_main()
    if args.command == "bench" and args.fused:
        from .bench.fused_bench import main as fused_main

        return fused_main(quick=args.quick, json_path=args.json)
    if args.command == "bench" and args.thresholds:
        from .bench.thresholds import main as thresholds_main

        return thresholds_main()
    if args.command == "bench" and args.cuda:
        from .bench.cuda_bench import main as cuda_main

        return cuda_main(sizes=args.sizes, json_path=args.json)
    if args.command == "bench" and args.sweep:
        from .bench.sweep import main as sweep_main

        return sweep_main(quick=args.quick, json_path=args.json, plot_path=args.plot, only=args.only,
                          one_process=args.one_process)
    if args.command == "bench":
        from .bench import main as bench_main

        return bench_main(quick=args.quick, json_path=args.json, plot_path=args.plot, only=args.only,
                          one_process=args.one_process)
    parser.error(f"unknown command {args.command}")
    return 2


def _show(args) -> int:
    from . import show
    from ..core.errors import StridedError

    try:
        if args.tv:
            return _show_tv(show, args)
        layout = show.parse_layout(args.layout)
        print(show.ascii_grid(layout))
        if not hasattr(layout, "size"):  # a flat layout: say what the analysis sees
            from ..printing import describe

            print(describe(layout, buffer_len=args.buffer))
        colour = args.colour or ("bank" if show.is_swizzled(layout) else "offset")
        colouring = {"colour": colour, "element_bytes": args.element_bytes}
        if colour == "bank":
            print(show.bank_summary(layout, args.element_bytes))
        if args.svg:
            with open(args.svg, "w") as f:
                f.write(show.svg(layout, args.buffer, args.buffer_cols, **colouring))
            print(f"wrote {args.svg}")
        if args.tikz:
            with open(args.tikz, "w") as f:
                f.write(show.tikz(layout, **colouring))
            print(f"wrote {args.tikz}")
        if args.png:
            show.png(layout, args.png, args.buffer, args.buffer_cols)
            print(f"wrote {args.png}")
    except StridedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _show_tv(show, args) -> int:
    from ..cute import picture

    tiler, tv = show.tv_layout(args.layout, args.tv)
    print(show.tv_text(tiler, tv), end="")
    for path, draw in ((args.svg, picture.tv_svg), (args.tikz, picture.tv_tikz)):
        if path:
            with open(path, "w") as f:
                f.write(draw(tiler, tv))
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
