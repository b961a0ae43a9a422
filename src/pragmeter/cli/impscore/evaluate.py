"""``pragmeter impscore evaluate``: ImpScore on the corpus test split, the ranking/choice/battery OOD checks on user files,
the Spearman check against the Stanford Politeness ratings, and the human-written evidence suite that chooses the
default (``human``). ``--baseline hedging`` runs the OOD checks with the
hedge-word baseline instead of a model (same code path)."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import (add_data_root_option, add_embedding_cache_options, add_input_option,
                                  add_model_options, load_model)


def register(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="evaluate an ImpScore model")
    kinds = parser.add_subparsers(dest="evaluate_kind", metavar="CHECK", required=True)

    corpus = kinds.add_parser("corpus", help="metrics on a corpus split (default: test split of the rebuilt corpus)")
    corpus.add_argument("--corpus", default=None, help="corpus file (default: build it from the data root)")
    corpus.add_argument("--split", default="test", help="split to evaluate (default test)")
    corpus.add_argument("--seed", type=int, default=0, help="corpus seed when building it (default 0)")
    add_embedding_cache_options(corpus, no_cache=False)
    add_data_root_option(corpus)
    corpus.set_defaults(func=run_corpus)

    ranking = kinds.add_parser("ranking", help="Kendall τ / Spearman ρ on groups ordered explicit → implicit",
                               description="FILE is JSON: {\"groups\": [{\"id\": ..., \"sentences\": [most explicit, ..., "
                                           "most implicit]}]}")
    add_input_option(ranking, "ranking file (JSON)")
    ranking.set_defaults(func=run_ood)

    choice = kinds.add_parser("choice", help="accuracy of choosing the pragmatically closest option",
                              description="FILE is JSON: {\"items\": [{\"id\": ..., \"reference\": ..., \"options\": [...], "
                                          "\"answer\": index}]}")
    add_input_option(choice, "choice file (JSON)")
    choice.set_defaults(func=run_ood)

    battery = kinds.add_parser("battery", help="pragmatics battery: utterance above its plain statement, and choice",
                               description="FILE is JSON: {\"items\": [{\"id\": ..., \"category\": ..., \"utterance\": "
                                           "..., \"options\": [...], \"answer\": index of the plain statement}]}")
    add_input_option(battery, "battery file (JSON)")
    battery.set_defaults(func=run_ood)

    politeness = kinds.add_parser(
        "politeness", help="Spearman ρ between ImpScore and Stanford Politeness ratings (bootstrap CI)",
        description="Expected: a weak positive ρ (polite requests are usually the indirect ones). Scores a fixed "
                    "seeded sample of the 10,956 requests unless --sample 0.")
    politeness.add_argument("--sample", type=int, default=2000, help="requests to score, seeded (0 = all; default 2000)")
    politeness.add_argument("--domain", action="append", choices=["wikipedia", "stack-exchange"], default=None,
                            help="restrict to a domain (repeatable; default both)")
    politeness.add_argument("--seed", type=int, default=0, help="sample and bootstrap seed (default 0)")
    politeness.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    add_data_root_option(politeness)
    politeness.set_defaults(func=run_politeness)

    human = kinds.add_parser(
        "human", help="the human-written evidence suite that chooses the default (bootstrap 95%% CIs)",
        description="Floyd et al.'s expert battery (utterance above its meant reading; meant reading closest), the "
                    "Stanford Politeness ρ, and implicit-above-explicit on the held-out pairs of every corpus source "
                    "that people wrote. LLM-written sets are printed after it, as a separate block that never decides.")
    human.add_argument("--seed", type=int, default=0, help="bootstrap and politeness-sample seed (default 0)")
    human.add_argument("--politeness-sample", type=int, default=2000, help="politeness requests scored (default 2000)")
    add_data_root_option(human)
    human.set_defaults(func=run_human)

    for sub in (corpus, ranking, choice, battery, politeness, human):
        add_model_options(sub)
        sub.add_argument("--output", default=None, help="write the full results as JSON here")
        sub.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    for sub in (ranking, choice, battery, politeness, human):
        sub.add_argument("--baseline", choices=["hedging"], default=None,
                         help="evaluate a baseline instead of a model: 'hedging' = hedge-word count as implicitness, "
                              "word overlap as pragmatic distance")


def _check_output(args: argparse.Namespace) -> None:
    if args.output:
        from pragmeter.io import check_output

        check_output(args.output, args.overwrite)


def _write(args: argparse.Namespace, payload: dict) -> None:
    if args.output:
        from pragmeter.io import write_json_atomic
        from pragmeter.provenance import RunRecord

        write_json_atomic(args.output, {**payload, "run": RunRecord.now(payload.get("model")).to_dict()})
        print(f"results -> {args.output}", file=sys.stderr)


def run_corpus(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pragmeter.encoders import embeddings_dir
    from pragmeter.errors import PragmeterError
    from pragmeter.impscore.corpus import build_corpus, load_corpus
    from pragmeter.impscore.accuracy import format_accuracy, per_source_metrics
    from pragmeter.impscore.training import embed_corpus, evaluate_heads

    _check_output(args)
    corpus = load_corpus(args.corpus, seed=args.seed) if args.corpus else build_corpus(seed=args.seed, root=args.data_root)[0]
    model = load_model(args)
    corpus = corpus[corpus["split"] == args.split]
    if corpus.empty:
        raise PragmeterError(f"the corpus has no rows in split {args.split!r}")
    cache_root = Path(args.cache) if args.cache else embeddings_dir()
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


def _scorer(args: argparse.Namespace):
    """The model, or the baseline named by --baseline (both have score / pragmatic_distance / signature)."""
    if getattr(args, "baseline", None) == "hedging":
        from pragmeter.impscore.hedging import HedgingBaseline

        return HedgingBaseline()
    return load_model(args)


def _print_categories(per_category: dict, keys: tuple[str, ...]) -> None:
    for category, row in per_category.items():
        print(f"  {category:18s} n={row['n']:<3d} " + "  ".join(f"{k} {row[k]:.3f}" for k in keys))


def run_ood(args: argparse.Namespace) -> int:
    """Ranking, choice or battery check: load and validate the file, evaluate, print the headline, write details."""
    from pragmeter.impscore import ood

    check = args.evaluate_kind
    _check_output(args)
    items = getattr(ood, f"load_{check}")(args.input)
    model = _scorer(args)
    result = getattr(ood, f"evaluate_{check}")(model, items)
    print(f"model: {model.signature()}")
    if check == "ranking":
        print(f"groups {result['groups']}  kendall_tau {result['kendall_tau']:.4f}  spearman_rho {result['spearman_rho']:.4f}"
              + (f"  (constant-score groups counted as 0: {result['constant_groups']})" if result["constant_groups"] else ""))
        if result["paper_choice_accuracy"] is not None:
            print(f"choice on the same groups, the paper's user-study form (explicit sentence vs three most implicit "
                  f"ones, 10 draws): accuracy {result['paper_choice_accuracy']:.4f}")
        _print_categories(result["per_category"], ("kendall_tau", "spearman_rho"))
    elif check == "battery":
        print(f"items {result['items']}  implicitness_accuracy {result['implicitness_accuracy']:.4f}  "
              f"choice_accuracy {result['choice_accuracy']:.4f}")
        _print_categories(result["per_category"], ("implicitness_accuracy", "choice_accuracy"))
    else:
        print(f"items {result['items']}  accuracy {result['accuracy']:.4f}")
    _write(args, {"model": model.signature(), "file": args.input, **result})
    return 0


def run_politeness(args: argparse.Namespace) -> int:
    """Spearman ρ (bootstrap CI) between implicitness scores and the normalized politeness ratings."""
    import numpy as np

    from pragmeter.datasets.politeness import DOMAINS, load_politeness
    from pragmeter.impscore.ood import evaluate_graded

    _check_output(args)
    domains = tuple(args.domain or DOMAINS)
    requests = load_politeness(domains, args.data_root)
    if 0 < args.sample < len(requests):
        chosen = np.sort(np.random.default_rng(args.seed).choice(len(requests), size=args.sample, replace=False))
        requests = [requests[i] for i in chosen]
    model = _scorer(args)
    result = evaluate_graded(model, [r.text for r in requests], [r.score for r in requests], args.resamples, args.seed)
    print(f"model: {model.signature()}")
    print(f"requests {result['n']} ({', '.join(domains)}; sample seed {args.seed})  spearman_rho "
          f"{result['spearman_rho']:.4f}  95% CI [{result['ci95'][0]:.4f}, {result['ci95'][1]:.4f}]")
    scores = result.pop("scores")
    _write(args, {"model": model.signature(), "domains": list(domains), "sample": args.sample, "seed": args.seed,
                  **result, "per_item": [{"id": r.id, "politeness": r.score, "score": s}
                                         for r, s in zip(requests, scores, strict=True)]})
    return 0


def run_human(args: argparse.Namespace) -> int:
    """The human-written suite, then the LLM-written block; one table each."""
    from pragmeter.impscore.corpus import build_corpus
    from pragmeter.impscore.evaluators import SUITE_CORPUS_SEED, HumanSuite, llm_written_suite, summary_table

    _check_output(args)
    corpus = build_corpus(["all"], seed=SUITE_CORPUS_SEED, root=args.data_root)[0]
    human = HumanSuite(args.data_root, args.seed, args.politeness_sample, corpus=corpus)
    llm = llm_written_suite(args.data_root, args.seed, corpus=corpus)
    model = _scorer(args)
    result, llm_result = human(model), llm(model)
    print(f"model: {model.signature()}")
    print(f"human-written evidence (decision = mean of floyd_battery and pairs_macro): {result['decision']:.3f}")
    print(summary_table(result["summary"]))
    print("\nLLM-written sets (reported, never deciding alone)")
    print(summary_table(llm_result["summary"]))
    _write(args, {"model": model.signature(), "human": result, "llm_written": llm_result})
    return 0
