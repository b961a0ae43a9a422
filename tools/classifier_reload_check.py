"""Reload a trained classifier folder (INLI or ISHate recipe) and recompute its test report; prints whether it is
identical to the metrics.json written at training time (issue 13 acceptance).

    python tools/classifier_reload_check.py runs/cls/ishate-a-minilm
    python tools/classifier_reload_check.py runs/cls/inli-detector-minilm-bf16
    python tools/classifier_reload_check.py runs/cls_svm/ishate-b-all-mpnet      # a --head svm folder
"""
import json
import sys

from pragmeter.classify.loading import load_classifier
from pragmeter.classify.recipes import inli, ishate
from pragmeter.classify.training import evaluate

folder = sys.argv[1]
m = json.load(open(f"{folder}/metrics.json"))
args = m["arguments"]
if m["recipe"] == "inli":
    data = inli.build(args["labels"], args["split_scheme"])
else:
    data = ishate.build(args["task"], None if args["augment"] == "none" else args["augment"])
# The precision the test report was computed in (bf16 autocast when trained with --precision bf16).
precision = m["train_config"].get("precision", "auto")
report, _ = evaluate(load_classifier(folder, "cpu", precision), data.test, m["train_config"].get("eval_batch_size", 128))
same = json.dumps(report, sort_keys=True) == json.dumps(m["test"], sort_keys=True)
print(f"reloaded {folder}: test accuracy {report['accuracy']:.6f} macro-F1 {report['macro_f1']:.6f}; identical to metrics.json: {same}")
