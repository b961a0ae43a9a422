"""``pragmeter data fetch`` against a local HTTP server (127.0.0.1) serving pinned files: downloads are checked,
resumed where they broke off, prepared files are built byte for byte, and ``data check`` then passes."""

from __future__ import annotations

import errno
import hashlib
import json
import os

import pytest

from pragmeter.cli import main
from pragmeter.data import check as check_module
from pragmeter.data import fetch as fetch_module
from pragmeter.data import root as root_module
from pragmeter.data.fetch import BUILT, FAILED, FETCHED, fetch_data
from pragmeter.data.root import manifest
from pragmeter.datasets.floyd import BATTERY, build_battery
from pragmeter.errors import DataError
from pragmeter.testing.fake_upstream import FakeUpstream

SETS = ("r3_sarcasm", "floyd_dev")
FILES = sorted(relative for relative in manifest() if relative.split("/", 1)[0] in SETS)
DOWNLOADED = [relative for relative in FILES if "from" not in manifest()[relative]]


@pytest.fixture
def upstream(data_root, monkeypatch):
    """The pinned files of r3_sarcasm and floyd_dev's raw files, served on 127.0.0.1; the manifest's URLs point
    there (the prepared battery is not served: it has no URL)."""
    with FakeUpstream({relative: (data_root / relative).read_bytes() for relative in DOWNLOADED}) as server:
        pinned = {relative: ({**entry, "url": server.url + relative} if relative in DOWNLOADED else entry)
                  for relative, entry in manifest().items()}
        for module in (root_module, check_module, fetch_module):
            monkeypatch.setattr(module, "manifest", lambda: pinned)
        yield server


def test_every_file_is_fetched_checked_and_the_battery_built_then_check_passes(upstream, tmp_path, capsys):
    root = tmp_path / "data"
    assert main(["data", "fetch", "--only", *SETS, "--data-root", str(root), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    lines = [line.split("\t") for line in out.splitlines()]
    assert [line[:2] for line in lines[:len(FILES)]] == [[BUILT if f == BATTERY else FETCHED, f] for f in FILES]
    assert lines[len(FILES):] == [  # the licence each data set carries, from the manifest, with where it comes from
        ["licence", "floyd_dev", manifest()[BATTERY]["licence"],
         "github.com/jennhu/lm-pragmatics@9fd4be5c0e43"],
        ["licence", "r3_sarcasm", "none stated", "github.com/tuhinjubcse/SarcasmGeneration-ACL2020@8fbdac8e51eb"]]
    assert f"{len(FILES)} files under {root.resolve()}: 1 built, {len(FILES) - 1} fetched" in err
    assert hashlib.sha256((root / BATTERY).read_bytes()).hexdigest() == manifest()[BATTERY]["sha256"]
    assert not list(root.rglob("*.part"))
    assert main(["data", "check", *SETS, "--data-root", str(root)]) == 0
    capsys.readouterr()

    asked = len(upstream.requests)
    assert main(["data", "fetch", "--only", *SETS, "--data-root", str(root), "--no-progress"]) == 0
    assert len(upstream.requests) == asked  # all in place: nothing downloaded again
    assert all(line.startswith("ok\t") for line in capsys.readouterr().out.splitlines()[:len(FILES)])


def test_a_file_that_differs_from_its_pin_is_refused_and_not_kept(upstream, tmp_path, capsys):
    bad = "r3_sarcasm/data/human-sarcasm.txt"
    upstream.files[bad] = upstream.files[bad].replace(b"a", b"e", 1)  # same size, other content
    root = tmp_path / "data"
    assert main(["data", "fetch", "--only", "r3_sarcasm", "--data-root", str(root), "--no-progress"]) == 2
    out, err = capsys.readouterr()
    refused = [line for line in out.splitlines() if line.startswith(FAILED)]
    assert refused == [f"{FAILED}\t{bad}\tchecksum mismatch: {upstream.url}{bad} gave {manifest()[bad]['size']} bytes "
                       f"with sha256 {hashlib.sha256(upstream.files[bad]).hexdigest()[:12]}…, the manifest pins "
                       f"{manifest()[bad]['size']} bytes with sha256 {manifest()[bad]['sha256'][:12]}…; not kept"]
    assert not (root / bad).exists() and not list(root.rglob("*.part"))
    assert "run the same command again to resume the 1 failed" in err
    others = [f for f in FILES if f.startswith("r3_sarcasm/") and f != bad]
    assert all((root / f).is_file() for f in others)


def test_an_interrupted_download_resumes_where_it_stopped(upstream, tmp_path):
    broken = "floyd_dev/raw/MetaphorOptions.txt"
    upstream.modes[broken] = "cut"
    root = tmp_path / "data"
    _, first = fetch_data(root, ["floyd_dev"], progress=False)  # the battery's builder found by the library itself
    status = {item.relative: item for item in first}
    half = len(upstream.files[broken]) // 2
    assert status[broken].status == FAILED and status[broken].reason.endswith(
        f"stopped after {half} of {len(upstream.files[broken])} bytes; run again to resume")
    assert status[BATTERY].status == FAILED and broken in status[BATTERY].reason  # not built from a missing file
    assert (root / (broken + ".part")).stat().st_size == half and not (root / broken).exists()

    upstream.requests.clear()
    _, second = fetch_data(root, ["floyd_dev"], progress=False)
    assert upstream.requests == [(broken, f"bytes={half}-")]  # only the rest of the broken file
    floyd = [f for f in FILES if f.startswith("floyd_dev/")]
    assert {item.relative: item.status for item in second} == {**{f: "ok" for f in floyd}, broken: FETCHED,
                                                               BATTERY: BUILT}
    assert (root / broken).read_bytes() == upstream.files[broken]


def test_the_battery_is_built_byte_for_byte_and_a_malformed_raw_file_is_named(data_root, tmp_path, monkeypatch):
    assert hashlib.sha256(build_battery(data_root)).hexdigest() == manifest()[BATTERY]["sha256"]
    battery = json.loads(build_battery(data_root))
    assert len(battery["items"]) == 40 and battery["items"][0]["utterance"] == "This town is a chimney."
    copy = tmp_path / "data"
    for relative in manifest()[BATTERY]["from"]:
        (copy / relative).parent.mkdir(parents=True, exist_ok=True)
        (copy / relative).write_bytes((data_root / relative).read_bytes())
    key = copy / "floyd_dev/raw/MaximsKeySimple.txt"
    key.write_bytes(key.read_bytes().replace(b"MV\t3\t", b"MV\tthree\t", 1))
    monkeypatch.setattr(root_module, "verify_file", lambda path, relative: None)  # read as if it were upstream's
    with pytest.raises(DataError, match=r"MaximsKeySimple.txt: line 3, field 'item': expected a number, got 'three'"):
        build_battery(copy)


def test_an_unknown_data_set_is_one_line_naming_the_known_ones(tmp_path, capsys):
    assert main(["data", "fetch", "--only", "nosuchset", "--data-root", str(tmp_path)]) == 2
    assert "unknown data set(s) nosuchset; known: absa_implicit" in capsys.readouterr().err


def test_a_prepared_file_that_differs_from_its_pin_is_not_kept(upstream, tmp_path):
    root = tmp_path / "data"
    _, outcomes = fetch_data(root, ["floyd_dev"], builders={BATTERY: lambda base: build_battery(base) + b"\n"},
                             progress=False)
    battery = next(item for item in outcomes if item.relative == BATTERY)
    assert battery.status == FAILED and battery.reason.startswith(
        f"prepared, it has {manifest()[BATTERY]['size'] + 1} bytes") and battery.reason.endswith("; not kept")
    assert not (root / BATTERY).exists() and all(item.status == FETCHED for item in outcomes if item is not battery)


@pytest.fixture
def offline(monkeypatch):
    """The manifest's URLs point at a port of 127.0.0.1 where nothing listens: every connection is refused, as
    offline."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pinned = {relative: ({**entry, "url": f"http://127.0.0.1:{port}/{relative}"} if relative in DOWNLOADED else entry)
              for relative, entry in manifest().items()}
    for module in (root_module, check_module, fetch_module):
        monkeypatch.setattr(module, "manifest", lambda: pinned)
    return port


def test_offline_the_host_is_named_once_with_the_offline_routes_and_nothing_is_left(offline, tmp_path, monkeypatch,
                                                                                      capsys):
    default = tmp_path / "shared" / "data"
    monkeypatch.setattr(root_module, "candidate_roots", lambda: [default])
    monkeypatch.setattr(fetch_module, "candidate_roots", lambda: [default])
    monkeypatch.delenv("PRAGMETER_DATA", raising=False)
    assert main(["data", "fetch", "--only", *SETS, "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert not (tmp_path / "shared").exists()  # no skeleton of empty folders to pass for a data root
    assert out == ""  # no line per file, and no licence of a data set that is not there
    refused = f"[Errno {errno.ECONNREFUSED}] {os.strerror(errno.ECONNREFUSED)}"
    # one line: nothing was downloaded, nothing to resume, and no summary of a root that was not kept
    assert err.splitlines() == [
        f"pragmeter data fetch: error: 127.0.0.1:{offline} cannot be reached ({refused}), so {len(FILES)} file(s) "
        "were not fetched; offline, use a copy of the data: pass --data-root DIR or set $PRAGMETER_DATA to a folder "
        "that holds it, or copy a data folder to ../shared/data (docs/data.md)"]
    with pytest.raises(DataError, match="no data root found: get the data"):
        getattr(root_module.data_root, "__wrapped__", root_module.data_root)()


def test_offline_a_data_root_keeps_its_files_and_only_the_folders_made_go(offline, tmp_path):
    root = tmp_path / "data"
    (root / "mine").mkdir(parents=True)
    _, outcomes = fetch_data(root, SETS, builders={BATTERY: build_battery}, progress=False)
    assert {item.status for item in outcomes} == {fetch_module.UNREACHABLE}
    assert [path.name for path in root.iterdir()] == ["mine"]  # the folder was there before: it stays


def test_every_prepared_file_has_a_builder_the_library_finds_by_itself():
    """``fetch_data`` prepares each file made from others with the function its table names, without a caller
    passing one: every such manifest file has an entry, and it resolves to the data sets' code."""
    prepared = sorted(relative for relative, entry in manifest().items() if "from" in entry)
    assert prepared == sorted(fetch_module.BUILDERS) and BATTERY in prepared
    assert fetch_module.builder(BATTERY) is build_battery
    assert fetch_module.builder("r3_sarcasm/nothing-prepares-this.csv") is None
