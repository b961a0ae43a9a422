"""Against the real packaged model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) served by llama.cpp through the gguf
backend: a few INLI and DRInQ items in both modes, the server started and stopped by the backend, results that
load in the report. Out of the run where xllamacpp or the model parts are not installed (tests/conftest.py:
``real_llm_runs``; ``-m real_llm`` runs it anyway and says what is missing). Slow on a CPU (minutes): CI installs the
model and runs it (marker ``real_llm``); deselect with ``-m 'not real_llm'``."""

from __future__ import annotations

import json
import os

import pytest

from pragmeter.cli import main
from pragmeter.errors import PragmeterError

pytestmark = pytest.mark.real_llm
MODEL = "qwen2.5-coder-1.5b"
# Two threads and passive OpenMP waits keep a shared CI machine usable; shots=0 keeps the prompts short (INLI's
# 8-shot prompt is 800 tokens: 20 s of prompt evaluation on one thread, per server).
# Under pytest-xdist, a worker's share of the cores (OMP_NUM_THREADS, set in conftest.py).
MODEL_ARGS = f"threads={min(2, int(os.environ.get('OMP_NUM_THREADS', 0)) or os.cpu_count() or 1)}"


@pytest.fixture(scope="module")
def model_file():
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        pytest.skip("xllamacpp is not installed: pip install -e '.[llm]'")
    from pragmeter.llm.packaged import packaged_model_path

    try:
        return packaged_model_path(MODEL)
    except PragmeterError as error:
        pytest.skip(str(error))


def server_children(model_file) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            command = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"pragmeter.llm.gguf_server" in command and str(model_file).encode() in command:
            found.append(entry)
    return found


@pytest.fixture(scope="module")
def runs(model_file, tmp_path_factory):
    """Two evaluations sharing one cache: INLI by log-probability with DRInQ generated, then the other way."""
    root = tmp_path_factory.mktemp("real-llm")
    before = set(server_children(model_file))
    for name, inli_mode, drinq_mode in (("a", "logprob", "generate"), ("b", "generate", "logprob")):
        code = main(["eval", "--tasks", "inli,drinq_vanilla", "--model", f"gguf:{MODEL}", "--model-args", MODEL_ARGS,
                     "--task-arg", f"inli.mode={inli_mode}", "--task-arg", f"drinq_vanilla.mode={drinq_mode}",
                     "--task-arg", "inli.shots=0", "--task-arg", "drinq_vanilla.shots=0", "--limit", "2", "--log-samples", "--no-progress",
                     "--response-cache", str(root / "responses.jsonl"), "--output", str(root / name)])
        assert code == 0
    assert set(server_children(model_file)) <= before  # every server the runs started is gone
    return root


def test_both_modes_answer_and_record_model_and_mode(runs):
    for name, modes in (("a", {"inli": "logprob", "drinq_vanilla": "generate"}),
                        ("b", {"inli": "generate", "drinq_vanilla": "logprob"})):
        payload = json.loads((runs / name / "results.json").read_text())
        assert payload["model"]["backend"] == "gguf" and payload["model"]["model"] == MODEL
        assert payload["model"]["sha256"].startswith("cc324af0")
        for task, mode in modes.items():
            result = payload["results"][task]
            assert result["mode"] == mode and f"mode={mode}" in result["signature"]
            assert result["errors"] == 0 and result["n_items"] == 2
            if mode == "logprob":
                assert result["invalid"] == 0  # the answer options are found among the top alternatives
                rows = [json.loads(line) for line in (runs / name / f"samples_{task}.jsonl").read_text().splitlines()]
                assert all(row["parsed"] in row["option_logprobs"] for row in rows)
                assert all(max(v for v in row["option_logprobs"].values() if v is not None) <= 0 for row in rows)


def test_the_results_load_in_the_report(runs):
    assert main(["analyze", "report", "--input", str(runs), "--no-stratify", "--output", str(runs / "report")]) == 0
    page = (runs / "report" / f"{MODEL}.html").read_text()
    assert "inli" in page and "drinq_vanilla" in page and "logprob" in page and "generate" in page
