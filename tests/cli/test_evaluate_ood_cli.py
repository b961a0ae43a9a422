"""`pragmeter impscore evaluate battery | politeness` (model and --baseline hedging) on small real slices, and the
Stanford Politeness loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from pragmeter.cli import main
from pragmeter.datasets import politeness
from pragmeter.errors import DataError

OOD = Path(__file__).resolve().parents[2] / "src" / "pragmeter" / "impscore" / "ood_data"


@pytest.fixture(autouse=True)
def _private_cache(private_cache):
    """Every test here starts from an empty cache (tests/conftest.py)."""


def battery_slice(tmp_path, n=6) -> Path:
    payload = json.loads((OOD / "dev_battery.json").read_text(encoding="utf-8"))
    path = tmp_path / "slice.json"
    path.write_text(json.dumps({"items": payload["items"][:n]}), encoding="utf-8")
    return path


@pytest.mark.parametrize("extra", [[], ["--baseline", "hedging"]])
def test_evaluate_battery_slice(tmp_path, capsys, extra):
    out = tmp_path / "out.json"
    assert main(["impscore", "evaluate", "battery", "--input", str(battery_slice(tmp_path)), "--output", str(out), *extra]) == 0
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    metrics, rows = result["metrics"], result["details"]["per_item"]
    assert result["primary_metric"] == "battery_implicitness_accuracy"
    assert metrics["battery_items"] == 6 and len(rows) == 6
    for row in rows:  # the summary is what the per-item scores and distances say
        assert row["implicit_above_plain"] == (row["score_utterance"] > row["score_meaning"])
        assert row["chosen"] == min(range(4), key=lambda k: row["distances"][k])
    assert metrics["battery_implicitness_accuracy"] == sum(r["implicit_above_plain"] for r in rows) / 6
    assert f"| implicitness_accuracy | {metrics['battery_implicitness_accuracy']:.3f} [" in printed
    assert ("baseline:hedging" in result["model"]) == bool(extra)


def test_politeness_loader_counts_and_checksums():
    items = politeness.load_politeness()
    assert len(items) == 10_956
    assert sum(i.domain == "wikipedia" for i in items) == 4_353
    assert len({i.id for i in items}) == len(items)
    assert all(len(i.ratings) == 5 and i.text for i in items)


def test_politeness_bad_row_names_file_row_and_field(tmp_path, monkeypatch):
    bad = tmp_path / "wiki.csv"
    bad.write_text("Community,Id,Request,Score1,Score2,Score3,Score4,Score5,Normalized Score\n"
                   "Wikipedia,1,Could you help?,13,9,11,11,5,0.5\n"
                   "Wikipedia,2,Fix it.,13,9,x,11,5,-0.5\n", encoding="utf-8")
    monkeypatch.setattr(politeness, "data_file", lambda relative, root=None: bad)
    with pytest.raises(DataError, match=r"wiki.csv: row 3, fields 'Score1'..'Score5'"):
        politeness.load_politeness(("wikipedia",))
    with pytest.raises(DataError, match="no domain 'reddit'"):
        politeness.load_politeness(("reddit",))


def test_evaluate_politeness_sample(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["impscore", "evaluate", "politeness", "--sample", "40", "--seed", "3", "--resamples", "200",
                 "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    metrics, rows = result["metrics"], result["details"]["per_item"]
    assert metrics["politeness_spearman_rho_n"] == len(rows) == 40 and len({r["id"] for r in rows}) == 40
    rho = stats.spearmanr([r["score"] for r in rows], [r["rating"] for r in rows]).statistic
    assert result["primary_metric"] == "politeness_spearman_rho"
    assert metrics["politeness_spearman_rho"] == pytest.approx(rho)
    assert metrics["politeness_spearman_rho_ci_low"] <= rho <= metrics["politeness_spearman_rho_ci_high"]
    assert "spearman_rho" in capsys.readouterr().out
    # the same seed draws the same sample
    again = tmp_path / "q.json"
    assert main(["impscore", "evaluate", "politeness", "--sample", "40", "--seed", "3", "--baseline", "hedging",
                 "--output", str(again)]) == 0
    assert [r["id"] for r in json.loads(again.read_text())["details"]["per_item"]] == [r["id"] for r in rows]


def test_evaluate_ranking_shows_a_bar_and_runs_the_fast_path_in_fp32(tmp_path, capsys):
    """The file checks embed on this machine's fast path in fp32 (OpenVINO on a CPU), with a bar: the scores are
    torch fp32's within float rounding."""
    import numpy as np

    from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF
    from pragmeter.impscore.model import ImpScore

    payload = json.loads((OOD / "dev_ranking.json").read_text(encoding="utf-8"))
    path = tmp_path / "groups.json"
    path.write_text(json.dumps({"groups": payload["groups"][:4]}), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["impscore", "evaluate", "ranking", "--input", str(path), "--output", str(out)]) == 0
    printed, bar = capsys.readouterr()
    assert "|backend=openvino|precision=fp32|device=cpu|" in printed.splitlines()[0]
    assert "embedding: 100%" in bar
    scores = [s for group in json.loads(out.read_text())["details"]["per_group"] for s in group["scores"]]
    reference = ImpScore.load(backend="torch", precision="fp32").score([s for g in payload["groups"][:4] for s in g["sentences"]])
    assert np.abs(np.asarray(scores) - reference).max() <= FP32_MAX_ABS_DIFF

    assert main(["impscore", "evaluate", "ranking", "--input", str(path), "--no-progress"]) == 0
    assert "embedding" not in capsys.readouterr().err
