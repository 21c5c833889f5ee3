"""The `companion` command: the one composition root.

Every subcommand is registered here; its work lives in the package that owns
it (``companion`` for rules and records, ``vision`` for the camera side).
This is the only module of ``companion`` that may import ``vision``,
``firmware`` and ``web``, and it does so lazily inside the handlers so that
``companion --help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

Handler = Callable[[argparse.Namespace], int]


class CliError(Exception):
    """An error the user can fix; printed as one line, exit status 2."""


# --- rules and records -------------------------------------------------------


def _add_rules_commands(sub: argparse._SubParsersAction) -> None:
    pass


# --- vision ------------------------------------------------------------------


def _add_vision_commands(sub: argparse._SubParsersAction) -> None:
    pass


# --- benchmarks --------------------------------------------------------------


def _add_bench_commands(bench_sub: argparse._SubParsersAction) -> None:
    pass


# --- entry point ---------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser of the `companion` command."""
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Peloton, the table companion for cycling board games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_rules_commands(sub)
    _add_vision_commands(sub)
    bench = sub.add_parser("bench", help="speed and accuracy benchmarks (print medians)")
    bench_sub = bench.add_subparsers(dest="bench", metavar="WHAT")
    bench_sub.required = True
    _add_bench_commands(bench_sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `companion` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except CliError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
