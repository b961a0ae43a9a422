"""Average the weights of two interpreter runs that share an architecture (``classify/average.py``): OUTPUT holds
``(1 - share) * FIRST + share * SECOND`` with SECOND's tokenizer, metrics and config (the average recorded in its
recipe, so a shipped card says so). Judge the result on validation like any trained candidate.

    python experiments/interpreter_average.py ckpt/runs/figqa11-pragmatic ckpt/runs/framed14-pragmatic \\
        --share 0.5 --output ckpt/runs/framed14-average
"""
from __future__ import annotations

import argparse
import json
import sys

from pragmeter.classify.average import average_weights
from pragmeter.errors import PragmeterError


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", help="run folder (whole weights: model.safetensors and config.json)")
    parser.add_argument("second", help="run folder of the same architecture and labels; its other files are kept")
    parser.add_argument("--share", type=float, default=0.5, help="SECOND's share of each weight (default 0.5)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    try:
        command = "python experiments/interpreter_average.py " + " ".join(sys.argv[1:] if argv is None else argv)
        record = average_weights(args.first, args.second, args.output, args.share, command)
    except PragmeterError as error:
        sys.exit(f"interpreter_average: error: {error}")
    print(json.dumps({"output": args.output, "average": record}))


if __name__ == "__main__":
    main()
