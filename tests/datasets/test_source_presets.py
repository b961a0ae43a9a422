"""The corpus source presets as ``pragmeter impscore corpus sources`` lists them."""

from __future__ import annotations

from pragmeter.cli import main
from pragmeter.datasets.pairs.registry import PRESETS, SOURCES, preset_lines


def test_each_preset_is_one_line_of_its_sources(capsys):
    lines = preset_lines()
    assert [line.split(": ")[0] for line in lines] == list(PRESETS)
    assert lines[-1] == "all: " + ",".join(SOURCES)
    assert main(["impscore", "corpus", "sources"]) == 0
    assert capsys.readouterr().out.splitlines() == lines
