"""The one way pragmeter writes a file or a folder (pragmeter.io.atomic): flushed to disk before it replaces the old
one, staged under a name no other writer uses, and a damaged one set aside under a name of its own."""

from __future__ import annotations

import os

import pytest

from pragmeter.io.atomic import atomic_path, build_folder, replace_folder, set_aside, staged_folder


def test_a_file_is_flushed_to_disk_before_it_replaces_the_target_and_its_folder_after(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old")
    synced, real_fsync = [], os.fsync

    def fsync(fd):
        synced.append((os.fstat(fd).st_ino, target.read_text()))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with atomic_path(target) as tmp:
        tmp.write_text("new")
        written = tmp.stat().st_ino
    # the new file's data before the rename (the target still read "old"), the folder's entry after it
    assert synced == [(written, "old"), (tmp_path.stat().st_ino, "new")]
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["out.json"]


def test_a_folder_is_flushed_file_by_file_before_it_appears(tmp_path, monkeypatch):
    synced, real_fsync = [], os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.fstat(fd).st_ino) or real_fsync(fd))
    folder = replace_folder(tmp_path / "model", lambda staging: (staging / "weights.bin").write_bytes(b"w"))
    assert (folder / "weights.bin").stat().st_ino in synced and folder.stat().st_ino in synced


def test_two_writers_of_one_folder_stage_apart_and_the_last_one_wins(tmp_path):
    """A second writer that starts while the first is still writing must not touch the first one's staging folder
    (with one fixed staging name it was removed under the first writer, which then failed)."""
    folder = tmp_path / "model"

    def first(staging):
        (staging / "part-1").write_text("first")
        replace_folder(folder, lambda inner: (inner / "part-1").write_text("second"))  # starts and ends meanwhile
        (staging / "part-2").write_text("first")

    replace_folder(folder, first)
    assert sorted(p.name for p in folder.iterdir()) == ["part-1", "part-2"]
    assert {p.read_text() for p in folder.iterdir()} == {"first"}
    assert os.listdir(tmp_path) == ["model"]  # no staging or old folder left behind


def test_a_folder_whose_writer_fails_keeps_the_old_one_and_leaves_nothing(tmp_path):
    folder = replace_folder(tmp_path / "model", lambda staging: (staging / "a").write_text("old"))

    def fail(staging):
        (staging / "a").write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with staged_folder(folder) as staging:
            fail(staging)
    assert (folder / "a").read_text() == "old" and os.listdir(tmp_path) == ["model"]


def test_a_folder_already_ready_is_not_built_again(tmp_path):
    folder, built = tmp_path / "cache", []

    def write(staging):
        built.append(1)
        (staging / "done").write_text("x")

    def ready(path):
        return (path / "done").is_file()

    assert build_folder(folder, write, ready) == folder and build_folder(folder, write, ready) == folder
    assert built == [1]
    (folder / "done").unlink()  # damaged: not ready, so built again in its place
    build_folder(folder, write, ready)
    assert built == [1, 1] and ready(folder)


def test_set_aside_uses_a_new_name_each_time(tmp_path):
    names = set()
    for _ in range(3):  # several in one second: each kept, none replacing another
        (tmp_path / "cache.db").write_text("damaged")
        names.add(set_aside(tmp_path / "cache.db").name)
    assert len(names) == 3 and all(name.startswith("cache.db.corrupt-") for name in names)
    assert set_aside(tmp_path / "cache.db") is None  # gone already (another process set it aside first)
    (tmp_path / "folder").mkdir()
    assert set_aside(tmp_path / "folder", remove=True) is not None and len(os.listdir(tmp_path)) == 3
