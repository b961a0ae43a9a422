"""Schemathesis against the ImpScore service's own OpenAPI schema (its interpreter's /interpret included), served by uvicorn on loopback: generated valid
and invalid requests to every operation (bounded examples per operation) get no server error, and the
documented responses match their schemas."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

EXAMPLES_PER_OPERATION = 30


@pytest.fixture(scope="module")
def service():
    """The real service (shipped default model, torch encoder, small limits; the packaged interpreter on torch) on
    127.0.0.1 in this process."""
    from pragmeter.impscore.model import ImpScore
    from pragmeter.interpreter.model import Interpreter
    from pragmeter.serve.app import create_app
    from pragmeter.serve.limits import Limits
    from pragmeter.testing.asgi import running

    app = create_app(ImpScore.load(), Limits(max_texts=8, max_chars=300, max_body_bytes=8000), max_wait_ms=5,
                     interpreter=Interpreter.load(device="cpu", precision="fp32", backend="torch"))
    with running(app) as base:
        yield base


@pytest.fixture(scope="module")
def api_schema(service):
    return schemathesis.openapi.from_url(f"{service}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_no_server_error_and_documented_responses(case):
    response = case.call(timeout=30)
    assert response.status_code < 500, (case.method, case.path, case.body, response.status_code, response.text)
    # Undocumented statuses (413/422 with a one-line detail) are the service's designed answers to bad input;
    # what is checked is the absence of 5xx and that documented responses have their documented shape.
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])
