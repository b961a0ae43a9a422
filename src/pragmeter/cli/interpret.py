"""``pragmeter interpret``: which reading of an utterance in its context is meant, by the interpreter (an INLI pair
classifier: :class:`pragmeter.classify.interpreter.Interpreter`)."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import add
from pragmeter.errors import PragmeterError
from pragmeter.text import is_blank


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "interpret", help="which reading of an utterance in context is meant (the local interpreter)",
        description="Score each --reading as what the speaker meant by UTTERANCE in --context: P(implied) + "
                    "P(explicit) of INLI's four labels, the premise being the context followed by the quoted "
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
        batch_size={"default": 64, "help": "pairs per batch (default 64)"},
        device={"help": "torch device, e.g. cpu or cuda (default: cuda when available, with --backend torch)"},
        backend={"choices": ["auto", "openvino", "torch"],
                 "help": "how the interpreter runs (default auto: OpenVINO on a CPU, converted once per model; "
                         "torch on a GPU --device)"},
        precision={"choices": ["auto", "fp32", "bf16", "fp16"],
                   "help": "auto (default): on a CPU bf16 where it has AVX-512 BF16 or AMX and the model's bf16 "
                           "check is within bounds, else fp32; fp16 on a CUDA device; fp16: torch on a GPU only"})
    add(parser, "no_progress")
    parser.set_defaults(func=run)


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
    from pragmeter.classify.interpreter import Interpreter

    def load() -> Interpreter:
        interpreter = Interpreter.load(args.model, args.device, args.precision, args.backend,
                                       progress=not args.no_progress)
        # how it runs, as every result of it would record: a precision chosen by the folder's claim is seen
        print(f"interpreter {interpreter.name}: {interpreter.runtime.signature()}", file=sys.stderr)
        return interpreter

    if args.input:
        from pragmeter.classify.labelling import interpret_table

        interpret_table(load, args.input, args.output, args.batch_size, args.overwrite, progress=not args.no_progress)
        return 0
    interpreter = load()
    from pragmeter.classify.interpreter import premise

    text = premise(args.context, args.utterance)
    rows = interpreter.classify([text] * len(args.reading), args.reading, args.batch_size)
    scores = [float(sum(row[label] for label in interpreter.meant_labels)) for row in rows]
    chosen = max(range(len(scores)), key=scores.__getitem__)
    print(f"premise: {text}")
    for index, (reading, row, score) in enumerate(zip(args.reading, rows, scores)):
        labels = "  ".join(f"{label} {p:.3f}" for label, p in row.items())
        print(f"{'*' if index == chosen else ' '} {index}  {score:.3f}  {reading}  ({labels})")
    return 0
