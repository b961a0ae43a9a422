"""The ``pragmeter`` command.

Each top-level command has a module here whose ``register(subparsers)`` adds its parser and sets ``func`` (``score``
also registers ``distance``, ``eval`` also ``tasks``; ``impscore``, ``classifier``, ``analyze`` and ``generate`` add
a group of actions). Modules here parse arguments, call one library function and print; options that several
commands share are declared once, in ``common.OPTIONS``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys

from pragmeter.version import __version__
from pragmeter.errors import Interrupted, PragmeterError

# Top-level commands in help order (ImpScore use, ImpScore models, benchmarks, classifiers, new data, analyses, the
# upstream data files) -> the module that registers them.
COMMANDS = {"score": "score", "distance": "score", "serve": "serve", "impscore": "impscore", "eval": "eval",
            "tasks": "eval", "classifier": "classifier", "interpret": "interpret", "generate": "generate", "analyze": "analyze", "data": "data"}

# A flag a user guesses on a command that spells its meaning otherwise -> (that command's flag, what each means): the
# usage error names the right one. One flag keeps one meaning: ``--model`` is the model under test, ``--impscore``
# the ImpScore model that scores (common.OPTIONS).
GUESSED_FLAGS = {"--model": ("--impscore", "the ImpScore model that scores is --impscore here (--model names the "
                                           "model under test, in impscore evaluate and eval)")}


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (which option, what is wrong), as every other error of the command."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            command = self._command_parser(parsed)
            known = {flag for action in command._actions for flag in action.option_strings}
            hints = [hint for guess, (flag, hint) in GUESSED_FLAGS.items()
                     if any(arg.partition("=")[0] == guess for arg in unknown) and guess not in known
                     and flag in known]
            command.error("; ".join([f"unrecognized arguments: {' '.join(unknown)}", *hints]))
        return parsed

    def _command_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The (sub)parser of the command ``parsed`` runs: its flags, its name in the error."""
        parser, dest = self, "command"
        while True:
            actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            name = getattr(parsed, dest, None)
            if not actions or name not in actions[0].choices:
                return parser
            parser, dest = actions[0].choices[name], f"{name}_command"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; ``only``: register just that sub-command (a run imports no other command's module)."""
    parser = Parser(
        prog="pragmeter", description="Measure implicit language and how well models understand it.",
        epilog="ImpScore: score, distance, serve, impscore …  Benchmarks: eval, tasks.  Local classifiers: "
               "classifier ….  New data: generate ….  Analyses: analyze ….  Upstream files: data check.  "
               "`pragmeter COMMAND --help` for details.")
    parser.add_argument("--version", action="version", version=f"pragmeter {__version__}")
    parser.add_argument("--verbose", action="store_true",
                        help="show third-party progress bars and messages (model loading); pragmeter's own stay on")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in dict.fromkeys(COMMANDS.values()) if only is None else [only]:
        importlib.import_module(f"pragmeter.cli.{module}").register(subparsers)
    return parser


class _Stderr(logging.Handler):
    """The library's messages (the ``pragmeter`` logger: notes, warnings, what a long step is doing) as lines on
    standard error, looked up when each is written (a test's captured stream, a redirected one)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001  (logging's own rule: a message that cannot be written never stops the run)
            self.handleError(record)


_MESSAGES = _Stderr()


@contextlib.contextmanager
def library_messages():
    """While a command runs it shows the library's messages from INFO up, each as its text alone; after, the
    ``pragmeter`` logger is as the program that called :func:`main` had it."""
    library = logging.getLogger("pragmeter")
    level = library.level
    library.addHandler(_MESSAGES)
    library.setLevel(logging.INFO)
    try:
        yield
    finally:
        library.removeHandler(_MESSAGES)
        library.setLevel(level)


def _output_lock(args: argparse.Namespace):
    """Every command that writes ``--output`` holds its lock for the whole run (pragmeter.io.lock): a second run
    into the same output refuses at once instead of replacing the first one's results."""
    output = getattr(args, "output", None)
    if not output:
        return contextlib.nullcontext()
    from pragmeter.io.lock import output_lock

    return output_lock(output)


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (poll reports an error on its write end)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll here, or standard output is not a file descriptor
        return False


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=COMMANDS.get(argv[0]) if argv else None)  # the named command's module only
    args = parser.parse_args(argv)
    from pragmeter.cli.common import resolve_input

    problem = resolve_input(args)
    if problem:
        where = " ".join(filter(None, [args.command, getattr(args, f"{args.command}_command", None)]))
        print(f"pragmeter {where}: error: {problem} (see pragmeter {where} --help)", file=sys.stderr)
        return 2
    if not args.verbose:  # read by huggingface_hub and transformers when they are imported, later
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    else:  # and by pragmeter.encoders.registry.quiet_loading
        os.environ["PRAGMETER_VERBOSE"] = "1"
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        from pragmeter.cli.common import needed_extras, require_extra

        for extra in needed_extras(args):  # before any work, and before the output is locked (made)
            require_extra(extra)
        with library_messages(), _output_lock(args):
            code = args.func(args)
    except PragmeterError as error:
        from pragmeter.cli.common import command_flags, said

        print(f"pragmeter {args.command}: error: {said(error, command_flags(parser, args))}", file=sys.stderr)
        return 130 if isinstance(error, Interrupted) else 2
    except OSError as error:  # the file system refused (permission, full disk, a folder as a file): one line, no trace
        if isinstance(error, BrokenPipeError) and _reader_gone():
            # standard output's reader stopped reading (`pragmeter score - | head`): stop quietly, as shell tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush must not fail
            return 128 + signal.SIGPIPE
        where = f"{error.filename}: " if error.filename else ""
        print(f"pragmeter {args.command}: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pragmeter {args.command}: interrupted; finished work is kept", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
