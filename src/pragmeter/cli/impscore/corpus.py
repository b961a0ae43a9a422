"""``pragmeter impscore corpus build``: rebuild ImpScore's (implicit, explicit) training pairs from the public sources."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import add


def register(subparsers) -> None:
    parser = subparsers.add_parser("corpus", help="build the ImpScore training corpus")
    commands = parser.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)
    build = commands.add_parser(
        "build", help="write the (implicit, explicit) pairs with negatives and splits to parquet",
        description="Rebuild the ImpScore training corpus from the sources in the data root, or convert the "
                    "official all_data.csv (--from-official). Prints a per-source table like the paper's Table 6.")
    add(build, output={"default": "corpus.parquet", "help": "output file (.parquet, .csv, .jsonl)"})
    build.add_argument("--sources", default=None,
                       help="comma-separated sources and presets: paper (the Table-6 rebuild, the default), figurative "
                            "(the 2026-11-22 sources), generated (LLM-written data shipped with pragmeter: explicit "
                            "sides, graded groups), all; e.g. paper,figurative or paper,figqa (`pragmeter impscore "
                            "corpus sources` lists them)")
    build.add_argument("--from-official", metavar="ALL_DATA_CSV", default=None,
                       help="convert the official all_data.csv (pos_implicit, pos_explicit, neg_implicit, neg_explicit)")
    build.add_argument("--cap", type=int, default=None, metavar="N",
                       help="at most N pairs per source (whole groups, seeded); a source's own lower cap wins")
    add(build, "data_root", seed={"help": "seed for splits and negatives (default 0)"},
        overwrite={"help": "replace --output if it exists"})
    build.set_defaults(func=run_build)
    sources = commands.add_parser("sources", help="list the corpus sources")
    sources.set_defaults(func=run_sources)


def run_build(args: argparse.Namespace) -> int:
    from pragmeter.impscore.corpus import build_corpus, format_report, load_corpus, write_corpus
    from pragmeter.io import check_output

    check_output(args.output, args.overwrite)
    if args.from_official:
        frame = load_corpus(args.from_official, seed=args.seed)
        print(f"{len(frame):,} pairs from {args.from_official}", file=sys.stderr)
    else:
        sources = [s.strip() for s in args.sources.split(",")] if args.sources else None
        frame, report = build_corpus(sources, seed=args.seed, root=args.data_root, cap=args.cap)
        print(format_report(report))
    write_corpus(frame, args.output, overwrite=args.overwrite)
    print(f"wrote {len(frame):,} pairs -> {args.output}", file=sys.stderr)
    return 0


def run_sources(args: argparse.Namespace) -> int:
    from pragmeter.datasets.pairs.registry import PRESETS

    for preset, names in PRESETS.items():
        print(f"{preset}: {','.join(names)}")
    return 0
