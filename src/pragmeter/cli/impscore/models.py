"""``pragmeter impscore models``: the shipped ImpScore models — purpose, encoder, speed, accuracy, human-suite
figures and licence terms."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list the shipped ImpScore models")
    parser.add_argument("--measure", action="store_true",
                        help="time each model on this machine (sentences/s) instead of the recorded figure")
    parser.set_defaults(func=run)


def _cell(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def run(args: argparse.Namespace) -> int:
    from pragmeter.impscore.catalogue import catalogue

    rows = catalogue(measure=args.measure)
    speed = "sentences/s (this machine)" if args.measure else "sentences/s (recorded)"
    print(f"| model | encoder | {speed} | paper test imp. / prag. | human suite | Floyd (a) | human pairs | licence |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        name = f"**{row['name']}** (default)" if row["default"] else row["name"]
        print(f"| {name} | {row['encoder']} | {_cell(row['sentences_per_second'], 0)} | "
              f"{_cell(row['paper_test_implicitness'])} / {_cell(row['paper_test_pragmatics'])} | "
              f"{_cell(row['human_decision'])} | {_cell(row['floyd_battery'])} | {_cell(row['human_pairs'])} | "
              f"{row['licence']} |")
    print()
    for row in rows:
        print(f"{row['name']}: {row['purpose'] or '(no purpose recorded)'}")
    return 0
