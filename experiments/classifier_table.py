"""One markdown row per trained classifier folder (ISHate recipes): augmentation, texts added and dropped, what
validation chose, per-class F1 and the minority class's precision / recall / F1 on test (issue 13's tables).

    python experiments/classifier_table.py runs/cls_svm/ishate-b-*-minilm
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pragmeter.classify.tables import FOLDER_HEADER, folder_row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="classifier folders (those without metrics.json are skipped)")
    args = parser.parse_args(argv)
    print(FOLDER_HEADER)
    for name in args.folders:
        if (Path(name) / "metrics.json").is_file():
            print(folder_row(Path(name)))


if __name__ == "__main__":
    main()
