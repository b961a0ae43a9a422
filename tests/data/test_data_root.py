"""Data root resolution and checksum verification."""

from __future__ import annotations

import shutil

import pytest

from pragmeter.data import root as data_root_module
from pragmeter.data.root import data_file, manifest
from pragmeter.data.root import data_root as resolve_root
from pragmeter.errors import DataError

FILE = "r3_sarcasm/data/human-sarcasm.txt"


def test_manifest_covers_every_shared_file_with_a_pinned_url_and_licence(data_root):
    entries = manifest()
    on_disk = {str(p.relative_to(data_root)) for p in data_root.rglob("*") if p.is_file()} - {"SOURCES.md"}
    assert set(entries) == on_disk
    for relative, entry in entries.items():
        assert len(entry["sha256"]) == 64
        assert entry["licence"]
        if entry["url"].startswith("prepared from"):  # made from other listed files (floyd_dev's battery)
            continue
        assert entry["url"].startswith("https://raw.githubusercontent.com/")
        assert len(entry["url"].split("/")[5]) == 40  # a full commit, not a branch


def test_real_file_verifies(data_root):
    assert data_file(FILE).is_file()


def test_environment_variable_and_argument_override(tmp_path, monkeypatch, data_root):
    copy = tmp_path / "data"
    (copy / "r3_sarcasm/data").mkdir(parents=True)
    shutil.copy(data_root / FILE, copy / FILE)
    monkeypatch.setenv("PRAGMETER_DATA", str(copy))
    assert resolve_root() == copy.resolve()
    assert data_file(FILE) == copy.resolve() / FILE
    assert resolve_root(str(data_root)) == data_root


def test_corrupted_file_is_rejected_with_its_url(tmp_path, data_root, monkeypatch):
    copy = tmp_path / "data"
    (copy / "r3_sarcasm/data").mkdir(parents=True)
    (copy / FILE).write_bytes((data_root / FILE).read_bytes() + b"tampered\n")
    monkeypatch.setattr(data_root_module, "_verified", set())
    with pytest.raises(DataError, match="checksum mismatch.*raw.githubusercontent.com"):
        data_file(FILE, root=copy)


def test_missing_file_names_the_download_url(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"missing; download it from https://raw.githubusercontent.com/tuhinjubcse"):
        data_file(FILE, root=tmp_path / "empty")


def test_unknown_root_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="is not a folder"):
        resolve_root(tmp_path / "nowhere")


def test_the_data_page_gives_each_data_sets_files_repositories_and_licence_as_the_manifest_does():
    """docs/data.md is the provenance a reader without the data folder has: per data set its file count, upstream
    repositories at their pinned commits and licence, as the manifest (and ``data fetch``) has them."""
    import re
    from collections import defaultdict
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "data.md").read_text(encoding="utf-8")
    rows = {name: (int(count), set(re.findall(r"github\.com/([\w.-]+/[\w.-]+)/tree/([0-9a-f]{40})", links)), licence)
            for name, count, links, licence in re.findall(r"^\| `([a-z0-9_]+)` \| (\d+) \| (.*) \| ([^|]+) \|$", page,
                                                          re.M)}
    expected = defaultdict(lambda: [0, set(), set()])
    for relative, entry in manifest().items():
        row = expected[relative.split("/", 1)[0]]
        row[0] += 1
        row[1].add(tuple(entry["source"].split("@")))
        row[2].add(entry["licence"])
    assert rows == {name: (count, sources, " / ".join(sorted(licences))) for name, (count, sources, licences)
                    in expected.items()}


def test_a_default_folder_of_empty_folders_is_not_a_data_root(tmp_path, monkeypatch):
    """What a fetch that got nothing used to leave: ../shared/data with a folder per data set and no file in any."""
    skeleton = tmp_path / "shared" / "data"
    for relative in manifest():
        (skeleton / relative).parent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(data_root_module, "candidate_roots", lambda: [skeleton])
    monkeypatch.delenv("PRAGMETER_DATA", raising=False)
    resolve = getattr(data_root_module.data_root, "__wrapped__", data_root_module.data_root)
    with pytest.raises(DataError, match=rf"no data root found \({skeleton.resolve()} holds no data file\): get the "
                                        r"data with `pragmeter data fetch`"):
        resolve()
    (skeleton / FILE).write_text("a file of the manifest\n", encoding="utf-8")
    assert resolve() == skeleton.resolve()
