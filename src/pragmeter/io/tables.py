"""The one reader of user files: tables (.txt one text per line, .csv, .tsv, .jsonl, .parquet), JSON documents
and JSON-lines records, and standard input's lines. Every command that reads a file a user gives goes through here.

What cannot be read is a DataError whose one-line message names the file and the position (line, byte, row) and,
where it applies, the field; it is never a traceback. What can be read is returned whole and in order: values are
not guessed (text stays text, "NaN" in a CSV is the text "NaN"), nothing is dropped; commands mark rows they
cannot use instead of skipping them.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from pragmeter.errors import DataError, OutputExists, PragmeterError
from pragmeter.io.atomic import atomic_path
from pragmeter.text import is_blank

log = logging.getLogger("pragmeter")

FORMATS = (".txt", ".csv", ".tsv", ".jsonl", ".parquet")
MAX_COLUMNS = 16_384  # a spreadsheet's limit: a table of more columns is refused before it is read into a frame


def _check_columns(path: Path, count: int) -> None:
    if count > MAX_COLUMNS:
        raise DataError(f"{path}: {count} columns; a table may have at most {MAX_COLUMNS}")


def table_format(path: Path) -> str:
    fmt = path.suffix.lower()  # the last suffix only: x.txt.csv is a CSV file
    if fmt in FORMATS:
        return fmt
    raise DataError(f"{path}: unknown file type; use one of {', '.join(FORMATS)}")


def check_input(path: str | os.PathLike, folder: bool = False) -> Path:
    """The path of an input the user named: it exists, is a file (a folder when ``folder``) and can be read."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such {'folder' if folder else 'file'}")
    if folder and not path.is_dir():
        raise DataError(f"{path}: is a file; expected a folder")
    if not folder and path.is_dir():
        raise DataError(f"{path}: is a folder; expected a file")
    if not folder and not path.is_file():
        raise DataError(f"{path}: not a regular file")
    return path


def read_bytes(path: str | os.PathLike) -> bytes:
    path = check_input(path)
    try:
        return path.read_bytes()
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror or error})") from None


BINARY_TABLES = [(b"PAR1", "parquet", ".parquet")]  # leading bytes of table formats read_table knows by extension


def read_text(path: str | os.PathLike) -> str:
    """A UTF-8 text file (a leading byte-order mark is dropped); binary or other encodings are named by position."""
    path = Path(path)
    raw = read_bytes(path)
    for magic, kind, suffix in BINARY_TABLES:  # a table in a binary format under a text name
        if raw.startswith(magic):
            raise DataError(f"{path}: a {kind} file, not text; name it with the {suffix} extension")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise DataError(
            f"{path}: not valid UTF-8 at byte {error.start} (line {line}); re-save the file as UTF-8"
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DataError(f"{path}: NUL byte at line {line}; a binary file, not text")
    return text.removeprefix("\ufeff")


def lines(text: str) -> list[str]:
    """Lines split at \n (and \r\n) only: str.splitlines would also split at form feeds, U+2028 and other
    characters that are legal inside a text or a JSON string, and so change the rows."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [part.removesuffix("\r") for part in parts]


def stdin_lines(stream: BinaryIO | None = None, name: str = "standard input") -> Iterator[str]:
    """The lines of ``stream`` (default: standard input, as bytes), one at a time as they arrive: UTF-8 (a leading
    byte-order mark dropped), split at \n only and a \r\n ending removed, as :func:`lines` does. A line that is not
    UTF-8 or holds a NUL byte is a DataError naming ``name`` and the line."""
    stream = sys.stdin.buffer if stream is None else stream
    for number, raw in enumerate(stream, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataError(f"{name}: not valid UTF-8 at line {number} (byte {error.start} of the line)") from None
        if "\x00" in line:
            raise DataError(f"{name}: NUL byte at line {number}; binary data, not text")
        yield (line.removeprefix("\ufeff") if number == 1 else line).removesuffix("\n").removesuffix("\r")


def _json_error(path: Path, error: json.JSONDecodeError, line: int | None = None) -> DataError:
    where = f"line {line}" if line is not None else f"line {error.lineno}, column {error.colno}"
    return DataError(f"{path}: {where}: invalid JSON ({error.msg})")


def _json_value(path: Path, text: str, line: int | None = None) -> object:
    """``text`` parsed as JSON; what Python's parser refuses besides syntax (a number of more digits than it
    converts, nesting deeper than its recursion limit) is a DataError naming the file and line, not a traceback."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _json_error(path, error, line) from None
    except (ValueError, RecursionError) as error:
        why = ("a number of more than {:,} digits".format(sys.get_int_max_str_digits()) if isinstance(error, ValueError)
               else "nested too deeply")
        raise DataError(f"{path}: {f'line {line}: ' if line is not None else ''}invalid JSON ({why})") from None


def read_json(path: str | os.PathLike, expect: type | None = None, what: str = "") -> object:
    """One JSON document; ``expect`` (dict or list) checks its top-level shape, ``what`` describes it in errors."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise DataError(f"{path}: empty file; expected {what or 'JSON'}")
    payload = _json_value(path, text)
    if expect is not None and not isinstance(payload, expect):
        shape = {dict: "an object", list: "a list"}.get(expect, expect.__name__)
        raise DataError(f"{path}: expected {shape}{' (' + what + ')' if what else ''} at the top level, "
                        f"got {_kind(payload)}")
    return payload


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def read_records(path: str | os.PathLike) -> list[tuple[int, dict]]:
    """JSON-lines records as (line number, object); blank lines are allowed, anything else that is not an object
    is an error naming its line."""
    path = Path(path)
    records = []
    for number, line in enumerate(lines(read_text(path)), start=1):
        if not line.strip():
            continue
        record = _json_value(path, line, number)
        if not isinstance(record, dict):
            raise DataError(f"{path}: line {number}: expected a JSON object, got {_kind(record)}")
        records.append((number, record))
    return records


def jsonl_records(path: str | os.PathLike) -> list[dict]:
    """The JSON objects of a JSON-lines file, one per non-blank line (``read_records`` without line numbers)."""
    return [record for _, record in read_records(path)]


def _unquoted_lone_cr(text: str) -> int | None:
    """Where a \r that is not part of \r\n stands outside quotes in a file whose lines end in \n (None: nowhere).
    pandas ends the row there too, and the rest of the cell becomes a row of its own, shifted into the first column."""
    if "\n" not in text:  # lone \r is then the file's line ending (old Mac files), which pandas reads
        return None
    quotes, counted = 0, 0
    for match in re.finditer(r"\r(?!\n)", text):
        quotes, counted = quotes + text.count('"', counted, match.start()), match.start()
        if quotes % 2 == 0:
            return match.start()
    return None


def _read_delimited(path: Path, text: str, sep: str) -> pd.DataFrame:
    # pandas renames a repeated header name (text, text.1): which one a --column means would be a guess
    header = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    _check_columns(path, len(header))
    counts = Counter(header)  # one pass: a header of many columns is checked in linear time
    repeated = sorted(name for name, count in counts.items() if count > 1 and name.strip())
    if repeated:
        raise DataError(f"{path}: header names column {repeated[0]!r} {counts[repeated[0]]} times; "
                        "give each column its own name")
    lone = _unquoted_lone_cr(text)
    if lone is not None:
        raise DataError(f"{path}: line {text.count(chr(10), 0, lone) + 1}: a carriage return (\\r) inside an unquoted "
                        "field would split its row in two; quote the field or remove the character")
    try:
        # skip_blank_lines=False: in a one-column file an empty cell is an empty line, and it is a row
        return pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                           skip_blank_lines=False)
    except pd.errors.ParserError as error:
        # "Error tokenizing data. C error: Expected 2 fields in line 3, saw 3" -> the part after "C error: "
        message = str(error).split("C error: ")[-1].strip().rstrip(".")
        raise DataError(f"{path}: cannot be read as {'tsv' if sep == chr(9) else 'csv'}: {message}") from None


def _read_parquet(path: Path) -> pd.DataFrame:
    raw = read_bytes(path)
    if len(raw) < 12 or raw[:4] != b"PAR1" or raw[-4:] != b"PAR1":
        raise DataError(f"{path}: not a parquet file (no PAR1 marker); is it a text file with the wrong extension?")
    try:
        import pyarrow.parquet as pq

        _check_columns(path, pq.read_metadata(io.BytesIO(raw)).num_columns)
        return pd.read_parquet(io.BytesIO(raw))
    except (ValueError, OSError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise DataError(f"{path}: damaged parquet file ({str(error).splitlines()[0]})") from None


_WHOLE_NUMBER = re.compile(r"0|-?[1-9][0-9]{0,17}")  # as a writer prints one: no sign, leading zero or exponent


def _whole_numbers(frame: pd.DataFrame, text_columns) -> pd.DataFrame:
    """``frame`` (read from csv/tsv, every cell a string) with each column outside ``text_columns`` whose every
    non-missing cell is a whole number as written by a program (e.g. an integer id) read as integers (nullable
    Int64), so it is written back as the type it had; any other column stays text ("007" keeps its zeros)."""
    for name in frame.columns:
        if name in text_columns:
            continue
        cells = frame[name].dropna()
        if len(cells) and all(isinstance(cell, str) and _WHOLE_NUMBER.fullmatch(cell) for cell in cells):
            frame[name] = frame[name].astype("Int64")
    return frame


def read_table(path: str | os.PathLike, allow_empty: bool = False, text_columns=None) -> pd.DataFrame:
    """Read a user table; every column and row is kept in order, strings stay strings (no type guessing on text).

    A file with no data rows (empty, or a header only) is an error unless ``allow_empty``. ``text_columns`` given
    (the columns read as text, e.g. the one scored): a csv/tsv column outside them that holds only whole numbers
    is read as integers, the type a parquet or JSON-lines file would have kept.
    """
    path = check_input(path)
    fmt = table_format(path)
    if fmt == ".parquet":
        frame = _read_parquet(path)
    else:
        text = read_text(path)
        if not text.strip():
            if allow_empty:
                return pd.DataFrame({"text": []}) if fmt == ".txt" else pd.DataFrame()
            raise DataError(f"{path}: empty file")
        if fmt == ".txt":
            frame = pd.DataFrame({"text": lines(text)}, dtype=object)
        elif fmt == ".jsonl":
            records, keys = [], set()
            for _, record in read_records(path):
                keys.update(record)
                _check_columns(path, len(keys))
                records.append(record)
            frame = pd.DataFrame(records)
        else:
            frame = _read_delimited(path, text, "\t" if fmt == ".tsv" else ",")
            if text_columns is not None:
                frame = _whole_numbers(frame, set(text_columns))
    if frame.empty and len(frame) == 0 and not allow_empty:
        columns = ", ".join(map(str, frame.columns))
        raise DataError(f"{path}: no data rows" + (f" (header only: {columns})" if columns else ""))
    return frame


def require_column(frame: pd.DataFrame, column: str, path: str | os.PathLike) -> pd.Series:
    if column not in frame.columns:
        available = ", ".join(map(str, frame.columns)) or "(none)"
        raise DataError(f"{path}: no column {column!r}; available columns: {available}")
    return frame[column]


def numeric_column(series: pd.Series, column: str, path: str | os.PathLike) -> pd.Series:
    """A column as numbers: blank cells are missing (NaN), any other non-number is an error naming its row."""
    series = series.mask(series.map(is_blank))  # blank = missing
    values = pd.to_numeric(series, errors="coerce")
    bad = series.notna() & values.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{path}: data row {row + 1}: column {column!r} is {series.iloc[row]!r}, not a number")
    return values


def check_output(path: str | os.PathLike, overwrite: bool) -> Path:
    """Refuse to replace an existing output unless ``overwrite``: checked before any work, not after it."""
    path = Path(path)
    if path.is_dir():
        raise PragmeterError(f"{path} is a folder; give a file name for the output")
    if path.exists() and not overwrite:
        raise OutputExists(path)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # the folders that writing it would create
        folder = folder.parent
    if not folder.is_dir():
        raise PragmeterError(f"{path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PragmeterError(f"{path}: cannot write in {folder} (permission denied)")
    return path


def check_outputs(paths: Iterable[str | os.PathLike], overwrite: bool) -> None:
    """:func:`check_output` for each file a command writes into a folder, all before any work: a run interrupted
    before writing them wrote none, so rerunning it resumes through the caches."""
    for path in paths:
        check_output(path, overwrite)


def report_rows(errors: list[str], done: str, output: str | os.PathLike, error_column: str,
                first: Callable[[int, str], str]) -> int:
    """Say "DONE n of N rows -> OUTPUT" (the ``pragmeter`` logger) for a table a command wrote row by row
    (``errors``: each row's reason, empty when it went through) and, where rows failed, a warning naming the first
    (``first(row, reason)`` says where it is); the number of rows that failed."""
    failed = sum(map(bool, errors))
    log.info(f"{done} {len(errors) - failed} of {len(errors)} rows -> {output}")
    if failed:
        row = next(i for i, error in enumerate(errors) if error)
        log.warning(f"warning: {failed} row(s) not {done} (reason in column '{error_column}'; first: "
                    f"{first(row, errors[row])})")
    return failed


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula (OWASP)
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralise_formula(value):
    """A text cell a spreadsheet would run as a formula (``=HYPERLINK(…)``, ``+cmd|…``, ``@SUM(…)``: one starting
    with FORMULA_STARTS) with a ``'`` before it, so it shows as text, as OWASP advises for CSV output; a plain number
    (``-0.5``) and anything that is not text as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _without_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell and column name through :func:`neutralise_formula` (a copy when any changes)."""
    columns = [name for name in frame.columns if not pd.api.types.is_numeric_dtype(frame[name])
               and frame[name].map(lambda v: neutralise_formula(v) is not v).any()]
    names = [neutralise_formula(name) for name in frame.columns]
    if not columns and names == list(frame.columns):
        return frame
    frame = frame.copy()
    for name in columns:
        frame[name] = frame[name].map(neutralise_formula)
    frame.columns = names
    return frame


def write_table(frame: pd.DataFrame, path: str | os.PathLike, overwrite: bool = False) -> None:
    """Write atomically in the format given by the extension; refuse to replace a file unless ``overwrite``. In csv
    and tsv (which spreadsheets open) a text cell that would run as a formula gets a ``'`` before it
    (:func:`neutralise_formula`); parquet and JSON lines keep every value as it is."""
    path = check_output(path, overwrite)
    fmt = table_format(path)
    if fmt == ".txt":
        raise PragmeterError(f"{path}: .txt output cannot hold several columns; use csv, tsv, jsonl or parquet")
    with atomic_path(path) as tmp:
        if fmt == ".parquet":
            frame.to_parquet(tmp, index=False)
        elif fmt == ".jsonl":
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        else:
            frame = _without_formulas(frame)
            # pandas quotes a cell with \n but not one with a lone \r, which a reader then takes as a line break
            carriage = any(frame[c].map(lambda v: isinstance(v, str) and "\r" in v).any()
                           for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]))
            quoting = csv.QUOTE_ALL if carriage else csv.QUOTE_MINIMAL
            frame.to_csv(tmp, sep="\t" if fmt == ".tsv" else ",", index=False, quoting=quoting)


def item_text(path, index: int, field: str, value) -> str:
    """A non-empty string field of item ``index`` of a JSON document, else a DataError naming file, item and field."""
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{path}: item {index}, field {field!r}: expected a non-empty string")
    return value


def choice_fields(path, index: int, item) -> tuple[list[str], int]:
    """The checked ``options`` (two or more non-empty strings) and ``answer`` (an index into them) of a multiple-choice
    item of a JSON document; a DataError names file, item and field."""
    if not isinstance(item, dict):
        raise DataError(f"{path}: item {index}: expected an object")
    options = item.get("options")
    if not isinstance(options, list) or len(options) < 2:
        raise DataError(f"{path}: item {index}, field 'options': expected a list of at least 2 sentences")
    answer = item.get("answer")
    if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(options):
        raise DataError(f"{path}: item {index}, field 'answer': expected an index from 0 to {len(options) - 1}")
    return [item_text(path, index, f"options[{i}]", o) for i, o in enumerate(options)], answer
