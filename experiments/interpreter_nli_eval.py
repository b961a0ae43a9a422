"""An interpreter on the general NLI sets and GRICE: 3-way accuracy (P(implied) + P(explicit) as entailment, against
neutral and contradiction) on 3-way sets, entailed-or-not accuracy on 2-way sets, and GRICE's four-way choice of the
meant reading. The evaluation-only splits (XNLI-en test, SICK test, MoNLI test, ScoNe test, DNC test, ConjNLI dev,
Breaking NLI, ConTRoL) are for the shipped model, once; ``--sets`` chooses (XNLI-en validation, GRICE's held-out
turns, the recipe's Circa development split, ``circa_dev``, its FLUTE figurative development sentences,
``flute_dev``, its sarcastic development tweets, ``sarcasm_dev``, Fig-QA's validation metaphors, ``figqa_dev``,
its IMPLI development sentences, ``impli_dev``, and the situated implicatures written for pragmeter, ``situated_dev``,
serve selection).

    python experiments/interpreter_nli_eval.py --model src/pragmeter/interpreter/models/interpreter-minilm-inli \\
        --sets xnli_en:validation,grice --output runs/nli-eval.json
    python experiments/interpreter_nli_eval.py --model M --sets xnli_en:test --limit 50     # smoke run
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from pragmeter.classify.recipes.interpreter import MEANT_FIRST_DEV
from pragmeter.interpreter.model import Interpreter
from pragmeter.metrics.classification import confusion_matrix
from pragmeter.io import write_json_atomic

DEFAULT_SETS = ("xnli_en:validation", "grice", "circa_dev")


def nli_accuracy(interpreter: Interpreter, pairs, batch_size: int) -> dict:
    """Accuracy on ``pairs`` (NliPair rows): 3-way where the set has contradictions, else entailed or not, and the
    confusion (gold label -> predicted label -> pairs), which shows where a change of accuracy comes from."""
    probabilities = interpreter.probabilities([p.premise for p in pairs], [p.hypothesis for p in pairs], batch_size)
    labels = interpreter.labels
    column = {label: labels.index(label) for label in labels}
    entailed = probabilities[:, [column[label] for label in interpreter.meant_labels]].sum(axis=1)
    three_way = any(p.label == "contradiction" for p in pairs)
    if three_way:
        scores = np.stack([entailed, probabilities[:, column["neutral"]], probabilities[:, column["contradiction"]]], 1)
        predicted = np.array(["entailment", "neutral", "contradiction"])[scores.argmax(axis=1)]
        gold = np.array([p.label for p in pairs])
    else:
        predicted = np.where(entailed >= 0.5, "entailment", "not")
        gold = np.array(["entailment" if p.label == "entailment" else "not" for p in pairs])
    classes = ["entailment", "neutral", "contradiction"] if three_way else ["entailment", "not"]
    matrix = confusion_matrix(gold, predicted, classes)  # its last column, invalid answers, is empty here
    confusion = {g: {p: int(matrix[i, j]) for j, p in enumerate(classes)} for i, g in enumerate(classes)}
    return {"accuracy": float((predicted == gold).mean()), "n": len(pairs), "form": "3-way" if three_way else "2-way",
            "confusion": confusion}


def grice_dev(root, limit: int | None) -> dict:
    """GRICE's development turns (the recipe's: never trained on), ``limit`` first."""
    from pragmeter.classify.recipes.interpreter import grice_items

    turns = grice_items(root)[1]
    return turns[:limit] if limit else turns


def grice_choice(interpreter: Interpreter, turns, batch_size: int) -> dict:
    from pragmeter.classify.recipes.interpreter import grice_evaluator

    return {"accuracy": grice_evaluator(turns, batch_size=batch_size)(interpreter)["grice_dev_accuracy"],
            "n": len(turns), "form": "4-way choice", "chance": 0.25}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="interpreter folder or packaged name (default: the default)")
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS),
                        help=f"NAME:SPLIT of datasets/nli, or grice, circa_dev, {', '.join(MEANT_FIRST_DEV)}")
    parser.add_argument("--limit", type=int, default=None, help="first N pairs of each set (smoke runs)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--device", default=None, help="torch device (e.g. cuda; default: the CPU)")
    parser.add_argument("--output", default=None)
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)

    from pragmeter.datasets.nli import load_nli

    interpreter = Interpreter.load(args.model, precision=args.precision, device=args.device)
    results = {}
    for entry in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if entry == "grice":
            results[entry] = grice_choice(interpreter, grice_dev(args.data_root, args.limit), args.batch_size)
        elif entry == "circa_dev":
            from pragmeter.classify.recipes.interpreter import circa_items, yes_no_evaluator

            items = circa_items(args.data_root)[1][:args.limit]
            accuracy = yes_no_evaluator(items, batch_size=args.batch_size)(interpreter)["circa_dev_accuracy"]
            results[entry] = {"accuracy": accuracy, "n": len(items), "form": "yes/no choice", "chance": 0.5}
        elif entry in MEANT_FIRST_DEV:
            split = MEANT_FIRST_DEV[entry]
            items = split.reader(args.data_root)[1][:args.limit]
            accuracy = split.evaluator(items, entry, args.batch_size)(interpreter)[f"{entry}_accuracy"]
            results[entry] = {"accuracy": accuracy, "n": len(items), "form": split.form, "chance": split.chance}
        else:
            name, _, split = entry.partition(":")
            pairs = load_nli(name, split or None, args.data_root)
            results[entry] = nli_accuracy(interpreter, pairs[:args.limit] if args.limit else pairs, args.batch_size)
        print(f"{entry}: {results[entry]['accuracy']:.4f} ({results[entry]['form']}, n={results[entry]['n']})",
              file=sys.stderr)
    report = {"model": str(args.model or "default"), "precision": args.precision, "results": results}
    if args.output:
        write_json_atomic(args.output, report)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
