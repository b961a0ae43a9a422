"""Task discovery: every module of ``pragmeter.tasks`` lists its task classes in ``TASKS`` and may define
``GROUPS`` (a name -> task names, e.g. ``drinq`` -> the paper's two main conditions). Adding a task is adding
one module; nothing here changes."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from pragmeter.errors import InvalidParameter, PragmeterError
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


def listing() -> list[str]:
    """``pragmeter tasks``: one line per task (name, version, description; below it its arguments, and for a task that
    declares them its citation and published figures), then the groups."""
    tasks, lines = all_tasks(), []
    width = max(map(len, tasks))
    for name, cls in sorted(tasks.items()):
        lines.append(f"{name:<{width}}  v{cls.version}  {cls.description}")
        if cls.arguments:
            defaults = ", ".join(f"{k}={v!r}" for k, v in cls.arguments.items())
            lines.append(f"{'':<{width}}        arguments: {defaults}")
        if cls.published:
            lines.append(f"{'':<{width}}        citation: {cls.citation}")
            lines.extend(f"{'':<{width}}        published: {figure}" for figure in cls.published)
    return lines + [f"group {name}: {', '.join(members)}" for name, members in sorted(groups().items())]


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


def task_arguments(pairs: list[str], names: dict[str, tuple[str, ...]]) -> dict[str, dict[str, str]]:
    """``["inli.split=val"]`` -> {"inli": {"split": "val"}}; a group name applies to all its tasks."""
    by_task: dict[str, dict[str, str]] = {}
    for pair in pairs:
        target, sep, value = pair.partition("=")
        task, dot, key = target.partition(".")
        if not sep or not dot or not task or not key:
            raise InvalidParameter("task_args", pair, "is not TASK.KEY=VALUE")
        for member in names.get(task, (task,)):
            by_task.setdefault(member, {})[key] = value
    return by_task


def instantiate(names: str | list[str], task_args: list[str] = (), mode: str | None = None,
                data_root=None) -> list[Task]:
    """The tasks ``names`` lists, built with their ``TASK.KEY=VALUE`` arguments (checked now, before any request);
    ``mode`` (generate or logprob) becomes every task's ``mode`` argument unless one is given for it."""
    classes = resolve(names)
    per_task = task_arguments(list(task_args), groups())
    unknown = set(per_task) - {cls.name for cls in classes}
    if unknown:
        raise InvalidParameter("task_args", InvalidParameter.ALONE,
                               f"names task(s) not being run: {', '.join(sorted(unknown))}")
    if mode:
        without = [cls.name for cls in classes if "mode" not in cls.arguments]
        if without and mode != "generate":
            raise InvalidParameter("mode", mode, f"task(s) {', '.join(without)} have no such mode")
        for cls in classes:
            if "mode" in cls.arguments:
                per_task.setdefault(cls.name, {}).setdefault("mode", mode)
    return [cls(per_task.get(cls.name), data_root=data_root) for cls in classes]
