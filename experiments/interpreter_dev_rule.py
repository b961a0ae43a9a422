"""Whether a candidate interpreter passes the development rule its runs are read by, from the outputs of the three
development commands (docs/results.md, "Interpreter: the shipped default"; each rule as written, dated, in
docs/notebook/interpreter.md):

    python experiments/interpreter_nli_eval.py --model RUN --precision fp32 --output DEV.json --sets \
        xnli_en:validation,grice,circa_dev,flute_dev,sarcasm_dev,figqa_dev,impli_dev,figqa_dev_framed,impli_dev_framed,figqa_dev_framed_reworded,impli_dev_framed_reworded,situated_dev
    pragmeter eval --tasks inli --task-arg inli.split=val --model local:RUN --model-args precision=fp32 --output INLI
    pragmeter eval --tasks ludwig --task-arg ludwig.split=dev --model local:RUN --model-args precision=fp32 --output LUD

    python experiments/interpreter_dev_rule.py --dev DEV.json --inli-val INLI --ludwig-dev LUD

The choice splits may come instead from the explicit-weight experiment run on the same folder
(``experiments/interpreter_explicit_weight.py --model RUN --output WEIGHTS.json``): its accuracies at w = 1 are the
same evaluators' through the same scoring, so ``--dev`` then needs only ``xnli_en:validation``, and one pass over the
choice splits serves both the rule and the weight:

    python experiments/interpreter_dev_rule.py --dev XNLI.json --weights WEIGHTS.json --inli-val INLI --ludwig-dev LUD

Each clause is a floor on one figure or on a mean of splits; the floors default to the rule's (the default
interpreter's figures, less a standard error where the rule says so). Prints every clause and exits 0 when all hold,
1 otherwise. Reads development outputs only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# clause -> (the splits of DEV.json whose mean is compared, the floor)
MEANS = {
    "xnli_en_validation": (("xnli_en:validation",), 0.8014),
    "bare_five": (("grice", "circa_dev", "flute_dev", "sarcasm_dev", "impli_dev"), 0.8935),
    "figqa_three": (("figqa_dev", "figqa_dev_framed", "figqa_dev_framed_reworded"), 0.7705),
    "impli_two": (("impli_dev_framed", "impli_dev_framed_reworded"), 0.8883),
}
INLI_FLOOR, LUDWIG_OUTSIDE_FLOOR = 0.849, 0.700
REPORTED = ("situated_dev",)  # shown beside the clauses, never a clause


def eval_metric(folder: Path, task: str, name: str) -> float:
    """One metric of a `pragmeter eval` output folder's results.json, checked to be a number in [0, 1]."""
    path = folder / "results.json"
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        value = payload["results"][task]["metrics"][name]
        if isinstance(value, dict) and "mean" in value:  # a task of several runs (LUDWIG's templates, DRInQ's 3)
            value = value["mean"]
        complete = payload["results"][task]["complete"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path}: no results.{task}.metrics.{name} ({type(error).__name__}: {error})") from None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1 or not complete:
        raise SystemExit(f"{path}: results.{task}.metrics.{name} is {value!r}"
                         f"{'' if complete else ' from an incomplete run'}; expected an accuracy of a complete run")
    return float(value)


def _dev(path: Path) -> dict[str, float]:
    try:
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
        out = {name: float(entry["accuracy"]) for name, entry in results.items()}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path}: not an interpreter_nli_eval.py output ({type(error).__name__}: {error})") from None
    return in_range(path, out)


def in_range(path: Path, accuracies: dict[str, float]) -> dict[str, float]:
    """``accuracies``, each checked to be in [0, 1] (NaN is not), naming ``path`` otherwise."""
    bad = [name for name, value in accuracies.items() if not 0 <= value <= 1]
    if bad:
        raise SystemExit(f"{path}: accuracy outside [0, 1] for {', '.join(bad)}")
    return accuracies


def from_weights(path: Path) -> dict[str, float]:
    """The choice splits' accuracies at w = 1 of an explicit-weight experiment's output, under the names
    interpreter_nli_eval.py gives them (its ``grice`` is the weight experiment's ``grice_dev``)."""
    try:
        plain = json.loads(path.read_text(encoding="utf-8"))["accuracies"]["1"]
        out = {("grice" if name == "grice_dev" else name): float(value) for name, value in plain.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise SystemExit(f"{path}: not an interpreter_explicit_weight.py output with w = 1 "
                         f"({type(error).__name__}: {error})") from None
    return in_range(path, out)


def clauses(dev: dict[str, float], inli_val: float, ludwig_outside: float) -> dict[str, tuple[float, float]]:
    """{clause: (figure, floor)}; a split missing from ``dev`` is refused by name."""
    out = {}
    for clause, (splits, floor) in MEANS.items():
        missing = [s for s in splits if s not in dev]
        if missing:
            raise SystemExit(f"--dev: the rule needs {', '.join(missing)} (clause {clause})")
        out[clause] = (sum(dev[s] for s in splits) / len(splits), floor)
    out["inli_validation"] = (inli_val, INLI_FLOOR)
    out["ludwig_dev_outside_inli"] = (ludwig_outside, LUDWIG_OUTSIDE_FLOOR)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev", required=True, type=Path, help="interpreter_nli_eval.py's --output")
    parser.add_argument("--weights", type=Path, default=None,
                        help="interpreter_explicit_weight.py's --output: the choice splits at w = 1 (module notes)")
    parser.add_argument("--inli-val", required=True, type=Path, help="`pragmeter eval --tasks inli` output folder")
    parser.add_argument("--ludwig-dev", required=True, type=Path, help="`pragmeter eval --tasks ludwig` output folder")
    parser.add_argument("--output", default=None, help="the clauses as JSON (written atomically)")
    args = parser.parse_args(argv)
    dev = _dev(args.dev)
    if args.weights is not None:
        chosen = from_weights(args.weights)
        both = sorted(set(chosen) & set(dev) - {"xnli_en:validation"})
        if both:
            raise SystemExit(f"--dev and --weights both give {', '.join(both)}: give each split once")
        dev.update(chosen)
    table = clauses(dev, eval_metric(args.inli_val, "inli", "accuracy"),
                    eval_metric(args.ludwig_dev, "ludwig", "accuracy_outside_inli"))
    held = {clause: figure >= floor - 1e-9 for clause, (figure, floor) in table.items()}
    for clause, (figure, floor) in table.items():
        print(f"{clause}: {figure:.4f} (floor {floor:.4f}) {'holds' if held[clause] else 'FAILS'}")
    for name in REPORTED:
        if name in dev:
            print(f"{name}: {dev[name]:.4f} (reported)")
    if args.output:
        from pragmeter.io import write_json_atomic

        write_json_atomic(args.output, {"clauses": {c: {"figure": f, "floor": fl, "holds": held[c]}
                                                    for c, (f, fl) in table.items()},
                                        "reported": {n: dev[n] for n in REPORTED if n in dev},
                                        "passes": all(held.values())})
    print("the rule holds" if all(held.values()) else "the rule fails")
    return 0 if all(held.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
