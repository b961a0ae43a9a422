"""``pragmeter profile``: implicitness profile of a built-in dataset or of any text file."""

from __future__ import annotations

import argparse
from pathlib import Path

from pragmeter.cli.common import (add_data_root_option, add_embedding_cache_options, add_impscore_options,
                                  add_input_option, add_overwrite_option, load_model, refuse_existing)
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    from pragmeter.datasets.labelled_sets import BUILTINS, DEFAULT_CAP

    parser = subparsers.add_parser(
        "profile", help="implicitness distribution and pragmatic diversity of a dataset, per label",
        description="Score every text with ImpScore and write OUTPUT/profile_<name>.json (mean, SD, quantiles, "
                    "histograms per label value, pragmatic distances of random distinct pairs, label differences "
                    "with 95%% CIs), PNG plots and the per-text scores. DATASET is a built-in set "
                    f"({', '.join(BUILTINS)}, or 'all' for every one plus an overview plot) or a file "
                    "(txt/csv/tsv/jsonl/parquet). Embeddings are cached on disk, so a rerun is fast.")
    add_input_option(parser, "built-in dataset name, 'all', or a file")
    parser.add_argument("--column", default="text", help="text column of a file (default: text)")
    parser.add_argument("--label-column", action="append", default=[],
                        help="label column of a file; repeat for several groupings")
    parser.add_argument("--compare", action="append", default=[], metavar="A:B",
                        help="compare mean scores of label values A and B of the first label column (repeatable)")
    parser.add_argument("--pair-column", default=None,
                        help="a file column paired with the text (e.g. its implied statement): compared pair by pair")
    parser.add_argument("--max-per-label", type=int, default=None,
                        help=f"sample at most N texts per value of the first label (seeded; default: all for files, "
                             f"{DEFAULT_CAP} for built-in sets)")
    parser.add_argument("--pairs", type=int, default=2000, help="random distinct pairs for diversity (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of sampling and pairs (default 0)")
    parser.add_argument("--output", default="profiles", help="output folder (default: profiles)")
    add_overwrite_option(parser)
    add_embedding_cache_options(parser, folder=False)
    add_impscore_options(parser)
    add_data_root_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.profile import compute_profile, write_profile
    from pragmeter.datasets.labelled_sets import load_collections

    if args.pairs < 1:
        raise PragmeterError("--pairs must be at least 1")
    collections = load_collections(args.input, args.data_root, args.column, args.label_column, args.pair_column,
                                   args.compare, args.max_per_label, args.seed)
    output = Path(args.output)
    refuse_existing([output / f"profile_{c.name}.json" for c in collections]
                    + ([output / "profiles_overview.json"] if len(collections) > 1 else []), args.overwrite)
    model = load_model(args, cache=not args.no_cache)
    from pragmeter.metrics.intervals import format_estimate

    profiles = []
    for collection in collections:
        profile = compute_profile(collection, model, n_pairs=args.pairs, seed=args.seed)
        payload = write_profile(profile, output)
        profiles.append(profile)
        overall = payload["overall"]["scores"]
        diversity = payload["overall"]["diversity"]["mean"]  # None with fewer than two distinct texts
        print(f"{collection.name}: n={overall['n']} mean={overall['mean']:.4f} sd={_number(overall['sd'])} "
              f"diversity={_number(diversity)} -> {output / ('profile_' + collection.name + '.json')}")
        for comparison in payload["comparisons"]:
            if comparison["difference"] is not None:
                print(f"  {comparison['grouping']}: {comparison['a']} − {comparison['b']} = {format_estimate(comparison)}")
        for name, paired in payload["pairs"].items():
            if paired["difference"] is not None:
                print(f"  {name}: {paired['difference']:+.4f} [{paired['ci_low']:+.4f}, {paired['ci_high']:+.4f}] "
                      f"({paired['n_pairs']} pairs, first higher in {paired['share_a_greater']:.1%})")
    if len(profiles) > 1:
        from pragmeter.analysis.overview import write_overview

        write_overview(profiles, output)
        print(f"overview: {output / 'profiles_overview.png'}")
    return 0


def _number(value: float | None) -> str:
    """A statistic that needs two or more values is absent (n/a) with fewer, not zero."""
    return "n/a" if value is None else f"{value:.4f}"
