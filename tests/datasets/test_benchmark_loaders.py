"""The benchmark loaders on the real shared data."""

from __future__ import annotations

import json
import re
from collections import Counter

import pandas as pd
import pytest

from pragmeter.data.root import data_file
from pragmeter.datasets.drinq import load_drinq
from pragmeter.datasets.emphasized_talk import load_emphasized_talk
from pragmeter.datasets.inli import LABELS, load_inli
from pragmeter.datasets.ishate import load_ishate
from pragmeter.datasets.labelled_texts import load_labelled_texts
from pragmeter.errors import DataError
from pragmeter.tasks.drinq import example_pool


def test_inli_expands_each_premise_to_four_labelled_items():
    items = load_inli("test")
    frame = pd.read_csv(data_file("inli/INLI_Data/test.csv"))
    assert len(items) == 4 * len(frame)
    assert Counter(i.label for i in items) == {label: len(frame) for label in LABELS}
    assert Counter(i.source for i in items) == {k: 4 * v for k, v in frame["dataset"].value_counts().items()}
    first = [i for i in items if i.row == 0]
    assert [i.hypothesis for i in first] == frame.loc[0, ["implied_entailment", "explicit_entailment", "neutral",
                                                          "contradiction"]].tolist()


def test_drinq_keeps_consensus_and_implied_comment():
    items = load_drinq()
    frame = pd.read_csv(data_file("drinq/drinq_validated.csv"), keep_default_na=False)
    assert len(items) == len(frame) == 231
    for item, options in zip(items, frame["options"]):
        assert [letter for letter, _ in item.options] == list("ABCDE")
        assert all(text and text in options for _, text in item.options)
    matched = [i for i in items if i.implied_letter is not None]
    assert all(i.option_text(i.implied_letter).lower().rstrip(". ") == i.implied_comment.lower().rstrip(". ")
               for i in matched)
    assert any(i.implied_letter != i.consensus for i in matched)  # the two golds differ on some items


def test_drinq_example_pool_is_not_from_the_test_items():
    test_questions = {i.question.lower().strip() for i in load_drinq()}
    test_contexts = {i.context.lower().strip() for i in load_drinq()}
    pool = example_pool()
    assert len(pool) == 6
    for example in pool:
        assert example["question"].lower().strip() not in test_questions
        assert example["context"].lower().strip() not in test_contexts
        assert len(example["options"]) == 5 and example["answer"] in "ABCDE"


def test_emphasized_talk_one_item_per_emphasized_word():
    items = load_emphasized_talk()
    raw = json.loads(data_file("emphasized_talk/data.json").read_text())
    assert len(raw) == 984
    assert len(items) == sum(len(v["emphasis"]) for v in raw.values()) == 2085
    assert sum(len(i.references) for i in items) == 2324
    for item in items:
        begin, end = item.span
        # Exactly the emphasized span is quoted, at its position, and nothing else changes.
        assert item.marked_current == f'{item.current[:begin]}"{item.current[begin:end]}"{item.current[end:]}'
        assert item.word.lower() in item.current[begin:end].lower()
        assert re.match(r"[01]: ", item.current) and begin >= 3  # never the speaker prefix
        if item.match == "word":
            assert item.current[begin:end].lower() == item.word.lower()
    repeated = [i for i in items if i.occurrences > 1]
    assert repeated and all(i.match == "word" for i in repeated)
    for item in repeated:  # the first whole-word occurrence is the marked one
        first = re.search(rf"(?<![a-z0-9]){re.escape(item.word.lower())}(?![a-z0-9])", item.current[3:].lower())
        assert first.start() + 3 == item.span[0]


def test_ishate_tasks_align_with_annotation_layers():
    for task, names in (("implicit", {"non-hateful", "explicit", "implicit"}),
                        ("subtle", {"non-hateful", "non-subtle", "subtle"})):
        items = load_ishate(task, "test")
        frame = pd.read_parquet(data_file(f"ishate/data/{task}_task/test.parquet.gzip"))
        assert len(items) == len(frame)
        assert [i.label for i in items] == frame["label"].tolist()
        assert {i.label_name for i in items} == names
    implicit = load_ishate("implicit", "test")
    with_properties = [i for i in implicit if i.implicit_properties]
    assert with_properties and all(i.label_name == "implicit" for i in with_properties)


def test_labelled_texts_reports_bad_label_row(tmp_path):
    good = tmp_path / "texts.csv"
    good.write_text("text,label,group\nhello,1,a\nworld,no,b\n")
    items = load_labelled_texts(good)
    assert [i.label for i in items] == [True, False] and items[1].extra == {"group": "b"}
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nhello,1\nworld,maybe\n")
    with pytest.raises(DataError, match=r"bad.csv: data row 2: field 'label' is 'maybe'"):
        load_labelled_texts(bad)
    assert [i.label for i in load_labelled_texts(bad, positive="maybe")] == [False, True]
