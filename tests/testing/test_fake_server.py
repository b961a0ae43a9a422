"""The scripted OpenAI-compatible server that stands in for a real peer in unit tests."""

from __future__ import annotations

from pragmeter.testing.fake_server import FakeChatServer


def test_a_client_that_hangs_up_is_not_reported_but_a_server_bug_is(capsys):
    # The fault tests hang up on the server on purpose (timeouts, killed runs): that must not print a traceback into
    # the suite's output, while a real error of the server still does.
    server = FakeChatServer(lambda request: "ok")
    try:
        for error, shown in ((ConnectionResetError("peer went away"), False), (BrokenPipeError(), False),
                             (ValueError("a bug in the fake server"), True)):
            try:
                raise error
            except Exception:
                server._server.handle_error(None, ("127.0.0.1", 1))
            assert ("Traceback" in capsys.readouterr().err) is shown, error
    finally:
        server._server.server_close()



def test_stop_ends_every_connection_thread_even_mid_answer(capsys):
    # A handler thread left running after its test (a trickled answer, a hang, a kept-alive connection) writes into
    # the next test's captured stderr; stop() must cut and join them all, quickly and without a traceback.
    import http.client
    import json
    import threading
    import time

    server = FakeChatServer(lambda request: "ok", fault_rate=1.0, faults=("trickle",), trickle=5.0, hang=60).start()
    port = int(server.url.split(":")[-1].split("/")[0])
    before = threading.active_count()
    idle = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    idle.request("GET", "/health")
    assert idle.getresponse().read()  # answered; the connection stays open (HTTP/1.1 keep-alive)
    trickled = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    trickled.request("POST", "/v1/chat/completions", body=json.dumps({"messages": []}),
                     headers={"Content-Type": "application/json"})
    deadline = time.monotonic() + 10
    while server.total_calls < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.total_calls == 1 and threading.active_count() >= before + 1
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 5  # not the 5 s per byte of the trickle, nor a wait on the idle client
    assert threading.active_count() < before  # the serving thread and both connection threads have ended
    assert "Traceback" not in capsys.readouterr().err
    idle.close()
    trickled.close()

def run_module(*args: str, timeout: float = 60):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pragmeter.testing.fake_server", *args], capture_output=True,
                          text=True, timeout=timeout, env=os.environ)


def test_the_dry_run_server_has_a_usage_and_refuses_bad_arguments_in_one_line():
    # --help used to start a server answering "--help", and no argument was an IndexError traceback
    shown = run_module("--help")
    assert shown.returncode == 0 and shown.stdout.startswith("usage: python -m pragmeter.testing.fake_server")
    assert "TEXT" in shown.stdout and "LATENCY" in shown.stdout
    for args, message in (((), "the following arguments are required: TEXT"),
                          (("Neutral", "-1"), "argument LATENCY: expected seconds >= 0, got '-1'"),
                          (("Neutral", "soon"), "argument LATENCY: expected seconds >= 0, got 'soon'")):
        refused = run_module(*args)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr, args
        assert refused.stdout == ""


def test_the_dry_run_server_answers_every_request_with_its_text():
    import json
    import subprocess
    import sys
    import urllib.request

    process = subprocess.Popen([sys.executable, "-m", "pragmeter.testing.fake_server", "Neutral"],
                               stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(
            {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.load(response)["choices"][0]["message"]["content"] == "Neutral"
    finally:
        process.terminate()
        process.wait(timeout=30)
