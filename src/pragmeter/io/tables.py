"""Tables from user files. Formats are chosen by extension: .txt (one text per line), .csv, .tsv, .jsonl, .parquet.

Errors name the file and the position (line, byte offset or row) and are raised as DataError, never as tracebacks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from pragmeter.errors import DataError, PragmeterError
from pragmeter.io.atomic import atomic_path

FORMATS = (".txt", ".csv", ".tsv", ".jsonl", ".parquet")


def table_format(path: Path) -> str:
    fmt = path.suffix.lower()  # the last suffix only: x.txt.csv is a CSV file
    if fmt in FORMATS:
        return fmt
    raise DataError(f"{path}: unknown file type; use one of {', '.join(FORMATS)}")


def _check_utf8(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DataError(
            f"{path}: not valid UTF-8 at byte {error.start} (line {line}); re-save the file as UTF-8"
        ) from None


def jsonl_records(path: Path, text: str | None = None) -> list[dict]:
    """The JSON objects of a JSON-lines file (``text``: its content, already read), one per non-blank line."""
    rows = []
    for number, line in enumerate((_check_utf8(path) if text is None else text).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"{path}: line {number}: invalid JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}: line {number}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a user table; every column is kept, strings stay strings (no type guessing on text)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    fmt = table_format(path)
    try:
        if fmt == ".parquet":
            return pd.read_parquet(path)
        text = _check_utf8(path)
        if fmt == ".txt":
            lines = text.splitlines()
            return pd.DataFrame({"text": lines})
        if fmt == ".jsonl":
            return pd.DataFrame(jsonl_records(path, text))
        sep = "\t" if fmt == ".tsv" else ","
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""])
    except PragmeterError:
        raise
    except (pd.errors.ParserError, ValueError, OSError) as error:
        raise DataError(f"{path}: cannot be read as {fmt[1:]}: {error}".replace("\n", " ")) from None


def require_column(frame: pd.DataFrame, column: str, path: str | os.PathLike) -> pd.Series:
    if column not in frame.columns:
        available = ", ".join(map(str, frame.columns)) or "(none)"
        raise DataError(f"{path}: no column {column!r}; available columns: {available}")
    return frame[column]


def write_table(frame: pd.DataFrame, path: str | os.PathLike, overwrite: bool = False) -> None:
    """Write atomically in the format given by the extension; refuse to replace a file unless ``overwrite``."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise PragmeterError(f"{path} exists; pass --overwrite to replace it")
    fmt = table_format(path)
    with atomic_path(path) as tmp:
        if fmt == ".parquet":
            frame.to_parquet(tmp, index=False)
        elif fmt == ".jsonl":
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        elif fmt == ".txt":
            raise PragmeterError(f"{path}: .txt output cannot hold several columns; use csv, tsv, jsonl or parquet")
        else:
            frame.to_csv(tmp, sep="\t" if fmt == ".tsv" else ",", index=False)
