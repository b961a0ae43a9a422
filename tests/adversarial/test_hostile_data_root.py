"""``pragmeter data fetch`` into a data root someone else can write to, from a server that misbehaves: a planted link
or FIFO is refused in one line and never written through, a download never grows past its pinned size or its
deadline, a resume answered for other bytes is refused, a gzip-encoded answer is decoded, a manifest path cannot
leave the root, and two runs never fill one root at once. Files and manifest are the test's own, served on
127.0.0.1."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from pragmeter.cli import main
from pragmeter.data import check as check_module
from pragmeter.data import fetch as fetch_module
from pragmeter.data import root as root_module
from pragmeter.data.fetch import FAILED, FETCHED, fetch_data
from pragmeter.data.root import check_paths, inside_root
from pragmeter.errors import DataError
from pragmeter.io import OutputBusy, output_lock
from pragmeter.io.nofollow import PlantedFile
from pragmeter.testing.fake_upstream import FakeUpstream

README = "toy/README.md"
TABLE = "toy/sub/table.tsv"
FILES = {README: b"a toy data set\n" * 30, TABLE: bytes(range(256)) * 40}
VICTIM = b"someone else's file\n"


@pytest.fixture
def upstream(monkeypatch):
    """The toy files served on 127.0.0.1, and a manifest of them (the only data set: ``toy``)."""
    with FakeUpstream(FILES) as server:
        pinned = {relative: {"sha256": hashlib.sha256(body).hexdigest(), "size": len(body),
                             "url": server.url + relative, "licence": "CC0", "source": "toy/toy@" + "0" * 40}
                  for relative, body in FILES.items()}
        for module in (root_module, check_module, fetch_module):
            monkeypatch.setattr(module, "manifest", lambda: pinned)
        yield server


def fetch(root: Path, capsys) -> tuple[int, str, str]:
    code = main(["data", "fetch", "--only", "toy", "--data-root", str(root), "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def outcome(root: Path, relative: str):
    _, outcomes = fetch_data(root, ["toy"], progress=False)
    return next(item for item in outcomes if item.relative == relative)


# ---------------------------------------------------------------- a planted link or FIFO in the data root


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_bytes(VICTIM)
    return path


@pytest.mark.parametrize("planted_at", [README + ".part", README, TABLE + ".part"])
def test_a_link_planted_in_the_data_root_is_refused_in_one_line_and_never_written_through(
        upstream, tmp_path, victim, capsys, planted_at):
    root = tmp_path / "data"
    (root / planted_at).parent.mkdir(parents=True)
    (root / planted_at).symlink_to(victim)
    upstream.modes[README] = "cut"  # a resume would append to what the link points at
    code, out, err = fetch(root, capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"pragmeter data: error: {root.resolve() / planted_at}: a symbolic link in "
                                        "the data root; nothing is written through it (remove it, or use another "
                                        "data root)"]
    assert victim.read_bytes() == VICTIM and (root / planted_at).is_symlink()
    assert upstream.requests == []  # refused before anything is downloaded


def test_a_data_set_folder_that_is_a_link_is_refused(upstream, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "README.md").write_bytes(VICTIM)
    root = tmp_path / "data"
    root.mkdir()
    (root / "toy").symlink_to(elsewhere, target_is_directory=True)
    code, _, err = fetch(root, capsys)
    assert code == 2 and f"{root.resolve() / 'toy'}: a symbolic link in the data root" in err
    assert sorted(p.name for p in elsewhere.iterdir()) == ["README.md"]
    assert (elsewhere / "README.md").read_bytes() == VICTIM


def test_a_folder_link_deeper_in_a_data_set_is_refused(upstream, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "data"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "sub").symlink_to(elsewhere, target_is_directory=True)
    code, _, err = fetch(root, capsys)
    assert code == 2 and f"{root.resolve() / 'toy' / 'sub'}: a symbolic link in the data root" in err
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_in_the_data_root_is_refused_without_hanging(upstream, tmp_path, capsys):
    root = tmp_path / "data"
    (root / "toy").mkdir(parents=True)
    os.mkfifo(root / README)
    code, _, err = fetch(root, capsys)
    assert code == 2 and f"{root.resolve() / README}: not a regular file in the data root" in err


def test_a_part_file_with_a_second_name_is_not_appended_to(upstream, tmp_path, victim):
    root = tmp_path / "data"
    (root / "toy").mkdir(parents=True)
    os.link(victim, root / (README + ".part"))  # a hard link: the same file under the .part's name
    with pytest.raises(PlantedFile, match=r"README\.md\.part: a file with 2 hard links; nothing is written"):
        fetch_data(root, ["toy"], progress=False)
    assert victim.read_bytes() == VICTIM


def test_a_link_swapped_in_after_the_check_is_not_followed(upstream, tmp_path, victim, monkeypatch):
    """A link that appears between the scan of the root and the download is met by O_NOFOLLOW."""
    root = tmp_path / "data"
    scan = fetch_module.scan_root

    def scan_then_plant(base, names):
        scan(base, names)
        (root / "toy").mkdir(parents=True, exist_ok=True)
        (root / (README + ".part")).symlink_to(victim)

    monkeypatch.setattr(fetch_module, "scan_root", scan_then_plant)
    with pytest.raises(PlantedFile, match=r"README\.md\.part: a symbolic link; nothing is written through it"):
        fetch_data(root, ["toy"], progress=False)
    assert victim.read_bytes() == VICTIM


# ---------------------------------------------------------------- bounded downloads


def test_a_download_stops_one_byte_past_its_pinned_size(upstream, tmp_path):
    upstream.modes[TABLE] = "endless"
    root = tmp_path / "data"
    started = time.monotonic()
    result = outcome(root, TABLE)
    assert time.monotonic() - started < 8  # not the server's 10 s of bytes
    size = len(FILES[TABLE])
    assert result.status == FAILED and result.reason == (f"{upstream.url}{TABLE} sent more than the pinned {size} "
                                                          f"bytes (stopped at {size + 1}); not kept")
    assert not (root / TABLE).exists() and not (root / (TABLE + ".part")).exists()


def test_a_resumed_download_stops_one_byte_past_its_pinned_size(upstream, tmp_path):
    upstream.modes[TABLE] = "cut"
    root = tmp_path / "data"
    assert outcome(root, TABLE).status == FAILED
    upstream.modes[TABLE] = "endless"
    size = len(FILES[TABLE])
    result = outcome(root, TABLE)
    assert upstream.requests[-1] == (TABLE, f"bytes={size // 2}-")
    assert result.status == FAILED and result.reason == (f"{upstream.url}{TABLE} sent more than the pinned {size} "
                                                          f"bytes (stopped at {size + 1}); not kept")
    assert not (root / TABLE).exists() and not (root / (TABLE + ".part")).exists()


def test_an_answer_announcing_more_than_the_pin_is_not_read(upstream, tmp_path):
    upstream.modes[README] = "long"
    result = outcome(tmp_path / "data", README)
    assert result.status == FAILED and result.reason.startswith(
        f"{upstream.url}{README} announced {len(FILES[README]) + 10_000} bytes where the manifest pins "
        f"{len(FILES[README])}")
    assert not (tmp_path / "data" / (README + ".part")).exists()


def test_a_download_past_its_deadline_stops_and_keeps_what_came_for_a_resume(upstream, tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_module, "DEADLINE", 0.5)
    upstream.modes[README] = "drip"
    root = tmp_path / "data"
    started = time.monotonic()
    result = outcome(root, README)
    assert time.monotonic() - started < 5
    assert result.status == FAILED and "took more than 0.5 s" in result.reason
    assert result.reason.endswith("run again to resume")
    kept = (root / (README + ".part")).read_bytes()
    assert 0 < len(kept) < len(FILES[README]) and FILES[README].startswith(kept)

    del upstream.modes[README]
    assert outcome(root, README).status == FETCHED  # resumed from what came
    assert (root / README).read_bytes() == FILES[README]
    assert upstream.requests[-1] == (README, f"bytes={len(kept)}-")


def test_a_resume_answered_with_a_lying_content_range_is_refused(upstream, tmp_path):
    upstream.modes[README] = "cut"
    root = tmp_path / "data"
    assert outcome(root, README).status == FAILED
    half = len(FILES[README]) // 2
    upstream.modes[README] = "lying range"
    result = outcome(root, README)
    size = len(FILES[README])
    assert result.status == FAILED and result.reason == (
        f"{upstream.url}{README} answered the request for bytes {half}- of {size} with Content-Range "
        f"'bytes 0-{size - 1}/{size}'; not kept")
    assert not (root / (README + ".part")).exists() and not (root / README).exists()

    del upstream.modes[README]
    assert outcome(root, README).status == FETCHED and (root / README).read_bytes() == FILES[README]


def test_a_gzip_encoded_answer_is_decoded(upstream, tmp_path):
    upstream.modes[TABLE] = "gzip"
    root = tmp_path / "data"
    assert outcome(root, TABLE).status == FETCHED
    assert (root / TABLE).read_bytes() == FILES[TABLE]


def test_a_resume_or_an_encoding_not_asked_for_is_refused(upstream, tmp_path):
    upstream.modes[README] = "cut"
    root = tmp_path / "data"
    assert outcome(root, README).status == FAILED
    upstream.modes[README] = "gzip"  # a ranged answer, encoded: its bytes are not the file's
    result = outcome(root, README)
    assert result.status == FAILED and "Content-Encoding 'gzip', which was not asked for" in result.reason
    assert not (root / (README + ".part")).exists() and not (root / README).exists()
    upstream.modes[TABLE] = "br"
    other = tmp_path / "other"
    result = outcome(other, TABLE)
    assert result.status == FAILED and "Content-Encoding 'br', which was not asked for" in result.reason
    assert not (other / (TABLE + ".part")).exists() and not (other / TABLE).exists()


# ---------------------------------------------------------------- manifest paths


@pytest.mark.parametrize("bad", ["toy/../../escape.txt", "/tmp/escape.txt", "toy//a.txt", "toy/./a.txt",
                                 "toy\\..\\a.txt", "", "C:/a.txt", "toy/a\x00.txt"])
def test_a_manifest_path_outside_the_root_is_refused(bad):
    assert not inside_root(bad)
    with pytest.raises(DataError, match="not a path inside the data root"):
        check_paths({bad: {"size": 1}}, "manifest.json")
    with pytest.raises(DataError, match="not a path inside the data root"):  # nor a file one is prepared from
        check_paths({"toy/made.json": {"from": [bad]}}, "manifest.json")


def test_fetch_refuses_a_manifest_that_names_a_path_outside_the_root(upstream, tmp_path, monkeypatch, capsys):
    escape = "toy/../../escape.txt"
    upstream.files[escape] = FILES[README]
    pinned = {**fetch_module.manifest(), escape: {**fetch_module.manifest()[README], "url": upstream.url + escape}}
    for module in (root_module, check_module, fetch_module):
        monkeypatch.setattr(module, "manifest", lambda: pinned)
    root = tmp_path / "deep" / "data"
    code, _, err = fetch(root, capsys)
    assert code == 2 and f"entry {escape!r} names {escape!r}, not a path inside the data root" in err
    assert not (tmp_path / "escape.txt").exists() and upstream.requests == []


def test_the_packaged_manifest_keeps_every_path_inside_the_root():
    root_module.manifest.cache_clear()
    assert all(inside_root(relative) for relative in root_module.manifest())


# ---------------------------------------------------------------- one run per data root


def test_a_second_fetch_into_a_root_being_filled_is_refused(upstream, tmp_path, capsys):
    root = tmp_path / "data"
    root.mkdir()
    with output_lock(root.resolve()):
        code, out, err = fetch(root, capsys)
        assert code == 2 and out == "" and f"{root.resolve()} is being written by another pragmeter run (pid " in err
        with pytest.raises(OutputBusy):
            fetch_data(root, ["toy"], progress=False)
    assert upstream.requests == [] and not (root / "toy").exists()
    assert fetch(root, capsys)[0] == 0  # once the other run ends


def test_two_fetches_at_once_leave_whole_files(upstream, tmp_path, monkeypatch):
    """Started together against a slow server, one run fills the root and the other refuses: no file is written
    by both (a run that lost the race reports OutputBusy, never a file of the wrong size)."""
    upstream.modes[README] = "drip"
    monkeypatch.setattr(fetch_module, "DEADLINE", 1.0)
    root = tmp_path / "data"
    results: list[object] = []

    def run() -> None:
        try:
            results.append(fetch_data(root, ["toy"], progress=False))
        except OutputBusy as busy:
            results.append(busy)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(type(result).__name__ for result in results) == ["OutputBusy", "tuple"]
    assert not (root / README).exists() or (root / README).read_bytes() == FILES[README]


def test_a_fetch_that_finds_the_root_busy_leaves_the_root_it_made_to_the_run_holding_it(upstream, tmp_path):
    """The run that lost the race must not remove the (still empty) root it made: the run holding the lock is
    about to write into it."""
    from pragmeter.io.lock import output_lock

    root = tmp_path / "data"
    with output_lock(root):  # another run holds the root before it exists
        with pytest.raises(OutputBusy):
            fetch_data(root, ["toy"], progress=False)
        assert root.is_dir()
