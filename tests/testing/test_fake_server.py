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
