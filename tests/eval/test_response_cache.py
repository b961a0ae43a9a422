"""The response cache never stops a run: a damaged entry is asked again (only that prompt), a cache that cannot
be written is warned about once and the run still finishes with every answer."""

from __future__ import annotations

import json
import logging

import pytest

from pragmeter.llm.cache import ResponseCache
from pragmeter.testing.fake_server import FakeChatServer

from eval_helpers import gold_responder, run_eval

N = 6


def test_damaged_entries_are_asked_again_and_only_they(tmp_path, caplog):
    responder = gold_responder(["inli"], N)
    with FakeChatServer(responder) as server:
        run_eval(tmp_path, server, "inli", "--limit", str(N))
    cache_file = tmp_path / "cache" / "responses.jsonl"
    lines = cache_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == N
    damaged = json.loads(lines[1])
    damaged["text"] = None  # valid JSON, unusable entry
    lines[1] = json.dumps(damaged)
    lines[3] = "\x00\x00garbage{"  # not JSON at all
    cache_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="pragmeter"), FakeChatServer(responder) as server:
        result = run_eval(tmp_path, server, "inli", "--limit", str(N), "--overwrite")
        assert server.total_calls == 2
    assert "2 damaged entries ignored" in caplog.text
    task = result["results"]["inli"]
    assert task["n_items"] == N and task["invalid"] == 0 and task["metrics"]["accuracy"] == 1.0


def test_unwritable_cache_warns_once_and_keeps_answers(tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        cache = ResponseCache(blocker / "responses.jsonl")
        cache.put("a", {"text": "first"})
        cache.put("b", {"text": "second"})
    assert cache.get("b")["text"] == "second"
    assert caplog.text.count("cannot be written") == 1


def test_full_disk_while_appending(tmp_path, caplog):
    import os

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    cache = ResponseCache(tmp_path / "responses.jsonl")
    os.close(cache._fd)
    cache._fd = os.open("/dev/full", os.O_WRONLY)  # every write fails with ENOSPC, as on a full disk
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        cache.put("a", {"text": "first"})
        cache.put("b", {"text": "second"})
    assert cache.get("a")["text"] == "first" and caplog.text.count("No space left") == 1


def test_identical_requests_in_one_run_are_asked_once(tmp_path):
    # DRInQ's three runs differ only in their sampled examples; zero-shot they are the same prompt, asked once and
    # answered three times (the cache gives a later identical request that same answer anyway).
    responder = gold_responder(["drinq_vanilla"], 2, {"shots": "0"})
    with FakeChatServer(responder, latency=0.2) as server:
        result = run_eval(tmp_path, server, "drinq_vanilla", "--limit", "2", "--task-arg", "drinq_vanilla.shots=0")
        assert server.total_calls == 2
    task = result["results"]["drinq_vanilla"]
    assert task["n_items"] == 2 and task["errors"] == 0 and task["invalid"] == 0
    assert task["metrics"]["accuracy"]["mean"] == 1.0 and task["cache_hits"] == 4


def test_a_cache_planted_as_a_link_in_the_output_is_refused_and_never_appended_to(tmp_path, capsys):
    from pragmeter.cli import main

    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"someone else's file\n")
    output = tmp_path / "runs" / "v"
    (output / "cache").mkdir(parents=True)
    (output / "cache" / "responses.jsonl").symlink_to(victim)
    with FakeChatServer(gold_responder(["inli"], N)) as server:
        code = main(["eval", "--tasks", "inli", "--limit", str(N), "--model-args",
                     f"base_url={server.url},model=fake-model", "--output", str(output), "--no-progress"])
        assert server.total_calls == 0
    assert code == 2 and victim.read_bytes() == b"someone else's file\n"
    err = capsys.readouterr().err
    assert f"{output / 'cache' / 'responses.jsonl'}: a symbolic link; nothing is written through it" in err


def test_a_cache_folder_planted_as_a_link_in_the_output_is_refused(tmp_path, capsys):
    from pragmeter.cli import main

    elsewhere = tmp_path / "someone-elses-run" / "cache"
    elsewhere.mkdir(parents=True)
    (elsewhere / "responses.jsonl").write_bytes(b"")
    output = tmp_path / "runs" / "v"
    output.mkdir(parents=True)
    (output / "cache").symlink_to(elsewhere, target_is_directory=True)
    with FakeChatServer(gold_responder(["inli"], N)) as server:
        code = main(["eval", "--tasks", "inli", "--limit", str(N), "--model-args",
                     f"base_url={server.url},model=fake-model", "--output", str(output), "--no-progress"])
        assert server.total_calls == 0
    assert code == 2 and (elsewhere / "responses.jsonl").read_bytes() == b""
    err = capsys.readouterr().err
    assert f"{output / 'cache'}: a symbolic link or not a folder; nothing is written through it" in err
