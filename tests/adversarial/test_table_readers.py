"""Every command that reads a user table, against every case of the bad-input corpus (tests/adversarial/corpus.py).

Each command runs through the CLI's ``main()`` in this process (the same code path as the console script, minus
the interpreter start-up). A case the file cannot survive must end in exit 2 with one line naming the file and
the position; a case the file survives must read every row in order and account for every row it cannot use.
No case may raise (an exception escaping ``main()`` fails the test: it would be a traceback).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from bad_inputs import CASES, GOOD, Case, Error, Rows, as_unprivileged_user, assert_one_line_error, run

LETTERS_OPTIONS = "A. It is late.\nB. Go home.\nC. Stay.\nD. I am tired.\nE. Nothing."


@dataclass
class Reader:
    name: str
    good: dict[str, list]  # column -> good values (cycled)
    field: str  # the column that carries the case's values
    argv: Callable[[Path, Path, dict], list]  # (input, work folder, fixtures) -> command line
    policy: str  # what the command does with a row whose field has no text: mark | skip | refuse
    check: Callable[[Path, Path, Rows, str], None] | None = None  # outputs of a survived case
    overrides: dict[str, Error | Rows | None] = field(default_factory=dict)  # case -> expectation (None: not run)


def expectation(reader: Reader, case: Case) -> Error | Rows | None:
    if case.name in reader.overrides:
        return reader.overrides[case.name]
    if case.expect is not None:
        return case.expect
    rows = case.default
    if rows.bad and reader.policy == "refuse":
        return Error(rf"data row {rows.bad[0] + 1}\b.*'{reader.field}'.*empty")
    return rows


# ------------------------------------------------------------------------------------------------- checks
def check_score(path: Path, work: Path, rows: Rows, err: str) -> None:
    out = pd.read_csv(work / "out.csv", dtype=str, keep_default_na=False)
    assert len(out) == rows.n
    assert out.index[out["impscore_error"] != ""].tolist() == list(rows.bad)
    scored = out.loc[out["impscore_error"] == "", "impscore"].astype(float)
    assert len(scored) == rows.n - len(rows.bad) and scored.between(0, 2).all()
    if rows.bad:
        assert f"{len(rows.bad)} row(s) not scored" in err


def check_predict(path: Path, work: Path, rows: Rows, err: str) -> None:
    out = pd.read_csv(work / "out.csv", dtype=str, keep_default_na=False)
    assert len(out) == rows.n
    assert out.index[out["prediction_error"] != ""].tolist() == list(rows.bad)
    assert (out.loc[out["prediction_error"] == "", "prediction"] != "").all()
    if rows.bad:
        assert f"{len(rows.bad)} row(s) not labelled" in err


def check_profile(path: Path, work: Path, rows: Rows, err: str) -> None:
    payload = json.loads(next((work / "profiles").glob("profile_*.json")).read_text())
    assert payload["overall"]["scores"]["n"] == rows.n - len(rows.bad)
    if rows.bad:
        assert f"{len(rows.bad)} row(s) skipped" in err


def check_stratify(path: Path, work: Path, rows: Rows, err: str) -> None:
    payload = json.loads(next((work / "strat").glob("stratified_*.json")).read_text())
    assert payload["n"] == rows.n


def check_correlate(path: Path, work: Path, rows: Rows, err: str) -> None:
    pass  # the printed n is checked by the override's Rows (3 complete rows)


def check_eval(task: str, items_per_row: int):
    def check(path: Path, work: Path, rows: Rows, err: str) -> None:
        results = json.loads((work / "run" / "results.json").read_text())["results"]
        assert results[task]["n_items"] == rows.n * items_per_row

    return check


def check_corpus(path: Path, work: Path, rows: Rows, err: str) -> None:
    assert len(pd.read_parquet(work / "corpus.parquet")) == rows.n


def check_generate_pairs(path: Path, work: Path, rows: Rows, err: str) -> None:
    report = json.loads((work / "pairs.csv.report.json").read_text())
    assert report["stages"][0]["in"] == rows.n - len(rows.bad)


# ------------------------------------------------------------------------------------------------- readers
def _eval(task: str):
    def argv(path, work, fx):
        return ["eval", "--tasks", task, "--task-arg", f"{task}.path={path}", "--output", work / "run", "--no-progress",
                "--model-args", f"base_url={fx['server'].url},model=fake-model,max_retries=0"]

    return argv


INLI_GOOD = {"dataset": ["circa"], "premise": GOOD, "implied_entailment": ["It is implied."],
             "explicit_entailment": ["It is said."], "neutral": ["Unrelated."], "contradiction": ["Not so."]}
DRINQ_GOOD = {"question": GOOD, "context": ["At dinner."], "options": [LETTERS_OPTIONS], "consensus": ["B"],
              "implied_comment": ["Go home."]}
NUMBERS = Error(r"data row \d+: column 'x' is .*not a number")
TOO_FEW = Error(r"only 2 rows have both 'x' and 'y'; need at least 3")
NEEDS_LLM_ANSWERS = None  # well-formed inputs whose outcome depends on scripted LLM answers: covered elsewhere
# correlate drops and counts rows with a missing value ("dropped N rows"); 4 rows with 2 blank leave too few.

READERS = [
    Reader("score", {"id": ["r"], "text": GOOD}, "text",
           lambda p, w, fx: ["score", "--input", p, "--output", w / "out.csv"], "mark", check_score),
    Reader("profile", {"text": GOOD, "label": ["a", "b"]}, "text",
           lambda p, w, fx: ["analyze", "profile", "--input", p, "--label-column", "label", "--pairs", "5", "--output", w / "profiles"],
           "skip", check_profile, overrides={"missing": Error(r"is neither a file nor a built-in dataset")}),
    Reader("stratify", {"text": GOOD, "gold": ["yes", "no"], "prediction": ["yes", "yes", "no"],
                        "impscore": ["0.3", "1.2", "0.7", "1.9"]}, "text",
           lambda p, w, fx: ["analyze", "stratify", "--input", p, "--score-column", "impscore", "--output", w / "strat"], "refuse",
           check_stratify, overrides={"directory": Error(r"no samples_<task>\.jsonl")}),  # a folder: harness results
    Reader("correlate", {"x": ["1.5", "2.0", "0.3", "4.1"], "y": ["1.0", "2.5", "0.1", "3.3"]}, "x",
           lambda p, w, fx: ["analyze", "correlate", "--input", p, "--x", "x", "--y", "y"], "skip", check_correlate,
           overrides={"blanks": TOO_FEW, "nan": TOO_FEW, "huge": NUMBERS, "controls": NUMBERS}),
    Reader("predict", {"premise": GOOD, "hypothesis": ["It is cold."]}, "premise",
           lambda p, w, fx: ["classifier", "predict", "--model", fx["classifier"], "--input", p, "--output", w / "out.csv",
                             "--device", "cpu", "--no-progress"], "mark", check_predict),
    Reader("drinq-nli", DRINQ_GOOD, "question",
           lambda p, w, fx: ["classifier", "drinq-nli", "--model", fx["classifier"], "--input", p, "--output", w / "o.json",
                             "--device", "cpu", "--no-progress"], "refuse", None),
    Reader("eval hate_detection.path", {"text": GOOD, "label": ["1", "0"]}, "text", _eval("hate_detection"),
           "refuse", check_eval("hate_detection", 1)),
    Reader("eval inli.path", INLI_GOOD, "premise", _eval("inli"), "refuse", check_eval("inli", 4)),
    Reader("eval drinq_vanilla.path", DRINQ_GOOD, "question", _eval("drinq_vanilla"), "refuse", check_eval("drinq_vanilla", 1)),
    Reader("generate pairs --input", {"text": GOOD}, "text",
           lambda p, w, fx: ["generate", "pairs", "--input", p, "--source-type", "hate", "--output", w / "pairs.csv",
                             "--no-progress", "--model-args", f"base_url={fx['server'].url},model=fake-model"],
           "skip", check_generate_pairs),
    Reader("generate inli --input", {"situation": GOOD, "rot": ["It is rude to shout."]}, "situation",
           lambda p, w, fx: ["generate", "inli", "--input", p, "--frame-type", "socialchem", "--output",
                             w / "inli.csv", "--no-progress", "--model-args",
                             f"base_url={fx['server'].url},model=fake-model"], "refuse", None,
           overrides={"huge": NEEDS_LLM_ANSWERS, "controls": NEEDS_LLM_ANSWERS, "bom": NEEDS_LLM_ANSWERS}),
    Reader("corpus build --from-official", {"pos_implicit": GOOD, "pos_explicit": ["Say it plainly."],
                                            "neg_implicit": GOOD[::-1], "neg_explicit": ["Something else."]},
           "pos_explicit", lambda p, w, fx: ["impscore", "corpus", "build", "--from-official", p, "--output", w / "corpus.parquet"],
           "refuse", check_corpus, overrides={"wrong_column": Error(r"not a corpus file: missing column.*official "
                                                                    r"pos_implicit, pos_explicit")}),
]


def answer(request: dict) -> str:
    """The fake model: an explicit version of the post (pairs), which the other tasks read as an invalid answer."""
    return f'Explicit version: "The plain meaning of: {request["messages"][-1]["content"][-40:]}"'


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    from pragmeter.classify.model import ClassifierSettings, TextClassifier
    from pragmeter.testing.fake_server import FakeChatServer

    folder = tmp_path_factory.mktemp("classifier") / "inli-tiny"
    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
    TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu").save(folder, "untrained: reader tests only")
    with FakeChatServer(answer) as server:
        yield {"classifier": folder, "server": server}


@pytest.fixture(autouse=True)
def _private_cache(private_cache):
    """Every test here starts from an empty cache (tests/conftest.py)."""


PARAMS = [pytest.param(reader, case, id=f"{reader.name}-{case.name}")
          for reader in READERS for case in CASES if expectation(reader, case) is not None]
# Run the unreadable-file cases last: they switch the effective user, after the modules they need are loaded.
PARAMS.sort(key=lambda p: p.values[1].name == "unreadable")


@pytest.mark.parametrize("reader,case", PARAMS)
def test_reader_survives_case(reader: Reader, case: Case, fixtures, capsys):
    expected = expectation(reader, case)
    # A world-traversable folder, so that the unreadable case fails on the file's own permission only.
    work = Path(tempfile.mkdtemp(prefix=f"pragmeter-adv-{case.name}-"))
    try:
        work.chmod(0o777)  # outputs are written there, also by the unprivileged user
        path = case.build(work, reader.good, reader.field)
        argv = reader.argv(path, work, fixtures)
        if case.name == "unreadable":
            with as_unprivileged_user():
                code, out, err = run(argv, capsys)
        else:
            code, out, err = run(argv, capsys)
        assert "Traceback" not in err and "Traceback" not in out
        if isinstance(expected, Error):
            assert_one_line_error(code, err, path, expected.pattern.format(field=reader.field))
        else:
            assert code == 0, err
            if reader.check is not None:
                reader.check(path, work, expected, err)
            if reader.name == "correlate":
                assert out.startswith(f"n={expected.n - len(expected.bad)} ")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def cases_per_reader() -> dict[str, int]:
    """Cases each reader is run against (the figure recorded in docs/results.md)."""
    counts: dict[str, int] = {}
    for param in PARAMS:
        counts[param.values[0].name] = counts.get(param.values[0].name, 0) + 1
    return counts
