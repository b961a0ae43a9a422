"""The ``pragmeter`` command.

Each sub-command lives in its own module of this package with a ``register(subparsers)`` function that
adds its parser and sets ``func``; adding a command is one new module plus one name in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import os
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


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (which option, what is wrong), as every other error of the command."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; ``only``: register just that sub-command (a run imports no other command's module)."""
    parser = Parser(
        prog="pragmeter", description="Measure implicit language and how well models understand it."
    )
    parser.add_argument("--version", action="version", version=f"pragmeter {__version__}")
    parser.add_argument("--verbose", action="store_true",
                        help="show third-party progress bars and messages (model loading); pragmeter's own stay on")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else [only]:
        importlib.import_module(f"pragmeter.cli.{name}").register(subparsers)
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The sub-command module named by the first argument, when there is one (``drinq-nli`` → drinq_nli)."""
    first = argv[0] if argv else ""
    module = first.replace("-", "_")
    return module if module in COMMANDS and not first.startswith("-") else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(only=_command_of(argv))
    args = parser.parse_args(argv)
    if not args.verbose:  # read by huggingface_hub and transformers when they are imported, later
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = args.func(args)
    except PragmeterError as error:
        print(f"pragmeter {args.command}: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"pragmeter {args.command}: interrupted; finished work is kept", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
