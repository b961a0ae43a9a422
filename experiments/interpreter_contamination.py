"""Do the interpreter's evaluation sets occur in its training text? Every evaluation set (DRInQ, the Floyd battery,
LUDWIG test, Circa, INLI test) against every training text (INLI train premises and hypotheses; ``--extra`` tables
of more training text), near-duplicates by word Jaccard as in the ISHate audit (pragmeter.metrics.overlap).

INLI's conversational premises were written from Circa and LUDWIG exchanges ('X says, "QUESTION" Y responds,
"ANSWER"'), so an evaluation exchange counts as seen when its question and answer both occur in one training premise
(after lower-casing and dropping punctuation), and as a near copy when its text's word Jaccard with a training text
is at least ``--threshold`` (default 0.8; 0.5 reported too).

    python experiments/interpreter_contamination.py --output overlaps.csv
    python experiments/interpreter_contamination.py --limit 50          # smoke run: first 50 items of each set
    python experiments/interpreter_contamination.py --recipe           # and the multi-source recipe's training text
"""
from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd

from pragmeter.datasets.circa import load_circa
from pragmeter.datasets.drinq import load_drinq
from pragmeter.datasets.floyd import load_floyd_battery
from pragmeter.datasets.inli import read_split
from pragmeter.datasets.ludwig import load_ludwig
from pragmeter.io import read_table, write_table
from pragmeter.metrics.overlap import max_word_jaccard

def plain(text) -> str:
    return re.sub(r"\W+", " ", str(text).lower()).strip()


def evaluation_sets(root, limit: int | None) -> dict[str, pd.DataFrame]:
    """Per evaluation set: one row per item with ``item`` (id), ``text`` (what a model reads) and, for exchanges,
    ``question`` and ``answer``."""
    sets = {}
    drinq = load_drinq(root)
    sets["drinq"] = pd.DataFrame({"item": [i.id for i in drinq], "text": [f"{i.context} {i.question}" for i in drinq],
                                  "question": [i.question for i in drinq], "answer": ""})
    sets["drinq_options"] = pd.DataFrame({"item": [f"{i.id}-{letter}" for i in drinq for letter, _ in i.options],
                                          "text": [text for i in drinq for _, text in i.options]})
    floyd = load_floyd_battery(root)
    sets["floyd"] = pd.DataFrame({"item": [i.id for i in floyd], "text": [i.scenario for i in floyd]})
    sets["floyd_options"] = pd.DataFrame({"item": [f"{i.id}-{k}" for i in floyd for k in range(len(i.options))],
                                          "text": [text for i in floyd for text in i.options]})
    ludwig = load_ludwig("test", root)
    sets["ludwig_test"] = pd.DataFrame({"item": [i.id for i in ludwig], "question": [i.question for i in ludwig],
                                        "answer": [i.response for i in ludwig],
                                        "text": [f"{i.question} {i.response}" for i in ludwig]})
    circa = load_circa(root)
    sets["circa"] = pd.DataFrame({"item": [i.id for i in circa], "question": [i.question for i in circa],
                                  "answer": [i.answer for i in circa],
                                  "text": [f"{i.situation} {i.question} {i.answer}" for i in circa]})
    test = read_split("test", root)
    sets["inli_test"] = pd.DataFrame({"item": [f"inli-test-{r}" for r in range(len(test))], "text": test["premise"]})
    return {name: frame.head(limit).reset_index(drop=True) if limit else frame.reset_index(drop=True)
            for name, frame in sets.items()}


def recipe_texts(root) -> list[pd.DataFrame]:
    """The multi-source recipe's training text besides INLI: every pair of the general sets, Circa's yes/no
    training exchanges, FLUTE's training files (premises and hypotheses), GRICE's training turns, the sarcastic
    training tweets, Fig-QA's training metaphors, IMPLI's training sentences and the situated items written for
    pragmeter as choice items (premises and readings)."""
    from pragmeter.classify.recipes.inli import flute_examples
    from pragmeter.classify.recipes.interpreter import (choice_examples, circa_examples, circa_items,
                                                        general_examples)

    rows = []
    for name, examples in (("general", general_examples(cap=None, root=root)),
                           ("circa_yes_no", circa_examples(circa_items(root)[0], cap=None)),
                           ("flute", flute_examples(root))):
        rows.append(pd.DataFrame({"source": f"{name}:premise", "text": examples.texts}))
        rows.append(pd.DataFrame({"source": f"{name}:hypothesis", "text": examples.pairs}))
    for name in ("grice", "sarcasm", "figqa", "impli", "situated"):
        chosen = choice_examples((name,), grice_cap=None, sarcasm_cap=None, figqa_cap=None, impli_cap=None,
                                 situated_cap=None, root=root)
        rows.append(pd.DataFrame({"source": f"{name}:premise", "text": chosen.premises}))
        rows.append(pd.DataFrame({"source": f"{name}:reading", "text": [r for o in chosen.readings for r in o]}))
    return rows


def training_texts(root, extra: list[str], recipe: bool = False) -> pd.DataFrame:
    train = read_split("train", root)
    rows = [pd.DataFrame({"source": "inli_train:" + train["dataset"] + ":premise", "text": train["premise"]})]
    if recipe:
        rows += recipe_texts(root)
    for column in ("implied_entailment", "explicit_entailment", "neutral", "contradiction"):
        rows.append(pd.DataFrame({"source": f"inli_train:{column}", "text": train[column]}))
    for path in extra:  # tables of more training text: column text (premise and hypothesis too, when present)
        table = read_table(path)
        for column in [c for c in ("text", "premise", "hypothesis") if c in table.columns]:
            rows.append(pd.DataFrame({"source": f"{path}:{column}", "text": table[column].astype(str)}))
    return pd.concat(rows, ignore_index=True)


def exchange_seen(questions: list[str], answers: list[str], premises: list[str]) -> np.ndarray:
    """Per exchange, the index of a training premise that holds both its question and its answer (-1: none)."""
    cleaned = [plain(p) for p in premises]
    by_word: dict[str, list[int]] = {}
    for index, text in enumerate(cleaned):
        for word in set(text.split()):
            by_word.setdefault(word, []).append(index)
    found = np.full(len(questions), -1)
    for row, (question, answer) in enumerate(zip(questions, answers)):
        q, a = plain(question), plain(answer)
        if not q or not a:
            continue
        rarest = min(set(a.split()), key=lambda w: len(by_word.get(w, ())))
        for index in by_word.get(rarest, ()):
            if f" {q} " in f" {cleaned[index]} " and f" {a} " in f" {cleaned[index]} ":
                found[row] = index
                break
    return found


def audit(sets: dict[str, pd.DataFrame], training: pd.DataFrame, threshold: float) -> tuple[pd.DataFrame, list[str]]:
    lines, found = [], []
    premises = training[training["source"].str.endswith(":premise")]["text"].tolist()
    references = training["text"].tolist()
    for name, frame in sets.items():
        nearest, where = max_word_jaccard(frame["text"].tolist(), references)
        seen = (exchange_seen(frame["question"].tolist(), frame["answer"].tolist(), premises)
                if "answer" in frame and frame["answer"].astype(bool).any() else np.full(len(frame), -1))
        near = nearest >= threshold
        lines.append(f"{name}: {len(frame)} items; exchange inside a training premise: {int((seen >= 0).sum())}; "
                     f"word Jaccard >= {threshold}: {int(near.sum())}; >= 0.5: {int((nearest >= 0.5).sum())}")
        for row in np.flatnonzero(near | (seen >= 0)):
            found.append({"set": name, "item": frame["item"][row], "text": frame["text"][row],
                          "jaccard": round(float(nearest[row]), 4), "nearest_source": training["source"][where[row]],
                          "nearest_text": references[where[row]],
                          "exchange_in_premise": premises[seen[row]] if seen[row] >= 0 else ""})
    return pd.DataFrame(found, columns=["set", "item", "text", "jaccard", "nearest_source", "nearest_text",
                                        "exchange_in_premise"]), lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=0.8, help="word Jaccard of a near copy (default 0.8)")
    parser.add_argument("--extra", action="append", default=[], help="a table of more training text (repeatable)")
    parser.add_argument("--recipe", action="store_true",
                        help="also the multi-source recipe's training text (general NLI sets, Circa, FLUTE, GRICE), and "
                             "XNLI-en test among the evaluation sets")
    parser.add_argument("--limit", type=int, default=None, help="first N items of each evaluation set (smoke runs)")
    parser.add_argument("--output", default=None, help="table of the overlapping items (csv, jsonl, parquet)")
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)
    sets = evaluation_sets(args.data_root, args.limit)
    if args.recipe:
        from pragmeter.datasets.nli import load_nli

        xnli = load_nli("xnli_en", "test", args.data_root)[:args.limit]
        sets["xnli_en_test"] = pd.DataFrame({"item": [p.origin for p in xnli], "text": [p.premise for p in xnli]})
    overlaps, lines = audit(sets, training_texts(args.data_root, args.extra, args.recipe), args.threshold)
    print("\n".join(lines))
    if args.output:
        write_table(overlaps, args.output, overwrite=args.overwrite)


if __name__ == "__main__":
    main()
