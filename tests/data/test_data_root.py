"""Data root resolution and checksum verification."""

from __future__ import annotations

import os
import shutil

import pytest

from pragmeter.data import root as data_root_module
from pragmeter.data.check import unknown_files
from pragmeter.data.root import data_file, manifest
from pragmeter.data.root import data_root as resolve_root
from pragmeter.errors import DataError

FILE = "r3_sarcasm/data/human-sarcasm.txt"


def coverage_problems(root, ci: bool) -> list[str]:
    """What keeps the data folder and the manifest apart: its files the manifest lacks (only in CI, where the data
    folder is the project's; a user's data root may hold files of their own) and the manifest's files it lacks."""
    fix = ("add it to SOURCES.md and run `python tools/make_data_manifest.py ../shared/data/SOURCES.md` "
           "(docs/data.md, 'Adding a data file')")
    missing = [f"{relative}: in the manifest, not in the data root {root} (`pragmeter data fetch`)"
               for relative, entry in sorted(manifest().items()) if not (root / relative).is_file()]
    unknown = [f"{relative}: in the data root, not in the manifest; {fix}" for relative in unknown_files(root)] if ci \
        else []
    return missing + unknown


def test_manifest_covers_every_shared_file_with_a_pinned_url_and_licence(data_root):
    entries = manifest()
    problems = coverage_problems(data_root, ci=bool(os.environ.get("CI")))
    assert not problems, "\n".join(problems)
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


def test_an_extra_file_in_a_users_data_root_fails_only_in_ci_and_the_failure_names_the_fix(tmp_path, data_root):
    root = tmp_path / "data"
    for relative in manifest():  # the data root as links to the real files, with one more of the user's
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).symlink_to(data_root / relative)
    (root / "r3_sarcasm" / "my-notes.txt").write_text("mine\n", encoding="utf-8")
    assert coverage_problems(root, ci=False) == []
    assert coverage_problems(root, ci=True) == [
        "r3_sarcasm/my-notes.txt: in the data root, not in the manifest; add it to SOURCES.md and run `python "
        "tools/make_data_manifest.py ../shared/data/SOURCES.md` (docs/data.md, 'Adding a data file')"]
    (root / FILE).unlink()
    assert coverage_problems(root, ci=False) == [
        f"{FILE}: in the manifest, not in the data root {root} (`pragmeter data fetch`)"]
