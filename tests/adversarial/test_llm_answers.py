"""LLM servers that answer in odd shapes or at odd speeds: `pragmeter eval` and `generate graded` never crash, never
cache a glitch, and never wait past the request timeout.

Each case was a traceback, a poisoned cache entry or a stalled run before (issue 36, items 8, 9, 10 and 12)."""

from __future__ import annotations

import json
import time

import pytest

from pragmeter.cli import main
from pragmeter.llm.backends.openai_chat import retry_after_seconds
from pragmeter.testing.fake_server import constant

ODD_CONTENTS = {"number": 3, "object": {"label": "Neutral"}, "list of numbers": [1, 2], "bool": True,
                "parts without text": [{"type": "image_url", "image_url": {"url": "x"}}]}


def eval_args(server, output, *extra: str, model_args: str = "") -> list[str]:
    args = f"base_url={server.url},model=fake-model" + (f",{model_args}" if model_args else "")
    return ["eval", "--tasks", "inli", "--limit", "4", "--output", str(output), "--no-progress",
            "--model-args", args, *extra]


def inli_result(output) -> dict:
    return json.loads((output / "results.json").read_text())["results"]["inli"]


def test_content_as_a_list_of_text_parts_is_the_joined_text(tmp_path, fake_server):
    server = fake_server(constant([{"type": "text", "text": "Neu"}, {"type": "text", "text": "tral"}]))
    assert main(eval_args(server, tmp_path)) == 0
    result = inli_result(tmp_path)
    assert result["invalid"] == 0 and result["metrics"]["accuracy"] == 0.25  # 'Neutral' for every item


@pytest.mark.parametrize("name", sorted(ODD_CONTENTS))
def test_content_of_another_type_is_an_invalid_answer(tmp_path, fake_server, name):
    server = fake_server(constant(ODD_CONTENTS[name]))
    assert main(eval_args(server, tmp_path)) == 0
    result = inli_result(tmp_path)
    assert result["invalid"] == 4 and result["errors"] == 0


@pytest.mark.parametrize("name", ["number", "object", "list of parts"])
def test_generate_graded_takes_odd_contents_without_a_crash(tmp_path, fake_server, name):
    content = ODD_CONTENTS.get(name) or [{"type": "text", "text": "Perhaps the window could be closed, if you like."}]
    server = fake_server(constant(content))
    source = tmp_path / "in.csv"
    source.write_text("text\nClose the window.\n", encoding="utf-8")
    output = tmp_path / "graded.csv"
    code = main(["generate", "graded", "--input", str(source), "--column", "text", "--output", str(output),
                 "--no-progress", "--retries", "0", "--model-args", f"base_url={server.url},model=m"])
    assert code in (0, 2)  # rows, or the one-line "no rows generated" — never a traceback
    if name == "list of parts":
        assert code == 0 and "Perhaps the window" in output.read_text()


def test_retry_after_that_is_no_date_is_ignored():
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({"Retry-After": "Mon, 99 Foo 2026 25:61:00 GMT"}) is None
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0


def test_a_server_sending_retry_after_soon_is_retried(tmp_path, fake_server):
    server = fake_server(constant("Neutral"), fault_rate=0.5, faults=("429",), retry_after="soon", seed=1)
    code = main(eval_args(server, tmp_path, model_args="backoff=0.01,max_backoff=0.05,max_retries=20"))
    assert code == 0 and server.faults_sent["429"] >= 1
    assert inli_result(tmp_path)["errors"] == 0


def test_a_trickling_server_is_cut_at_the_request_timeout(tmp_path, fake_server):
    # One byte every 0.2 s: each read arrives well within the timeout, the whole answer would take ~40 s.
    server = fake_server(constant("Neutral"), fault_rate=1.0, faults=("trickle",), trickle=0.2)
    start = time.monotonic()
    code = main(["eval", "--tasks", "inli", "--limit", "1", "--output", str(tmp_path), "--no-progress",
                 "--model-args", f"base_url={server.url},model=m,timeout=1,max_retries=0"])
    elapsed = time.monotonic() - start
    assert elapsed < 10, f"the request ran {elapsed:.1f} s with timeout=1"
    assert code != 0 and "timeout after 1 s" in inli_result(tmp_path)["first_error"]


def test_an_empty_answer_is_not_cached(tmp_path, fake_server):
    empty = fake_server(constant(""))
    assert main(eval_args(empty, tmp_path)) == 0
    assert inli_result(tmp_path)["invalid"] == 4
    good = fake_server(constant("Neutral"))
    assert main(eval_args(good, tmp_path, "--overwrite")) == 0
    assert good.total_calls == 4  # the glitch was asked again, not replayed from the cache
    assert inli_result(tmp_path)["invalid"] == 0


def test_an_oversized_answer_is_an_invalid_answer(tmp_path, fake_server):
    server = fake_server(constant("Neutral " * 300_000))  # 2.4 MB of content
    assert main(eval_args(server, tmp_path)) == 0
    result = inli_result(tmp_path)
    assert result["invalid"] == 4 and result["errors"] == 0
    cache = tmp_path / "cache" / "responses.jsonl"
    assert not cache.exists() or cache.stat().st_size < 10_000  # nothing of it stored
