"""The ``dpgames`` command line: argument parsing, printing and exit codes only.

Exit codes: 0 success, 2 invalid input (one readable line on stderr, no traceback; set
``DPGAMES_DEBUG=1`` to see the traceback), 1 an unexpected internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from dpgames.scenarios import ScenarioError, run_scenario


class InputError(Exception):
    """Bad input from the command line: reported in one line, exit code 2."""


def _run(args: argparse.Namespace) -> None:
    result = run_scenario(args.file, seed=args.seed)
    text = result.to_json() if args.json else result.format_text()
    print(text)
    if args.out:
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_name(out.name + ".tmp")
            tmp.write_text(result.to_json() + "\n")
            tmp.replace(out)  # atomic: a reader never sees half a file
        except OSError as exc:
            raise InputError(f"--out {args.out}: cannot write ({exc.strerror})") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpgames", description="Mechanism design with differential privacy.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run a scenario file and print its metrics")
    run.add_argument("file", help="scenario file (TOML), e.g. scenarios/digital_goods.toml")
    run.add_argument("--seed", type=_seed, default=None, help="root seed (overrides the file's seed)")
    run.add_argument("--json", action="store_true", help="print the Result as JSON instead of a table")
    run.add_argument("--out", metavar="PATH", help="also write the Result as JSON to PATH")
    run.set_defaults(handler=_run)
    return parser


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except (ScenarioError, InputError, ValueError) as exc:
        if os.environ.get("DPGAMES_DEBUG"):
            raise
        print(f"dpgames: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpgames: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
