"""The command line: ``python -m strided {tour,bench,show}``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strided", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="walk the seed experiments live")
    bench = sub.add_parser("bench", help="time strided against NumPy and PyTorch in one process")
    bench.add_argument("--quick", action="store_true", help="fewer sizes and rounds (about a minute)")
    bench.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    bench.add_argument("--plot", metavar="FILE.png", help="draw the ratio chart (needs matplotlib)")
    bench.add_argument("--only", metavar="TEXT", help="run only the cases whose name contains TEXT")
    args = parser.parse_args(argv)
    if args.command == "tour":
        from .tour import main as tour

        return tour()
    if args.command == "bench":
        from .bench import main as bench_main

        return bench_main(quick=args.quick, json_path=args.json, plot_path=args.plot, only=args.only)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
