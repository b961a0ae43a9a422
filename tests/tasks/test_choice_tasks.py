"""The tasks beyond the seeds (ludwig, circa, bbh_snarks, figqa, floyd): the papers' prompts, parsers that read a
perfect answer back as the gold one on every item, and the structured item each request carries for a local
interpreter."""

from __future__ import annotations

from collections import Counter

import pytest

from pragmeter.datasets.floyd import load_floyd_battery
from pragmeter.eval import registry
from pragmeter.eval.multiple_choice import ChoiceItem, option_key
from pragmeter.llm.request import ChoiceInput
from pragmeter.errors import PragmeterError
from pragmeter.tasks.snarks import prompt_parts

NEW_TASKS = ("ludwig", "circa", "bbh_snarks", "figqa", "floyd")


def task(name: str, **args):
    return registry.instantiate(name, [f"{name}.{k}={v}" for k, v in args.items()])[0]


@pytest.mark.parametrize("name", NEW_TASKS)
def test_every_reference_answer_parses_as_the_gold_answer(name):
    built = task(name)
    items = built.items()
    assert items
    assert all(built.parse(built.reference_answer(item), item) == built.gold(item) for item in items)
    # A wrong option is never read as the gold one.
    item = items[0]
    keys = built.choices(item) if name != "ludwig" else {"yes": "yes", "no": "no"}
    wrong = next(key for key in keys if key != built.gold(item))
    assert built.parse(built.answer_text(wrong) if name != "ludwig" else wrong, item) == wrong


@pytest.mark.parametrize("name", NEW_TASKS)
def test_each_request_carries_its_item_for_a_local_interpreter(name):
    built = task(name)
    item = built.items()[1]
    for run in range(built.runs):
        request = built.request(item, run)
        assert request.kind == "choice" and request.messages == built.messages(item, run)
        found = request.input
        meant = found.item.options[found.item.answer_index][0]
        assert built.parse(found.answers[meant], item) == built.gold(item)
        assert found.item.text and found.item.readings


@pytest.mark.parametrize("name", NEW_TASKS)
def test_samples_carry_the_text_that_stratification_scores(name):
    built = task(name)
    item = built.items()[0]
    assert isinstance(built.fields(item)["text"], str) and built.fields(item)["text"].strip()


def test_ludwig_prompts_are_the_papers_completion_prompts():
    built = task("ludwig")
    item = built.items()[0]
    assert built.runs == 6
    assert built.messages(item, 0)[0]["content"] == (
        "Does the following response to the question imply yes or no?\n\n"
        "question: Is Marci grumpy?\nresponse: he's as gentle as a lamb\nimplicature:")
    assert built.messages(item, 1)[0]["content"] == (
        'Finish the following text:\n\nEsther asked "Is Marci grumpy?" and Juan responded "he\'s as gentle as a '
        'lamb", which means')
    assert len({built.messages(item, run)[0]["content"] for run in range(6)}) == 6


def test_snarks_prompt_is_bbh_answer_only_or_chain_of_thought():
    plain, cot = task("bbh_snarks"), task("bbh_snarks", cot="yes")
    item = plain.items()[0]
    answer_only = plain.messages(item, 0)[0]["content"]
    assert answer_only.startswith("Determine which of two sentences is sarcastic.")
    assert answer_only.count("\nA: (") == 3 and answer_only.endswith("A:")
    assert "Let's think step by step" not in answer_only
    reasoning = cot.messages(item, 0)[0]["content"]
    assert reasoning.count("So the answer is") == 3 and reasoning.endswith("A: Let's think step by step.")
    assert cot.max_tokens > plain.max_tokens
    assert cot.parse("(A) looks literal ... So the answer is (B).", item) == "B"
    # The three exemplars are not among the items scored.
    _, exemplars = prompt_parts(plain.templates()["bbh_snarks_cot"])
    statements = {reading for scored in plain.items() for reading in scored.readings}
    shown = [line[4:] for question, _, _ in exemplars for line in question.splitlines() if line[:4] in ("(A) ", "(B) ")]
    assert len(shown) == 6 and not set(shown) & statements


def test_floyd_orders_permute_the_options_and_keep_the_meant_reading():
    built = task("floyd")
    battery = {item.id: item for item in load_floyd_battery()}
    items = built.items()
    assert len(items) == 5 * len(battery)
    assert [item.extra["order"] for item in items[: len(battery)]] == [0] * len(battery)
    for item in items:
        source = battery[item.extra["battery_id"]]
        assert sorted(item.readings) == sorted(source.options)
        assert item.readings[item.answer_index] == source.meaning
        assert item.keys == tuple(str(n) for n in range(1, len(source.options) + 1))
    orders = Counter(tuple(i.readings) for i in items if i.extra["battery_id"] == "Metaphor-1")
    assert len(orders) > 1  # shuffled differently across orders
    prompt = built.messages(items[0], 0)[0]["content"]
    assert prompt.startswith("Task: You will read short stories") and "\nScenario: " in prompt
    assert prompt.endswith("\nAnswer:") and "\n1) " in prompt
    with pytest.raises(PragmeterError, match="orders"):
        task("floyd", orders="0")


def test_circa_checks_its_scenario_and_shows_the_four_relaxed_options():
    built = task("circa", scenario="4")
    assert {item.extra["scenario"] for item in built.items()} == {4}
    prompt = built.messages(built.items()[0], 0)[0]["content"]
    assert "A. Yes\nB. No\nC. Yes, subject to some conditions\nD. In the middle, neither yes nor no" in prompt
    with pytest.raises(PragmeterError, match="scenario"):
        task("circa", scenario="11")


@pytest.mark.parametrize(("response", "expected"), [
    ("B", "B"), ("(B)", "B"), ("B. No", "B"), ("So the answer is (A).", "A"), ("Answer: B", "B"), ("no", "B"),
    ("A sarcastic remark is made in (B)", None), ("the answer is a good one", None), ("C", None), ("", None),
    (None, None)])
def test_option_key_reads_keys_and_never_an_article(response, expected):
    item = ChoiceItem("x", "", "", (("A", "Yes"), ("B", "No")), "A", "text")
    assert option_key(response, item) == expected


def test_pragmeter_tasks_lists_citation_and_published_figures():
    lines = registry.listing()
    for name in NEW_TASKS:
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{name} "))
        block = []
        for line in lines[start + 1:]:
            if not line.startswith(" "):
                break
            block.append(line.strip())
        assert any(line.startswith("citation: ") for line in block), name
        assert sum(line.startswith("published: ") for line in block) >= 2, name


def test_a_drinq_request_carries_its_item_for_a_local_interpreter():
    built = task("drinq_vanilla")
    item = built.items()[0]
    found = built.request(item, 2).input
    assert isinstance(found, ChoiceInput)
    assert (found.item.context, found.item.utterance, found.item.options) == (item.context, item.question, item.options)
    assert all(built.parse(found.answers[letter], item) == letter for letter, _ in item.options)


def test_ludwig_k_shot_prompt_is_the_papers_with_dev_examples_never_the_item_itself():
    built = task("ludwig", shots="5", seed="3")
    item = built.items()[0]
    prompt = built.messages(item, 0)[0]["content"]
    assert prompt.startswith("Each following response to the question implies yes or no:\n\nquestion: ")
    assert prompt.count("\nimplicature: yes") + prompt.count("\nimplicature: no") == 5
    assert prompt.endswith("Does the following response to the question imply yes or no?\n\n"
                           "question: Is Marci grumpy?\nresponse: he's as gentle as a lamb\nimplicature:")
    assert built.examples(item, 0) == task("ludwig", shots="5", seed="3").examples(item, 0)
    assert built.examples(item, 0) != built.examples(item, 1)
    dev = task("ludwig", split="dev", shots="117")
    assert all(item.id not in {e.id for e in dev.examples(item, 0)} for item in dev.items()[:5])
    with pytest.raises(PragmeterError, match="shots"):
        task("ludwig", split="dev", shots="118")
