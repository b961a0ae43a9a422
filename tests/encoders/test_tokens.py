"""Token ids: the same from many threads at once (no tokenizer state switched per call), and bounded in time and
memory for a text of any length, with the tokens the encoder keeps unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
ROUNDS = 40


def _ids(model, texts: list[str]) -> list[list[int]]:
    """Token ids as the model's encoder feeds them to the network (truncated to its limit)."""
    encoder = model.encoder
    if hasattr(encoder, "token_ids"):  # the graph encoders
        return encoder.token_ids(texts)
    mask = encoder.tokenize(texts)["attention_mask"].numpy()  # sentence-transformers' own call
    return [[0] * int(row.sum()) for row in mask]


@pytest.mark.parametrize("backend", ["openvino", "onnx", "torch"])
def test_threads_tokenizing_at_once_never_get_rows_over_the_limit(backend):
    """Counting the texts over the limit switched truncation off on the tokenizer that another thread was about to
    truncate with: three threads at once got rows longer than the limit (silently other scores for texts of 256-512
    tokens, an index error beyond)."""
    from pragmeter.encoders import tokens_over_limit
    from pragmeter.impscore.model import ImpScore

    model = ImpScore.load(backend=backend)
    limit = model.encoder.max_seq_length
    texts = [f"{i} " + "word " * (limit + 40 + 7 * i) for i in range(24)]  # every one over the limit
    start = threading.Barrier(3)
    longest, counts, errors = [], [], []

    def truncate() -> None:
        start.wait()
        for _ in range(ROUNDS):
            longest.append(max(len(row) for row in _ids(model, texts)))

    def count() -> None:
        start.wait()
        for _ in range(ROUNDS):
            counts.append(tokens_over_limit(model.encoder, texts))

    def guarded(work):
        def run() -> None:
            try:
                work()
            except Exception as error:  # noqa: BLE001 (reported by the assertion below)
                errors.append(repr(error))
        return run

    threads = [threading.Thread(target=guarded(work)) for work in (truncate, truncate, count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(longest) == 2 * ROUNDS and max(longest) == limit  # never a row longer than the limit
    assert counts == [len(texts)] * ROUNDS  # and each text counted as truncated, every time


@pytest.mark.parametrize("backend", ["openvino", "torch"])
def test_a_huge_text_is_cut_before_tokenizing_with_the_score_of_its_start(backend):
    """One 50 MB line took 89 s and 7 GB, all to keep its first 256 tokens. A 40 MB text now costs what its start
    costs: the scoring process stays far below the memory of tokenizing it whole, and the score is the start's."""
    code = ("import resource, sys\n"
            "from pragmeter.impscore.model import ImpScore\n"
            f"model = ImpScore.load(backend={backend!r})\n"
            "start = 'It is a bit cold in here, would you mind closing the window? ' * 200\n"
            "huge = start + 'and the rest of a very long story ' * 1_200_000\n"
            "model.score([start])  # everything a first use loads or builds, before the peak is read\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "scores = model.score([huge, start])\n"
            "print(scores[0], scores[1], model.truncated, before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    huge, start, truncated, before_kib, peak_kib = run.stdout.split()
    assert float(huge) == pytest.approx(float(start), abs=1e-6) and int(truncated) == 3
    # KiB the huge text added to the process's peak: tokenizing the 40 MB whole took several GB
    assert int(peak_kib) - int(before_kib) < 1_000_000


def test_a_cut_keeps_the_tokens_of_a_text_padded_with_spaces():
    """A long run of spaces has few tokens per character: the cut grows until the start of the text holds the
    tokens that truncation keeps."""
    from tokenizers import Tokenizer

    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.tokens import CHARS_PER_TOKEN, FastTokenizer

    tokenizer = FastTokenizer.from_folder("all-MiniLM-L6-v2")
    limit = tokenizer.max_seq_length
    reference = Tokenizer.from_file(str(Path(require_encoder("all-MiniLM-L6-v2")) / "tokenizer.json"))
    reference.no_padding()
    reference.enable_truncation(limit)
    texts = ["hello" + " " * (limit * CHARS_PER_TOKEN * 5) + "world " * (limit * 3),  # the words lie past the cut
             "word " * (limit * CHARS_PER_TOKEN),  # cut at the first step
             "short text"]
    ids, truncated = tokenizer.tokenize(texts)
    assert ids == [encoding.ids for encoding in reference.encode_batch(texts)]
    assert truncated == [True, True, False]
    assert np.array(ids[0]).size == limit and "world" in tokenizer._whole.decode(ids[0])


def test_a_graph_encoder_tokenizes_each_text_once_per_encode(monkeypatch):
    """The count of truncated texts and the ids came from two tokenizations of every text."""
    from pragmeter.impscore.model import ImpScore

    model = ImpScore.load(backend="openvino")
    tokenizer, seen = model.encoder.tokenizer, []

    def tokenize(texts):
        seen.extend(texts)
        return type(tokenizer).tokenize(tokenizer, texts)

    monkeypatch.setattr(tokenizer, "tokenize", tokenize)
    texts = ["It is cold in here.", "word " * 400, "It is cold in here."]
    model.score(texts)
    assert sorted(seen) == sorted(set(texts)) and model.truncated == 1  # each distinct text once, and counted


def test_an_encoder_without_the_fast_tokenizer_files_tokenizes_the_same_through_transformers():
    """Encoders the folder's tokenizer.json does not cover go through transformers' tokenizer: the same ids, the
    same truncation count, and huge texts cut the same way."""
    from pragmeter.encoders import load_encoder
    from pragmeter.encoders.tokens import FastTokenizer, TransformersTokenizer

    st = load_encoder("all-MiniLM-L6-v2", "cpu")
    fast = FastTokenizer.from_folder("all-MiniLM-L6-v2")
    slow = TransformersTokenizer(st.tokenizer, st.max_seq_length, st.get_embedding_dimension())
    texts = ["It is cold in here.", "word " * 300, "spaces" + " " * 50_000 + "then words " * 2_000, "é ü 漢字"]
    assert slow.tokenize(texts) == fast.tokenize(texts)
    assert slow.tokenize(texts)[1] == [False, True, True, False]
    before = st.tokenizer.backend_tokenizer.truncation
    assert slow.count("word " * 300) == 302  # untruncated, on a copy:
    assert st.tokenizer.backend_tokenizer.truncation == before  # the shared tokenizer is left as it was
