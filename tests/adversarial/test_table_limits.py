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
