"""Commands that read a JSON document, a JSON-lines log, a text list or a results folder, against bad inputs:
evaluate ranking/choice, generate agreement, generation-check --topics, stratify (sample logs, results folders,
predictions outside the gold vocabulary) and report (a results folder with a truncated results.json)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from bad_inputs import CONTROLS, GOOD, HUGE, as_unprivileged_user, assert_one_line_error, run
from pragmeter.cli import main

RANKING = {"groups": [{"id": "noise", "sentences": ["Please stop talking so loudly.", "You are talking too loudly.",
                                                    "I'm finding it a bit hard to concentrate."]},
                      {"id": "controls", "sentences": [*CONTROLS[:2], HUGE]}]}
CHOICE = {"items": [{"id": "window", "reference": "It's freezing in here.",
                     "options": ["Please close the window.", "Water freezes at zero degrees."], "answer": 0},
                    {"id": "controls", "reference": CONTROLS[0], "options": [CONTROLS[1], HUGE], "answer": 1}]}
AGREEMENT = {"A: Hi<br>B: Hello": {"current": "I did not say he took it.",
                                   "emphasis": {"he": ["Someone else took it.", "Not him."]}}}


@dataclass(frozen=True)
class DocumentReader:
    name: str
    valid: object  # a well-formed document
    argv: Callable[[Path, Path, dict], list]
    wrong_inner: tuple[object, str]  # a document of the right top-level type but the wrong inside, and the error
    missing_field: tuple[object, str]
    ok: Callable[[Path, str, str], None] | None = None  # checks a run on ``valid``


def ranking_ok(work: Path, out: str, err: str) -> None:
    assert "| kendall_tau | " in out and " n=2 |" in out
    assert len(json.loads((work / "out.json").read_text())["details"]["per_group"]) == 2


def choice_ok(work: Path, out: str, err: str) -> None:
    assert "| accuracy | " in out and " n=2 |" in out


DOCUMENT_READERS = [
    DocumentReader("evaluate ranking", RANKING,
                   lambda p, w, fx: ["impscore", "evaluate", "ranking", "--input", p, "--output", w / "out.json"],
                   ({"groups": {"noise": ["a", "b"]}}, r'expected an object with a non-empty "groups" list'),
                   ({"groups": [{"id": "g", "sentences": ["Only one."]}]},
                    r"item 0, field 'sentences': expected a list of at least 2"), ranking_ok),
    DocumentReader("evaluate choice", CHOICE,
                   lambda p, w, fx: ["impscore", "evaluate", "choice", "--input", p, "--output", w / "out.json"],
                   ({"items": [["a", "b"]]}, r"item 0: expected an object"),
                   ({"items": [{"options": ["a", "b"], "answer": 0}]},
                    r"item 0, field 'reference': expected a non-empty string"), choice_ok),
    DocumentReader("generate agreement", AGREEMENT,
                   lambda p, w, fx: ["generate", "agreement", "--input", p, "--output", w / "agreed.json",
                                     "--no-progress", "--model-args", f"base_url={fx['server'].url},model=fake"],
                   ({"dialogue": ["not", "an", "object"]}, r"dialogue 0: expected 'current' \(text\) and an 'emphasis'"),
                   ({"dialogue": {"current": "Hi.", "emphasis": {"he": ["ok", ""]}}},
                    r"dialogue 0: emphasis 'he': expected a list of non-empty texts")),
]


def _document_cases(reader: DocumentReader):
    """(case name, file writer, expected pattern or None for success)."""
    text = json.dumps(reader.valid)
    return [
        ("empty", lambda p: p.write_bytes(b""), r"empty file; expected"),
        ("whitespace", lambda p: p.write_text(" \n\t\n"), r"empty file; expected"),
        ("truncated", lambda p: p.write_text(text[: len(text) // 2]), r"line \d+, column \d+: invalid JSON"),
        ("latin1", lambda p: p.write_bytes('{"x": "café"}'.encode("latin-1")), r"not valid UTF-8 at byte 10 \(line 1\)"),
        ("binary", lambda p: p.write_bytes(bytes(range(256)) * 4), r"not valid UTF-8 at byte 128"),
        ("wrong_top_level", lambda p: p.write_text(json.dumps([reader.valid])), r"expected an object .*got a list"),
        ("string_top_level", lambda p: p.write_text('"just a string"'), r"expected an object .*got a string"),
        ("wrong_inner", lambda p: p.write_text(json.dumps(reader.wrong_inner[0])), reader.wrong_inner[1]),
        ("missing_field", lambda p: p.write_text(json.dumps(reader.missing_field[0])), reader.missing_field[1]),
        ("directory", lambda p: p.mkdir(), r"is a folder; expected a file"),
        ("unreadable", lambda p: (p.write_text(text), p.chmod(0)), r"cannot be read \(Permission denied\)"),
        ("missing", lambda p: None, r"no such file"),
        *([("valid_with_controls_and_huge_text", lambda p: p.write_text(text), None)] if reader.ok else []),
    ]


DOCUMENT_PARAMS = [pytest.param(reader, *case, id=f"{reader.name}-{case[0]}")
                   for reader in DOCUMENT_READERS for case in _document_cases(reader)]
DOCUMENT_PARAMS.sort(key=lambda p: p.values[1] == "unreadable")


@pytest.fixture(scope="module")
def fixtures():
    from pragmeter.testing.fake_server import FakeChatServer

    with FakeChatServer(lambda request: "Yes, they agree.") as server:
        yield {"server": server}


@pytest.fixture(autouse=True)
def _private_cache(private_cache):
    """Every test here starts from an empty cache (tests/conftest.py)."""


@pytest.fixture
def work(tmp_path_factory):
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="pragmeter-adv-doc-"))
    folder.chmod(0o777)  # reachable by the unprivileged user of the unreadable case
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("reader,case,write,pattern", DOCUMENT_PARAMS)
def test_document_reader_survives_case(reader, case, write, pattern, fixtures, work, capsys):
    path = work / "input.json"
    write(path)
    argv = reader.argv(path, work, fixtures)
    if case == "unreadable":
        with as_unprivileged_user():
            code, out, err = run(argv, capsys)
    else:
        code, out, err = run(argv, capsys)
    assert "Traceback" not in err
    if pattern is None:
        assert code == 0, err
        reader.ok(work, out, err)
    else:
        assert_one_line_error(code, err, path, pattern)


# --------------------------------------------------------------------------------------------- topics (text list)
TOPIC_CASES = [
    ("empty", b"", r"no topics \(one per line\)"),
    ("blank_lines", b"\n  \n\t\n", r"no topics \(one per line\)"),
    ("latin1", "caf\xe9 culture\n".encode("latin-1"), r"not valid UTF-8 at byte 3 \(line 1\)"),
    ("binary", bytes(range(256)), r"not valid UTF-8 at byte 128 \(line 2\)"),
    ("nul", b"weather\nsmall \x00 talk\n", r"NUL byte at line 2"),
]


@pytest.mark.parametrize("case,data,pattern", TOPIC_CASES, ids=[c[0] for c in TOPIC_CASES])
def test_generation_check_topics(case, data, pattern, fixtures, work, capsys):
    path = work / "topics.txt"
    path.write_bytes(data)
    asked = fixtures["server"].total_calls
    code, _, err = run(["analyze", "generation-check", "--topics", path, "--output", work / "gen", "--no-progress",
                        "--model-args", f"base_url={fixtures['server'].url},model=fake"], capsys)
    assert_one_line_error(code, err, path, pattern)
    assert fixtures["server"].total_calls == asked  # refused before asking anything


# --------------------------------------------------------------------------------- results folders and sample logs
@pytest.fixture(scope="module")
def results(tmp_path_factory, fixtures) -> Path:
    """A real harness results folder: hate detection on 6 texts through the fake server, samples logged."""
    root = tmp_path_factory.mktemp("results")
    table = root / "texts.csv"
    pd.DataFrame({"text": GOOD + ["You people are all the same."], "label": [0, 0, 0, 1, 1, 1]}).to_csv(table)
    code = main(["eval", "--tasks", "hate_detection", "--task-arg", f"hate_detection.path={table}", "--log-samples",
                 "--no-progress", "--output", str(root / "good-model"),
                 "--model-args", f"base_url={fixtures['server'].url},model=good-model"])
    assert code == 0
    return root / "good-model"


def _copy(results: Path, work: Path, name: str) -> Path:
    target = work / name
    shutil.copytree(results, target)
    return target


def _edit_samples(folder: Path, edit: Callable[[list[dict]], list[str]]) -> Path:
    log = folder / "samples_hate_detection.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(line + "\n" for line in edit(records)))
    return log


SAMPLE_CASES = {
    # line 5 is a hateful item: also read when report keeps only those (gold "yes")
    "missing_text": (lambda rs: [json.dumps({k: v for k, v in r.items() if not (i == 4 and k == "text")})
                                 for i, r in enumerate(rs)], r"line 5: field 'text' is missing"),
    "broken_line": (lambda rs: [json.dumps(rs[0]), json.dumps(rs[1])[:-5], *map(json.dumps, rs[2:])],
                    r"line 2: invalid JSON"),
    "list_line": (lambda rs: [json.dumps(rs[0]), "[1, 2]", *map(json.dumps, rs[2:])],
                  r"line 2: expected a JSON object, got a list"),
    "bad_correct": (lambda rs: [json.dumps({**r, "correct": "maybe"} if i == 2 else r) for i, r in enumerate(rs)],
                    r"line 3: field 'correct' is 'maybe'"),
}


@pytest.mark.parametrize("case", sorted(SAMPLE_CASES))
def test_stratify_sample_log_with_a_bad_record(case, results, work, capsys):
    edit, pattern = SAMPLE_CASES[case]
    log = _edit_samples(_copy(results, work, "run"), edit)
    code, _, err = run(["analyze", "stratify", "--input", log], capsys)
    assert_one_line_error(code, err, log, pattern)
    code, _, err = run(["analyze", "stratify", "--input", log.parent], capsys)  # the folder form reads the same log
    assert_one_line_error(code, err, log, pattern)


def test_truncated_results_json(results, work, capsys):
    bad = _copy(results, work, "truncated")
    text = (bad / "results.json").read_text()
    (bad / "results.json").write_text(text[: len(text) // 3])
    # stratify needs the folder's results.json: one line naming it
    code, _, err = run(["analyze", "stratify", "--input", bad], capsys)
    assert_one_line_error(code, err, bad / "results.json", r"line \d+, column \d+: invalid JSON")
    # report reads many folders: it says which one it skipped and renders the rest
    _copy(results, work, "good")
    code, out, err = run(["analyze", "report", "--input", work, "--output", work / "report", "--no-stratify"], capsys)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and str(bad / "results.json") in warnings[0] and "skipped" in warnings[0]
    assert [Path(line).name for line in out.split()] == ["good-model.html"]
    # with nothing else to render it is an error, after the warning
    shutil.rmtree(work / "good")
    shutil.rmtree(work / "report")
    code, _, err = run(["analyze", "report", "--input", work, "--output", work / "report", "--no-stratify"], capsys)
    assert code == 2 and str(bad / "results.json") in err and "Traceback" not in err


def test_report_stratifies_what_it_can_and_names_the_rest(results, work, capsys):
    """A samples file with a missing field: report warns with its line and still renders every page."""
    _edit_samples(_copy(results, work, "broken"), SAMPLE_CASES["missing_text"][0])
    code, out, err = run(["analyze", "report", "--input", work, "--output", work / "report"], capsys)
    assert code == 0, err
    assert re.search(r"warning: .*samples_hate_detection\.jsonl: line 5: field 'text' is missing.*not stratified", err)
    assert (work / "report" / "good-model.html").exists()


def test_report_of_a_file_is_refused(results, capsys):
    code, _, err = run(["analyze", "report", "--input", results / "results.json"], capsys)
    assert code == 2 and "not a folder" in err and "Traceback" not in err


# --------------------------------------------------------------------------- predictions outside the gold labels
def test_predictions_with_labels_outside_the_gold_vocabulary(work, capsys):
    frame = pd.DataFrame({"text": GOOD, "gold": ["yes", "no", "yes", "no", "yes"],
                          "impscore": [0.2, 0.6, 1.0, 1.4, 1.8]})
    path = work / "predictions.csv"
    frame.assign(prediction=["hateful", "benign", "hateful", "benign", "hateful"]).to_csv(path, index=False)
    code, _, err = run(["analyze", "stratify", "--input", path, "--score-column", "impscore", "--output", work / "s"], capsys)
    assert_one_line_error(code, err, path, r"data row 1: field 'prediction' is 'hateful', not a gold label "
                                           r"\(no, yes\); no prediction is a gold label")
    frame.assign(prediction=["yes", "maybe", "yes", "no", "YES"]).to_csv(path, index=False)
    code, _, err = run(["analyze", "stratify", "--input", path, "--score-column", "impscore", "--output", work / "s"], capsys)
    assert code == 0, err
    assert "data row 2: field 'prediction' is 'maybe', not a gold label (no, yes); 1 such row(s) count as wrong" in err
    payload = json.loads((work / "s" / "stratified_predictions.json").read_text())
    assert payload["n"] == 5 and payload["correct"] == 4  # 'maybe' is wrong, 'YES' matches 'yes'
