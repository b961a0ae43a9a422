"""``pragmeter data check``: which upstream data files the data root holds, and where to get the others;
``pragmeter data fetch``: get them."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import add


def register(subparsers) -> None:
    parser = subparsers.add_parser("data", help="the upstream data files: fetch them, check the data root",
                                   description="The upstream data files every loader reads (listed with their "
                                               "sha256 and pinned URL in pragmeter/data/manifest.json).")
    commands = parser.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    check = commands.add_parser(
        "check", help="list each manifest file as ok, missing or checksum mismatch, with its upstream URL",
        description="One tab-separated line per manifest file: status (ok, missing, checksum mismatch), path under "
                    "the data root and, for a file to download, its pinned upstream URL; then an 'unknown' line per "
                    "file the manifest does not list (reported, not an error). Exit 2 when any manifest file is "
                    "missing or differs, or when the folder holds none of them.")
    check.add_argument("datasets", nargs="*", metavar="DATASET",
                       help="check only these data sets (first folder of the path: inli, ishate, …; default: all)")
    add(check, "data_root")
    check.set_defaults(func=run_check)
    fetch = commands.add_parser(
        "fetch", help="download the manifest's files from their pinned URLs (resumed, checked) and prepare the rest",
        description="Download every missing or damaged manifest file from its pinned URL into the data root "
                    "(an interrupted download resumes on the next run), check its sha256 (a file that differs is "
                    "not kept), and prepare the files made from others (the Floyd battery from floyd_dev/raw/). "
                    "One tab-separated line per file (ok: already there, fetched, built, failed with why) and one per "
                    "data set with the licence it carries; exit 2 when any file failed. Then `pragmeter data check` "
                    "passes. A symbolic link or other non-regular file in the data root is refused in one line and "
                    "never written through; a download stops at its pinned size; one run at a time fills a root.")
    fetch.add_argument("--only", nargs="+", default=[], metavar="DATASET",
                       help="fetch only these data sets (first folder of the path: inli, ishate, …; default: all)")
    add(fetch, "no_progress")
    add(fetch, data_root={"help": "folder to fill (default: $PRAGMETER_DATA, else an existing "
                                          "../shared/data, else ../shared/data beside the current folder, made)"})
    fetch.set_defaults(func=run_fetch)


def run_check(args: argparse.Namespace) -> int:
    from pragmeter.data.check import check_report

    lines, summary, ok = check_report(args.data_root, args.datasets)
    for line in lines:
        print(line)
    print(summary, file=sys.stderr)
    return 0 if ok else 2


def run_fetch(args: argparse.Namespace) -> int:
    from pragmeter.data.fetch import FAILED, UNREACHABLE, fetch_data, licences

    root, outcomes = fetch_data(args.data_root, args.only, progress=not args.no_progress)
    unreachable = [item for item in outcomes if item.status == UNREACHABLE]
    for item in outcomes:  # the files of a host that cannot be reached are said once, below
        if item.status != UNREACHABLE:
            print("\t".join(filter(None, (item.status, item.relative, item.reason))))
    for name, licence, repositories in licences([item.relative for item in outcomes
                                                 if item.status not in (FAILED, UNREACHABLE)]):
        print("\t".join(("licence", name, licence, ", ".join(repositories))))
    failed = sum(item.status == FAILED for item in outcomes)
    counts = ", ".join(f"{sum(i.status == s for i in outcomes)} {s}" for s in sorted({i.status for i in outcomes}))
    if len(unreachable) < len(outcomes):  # else the line below says all there is (and the root was not kept)
        print(f"{len(outcomes)} files under {root}: {counts}; each data set keeps its upstream licence (docs/data.md)"
              + (f"; run the same command again to resume the {failed} failed" if failed else ""), file=sys.stderr)
    for reason in dict.fromkeys(item.reason for item in unreachable):
        count = sum(item.reason == reason for item in unreachable)
        print(f"pragmeter data fetch: error: {reason}, so {count} file(s) were not fetched; offline, use a copy of "
              "the data: pass --data-root DIR or set $PRAGMETER_DATA to a folder that holds it, or copy a data folder "
              "to ../shared/data (docs/data.md)", file=sys.stderr)
    return 2 if failed or unreachable else 0
