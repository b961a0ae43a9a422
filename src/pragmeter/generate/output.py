"""``pragmeter generate PIPELINE`` (:func:`generate_file`) and what it writes: the data file (atomically) and
``<output>.report.json`` beside it (per-stage counts, model settings, prompt hashes, command), plus the default
response-cache location."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from pragmeter.errors import PragmeterError
from pragmeter.generate.session import GenerationSession, run_pipeline
from pragmeter.io import write_json_atomic, write_table
from pragmeter.llm.backends.base import ChatBackend


def default_cache(output: Path) -> Path:
    """Responses of a run writing ``out.csv`` are cached in ``out.csv.responses.jsonl`` (rerun = resume)."""
    return output.with_name(output.name + ".responses.jsonl")


def report_path(output: Path) -> Path:
    return output.with_name(output.name + ".report.json")


def incomplete(output: Path) -> bool:
    """True when ``output`` was written by a run that is not finished: its report says ``"complete": false``
    (requests failed after every retry, or no row came out). The same command replaces it without --overwrite."""
    import json

    try:
        return json.loads(report_path(output).read_text(encoding="utf-8")).get("complete") is False
    except (OSError, ValueError, AttributeError):
        return False


def check_output(output: Path, overwrite: bool) -> None:
    """Fail before any request is sent, not after hours of generation."""
    from pragmeter.io import check_output as check

    try:
        check(output, overwrite or incomplete(output))
    except PragmeterError as error:
        raise PragmeterError(f"{error} (cached answers are reused)") from None


def write_report(output: Path, session: GenerationSession, pipeline: str, rows: int, extra: dict | None = None) -> None:
    from pragmeter.provenance import RunRecord

    failed = session.failed_requests()
    write_json_atomic(report_path(output), {
        "pipeline": pipeline, "output": str(output), "rows": rows,
        # False: rerunning the same command resumes the run (asks what failed) and replaces this output
        "complete": rows > 0 and failed == 0, "failed_requests": failed, "model": session.settings(),
        "prompt_hashes": session.prompt_hashes, "stages": [c.record() for c in session.stages],
        "command": list(sys.argv), "run": RunRecord.now().to_dict(), **(extra or {}),
    })


def write_rows(frame: pd.DataFrame, output: Path, overwrite: bool, session: GenerationSession, pipeline: str,
               extra: dict | None = None) -> None:
    write_table(frame, output, overwrite=overwrite or incomplete(output))
    write_report(output, session, pipeline, len(frame), extra)
    session.say(f"{pipeline}: wrote {len(frame)} rows to {output}")


def written_records(specs: list[str]) -> list[tuple[Path, int, str, dict]]:
    """The records of model-written JSON-lines files, each named ``FILE.jsonl@PROMPT`` (the prompt file it was
    written from): (file, line number, the prompt's sha256 prefix, record) in order; a line that is not a JSON object
    is a DataError naming its file and line."""
    from pragmeter.data.root import sha256_of
    from pragmeter.io.tables import read_records

    out = []
    for spec in specs:
        path, _, prompt = spec.partition("@")
        if not prompt:
            raise PragmeterError(f"{spec!r}: name the prompt the file was written from, as FILE.jsonl@PROMPT")
        prompt_sha256 = sha256_of(Path(prompt))[:16]
        out += [(Path(path), number, prompt_sha256, record) for number, record in read_records(path)]
    return out


def read_texts(path: str | Path, column: str, say: Callable[[str], None]) -> tuple[list[int], list[str]]:
    """(data rows, texts) of the non-empty cells of ``column``; empty cells are counted, said and skipped."""
    from pragmeter.io import read_table, require_column

    values = require_column(read_table(path), column, path)
    rows, texts = [], []
    for row, value in enumerate(values):
        if isinstance(value, str) and value.strip():
            rows.append(row)
            texts.append(" ".join(value.split()))
    if len(texts) < len(values):
        say(f"input {path}: {len(values) - len(texts)} row(s) with empty {column!r} skipped")
    if not texts:
        raise PragmeterError(f"{path}: no non-empty values in column {column!r}")
    return rows, texts


def generate_file(pipeline: str, input_path: Path, output: Path, backend: Callable[[], ChatBackend],
                  cache_path: Path | None, retries: int = 2, progress: bool = True, overwrite: bool = False,
                  on_line: Callable[[str], None] | None = None, **options) -> int:
    """``pragmeter generate PIPELINE``: the pipeline coroutine ``pipeline`` (``MODULE:NAME`` in pragmeter.generate),
    called with the session, ``input_path``, ``output``, ``overwrite`` and ``options``, run by :func:`run_pipeline`.
    The output is checked before ``backend()`` builds the chat backend; ``on_line`` receives the run's counts, a
    line at a time (default: the ``pragmeter`` logger). Returns the number of requests that failed
    after every retry (the output is then marked incomplete, and a rerun retries them)."""
    module, name = pipeline.split(":")
    function = getattr(importlib.import_module(f"pragmeter.generate.{module}"), name)
    check_output(output, overwrite)
    _, session = run_pipeline(lambda session, out: function(session, input_path=input_path, output=out,
                                                            overwrite=overwrite, **options),
                              backend(), output, cache_path, retries, progress=progress, on_line=on_line)
    return session.failed_requests()
