"""The listing commands print what the library registers: ``pragmeter tasks`` every task (name, version, arguments)
then every group, ``pragmeter impscore models`` the catalogue with the default first."""

from __future__ import annotations

from pragmeter.cli import main
from pragmeter.eval import registry


def test_tasks_lists_every_task_with_its_version_then_the_groups(capsys):
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    tasks = registry.all_tasks()
    assert [line.split()[0] for line in lines if not line.startswith((" ", "group "))] == sorted(tasks)
    inli = next(line for line in lines if line.startswith("inli "))
    assert f"v{tasks['inli'].version}  {tasks['inli'].description}" in inli
    assert [line for line in lines if line.startswith("group ")] == [
        f"group {name}: {', '.join(members)}" for name, members in sorted(registry.groups().items())]


def test_models_lists_the_default_first_then_each_purpose(capsys):
    from pragmeter.impscore.catalogue import catalogue

    assert main(["impscore", "models"]) == 0
    out = capsys.readouterr().out
    rows = catalogue()
    table, purposes = out.split("\n\n")
    assert table.splitlines()[2].startswith(f"| **{rows[0]['name']}** (default) |")
    assert len(table.splitlines()) == 2 + len(rows)
    assert purposes.splitlines()[0].startswith(f"{rows[0]['name']}: ")
