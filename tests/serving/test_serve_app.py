"""The HTTP service: documented endpoints, results equal to the library's, limits answered with 413/422."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from fastapi.testclient import TestClient

from pragmeter.serve.app import create_app
from pragmeter.serve.limits import Limits

LIMITS = Limits(max_texts=8, max_chars=300, max_body_bytes=8000)


@pytest.fixture(scope="module")
def client(onnx_model):
    with TestClient(create_app(onnx_model, LIMITS, max_wait_ms=50)) as test_client:
        yield test_client


def test_health_version_and_schema(client, onnx_model):
    assert client.get("/health").json()["status"] == "ok"
    version = client.get("/version").json()
    assert version["model"] == onnx_model.signature() and version["backend"] == "onnx"
    assert version["limits"] == LIMITS.to_dict()
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/score", "/rank", "/distance", "/health", "/version"} <= set(paths)


def test_score_equals_library(client, onnx_model, sentences):
    texts = sentences[:8]
    scores = client.post("/score", json={"texts": texts}).json()["scores"]
    assert np.allclose(scores, onnx_model.score(texts), atol=1e-5)


def test_rank_orders_by_score_and_returns_distances(client, onnx_model, sentences):
    texts = sentences[10:16]
    body = client.post("/rank", json={"texts": texts, "distances": True}).json()
    scores = onnx_model.score(texts)
    assert [item["index"] for item in body["ranking"]] == list(np.argsort(-scores, kind="stable"))
    assert [item["rank"] for item in body["ranking"]] == list(range(1, 7))
    assert all(body["ranking"][i]["text"] == texts[body["ranking"][i]["index"]] for i in range(6))
    assert np.allclose(body["distances"], onnx_model.distance_matrix(texts), atol=1e-4)
    assert client.post("/rank", json={"texts": texts}).json()["distances"] is None


def test_distance_of_pairs_equals_library(client, onnx_model, posts):
    pairs = [list(pair) for pair in posts[:4]]
    distances = client.post("/distance", json={"pairs": pairs}).json()["distances"]
    expected = onnx_model.pragmatic_distance([a for a, _ in pairs], [b for _, b in pairs])
    assert np.allclose(distances, expected, atol=1e-4)


@pytest.mark.parametrize("path, body, status, message", [
    ("/score", {"texts": ["a sentence"] * 9}, 413, "too many texts: 9"),
    ("/score", {"texts": ["x" * 301]}, 413, "301 characters, the limit is 300"),
    ("/distance", {"pairs": [["a", "b"]] * 5}, 413, "too many texts: 10"),
    ("/score", {"texts": []}, 422, "texts: List should have at least 1 item"),
    ("/score", {"texts": ["fine", "   "]}, 422, "texts[1] is empty"),
    ("/score", {"texts": ["fine", 3]}, 422, "texts.1: Input should be a valid string"),
    ("/score", {"sentences": ["fine"]}, 422, "texts: Field required"),
    ("/distance", {"pairs": [["only one"]]}, 422, "pairs.0.1: Field required"),
])
def test_limits_and_malformed_requests(client, path, body, status, message):
    response = client.post(path, json=body)
    assert response.status_code == status
    assert message in response.json()["detail"]


def test_body_size_and_invalid_json(client):
    big = client.post("/score", content=b'{"texts": ["' + b"x" * 9000 + b'"]}',
                      headers={"content-type": "application/json"})
    assert big.status_code == 413 and "larger than 8000 bytes" in big.json()["detail"]
    chunked = client.post("/score", content=iter([b"x" * 5000, b"x" * 5000]),
                          headers={"content-type": "application/json"})  # no Content-Length
    assert chunked.status_code == 413
    broken = client.post("/score", content=b'{"texts": [', headers={"content-type": "application/json"})
    assert broken.status_code == 422 and "JSON" in broken.json()["detail"]


def test_concurrent_requests_share_batches(client, onnx_model, sentences):
    before = client.get("/health").json()["batcher"]
    texts = sentences[20:36]
    results: dict[int, float] = {}

    def one(index: int) -> None:
        results[index] = client.post("/score", json={"texts": [texts[index]]}).json()["scores"][0]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    after = client.get("/health").json()["batcher"]
    assert after["requests"] - before["requests"] == len(texts)
    assert after["batches"] - before["batches"] < len(texts)  # grouped, not one encoder call each
    assert np.allclose([results[i] for i in range(len(texts))], onnx_model.score(texts), atol=1e-5)


def test_page_is_served_without_external_resources(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "<textarea" in page.text and "http://" not in page.text and "https://" not in page.text
    assert client.get("/docs").status_code == 404  # the docs pages would load a CDN


def test_serve_command_defaults_to_loopback():
    from pragmeter.cli import build_parser

    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.backend, args.precision) == ("127.0.0.1", 8000, "auto", "auto")


@pytest.mark.parametrize("body", [b'{"texts": ' + b"[" * 3000 + b"]" * 3000 + b"}",  # nested past the parser's depth
                                  b'{"texts": ["a"], "n": ' + b"9" * 5000 + b"}"],  # past Python's int-digit limit
                         ids=["deep", "long-number"])
def test_json_the_parser_cannot_take_is_a_422_like_other_malformed_json(client, body):
    answer = client.post("/score", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422 and "JSON" in answer.json()["detail"]


@pytest.mark.parametrize("body, bad", [('{"texts": ["un café, s\'il vous plaît"]}'.encode("latin-1"), b"\xe9"),
                                       (b'{"texts": ["\x80 a stray continuation byte"]}', b"\x80"),
                                       (b'{"texts": ["cut in the middle of \xe2\x82"]}', b"\xe2")],
                         ids=["latin-1", "continuation", "truncated"])
def test_a_body_that_is_not_utf8_is_a_400_that_says_so(client, body, bad):
    byte = body.index(bad)
    answer = client.post("/score", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["detail"] == (f"body: not UTF-8 (byte {byte} is 0x{body[byte]:02x}); send JSON encoded "
                                       "as UTF-8")
    assert client.post("/score", json={"texts": ["un café"]}).status_code == 200  # UTF-8 accents are fine


@pytest.fixture(scope="module")
def interpreting(onnx_model, tmp_path_factory):
    """The service with an interpreter: a tiny NLI cross-encoder written here (random weights, torch on the CPU)."""
    from pragmeter.interpreter.model import Interpreter
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    interpreter = Interpreter.load(tiny_nli_folder(tmp_path_factory.mktemp("nli") / "tiny-nli"), device="cpu",
                                   backend="torch")
    with TestClient(create_app(onnx_model, LIMITS, max_wait_ms=50, interpreter=interpreter)) as test_client:
        yield test_client, interpreter


CONTEXT, UTTERANCE = "Ann offers Bob a coffee at eleven at night.", "It would keep me awake."
READINGS = ["Bob does not want a coffee.", "Bob wants a coffee.", "Bob likes tea."]


def test_interpret_answers_readings_and_pairs_as_the_library(interpreting):
    client, interpreter = interpreting
    answer = client.post("/interpret", json={"context": CONTEXT, "utterance": UTTERANCE, "readings": READINGS})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["labels"] == interpreter.labels == ["contradiction", "entailed", "neutral"]
    assert body["premise"] == f'{CONTEXT} "{UTTERANCE}"'
    assert np.allclose(body["scores"], interpreter.scores(CONTEXT, UTTERANCE, READINGS), atol=1e-6)
    assert body["choice"] == interpreter.choose(CONTEXT, UTTERANCE, READINGS)
    assert np.allclose(body["probabilities"], interpreter.predict([(body["premise"], r) for r in READINGS]), atol=1e-6)
    pairs = [["A man sleeps on a bench.", "A person rests."], ["Two dogs run in the snow.", "The animals are inside."]]
    body = client.post("/interpret", json={"pairs": pairs}).json()
    expected = interpreter.predict([tuple(pair) for pair in pairs])
    assert np.allclose(body["probabilities"], expected, atol=1e-6) and body["choice"] is None
    assert np.allclose(body["scores"], expected[:, 1], atol=1e-6)  # P(entailed)
    version = client.get("/version").json()["interpreter"]
    assert version["labels"] == interpreter.labels and version["meant_labels"] == ["entailed"]
    assert "/interpret" in client.get("/openapi.json").json()["paths"]
    assert "interpreter_batcher" in client.get("/health").json()


def test_the_service_answers_a_close_choice_again_in_fp32_as_the_library(onnx_model, tmp_path):
    """A reduced precision that flips an item's two best readings (pragmeter.testing.precision): the service's
    choice is fp32's, as Interpreter.choose gives it, because the close choice is answered again in fp32."""
    from pragmeter.interpreter.model import Interpreter
    from pragmeter.interpreter.recheck import Fp32Recheck
    from pragmeter.testing.precision import SwappingBf16
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    folder = tiny_nli_folder(tmp_path / "tiny-nli")
    fp32 = Interpreter.load(folder, device="cpu", backend="torch")
    reference = fp32.scores(CONTEXT, UTTERANCE, READINGS)
    runner_up, winner = (int(i) for i in np.argsort(reference)[-2:])
    gap = (reference[winner] - reference[runner_up]) * 1.5 + 1e-6
    checked = Interpreter(Fp32Recheck(SwappingBf16(fp32.classifier, (winner, runner_up)), gap, folder), "tiny-nli")
    unchecked = Interpreter(SwappingBf16(fp32.classifier, (winner, runner_up)), "tiny-nli")
    assert checked.choose(CONTEXT, UTTERANCE, READINGS) == winner != unchecked.choose(CONTEXT, UTTERANCE, READINGS)
    request = {"context": CONTEXT, "utterance": UTTERANCE, "readings": READINGS}
    for interpreter, expected in ((checked, winner), (unchecked, runner_up)):
        with TestClient(create_app(onnx_model, LIMITS, max_wait_ms=50, interpreter=interpreter)) as client:
            body = client.post("/interpret", json=request).json()
        assert body["choice"] == expected
        assert np.allclose(body["scores"], interpreter.scores(CONTEXT, UTTERANCE, READINGS), atol=1e-6)


@pytest.mark.parametrize("body, status, message", [
    ({"utterance": UTTERANCE}, 422, "'readings' is missing"),
    ({"readings": READINGS}, 422, "'utterance' is missing"),
    ({"pairs": [["a", "b"]], "utterance": UTTERANCE, "readings": READINGS}, 422, "give either 'pairs' or 'utterance'"),
    ({"pairs": [["a", "b"]], "context": CONTEXT}, 422, "give either 'pairs' or 'utterance'"),
    ({}, 422, "give either 'pairs' or 'utterance'"),
    ({"utterance": "  ", "readings": READINGS}, 422, "utterance is empty"),
    ({"utterance": UTTERANCE, "readings": ["fine", ""]}, 422, "readings[1] is empty"),
    ({"utterance": UTTERANCE, "readings": []}, 422, "readings: List should have at least 1 item"),
    ({"utterance": UTTERANCE, "readings": ["r"] * 9}, 413, "too many texts: 9 in 'readings'"),
    ({"utterance": UTTERANCE, "context": "x" * 301, "readings": READINGS}, 413, "context has 301 characters"),
    ({"pairs": [["a", "b"]] * 5}, 413, "too many texts: 10 in 'pairs'"),
    ({"pairs": [["a", " "]]}, 422, "pairs[0][1] is empty"),
    ({"pairs": [["only one"]]}, 422, "pairs.0.1: Field required"),
])
def test_a_bad_interpret_request_gets_a_4xx_naming_the_field(interpreting, body, status, message):
    client, _ = interpreting
    answer = client.post("/interpret", json=body)
    assert answer.status_code == status and message in answer.json()["detail"], answer.text


def test_without_an_interpreter_there_is_no_interpret_endpoint(client):
    assert client.post("/interpret", json={"pairs": [["a", "b"]]}).status_code == 404
    assert client.get("/version").json()["interpreter"] is None
    assert "/interpret" not in client.get("/openapi.json").json()["paths"]
