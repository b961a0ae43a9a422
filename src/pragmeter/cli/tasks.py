"""``pragmeter tasks``: the benchmark tasks and groups ``pragmeter eval`` can run, with their versions."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser("tasks", help="list the benchmark tasks with their versions",
                                   description="List evaluation tasks (name, version, description, arguments) "
                                               "and task groups.")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.eval import registry

    tasks = registry.all_tasks()
    width = max(map(len, tasks))
    for name, cls in sorted(tasks.items()):
        print(f"{name:<{width}}  v{cls.version}  {cls.description}")
        if cls.arguments:
            defaults = ", ".join(f"{k}={v!r}" for k, v in cls.arguments.items())
            print(f"{'':<{width}}        arguments: {defaults}")
    for name, members in sorted(registry.groups().items()):
        print(f"group {name}: {', '.join(members)}")
    return 0
