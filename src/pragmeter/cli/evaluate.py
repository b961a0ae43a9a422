"""``pragmeter evaluate``: ImpScore on the corpus test split, and the ranking/choice OOD checks on user files."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import add_data_root_option, add_model_options, load_model


def register(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="evaluate an ImpScore model")
    kinds = parser.add_subparsers(dest="evaluate_kind", metavar="CHECK", required=True)

    corpus = kinds.add_parser("corpus", help="metrics on a corpus split (default: test split of the rebuilt corpus)")
    corpus.add_argument("--corpus", default=None, help="corpus file (default: build it from the data root)")
    corpus.add_argument("--split", default="test", help="split to evaluate (default test)")
    corpus.add_argument("--seed", type=int, default=0, help="corpus seed when building it (default 0)")
    corpus.add_argument("--cache-dir", default=None, help="embedding cache (default: $PRAGMETER_CACHE/embeddings)")
    add_data_root_option(corpus)
    corpus.set_defaults(func=run_corpus)

    ranking = kinds.add_parser("ranking", help="Kendall τ / Spearman ρ on groups ordered explicit → implicit",
                               description="FILE is JSON: {\"groups\": [{\"id\": ..., \"sentences\": [most explicit, ..., "
                                           "most implicit]}]}")
    ranking.add_argument("file")
    ranking.set_defaults(func=run_ood)

    choice = kinds.add_parser("choice", help="accuracy of choosing the pragmatically closest option",
                              description="FILE is JSON: {\"items\": [{\"id\": ..., \"reference\": ..., \"options\": [...], "
                                          "\"answer\": index}]}")
    choice.add_argument("file")
    choice.set_defaults(func=run_ood)

    for sub in (corpus, ranking, choice):
        add_model_options(sub)
        sub.add_argument("--output", default=None, help="write the full results as JSON here")
        sub.add_argument("--overwrite", action="store_true", help="replace --output if it exists")


def _check_output(args: argparse.Namespace) -> None:
    if args.output:
        from pragmeter.io import check_output

        check_output(args.output, args.overwrite)


def _write(args: argparse.Namespace, payload: dict) -> None:
    if args.output:
        from pragmeter.io import write_json_atomic

        write_json_atomic(args.output, payload)
        print(f"results -> {args.output}", file=sys.stderr)


def run_corpus(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pragmeter.encoders import cache_dir
    from pragmeter.errors import PragmeterError
    from pragmeter.impscore.corpus import build_corpus, load_corpus
    from pragmeter.impscore.metrics import format_accuracy, per_source_metrics
    from pragmeter.impscore.training import embed_corpus, evaluate_heads

    _check_output(args)
    corpus = load_corpus(args.corpus, seed=args.seed) if args.corpus else build_corpus(seed=args.seed, root=args.data_root)[0]
    model = load_model(args)
    corpus = corpus[corpus["split"] == args.split]
    if corpus.empty:
        raise PragmeterError(f"the corpus has no rows in split {args.split!r}")
    cache_root = Path(args.cache_dir) if args.cache_dir else cache_dir() / "embeddings"
    data = embed_corpus(corpus, model.encoder_name, cache_root, args.batch_size, args.device)[args.split]
    metrics, out = evaluate_heads(model.heads, data)
    table = per_source_metrics(out, data.sources, data.pragmatic)
    print(f"model: {model.signature()}")
    print(f"split: {args.split} ({metrics['n_triplets']:,} triplets)")
    for key in ("implicitness_accuracy", "pragmatics_accuracy", "mean_I_implicit", "mean_I_explicit",
                "mean_I_explicit_positive", "mean_I_explicit_negative", "mean_dP_positive", "mean_dP_negative"):
        print(f"{key:28s} {metrics[key]:.4f}")
    print("\n| source | pairs | implicitness acc. | pragmatics acc. |\n|---|---|---|---|")
    for row in table.itertuples():
        print(f"| {row.source} | {row.pairs:,} | {format_accuracy(row.implicitness_accuracy)} "
              f"| {format_accuracy(row.pragmatics_accuracy)} |")
    _write(args, {"model": model.signature(), "split": args.split, "metrics": metrics,
                  "per_source": table.to_dict(orient="records")})
    return 0


def run_ood(args: argparse.Namespace) -> int:
    """Ranking or choice check: load and validate the file, evaluate, print the headline, write the details."""
    from pragmeter.impscore import ood

    check = args.evaluate_kind
    _check_output(args)
    items = getattr(ood, f"load_{check}")(args.file)
    model = load_model(args)
    result = getattr(ood, f"evaluate_{check}")(model, items)
    if check == "ranking":
        print(f"groups {result['groups']}  kendall_tau {result['kendall_tau']:.4f}  spearman_rho {result['spearman_rho']:.4f}")
    else:
        print(f"items {result['items']}  accuracy {result['accuracy']:.4f}")
    _write(args, {"model": model.signature(), "file": args.file, **result})
    return 0
