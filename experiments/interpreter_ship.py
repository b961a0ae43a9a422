"""Ship a trained interpreter through `pragmeter interpret ship`: the ``classifier train inli`` folder ``--run`` as
low-rank factors over its base encoder (pragmeter.interpreter.shipped), the rank chosen on INLI validation among
``--rank``, bf16 checked, the card written, and the INLI test split read once for the shipped form with
``--evaluate-test``. The output folder is replaced (the release goes over the packaged one).

    python experiments/interpreter_ship.py --run runs/inli-minilm --rank 16,32,64 --evaluate-test \
        --output src/pragmeter/interpreter/models/interpreter-minilm-inli
"""
from __future__ import annotations

import argparse
import sys

from interpreter_train import add_ship_arguments

from pragmeter.cli import main as pragmeter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a `pragmeter classifier train inli` output folder")
    parser.add_argument("--output", required=True, help="the shipped interpreter's folder")
    add_ship_arguments(parser)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)
    command = ["interpret", "ship", args.run, "--output", args.output, "--overwrite",
               "--rank", ",".join(map(str, args.rank)), "--bf16-pairs", str(args.bf16_pairs)]
    command += ["--limit", str(args.limit_eval)] if args.limit_eval else []
    command += ["--evaluate-test"] if args.evaluate_test else []
    command += ["--no-progress"] if args.no_progress else []
    command += ["--data-root", args.data_root] if args.data_root else []
    return pragmeter(command)  # prints the summary as one JSON line


if __name__ == "__main__":
    sys.exit(main())
