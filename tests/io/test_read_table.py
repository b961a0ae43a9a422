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


@pytest.mark.parametrize("name, text", [("texts.csv", "text,text\na,b\n"), ("texts.tsv", "id\ttext\ttext\n1\ta\tb\n")])
def test_a_header_that_names_a_column_twice_is_refused(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=rf"{name}: header names column 'text' 2 times"):
        read_table(tmp_path / name)
