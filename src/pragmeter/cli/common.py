"""Options shared by several commands, each declared once in ``OPTIONS`` and added by name (:func:`add`), so every
command spells it the same way and it means one thing everywhere.

``--model`` is always the model under test (a chat backend, a classifier folder, or the ImpScore model that
``impscore evaluate`` checks); ``--impscore`` is the ImpScore model used as the instrument (scoring, profiles,
stratification); ``--cache``/``--no-cache`` are the embedding cache, ``--response-cache``/``--no-response-cache``
the LLM response cache.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from pragmeter.encoders.runtime import BACKEND_CHOICES, PRECISIONS, device_problem, precision_with_dtype
from pragmeter.errors import InvalidParameter, OutputExists, PragmeterError, spelled

# Exit status of a run that wrote its output but some requests failed after every retry (eval, generate): the output
# is marked incomplete, and the same command again asks only what failed.
INCOMPLETE = 3


def at_least(kind: type, minimum: float, expected: str, strict: bool = False):
    """An argparse type: a finite number of ``kind`` that is >= ``minimum`` (> with ``strict``); else the usage
    error "EXPECTED, got VALUE"."""
    def parse(value: str):
        try:
            number = kind(value)
        except ValueError:
            number = None
        # NaN and infinity are refused too: a NaN learning rate trains a model whose every score is missing
        if number is None or not math.isfinite(number) or not (number > minimum if strict else number >= minimum):
            raise argparse.ArgumentTypeError(f"{expected}, got {value!r}")
        return number

    return parse


positive_int = at_least(int, 1, "must be a whole number >= 1")  # batch sizes and counts
non_negative_float = at_least(float, 0, "expected a number >= 0")  # loss weights
positive_float = at_least(float, 0, "expected a number > 0", strict=True)  # learning rates
non_negative_int = at_least(int, 0, "must be a whole number >= 0")  # counts where 0 means none, seeds


def torch_device(value: str) -> str:
    """argparse type of --device: a torch device that this machine has (checked before any work starts)."""
    problem = device_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


MODEL_ARGS_HELP = ("KEY=VALUE pairs, comma-separated: base_url, model, api_key_env, temperature, max_tokens, seed, "
                   "top_p, concurrency, timeout, max_retries (gguf: also threads, ctx_size, parallel)")
SWITCH = {"action": "store_true"}
# name -> (flag, add_argument keywords): the spelling, type, default and meaning of each shared option. A command may
# narrow the help or change the default (``add(parser, seed={"help": ...})``), never the meaning.
OPTIONS: dict[str, tuple[str, dict]] = {
    "output": ("--output", {"help": "file or folder to write"}),
    "overwrite": ("--overwrite", {**SWITCH, "help": "replace output files that exist"}),
    "no_progress": ("--no-progress", {**SWITCH, "help": "no progress bar"}),
    "limit": ("--limit", {"type": positive_int, "help": "first N items only"}),
    "data_root": ("--data-root", {"help": "folder with the upstream data files (default: $PRAGMETER_DATA, else "
                                          "../shared/data)"}),
    "seed": ("--seed", {"type": non_negative_int, "default": 0, "help": "random seed (default %(default)s)"}),
    "column": ("--column", {"default": "text", "help": "text column (default %(default)s)"}),
    "encoder": ("--encoder", {"default": "all-MiniLM-L6-v2",
                              "help": "sentence encoder: packaged name, folder or hub name (default %(default)s)"}),
    "batch_size": ("--batch-size", {"type": positive_int, "help": "texts per torch encoder batch (default 16 on a CPU, "
                                    "1024 on a GPU; the openvino and onnx backends batch by token count instead)"}),
    "device": ("--device", {"type": torch_device, "help": "torch device, e.g. cpu or cuda (default: best available)"}),
    "backend": ("--backend", {"choices": BACKEND_CHOICES, "default": "auto", "help": "how the encoder runs (default "
                              "auto: OpenVINO on a CPU, torch on a GPU --device; onnx: ONNX Runtime, needs the 'onnx' "
                              "extra; onnx-int8 is refused as --precision int8 is: outside the bounds)"}),
    "precision": ("--precision", {
        "choices": PRECISIONS, "default": "auto",
        "help": "encoder precision (default auto: bf16 where the CPU has AVX-512 BF16 or AMX and the encoder's bf16 "
                "scores are within bounds (MiniLM), else fp32; fp16: torch on a GPU; recorded in every signature; int8 "
                "is refused: outside the bounds)"}),
    "dtype": ("--dtype", {"choices": ["float32", "float16", "bfloat16"],
                          "help": "torch encoder precision (default: float16 on a GPU, float32 on a CPU)"}),
    "impscore": ("--impscore", {"help": "ImpScore model: shipped name or model folder (default: the shipped default)"}),
    "model": ("--model", {"help": "ImpScore model under test: shipped name or model folder (default: the shipped "
                                  "default)"}),
    "cache": ("--cache", {"help": "embedding cache folder (default: $PRAGMETER_CACHE/embeddings)"}),
    "no_cache": ("--no-cache", {**SWITCH, "help": "do not reuse or store embeddings on disk"}),
    "llm": ("--model", {"default": "openai-chat", "help": "backend of the model under test (default openai-chat); "
                        "gguf:FILE_OR_NAME runs a local GGUF model with llama.cpp, local:FOLDER a fine-tuned "
                        "classifier"}),
    "model_args": ("--model-args", {"default": "", "help": MODEL_ARGS_HELP}),
    "response_cache": ("--response-cache", {"help": "LLM response cache file (default OUTPUT/cache/responses.jsonl)"}),
    "no_response_cache": ("--no-response-cache", {**SWITCH, "help": "neither read nor write the response cache"}),
}
RUNTIME = ("backend", "precision")  # how ImpScore's encoder runs, on every command that scores
# How a classifier folder runs, on every command that opens one to classify (interpret, classifier predict):
# pragmeter.classify.opening.open_classifier's backend, precision and device, as the local: backend's model arguments
CLASSIFIER_RUNTIME = {
    "device": {"help": "torch device, e.g. cpu or cuda (default: cuda when available where the model runs through "
                       "torch: --backend torch, or a classifier other than an interpreter)"},
    "backend": {"choices": ["auto", "openvino", "torch"],
                "help": "how an interpreter runs (default auto: OpenVINO on a CPU, converted once per model; torch on "
                        "a GPU --device); other classifiers run through torch"},
    "precision": {"choices": ["auto", "fp32", "bf16", "fp16"],
                  "help": "auto (default): on a CPU bf16 where it has AVX-512 BF16 or AMX and the model's bf16 check "
                          "is within bounds, else fp32; fp16 on a CUDA device; fp16: torch on a GPU only"},
}
INSTRUMENT = ("impscore", "batch_size", "device", *RUNTIME)  # --impscore with its encoder settings


def add(parser: argparse.ArgumentParser, *names: str, **overrides: dict) -> None:
    """Add the shared options ``names`` as declared, then those of ``overrides`` (name -> keywords replacing the
    declared ones, e.g. ``seed={"help": "bootstrap seed"}``)."""
    for name, override in [*((name, {}) for name in names), *overrides.items()]:
        flag, keywords = OPTIONS[name]
        parser.add_argument(flag, **{**keywords, **override})


def add_input_option(parser: argparse.ArgumentParser, help: str, required: bool = True,
                     legacy_positional: bool = True) -> None:
    """``--input``, as on every command that reads one file or folder. The positional form these commands used
    to take is still accepted until 2027-03-01 (hidden; :func:`resolve_input` says the new form; CHANGELOG.md)."""
    parser.add_argument("--input", help=help + (" (required)" if required else ""))
    if legacy_positional:
        parser.add_argument("input_positional", nargs="?", default=None, help=argparse.SUPPRESS)
    parser.set_defaults(input_required=required)


def resolve_input(args: argparse.Namespace) -> str | None:
    """Fold an old-style positional input into ``args.input``; None, or the usage error to report."""
    legacy = getattr(args, "input_positional", None)
    if legacy is not None:
        if args.input is not None:
            return f"give the input once: --input {args.input} (extra argument {legacy!r})"
        print(f"pragmeter: a positional input is deprecated; use --input {legacy}", file=sys.stderr)
        args.input = legacy
    if getattr(args, "input_required", False) and args.input is None:
        return "the following arguments are required: --input"
    return None


def add_group(subparsers, name: str, help: str, description: str, *actions) -> None:
    """A command group (``impscore``, ``classifier``, ``analyze``): each of ``actions`` adds one action's parser."""
    parser = subparsers.add_parser(name, help=help, description=description)
    group = parser.add_subparsers(dest=f"{name}_command", metavar="ACTION", required=True)
    for add_action in actions:
        add_action(group)


def response_cache(args: argparse.Namespace, default: Path) -> Path | None:
    """The LLM response cache file that ``--response-cache``/``--no-response-cache`` name (``default`` unless given)."""
    return None if args.no_response_cache else Path(args.response_cache) if args.response_cache else default


# The optional dependencies (pyproject.toml's extras) -> the modules each must find. A command checks what it needs
# when it starts (:func:`needed_extras`, checked by ``main`` before any work), not when it first imports a module.
EXTRAS = {"harness": ("httpx",), "llm": ("xllamacpp", "httpx"), "classify": ("transformers", "sklearn"),
          "generate": ("httpx", "sklearn"), "serve": ("fastapi", "uvicorn"), "analysis": ("matplotlib",)}
# Command path -> the extra it always needs (the analyses that draw a plot, the local classifiers, the HTTP service,
# the data pipelines).
COMMAND_EXTRAS = {"serve": "serve", "analyze profile": "analysis", "analyze stratify": "analysis",
                  "analyze generation-check": "analysis", "classifier train": "classify",
                  "classifier predict": "classify", "classifier drinq-nli": "classify",
                  **{f"generate {name}": "generate" for name in ("pairs", "graded", "inli", "drinq", "agreement",
                                                                 "inli-hypothesis-baseline")}}
# The chat backend of ``--model``/``--judge-model`` (the part before ':') -> the extra it runs on, for the commands
# that ask a chat model to answer benchmark items.
BACKEND_EXTRAS = {"openai-chat": "harness", "gguf": "llm", "local": "classify"}
BACKEND_COMMANDS = ("eval", "analyze generation-check")


def command_path(args: argparse.Namespace) -> str:
    """The command the parsed ``args`` run, e.g. ``analyze profile``."""
    return " ".join(filter(None, [args.command, getattr(args, f"{args.command}_command", None)]))


def needed_extras(args: argparse.Namespace) -> list[str]:
    """The extras the parsed command needs: its own (COMMAND_EXTRAS) and its chat backends' (BACKEND_EXTRAS)."""
    path = command_path(args)
    extras = [COMMAND_EXTRAS[path]] if path in COMMAND_EXTRAS else []
    if path in BACKEND_COMMANDS:
        backends = [getattr(args, name, None) for name in ("model", "judge_model")]
        extras += [BACKEND_EXTRAS[spec.partition(":")[0]] for spec in backends
                   if spec and spec.partition(":")[0] in BACKEND_EXTRAS]
    return list(dict.fromkeys(extras))


def require_extra(extra: str) -> None:
    """A PragmeterError (one line, exit 2) naming the install command when a module of ``extra`` is not installed."""
    from importlib.util import find_spec

    from pragmeter.errors import PragmeterError

    missing = [module for module in EXTRAS[extra] if find_spec(module) is None]
    if missing:
        raise PragmeterError(f"this needs the '{extra}' extra ({', '.join(missing)} is not installed): "
                             f'pip install -e ".[{extra}]" in the checkout (or pip install "pragmeter[{extra}]")')


def load_chat_backend(spec: str, model_args: str, **defaults: str):
    """The chat backend ``--model``/``--model-args`` name (``defaults``: model arguments unless given)."""
    from pragmeter.llm.backends import load_backend, parse_model_args

    return load_backend(spec, {**defaults, **parse_model_args(model_args)})


def load_model(args: argparse.Namespace, cache: bool = False):
    """The ImpScore model the command's flags name (``--impscore`` where it is the instrument, else ``--model``), run
    as ``--backend``/``--precision`` say (default auto: the fast path of this machine); ``cache``: with the on-disk
    embedding cache."""
    from pragmeter.impscore.model import ImpScore

    option = {name: getattr(args, name, None) for name in ("backend", "precision", "device", "batch_size", "dtype")}
    # --dtype is torch's spelling of a precision
    precision = precision_with_dtype(option["precision"] or "auto", option["dtype"])
    return ImpScore.load(args.impscore if hasattr(args, "impscore") else args.model,
                         backend=option["backend"] or "auto", precision=precision, device=option["device"],
                         batch_size=option["batch_size"], cache=cache or None)


# Library parameters that a command's option of another name sets.
PARAMETER_ALIASES = {"root": "data_root", "n_pairs": "pairs", "task_args": "task_arg"}


def command_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, tuple[str, bool]]:
    """The options of the command ``args`` ran (its group's and action's parsers included): destination -> (its
    long flag, whether it is a switch)."""
    flags: dict[str, tuple[str, bool]] = {}
    parsers = [parser]
    while parsers:
        for action in parsers.pop()._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(args, action.dest, None) or "")
                parsers += [chosen] if chosen is not None else []
            elif action.option_strings and action.help != argparse.SUPPRESS:
                flag = max(action.option_strings, key=len)
                flags.setdefault(action.dest, (flag, action.nargs == 0))
    return flags


def said(error: PragmeterError, flags: dict[str, tuple[str, bool]]) -> str:
    """``error``'s message as the running command says it: an :class:`~pragmeter.errors.InvalidParameter` names each
    parameter it is about (``.name``, ``.also``) as the flag that sets it (``flags``, from :func:`command_flags`: the
    option whose destination is the parameter, or the flag of its name; ``--precision bf16``, a switch as
    ``--overwrite``), or as the library does where the command has no such flag; an
    :class:`~pragmeter.errors.OutputExists` says ``--overwrite``; any other error is said as it is."""
    by_flag = {flag: (flag, switch) for flag, switch in flags.values()}

    def flag_of(name: str) -> tuple[str, bool] | None:  # the option that sets it, or the flag named as it is
        return (flags.get(name) or flags.get(PARAMETER_ALIASES.get(name, ""))
                or by_flag.get("--" + name.replace("_", "-")))

    def spell(name: str, value) -> str:
        found = flag_of(name)
        if found is None:
            return spelled(name, value)
        flag, switch = found
        return flag if switch or value is InvalidParameter.ALONE else f"{flag} {value}"

    if isinstance(error, InvalidParameter):
        return error.said(spell)
    if isinstance(error, OutputExists) and flag_of("overwrite"):
        return f"{error.path} {error.what}; pass {flag_of('overwrite')[0]} to replace it"
    return str(error)
