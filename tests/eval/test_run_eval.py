"""``eval.runner.run_eval``, what ``pragmeter eval`` calls: its options, tasks and finished output are checked before
the chat backends are built; a run returns its summary and says whether every request was answered."""

from __future__ import annotations

import json
import logging

import pytest
from eval_helpers import gold_responder

from pragmeter.errors import PragmeterError
from pragmeter.eval.runner import run_eval


def never():
    raise AssertionError("backend built before the checks")


@pytest.mark.parametrize("options, message", [
    ({"limit": 0}, "limit=0: must be at least 1"),
    ({"sample": 0}, "sample=0: must be at least 1"),
    ({"sample": 5, "limit": 5}, "sample=5, limit=5: give one or the other"),
])
def test_bad_limits_are_refused_first(tmp_path, options, message):
    with pytest.raises(PragmeterError, match=message):
        run_eval("inli", tmp_path, never, never, **options)


def test_a_finished_run_is_refused_unless_overwrite(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({"complete": True}))
    with pytest.raises(PragmeterError, match="results.json exists; pass overwrite=True"):
        run_eval("inli", tmp_path, never, never)


def test_a_run_against_the_fake_server_is_complete(tmp_path, fake_server, capsys, caplog):
    from pragmeter.llm.backends import load_backend

    caplog.set_level(logging.INFO, logger="pragmeter")
    server = fake_server(gold_responder(["inli"], 4))
    summary, complete = run_eval("inli", tmp_path, lambda: load_backend("openai-chat", {"base_url": server.url,
                                                                                         "model": "fake-model"}),
                                 limit=4, progress=False)
    assert complete and summary[0].startswith("inli: ") and capsys.readouterr() == ("", "")  # the library prints nothing
    assert f"results: {tmp_path / 'results.json'}" in caplog.messages
