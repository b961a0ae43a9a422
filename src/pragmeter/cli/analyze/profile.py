"""``pragmeter analyze profile``: implicitness profile of a built-in dataset or of any text file."""

from __future__ import annotations

import argparse
from pathlib import Path

from pragmeter.cli.common import INSTRUMENT, add, add_input_option, load_model, refuse_existing
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    from pragmeter.datasets.labelled_sets import BUILTINS, DEFAULT_CAP

    parser = subparsers.add_parser(
        "profile", help="implicitness distribution and pragmatic diversity of a dataset, per label",
        description="Score every text with ImpScore and write OUTPUT/profile_<name>.json (mean, SD, quantiles, "
                    "histograms per label value, pragmatic distances of random distinct pairs, label differences "
                    "with 95% CIs), PNG plots and the per-text scores. DATASET is a built-in set "
                    f"({', '.join(BUILTINS)}, or 'all' for every one plus an overview plot) or a file "
                    "(txt/csv/tsv/jsonl/parquet). Embeddings are cached on disk, so a rerun is fast.")
    add_input_option(parser, "built-in dataset name, 'all', or a file")
    add(parser, column={"help": "text column of a file (default: text)"})
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
    add(parser, seed={"help": "seed of sampling and pairs (default 0)"},
        output={"default": "profiles", "help": "output folder (default: profiles)"})
    add(parser, "overwrite", "no_cache", "impscore_old_name", *INSTRUMENT, "data_root")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.profile import profile_collections
    from pragmeter.datasets.labelled_sets import load_collections

    if args.pairs < 1:
        raise PragmeterError("--pairs must be at least 1")
    collections = load_collections(args.input, args.data_root, args.column, args.label_column, args.pair_column,
                                   args.compare, args.max_per_label, args.seed)
    output = Path(args.output)
    refuse_existing([output / f"profile_{c.name}.json" for c in collections]
                    + ([output / "profiles_overview.json"] if len(collections) > 1 else []), args.overwrite)
    for line in profile_collections(collections, load_model(args, cache=not args.no_cache), output, args.pairs,
                                    args.seed):
        print(line)
    return 0
