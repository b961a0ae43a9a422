"""``pragmeter data check``: which upstream data files the data root holds, and where to get the others."""

from __future__ import annotations

import argparse
import sys

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
    from pragmeter.data.check import check_report

    lines, summary, ok = check_report(args.data_root, args.datasets)
    for line in lines:
        print(line)
    print(summary, file=sys.stderr)
    return 0 if ok else 2
