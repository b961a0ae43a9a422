"""Turn the written graded groups (JSON lines written by the language model, one file per domain) into the
committed corpus file.

    python tools/written_groups.py W/family.jsonl@PROMPT_1 … W/civic.jsonl@PROMPT_2 \
        --output src/pragmeter/data/generated/written_graded_everyday.parquet
    # a later round, kept beside the committed groups (whose input files are not in the repository):
    python tools/written_groups.py W/pets.jsonl@PROMPT_3 … --date 2026-11-24 \
        --append-to src/pragmeter/data/generated/written_graded_everyday.parquet \
        --output src/pragmeter/data/generated/written_graded_everyday.parquet
    # a round that becomes a source of its own (the groups of --known files are checked against, not copied):
    python tools/written_groups.py W/weddings.jsonl@PROMPT_4 … --date 2026-11-25 \
        --known src/pragmeter/data/generated/written_graded_everyday.parquet \
        --output src/pragmeter/data/generated/written_graded_offrecord.parquet

Each input is ``FILE.jsonl@PROMPT`` (the writing prompt it came from; its sha256 prefix is recorded per group).

Checks every record (fields, four distinct levels, two level-4 distractors), drops any group one of whose sentences is
close to a sentence of our OOD development sets (content-word Jaccard >= 0.5), so that training never sees them, and
writes a parquet file plus ``<output>.report.json`` with the counts and drop reasons.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from pragmeter.errors import PragmeterError
from pragmeter.generate.output import written_records
from pragmeter.impscore.ood import close_development_sentence

LEVELS = ("level1", "level2", "level3", "level4")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("inputs", nargs="+", help="FILE.jsonl@PROMPT_FILE")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--append-to", type=Path, default=None,
                        help="an earlier output whose groups are kept first (its report's counts are carried over)")
    parser.add_argument("--known", type=Path, action="append", default=[],
                        help="another group file whose sentences no new group may repeat (not copied to the output)")
    parser.add_argument("--date", default="2026-11-23", help="the day these groups were written")
    args = parser.parse_args()
    rows, dropped = [], Counter()
    earlier = pd.read_parquet(args.append_to) if args.append_to is not None else pd.DataFrame()
    if args.append_to is not None:
        report = json.loads(Path(f"{args.append_to}.report.json").read_text())
        dropped.update(report.get("dropped", {}))
    # every sentence of the groups kept so far (levels and distractors), case-folded
    sentence_columns = (*LEVELS, "level3_distractor", "level4_distractor1", "level4_distractor2")
    seen = {t.casefold() for frame in (earlier, *map(pd.read_parquet, args.known))
            for column in sentence_columns for t in frame.get(column, []) if t}
    try:
        records = written_records(args.inputs)
    except PragmeterError as error:
        sys.exit(str(error))
    for path, number, prompt_sha256, record in records:
        texts = [" ".join(str(record.get(k, "")).split()) for k in LEVELS]
        distractors = record.get("level4_distractors") or []
        if not all(texts) or len({t.casefold() for t in texts}) < 4 or len(distractors) != 2:
            sys.exit(f"{path}: line {number}: needs four different levels and two level-4 distractors")
        sentences = texts + distractors + [record.get("level3_distractor", "")]
        repeated = [t for t in texts if t.casefold() in seen]
        if repeated:  # another group's sentence: it would be this group's pair and the other's negative at once
            dropped["a level sentence already in another group"] += 1
            print(f"dropped {record['group_id']}: {repeated[0]!r} is in another group", file=sys.stderr)
            continue
        near = [(s, h) for s in sentences if (h := close_development_sentence(s))]
        if near:
            dropped["a sentence close to an OOD development sentence (content-word Jaccard >= 0.5)"] += 1
            print(f"dropped {record['group_id']}: {near[0][0]!r} ~ {near[0][1]!r}", file=sys.stderr)
            continue
        seen.update(t.casefold() for t in sentences if t)
        rows.append({"group_id": record["group_id"], "category": record["category"], "domain": record["domain"],
                     **dict(zip(LEVELS, texts)), "level3_distractor": record.get("level3_distractor", ""),
                     "level4_distractor1": distractors[0], "level4_distractor2": distractors[1],
                     "input_file": path.name, "input_line": number, "prompt_sha256": prompt_sha256})
    frame = pd.DataFrame(rows)
    frame["generator_model"] = f"Claude (Anthropic) language model, {args.date}"
    frame = pd.concat([earlier, frame], ignore_index=True)
    if frame["group_id"].duplicated().any():
        sys.exit(f"duplicate group ids: {frame.loc[frame['group_id'].duplicated(), 'group_id'].tolist()[:5]}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(args.output, index=False)
    report = {"groups": len(frame), "dropped": dict(dropped), "per_category": frame["category"].value_counts().to_dict(),
              "per_domain": frame["domain"].value_counts().to_dict(),
              "per_writing_day": frame["generator_model"].str[-10:].value_counts().to_dict()}
    Path(f"{args.output}.report.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
