"""``pragmeter impscore evaluate CHECK``: one evaluator (``pragmeter.impscore.evaluators``) per check — the corpus test
split, ranking/choice/battery files, Stanford Politeness, and the human-written suite that chooses the default.
``--baseline hedging`` runs a check with the hedge-word baseline instead of a model (same code path)."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import add, add_input_option, load_model

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
    add(corpus, "cache", "data_root", seed={"help": "corpus seed when building it (default 0)"})

    files = []
    for kind, (help_text, description) in FILE_FORMATS.items():
        files.append(kinds.add_parser(kind, help=help_text, description=description))
        add_input_option(files[-1], f"{kind} file (JSON)")

    politeness = kinds.add_parser(
        "politeness", help="Spearman ρ between ImpScore and Stanford Politeness ratings (bootstrap CI)",
        description="Expected: a weak positive ρ (polite requests are usually the indirect ones). Scores a fixed "
                    "seeded sample of the 10,956 requests unless --sample 0.")
    politeness.add_argument("--sample", type=int, default=2000, help="requests to score, seeded (0 = all; default 2000)")
    politeness.add_argument("--domain", action="append", choices=["wikipedia", "stack-exchange"], default=None,
                            help="restrict to a domain (repeatable; default both)")
    politeness.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    add(politeness, "data_root")

    human = kinds.add_parser(
        "human", help="the human-written evidence suite that chooses the default (bootstrap 95%% CIs)",
        description="Floyd et al.'s expert battery (utterance above its meant reading; meant reading closest), the "
                    "Stanford Politeness ρ, and implicit-above-explicit on the held-out pairs of every corpus source "
                    "that people wrote. LLM-written sets are printed after it, as a separate block that never decides.")
    human.add_argument("--politeness-sample", type=int, default=2000, help="politeness requests scored (default 2000)")
    add(human, "data_root")

    for sub in (corpus, *files, politeness, human):
        add(sub, "model", "batch_size", "device", "dtype", "overwrite",
            output={"default": None, "help": "write the full results as JSON here"})
        # The model under test is measured on the reference path (torch; fp32 on a CPU): its corpus embeddings come
        # from the training encoder, and accuracies stay comparable with the paper's.
        sub.set_defaults(func=run, backend="torch")
    for sub in (*files, politeness, human):
        add(sub, seed={"help": "bootstrap (and sample) seed (default 0)"})
        sub.add_argument("--baseline", choices=["hedging"], default=None,
                         help="evaluate a baseline instead of a model: 'hedging' = hedge-word count as implicitness, "
                              "word overlap as pragmatic distance")


def run(args: argparse.Namespace) -> int:
    from pragmeter.impscore.evaluators import check_evaluators, result_text
    from pragmeter.impscore.hedging import HedgingBaseline
    from pragmeter.io import check_output
    from pragmeter.provenance import write_results_json

    if args.output:
        check_output(args.output, args.overwrite)
    options = {"corpus": "corpus", "split": "split", "cache_root": "cache", "path": "input", "sample": "sample",
               "domains": "domain", "resamples": "resamples", "politeness_sample": "politeness_sample"}
    evaluators = check_evaluators(args.evaluate_kind, getattr(args, "data_root", None), args.seed,
                                  batch_size=args.batch_size, device=args.device,
                                  **{key: getattr(args, name) for key, name in options.items() if hasattr(args, name)})
    model = HedgingBaseline() if getattr(args, "baseline", None) == "hedging" else load_model(args)
    print(f"model: {model.signature()}")
    results = {}
    for evaluator in evaluators:
        results[evaluator.name] = evaluator(model)
        print(result_text(evaluator, results[evaluator.name]))
    if args.output:
        payload = results[evaluators[0].name] if len(evaluators) == 1 else results
        write_results_json(args.output, {"model": model.signature(), "check": args.evaluate_kind, **payload},
                           model.signature())
        print(f"results -> {args.output}")
    return 0
