"""The generation prompts shipped in ``pragmeter/generate/prompts`` (sources cited in its README).

The INLI upstream files are Python assignments (``name = <triple-quoted text>``, ``prefix.format("...") + <text>``); they
are read with :func:`python_prompts`, which evaluates only string literals, ``+`` and ``.format`` with literal
arguments (never executes the file). Placeholders are filled left to right with :func:`fill`.
"""

from __future__ import annotations

import ast
from functools import cache
from importlib import resources

from pragmeter.errors import PragmeterError
from pragmeter.text import text_hash


@cache
def prompt_text(name: str) -> str:
    return resources.files("pragmeter.generate").joinpath("prompts", name).read_text(encoding="utf-8")


def prompt_hash(text: str) -> str:
    """First 16 hex digits of the template's sha256: written on every generated row."""
    return text_hash(text)[:16]


def _literal(node: ast.AST, names: dict[str, str], where: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, names, where) + _literal(node.right, names, where)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and not node.keywords):
        return fill(_literal(node.func.value, names, where), *(_literal(a, names, where) for a in node.args))
    raise PragmeterError(f"{where}: line {getattr(node, 'lineno', '?')}: not a plain string expression")


@cache
def python_prompts(name: str) -> dict[str, str]:
    """Every ``NAME = <string expression>`` of a shipped prompt file; a later assignment replaces an earlier one."""
    names: dict[str, str] = {}
    for statement in ast.parse(prompt_text(name)).body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            names[statement.targets[0].id] = _literal(statement.value, names, name)
    return names


def fill(template: str, *values: str) -> str:
    """Replace the ``{}`` placeholders in order (values are inserted verbatim, braces in them are harmless)."""
    parts = template.split("{}")
    if len(parts) != len(values) + 1:
        raise ValueError(f"template has {len(parts) - 1} placeholder(s), got {len(values)} value(s)")
    out = [parts[0]]
    for value, part in zip(values, parts[1:]):
        out += [value, part]
    return "".join(out)
