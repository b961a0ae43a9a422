"""``pragmeter impscore evaluate CHECK``: one evaluator (``pragmeter.impscore.evaluators``) per check — the corpus test
split, ranking/choice/battery files, Stanford Politeness, and the human-written suite that chooses the default.
``--baseline hedging`` runs a check with the hedge-word baseline instead of a model (same code path)."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import (add_data_root_option, add_embedding_cache_options, add_input_option,
                                  add_model_options, add_overwrite_option, load_model)

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
    parser = subparsers.add_parser("evaluate", help="evaluate an ImpScore model")
    kinds = parser.add_subparsers(dest="evaluate_kind", metavar="CHECK", required=True)

    corpus = kinds.add_parser("corpus", help="metrics on a corpus split (default: test split of the rebuilt corpus)")
    corpus.add_argument("--corpus", default=None, help="corpus file (default: build it from the data root)")
    corpus.add_argument("--split", default="test", help="split to evaluate (default test)")
    corpus.add_argument("--seed", type=int, default=0, help="corpus seed when building it (default 0)")
    add_embedding_cache_options(corpus, no_cache=False)
    add_data_root_option(corpus)

    files = []
    for kind, (help_text, description) in FILE_FORMATS.items():
        sub = kinds.add_parser(kind, help=help_text, description=description)
        add_input_option(sub, f"{kind} file (JSON)")
        files.append(sub)

    politeness = kinds.add_parser(
        "politeness", help="Spearman ρ between ImpScore and Stanford Politeness ratings (bootstrap CI)",
        description="Expected: a weak positive ρ (polite requests are usually the indirect ones). Scores a fixed "
                    "seeded sample of the 10,956 requests unless --sample 0.")
    politeness.add_argument("--sample", type=int, default=2000, help="requests to score, seeded (0 = all; default 2000)")
    politeness.add_argument("--domain", action="append", choices=["wikipedia", "stack-exchange"], default=None,
                            help="restrict to a domain (repeatable; default both)")
    politeness.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    add_data_root_option(politeness)

    human = kinds.add_parser(
        "human", help="the human-written evidence suite that chooses the default (bootstrap 95%% CIs)",
        description="Floyd et al.'s expert battery (utterance above its meant reading; meant reading closest), the "
                    "Stanford Politeness ρ, and implicit-above-explicit on the held-out pairs of every corpus source "
                    "that people wrote. LLM-written sets are printed after it, as a separate block that never decides.")
    human.add_argument("--politeness-sample", type=int, default=2000, help="politeness requests scored (default 2000)")
    add_data_root_option(human)

    for sub in (corpus, *files, politeness, human):
        add_model_options(sub)
        sub.add_argument("--output", default=None, help="write the full results as JSON here")
        add_overwrite_option(sub, "--output if it exists")
        sub.set_defaults(func=run)
    for sub in (*files, politeness, human):
        sub.add_argument("--seed", type=int, default=0, help="bootstrap (and sample) seed (default 0)")
        sub.add_argument("--baseline", choices=["hedging"], default=None,
                         help="evaluate a baseline instead of a model: 'hedging' = hedge-word count as implicitness, "
                              "word overlap as pragmatic distance")


def _evaluators(args: argparse.Namespace) -> list:
    """The evaluator(s) the check names, built (and their data validated) before any model loads."""
    from pragmeter.impscore import evaluators as ev

    kind = args.evaluate_kind
    if kind == "corpus":
        from pragmeter.impscore.corpus import build_corpus, load_corpus

        corpus = (load_corpus(args.corpus, seed=args.seed) if args.corpus
                  else build_corpus(seed=args.seed, root=args.data_root)[0])
        return [ev.CorpusEvaluator(corpus, args.split, args.cache, args.batch_size, args.device)]
    if kind in FILE_FORMATS:
        return [ev.file_evaluator(kind, args.input, args.seed)]
    if kind == "politeness":
        return [ev.politeness_evaluator(args.data_root, args.sample, args.seed, args.domain, args.resamples)]
    from pragmeter.impscore.corpus import build_corpus

    corpus = build_corpus(["all"], seed=ev.SUITE_CORPUS_SEED, root=args.data_root)[0]
    return [ev.HumanSuite(args.data_root, args.seed, args.politeness_sample, corpus=corpus),
            ev.llm_written_suite(args.data_root, args.seed, corpus=corpus)]


def _scorer(args: argparse.Namespace):
    """The model, or the baseline named by --baseline (both have score / pragmatic_distance / signature)."""
    if getattr(args, "baseline", None) == "hedging":
        from pragmeter.impscore.hedging import HedgingBaseline

        return HedgingBaseline()
    return load_model(args)


def run(args: argparse.Namespace) -> int:
    from pragmeter.impscore.accuracy import format_accuracy
    from pragmeter.impscore.evaluators import summary_table
    from pragmeter.io import check_output
    from pragmeter.provenance import write_results_json

    if args.output:
        check_output(args.output, args.overwrite)
    evaluators = _evaluators(args)
    model = _scorer(args)
    print(f"model: {model.signature()}")
    results = {}
    for evaluator in evaluators:
        result = results[evaluator.name] = evaluator(model)
        if evaluator.name == "llm_written":
            print("\nLLM-written sets (reported, never deciding alone)")
        elif evaluator.name == "human":
            print(f"human-written evidence (decision = mean of floyd_battery and pairs_macro): {result['decision']:.3f}")
        print(summary_table(evaluator.summary(result)))
        if "per_source" in result:
            print("\n| source | pairs | implicitness acc. | pragmatics acc. |\n|---|---|---|---|")
            for row in result["per_source"]:
                print(f"| {row['source']} | {row['pairs']:,} | {format_accuracy(row['implicitness_accuracy'])} | "
                      f"{format_accuracy(row['pragmatics_accuracy'])} |")
    if args.output:
        payload = results[evaluators[0].name] if len(evaluators) == 1 else results
        write_results_json(args.output, {"model": model.signature(), "check": args.evaluate_kind, **payload},
                           model.signature())
        print(f"results -> {args.output}")
    return 0
