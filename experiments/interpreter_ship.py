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

from interpreter_train import add_ship_arguments

from pragmeter.classify.interpreter import ship
from pragmeter.classify.recipes.inli import build


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a `pragmeter classifier train inli` output folder")
    parser.add_argument("--output", required=True, help="the shipped interpreter's folder")
    add_ship_arguments(parser)
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
