"""The loaders of LUDWIG, Circa, BIG-Bench Hard snarks, Fig-QA and the Floyd battery's instructions on the real files:
counts as the papers and dataset cards give them, and INLI's dialogue overlap."""

from __future__ import annotations

from collections import Counter

import pytest

from pragmeter.datasets.circa import load_circa
from pragmeter.datasets.figqa import load_figqa
from pragmeter.datasets.floyd import load_floyd_instructions
from pragmeter.datasets.inli import InliDialogues
from pragmeter.datasets.ludwig import implicature_label, load_ludwig
from pragmeter.datasets.snarks import TRUNCATED, load_snarks
from pragmeter.errors import DataError


def test_ludwig_splits_have_the_papers_sizes_and_labels():
    test, dev = load_ludwig("test"), load_ludwig("dev")
    assert len(test) == 600 and len(dev) == 118
    assert Counter(item.label for item in test) == {"yes": 320, "no": 280}
    first = test[3]
    assert (first.question, first.response, first.label) == (
        "Is there a bus I can get to the station.", "You can't rely on it.", "yes")
    assert first.implicature == "Yes. But it does not arrive on time."


def test_ludwig_items_in_inli_are_found_through_typo_fixes_and_punctuation():
    test = load_ludwig("test")
    assert sum(item.in_inli for item in test) == 400  # 200 items outside INLI's premises
    by_question = {item.question: item for item in test}
    assert by_question["Is th job going to be easy?"].in_inli  # INLI: "Is the job going to be easy?"
    assert by_question["Is Marci grumpy?"].in_inli  # INLI: "He's as gentle as a lamb." (case, final stop)


def test_a_shared_answer_under_another_question_is_not_an_inli_premise():
    inli = InliDialogues()
    assert ("Are you going for the party?", "Is the pope catholic?") in inli
    assert ("Do you expect Sheila to be late for the party tonight?", "Is the pope catholic?") not in inli


def test_implicature_label_reads_as_the_paper():
    assert implicature_label("Yes. But it does not arrive on time.") == "yes"
    assert implicature_label("No.") == "no"
    assert implicature_label("Maybe.") is None


def test_circa_relaxed_labels_leave_out_no_majority_and_other():
    items = load_circa()
    assert len(items) == 34268 - 771 - 504
    assert Counter(item.label for item in items) == {"yes": 16628, "no": 12833, "conditional": 2583, "neither": 949}
    assert len({item.situation for item in items}) == 10
    assert items[0].id == "circa-0" and items[0].statement == "I am employed ."
    labels: dict[tuple, set] = {}
    for item in items:
        labels.setdefault((item.situation, item.question, item.answer), set()).add(item.label)
    assert sum(len(found) > 1 for found in labels.values()) == 5  # asked twice, labelled differently
    one = load_circa(scenarios=(3,))
    assert {item.scenario for item in one} == {3} and 0 < len(one) < len(items)
    with pytest.raises(DataError, match="no scenario 10"):
        load_circa(scenarios=(10,))


def test_snarks_sets_aside_the_one_item_cut_short_upstream():
    items = load_snarks()
    assert len(items) == 178 - len(TRUNCATED) == 177
    assert f"snarks-{TRUNCATED[0]}" not in {item.id for item in items}
    assert Counter(item.answer for item in items) == {"B": 96, "A": 81}
    assert items[0].sarcastic.startswith("He's a terrible person")


def test_figqa_reads_the_validation_split_and_refuses_the_hidden_test_labels():
    items = load_figqa("dev")
    assert len(items) == 1094 and Counter(item.answer for item in items) == {0: 547, 1: 547}
    assert items[0].endings[items[0].answer] == "The girl was very fickle."
    with pytest.raises(DataError, match="test labels are hidden"):
        load_figqa("test")


def test_floyd_instructions_are_the_participants_task_text():
    instructions = load_floyd_instructions()
    assert set(instructions) == {"Metaphor", "Maxims"}
    assert instructions["Metaphor"].startswith("Task: You will read short stories")
    assert instructions["Maxims"].endswith("The answer options are 1, 2, 3, or 4.")
