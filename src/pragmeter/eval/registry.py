"""Task discovery: every module of ``pragmeter.tasks`` lists its task classes in ``TASKS`` and may define
``GROUPS`` (a name -> task names, e.g. ``drinq`` -> the paper's two main conditions). Adding a task is adding
one module; nothing here changes."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from pragmeter.errors import PragmeterError
from pragmeter.eval.task import Task


@cache
def _discover() -> tuple[dict[str, type[Task]], dict[str, tuple[str, ...]]]:
    import pragmeter.tasks as package

    tasks: dict[str, type[Task]] = {}
    groups: dict[str, tuple[str, ...]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for cls in getattr(module, "TASKS", ()):
            if cls.name in tasks:
                raise RuntimeError(f"task name {cls.name!r} defined twice ({module.__name__})")
            tasks[cls.name] = cls
        groups.update({k: tuple(v) for k, v in getattr(module, "GROUPS", {}).items()})
    return tasks, groups


def all_tasks() -> dict[str, type[Task]]:
    return dict(_discover()[0])


def groups() -> dict[str, tuple[str, ...]]:
    return dict(_discover()[1])


def resolve(names: str | list[str]) -> list[type[Task]]:
    """Task classes for comma-separated task or group names, in order, without duplicates."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    tasks, known_groups = _discover()
    chosen: list[type[Task]] = []
    for name in names:
        members = known_groups.get(name, (name,))
        for member in members:
            if member not in tasks:
                available = ", ".join(sorted([*tasks, *known_groups]))
                raise PragmeterError(f"unknown task {member!r}; available: {available}")
            if tasks[member] not in chosen:
                chosen.append(tasks[member])
    if not chosen:
        raise PragmeterError("no task given; list them with `pragmeter tasks`")
    return chosen
