"""Reload a trained ISHate classifier folder and recompute its test report; prints whether it is identical to
the metrics.json written at training time (issue 13 acceptance).

    python tools/classifier_reload_check.py runs/cls/ishate-a-minilm
"""
import json, sys
from pragmeter.classify.model import TextClassifier
from pragmeter.classify.recipes.ishate import build
from pragmeter.classify.training import evaluate
folder = sys.argv[1]
m = json.load(open(f"{folder}/metrics.json"))
data = build(m["arguments"]["task"], None if m["arguments"]["augment"] == "none" else m["arguments"]["augment"])
report, _ = evaluate(TextClassifier.load(folder, "cpu"), data.test)
same = json.dumps(report, sort_keys=True) == json.dumps(m["test"], sort_keys=True)
print(f"reloaded {folder}: test accuracy {report['accuracy']:.6f} macro-F1 {report['macro_f1']:.6f}; identical to metrics.json: {same}")
