"""`pragmeter analyze report` end to end: two models evaluated on real ISHate texts through the fake server, a
dataset profile, one self-contained page per model, and a headless-Chromium screenshot showing the plots."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from pragmeter.cli import main
from pragmeter.testing.fake_server import FakeChatServer


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory, throwaway_model) -> object:
    from pragmeter.datasets.ishate import load_ishate

    root = tmp_path_factory.mktemp("results")
    items = load_ishate("implicit", "test")[:50]
    table = root / "texts.csv"
    pd.DataFrame({"text": [i.text for i in items], "label": [int(i.label != 0) for i in items]}).to_csv(table)
    for name, answer in (("always-yes", "Yes."), ("always-no", "no")):
        with FakeChatServer(lambda request, answer=answer: answer) as fake:
            assert main(["eval", "--tasks", "hate_detection", "--model-args", f"base_url={fake.url},model={name}",
                         "--task-arg", f"hate_detection.path={table}", "--log-samples", "--no-progress",
                         "--output", str(root / name)]) == 0
    assert main(["analyze", "profile", "--input", str(table), "--label-column", "label", "--pairs", "300", "--impscore", throwaway_model,
                 "--output", str(root / "profiles")]) == 0
    assert main(["analyze", "report", "--input", str(root), "--impscore", throwaway_model]) == 0
    return root


def test_one_self_contained_page_per_model(results_dir):
    report = results_dir / "report"
    assert sorted(p.name for p in report.glob("*.html")) == ["always-no.html", "always-yes.html", "index.html"]
    page = (report / "always-yes.html").read_text()
    # Offline: no external resources (scripts, styles, images, fonts); plots are data URIs.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page) and "<script" not in page and "<link" not in page
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) >= 2  # the stratified plot and the profile plot
    # Every benchmark's metrics and signature, and a working link to its per-sample log.
    results = json.loads((results_dir / "always-yes" / "results.json").read_text())
    assert results["results"]["hate_detection"]["signature"].split("|")[0] in page
    link = re.search(r'href="([^"]*samples_hate_detection\.jsonl)"', page).group(1)
    assert (report / link).resolve() == (results_dir / "always-yes" / "samples_hate_detection.jsonl").resolve()
    # Stratified before rendering into the report's own folder, on the hateful items (the paper's detection rate):
    # "Yes." is always right.
    assert not list(results_dir.glob("always-*/stratified_*"))
    stratified = json.loads((report / "stratified" / "always-yes" / "stratified_hate_detection.json").read_text())
    labels = pd.read_csv(results_dir / "texts.csv")["label"]
    assert stratified["n"] == int(labels.sum()) and stratified["accuracy"] == 1.0
    assert "always-no" not in re.sub(r"<nav>.*?</nav>", "", page)  # its numbers are on its own page
    assert any(p.suffix == ".png" for p in (report / "plots").rglob("*"))  # under their path in the results


def test_report_screenshot_shows_the_plots(results_dir, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed")
    from matplotlib.image import imread

    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--hide-scrollbars", "--window-size=1280,1800", f"--screenshot={shot}",
                    (results_dir / "report" / "always-yes.html").as_uri()], check=True, capture_output=True, timeout=120)
    pixels = imread(shot)[..., :3]
    # The stratified plot's red accuracy line (tab:red, #d62728) and blue count bars must be on screen.
    red = np.all(np.abs(pixels - np.array([0.839, 0.153, 0.157])) < 0.06, axis=-1).sum()
    blue_bars = np.all(np.abs(pixels - np.array([0.78, 0.86, 0.93])) < 0.06, axis=-1).sum()
    assert red > 200 and blue_bars > 2000


def test_damaged_result_files_are_skipped_with_a_warning(tmp_path, throwaway_model, capsys):
    """Each damaged file is skipped with one warning line naming it and its field; the report shows the rest."""
    table = tmp_path / "texts.csv"
    table.write_text("text,label,gold,prediction,sc\nIt is cold in here.,a,yes,yes,0.2\nShut the window.,b,yes,no,1.1\n"
                     "Nice weather.,a,no,no,1.7\n", encoding="utf-8")
    assert main(["analyze", "stratify", "--input", str(table), "--score-column", "sc",
                 "--output", str(tmp_path / "s")]) == 0
    assert main(["analyze", "profile", "--input", str(table), "--label-column", "label", "--pairs", "5",
                 "--impscore", throwaway_model, "--output", str(tmp_path / "p")]) == 0
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "results.json").write_text(json.dumps(
        {"model": {"model": "m"}, "results": {"inli": {"headline": "accuracy", "metrics": {"accuracy": 0.5}}}}))
    stratified = json.loads((tmp_path / "s" / "stratified_texts.json").read_text())
    profile = json.loads((tmp_path / "p" / "profile_texts.json").read_text())
    damaged = {  # file -> (content, what the warning says)
        "d/stratified_a.json": ({k: v for k, v in stratified.items() if k != "bins"}, "field 'bins' is missing"),
        "d/stratified_b.json": ({**stratified, "bins": "oops"}, "field 'bins' is a string, expected a list"),
        "d/profile_a.json": ({k: v for k, v in profile.items() if k != "overall"}, "field 'overall' is missing"),
        "d/profile_b.json": ({**profile, "groupings": [1, 2]}, "field 'groupings' is a list, expected an object"),
        "r1/results.json": ({"results": {"inli": "x"}}, "field 'results.inli' is a string, expected an object"),
        "r2/results.json": ({"results": {"inli": {"metrics": None}}}, "field 'results.inli.metrics' is null"),
        "r3/results.json": ([], "holds a list, not an object with field 'results'"),
    }
    for name, (content, _) in damaged.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(json.dumps(content))
    capsys.readouterr()
    assert main(["analyze", "report", "--input", str(tmp_path), "--no-stratify"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == len(damaged)
    for name, (_, said) in damaged.items():
        assert any(line.startswith(f"warning: {tmp_path / name}: {said}") and line.endswith("; skipped")
                   for line in warnings), name
    page = (tmp_path / "report" / "m.html").read_text(encoding="utf-8")
    assert "<b>inli</b>" in page and "texts</b>: 3 texts" in page  # the good results and profile are shown
