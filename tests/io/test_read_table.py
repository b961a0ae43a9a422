"""Reading a table whose bytes are not what its name says."""

from __future__ import annotations

import pandas as pd
import pytest

from pragmeter.errors import DataError
from pragmeter.io import read_table


@pytest.mark.parametrize("name", ["scores.csv", "scores.jsonl", "scores.txt"])
def test_a_parquet_file_under_a_text_name_is_named_as_parquet(tmp_path, name):
    pd.DataFrame({"text": ["It is cold in here."]}).to_parquet(tmp_path / "real.parquet")
    (tmp_path / name).write_bytes((tmp_path / "real.parquet").read_bytes())
    with pytest.raises(DataError, match=rf"{name}: a parquet file, not text; name it with the \.parquet extension"):
        read_table(tmp_path / name)


def test_a_carriage_return_inside_an_unquoted_field_is_named_not_split(tmp_path):
    source = tmp_path / "texts.csv"
    # pandas would end row 1 at the \r and make "world" a row of its own, its text missing
    source.write_bytes(b'id,text\n1,"quoted\rstays"\n2,hello\rworld\n3,ok\n')
    with pytest.raises(DataError, match=r"texts.csv: line 3: a carriage return \(\\r\) inside an unquoted field"):
        read_table(source)
    source.write_bytes(b'id,text\n1,"quoted\rstays"\n2,"say ""hi""\r"\n')  # inside quotes: part of the text
    assert read_table(source)["text"].tolist() == ["quoted\rstays", 'say "hi"\r']


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"])
def test_old_mac_and_windows_line_endings_are_rows(tmp_path, ending):
    source = tmp_path / "texts.csv"
    source.write_bytes(ending.join([b"id,text", b"1,a", b"2,b", b""]))  # \r alone: a csv module error before
    assert read_table(source).values.tolist() == [["1", "a"], ["2", "b"]]


@pytest.mark.parametrize("name, text", [("texts.csv", "text,text\na,b\n"), ("texts.tsv", "id\ttext\ttext\n1\ta\tb\n")])
def test_a_header_that_names_a_column_twice_is_refused(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=rf"{name}: header names column 'text' 2 times"):
        read_table(tmp_path / name)
