"""Markdown rows of trained classifier folders, read from their ``metrics.json`` (the classifier tables of the
results pages are printed from these)."""

from __future__ import annotations

import json
from pathlib import Path

FOLDER_HEADER = ("| folder | augmentation | texts added | held-out rewrites dropped | chosen on validation | "
                 "non-hateful F1 | explicit or non-subtle F1 | minority P / R / F1 | macro-F1 / accuracy | "
                 "fit or train seconds |\n|---|---|---|---|---|---|---|---|---|---|")


def read_metrics(folder: Path) -> dict:
    return json.loads((Path(folder) / "metrics.json").read_text(encoding="utf-8"))


def minority_cell(metrics: dict) -> str:
    """The minority (last) label's test precision / recall / F1."""
    prf = metrics["test"]["precision_recall_f1"][metrics["settings"]["labels"][-1]]
    return f"{prf['precision']:.3f} / {prf['recall']:.3f} / **{prf['f1']:.3f}**"


def augmentation_counts(metrics: dict) -> tuple[int, int]:
    """Texts added by augmentation, and released texts dropped as rewrites of held-out posts."""
    args = metrics["arguments"]
    return (sum(args.get("augmented_examples", {}).values()),
            sum(args.get("heldout_rewrites_dropped", {}).values()))


def folder_row(folder: Path) -> str:
    """One row under :data:`FOLDER_HEADER`: augmentation, texts added and dropped, what validation chose, per-class
    F1, the minority class's test P / R / F1, macro-F1 / accuracy, seconds spent fitting or training."""
    m = read_metrics(folder)
    args, test, labels = m["arguments"], m["test"], m["settings"]["labels"]
    prf = test["precision_recall_f1"]
    added, dropped = augmentation_counts(m)
    chosen = m["history"][m["best_epoch"] - 1]
    choice = f"C={chosen['C']:g}" if m.get("head") == "svm" else f"epoch {m['best_epoch']}"
    seconds = sum(r.get("train_seconds", 0) for r in m["history"])
    cells = [Path(folder).name, args.get("augment", "none"), f"{added:,}", f"{dropped:,}",
             f"{choice} (val macro-F1 {chosen['val_macro_f1']:.3f})",
             *(f"{prf[label]['f1']:.3f}" for label in labels[:-1]), minority_cell(m),
             f"{test['macro_f1']:.3f} / {test['accuracy']:.3f}", f"{seconds:,.0f}"]
    return "| " + " | ".join(cells) + " |"
