"""The ``pragmeter`` command.

Each sub-command lives in its own module of this package with a ``register(subparsers)`` function that
adds its parser and sets ``func``; adding a command is one new module plus one name in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from pragmeter import __version__
from pragmeter.errors import PragmeterError

COMMANDS = [
    "score",
    "distance",
    "corpus",
    "train",
    "evaluate",
    "models",
    "eval",
    "tasks",
    "correlate",
    "serve",
    "generate",
    "profile",
    "stratify",
    "generation_check",
    "report",
    "predict",
    "drinq_nli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pragmeter", description="Measure implicit language and how well models understand it."
    )
    parser.add_argument("--version", action="version", version=f"pragmeter {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"pragmeter.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = args.func(args)
    except PragmeterError as error:
        print(f"pragmeter {args.command}: error: {error}", file=sys.stderr)
        return error.exit_code
    except OSError as error:  # the file system refused (permission, full disk, a folder as a file): one line, no trace
        where = f"{error.filename}: " if error.filename else ""
        print(f"pragmeter {args.command}: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pragmeter {args.command}: interrupted; finished work is kept", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
