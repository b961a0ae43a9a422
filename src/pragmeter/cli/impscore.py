"""``pragmeter impscore corpus|train|evaluate|models``: build the training corpus, train ImpScore heads, evaluate a
model and list the shipped ones.

``evaluate CHECK`` runs one evaluator (``pragmeter.impscore.evaluators``) per check — the corpus test split,
ranking/choice/battery files, Stanford Politeness, and the human-written suite that chooses the default;
``--baseline hedging`` runs a check with the hedge-word baseline instead of a model (same code path)."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import (add, add_group, add_input_option, load_model, non_negative_float, non_negative_int,
                                  positive_float, positive_int)

FILE_FORMATS = {
    "ranking": ("Kendall τ / Spearman ρ on groups ordered explicit → implicit",
                'FILE is JSON: {"groups": [{"id": ..., "sentences": [most explicit, ..., most implicit]}]}'),
    "choice": ("accuracy of choosing the pragmatically closest option",
               'FILE is JSON: {"items": [{"id": ..., "reference": ..., "options": [...], "answer": index}]}'),
    "battery": ("pragmatics battery: utterance above its plain statement, and choice",
                'FILE is JSON: {"items": [{"id": ..., "category": ..., "utterance": ..., "options": [...], '
                '"answer": index of the plain statement}]}'),
}


def register(subparsers) -> None:
    add_group(subparsers, "impscore", "ImpScore models: corpus, train, evaluate, models",
              "Build the training corpus, train ImpScore heads, evaluate a model (corpus test split, ranking and "
              "choice checks), list shipped models.", _add_corpus, _add_train, _add_evaluate, _add_models)


def _add_corpus(actions) -> None:
    parser = actions.add_parser("corpus", help="build the ImpScore training corpus")
    commands = parser.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)
    build = commands.add_parser(
        "build", help="write the (implicit, explicit) pairs with negatives and splits to parquet",
        description="Rebuild the ImpScore training corpus from the sources in the data root, or convert the "
                    "official all_data.csv (--from-official). Prints a per-source table like the paper's Table 6.")
    add(build, output={"default": "corpus.parquet", "help": "output file (.parquet, .csv, .jsonl)"})
    build.add_argument("--sources", default=None,
                       help="comma-separated sources and presets: paper (the Table-6 rebuild, the default), figurative "
                            "(figurative, ironic and indirect everyday pairs), generated (LLM-written data shipped "
                            "with pragmeter: explicit sides, graded groups), human (people's figurative, ironic and "
                            "indirect pairs), general (the default's: paper + human + the written groups), all; e.g. "
                            "paper,figurative or paper,figqa (`pragmeter impscore corpus sources` lists them)")
    build.add_argument("--from-official", metavar="ALL_DATA_CSV", default=None,
                       help="convert the official all_data.csv (pos_implicit, pos_explicit, neg_implicit, "
                            "neg_explicit)")
    build.add_argument("--cap", type=int, default=None, metavar="N",
                       help="at most N pairs per source (whole groups, seeded); a source's own lower cap wins")
    add(build, "data_root", seed={"help": "seed for splits and negatives (default 0)"},
        overwrite={"help": "replace --output if it exists"})
    build.set_defaults(func=run_build)
    sources = commands.add_parser("sources", help="list the corpus sources")
    sources.set_defaults(func=run_sources)


def run_build(args: argparse.Namespace) -> int:
    from pragmeter.impscore.corpus import make_corpus_file

    make_corpus_file(args.output, args.sources, args.from_official, args.seed, args.data_root, args.cap, args.overwrite,
                     on_report=print)
    return 0


def run_sources(args: argparse.Namespace) -> int:
    from pragmeter.datasets.pairs.registry import preset_lines

    print(*preset_lines(), sep="\n")
    return 0


def _add_train(actions) -> None:
    parser = actions.add_parser(
        "train", help="train ImpScore heads on a corpus (paper defaults)",
        description="Train ImpScore's projection heads on (implicit, explicit, negative) triplets. Embeddings from "
                    "the frozen encoder are computed once and cached on disk; epochs then run on the cache.")
    parser.add_argument("--corpus", default=None,
                        help="corpus file from `pragmeter impscore corpus build`, or the official all_data.csv "
                             "(default: build the corpus from the data root)")
    add(parser, output={"required": True, "help": "model folder to write"})
    parser.add_argument("--name", default=None, help="model name recorded in the config (default: folder name)")
    add(parser, encoder={"help": "sentence encoder (name or folder)"})
    parser.add_argument("--transform", choices=["p2s", "s2p", "both"], default="p2s",
                        help="space transformation (paper Table 2; default p2s)")
    parser.add_argument("--imp-metric", choices=["cosine", "euclidean"], default="cosine")
    parser.add_argument("--prag-metric", choices=["cosine", "euclidean"], default="euclidean")
    add(parser, batch_size={"default": 8192, "help": "training batch size (default 8192)"})
    for flag, kind, default, help in (
            ("--dim", positive_int, 64, "pragmatic/semantic space size l (default 64)"),
            ("--gamma1", non_negative_float, 0.5, None), ("--gamma2", non_negative_float, 0.7, None),
            ("--alpha", non_negative_float, 1.0, None), ("--lr", positive_float, 0.01, None),
            ("--weight-decay", non_negative_float, 0.001, None), ("--epochs", positive_int, 30, None),
            ("--encode-batch-size", positive_int, 64, "encoder batch size (default 64)"),
            ("--hard-alpha", non_negative_float, 1.0,
             "weight of the hard-negative margin (used with --hard-negatives)")):
        parser.add_argument(flag, type=kind, default=default, help=help)
    parser.add_argument("--hard-negatives", choices=["none", "source", "mined", "both"], default="none",
                        help="extra pragmatic margin against hard negatives: the corpus's hard_negative column "
                             "(source), the nearest other pair's explicit side in encoder space (mined), or both; "
                             "none = the paper's objective (default)")
    parser.add_argument("--in-batch-negatives", type=non_negative_float, default=0.0, metavar="WEIGHT",
                        help="weight of a pragmatic margin of each implicit sentence against the nearest explicit "
                             "side of the other pairs of its batch (paraphrases left out); 0 = the paper's objective "
                             "(default)")
    parser.add_argument("--source-weight", action="append", default=[], metavar="SOURCE=WEIGHT",
                        type=source_weight, dest="source_weights",
                        help="loss weight of one source's training pairs (repeatable; default 1 each: the paper)")
    add(parser, "seed", "cache", device={"default": "cpu", "help": "torch device (default cpu)"},
        overwrite={"help": "replace an existing model folder (atomically: a run killed while saving leaves the old "
                           "model whole)"})
    add(parser, "data_root", "no_progress",
        backend={"choices": ["auto", "openvino", "torch"], "dest": "encoder_backend",
                 "help": "how the encoder runs while embedding the corpus (default auto, as scoring: OpenVINO on a "
                         "CPU, torch on a GPU --device; torch on a CPU is the shipped models' recipe, fp32, slower)"},
        precision={"choices": ["auto", "fp32", "bf16"], "dest": "encoder_precision",
                   "help": "encoder precision of the corpus embedding (default auto, as scoring: bf16 where the CPU "
                           "has AVX-512 BF16 or AMX and the encoder's bf16 scores are within bounds (MiniLM), else "
                           "fp32; bf16 needs --backend openvino)"})
    parser.add_argument("--teacher", default=None, metavar="MODEL",
                        help="distil from this ImpScore model (shipped name or folder): the student also matches its "
                             "scores of every training triplet (impscore.distillation)")
    parser.add_argument("--distill-weight", type=non_negative_float, default=0.0, metavar="WEIGHT",
                        help="weight of the teacher's scores in the loss (needs --teacher; 0 = no distillation)")
    parser.add_argument("--distill-on", choices=["scores", "differences"], default="scores",
                        help="what the student matches: the teacher's scores of each sentence and pair (default), or "
                             "only the differences its margins compare")
    parser.add_argument("--encoder-layers", type=non_negative_int, default=0, metavar="N",
                        help="then train the encoder's top N transformer layers with the heads (the default model: "
                             "all 6 of MiniLM's; needs a GPU in practice, --device cuda); 0 = the paper's frozen "
                             "encoder (default)")
    parser.add_argument("--encoder-lr", type=non_negative_float, default=5e-5,
                        help="learning rate of those layers (default 5e-5)")
    parser.add_argument("--encoder-epochs", type=positive_int, default=2,
                        help="epochs of that joint phase (default 2)")
    parser.add_argument("--encoder-batch-size", type=positive_int, default=256,
                        help="triplets per step of that joint phase (default 256)")
    parser.add_argument("--encoder-rank", type=non_negative_int, default=0, metavar="R",
                        help="ship the trained layers as rank-R factors of each matrix's change (the default model: "
                             "32, 2.7 MB for MiniLM's six layers instead of 21 MB; the held-out figures are then the "
                             "compressed encoder's); 0 = the whole layers (default)")
    parser.add_argument("--encoder-adapters", action="store_true",
                        help="with --encoder-rank R: train rank-R low-rank adapters (LoRA) as such instead of taking "
                             "the truncated SVD of the whole layers' change after training (on validation: no better "
                             "than the SVD; docs/results.md)")
    parser.set_defaults(func=run_train)


def source_weight(text: str) -> tuple[str, float]:
    """``SOURCE=WEIGHT`` with a positive weight."""
    source, sep, weight = text.partition("=")
    try:
        value = float(weight)
    except ValueError:
        value = float("nan")
    if not sep or not source or not value > 0:
        raise argparse.ArgumentTypeError(f"expected SOURCE=WEIGHT with a positive weight, got {text!r}")
    return source, value


def run_train(args: argparse.Namespace) -> int:
    from pragmeter.impscore.training import config_from_options, train

    result = train(config_from_options(vars(args)), args.output, args.corpus, name=args.name, data_root=args.data_root,
                   cache_root=args.cache, overwrite=args.overwrite, show_progress=not args.no_progress,
                   on_corpus_report=lambda table: print(table, file=sys.stderr))
    print(result.summary())
    return 0


def _add_evaluate(actions) -> None:
    parser = actions.add_parser("evaluate", help="evaluate an ImpScore model")
    kinds = parser.add_subparsers(dest="evaluate_kind", metavar="CHECK", required=True)

    corpus = kinds.add_parser("corpus", help="metrics on a corpus split (default: test split of the rebuilt corpus)")
    corpus.add_argument("--corpus", default=None, help="corpus file (default: build it from the data root)")
    corpus.add_argument("--split", default="test", help="split to evaluate (default test)")
    add(corpus, "cache", "data_root", seed={"help": "corpus seed when building it (default 0)"})

    files = []
    for kind, (help_text, description) in FILE_FORMATS.items():
        files.append(kinds.add_parser(kind, help=help_text, description=description))
        add_input_option(files[-1], f"{kind} file (JSON)")

    politeness = kinds.add_parser(
        "politeness", help="Spearman ρ between ImpScore and Stanford Politeness ratings (bootstrap CI)",
        description="Expected: a weak positive ρ (polite requests are usually the indirect ones). Scores a fixed "
                    "seeded sample of the 10,956 requests unless --sample 0.")
    politeness.add_argument("--sample", type=non_negative_int, default=2000,
                            help="requests to score, seeded (0 = all; default 2000)")
    politeness.add_argument("--domain", action="append", choices=["wikipedia", "stack-exchange"], default=None,
                            help="restrict to a domain (repeatable; default both)")
    politeness.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples (default 1000)")
    add(politeness, "data_root")

    human = kinds.add_parser(
        "human", help="the human-written evidence suite that chooses the default (bootstrap 95%% CIs)",
        description="Floyd et al.'s expert battery (utterance above its meant reading; meant reading closest), the "
                    "Stanford Politeness ρ, and implicit-above-explicit on the held-out pairs of every corpus source "
                    "that people wrote. LLM-written sets are printed after it, as a separate block that never decides.")
    human.add_argument("--politeness-sample", type=int, default=2000, help="politeness requests scored (default 2000)")
    add(human, "data_root")

    for sub in (corpus, *files, politeness, human):
        add(sub, "model", "batch_size", "device", "dtype", "no_progress",
            output={"help": "write the full results as JSON here"}, overwrite={"help": "replace --output if it exists"})
        sub.set_defaults(func=run_evaluate)
    for sub in (*files, politeness, human):
        add(sub, seed={"help": "bootstrap (and sample) seed (default 0)"})
        sub.add_argument("--baseline", choices=["hedging"], default=None,
                         help="evaluate a baseline instead of a model: 'hedging' = hedge-word count as implicitness, "
                              "word overlap as pragmatic distance")


def run_evaluate(args: argparse.Namespace) -> int:
    from pragmeter.impscore.evaluators import evaluate_check
    from pragmeter.impscore.hedging import HedgingBaseline

    options = {"corpus": "corpus", "split": "split", "path": "input", "sample": "sample", "domains": "domain",
               "resamples": "resamples", "politeness_sample": "politeness_sample"}
    # the corpus check embeds a whole split: through the on-disk embedding cache (--cache, else the default one)
    cache = (args.cache or True) if args.evaluate_kind == "corpus" else False
    # The model under test runs in fp32 on a CPU, so that accuracies stay comparable with the paper's: on the
    # reference path (torch), or for the checks of a user's file on the fast one (OpenVINO fp32 differs from torch's
    # by float rounding only); --dtype or a GPU --device: torch, as loaded.
    fast = args.evaluate_kind in FILE_FORMATS and not args.dtype and args.device in (None, "cpu")
    args.backend, args.precision = ("auto", "fp32") if fast else ("torch", "auto")

    def loaded():
        model = load_model(args, cache)
        model.progress = not args.no_progress  # a bar while the check's texts are embedded
        return model

    model = HedgingBaseline if getattr(args, "baseline", None) == "hedging" else loaded
    for text in evaluate_check(args.evaluate_kind, model, args.output, args.overwrite, getattr(args, "data_root", None),
                               args.seed,
                               **{key: getattr(args, name) for key, name in options.items() if hasattr(args, name)}):
        print(text)
    return 0


def _add_models(actions) -> None:
    parser = actions.add_parser("models", help="list the shipped ImpScore models")
    parser.add_argument("--measure", action="store_true",
                        help="time each model on this machine (sentences/s) instead of the recorded figure")
    parser.set_defaults(func=run_models)


def run_models(args: argparse.Namespace) -> int:
    from pragmeter.impscore.catalogue import catalogue, catalogue_text

    print(catalogue_text(catalogue(measure=args.measure), measured=args.measure))
    return 0
