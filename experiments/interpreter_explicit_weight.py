"""Which explicit weight w should an interpreter score readings with (P(implied) + w P(explicit)), chosen on development
choice splits by the rule of :mod:`pragmeter.interpreter.weight`, and optionally recorded in the model folder.

Each weight is measured through the interpreter's own scoring (the recipe's evaluators call ``scores_many``, as
``choose`` does), in fp32, the forward pass made once per split. The splits: GRICE's held-out turns, Circa's
development dialogues, LUDWIG's dev split (readings "yes" / "no", as the ``ludwig`` task asks a ``local:`` model), and
the recipe's meant-first development splits (FLUTE, sarcasm, Fig-QA and IMPLI, bare, framed and restated as near
copies, and the situated implicatures written for pragmeter). No test split is read.

    python experiments/interpreter_explicit_weight.py --model FOLDER --output runs/weight.json
    python experiments/interpreter_explicit_weight.py --model FOLDER --output runs/weight.json --record
    python experiments/interpreter_explicit_weight.py --model FOLDER --rule mean --output runs/weight.json
"""

from __future__ import annotations

import argparse
import json
import sys

SPLITS = ("grice_dev", "circa_dev", "ludwig_dev", "flute_dev", "sarcasm_dev", "figqa_dev", "impli_dev",
          "figqa_dev_framed", "impli_dev_framed", "figqa_dev_framed_reworded", "impli_dev_framed_reworded",
          "situated_dev")


def evaluators(names, root, limit: int | None, batch_size: int) -> dict:
    """name -> the recipe's ReadingChoiceEvaluator of that development split (the first ``limit`` items)."""
    from pragmeter.classify.recipes.interpreter import (MEANT_FIRST_DEV, YesNoItem, circa_items, grice_evaluator,
                                                        grice_items, yes_no_evaluator)
    from pragmeter.datasets.ludwig import load_ludwig
    from pragmeter.interpreter.model import premise

    out = {}
    for name in names:
        if name == "grice_dev":
            out[name] = grice_evaluator(grice_items(root)[1][:limit], name, batch_size)
        elif name == "circa_dev":
            out[name] = yes_no_evaluator(circa_items(root)[1][:limit], name, batch_size)
        elif name == "ludwig_dev":
            items = [YesNoItem(premise(i.question, i.response), i.question, i.label) for i in load_ludwig("dev", root)]
            out[name] = yes_no_evaluator(items[:limit], name, batch_size)
        elif name in MEANT_FIRST_DEV:
            out[name] = MEANT_FIRST_DEV[name].evaluator(MEANT_FIRST_DEV[name].reader(root)[1][:limit], name,
                                                        batch_size)
        else:
            raise SystemExit(f"--splits: unknown split {name!r} (known: {', '.join(SPLITS)})")
    return out


def main(argv: list[str] | None = None) -> int:
    from pragmeter.interpreter.weight import RULES, WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="interpreter folder (or packaged name, without --record)")
    parser.add_argument("--weights", default=",".join(f"{w:g}" for w in WEIGHTS), help="comma-separated weights")
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--target", default="situated_dev", help="the split the weight is chosen for")
    parser.add_argument("--rule", choices=RULES, default="each-split",
                        help="which weights are admissible (pragmeter.interpreter.weight, module notes)")
    parser.add_argument("--record", action="store_true", help="write the chosen weight into the model folder")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--limit", type=int, default=None, help="first N items of each split (smoke runs)")
    parser.add_argument("--output", default=None, help="results JSON (written atomically)")
    args = parser.parse_args(argv)

    from pragmeter.interpreter.model import Interpreter
    from pragmeter.interpreter.weight import choose_weight, record_weight, weight_accuracies
    from pragmeter.provenance import write_results_json

    interpreter = Interpreter.load(args.model, precision="fp32", progress=False, explicit_weight=1)
    chosen_on = evaluators([s.strip() for s in args.splits.split(",") if s.strip()], args.data_root, args.limit,
                           args.batch_size)
    weights = [float(w) for w in args.weights.split(",") if w.strip()]
    accuracies = weight_accuracies(interpreter, chosen_on, weights)
    sizes = {name: len(evaluator.golds) for name, evaluator in chosen_on.items()}
    for weight, row in accuracies.items():
        print(weight, json.dumps({name: round(value, 4) for name, value in row.items()}), flush=True)
    choice = choose_weight(accuracies, sizes, args.target, args.rule)
    print("chosen", json.dumps(choice), flush=True)
    report = {"model": str(args.model), "precision": "fp32", "sizes": sizes, "accuracies": accuracies, **choice,
              "command": list(sys.argv)}
    if args.output:
        write_results_json(args.output, report)
    if args.record:
        record_weight(interpreter.folder, choice["weight"], {
            "rule_text": RULES[args.rule],
            "sizes": sizes, "accuracies": accuracies, **{k: v for k, v in choice.items() if k != "weight"}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
