"""Two models whose names make the same file name each get their own report page, and both are on the index
(issue 36, item 5: ``llama3:8b`` and ``llama3/8b`` both became ``llama3_8b.html``, one model's results vanished)."""

from __future__ import annotations

import re

from pragmeter.cli import main
from pragmeter.testing.fake_server import constant


def test_models_that_slug_alike_get_a_page_each(tmp_path, fake_server):
    server = fake_server(constant("Neutral"))
    models = ["llama3:8b", "llama3/8b", "llama3_8b", "index"]
    for index, model in enumerate(models):
        assert main(["eval", "--tasks", "inli", "--limit", "2", "--no-progress", "--output", str(tmp_path / f"r{index}"),
                     "--model-args", f"base_url={server.url},model={model}"]) == 0
    report = tmp_path / "report"
    assert main(["analyze", "report", "--input", str(tmp_path), "--output", str(report), "--no-stratify"]) == 0
    pages = sorted(p.name for p in report.glob("*.html") if p.name != "index.html")
    assert len(pages) == 4
    index = (report / "index.html").read_text()
    links = re.findall(r'<a href="([^"]+\.html)">([^<]+)</a>', index)
    assert sorted(name for _, name in links) == sorted(models)
    for href, name in links:
        page = (report / href).read_text()
        assert f"pragmeter report: {name}</h1>" in page  # each link leads to that model's own page
        for other_href, other in links:  # and its navigation reaches the others
            if other != name:
                assert f'href="{other_href}"' in page
