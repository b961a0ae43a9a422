"""A generation run whose answers can never be parsed writes no data rows and exits non-zero naming the reason."""

from __future__ import annotations

from generate_helpers import Scripted, generate, real_posts


def test_pairs_with_no_parseable_answer_fails_naming_the_stage(tmp_path, fake_server, capsys):
    real_posts(tmp_path)
    server = fake_server(Scripted(lambda request, attempt: "Explicit version:"))  # nothing after the prefix
    assert generate(server, "pairs", "--input", str(tmp_path / "posts.csv"), "--source-type", "hate",
                    "--output", str(tmp_path / "pairs.csv")) == 2
    captured = capsys.readouterr()
    assert "stage explicit: in 20 -> out 0" in captured.out
    assert captured.err.strip().splitlines() == [
        "pragmeter generate: error: no rows generated (stage explicit: 20 in, none left (malformed 20)); "
        "see the stage counts above"]
