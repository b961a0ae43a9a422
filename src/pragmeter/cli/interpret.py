"""``pragmeter interpret``: which reading of an utterance in its context is meant, by the interpreter (an INLI pair
classifier: :class:`pragmeter.interpreter.model.Interpreter`); ``pragmeter interpret ship`` releases a trained run
in the shipped form, ``pragmeter interpret export`` writes an interpreter as a sentence-transformers CrossEncoder
folder, or with ``--format peft`` a shipped one as a peft LoRA adapter."""

from __future__ import annotations

import argparse
import json
import sys

from pragmeter.cli.common import CLASSIFIER_RUNTIME, add
from pragmeter.errors import PragmeterError
from pragmeter.text import is_blank

ACTIONS = ("ship", "export")  # first words that name an action instead of an utterance
EXPORT_FORMATS = ("crossencoder", "peft")  # the forms `interpret export` writes


def _with_actions(parser: argparse.ArgumentParser, actions: dict) -> None:
    """``parser`` reads an action's arguments when the first word names one of ``actions`` (name -> parser), its own
    otherwise: ``pragmeter interpret UTTERANCE …`` and ``pragmeter interpret ship RUN …`` share one command."""
    own = parser.parse_known_args

    def parse_known_args(args=None, namespace=None):
        if args and args[0] in actions:
            return actions[args[0]].parse_known_args(args[1:], namespace)
        return own(args, namespace)

    parser.parse_known_args = parse_known_args


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "interpret", help="which reading of an utterance in context is meant (the local interpreter); "
                          "interpret ship / export: release an interpreter",
        epilog="Actions: `pragmeter interpret ship RUN --output FOLDER` (a trained run in the shipped form), "
               "`pragmeter interpret export --output FOLDER` (whole weights a CrossEncoder opens); see "
               "`pragmeter interpret ship --help`.",
        description="Score each --reading as what the speaker meant by UTTERANCE in --context: P(implied) + "
                    "w P(explicit) of INLI's four labels (w: --explicit-weight, else the model's, 1 unless it "
                    "records one), the premise being the context followed by the quoted "
                    "utterance; prints each reading's score and label probabilities, the chosen one marked. With "
                    "--input: a table of premise/hypothesis rows (label probabilities and the label) or of "
                    "context/utterance/readings rows (readings: a JSON list; adds the chosen index and the scores), "
                    "written to --output with every input column kept.")
    parser.add_argument("utterance", nargs="?", help="what was said")
    parser.add_argument("--context", default="", help="the situation in which it was said (who speaks to whom, "
                                                      "what came before)")
    parser.add_argument("--reading", action="append", default=[], help="a candidate reading (give two or more)")
    parser.add_argument("--input", help="table to interpret (csv, tsv, jsonl, parquet)")
    add(parser, output={"help": "output file of --input (format from its extension)"},
        overwrite={"help": "replace --output if it exists"},
        model={"help": "interpreter: packaged name or model folder (default: the packaged default, or "
                       "$PRAGMETER_INTERPRETER)"},
        batch_size={"default": 64, "help": "pairs per batch (default 64)"}, **CLASSIFIER_RUNTIME)
    add(parser, "no_progress")
    parser.add_argument("--explicit-weight", type=explicit_weight, default=None,
                        help="weight on P(explicit) in a reading's score, 0 to 1 (default: the model's, 1 unless its "
                             "folder records one)")
    parser.set_defaults(func=run)
    _with_actions(parser, {"ship": _ship_parser(type(parser)), "export": _export_parser(type(parser))})


def _ship_parser(kind) -> argparse.ArgumentParser:
    from pragmeter.interpreter.shipped import DEFAULT_RANK

    parser = kind(prog="pragmeter interpret ship",
                  description="Release the `pragmeter classifier train inli` folder RUN as the shipped form: low-rank "
                              "factors of each encoder matrix's change over its base encoder plus the classification "
                              "layer, the rank chosen on INLI validation among --rank, bf16 checked against fp32, "
                              "the card (with Hub front matter) and metrics.json written to --output. Prints a JSON "
                              "summary.")
    parser.add_argument("run", help="a `pragmeter classifier train inli` output folder")
    add(parser, "data_root", "no_progress", output={"required": True, "help": "the shipped interpreter's folder"},
        overwrite={"help": "replace --output if it exists"},
        limit={"help": "first N validation and test pairs only"},
        batch_size={"default": 64, "help": "pairs per batch (default 64)"})
    parser.add_argument("--rank", type=parse_ranks, default=[DEFAULT_RANK],
                        help=f"rank of the shipped factors, or comma-separated ranks: the best on validation ships "
                             f"(default {DEFAULT_RANK})")
    parser.add_argument("--evaluate-test", action="store_true", help="test the shipped interpreter once on INLI test")
    parser.add_argument("--bf16-pairs", type=int, default=4096,
                        help="validation pairs of the bf16 check (0: not checked, so `auto` runs it in fp32)")
    parser.set_defaults(func=run_ship, command="interpret", interpret_command="ship")
    return parser


def _export_parser(kind) -> argparse.ArgumentParser:
    parser = kind(prog="pragmeter interpret export",
                  description="Write an interpreter (--model: packaged name, model folder, or an NLI cross-encoder's "
                              "Hub name) as whole fp32 weights with its tokenizer and card: a folder that "
                              "sentence_transformers.CrossEncoder opens, giving the same probabilities with "
                              "predict(pairs, apply_softmax=True), and that --model accepts. With --format peft: a "
                              "shipped interpreter's low-rank changes as a peft LoRA adapter (adapter_config.json, "
                              "adapter_model.safetensors) over its base encoder, which --model accepts too.")
    add(parser, "no_progress", output={"required": True, "help": "folder to write"},
        overwrite={"help": "replace --output if it exists"},
        model={"help": "interpreter: packaged name, model folder or Hub name (default: the packaged default)"})
    parser.add_argument("--format", choices=EXPORT_FORMATS, default=EXPORT_FORMATS[0],
                        help="the folder's form: crossencoder (default: whole weights) or peft (a LoRA adapter over "
                             "the base encoder; a shipped interpreter only)")
    parser.set_defaults(func=run_export, command="interpret", interpret_command="export")
    return parser


def explicit_weight(value: str) -> float:
    """The ``--explicit-weight`` argument type: a number from 0 to 1."""
    from pragmeter.classify.model import parse_explicit_weight

    try:
        return parse_explicit_weight(value)
    except PragmeterError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_ranks(value: str) -> list[int]:
    """"16,32,64" -> [16, 32, 64] (each at least 1): the ``--rank`` argument type of shipping an interpreter."""
    try:
        ranks = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"ranks are whole numbers separated by commas, not {value!r}") from None
    if not ranks or min(ranks) < 1:
        raise argparse.ArgumentTypeError(f"ranks must be at least 1, got {value!r}")
    return ranks


def _check_output(args: argparse.Namespace) -> None:
    from pathlib import Path

    if Path(args.output).exists() and not args.overwrite:
        raise PragmeterError(f"{args.output} exists; give --overwrite to replace it")


def run_ship(args: argparse.Namespace) -> int:
    from pragmeter.interpreter.release import ship_run

    _check_output(args)
    if args.bf16_pairs < 0:
        raise PragmeterError(f"--bf16-pairs must be 0 or more, got {args.bf16_pairs}")
    summary = ship_run(args.run, args.output, args.rank, args.data_root, args.evaluate_test, args.bf16_pairs,
                       args.limit, args.batch_size, not args.no_progress)
    print(json.dumps(summary))
    return 0


def run_export(args: argparse.Namespace) -> int:
    from pragmeter.interpreter.model import Interpreter

    _check_output(args)
    if args.format == "peft":
        from pragmeter.interpreter.adapter import export_adapter

        print(export_adapter(args.model, args.output))
        return 0
    interpreter = Interpreter.load(args.model, device="cpu", precision="fp32", backend="torch", progress=not args.no_progress)
    print(interpreter.save(args.output))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.input:
        if args.utterance or args.reading or args.context:
            raise PragmeterError("give either UTTERANCE with --context and --reading, or --input with --output")
        if not args.output:
            raise PragmeterError("--input needs --output")
    elif is_blank(args.utterance):
        raise PragmeterError("give UTTERANCE (with --context and two or more --reading) or --input")
    elif len(args.reading) < 2:
        raise PragmeterError("give two or more --reading to choose from")
    elif args.output:
        raise PragmeterError("--output goes with --input")
    from pragmeter.text import unencodable_reason

    given = [("UTTERANCE", args.utterance), ("--context", args.context),
             *((f"--reading {index + 1}", reading) for index, reading in enumerate(args.reading))]
    for name, value in given:  # an argument in another encoding than the locale's comes as lone surrogates
        reason = unencodable_reason(value) if value else None
        if reason:
            raise PragmeterError(f"{name}: {reason} (not valid UTF-8: give the text in UTF-8)")
    from pragmeter.interpreter.model import Interpreter

    def load() -> Interpreter:
        interpreter = Interpreter.load(args.model, backend=args.backend, precision=args.precision,
                                       device=args.device, progress=not args.no_progress,
                                       explicit_weight=args.explicit_weight)
        # how it runs, as every result of it would record: a precision chosen by the folder's claim is seen
        print(f"interpreter {interpreter.name}: {interpreter.runtime.signature()}", file=sys.stderr)
        return interpreter

    if args.input:
        from pragmeter.classify.labelling import interpret_table

        interpret_table(load, args.input, args.output, args.batch_size, args.overwrite, progress=not args.no_progress)
        return 0
    interpreter = load()
    from pragmeter.interpreter.model import premise

    text = premise(args.context, args.utterance)
    premises = [text] * len(args.reading)
    rows = interpreter.probabilities(premises, args.reading, args.batch_size)
    rows = interpreter.settle_close_choices(premises, list(args.reading), [len(premises)], rows,
                                            batch_size=args.batch_size)  # as choose: a close choice answered in fp32
    scores = interpreter.meant_scores(rows).tolist()
    chosen = max(range(len(scores)), key=scores.__getitem__)
    print(f"premise: {text}")
    for index, (reading, row, score) in enumerate(zip(args.reading, rows, scores)):
        labels = "  ".join(f"{label} {p:.3f}" for label, p in zip(interpreter.labels, row.tolist()))
        print(f"{'*' if index == chosen else ' '} {index}  {score:.3f}  {reading}  ({labels})")
    return 0
