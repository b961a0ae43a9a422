"""The layering that docs/architecture.md states, checked on the source: lower layers never import higher ones."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
PACKAGE = CHECKOUT / "src" / "pragmeter"

# package folder -> modules it must not import (directly or lazily, anywhere in the file)
FORBIDDEN = {
    "metrics": ("pragmeter.impscore", "torch"),
    "datasets": ("pragmeter.impscore",),
    "llm": ("pragmeter.classify",),
}


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _imports(path: Path, prefix: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for name in imported_modules(path))


@pytest.mark.parametrize("package, forbidden", FORBIDDEN.items())
def test_lower_layers_do_not_import_higher_ones(package, forbidden):
    offenders = [f"{path.relative_to(PACKAGE)} imports {prefix}" for path in sorted((PACKAGE / package).rglob("*.py"))
                 for prefix in forbidden if _imports(path, prefix) and not (prefix == "torch" and path.name == "bertscore.py")]
    assert offenders == []


def test_only_the_command_layer_imports_it():
    outside = [path.relative_to(PACKAGE) for path in sorted(PACKAGE.rglob("*.py"))
               if "cli" not in path.relative_to(PACKAGE).parts and path.name != "__main__.py"
               and _imports(path, "pragmeter.cli")]
    assert outside == []


def test_no_python_file_edits_the_import_path():
    edits = []
    for path in sorted(CHECKOUT.glob("*/**/*.py")):
        if ".git" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (isinstance(node, ast.Attribute) and node.attr in ("insert", "append", "extend")
                    and ast.unparse(node.value) == "sys.path"):
                edits.append(f"{path.relative_to(CHECKOUT)}:{node.lineno}")
    assert edits == []


def test_a_backend_of_a_higher_layer_joins_llm_by_name():
    import pragmeter.classify.backend  # noqa: F401  (registers "local", as the command layer does)
    from pragmeter.errors import PragmeterError
    from pragmeter.llm.backends import available_backends, load_backend

    assert {"local", "openai-chat", "gguf"} <= set(available_backends())
    with pytest.raises(PragmeterError, match="the local backend needs a classifier folder"):
        load_backend("local", {})


def _builds_a_parser(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "ArgumentParser"
               for node in ast.walk(tree))


def _is_entry_point(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'" for node in tree.body)


def test_only_commands_and_process_entry_points_build_argument_parsers():
    """Options are parsed in cli/ (declared once in cli/common.py); elsewhere only a process entry point (a script's
    ``__main__``: benchmarks, experiments, tools, the llama.cpp child process) builds a parser of its own."""
    offenders = []
    for folder in (PACKAGE, CHECKOUT / "benchmarks", CHECKOUT / "experiments", CHECKOUT / "tools"):
        for path in sorted(folder.rglob("*.py")):
            if PACKAGE / "cli" in path.parents:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            if _builds_a_parser(tree) and not _is_entry_point(tree):
                offenders.append(str(path.relative_to(CHECKOUT)))
    assert offenders == []
