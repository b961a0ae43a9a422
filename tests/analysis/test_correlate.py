"""`pragmeter analyze correlate` between two score columns, in one table or joined from two."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pragmeter.cli import main


def test_correlate_joined_tables_match_scipy(tmp_path, capsys):
    rng = np.random.default_rng(0)
    judge = rng.uniform(0, 5, 30)
    human = judge + rng.normal(0, 1, 30)
    pd.DataFrame({"item_id": [f"i{k}" for k in range(30)], "auto_gpt4": judge}).to_json(
        tmp_path / "samples.jsonl", orient="records", lines=True)
    pd.DataFrame({"item_id": [f"i{k}" for k in reversed(range(30))], "mos": human[::-1]}).assign(
        mos=lambda f: f["mos"].astype(str)).to_csv(tmp_path / "human.csv", index=False)
    code = main(["analyze", "correlate", "--input", str(tmp_path / "samples.jsonl"), "--x", "auto_gpt4", "--y", "mos",
                 "--y-table", str(tmp_path / "human.csv"), "--on", "item_id", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["n"] == 30
    assert result["pearson"]["r"] == pytest.approx(stats.pearsonr(judge, human)[0])
    assert result["kendall"]["r"] == pytest.approx(stats.kendalltau(judge, human)[0])
    assert result["spearman"]["r"] == pytest.approx(stats.spearmanr(judge, human)[0])


def test_correlate_drops_missing_and_rejects_text(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    path.write_text("a,b\n1,2\n2,\n3,5\n4,4\n5,7\n")
    assert main(["analyze", "correlate", "--input", str(path), "--x", "a", "--y", "b"]) == 0
    assert "n=4 (dropped 1" in capsys.readouterr().out
    path.write_text("a,b\n1,2\n2,oops\n3,5\n")
    assert main(["analyze", "correlate", "--input", str(path), "--x", "a", "--y", "b"]) == 2
    assert "data row 2: column 'b' is 'oops'" in capsys.readouterr().err


def test_correlate_counts_rows_without_a_match(tmp_path, capsys):
    """Rows whose key is in one table only are left out of the join, and said, not reported as 'dropped 0'."""
    x, y = tmp_path / "cx.csv", tmp_path / "cy.csv"
    x.write_text("id,x\n1,1\n2,2\n3,3\n4,4\n")
    y.write_text("id,y\n1,2\n2,1\n3,4\n5,3\n")
    argv = ["analyze", "correlate", "--input", str(x), "--x", "x", "--y", "y", "--y-table", str(y), "--on", "id"]
    assert main(argv) == 0
    assert (f"n=3 (dropped 0 rows with a missing value; 2 rows without a match on id: 1 in {x}, 1 in {y})"
            in capsys.readouterr().out)
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 3 and result["dropped"] == 0
    assert result["unmatched"] == {"on": ["id"], "x": {"file": str(x), "rows": 1}, "y": {"file": str(y), "rows": 1}}


def test_correlate_joins_a_jsonl_numeric_key_to_a_csv_text_key(tmp_path):
    from pragmeter.analysis.correlate import correlate_columns

    (tmp_path / "x.jsonl").write_text("".join(f'{{"id": {i}, "x": {i}}}\n' for i in range(1, 6)))
    (tmp_path / "y.csv").write_text("id,y\n" + "".join(f"{i},{i * i}\n" for i in range(1, 6)))
    result = correlate_columns(tmp_path / "x.jsonl", "x", "y", tmp_path / "y.csv", ["id"])
    assert result["n"] == 5 and result["unmatched"]["x"]["rows"] == 0
