"""A results folder someone else wrote is untrusted input to ``analyze report`` and ``analyze stratify``: names read
from its files never leave ``--output`` (``analyze stratify`` given none writes beside the logs; the report writes
into its own folder only), no value from them runs as script in a page or becomes a link out of the report, only regular files inside
the folder are read, and a file the page writer cannot use is marked on the page instead of ending the report.

The folder is built by the real commands (``eval`` through the fake server on ISHate texts, ``analyze stratify``,
``analyze profile``, ``analyze generation-check`` with the default ImpScore), then tampered with."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from pragmeter.cli import main
from pragmeter.testing.fake_server import FakeChatServer, constant

SCRIPTS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(2)>', "javascript:alert(3)",
           "</title><script>alert(4)</script>", "' onmouseover='alert(5)", "<svg onload=alert(6)>"]
TRAVERSAL = "../../../../../../../../victim"
SENTENCES = "1. Taxes are too high.\n2. Taxes are a burden.\n3. My wallet feels lighter.\n4. Spring is expensive."


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """Two models' harness runs in ``m1/r`` and ``m2/r`` (the same last folder name), each stratified; a generation
    check and a dataset profile: every kind of file the report reads, as the commands write them."""
    root = tmp_path_factory.mktemp("pristine")
    for model, answer in (("m1", "Yes."), ("m2", "no")):
        with FakeChatServer(constant(answer)) as fake:
            assert main(["eval", "--tasks", "hate_detection", "--limit", "6", "--log-samples", "--no-progress",
                         "--model-args", f"base_url={fake.url},model={model}",
                         "--output", str(root / model / "r")]) == 0
        assert main(["analyze", "stratify", "--input", str(root / model / "r"), "--no-cache"]) == 0
    topics = root / "topics.txt"
    topics.write_text("taxes\nspring\n", encoding="utf-8")
    with FakeChatServer(constant(SENTENCES)) as fake:
        assert main(["analyze", "generation-check", "--model-args", f"base_url={fake.url},model=m1", "--runs", "1",
                     "--topics", str(topics), "--no-progress", "--output", str(root / "gen")]) == 0
    table = root / "texts.csv"
    table.write_text("text,label\nIt is cold in here.,a\nShut the window.,b\nNice weather we are having.,a\n"
                     "Some people never learn.,b\n", encoding="utf-8")
    assert main(["analyze", "profile", "--input", str(table), "--label-column", "label", "--compare", "a:b",
                 "--pairs", "5", "--no-cache",
                 "--output", str(root / "prof")]) == 0
    return root


def _copy(pristine: Path, tmp_path: Path) -> Path:
    results = tmp_path / "deep" / "a" / "b" / "c" / "results"
    shutil.copytree(pristine, results, symlinks=True)
    return results


def _poison(value, keys: bool = True, counter: list | None = None):
    """Every string of a JSON value (object keys too, unless not ``keys``) replaced by a script, in turn."""
    counter = counter if counter is not None else [0]

    def script() -> str:
        counter[0] += 1
        return SCRIPTS[counter[0] % len(SCRIPTS)] + f"#{counter[0]}"

    if isinstance(value, str):
        return script()
    if isinstance(value, list):
        return [_poison(item, keys, counter) for item in value]
    if isinstance(value, dict):
        return {(script() if keys else key): _poison(item, keys, counter) for key, item in value.items()}
    return value


def _edit(path: Path, change) -> None:
    payload = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(change(payload)), encoding="utf-8")


def _snapshot(root: Path, *skip: Path) -> dict[str, tuple]:
    """Every file and link under ``root`` (outside ``skip``) with its content hash: what a run must not change."""
    state = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skip):
            continue
        if path.is_symlink():
            state[str(path)] = ("link", os.readlink(path))
        elif path.is_file():
            state[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            state[str(path)] = ("folder",)
    return state


class Page(HTMLParser):
    """What a browser would act on: elements, attributes and link targets (entities decoded, as a browser does)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]

    handle_startendtag = handle_starttag


def check_page(page: Path, allowed: list[Path]) -> None:
    """No live script, no event handler, no link or image out of the report: every href a relative link to a
    regular file inside ``allowed`` folders, every image an embedded PNG."""
    parser = Page()
    text = page.read_text(encoding="utf-8")
    assert not any(ord(c) < 32 and c not in "\t\n\r" for c in text), page  # no control character reaches HTML
    parser.feed(text)
    parser.close()
    live = {"script", "iframe", "object", "embed", "svg", "math", "base", "form", "meta", "link", "frame"}
    assert not live & set(parser.tags) - {"meta"} and parser.tags.count("meta") == 1, (page, parser.tags)
    for tag, name, value in parser.attributes:
        assert not name.startswith("on"), (page, tag, name, value)
        if name in ("href", "src", "action", "formaction", "srcset", "poster", "background"):
            if tag == "img" and name == "src":
                assert value.startswith("data:image/png;base64,"), (page, value[:80])
                continue
            assert name == "href" and tag == "a", (page, tag, name)
            parts = urlsplit(value)
            assert not parts.scheme and not parts.netloc and not value.startswith("/"), (page, value)
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file() and any(folder.resolve() in target.parents for folder in allowed), (page, value)
        if tag == "meta":
            assert (name, value) == ("charset", "utf-8"), (page, name, value)


def _secret(tmp_path: Path) -> bytes:
    """A PNG outside the results folder that no report may read."""
    secret = tmp_path / "private" / "secret.png"
    secret.parent.mkdir()
    data = b"\x89PNG\r\n\x1a\n" + b"private bytes of someone else " * 20
    secret.write_bytes(data)
    return data


def _no_secret_in(output: Path, secret: bytes) -> None:
    encoded = base64.b64encode(secret).decode("ascii")
    for path in output.rglob("*"):
        if path.is_file():
            assert path.read_bytes() != secret, path
            if path.suffix == ".html":
                assert encoded[:60] not in path.read_text(encoding="utf-8"), path


def test_a_task_name_from_a_sample_log_never_leaves_the_output(pristine, tmp_path, private_cache):
    """Issue 47, item 1: ``"task": "../../…/victim"`` in a sample log made ``analyze stratify`` and ``analyze
    report`` replace ``victim.json`` far outside both folders and create ``victim.png`` and
    ``victim_items.parquet`` beside it."""
    results = _copy(pristine, tmp_path)
    for model in ("m1", "m2"):
        for name in ("json", "png"):
            (results / model / "r" / f"stratified_hate_detection.{name}").unlink()
        log = results / model / "r" / "samples_hate_detection.jsonl"
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        log.write_text("".join(json.dumps({**r, "task": TRAVERSAL}) + "\n" for r in records), encoding="utf-8")
    victims = [tmp_path / "victim.json", tmp_path / "deep" / "victim.json", tmp_path / "deep" / "a" / "victim.json"]
    for victim in victims:
        victim.write_text('{"precious": true}\n', encoding="utf-8")
    before = _snapshot(tmp_path, results, private_cache)
    assert main(["analyze", "stratify", "--input", str(results / "m1" / "r"), "--output", str(tmp_path / "out")]) == 0
    assert main(["analyze", "report", "--input", str(results), "--output", str(tmp_path / "report")]) == 0
    after = _snapshot(tmp_path, results, private_cache, tmp_path / "out", tmp_path / "report")
    assert after == before  # nothing outside the results folder and the two outputs was written or replaced
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(written) == 3 and all(p.startswith("stratified_") and "/" not in p for p in written), written
    for model in ("m1", "m2"):  # the report's own stratification: under the report by its run's path, a safe name
        beside = results / model / "r"
        assert not list(beside.glob("stratified_*.json")) and not list(beside.glob("stratified_*.png"))
        assert len(list((tmp_path / "report" / "stratified" / model / "r").glob("stratified_*.json"))) == 1
        assert {p for p in beside.iterdir() if p.is_dir()} == {beside / "cache"}
        check_page(next((tmp_path / "report").glob(f"{model}*.html")), [results, tmp_path / "report"])


def _listing(root: Path, *skip: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (outside ``skip``) with its kind, size, mode and modification time."""
    return {str(path): (stat.S_IFMT(info.st_mode), info.st_size, info.st_mode, info.st_mtime_ns)
            for path in sorted(root.rglob("*")) if not any(path == s or s in path.parents for s in skip)
            for info in [path.lstat()]}


def _unstratify(run: Path) -> None:
    for old in run.glob("stratified_*"):
        old.unlink()


def _stratified_sections(page: Path) -> int:
    return page.read_text(encoding="utf-8").count("<h3>hate_detection")


def test_a_report_on_a_read_only_results_folder_writes_under_its_output_only(pristine, tmp_path, private_cache):
    """Issue 47 acceptance: the report's own stratification of logged samples goes under ``--output``
    (``stratified/<run path>/``), never beside the logs: a results folder that is read-only gets a complete report,
    and not one of its entries (nor the folder's own time) changes."""
    results = _copy(pristine, tmp_path)
    for model in ("m1", "m2"):
        _unstratify(results / model / "r")
    modes = {path: path.lstat().st_mode for path in [results, *results.rglob("*")] if not path.is_symlink()}
    for path, mode in modes.items():
        path.chmod(stat.S_IMODE(mode) & ~0o222)
    before = _listing(results.parent)
    try:
        assert main(["analyze", "report", "--input", str(results), "--output", str(tmp_path / "report")]) == 0
        after = _listing(results.parent)
    finally:
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))
    assert after == before
    for model in ("m1", "m2"):
        own = tmp_path / "report" / "stratified" / model / "r"
        assert sorted(p.name for p in own.iterdir()) == [
            "stratified_hate_detection.json", "stratified_hate_detection.png", "stratified_hate_detection_items.parquet"]
        page = tmp_path / "report" / f"{model}.html"
        text = page.read_text(encoding="utf-8")
        assert _stratified_sections(page) == 1 and 'alt="accuracy by ImpScore bin: hate_detection"' in text
        assert "No stratified results" not in text and "not shown" not in text
        check_page(page, [results, tmp_path / "report"])  # the source link leads to the log in the results folder
        assert 'samples_hate_detection.jsonl</a></p>' in text


def test_the_default_report_folder_shows_each_stratification_once(pristine, tmp_path, private_cache):
    """The default report folder lies inside the results folder: its own stratification is written there (nothing
    beside the logs) and is not read again as results, on a rerun, by a report written elsewhere, or once the log
    is stratified in place too: each stratified section is shown once."""
    results = _copy(pristine, tmp_path)
    _unstratify(results / "m1" / "r")  # m1's log is stratified by the report; m2's was by `analyze stratify`
    report = results / "report"
    before = _listing(results)
    assert main(["analyze", "report", "--input", str(results)]) == 0
    assert _listing(results, report) == before
    assert [p.name for p in (report / "stratified").rglob("*.json")] == ["stratified_hate_detection.json"]
    assert (report / "stratified" / "m1" / "r" / "stratified_hate_detection.json").is_file()
    runs = [["analyze", "report", "--input", str(results), "--overwrite"],
            ["analyze", "report", "--input", str(results), "--output", str(tmp_path / "elsewhere")]]
    for argv in runs:
        assert main(argv) == 0
    for folder in (report, tmp_path / "elsewhere"):
        assert [_stratified_sections(folder / f"{m}.html") for m in ("m1", "m2")] == [1, 1], folder
    assert main(["analyze", "stratify", "--input", str(results / "m1" / "r"), "--no-cache"]) == 0
    assert main(runs[0]) == 0
    assert [_stratified_sections(report / f"{m}.html") for m in ("m1", "m2")] == [1, 1]
    assert (report / "plots" / "m1" / "r" / "stratified_hate_detection.png").is_file()  # the one beside the log


def test_a_hostile_results_folder_gives_a_report_under_the_output_with_no_live_script(pristine, tmp_path, capsys):
    """Issue 47, items 2 and 3: a script in every string of every file the report reads (results, stratified,
    generation check, profile), ``javascript:`` and outside targets for every link, plots that are symlinks to a file
    outside the folder, absolute paths or ``../`` names: the report is written under ``--output`` only, with no live
    script, no link out of it, and no byte of the outside file."""
    results = _copy(pristine, tmp_path)
    secret = _secret(tmp_path)
    outside_plot = str(tmp_path / "private" / "secret.png")
    for model in ("m1", "m2"):
        run = results / model / "r"
        (run / "stratified_hate_detection.png").unlink()
        (run / "stratified_hate_detection.png").symlink_to(outside_plot)
        (run / "link_to_outside.png").symlink_to(outside_plot)
        os.mkfifo(run / "fifo.png")
        (run / "samples_").mkdir()  # makes samples_/../.. resolve
        _edit(run / "results.json", lambda p: {**_poison(p, keys=False), "results": {
            **_poison(p["results"], keys=False), "/../../../private/secret": {"metrics": {}},
            "nul\u0000task": {"metrics": {}},
            **{script: {"headline": script, "metrics": {script: 1.0}, "signature": script, "mode": script}
               for script in SCRIPTS}}})
        _edit(run / "stratified_hate_detection.json", lambda p: {
            **_poison(p, keys=False), "kind": "pragmeter-stratified", "source": "javascript:alert(7)",
            "filter": SCRIPTS[0], "plots": ["stratified_hate_detection.png", "link_to_outside.png", outside_plot,
                                            "fifo.png", "../../../../../../../private/secret.png", f"{SCRIPTS[0]}.png",
                                            "nul\u0000.png"]})
    _edit(results / "gen" / "generation_check.json", lambda p: {
        **_poison(p, keys=False), "kind": "pragmeter-generation-check", "samples_file": "javascript:alert(9)",
        "runs": "<script>alert(10)</script>", "n_valid": "<script>alert(11)</script>",
        "n_requests": "<img src=x onerror=alert(12)>", "plots": [outside_plot, "generation_check.png"],
        "kendall_tau_per_group": {**p["kendall_tau_per_group"], "n": "<script>alert(13)</script>"}})

    def profile(p: dict) -> dict:  # label names and values are keys: scripts too
        poisoned = _poison(p, keys=False)
        return {**poisoned, "kind": "pragmeter-profile", "plots": ["../../../../../../private/secret.png", outside_plot],
                "groupings": {f"{SCRIPTS[4]}{i}": {f"{SCRIPTS[5]}{j}": block for j, block in enumerate(values.values())}
                              for i, values in enumerate(poisoned["groupings"].values())},
                "pairs": {SCRIPTS[1]: p["comparisons"][0] | {"n_pairs": 2}},
                "sampling": _poison({"seed": "x", SCRIPTS[2]: SCRIPTS[3]})}

    _edit(results / "prof" / "profile_texts.json", profile)
    output = tmp_path / "elsewhere" / "report"
    before = _snapshot(tmp_path, output.parent)
    assert main(["analyze", "report", "--input", str(results), "--output", str(output), "--no-stratify"]) == 0
    assert _snapshot(tmp_path, output.parent) == before  # nothing written outside the output; results untouched
    pages = sorted(output.glob("*.html"))
    assert len(pages) >= 3  # the index and a page per model
    for page in pages:
        check_page(page, [results, output])
    _no_secret_in(output, secret)
    for path in output.rglob("*"):
        assert not path.is_symlink() and output.resolve() in path.resolve().parents
    err = capsys.readouterr().err
    assert "Traceback" not in err and "skipped" not in err, err  # every tampered file was shown, escaped
    shown = "".join(page.read_text(encoding="utf-8") for page in pages)
    for number in (*range(1, 8), *range(10, 14)):  # 9 is a link target: not shown
        assert f"alert({number})" in shown, number  # as text
    assert shown.count("not shown: a symbolic link") >= 3 and "not shown: not a regular file" in shown
    for name in ("../../../../../../../private/secret.png", "../../../../../../private/secret.png"):
        assert f"plot {name} not shown: outside" in shown  # the ../ names reach the outside file; it is not read


def test_plots_of_two_runs_with_the_same_folder_name_are_both_kept(pristine, tmp_path):
    """Issue 47, item 13: the plots of ``m1/r`` and ``m2/r`` were copied to one file, the second replacing the first;
    each page must embed its own run's plot, and each copy must be kept."""
    results = _copy(pristine, tmp_path)
    plots = {model: (results / model / "r" / "stratified_hate_detection.png").read_bytes() for model in ("m1", "m2")}
    assert plots["m1"] != plots["m2"]
    output = tmp_path / "report"
    assert main(["analyze", "report", "--input", str(results), "--output", str(output), "--no-stratify"]) == 0
    copies = sorted(p.read_bytes() for p in (output / "plots").rglob("*.png"))
    assert all(plots[model] in copies for model in plots)
    for model in plots:
        page = next(output.glob(f"{model}*.html")).read_text(encoding="utf-8")
        assert base64.b64encode(plots[model]).decode("ascii") in page


@pytest.mark.parametrize("planted", ["report", "report/plots", "report/plots/m1", "file"])
def test_a_planted_link_in_the_default_report_folder_is_not_written_through(pristine, tmp_path, capsys, planted):
    """The default output lies inside the results folder: a ``report`` folder (or ``plots``, or one of its folders)
    that the folder's author made a symbolic link to another folder is refused, not written through; a planted link
    where a plot's copy goes is replaced, not followed."""
    results = _copy(pristine, tmp_path)
    target = tmp_path / "private"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    if planted == "file":
        copy = results / "report" / "plots" / "m1" / "r" / "stratified_hate_detection.png"
        copy.parent.mkdir(parents=True)
        copy.symlink_to(target / "keep.txt")
    else:
        (results / planted).parent.mkdir(parents=True, exist_ok=True)
        (results / planted).symlink_to(target, target_is_directory=True)
    code = main(["analyze", "report", "--input", str(results)])  # refused before stratifying
    error = capsys.readouterr().err
    assert "Traceback" not in error
    assert sorted(target.iterdir()) == [target / "keep.txt"] and (target / "keep.txt").read_text() == "mine"
    if planted == "file":
        assert code == 0 and not copy.is_symlink() and copy.read_bytes()[:4] == b"\x89PNG"
    else:
        assert code == 2 and f"{results / planted}: a symbolic link" in error


@pytest.mark.parametrize("field, change, said", [
    ("trend.spearman_bin_centre_vs_accuracy.p_value",
     lambda p: {**p, "trend": {**p["trend"], "spearman_bin_centre_vs_accuracy": {"rho": 0.5, "p_value": None}}},
     "'trend.spearman_bin_centre_vs_accuracy.p_value' is null"),
    ("bin_edges", lambda p: {**p, "bin_edges": []}, "'bin_edges' is empty"),
    ("n", lambda p: {**p, "n": "many"}, "'n' is a string"),
    ("bins[0].n", lambda p: {**p, "bins": [{**p["bins"][0], "n": "many"}, *p["bins"][1:]]}, "'bins[0].n' is a string"),
    ("trend.logistic_slope_per_score_unit.ci_low", lambda p: {**p, "trend": {
        **p["trend"], "logistic_slope_per_score_unit": {"slope": 1.0, "ci_low": None, "ci_high": 2.0}}},
     "'trend.logistic_slope_per_score_unit.ci_low' is null"),
])
def test_an_unreadable_stratified_file_is_marked_on_the_page(pristine, tmp_path, capsys, field, change, said):
    """Issue 47, item 16: ``p_value: null``, ``bin_edges: []`` or a non-numeric ``n`` in a stratified file ended the
    whole report in a traceback. The page is written, the section says which file and field it could not read, and
    the command says so in one line."""
    results = _copy(pristine, tmp_path)
    damaged = results / "m1" / "r" / "stratified_hate_detection.json"
    _edit(damaged, change)
    capsys.readouterr()
    assert main(["analyze", "report", "--input", str(results), "--no-stratify"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if str(damaged) in line]
    assert len(warnings) == 1 and said in warnings[0], warnings
    page = next((results / "report").glob("m1*.html")).read_text(encoding="utf-8")
    section = page.split("<h2>Accuracy by implicitness</h2>")[1].split("<h2>")[0]
    assert "unreadable" in section and "m1/r/stratified_hate_detection.json" in section and said in \
        section.replace("&#x27;", "'"), section
    m2 = next((results / "report").glob("m2*.html")).read_text(encoding="utf-8")
    assert "unreadable" not in m2 and "data:image/png;base64," in m2  # the other run's section is whole


@pytest.mark.parametrize("content, said", [("9" * 5000, "a number of more than"), ("[" * 100_000, "nested too deeply")])
def test_json_the_parser_refuses_is_said_in_one_line(pristine, tmp_path, capsys, content, said):
    """A number of more digits than Python converts, or nesting deeper than its recursion limit, ended ``report``
    and ``stratify`` in a ValueError or RecursionError traceback: now one line naming the file (and its line)."""
    results = _copy(pristine, tmp_path)
    run = results / "m1" / "r"
    (run / "results.json").write_text(f'{{"results": {{"inli": {{"metrics": {{"accuracy": {content}}}}}}}}}')
    capsys.readouterr()
    assert main(["analyze", "report", "--input", str(results), "--no-stratify"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {run / 'results.json'}: invalid JSON ({said}" in err and "Traceback" not in err
    log = run / "samples_hate_detection.jsonl"
    log.write_text(log.read_text(encoding="utf-8") + f'{{"task": "hate_detection", "run": {content}}}\n',
                   encoding="utf-8")
    (run / "results.json").write_text("{}")
    assert main(["analyze", "stratify", "--input", str(log), "--output", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{log}: line 7: invalid JSON ({said}" in err


def test_linked_or_special_result_files_are_not_read(pristine, tmp_path, capsys):
    """Issue 47, item 3 for every file the report reads: a ``results.json`` or sample log that is a symbolic link to a
    file outside the folder, or a FIFO, is not read (its content would reach the page or the stratified files)."""
    results = _copy(pristine, tmp_path)
    outside = tmp_path / "private"
    shutil.copytree(results / "m2" / "r", outside)
    _edit(outside / "results.json", lambda p: {**p, "model": {**p["model"], "model": "private-model"}})
    run = results / "m1" / "r"
    for name in ("results.json", "samples_hate_detection.jsonl", "stratified_hate_detection.json"):
        (run / name).unlink()
        (run / name).symlink_to(outside / name)
    os.mkfifo(results / "m2" / "r" / "samples_inli.jsonl")
    listing = sorted(run.iterdir())
    capsys.readouterr()
    assert main(["analyze", "report", "--input", str(results), "--output", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    for name in ("results.json", "samples_hate_detection.jsonl", "stratified_hate_detection.json"):
        assert f"warning: {run / name}: a symbolic link" in err, name
    assert f"warning: {results / 'm2' / 'r' / 'samples_inli.jsonl'}: not a regular file" in err
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "report").glob("*.html"))
    assert "private-model" not in pages and "m1/r/results.json</code>: a symbolic link" in pages
    assert sorted(run.iterdir()) == listing and sorted(outside.iterdir()) == sorted(
        outside / p.name for p in (results / "m2" / "r").iterdir() if p.name != "samples_inli.jsonl")


@pytest.mark.parametrize("field, value, said", [
    ("run", [1], "field 'run' is [1]; expected a run number"),
    ("run", -1, "field 'run' is -1; expected a run number"),
])
def test_a_sample_log_with_a_malformed_run_is_one_line(pristine, tmp_path, capsys, field, value, said):
    results = _copy(pristine, tmp_path)
    log = results / "m1" / "r" / "samples_hate_detection.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    records[2][field] = value
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    capsys.readouterr()
    assert main(["analyze", "stratify", "--input", str(log), "--output", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{log}: line 3: {said}" in err


def test_any_value_in_any_field_gives_a_page_without_live_script(pristine, tmp_path, capsys):
    """Each field of each kind of file (results, stratified, generation check, profile), in a seeded sample, set to
    a hostile value (null, a script, an empty list or object, a dictionary that looks like an estimate but is not, a
    huge or non-finite number): the report is written (the file shown, or marked unreadable), never a traceback, and
    no page holds live script."""
    import random

    values = [None, "<script>alert(1)</script>", "a\u0000b", [], {}, True, -1, 1.5e308, float("nan"), 10 ** 50, ["x"],
              {"mean": "a", "sd": [1]}, {"mean": 1, "sd": 2, "ci95": "ab"}, {"difference": 1}]
    files = {name: json.loads((pristine / name).read_text(encoding="utf-8")) for name in (
        "m1/r/results.json", "m1/r/stratified_hate_detection.json", "gen/generation_check.json",
        "prof/profile_texts.json")}

    def fields(value, path=()):
        yield path
        if isinstance(value, dict):
            for key, item in value.items():
                yield from fields(item, (*path, key))
        elif isinstance(value, list) and value:
            yield from fields(value[0], (*path, 0))

    def changed(payload, path, value):
        payload = json.loads(json.dumps(payload))
        if not path:
            return value
        container = payload
        for key in path[:-1]:
            container = container[key]
        container[path[-1]] = value
        return payload

    cases = [(name, path) for name, payload in files.items() for path in fields(payload)]
    rounds = random.Random(47).sample(cases, 30)
    results = _copy(pristine, tmp_path)
    output = tmp_path / "report"
    for index, (name, path) in enumerate(rounds):
        for value in random.Random(index).sample(values, 2):
            (results / name).write_text(json.dumps(changed(files[name], path, value)), encoding="utf-8")
            assert main(["analyze", "report", "--input", str(results), "--output", str(output), "--no-stratify",
                         "--overwrite"]) == 0, (name, path, value)
            for page in output.glob("*.html"):
                check_page(page, [results, output])
        (results / name).write_text(json.dumps(files[name]), encoding="utf-8")
    assert "Traceback" not in capsys.readouterr().err


def test_a_label_column_name_never_leaves_the_profile_output(tmp_path, private_cache):
    """A label column's name (from the file's header) is part of a plot's file name: ``../../…/victim`` wrote the
    plot outside the output."""
    table = tmp_path / "in" / "texts.csv"
    table.parent.mkdir()
    column = "../../../../victim"
    table.write_text(f"text,{column}\nIt is cold in here.,a\nShut the window.,b\nNice weather.,a\nGo home now.,b\n",
                     encoding="utf-8")
    output = tmp_path / "a" / "b" / "out"
    assert main(["analyze", "profile", "--input", str(table), "--label-column", column, "--pairs", "5",
                 "--output", str(output)]) == 0
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and output not in p.parents
               and private_cache not in p.parents and p != table]
    assert outside == [] and all(p.parent == output for p in output.rglob("*") if p.is_file())
    plots = json.loads((output / "profile_texts.json").read_text(encoding="utf-8"))["plots"]
    assert len(plots) == 1 and (output / plots[0]).is_file()


def test_a_linked_results_json_beside_a_real_log_is_not_read(pristine, tmp_path, capsys):
    """The model settings of a stratification come from the results.json beside the log: a link to another folder's
    results.json would put that file's model on the page."""
    results = _copy(pristine, tmp_path)
    outside = tmp_path / "private"
    shutil.copytree(results / "m2" / "r", outside)
    _edit(outside / "results.json", lambda p: {**p, "model": {**p["model"], "model": "private-model"}})
    run = results / "m1" / "r"
    for name in ("results.json", "stratified_hate_detection.json"):
        (run / name).unlink()
    (run / "results.json").symlink_to(outside / "results.json")
    assert main(["analyze", "stratify", "--input", str(run), "--output", str(tmp_path / "s")]) == 2
    assert f"{run / 'results.json'}: a symbolic link; not read" in capsys.readouterr().err
    assert main(["analyze", "report", "--input", str(results), "--output", str(tmp_path / "report")]) == 0
    assert f"{run / 'results.json'}: a symbolic link; not read" in capsys.readouterr().err
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "report").glob("*.html"))
    assert "private-model" not in pages and not (run / "stratified_hate_detection.json").exists()
