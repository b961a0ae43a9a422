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


def test_a_run_that_fails_at_once_leaves_no_empty_output_folder(tmp_path, capsys):
    """A server that refuses the key (401) stops the run at its first request: the output folder it made, with the
    response cache opened in it and never written, is taken away again."""
    import http.server
    import threading

    from pragmeter.cli import main

    class Refuses(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the name http.server calls)
            body = b'{"error": {"message": "invalid api key"}}'
            self.send_response(401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    texts = tmp_path / "texts.csv"
    texts.write_text("text,label\nThe weather is lovely.,0\nYou people are all the same.,1\n", encoding="utf-8")
    output = tmp_path / "first"
    try:
        code = main(["eval", "--tasks", "hate_detection", "--task-arg", f"hate_detection.path={texts}",
                     "--no-progress", "--output", str(output), "--model-args",
                     f"base_url=http://127.0.0.1:{server.server_address[1]}/v1,model=m,max_retries=0"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 2 and "401" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["texts.csv"]  # no output folder, no lock
