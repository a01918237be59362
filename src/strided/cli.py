"""The command line: ``python -m strided {tour,bench,show}``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strided", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="walk the seed experiments live")
    args = parser.parse_args(argv)
    if args.command == "tour":
        from .tour import main as tour

        return tour()
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
