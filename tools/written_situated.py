"""Turn the written situated implicatures (JSON lines written by the language model, one file per kind) into the
committed file that ``pragmeter.datasets.written_situated`` reads.

    python tools/written_situated.py W/relation.jsonl@W/prompt-relation.md … W/metaphor.jsonl@W/prompt-metaphor.md \
        --output src/pragmeter/data/generated/written_situated.parquet

Each input is ``FILE.jsonl@PROMPT`` (the prompt the file was written from; its sha256 prefix is recorded per item).
Checks every record (fields, kind, four distinct readings, words a reading must not use), and drops any item one of
whose texts is close to a text of the evaluation sets the interpreter is measured on (the Floyd battery's stories and
options, DRInQ's contexts, questions and options, LUDWIG test's exchanges and the Circa exchanges; word Jaccard >=
0.5), so that training never sees them. Writes a parquet file plus ``<output>.report.json`` with the counts, the drop
reasons and the mean word count of each reading (the meant reading should not stand out by length).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from pragmeter.datasets.written_situated import KINDS, READINGS
from pragmeter.errors import PragmeterError
from pragmeter.generate.output import written_records

BANNED = re.compile(r"\b(impl(y|ies|ied)|literally|sarcastic\w*|ironic\w*|hint\w*|means)\b", re.IGNORECASE)
WRITER = "Claude (Anthropic) language model"


def evaluation_texts(root) -> list[str]:
    """The texts of the sets the interpreter is judged on, which no training item may come close to."""
    from pragmeter.datasets.circa import load_circa
    from pragmeter.datasets.drinq import load_drinq
    from pragmeter.datasets.floyd import load_floyd_battery
    from pragmeter.datasets.ludwig import load_ludwig

    texts = []
    for item in load_floyd_battery(root):
        texts += [item.scenario, item.utterance, *item.options]
    for item in load_drinq(root):
        texts += [item.context, item.question, *(text for _, text in item.options)]
    for split in ("dev", "test"):
        for item in load_ludwig(split, root):
            texts += [item.question, item.response]
    texts += sorted({text for item in load_circa(root) for text in (item.question, item.answer)})
    return [t for t in texts if len(t.split()) >= 4]  # a short answer ("Yes.") is close to everything


def main() -> None:
    from pragmeter.metrics.overlap import max_word_jaccard

    parser = argparse.ArgumentParser()
    parser.add_argument("inputs", nargs="+", help="FILE.jsonl@PROMPT_FILE")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--date", default="2026-12-07", help="the day these items were written")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args()
    rows, dropped = [], Counter()
    try:
        records = written_records(args.inputs)
    except PragmeterError as error:
        sys.exit(str(error))
    for path, number, prompt_sha256, record in records:
        try:
            readings = record["readings"]
            fields = {"id": record["id"], "kind": record["kind"], "context": record["context"],
                      "utterance": record["utterance"], **dict(zip(READINGS, readings))}
        except (KeyError, TypeError) as error:
            sys.exit(f"{path}: line {number}: not an item ({error.__class__.__name__}: {error})")
        if not isinstance(readings, list) or len(readings) != len(READINGS):
            sys.exit(f"{path}: line {number}, field 'readings': expected {len(READINGS)} texts")
        if not all(isinstance(v, str) and v.strip() for v in fields.values()):
            sys.exit(f"{path}: line {number}: every field must be a non-empty text")
        if fields["kind"] not in KINDS:
            sys.exit(f"{path}: line {number}, field 'kind': {fields['kind']!r} is none of {', '.join(KINDS)}")
        fields = {k: " ".join(v.split()) for k, v in fields.items()}
        if len({fields[r].casefold() for r in READINGS}) < len(READINGS):
            dropped["two readings are the same text"] += 1
            continue
        if any(BANNED.search(fields[r]) for r in READINGS):
            dropped["a reading names the figure or its meaning (imply, literally, sarcastic, ironic, hint, "
                    "means)"] += 1
            continue
        rows.append({**fields, "prompt_sha256": prompt_sha256, "generator_model": f"{WRITER}, {args.date}"})
    frame = pd.DataFrame(rows)
    duplicated = frame["id"].duplicated() | frame["utterance"].str.casefold().duplicated()
    dropped["an id or an utterance that an earlier item has"] += int(duplicated.sum())
    frame = frame[~duplicated].reset_index(drop=True)
    texts = [frame[c].tolist() for c in ("context", "utterance", *READINGS)]
    references = evaluation_texts(args.data_root)
    closeness = pd.DataFrame([max_word_jaccard(column, references)[0] for column in texts]).max(axis=0)
    close = closeness >= 0.5
    dropped["a text close to an evaluation set's (word Jaccard >= 0.5)"] += int(close.sum())
    frame = frame[~close.to_numpy()].reset_index(drop=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(args.output, index=False)
    report = {"items": len(frame), "by_kind": dict(Counter(frame["kind"])), "dropped": dict(dropped),
              "mean_words": {r: round(float(frame[r].str.split().str.len().mean()), 2) for r in READINGS},
              "largest_word_jaccard_with_an_evaluation_text": round(float(closeness[~close].max()), 4)}
    Path(f"{args.output}.report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
