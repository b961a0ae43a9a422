"""Fixture for the generation tests: scripted fake OpenAI-compatible servers, stopped after each test."""

from __future__ import annotations

import pytest

from pragmeter.harness.fake_server import FakeChatServer


@pytest.fixture
def fake_server():
    servers = []

    def start(responder, **options) -> FakeChatServer:
        server = FakeChatServer(responder, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
