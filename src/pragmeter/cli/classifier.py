"""``pragmeter classifier train|predict|drinq-nli``: fine-tune local classifiers (INLI, ISHate Task A/B), label files
with them, and answer DRInQ zero-shot with an INLI model (no API, with bootstrap CIs)."""

from __future__ import annotations

import argparse
import shlex
import sys

from pragmeter.classify.labelling import ERROR_COLUMN, PREDICTION_COLUMN
from pragmeter.cli.common import CLASSIFIER_RUNTIME, add, add_group, add_input_option, positive_int
from pragmeter.encoders.runtime import TRAINING_PRECISIONS


def register(subparsers) -> None:
    add_group(subparsers, "classifier", "local classifiers: train, predict, drinq-nli",
              "Fine-tune transformers classifiers on INLI or ISHate, label files with them, and answer DRInQ "
              "zero-shot with an INLI model.", _add_train, _add_predict, _add_drinq_nli)


def _training_options(parser: argparse.ArgumentParser) -> None:
    add(parser, output={"required": True, "help": "model folder to write"},
        encoder={"help": "pre-trained encoder: packaged name (all-MiniLM-L6-v2, all-mpnet-base-v2), local folder or "
                         "hub name (default all-MiniLM-L6-v2)"})
    add(parser, batch_size={"default": 32, "help": "examples per training batch (default 32)"})
    for flag, kind, default, help in (
            ("--epochs", int, 3, None), ("--grad-accumulation", int, 1, "optimizer step every N batches"),
            ("--lr", float, 3e-5, "peak learning rate (default 3e-05)"), ("--weight-decay", float, 0.01, None),
            ("--warmup-ratio", float, 0.06, "share of steps with linear warm-up"),
            ("--max-length", int, 128, "tokens per input (default 128)"),
            ("--eval-batch-size", positive_int, 128, None),
            ("--checkpoint-every", int, 0, "also checkpoint every N optimizer steps within an epoch, so that an "
                                           "interrupted long epoch resumes there (default 0: at epoch ends)"),
            ("--limit-train", int, None, "first N training examples (smoke runs)"),
            ("--limit-eval", int, None, "first N validation and test examples")):
        parser.add_argument(flag, type=kind, default=default, help=help)
    parser.add_argument("--select-on", choices=["macro_f1", "accuracy"], default="macro_f1",
                        help="validation metric for model selection (default macro_f1)")
    parser.add_argument("--tune-decision-bias", action="store_true",
                        help="after selection, tune per-label log-probability biases on validation (the --select-on "
                             "metric) and save them with the model: moves the boundary towards rare classes")
    add_distillation_options(parser)
    parser.add_argument("--no-length-grouping", action="store_true",
                        help="plain shuffled batches (default: batches of similar token length, which pad less)")
    add(parser, "seed", device={"help": "cpu, cuda… (default: cuda when available)"},
        precision={"choices": list(TRAINING_PRECISIONS),
                   "help": "autocast: auto (bf16 on CUDA, fp32 on CPU), fp32, or bf16 (also on CPU)"})
    parser.add_argument("--work-dir", default=None,
                        help="checkpoints for resuming (default: OUTPUT.work beside the output folder)")
    add(parser, "no_progress", "data_root", overwrite={"help": "replace an existing model folder"})


def add_distillation_options(parser: argparse.ArgumentParser, examples: str = "the training examples") -> None:
    """--teacher and --soft-weight, as every training command names them (``examples``: what the teacher labels)."""
    parser.add_argument("--teacher", default=None,
                        help=f"distil: a classifier folder or packaged interpreter with the same labels whose "
                             f"probabilities on {examples} are soft targets (kept in the work folder)")
    parser.add_argument("--soft-weight", type=float, default=None,
                        help="with --teacher: each target is (1 - W) x the label + W x the teacher's probabilities "
                             "(default 0.5: classify/distillation.py DEFAULT_SOFT_WEIGHT)")
    parser.add_argument("--label-only-groups", type=_group_names, default=(), metavar="GROUPS",
                        help="with --teacher: comma-separated groups of training pairs (their source sets, e.g. "
                             "esnli,sick) that train on their own labels alone, the teacher's share 0 for them")


def _group_names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def _add_train(actions) -> None:
    parser = actions.add_parser("train", help="fine-tune a local classifier (inli, ishate-a, ishate-b)")
    kinds = parser.add_subparsers(dest="train_kind", metavar="RECIPE", required=True)
    inli = kinds.add_parser(
        "inli", help="fine-tune an INLI classifier (pairs; 4-way, 3-way or implied-vs-explicit)",
        description="Fine-tune a sequence-pair classifier on INLI: train on train, select on val, report on test "
                    "(per label, per source, confusion matrix). Interrupted runs resume from the last epoch.")
    inli.add_argument("--labels", choices=["4way", "3way", "implied-vs-explicit"], default="4way",
                      help="4way (default); 3way collapses implied and explicit into entailed")
    inli.add_argument("--implied-vs-explicit", action="store_true",
                      help="the implied-vs-explicit detector (same as --labels implied-vs-explicit)")
    from pragmeter.classify.recipes.inli import SPLIT_SCHEMES

    inli.add_argument("--split-scheme", choices=list(SPLIT_SCHEMES), default="standard",
                      help="the paper's Table 8 generalisation splits (default standard: all sources)")
    _training_options(inli)
    inli.set_defaults(func=run_inli)
    for kind, task, letter in (("ishate-a", "implicit", "A"), ("ishate-b", "subtle", "B")):
        parser = kinds.add_parser(
            kind, help=f"fine-tune an ISHate Task {letter} ({task}) classifier",
            description=f"Fine-tune a text classifier on ISHate Task {letter}: train on train, select on dev, report "
                        f"per-class precision/recall/F1 and macro-F1 on test.")
        parser.add_argument("--augment", default=None,
                            help="comma-separated: released sets rsa, aav, rne, ri, ra, eda, bt, gm, gm_revised, all; "
                                 "offline methods local-rsa, local-aav, local-ri, local-rne, local-eda, local-all "
                                 "(training split only)")
        parser.add_argument("--keep-heldout-rewrites", action="store_true",
                            help="keep the released augmentation texts that were written from dev or test posts "
                                 "(dropped by default: see docs/results.md; the paper trained with them)")
        parser.add_argument("--head", choices=["linear", "svm"], default="linear",
                            help="linear (default): fine-tune the encoder with a linear layer; svm: keep the encoder "
                                 "frozen and fit an RBF SVM on its sentence embeddings (the paper's USE+SVM form; "
                                 "the encoder runs as scoring runs it, OpenVINO on a CPU, --precision auto as there; "
                                 "embeddings go through the shared embedding cache)")
        parser.add_argument("--svm-c", default="1,4,16",
                            help="--head svm: comma-separated C values; the best on validation is kept (default "
                                 "1,4,16)")
        _training_options(parser)
        parser.set_defaults(func=run_ishate, ishate_task=task)


def _fine_tune(args: argparse.Namespace, data, svm_c: list[float] | None = None) -> int:
    """Fine-tune (or, with ``svm_c``, fit the frozen-encoder SVM head for those C values) and save."""
    from pragmeter.classify.distillation import soft_weight
    from pragmeter.classify.job import train_classifier
    from pragmeter.classify.training import config_from_options

    args.soft_weight = soft_weight(args.teacher, args.soft_weight)
    train_classifier(data, args.encoder, args.output, config_from_options(vars(args)), svm_c=svm_c,
                     teacher=args.teacher,
                     device=args.device, work_dir=args.work_dir, limit_train=args.limit_train,
                     limit_eval=args.limit_eval, tune_bias=args.tune_decision_bias,
                     command="pragmeter " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
                     progress=not args.no_progress, overwrite=args.overwrite)
    return 0


def run_inli(args: argparse.Namespace) -> int:
    from pragmeter.classify.recipes.inli import build

    labels = "implied-vs-explicit" if args.implied_vs_explicit else args.labels
    return _fine_tune(args, build(labels, args.split_scheme, args.data_root))


def run_ishate(args: argparse.Namespace) -> int:
    from pragmeter.classify.recipes.ishate import build
    from pragmeter.classify.svm import parse_c_values

    svm_c = parse_c_values(args.svm_c) if args.head == "svm" else None  # a bad --svm-c fails before the data load
    data = build(args.ishate_task, args.augment, args.seed, args.data_root, args.keep_heldout_rewrites)
    return _fine_tune(args, data, svm_c)


def _add_predict(actions) -> None:
    parser = actions.add_parser(
        "predict", help="label a file's texts or (premise, hypothesis) pairs with a local classifier",
        description="Label every row of --input with a classifier folder from `pragmeter classifier train`. Pair "
                    "models read --premise-column and --hypothesis-column, single-text models --column. The output "
                    f"keeps every input column in input order and adds '{PREDICTION_COLUMN}', one 'p_<label>' "
                    f"probability column per label and '{ERROR_COLUMN}' (why a row has no prediction: an empty text).")
    parser.add_argument("--model", required=True, help="classifier folder, or a packaged interpreter's name")
    parser.add_argument("--input", required=True, help="csv, tsv, jsonl, parquet or txt file")
    add(parser, output={"required": True, "help": "output file (format from its extension)"},
        column={"help": "text column for single-text models (default text)"})
    parser.add_argument("--premise-column", default="premise", help="premise column for pair models (default premise)")
    parser.add_argument("--hypothesis-column", default="hypothesis",
                        help="hypothesis column for pair models (default hypothesis)")
    add(parser, "no_progress", batch_size={"default": 64, "help": "texts per batch (default 64)"},
        overwrite={"help": "replace --output if it exists"}, **CLASSIFIER_RUNTIME)
    parser.set_defaults(func=run_predict)


def run_predict(args: argparse.Namespace) -> int:
    from pragmeter.classify.labelling import label_table

    label_table(args.model, args.input, args.output, args.column, args.premise_column, args.hypothesis_column,
                args.batch_size, args.device, args.overwrite, progress=not args.no_progress, backend=args.backend,
                precision=args.precision)
    return 0


def _add_drinq_nli(actions) -> None:
    parser = actions.add_parser(
        "drinq-nli", help="answer DRInQ zero-shot with a local INLI classifier",
        description="Premise = context + question, hypothesis = each option; picks the option with the highest "
                    "P(implied)+P(explicit). Prints accuracy against the human consensus and against "
                    "implied_comment with 95% item-level bootstrap CIs; --output writes them as JSON and "
                    "--predictions the per-item choices.")
    parser.add_argument("--model", required=True, help="INLI classifier folder (4-way or 3-way)")
    add(parser, output={"help": "results JSON to write"})
    parser.add_argument("--predictions", default=None, help="per-item table to write (csv, jsonl, parquet…)")
    add_input_option(parser, "your own file in the DRInQ CSV schema (default: the release)", required=False,
                     legacy_positional=False)
    add(parser, "limit", "device", "no_progress", "data_root", seed={"help": "bootstrap seed (default 0)"},
        batch_size={"default": 64, "help": "option pairs per batch (default 64)"},
        overwrite={"help": "replace --predictions and the output files if they exist"})
    parser.set_defaults(func=run_drinq_nli)


def run_drinq_nli(args: argparse.Namespace) -> int:
    from pragmeter.interpreter.drinq import drinq_nli

    for text in drinq_nli(args.model, args.data_root, args.input, args.limit, args.device, args.batch_size, args.seed,
                          args.output, args.predictions, args.overwrite, progress=not args.no_progress):
        print(text)
    return 0
