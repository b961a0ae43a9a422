"""The web page in a real browser: headless Chromium (Debian's) driven by Playwright types sentences and reads
the ranking back, and an utterance with its readings and reads the chosen one back. Skipped only when
/usr/bin/chromium is absent (.ci/run installs it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists() and not shutil.which("chromium"),
                                reason="Debian's chromium is not installed (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def server_url(onnx_model):
    from pragmeter.serve.app import create_app
    from pragmeter.testing.asgi import running

    # as `pragmeter serve` runs on loopback: the page's own requests (Host and Origin 127.0.0.1:PORT) are answered
    with running(create_app(onnx_model, loopback_only=True)) as base:
        yield base + "/"


def test_typing_sentences_shows_them_ranked(server_url, onnx_model, posts, tmp_path):
    from playwright.sync_api import sync_playwright

    texts = [posts[0][0], posts[0][1], posts[1][0], posts[1][1], posts[2][0]]
    expected = np.argsort(-onnx_model.score(texts), kind="stable")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM if CHROMIUM.exists() else
                                                                 shutil.which("chromium")),
                                             args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        page.goto(server_url)
        page.get_by_test_id("sentences").fill("\n".join(texts) + "\n\n")  # blank lines are ignored
        page.get_by_test_id("rank").click()
        rows = page.locator("#ranking tbody tr")
        rows.nth(len(texts) - 1).wait_for(timeout=30_000)
        shown = rows.locator("td.text").all_inner_texts()
        scores = [float(s) for s in rows.locator("td.score").all_inner_texts()]
        widths = page.locator("#ranking .bar > span").evaluate_all("spans => spans.map(s => s.style.width)")
        matrix_cells = page.locator("#matrix tbody td").count()
        status = page.get_by_test_id("status").inner_text()
        page.screenshot(path=str(tmp_path / "ranked.png"), full_page=True)
        browser.close()
    assert shown == [texts[i] for i in expected]
    assert scores == sorted(scores, reverse=True)
    assert np.allclose(scores, np.round(onnx_model.score(texts)[expected], 3), atol=1.5e-3)
    assert [float(w.rstrip("%")) for w in widths] == pytest.approx([s / 2 * 100 for s in scores], abs=0.1)
    assert matrix_cells == len(texts) ** 2
    assert status == f"Ranked {len(texts)} sentences."


@pytest.fixture(scope="module")
def interpreter_url(onnx_model, tmp_path_factory):
    from pragmeter.interpreter.model import Interpreter
    from pragmeter.serve.app import create_app
    from pragmeter.testing.asgi import running
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    interpreter = Interpreter.load(tiny_nli_folder(tmp_path_factory.mktemp("nli") / "tiny-nli"), device="cpu",
                                   backend="torch")
    with running(create_app(onnx_model, loopback_only=True, interpreter=interpreter)) as base:
        yield base + "/", interpreter


def test_the_interpret_panel_highlights_the_chosen_reading_with_its_probabilities(interpreter_url, tmp_path):
    from playwright.sync_api import sync_playwright

    url, interpreter = interpreter_url
    context, utterance = "Ann offers Bob a coffee at eleven at night.", "It would keep me awake."
    readings = ["Bob does not want a coffee.", "Bob wants a coffee.", "Bob likes tea."]
    probabilities = interpreter.predict([(f'{context} "{utterance}"', reading) for reading in readings])
    chosen = interpreter.choose(context, utterance, readings)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM if CHROMIUM.exists() else
                                                                 shutil.which("chromium")),
                                             args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        page.goto(url)
        page.get_by_test_id("utterance").wait_for(state="visible", timeout=30_000)  # shown: the service interprets
        page.get_by_test_id("context").fill(context)
        page.get_by_test_id("utterance").fill(utterance)
        page.get_by_test_id("readings").fill("\n".join(readings) + "\n\n")
        page.get_by_test_id("interpret").click()
        rows = page.locator("#interpretation tbody tr")
        rows.nth(len(readings) - 1).wait_for(timeout=30_000)
        shown = rows.locator("td.text").all_inner_texts()
        highlighted = page.locator("#interpretation tr.chosen td.text").all_inner_texts()
        values = [[float(v) for v in rows.nth(i).locator("span.p").all_inner_texts()] for i in range(len(readings))]
        widths = rows.nth(0).locator(".bar > span").evaluate_all("spans => spans.map(s => s.style.width)")
        status = page.get_by_test_id("interpret-status").inner_text()
        page.screenshot(path=str(tmp_path / "interpreted.png"), full_page=True)
        browser.close()
    assert shown == readings and highlighted == [readings[chosen]]
    assert np.allclose(values, np.round(probabilities, 3), atol=1.5e-3)
    assert [float(w.rstrip("%")) for w in widths] == pytest.approx(probabilities[0] * 100, abs=0.1)
    assert status == f"Reading {chosen + 1} of {len(readings)} is most likely meant."
