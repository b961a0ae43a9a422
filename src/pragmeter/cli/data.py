"""``pragmeter data check``: which upstream data files the data root holds, and where to get the others."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from pragmeter.cli.common import add


def register(subparsers) -> None:
    parser = subparsers.add_parser("data", help="the upstream data files: check the data root",
                                   description="The upstream data files every loader reads (listed with their "
                                               "sha256 and pinned URL in pragmeter/data/manifest.json).")
    commands = parser.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    check = commands.add_parser(
        "check", help="list each manifest file as ok, missing or checksum mismatch, with its upstream URL",
        description="One tab-separated line per manifest file: status (ok, missing, checksum mismatch), path under "
                    "the data root and, for a file to download, its pinned upstream URL. Exit 2 when any file is "
                    "missing or differs.")
    check.add_argument("datasets", nargs="*", metavar="DATASET",
                       help="check only these data sets (first folder of the path: inli, ishate, …; default: all)")
    add(check, "data_root")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from pragmeter.data.check import OK, check_data_root
    from pragmeter.data.root import data_root

    statuses = check_data_root(args.data_root, args.datasets)
    for item in statuses:
        print(item.status + "\t" + item.relative + ("" if item.status == OK else "\t" + item.url))
    counts = Counter(item.status for item in statuses)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"{len(statuses)} files under {data_root(args.data_root)}: {summary}", file=sys.stderr)
    return 0 if counts[OK] == len(statuses) else 2
