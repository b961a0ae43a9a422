"""Ship a trained interpreter: the ``classifier train inli`` folder ``--run`` as low-rank factors over its base
encoder (pragmeter.classify.shipped), the rank chosen on INLI validation among ``--rank``, bf16 checked, the card
written, and the INLI test split read once for the shipped form with ``--evaluate-test``.

    python experiments/interpreter_ship.py --run runs/inli-minilm --rank 16,32,64 --evaluate-test \
        --output src/pragmeter/classify/models/interpreter-minilm-inli
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from interpreter_train import parse_ranks

from pragmeter.classify.interpreter import ship
from pragmeter.classify.recipes.inli import build
from pragmeter.classify.shipped import DEFAULT_RANK


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a `pragmeter classifier train inli` output folder")
    parser.add_argument("--output", required=True, help="the shipped interpreter's folder")
    parser.add_argument("--rank", type=parse_ranks, default=[DEFAULT_RANK],
                        help=f"rank of the shipped factors, or comma-separated ranks: the best on validation ships "
                             f"(default {DEFAULT_RANK})")
    parser.add_argument("--evaluate-test", action="store_true", help="test the shipped interpreter once on INLI test")
    parser.add_argument("--bf16-pairs", type=int, default=4096,
                        help="validation pairs of the bf16 check of the shipped form (0: not checked, so `auto` "
                             "runs it in fp32)")
    parser.add_argument("--limit-eval", type=int, default=None, help="first N validation and test pairs")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)

    data = build("4way", "standard", args.data_root)
    if args.limit_eval:
        data.val, data.test = data.val.head(args.limit_eval), data.test.head(args.limit_eval)
    shipped = ship(Path(args.run), Path(args.output), args.rank, data.val, data.test if args.evaluate_test else None,
                   bf16_pairs=args.bf16_pairs, progress=not args.no_progress)
    summary = {"rank": shipped["rank"], "val_whole": shipped["val_whole"]["accuracy"],
               "val_shipped": shipped["val_compressed"]["accuracy"], **({"val_by_rank": shipped["val_by_rank"]}
                                                                      if "val_by_rank" in shipped else {})}
    if "test_compressed" in shipped:
        summary["test_shipped"] = shipped["test_compressed"]["accuracy"]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
