"""``pragmeter classifier train inli|ishate-a|ishate-b``: fine-tune local classifiers."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import fields

from pragmeter.cli.common import add, positive_int
from pragmeter.errors import PragmeterError


def _common(parser: argparse.ArgumentParser) -> None:
    add(parser, output={"required": True, "help": "model folder to write"},
        encoder={"help": "pre-trained encoder: packaged name (all-MiniLM-L6-v2, all-mpnet-base-v2), local folder or "
                         "hub name (default all-MiniLM-L6-v2)"})
    parser.add_argument("--epochs", type=int, default=3)
    add(parser, batch_size={"default": 32, "help": "examples per training batch (default 32)"})
    parser.add_argument("--grad-accumulation", type=int, default=1, help="optimizer step every N batches")
    parser.add_argument("--lr", type=float, default=3e-5, help="peak learning rate (default 3e-05)")
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--warmup-ratio", type=float, default=0.06, help="share of steps with linear warm-up")
    parser.add_argument("--max-length", type=int, default=128, help="tokens per input (default 128)")
    parser.add_argument("--select-on", choices=["macro_f1", "accuracy"], default="macro_f1",
                        help="validation metric for model selection (default macro_f1)")
    parser.add_argument("--tune-decision-bias", action="store_true",
                        help="after selection, tune per-label log-probability biases on validation (the --select-on "
                             "metric) and save them with the model: moves the boundary towards rare classes")
    parser.add_argument("--eval-batch-size", type=positive_int, default=128)
    parser.add_argument("--no-length-grouping", action="store_true",
                        help="plain shuffled batches (default: batches of similar token length, which pad less)")
    add(parser, "seed", device={"help": "cpu, cuda… (default: cuda when available)"},
        precision={"choices": ["auto", "fp32", "bf16"],
                   "help": "autocast: auto (bf16 on CUDA, fp32 on CPU), fp32, or bf16 (also on CPU)"})
    parser.add_argument("--work-dir", default=None,
                        help="checkpoints for resuming (default: OUTPUT.work beside the output folder)")
    parser.add_argument("--limit-train", type=int, default=None, help="first N training examples (smoke runs)")
    parser.add_argument("--limit-eval", type=int, default=None, help="first N validation and test examples")
    add(parser, "no_progress", "data_root", overwrite={"help": "replace an existing model folder"})


def register(subparsers) -> None:
    parser = subparsers.add_parser("train", help="fine-tune a local classifier (inli, ishate-a, ishate-b)")
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
    _common(inli)
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
                                 "minutes on a CPU; embeddings go through the shared embedding cache)")
        parser.add_argument("--svm-c", default="1,4,16",
                            help="--head svm: comma-separated C values; the best on validation is kept (default 1,4,16)")
        _common(parser)
        parser.set_defaults(func=run_ishate, ishate_task=task)


def _train(args: argparse.Namespace, data, svm_c: list[float] | None = None) -> int:
    """Fine-tune (or, with ``svm_c``, fit the frozen-encoder SVM head for those C values) and save."""
    from pragmeter.classify.job import train_classifier
    from pragmeter.classify.training import FineTuneConfig

    settings = {f.name: getattr(args, f.name) for f in fields(FineTuneConfig) if hasattr(args, f.name)}
    config = FineTuneConfig(**settings, group_by_length=not args.no_length_grouping)
    train_classifier(data, args.encoder, args.output, config, svm_c=svm_c, device=args.device, work_dir=args.work_dir,
                     limit_train=args.limit_train, limit_eval=args.limit_eval, tune_bias=args.tune_decision_bias,
                     command="pragmeter " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
                     progress=not args.no_progress, overwrite=args.overwrite)
    return 0


def _c_values(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or any(not v > 0 for v in values):
        raise PragmeterError(f"--svm-c {text!r}: expected comma-separated positive numbers, e.g. 1,4,16")
    return values


def run_inli(args: argparse.Namespace) -> int:
    from pragmeter.classify.recipes.inli import build

    labels = "implied-vs-explicit" if args.implied_vs_explicit else args.labels
    return _train(args, build(labels, args.split_scheme, args.data_root))


def run_ishate(args: argparse.Namespace) -> int:
    from pragmeter.classify.recipes.ishate import build

    svm_c = _c_values(args.svm_c) if args.head == "svm" else None  # a bad --svm-c fails before the data load
    return _train(args, build(args.ishate_task, args.augment, args.seed, args.data_root, args.keep_heldout_rewrites),
                  svm_c)
