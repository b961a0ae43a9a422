"""Commands that write into a folder refuse, before any work, to replace a result file without --overwrite."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pragmeter.cli import main


def _predictions(path):
    pd.DataFrame({"text": ["It is cold in here.", "Close the window."], "gold": ["yes", "no"],
                  "prediction": ["yes", "yes"], "impscore": [0.9, 0.3]}).to_csv(path, index=False)
    return path


CASES = {
    "profile": (lambda tmp: ["analyze", "profile", "--input", str(_predictions(tmp / "p.csv")), "--output", str(tmp / "out")],
                "profile_p.json"),
    "stratify": (lambda tmp: ["analyze", "stratify", "--input", str(_predictions(tmp / "p.csv")), "--score-column", "impscore",
                              "--output", str(tmp / "out")], "stratified_p.json"),
    "report": (lambda tmp: ["analyze", "report", "--input", str(tmp), "--output", str(tmp / "out"), "--no-stratify"],
               "index.html"),
    "generation-check": (lambda tmp: ["analyze", "generation-check", "--output", str(tmp / "out"), "--model-args",
                                      "base_url=http://127.0.0.1:9/v1,model=m"], "generation_check.json"),
    "eval": (lambda tmp: ["eval", "--tasks", "inli", "--limit", "1", "--output", str(tmp / "out"), "--model-args",
                          "base_url=http://127.0.0.1:9/v1,model=m"], "results.json"),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_existing_result_is_not_replaced(command, tmp_path, capsys):
    argv, name = CASES[command]
    argv = argv(tmp_path)
    existing = tmp_path / "out" / name
    existing.parent.mkdir()
    existing.write_text(json.dumps({"kept": True}))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{existing} exists; pass --overwrite to replace it" in err and "Traceback" not in err
    assert json.loads(existing.read_text()) == {"kept": True}
    assert sorted(p.name for p in existing.parent.iterdir()) == [name]  # nothing else was written either
