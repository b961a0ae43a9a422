"""`pragmeter score` / `distance` on real sentences and on files with bad rows."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pragmeter.cli import main
from pragmeter.data.root import data_file
from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF


@pytest.fixture(scope="module")
def real_sentences() -> list[str]:
    frame = pd.read_csv(data_file("implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg3_posts.tsv"), sep="\t")
    return frame["post"].head(300).tolist() + frame["implied_statement"].head(200).tolist()


@pytest.fixture(autouse=True)
def _private_cache(private_cache):
    """Every test here starts from an empty cache (tests/conftest.py)."""


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_score_sentences_prints_scores_in_range(capsys):
    code, out, _ = run(capsys, "score", "You are talking too loudly.", "I'm finding it a bit hard to concentrate.")
    assert code == 0
    scores = [float(line.split("\t")[0]) for line in out.strip().splitlines()]
    assert len(scores) == 2 and all(0.0 <= s <= 2.0 for s in scores)


def test_score_dash_scores_standard_input_as_arguments_would(capsys, monkeypatch, real_sentences):
    import io

    sentences = [text.replace("\n", " ") for text in real_sentences[:40]]
    _, as_arguments, _ = run(capsys, "score", *sentences)
    stdin = io.TextIOWrapper(io.BytesIO(("\n".join(sentences[:20]) + "\n\n" + "\n".join(sentences[20:])).encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = run(capsys, "score", "-")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 41 and lines[20] == "nan\t"
    assert lines[:20] + lines[21:] == as_arguments.splitlines()
    assert "1 of 41 line(s) not scored" in err and "line 21: empty text" in err


def test_score_dash_stops_quietly_when_the_reader_goes(tmp_path, real_sentences):
    """`pragmeter score - < posts.txt | head -1`: exit 141 (SIGPIPE's status in a shell), no error, no traceback."""
    lines = [text.replace("\n", " ") for text in real_sentences] * 6  # several steps: writing goes on after head exits
    source = tmp_path / "posts.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with source.open("rb") as stdin:
        process = subprocess.Popen([sys.executable, "-m", "pragmeter", "score", "-"], stdin=stdin,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()  # as head does after its first line
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, err
    assert float(first.split(b"\t")[0]) >= 0 and "error" not in err and "Traceback" not in err


def test_score_dash_at_a_terminal_answers_each_line_as_it_is_typed():
    import os
    import pty
    import select

    terminal, typed = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "pragmeter", "score", "-"], stdin=typed, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        os.write(terminal, b"It is cold in here.\n")
        ready, _, _ = select.select([process.stdout], [], [], 120)  # the line's score, before any more is typed
        assert ready and process.stdout.readline().endswith(b"\tIt is cold in here.\n")
        os.write(terminal, b"\x04")  # Ctrl-D: end of input
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        os.close(terminal)
        os.close(typed)


def test_distance_is_symmetric_and_zero_for_identical(capsys):
    # in fp32: the two orders are other batches, and bf16 moves with batching
    _, ab, _ = run(capsys, "distance", "--precision", "fp32", "Nice weather.", "It is raining hard.")
    _, ba, _ = run(capsys, "distance", "--precision", "fp32", "It is raining hard.", "Nice weather.")
    _, aa, _ = run(capsys, "distance", "--precision", "fp32", "Nice weather.", "Nice weather.")
    printed = 1e-4  # the last of the four decimals printed
    assert float(ab) == pytest.approx(float(ba), abs=FP32_MAX_ABS_DIFF + printed) and float(ab) > 0
    assert float(aa) == pytest.approx(0.0, abs=FP32_MAX_ABS_DIFF + printed)


def test_ten_thousand_rows_keep_order_and_mark_errors(tmp_path, capsys, real_sentences):
    rng = np.random.default_rng(0)
    texts = [real_sentences[i] for i in rng.integers(len(real_sentences), size=10_000)]
    bad = {17: "", 4242: "   ", 9999: None}
    for row, value in bad.items():
        texts[row] = value
    source = tmp_path / "in.csv"
    pd.DataFrame({"id": range(10_000), "text": texts, "extra": "x"}).to_csv(source, index=False)
    target = tmp_path / "out.parquet"
    code, _, err = run(capsys, "score", "--input", str(source), "--column", "text", "--output", str(target))
    assert code == 0
    out = pd.read_parquet(target)
    assert len(out) == 10_000
    assert out["id"].astype(int).tolist() == list(range(10_000))
    assert set(out.columns) >= {"id", "text", "extra", "impscore", "impscore_error"}
    marked = out.index[out["impscore_error"] != ""].tolist()
    assert marked == sorted(bad)
    assert out["impscore"].isna().sum() == 3
    assert out["impscore"].dropna().between(0, 2).all()
    assert "3 row(s) not scored" in err and "row 18" in err
    # identical texts get identical scores wherever they appear
    first = out.dropna().groupby("text")["impscore"].agg(["min", "max"])
    assert (first["max"] - first["min"]).abs().max() < 1e-5


def test_an_integer_id_column_keeps_its_type_and_other_columns_stay_text(tmp_path, capsys, real_sentences):
    # the id used to come out as text; "007" must keep its zeros, and a scored text that is a number stays a text
    texts = real_sentences[:4] + ["32"]
    source = tmp_path / "in.csv"
    pd.DataFrame({"id": [3, -1, 0, 12, 40], "code": ["007", "1", "2", "3", "4"], "count": ["5", "", "6", "7", "8"],
                  "text": texts}).to_csv(source, index=False)
    for target in (tmp_path / "out.parquet", tmp_path / "out.jsonl"):
        code, _, _ = run(capsys, "score", "--input", str(source), "--output", str(target))
        assert code == 0
        out = pd.read_parquet(target) if target.suffix == ".parquet" else \
            pd.DataFrame(map(json.loads, target.read_text().splitlines()), dtype=object)  # the values as written
        assert out["id"].tolist() == [3, -1, 0, 12, 40] and all(isinstance(v, (int, np.integer)) for v in out["id"])
        assert out["code"].tolist() == ["007", "1", "2", "3", "4"]
        assert out["text"].tolist() == texts and out["impscore_error"].tolist() == [""] * 5
    parquet = pd.read_parquet(tmp_path / "out.parquet")
    assert str(parquet["count"].dtype) == "Int64" and parquet["count"].isna().tolist() == [False, True] + [False] * 3


def test_missing_column_names_the_available_ones(tmp_path, capsys):
    source = tmp_path / "in.tsv"
    source.write_text("id\tsentence\n1\thello there\n", encoding="utf-8")
    code, _, err = run(capsys, "score", "--input", str(source), "--column", "text", "--output", str(tmp_path / "o.csv"))
    assert code == 2
    assert "no column 'text'" in err and "id, sentence" in err


@pytest.mark.parametrize("taken", ["impscore", "impscore_error"])
def test_an_input_column_that_scoring_adds_is_refused_not_replaced(tmp_path, capsys, taken):
    """An input column already named impscore (or impscore_error) was silently replaced by the new scores."""
    source = tmp_path / "in.csv"
    source.write_text(f"text,{taken}\nhello there,their own value\n", encoding="utf-8")
    output = tmp_path / "o.csv"
    code, _, err = run(capsys, "score", "--input", str(source), "--output", str(output))
    assert code == 2 and not output.exists()
    assert err.count("\n") == 1 and f"{source}: already has a column {taken!r}, which scoring adds" in err


def test_non_utf8_file_names_the_position(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_bytes("good line\nbad \xe9 line\n".encode("latin-1"))
    code, _, err = run(capsys, "score", "--input", str(source), "--output", str(tmp_path / "o.csv"))
    assert code == 2
    assert "not valid UTF-8" in err and "line 2" in err and str(source) in err


def test_existing_output_is_refused_without_overwrite(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "A sentence."}\n', encoding="utf-8")
    target = tmp_path / "out.csv"
    target.write_text("keep me", encoding="utf-8")
    code, _, err = run(capsys, "score", "--input", str(source), "--output", str(target))
    assert code == 2 and "--overwrite" in err
    assert target.read_text(encoding="utf-8") == "keep me"
    code, _, _ = run(capsys, "score", "--input", str(source), "--output", str(target), "--overwrite")
    assert code == 0 and "impscore" in target.read_text(encoding="utf-8")


def test_invalid_jsonl_names_the_line(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "ok"}\n{"text": \n', encoding="utf-8")
    code, _, err = run(capsys, "score", "--input", str(source), "--output", str(tmp_path / "o.csv"))
    assert code == 2 and "line 2" in err


def test_empty_sentence_argument_is_an_error(capsys):
    code, _, err = run(capsys, "score", "fine", "  ")
    assert code == 2 and "text 1: empty text" in err


def test_long_text_is_truncated_counted_and_scored(capsys):
    code, out, err = run(capsys, "score", "word " * 2000, "short")
    assert code == 0 and len(out.strip().splitlines()) == 2
    assert "1 text(s) exceeded" in err


def test_entry_point_prints_no_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pragmeter", "score", "--input", str(tmp_path / "missing.csv"),
                             "--output", str(tmp_path / "o.csv")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "no such file" in result.stderr
