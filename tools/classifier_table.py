"""One markdown row per trained classifier folder (ISHate recipes): augmentation, texts added and dropped, what
validation chose, per-class F1 and the minority class's precision / recall / F1 on test — the tables of
docs/results.md are printed by this script from the folders' metrics.json.

    python tools/classifier_table.py runs/cls_svm/ishate-b-*-minilm
"""
import json
import sys
from pathlib import Path


def read_metrics(folder: Path) -> dict:
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def minority_cell(m: dict) -> str:
    """The minority (last) label's test precision / recall / F1."""
    prf = m["test"]["precision_recall_f1"][m["settings"]["labels"][-1]]
    return f"{prf['precision']:.3f} / {prf['recall']:.3f} / **{prf['f1']:.3f}**"


def augmentation_counts(m: dict) -> tuple[int, int]:
    """Texts added by augmentation, and released texts dropped as rewrites of held-out posts."""
    args = m["arguments"]
    return (sum(args.get("augmented_examples", {}).values()),
            sum(args.get("heldout_rewrites_dropped", {}).values()))


def row(folder: Path) -> str:
    m = read_metrics(folder)
    args, test, labels = m["arguments"], m["test"], m["settings"]["labels"]
    prf = test["precision_recall_f1"]
    added, dropped = augmentation_counts(m)
    chosen = m["history"][m["best_epoch"] - 1]
    choice = f"C={chosen['C']:g}" if m.get("head") == "svm" else f"epoch {m['best_epoch']}"
    seconds = sum(r.get("train_seconds", 0) for r in m["history"])
    cells = [folder.name, args.get("augment", "none"), f"{added:,}", f"{dropped:,}",
             f"{choice} (val macro-F1 {chosen['val_macro_f1']:.3f})",
             *(f"{prf[label]['f1']:.3f}" for label in labels[:-1]), minority_cell(m),
             f"{test['macro_f1']:.3f} / {test['accuracy']:.3f}", f"{seconds:,.0f}"]
    return "| " + " | ".join(cells) + " |"


if __name__ == "__main__":
    print("| folder | augmentation | texts added | held-out rewrites dropped | chosen on validation | "
          "non-hateful F1 | explicit or non-subtle F1 | minority P / R / F1 | macro-F1 / accuracy | fit or train seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in sys.argv[1:]:
        if (Path(name) / "metrics.json").is_file():
            print(row(Path(name)))
