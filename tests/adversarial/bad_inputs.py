"""The bad-input corpus: files a hostile or careless user gives pragmeter, built for any reader's columns.

A case is written for a reader as a table whose columns are the reader's (``good`` values cycled over the rows)
with the case's values in the reader's text ``field``; structural cases (encoding, parsing, paths) break the file
itself. Each case says what a reader must do with it: ``Error(pattern)`` (exit 2, one line naming the file and
the position) or ``Rows(n, bad)`` (every row read, in order, the ``bad`` ones marked, skipped with a count, or
refused, as the reader's policy says).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

GOOD = ["It is cold in here.", "Could you pass the salt?", "Nice weather we are having, isn't it?",
        "I would not eat that if I were you.", "Some people just never learn."]
HUGE = ("word " * 20_000).strip()  # 99,999 characters: far past any encoder's token limit
CONTROLS = ["Right-to-left \u202e override and zero\u200bwidth", "\x1b[31mterminal colour\x1b[0m escape",
            "bell \x07 and form\x0cfeed and line\u2028separator", "\ufeffa byte-order mark inside"]


@dataclass(frozen=True)
class Error:
    pattern: str  # regular expression the one-line message must match (besides naming the file)


@dataclass(frozen=True)
class Rows:
    n: int  # rows the reader must read, in order
    bad: tuple[int, ...] = ()  # 0-based rows with no usable text in the field


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path, dict, str], Path]
    expect: Error | Rows | None  # None: the reader's own value policy decides (see readers)
    value_case: bool = False  # the file is well formed; only the field's values are bad
    default: Error | Rows | None = field(default=None)


def _good(good: dict[str, list], field_: str, *rows: int) -> list:
    """The reader's own good values of its field (texts, numbers...) for these rows."""
    return [good[field_][row % len(good[field_])] for row in rows]


def _frame(good: dict[str, list], field_: str, values: list) -> pd.DataFrame:
    columns = {}
    for name, options in good.items():
        columns[name] = values if name == field_ else [options[i % len(options)] for i in range(len(values))]
    return pd.DataFrame(columns)


def _csv(path: Path, frame: pd.DataFrame) -> Path:
    frame.to_csv(path, index=False)
    return path


def _write(path: Path, data: bytes | str) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def _header(good: dict) -> str:
    return ",".join(good) + "\n"


def build_empty(d, good, f):
    return _write(d / "empty.csv", b"")


def build_header_only(d, good, f):
    return _write(d / "header_only.csv", _header(good))


def build_blanks(d, good, f):
    return _csv(d / "blanks.csv", _frame(good, f, [*_good(good, f, 0), "", "   ", *_good(good, f, 1)]))


def build_nan(d, good, f):
    rows = _frame(good, f, [*_good(good, f, 0), math.nan, None, *_good(good, f, 1)]).to_dict("records")
    text = "".join(json.dumps(row) + "\n" for row in rows)  # json writes NaN for a float NaN
    return _write(d / "nan.jsonl", text)


def build_huge(d, good, f):
    return _csv(d / "huge.csv", _frame(good, f, [*_good(good, f, 0), HUGE, *_good(good, f, 1)]))


def build_controls(d, good, f):
    return _csv(d / "controls.csv", _frame(good, f, list(CONTROLS)))


def build_bom(d, good, f):
    text = _frame(good, f, _good(good, f, 0, 1, 2)).to_csv(index=False)
    return _write(d / "bom.csv", "\ufeff" + text)


def build_latin1(d, good, f):
    text = _frame(good, f, [*_good(good, f, 0), "Un café crème, s'il vous plaît."]).to_csv(index=False)
    return _write(d / "latin1.csv", text.encode("latin-1"))


def build_binary(d, good, f):
    return _write(d / "binary.csv", bytes(range(256)) * 8)


def build_nul(d, good, f):
    text = _frame(good, f, [*_good(good, f, 0), "a NUL \x00 inside"]).to_csv(index=False)
    return _write(d / "nul.csv", text)


def build_wrong_column(d, good, f):
    frame = _frame(good, f, _good(good, f, 0, 1, 2)).rename(columns={f: "wrong_name"})
    return _csv(d / "wrong_column.csv", frame)


def build_ragged(d, good, f):
    frame = _frame(good, f, _good(good, f, 0, 1, 2))
    handle = io.StringIO()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(frame.columns)
    for row, values in enumerate(frame.itertuples(index=False)):
        writer.writerow([*values, "an extra field"] if row == 1 else values)
    return _write(d / "ragged.csv", handle.getvalue())


def build_broken_jsonl(d, good, f):
    rows = _frame(good, f, _good(good, f, 0, 1, 2)).to_dict("records")
    text = json.dumps(rows[0]) + "\n" + json.dumps(rows[1])[:-7] + "\n" + json.dumps(rows[2]) + "\n"
    return _write(d / "broken.jsonl", text)


def build_jsonl_wrong_shape(d, good, f):
    return _write(d / "wrong_shape.jsonl", '["a", "list", "not an object"]\n["another"]\n')


def build_fake_parquet(d, good, f):
    return _write(d / "fake.parquet", _frame(good, f, _good(good, f, 0, 1, 2)).to_csv(index=False))


def build_directory(d, good, f):
    path = d / "a_folder.csv"
    path.mkdir()
    return path


def build_unreadable(d, good, f):
    path = _csv(d / "unreadable.csv", _frame(good, f, _good(good, f, 0, 1, 2)))
    path.chmod(0)
    return path


def build_missing(d, good, f):
    return d / "does_not_exist.csv"


NOT_UTF8 = r"not valid UTF-8 at byte \d+ \(line \d+\)"
CASES = [
    Case("empty", build_empty, Error(r"empty file")),
    Case("header_only", build_header_only, Error(r"no data rows \(header only")),
    Case("blanks", build_blanks, None, value_case=True, default=Rows(4, (1, 2))),
    Case("nan", build_nan, None, value_case=True, default=Rows(4, (1, 2))),
    Case("huge", build_huge, None, value_case=True, default=Rows(3)),
    Case("controls", build_controls, None, value_case=True, default=Rows(4)),
    Case("bom", build_bom, None, value_case=True, default=Rows(3)),
    Case("latin1", build_latin1, Error(r"not valid UTF-8 at byte \d+ \(line \d+\)")),
    Case("binary", build_binary, Error(NOT_UTF8)),
    Case("nul", build_nul, Error(r"NUL byte at line \d+")),
    Case("wrong_column", build_wrong_column, Error(r"no column '{field}'; available columns: .*wrong_name")),
    Case("ragged", build_ragged, Error(r"cannot be read as csv: Expected \d+ fields in line \d+, saw \d+")),
    Case("broken_jsonl", build_broken_jsonl, Error(r"line 2: invalid JSON")),
    Case("jsonl_wrong_shape", build_jsonl_wrong_shape, Error(r"line 1: expected a JSON object, got a list")),
    Case("fake_parquet", build_fake_parquet, Error(r"not a parquet file")),
    Case("directory", build_directory, Error(r"is a folder; expected a file")),
    Case("unreadable", build_unreadable, Error(r"cannot be read \(Permission denied\)")),
    Case("missing", build_missing, Error(r"no such file")),
]


# ------------------------------------------------------------------------------------------- running a case
@contextmanager
def as_unprivileged_user():
    """Root reads mode-000 files anyway; drop to 'nobody' (effective uid only) so permissions apply. The installed
    modules of pragmeter's extras are imported first: where Python lives under a private home (/root, mode 700),
    'nobody' cannot even find them, and a command would say its extra is not installed instead of reading the file."""
    if os.geteuid() != 0:
        yield
        return
    import importlib
    from importlib.util import find_spec

    from pragmeter.cli.common import EXTRAS

    for module in dict.fromkeys(name for names in EXTRAS.values() for name in names):
        if find_spec(module) is not None:
            importlib.import_module(module)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


def run(argv: list, capsys) -> tuple[int, str, str]:
    """The command through the CLI's main() in this process: (exit code, stdout, stderr)."""
    from pragmeter.cli import main

    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, path: Path, pattern: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    message = lines[-1]
    assert message.startswith("pragmeter ") and ": error: " in message, err
    assert str(path) in message, message
    assert re.search(pattern, message), (pattern, message)
