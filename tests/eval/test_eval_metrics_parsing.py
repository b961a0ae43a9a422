"""Metrics against hand-computed values, answer parsers, the cache and the retry delays."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from pragmeter.llm.backends.openai_chat import OpenAIChatBackend, retry_after_seconds
from pragmeter.llm.cache import ResponseCache
from pragmeter.metrics.classification import classification_report
from pragmeter.metrics.intervals import bootstrap_ci, mean_sd
from pragmeter.llm.parsing import LabelParser, json_field
from pragmeter.tasks.drinq import DrinqVanilla
from pragmeter.tasks.emphasized_talk import parse_judge_score
from pragmeter.tasks.inli import Inli
from pragmeter.tasks.ishate import IshateSubtle

LABELS = ("non-hateful", "explicit", "implicit")


def test_classification_report_matches_hand_computed_confusion():
    gold = ["non-hateful"] * 4 + ["explicit"] * 3 + ["implicit"] * 3
    pred = ["non-hateful", "non-hateful", "non-hateful", "explicit",
            "explicit", "explicit", None,
            "implicit", "non-hateful", "explicit"]
    report = classification_report(gold, pred, LABELS)
    # rows = gold, columns = prediction + invalid
    assert report["confusion"]["counts"] == [[3, 1, 0, 0], [0, 2, 0, 1], [1, 1, 1, 0]]
    prf = report["precision_recall_f1"]
    # non-hateful: TP 3, predicted 4, gold 4 -> P 3/4, R 3/4
    assert prf["non-hateful"]["precision"] == pytest.approx(3 / 4) and prf["non-hateful"]["recall"] == pytest.approx(3 / 4)
    # explicit: TP 2, predicted 4, gold 3 -> P 1/2, R 2/3 (swapping arguments would give P 2/3, R 1/2)
    assert prf["explicit"]["precision"] == pytest.approx(2 / 4) and prf["explicit"]["recall"] == pytest.approx(2 / 3)
    assert prf["explicit"]["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # implicit: TP 1, predicted 1, gold 3 -> P 1, R 1/3
    assert prf["implicit"]["precision"] == pytest.approx(1.0) and prf["implicit"]["recall"] == pytest.approx(1 / 3)
    f1s = [0.75, 4 / 7, 0.5]
    assert report["macro_f1"] == pytest.approx(np.mean(f1s))
    assert report["accuracy"] == pytest.approx(6 / 10) and report["invalid"] == 1


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = np.random.default_rng(1).integers(0, 2, 200).astype(float)
    low, high = bootstrap_ci(values, seed=7)
    assert (low, high) == bootstrap_ci(values, seed=7)
    assert low < values.mean() < high and high - low < 0.2
    assert mean_sd([0.5, 0.6, 0.7]) == {"mean": pytest.approx(0.6), "sd": pytest.approx(0.1)}


def test_label_parser_never_guesses():
    parse = LabelParser({"non-subtle": "non-subtle", "subtle": "subtle", "non-hateful": "non-hateful"})
    assert parse("Subtle.") == "subtle"
    assert parse("**non-subtle**") == "non-subtle"
    assert parse("non-subtle or subtle") is None
    assert parse("neither") is None and parse("") is None and parse(None) is None
    assert LabelParser({"yes": "yes", "no": "no"})("No, it is fine.") == "no"


def test_drinq_parser_reads_json_fences_and_fallbacks():
    task = DrinqVanilla()
    item = task.items()[0]
    assert task.parse('```json\n{"selected_option": "D. text", "explanation": "x"}\n```', item) == "D"
    assert task.parse("{'selected_option': 'B. I am offering', }", item) == "B"  # not JSON: regex fallback
    assert task.parse('{"selected_option": "(C) something", "explanation": "he said "hi""}', item) == "C"
    assert task.parse("B", item) == "B"
    assert task.parse(f'{{"selected_option": "{item.option_text("E")}"}}', item) == "E"
    assert task.parse("I think the answer is probably one of them.", item) is None
    assert json_field('"score": 4', "score") == 4.0


def test_judge_score_parser():
    assert parse_judge_score('{"analysis": "good", "score": 4}') == 4.0
    assert parse_judge_score('{"analysis": "good", "score": "3"}') == 3.0
    assert parse_judge_score("Analysis: fine.\nScore: 2") == 2.0
    assert parse_judge_score('{"analysis": "x", "score": 9}') is None
    assert parse_judge_score("no number here") is None


def test_ishate_prompt_and_reference_round_trip():
    task = IshateSubtle()
    for item in task.items()[:50]:
        assert task.parse(task.reference_answer(item), item) == task.gold(item)


def test_inli_shots_keep_the_papers_first_examples_and_zero_drops_the_block():
    item = Inli().items()[0]
    prompts = {n: Inli(args={"shots": str(n)}).messages(item, 0)[0]["content"] for n in (0, 1, 8)}
    template = Inli().templates()["inli_eval_8shot"]
    assert prompts[8] == template.replace("{PREMISE}", item.premise).replace("{HYPOTHESIS}", item.hypothesis)
    assert [p.count("\nLabel: ") for p in (prompts[0], prompts[1], prompts[8])] == [0, 1, 8]
    assert "Ashley felt a pang of guilt" in prompts[1] and "Diana wants to know" not in prompts[1]  # the first one
    assert "examples" not in prompts[0] and prompts[0].endswith(prompts[8][prompts[8].index("[your task]"):])
    assert prompts[0].startswith(template[: template.index("\n\nHere are some examples:")] + "\n\n[your task]")


def test_cache_survives_a_torn_last_line(tmp_path):
    path = tmp_path / "responses.jsonl"
    cache = ResponseCache(path)
    cache.put("a", {"text": "first"})
    cache.close()
    with open(path, "ab") as handle:
        handle.write(b'{"key": "b", "text": "cut sho')  # killed mid-write
    cache = ResponseCache(path)
    assert cache.get("a")["text"] == "first" and "b" not in cache
    cache.put("c", {"text": "third"})
    cache.close()
    assert ResponseCache(path).get("c")["text"] == "third"


def test_retry_delays_honour_retry_after():
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == pytest.approx(10.0)
    assert retry_after_seconds({}) is None
    backend = OpenAIChatBackend("http://127.0.0.1:9/v1", "m", backoff=1.0, max_backoff=8.0)
    assert all(2.0 <= backend._delay(0, 2.0) <= 2.2 for _ in range(50))
    windows = [max(backend._delay(attempt, None) for _ in range(200)) for attempt in range(6)]
    assert windows[0] <= 1.0 and windows[3] > 1.0 and max(windows) <= 8.0


def test_unreachable_server_fails_the_item_not_the_run():
    backend = OpenAIChatBackend("http://127.0.0.1:9/v1", "m", max_retries=1, backoff=0.01, timeout=1)
    from pragmeter.llm.backends.base import BackendFailed
    from pragmeter.llm.request import Request

    with pytest.raises(BackendFailed, match="connection error"):
        asyncio.run(backend.complete(Request([{"role": "user", "content": "hi"}], 4)))
