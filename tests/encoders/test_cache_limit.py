"""The folders built from a model's content (unpacked fine-tuned encoders, ONNX and OpenVINO graphs) are kept within
``$PRAGMETER_CACHE_LIMIT_GB``, the least recently used removed first (pragmeter.encoders.paths)."""

from __future__ import annotations

import os
import time

import pytest
import torch

from pragmeter.encoders.paths import UNUSED_FOR_S, built_folders, cache_limit_bytes, prune_built
from pragmeter.errors import PragmeterError


def built(root, area: str, name: str, size: int, used_ago: float):
    folder = root / area / name
    folder.mkdir(parents=True)
    (folder / "weights.bin").write_bytes(b"\0" * size)
    when = time.time() - used_ago
    os.utime(folder, (when, when))
    return folder


def test_the_least_recently_used_folders_go_first_until_the_areas_are_within_the_limit(own_cache, monkeypatch):
    cache = own_cache
    hour = UNUSED_FOR_S
    oldest = built(cache, "openvino/classifiers", "old-1", 600, 5 * hour)
    older = built(cache, "encoders/finetuned", "old-2", 600, 4 * hour)
    old = built(cache, "onnx", "old-3", 600, 3 * hour)
    recent = built(cache, "openvino", "recent", 600, 10)  # used a moment ago: another process may be reading it
    keep = built(cache, "openvino/classifiers", "just-built", 600, 6 * hour)
    (cache / "embeddings").mkdir()
    (cache / "embeddings" / "cache.sqlite").write_bytes(b"\0" * 5000)  # not a built folder: never counted or pruned
    assert set(built_folders()) == {oldest, older, old, recent, keep}  # openvino/classifiers is an area, not a folder
    monkeypatch.setenv("PRAGMETER_CACHE_LIMIT_GB", str(1900 / 1e9))  # 3,000 bytes built: two of 600 must go
    assert prune_built(keep=keep) == [oldest, older]
    assert old.is_dir() and recent.is_dir() and keep.is_dir() and (cache / "embeddings" / "cache.sqlite").is_file()
    assert prune_built(keep=keep) == []  # 1,800 bytes left, within the limit
    monkeypatch.setenv("PRAGMETER_CACHE_LIMIT_GB", str(1300 / 1e9))
    assert prune_built(keep=keep) == [old]
    # the folders that must stay are kept even over the limit
    monkeypatch.setenv("PRAGMETER_CACHE_LIMIT_GB", "0.000000001")
    assert prune_built(keep=keep) == [] and recent.is_dir() and keep.is_dir()
    monkeypatch.setenv("PRAGMETER_CACHE_LIMIT_GB", "0")  # no limit
    assert cache_limit_bytes() is None and prune_built() == []


@pytest.mark.parametrize("value", ["ten", "-1", "inf", "nan"])
def test_a_limit_that_is_not_a_size_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("PRAGMETER_CACHE_LIMIT_GB", value)
    with pytest.raises(PragmeterError, match=f"PRAGMETER_CACHE_LIMIT_GB='{value}': give a size in GB"):
        cache_limit_bytes()


def test_building_a_fine_tuned_encoder_prunes_an_unused_one_and_using_a_folder_marks_it(own_cache, monkeypatch,
                                                                                       tmp_path):
    """Through the real path: loading a model folder with trained layers builds its encoder in the cache, which
    removes a folder unused for hours when over the limit; loading it again sets its time."""
    from pragmeter.encoders import load_encoder
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    bert = load_encoder("all-MiniLM-L6-v2", "cpu")[0].auto_model
    layers = {name: tensor.detach().clone() * (0.5 if name.endswith("output.dense.weight") else 1)
              for name, tensor in bert.state_dict().items() if name.startswith("encoder.layer.5.")}
    torch.manual_seed(0)
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", {"name": "tuned"}).save(
        tmp_path / "tuned", encoder_weights=layers, base_encoder="all-MiniLM-L6-v2")
    unused = built(own_cache, "encoders/finetuned", "unused", 1000, 3 * UNUSED_FOR_S)
    monkeypatch.setenv("PRAGMETER_CACHE_LIMIT_GB", "0.001")  # 1 MB: less than the encoder just built
    ImpScore.load(tmp_path / "tuned", backend="torch", device="cpu")
    [made] = [folder for folder in built_folders() if folder.parent.name == "finetuned"]
    assert not unused.exists() and made.name.startswith("all-MiniLM-L6-v2-")
    os.utime(made, (1, 1))
    ImpScore.load(tmp_path / "tuned", backend="torch", device="cpu")
    assert time.time() - made.stat().st_mtime < 60
