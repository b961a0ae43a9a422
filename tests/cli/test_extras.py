"""A command whose optional dependencies (an extra of pyproject.toml) are not installed says so in one line, naming
the install command, when it starts: before any text is scored, any task read or any output made."""

from __future__ import annotations

import sys

import pytest

from pragmeter.cli import main


def _install(extra: str) -> str:
    return f'pip install -e ".[{extra}]" in the checkout (or pip install "pragmeter[{extra}]")'


@pytest.mark.parametrize("argv, absent, extra", [
    (["eval", "--tasks", "inli", "--no-progress"], "httpx", "harness"),
    (["eval", "--tasks", "inli", "--model", "gguf:qwen2.5-coder-1.5b"], "xllamacpp", "llm"),
    (["serve", "--port", "0"], "fastapi", "serve"),
    (["analyze", "profile", "--input", "TEXTS"], "matplotlib", "analysis"),
    (["analyze", "stratify", "--input", "TEXTS", "--score-column", "s"], "matplotlib", "analysis"),
    (["classifier", "train", "ishate-b", "--head", "svm"], "sklearn", "classify"),
])
def test_a_missing_extra_is_one_line_at_the_start(tmp_path, monkeypatch, capsys, argv, absent, extra):
    texts = tmp_path / "texts.csv"
    texts.write_text("text,label\nThe weather is lovely.,a\nWhat a lovely day it was.,b\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, absent, None)  # as if not installed: find_spec and import both fail
    output = tmp_path / "out"
    argv = [str(texts) if arg == "TEXTS" else arg for arg in argv] + (["--output", str(output)]
                                                                         if argv[0] != "serve" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"pragmeter {argv[0]}: error: this needs the '{extra}' extra ({absent} is not "
                                f"installed): {_install(extra)}"]
    assert not output.exists()  # nothing made before the check
