"""The README's front page agrees with the program: its command table names every command the parser has (and no
other), its example commands parse, and the model list it shows is what ``pragmeter impscore models`` prints."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from pragmeter.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def doc_pages() -> list[Path]:
    """The README and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every runnable command path of the parser, e.g. 'impscore evaluate ranking'."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        return {" ".join(prefix)}
    return set().union(*(leaf_commands(sub, (*prefix, name)) for name, sub in actions[0].choices.items()))


def table_commands() -> set[str]:
    """Command paths of the README's command table (``a b|c`` rows expand to ``a b`` and ``a c``)."""
    commands = set()
    for row in re.findall(r"^\| `([a-z][^`]*)` \|", README, re.M):
        *head, last = [word for word in row.replace("\\|", "|").split() if re.fullmatch(r"[a-z0-9|-]+", word)]
        commands |= {" ".join([*head, choice]) for choice in last.split("|")}
    return commands


def test_the_command_table_lists_every_command():
    assert table_commands() == leaf_commands(build_parser())


def example_lines() -> list[tuple[str, str]]:
    """(command, its comment) of every ``pragmeter …`` line of the README's bash blocks."""
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    lines = [(re.split(r"\s{2,}#", line) + [""])[:2] for block in blocks
             for line in block.replace("\\\n", " ").splitlines()]
    return [(line.strip(), comment) for line, comment in lines
            if line.strip().startswith("pragmeter ") and "|" not in line and "$" not in line]


def test_every_example_command_parses():
    parser = build_parser()
    examples = example_lines()
    assert len(examples) >= 10
    for line, _ in examples:
        parser.parse_args(shlex.split(line)[1:])


def test_every_example_command_has_its_extra_from_the_install_line_or_says_which():
    """The README's commands run in order after its install line: the extras they need are in it, or the line says
    which extra it needs."""
    from pragmeter.cli.common import needed_extras

    install = re.search(r'pip install -e "\.\[([a-z,]+)\]"', README)
    installed = set(install.group(1).split(",")) if install else set()
    parser = build_parser()
    lacking = [(line, extra) for line, comment in example_lines()
               for extra in needed_extras(parser.parse_args(shlex.split(line)[1:]))
               if extra not in installed and f"{extra} extra" not in comment]
    assert not lacking


def test_the_model_list_shown_is_what_the_program_prints(capsys, monkeypatch):
    monkeypatch.delenv("PRAGMETER_IMPSCORE", raising=False)  # the suite points it at a model of its own
    assert main(["impscore", "models"]) == 0
    printed = capsys.readouterr().out
    shown = re.search(r"\$ pragmeter impscore models\n(.*?)```", README, re.S).group(1)
    assert [line.rstrip() for line in shown.splitlines()] == [line.rstrip() for line in printed.splitlines()]


def test_the_data_page_lists_every_data_set_of_the_manifest():
    from pragmeter.data.check import datasets

    page = (Path(__file__).resolve().parents[2] / "docs" / "data.md").read_text(encoding="utf-8")
    assert set(re.findall(r"^\| `([a-z0-9_]+)` \| \d+ \|", page, re.M)) == set(datasets())


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces as hyphens)."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in markdown.splitlines() if line.startswith("#")}


def table_cells(row: str) -> int:
    """How many cells GitHub splits a markdown table row into: every pipe not escaped as ``\\|`` (inside a code span
    too) is a border, less the two edges."""
    return len(re.findall(r"(?<!\\)\|", row.strip())) - 1


def test_table_cells_counts_every_unescaped_pipe():
    assert table_cells("| a | b |") == 2
    assert table_cells(r"| `x \| y` | b \| c | d |") == 3
    assert table_cells("| `x | y` | d |") == 3


def test_every_table_in_the_docs_keeps_its_header_s_column_count():
    """A row added under the wrong table (a run row inside a comparison table) breaks the page as GitHub shows it."""
    broken = []
    for page in doc_pages():
        columns = None
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if not line.startswith("|"):
                columns = None
            elif columns is None:
                columns = table_cells(line)
            elif table_cells(line) != columns:
                broken.append(f"{page.relative_to(ROOT)}:{number}: {table_cells(line)} cells under a {columns}-column header")
    assert not broken


def test_every_link_into_a_docs_page_names_one_of_its_headings():
    broken = []
    for page in doc_pages():
        for target, anchor in re.findall(r"\]\(([\w./-]*\.md)#([\w-]+)\)", page.read_text(encoding="utf-8")):
            linked = (page.parent / target).resolve()
            if not linked.is_file() or anchor not in heading_anchors(linked.read_text(encoding="utf-8")):
                broken.append(f"{page.relative_to(ROOT)} -> {target}#{anchor}")
    assert not broken


def test_the_slowdown_of_the_mpnet_model_is_the_recorded_one_wherever_it_is_stated():
    """The README (the model's recorded purpose) and docs/impscore.md state how much slower impscore-mpnet-general
    is than the default in the same words, and the words match the sentences/s recorded in the model folders (the
    figures ``impscore models`` prints; docs/results.md run S0). They once said "several times" and "about twelve"."""
    from pragmeter.impscore.catalogue import catalogue

    words = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14}
    docs = (Path(__file__).resolve().parents[2] / "docs" / "impscore.md").read_text(encoding="utf-8")
    stated = [re.findall(r"(\w+) times slower than the default", text.split("impscore-mpnet-general", 1)[1])[0]
              for text in (README.split("$ pragmeter impscore models", 1)[1], docs)]
    rows = {row["name"]: row for row in catalogue()}
    default = next(row for row in rows.values() if row["default"])
    recorded = default["sentences_per_second"] / rows["impscore-mpnet-general"]["sentences_per_second"]
    assert stated[0] == stated[1] and words.get(stated[0]) == round(recorded), (stated, recorded)


def test_the_example_scores_shown_are_what_fp32_prints(capsys, monkeypatch):
    """The front page's score and distance examples run in fp32, which prints the same on every CPU (bf16 hosts
    differ in the third or fourth decimal, and the page says so)."""
    monkeypatch.delenv("PRAGMETER_IMPSCORE", raising=False)  # the shipped default, as the page shows
    shown = re.search(r"```console\n(\$ pragmeter score --precision fp32 .*?)```", README, re.S).group(1)
    commands = re.findall(r"^\$ pragmeter (.*)$", shown, re.M)
    assert [c.split()[:3] for c in commands] == [["score", "--precision", "fp32"], ["distance", "--precision", "fp32"]]
    printed = []
    for command in commands:
        assert main(shlex.split(command)) == 0
        printed += capsys.readouterr().out.splitlines()
    assert printed == [line for line in shown.splitlines() if not line.startswith("$ ")]


def test_the_interpret_example_shows_what_fp32_prints(capsys, monkeypatch):
    """The front page's interpret example, run with the shipped default in fp32, prints the lines shown under it."""
    monkeypatch.delenv("PRAGMETER_INTERPRETER", raising=False)
    block = re.search(r"```bash\n(pragmeter interpret .*?)```", README, re.S).group(1)
    command, _, shown = block.partition("\n# ")
    assert main(shlex.split(command.replace("\\\n", " "))[1:]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [line[2:] for line in ("# " + shown).splitlines()]


def test_the_exit_codes_the_readme_states_are_the_programs(tmp_path, capsys):
    """File or column missing → 2; an unusable row kept with its reason in ``impscore_error`` → 0; ``--strict`` → 1."""
    import pandas as pd

    assert "ends the command with exit code 2" in README and "is kept with the reason in its `*_error` column" in README
    assert "the command exits 0, and `pragmeter score --strict` exits 1" in README
    table = tmp_path / "posts.csv"
    pd.DataFrame({"text": ["You are talking too loudly.", "", "It is cold in here."]}).to_csv(table, index=False)
    scored = tmp_path / "scored.csv"
    assert main(["score", "--input", str(table), "--output", str(scored), "--no-progress"]) == 0
    rows = pd.read_csv(scored, keep_default_na=False)
    assert len(rows) == 3 and rows["impscore_error"][1] and not rows["impscore_error"][0]
    assert main(["score", "--input", str(table), "--output", str(scored), "--overwrite", "--strict",
                 "--no-progress"]) == 1
    assert main(["score", "--input", str(table), "--column", "body", "--output", str(tmp_path / "b.csv")]) == 2
    assert main(["score", "--input", str(tmp_path / "absent.csv"), "--output", str(tmp_path / "c.csv")]) == 2
    capsys.readouterr()


def test_the_install_line_installs_the_default_interpreter_s_encoder():
    """After the README's install line the default interpreter opens: the packages that install its base encoder
    (the encoder registry's INSTALL_PACKAGES) are on that line."""
    import json

    from pragmeter.encoders.registry import INSTALL_PACKAGES, canonical_name
    from pragmeter.interpreter.hub import resolve_interpreter

    line = next(line for line in README.splitlines() if line.startswith("python3 -m pip install torch=="))
    line = re.sub(r"(\S*)\{(\d+)\.\.(\d+)\}(\S*)", lambda m: " ".join(
        f"{m.group(1)}{i}{m.group(4)}" for i in range(int(m.group(2)), int(m.group(3)) + 1)), line)  # bash braces
    base = json.loads((resolve_interpreter(None) / "config.json").read_text())["pragmeter"]["base_encoder"]
    packages = INSTALL_PACKAGES[canonical_name(base)]
    assert packages and all(name in line.split() for name in packages)
