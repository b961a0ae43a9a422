"""The model card (README.md) of a trained classifier: data, code commit, settings, metrics, command."""

from __future__ import annotations


import pragmeter


def _percent(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def model_card(info: dict) -> str:
    """Markdown from the ``info`` dict that is also saved as metrics.json (see :func:`run_recipe`)."""
    test, settings = info["test"], info["settings"]
    svm = info.get("head") == "svm"
    how = (f"An RBF support-vector machine on the frozen, L2-normalised sentence embeddings of "
           f"`{settings['base_encoder']}` (the ISHate paper's USE+SVM form)" if svm
           else f"Fine-tuned from `{settings['base_encoder']}`")
    versions = "" if svm else f"transformers {info['transformers']}; "
    chosen = (f"- C = {info['history'][info['best_epoch'] - 1]['C']:g} of {len(info['history'])} values"
              if svm else f"- best epoch {info['best_epoch']} of {len(info['history'])}")
    lines = [
        f"# {info['name']}", "",
        f"{info['description']}. {how}, by pragmeter (`pragmeter classifier train {info['recipe']}`).", "",
        "## Reproduce", "", "```", info["command"], "```", "",
        f"- pragmeter commit: `{info['commit']}`; pragmeter {pragmeter.__version__}; torch {info['torch']}; "
        f"{versions}device: {info['device']}",
        f"- training settings: " + ", ".join(f"{k}={v}" for k, v in info["train_config"].items()),
        f"{chosen} (selected on validation {info['train_config']['select_on']}); "
        f"{info['train_examples']} training examples", "",
        "## Data", "", "| file | sha256 |", "|---|---|",
        *[f"| {path} | `{digest[:16]}…` |" for path, digest in sorted(info["data_files"].items())], "",
        "## Test metrics", "",
        f"accuracy {_percent(test['accuracy'])}, macro-F1 {_percent(test['macro_f1'])} on {test['n']} items", "",
        "| label | precision | recall | F1 | support |", "|---|---|---|---|---|",
        *[f"| {label} | {v['precision']:.4f} | {v['recall']:.4f} | {v['f1']:.4f} | {v['support']} |"
          for label, v in test["precision_recall_f1"].items()], "",
        "Confusion matrix (rows gold, columns predicted):", "",
        "| gold \\ predicted | " + " | ".join(test["confusion"]["labels"]) + " |",
        "|---" * (len(test["confusion"]["labels"]) + 1) + "|",
        *[f"| {label} | " + " | ".join(map(str, row[:-1])) + " |"
          for label, row in zip(test["confusion"]["labels"], test["confusion"]["counts"])], "",
    ]
    if info.get("decision_bias"):
        tuned = info["decision_bias"]
        plain = tuned["test_without_bias"]
        lines += [f"Decision bias (added to each label's log-probability, tuned on validation "
                  f"{tuned['selected_on']}: {tuned['val_before']:.4f} -> {tuned['val_after']:.4f}): "
                  + ", ".join(f"{label} {value:+.1f}" for label, value in tuned["bias"].items())
                  + f". Without it: test accuracy {_percent(plain['accuracy'])}, macro-F1 {_percent(plain['macro_f1'])}; "
                  + ", ".join(f"{label} F1 {v['f1']:.4f}" for label, v in plain["precision_recall_f1"].items()), ""]
    if info.get("test_by_group"):
        lines += ["Accuracy per source:", "", "| source | accuracy | n |", "|---|---|---|",
                  *[f"| {g} | {v['accuracy']:.4f} | {v['n']} |" for g, v in info["test_by_group"].items()], ""]
    if info.get("test_report_groups"):
        lines += ["Accuracy on groups of sources:", "",
                  *[f"- {name}: {v['accuracy']:.4f} (n={v['n']})" for name, v in info["test_report_groups"].items()], ""]
    if info.get("paper"):
        lines += ["## The paper's figures for comparison", "", "```", _json(info["paper"]), "```", ""]
    if svm:
        lines += ["## Training history", "", "| C | support vectors | val accuracy | val macro-F1 | seconds |",
                  "|---|---|---|---|---|",
                  *[f"| {h['C']:g} | {h['support_vectors']} | {h['val_accuracy']:.4f} | {h['val_macro_f1']:.4f} | "
                    f"{h['train_seconds']} |" for h in info["history"]], ""]
    else:
        lines += ["## Training history", "", "| epoch | train loss | val accuracy | val macro-F1 | seconds |",
                  "|---|---|---|---|---|",
                  *[f"| {h['epoch']} | {h['train_loss']:.4f} | {h['val_accuracy']:.4f} | {h['val_macro_f1']:.4f} | "
                    f"{h['train_seconds']} |" for h in info["history"]], ""]
    return "\n".join(lines)


def _json(value) -> str:
    import json

    return json.dumps(value, indent=2)
