"""Which combination of an interpreter's label probabilities should rank readings, measured on development sets only.

A reading's score is a weighted sum of its label probabilities, ``sum_l w_l P(l)``; the interpreter ranks readings by
P(implied) + P(explicit). This reads each development set's (premise, reading) pairs once, keeps the probability rows,
and reports every candidate weighting's choice accuracy on each set and their mean:

- GRICE's held-out turns (four readings each; the recipe's ``grice_items`` dev),
- Circa's development dialogues outside INLI (readings "yes" / "no"; ``circa_items`` dev),
- LUDWIG's dev split (readings "yes" / "no", as the ``ludwig`` task asks a ``local:`` model; the paper's 118 example
  pool, never scored by the benchmark),
- FLUTE's figurative development sentences (the recipe's ``flute_items`` dev: idioms, metaphors, similes): the
  figurative sentence said without a context, its literal meaning against FLUTE's opposite literal reading
  (``flute_figurative``), and the same with the sentence itself, restated, as a third reading
  (``flute_figurative_restated``: a reading that only repeats what was said is not what the figure means).

No test split or evaluation-only battery (DRInQ, the Floyd battery, LUDWIG test, Fig-QA) is read.

    python experiments/interpreter_choice_rule.py --output runs/choice-rule.json
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

# Candidate weightings over INLI's labels (implied, explicit, neutral, contradiction).
RULES = {
    "implied+explicit": {"implied": 1.0, "explicit": 1.0},
    "implied": {"implied": 1.0},
    "implied+explicit/2": {"implied": 1.0, "explicit": 0.5},
    "implied+explicit-contradiction": {"implied": 1.0, "explicit": 1.0, "contradiction": -1.0},
    "implied-contradiction": {"implied": 1.0, "contradiction": -1.0},
}


def dev_sets(root) -> dict[str, tuple[list[str], list[list[str]], list[int]]]:
    """Each development set as (premises, readings per premise, index of the meant reading), built by the recipe's own
    evaluators (LUDWIG's items as Circa's yes/no items are)."""
    from pragmeter.classify.recipes.interpreter import (YesNoItem, circa_items, figurative_evaluator, flute_items,
                                                        grice_evaluator, grice_items, yes_no_evaluator)
    from pragmeter.datasets.ludwig import load_ludwig
    from pragmeter.interpreter.model import premise

    ludwig = [YesNoItem(premise(i.question, i.response), i.question, i.label) for i in load_ludwig("dev", root)]
    flute = figurative_evaluator(flute_items(root)[1])
    sets = {"grice_dev": grice_evaluator(grice_items(root)[1]), "circa_dev": yes_no_evaluator(circa_items(root)[1]),
            "ludwig_dev": yes_no_evaluator(ludwig)}
    out = {name: (e.premises, e.readings, e.golds) for name, e in sets.items()}
    out["flute_figurative"] = (flute.premises, [r[:2] for r in flute.readings], flute.golds)  # meaning, opposite
    out["flute_figurative_restated"] = (flute.premises, flute.readings, flute.golds)
    return out


def accuracy(rows: np.ndarray, sizes: list[int], golds: list[int], weights: np.ndarray) -> float:
    scores, start, right = rows @ weights, 0, 0
    for size, gold in zip(sizes, golds):
        right += int(np.argmax(scores[start:start + size])) == gold
        start += size
    return right / len(golds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="interpreter folder or packaged name (default: the default)")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--limit", type=int, default=None, help="first N items of each set (smoke runs)")
    parser.add_argument("--output", default=None, help="results JSON (written atomically)")
    args = parser.parse_args(argv)

    from pragmeter.interpreter.model import Interpreter
    from pragmeter.provenance import write_results_json

    interpreter = Interpreter.load(args.model, precision=args.precision, progress=False)
    labels = interpreter.labels
    results = {}
    for name, (premises, readings, golds) in dev_sets(args.data_root).items():
        premises, readings, golds = premises[:args.limit], readings[:args.limit], golds[:args.limit]
        flat_p = [p for p, options in zip(premises, readings) for _ in options]
        flat_h = [h for options in readings for h in options]
        rows = interpreter.probabilities(flat_p, flat_h, args.batch_size)
        sizes = [len(options) for options in readings]
        results[name] = {"n": len(golds), **{rule: accuracy(rows, sizes, golds, np.array(
            [weights.get(label, 0.0) for label in labels])) for rule, weights in RULES.items()}}
        print(name, json.dumps(results[name]), flush=True)
    means = {rule: float(np.mean([results[name][rule] for name in results])) for rule in RULES}
    print("mean", json.dumps(means), flush=True)
    if args.output:
        write_results_json(args.output, {"model": str(args.model or "default"), "precision": args.precision,
                                         "rules": RULES, "sets": results, "mean": means,
                                         "command": list(sys.argv)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
