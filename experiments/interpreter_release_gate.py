"""Whether a shipped candidate interpreter may replace the default: the release gate (docs/results.md,
"Interpreter: the shipped default"; each rule as written, dated, in docs/notebook/interpreter.md). Every acceptance
mark of the interpreter's issue that the default meets is kept, and the Floyd battery is not below the default's
figure. Run after the candidate passed its development rule
(``interpreter_dev_rule.py``) and was shipped, over the outputs of the three test commands, each read once:

    pragmeter interpret ship RUN --rank 64 --bf16-pairs 1024 --evaluate-test --output SHIPPED
    pragmeter eval --tasks drinq_vanilla,floyd,ludwig,figqa --model local:SHIPPED --model-args precision=fp32 \
        --output TASKS --log-samples
    python experiments/interpreter_nli_eval.py --model SHIPPED --sets xnli_en:test --precision fp32 --output XNLI.json

    python experiments/interpreter_release_gate.py --shipped SHIPPED --tasks TASKS --xnli-test XNLI.json

``DEFAULT`` holds the packaged default's figures from the same commands (docs/results.md); a release that replaces
the default replaces them. Prints every figure beside its mark and exits 0 when the gate holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from interpreter_dev_rule import eval_metric, in_range  # one reader of the eval outputs for both rules

# figure -> the acceptance mark
MARKS = {"inli_test": 0.85, "inli_test_implied": 0.80, "drinq": 0.45, "ludwig_test_outside_inli": 0.70,
         "floyd": 0.60, "xnli_en_test": 0.80}
# the packaged default's figures (interpreter-mpnet-situated-figures-v3: I130, I132)
DEFAULT_NAME = "interpreter-mpnet-situated-figures-v3"
DEFAULT = {"inli_test": 0.851, "inli_test_implied": 0.837, "drinq": 0.3247, "ludwig_test_outside_inli": 0.630,
           "floyd": 0.400, "xnli_en_test": 0.8026}
NOT_BELOW_DEFAULT = ("floyd",)  # figures that may not fall below the default's, met mark or not


def shipped_inli_test(folder: Path) -> tuple[float, float]:
    """INLI test accuracy and implied recall that ``ship --evaluate-test`` recorded in the folder's metrics.json."""
    path = folder / "metrics.json"
    try:
        test = json.loads(path.read_text(encoding="utf-8"))["test_compressed"]
        figures = {"test_compressed.accuracy": _number(path, "test_compressed.accuracy", test["accuracy"]),
                   "test_compressed.accuracy_per_label.implied": _number(
                       path, "test_compressed.accuracy_per_label.implied", test["accuracy_per_label"]["implied"])}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path}: no test_compressed accuracy (shipped with --evaluate-test?) "
                         f"({type(error).__name__}: {error})") from None
    in_range(path, figures)
    return figures["test_compressed.accuracy"], figures["test_compressed.accuracy_per_label.implied"]


def _number(path: Path, field: str, value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SystemExit(f"{path}: {field} is {value!r}; expected an accuracy")
    return float(value)


def xnli_test(path: Path) -> float:
    try:
        value = _number(path, "results.xnli_en:test.accuracy",
                        json.loads(path.read_text(encoding="utf-8"))["results"]["xnli_en:test"]["accuracy"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path}: not an interpreter_nli_eval.py output with xnli_en:test "
                         f"({type(error).__name__}: {error})") from None
    return in_range(path, {"xnli_en:test": value})["xnli_en:test"]


def gate(figures: dict[str, float], default: dict[str, float] = DEFAULT) -> dict[str, dict]:
    """{figure: {figure, floor, holds, why}}: the floor is the mark where the default meets it, the default's figure
    for NOT_BELOW_DEFAULT, the higher of the two where both apply; a figure with neither is reported only."""
    out = {}
    for name, mark in MARKS.items():
        floors = []
        if default[name] >= mark:
            floors.append((mark, "a mark the default meets"))
        if name in NOT_BELOW_DEFAULT:
            floors.append((default[name], "not below the default"))
        if floors:
            floor, why = max(floors)
            out[name] = {"figure": figures[name], "floor": floor, "holds": figures[name] >= floor - 1e-9, "why": why}
        else:
            out[name] = {"figure": figures[name], "floor": None, "holds": True, "why": f"reported (mark {mark})"}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shipped", required=True, type=Path, help="the shipped folder (`interpret ship --output`)")
    parser.add_argument("--tasks", required=True, type=Path,
                        help="`pragmeter eval --tasks drinq_vanilla,floyd,ludwig,...` output folder")
    parser.add_argument("--xnli-test", required=True, type=Path, help="interpreter_nli_eval.py's --output")
    parser.add_argument("--output", default=None, help="the gate as JSON (written atomically)")
    args = parser.parse_args(argv)
    inli, implied = shipped_inli_test(args.shipped)
    figures = {"inli_test": inli, "inli_test_implied": implied,
               "drinq": eval_metric(args.tasks, "drinq_vanilla", "accuracy"),
               "ludwig_test_outside_inli": eval_metric(args.tasks, "ludwig", "accuracy_outside_inli"),
               "floyd": eval_metric(args.tasks, "floyd", "accuracy"), "xnli_en_test": xnli_test(args.xnli_test)}
    table = gate(figures)
    for name, row in table.items():
        floor = "" if row["floor"] is None else f" (floor {row['floor']:.4f}, {row['why']})"
        verdict = "reported" if row["floor"] is None else "holds" if row["holds"] else "FAILS"
        print(f"{name}: {row['figure']:.4f}{floor} {verdict}; default {DEFAULT[name]:.4f}, mark {MARKS[name]:.2f}")
    passes = all(row["holds"] for row in table.values())
    if args.output:
        from pragmeter.io import write_json_atomic

        write_json_atomic(args.output, {"default": DEFAULT_NAME, "figures": table, "passes": passes})
    print(f"the gate holds: it may replace {DEFAULT_NAME}" if passes else "the gate fails")
    return 0 if passes else 1


if __name__ == "__main__":
    sys.exit(main())
