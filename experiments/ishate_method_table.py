"""Minority-class F1 per augmentation method, our classifier rows beside the ISHate paper's USE+SVM rows
(Ocampo et al., EACL 2023, Table 3 and appendix Table 6): one markdown row per method (issue 13).

    python experiments/ishate_method_table.py runs/cls_svm minilm     # folders RUNS/ishate-{a,b}-METHOD-minilm
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pragmeter.classify.tables import augmentation_counts, minority_cell, read_metrics

# Paper, USE+SVM, test F1 of the implicit (Task A) and subtle (Task B) class; every augmented row trained on the
# released files as they are (held-out rewrites included).
PAPER_USE_SVM = {"none": (0.390, 0.178), "rsa": (0.367, 0.182), "aav": (0.356, 0.174), "rne": (0.384, 0.174),
                 "ri": (0.371, 0.140), "ra": (0.392, 0.182), "eda": (0.383, 0.172), "bt": (0.496, 0.548),
                 "gm": (0.378, 0.215), "gm_revised": (0.394, 0.239), "all": (0.426, 0.260)}
METHODS = ["none", "rsa", "aav", "rne", "ri", "ra", "eda", "bt", "gm", "gm_revised", "all",
           "local-rsa", "local-aav", "local-rne", "local-ri", "local-eda", "local-all"]


def cell(folder: Path) -> str:
    if not (folder / "metrics.json").is_file():
        return "not run"
    m = read_metrics(folder)
    added, dropped = augmentation_counts(m)
    return f"{minority_cell(m)} (+{added:,}" + (f", −{dropped}" if dropped else "") + ")"


def folder(runs: Path, task: str, method: str, encoder: str) -> Path:
    """RUNS/ishate-T-ENCODER (no augmentation) or RUNS/ishate-T-METHOD-ENCODER; for ALL the leak-free run of
    2026-11-25 is named ...-clean (the unsuffixed folder was trained on the files as released)."""
    if method == "none":
        return runs / f"ishate-{task}-{encoder}"
    clean = runs / f"ishate-{task}-{method}-{encoder}-clean"
    return clean if clean.is_dir() else runs / f"ishate-{task}-{method}-{encoder}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="folder holding the ishate-* classifier folders")
    parser.add_argument("encoder", help="encoder suffix of the folder names, e.g. minilm")
    args = parser.parse_args(argv)
    print("| augmentation | Task A implicit P / R / F1 (texts added, held-out rewrites dropped) | paper USE+SVM F1 "
          "| Task B subtle P / R / F1 (texts added, dropped) | paper USE+SVM F1 |")
    print("|---|---|---|---|---|")
    for method in METHODS:
        paper = [f"{v:.3f}" for v in PAPER_USE_SVM[method]] if method in PAPER_USE_SVM else ["–", "–"]
        a, b = (cell(folder(args.runs, task, method, args.encoder)) for task in "ab")
        print(f"| {method} | {a} | {paper[0]} | {b} | {paper[1]} |")


if __name__ == "__main__":
    main()
