"""The interpreter that ships in the package: the default loads from a checkout (low-rank factors over the installed
base encoder), stays within the repository's size budget, reproduces the validation accuracy its card records on
the pairs it measured, and answers the CLI's question."""

from __future__ import annotations

import json

import pytest

from pragmeter.cli import main
from pragmeter.interpreter.hub import DEFAULT_INTERPRETER, MODELS_DIR, resolve_interpreter
from pragmeter.interpreter.model import Interpreter
from pragmeter.interpreter.shipped import SHARD_BYTES

FOLDER = MODELS_DIR / DEFAULT_INTERPRETER
PROBE = 500  # validation pairs labelled again (all 4,000 take minutes on two cores)
# One packaged interpreter's files: an mpnet encoder's rank-64 factors in fp16 and its head take about 27 MB
PACKAGE_BUDGET = 32 * 2**20


@pytest.fixture(scope="module")
def default():
    return Interpreter.load(device="cpu", precision="fp32", backend="torch")  # as ship() measured it


def test_the_default_ships_in_the_package_within_the_size_budget():
    assert resolve_interpreter(None) == FOLDER
    files = [p for p in FOLDER.iterdir() if p.is_file()]
    assert sum(p.stat().st_size for p in files) < PACKAGE_BUDGET
    assert all(p.stat().st_size < SHARD_BYTES + 65536 for p in files if p.suffix == ".safetensors")
    assert not (FOLDER / "model.safetensors").exists()  # factors over the base, never the whole weights
    card = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in card and "Written by an LLM" in card and "## Test" in card


def test_the_default_reproduces_its_recorded_validation_labels(default, data_root):
    """fp32 on the CPU: the labels the card's run recorded for every INLI validation pair give its recorded accuracy,
    and the shipped model gives those labels again on the first PROBE pairs (a pair at a tie may flip between CPUs,
    whose fp32 sums differ in the last bits: at most two)."""
    from pragmeter.classify.recipes.inli import build

    recorded = json.loads((FOLDER / "metrics.json").read_text(encoding="utf-8"))["val_compressed"]
    val = build("4way", root=data_root).val
    labels, predicted = recorded["labels"], recorded["predicted"]
    assert len(val) == recorded["n"] == len(predicted) and labels == default.labels
    correct = sum(labels[int(digit)] == gold for digit, gold in zip(predicted, val.labels))
    assert correct / len(val) == pytest.approx(recorded["accuracy"], abs=1e-9)
    assert recorded["accuracy"] > 0.5  # four labels: guessing is 0.25
    now = default.classifier.predict(val.texts[:PROBE], val.pairs[:PROBE], batch_size=128)
    assert sum(label != labels[int(digit)] for label, digit in zip(now, predicted)) <= 2


def test_the_cli_answers_with_the_default(capsys):
    assert main(["interpret", "It would keep me awake.", "--context", "Ann offers Bob a coffee late at night.",
                 "--reading", "Bob declines the coffee.", "--reading", "Bob accepts the coffee.",
                 "--precision", "fp32"]) == 0
    out = capsys.readouterr().out
    assert out.count("Bob declines the coffee.") == 1 and "implied" in out
