"""Second-reader agreement for a ranking file (groups ordered most explicit → most implicit).

1. ``python tools/ood_agreement.py blind REF.json BLIND.json [--seed 0]`` writes the groups with their
   sentences shuffled (and the groups in shuffled order), with no hint of the reference order.
2. The second reader copies BLIND.json and reorders each group's sentences, most explicit first, without
   looking at REF.json.
3. ``python tools/ood_agreement.py compare REF.json SECOND.json`` prints Kendall τ per group (reference
   level against the second reader's position), the mean, and the groups where the readers disagree.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from pragmeter.errors import PragmeterError
from pragmeter.impscore.ood import compare_orderings, load_ranking
from pragmeter.io import write_json_atomic


def blind(reference: str, output: str, seed: int) -> None:
    rng = random.Random(seed)
    groups = []
    for group in load_ranking(reference):
        sentences = list(group.sentences)
        while sentences == group.sentences:  # a shuffle that returns the reference order would leak it
            rng.shuffle(sentences)
        groups.append({"id": group.id, "sentences": sentences})
    rng.shuffle(groups)
    write_json_atomic(output, {
        "description": f"blind copy of {Path(reference).name} (seed {seed}): sentences shuffled. Reorder each group "
                       "from most explicit to most implicit without looking at the reference, then run "
                       "tools/ood_agreement.py compare.",
        "groups": groups})
    print(f"{len(groups)} groups -> {output}")


def compare(reference: str, second: str, threshold: float) -> None:
    result = compare_orderings(load_ranking(reference), load_ranking(second))
    print(f"groups {result['groups']}  mean kendall_tau {result['kendall_tau']:.3f}  "
          f"mean spearman_rho {result['spearman_rho']:.3f}  identical orders {result['exact']}  "
          f"tau <= 0: {result['disagree']}")
    for row in result["per_group"]:
        if row["kendall_tau"] < threshold:
            print(f"  {row['id']}: tau {row['kendall_tau']:.2f}  second reader's levels {row['second_levels']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("blind", help="write a shuffled copy for a second reader")
    b.add_argument("reference")
    b.add_argument("output")
    b.add_argument("--seed", type=int, default=0)
    c = commands.add_parser("compare", help="agreement of a second ordering with the reference")
    c.add_argument("reference")
    c.add_argument("second")
    c.add_argument("--show-below", type=float, default=0.5, help="list groups with τ below this (default 0.5)")
    args = parser.parse_args(argv)
    try:
        if args.command == "blind":
            blind(args.reference, args.output, args.seed)
        else:
            compare(args.reference, args.second, args.show_below)
    except PragmeterError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
