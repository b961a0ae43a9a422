"""benchmarks/bench_speed.py: the arithmetic each path does, from the batches it really pads."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_bench(monkeypatch):
    monkeypatch.setitem(sys.modules, "machine", load_script("machine"))  # bench_speed imports its sibling
    return load_script("bench_speed")


def test_work_counts_the_padded_batches_of_each_path(monkeypatch):
    from pragmeter.encoders import load_encoder
    from pragmeter.impscore.model import ImpScore

    bench = load_bench(monkeypatch)
    st = load_encoder("all-MiniLM-L6-v2", "cpu")
    ours = ImpScore.load("impscore-minilm", backend="openvino", precision="fp32")
    config = st[0].auto_model.config
    per_token = config.num_hidden_layers * (4 * 384 * 384 + 2 * 384 * 1536)
    # One text: one batch of its own width, the same on both paths.
    one = ["It is cold in here."]
    width = len(st.tokenizer(one)["input_ids"][0])
    official, mine = bench.work_gflop(st, ours, one)
    assert official == mine == 2e-9 * width * (per_token + config.num_hidden_layers * 2 * width * 384)
    # A long text and many short ones with repeats: the official batches of 32 pad the short texts to the long one's
    # width and encode the repeats; ours encodes each distinct text once in batches of similar length.
    texts = ["word " * 200] + [f"short text number {i % 20}" for i in range(40)]
    official, mine = bench.work_gflop(st, ours, texts)
    assert mine < official / 3
