"""`pragmeter generate graded` against a scripted fake server on 20 real posts, and the corpus source that turns
graded groups into pairs."""

from __future__ import annotations

import pandas as pd
import pytest

from generate_helpers import Scripted, generate, real_posts, user_text
from pragmeter.datasets.pairs.llm_generated import read_graded
from pragmeter.errors import DataError
from pragmeter.generate.graded import clean_rewrite, level_prompts, rewrite_reason
from pragmeter.impscore.corpus.build import clean_pairs, sample_negatives


def _level(request: dict) -> int:
    system = request["messages"][0]["content"]
    return next(level for level, prompt in level_prompts().items() if prompt == system)


def hedged(text: str) -> str:
    """Half of the post's words behind a softener: keeps content, not a copy."""
    words = text.split()
    return "I think, perhaps, " + " ".join(words[:max(len(words) // 2, 3)])


def test_graded_groups_keep_checked_levels_and_provenance(tmp_path, fake_server, capsys):
    posts = real_posts(tmp_path)
    texts = pd.read_csv(posts)["text"].tolist()
    frame = pd.read_csv(posts)
    frame["origin"] = [f"upstream#{i}" for i in range(len(frame))]
    frame.to_csv(posts, index=False)

    def answer(request, attempt):
        text, level = user_text(request), _level(request)
        i = texts.index(text)
        if i == 0 and level == 3:
            return text  # a copy of level 1: malformed every time, so the group keeps levels 1, 2 and 4
        if i == 1:
            return "I'm sorry, but I can't help with that."  # every level refused: the group is dropped
        return {2: f"Hedged: {hedged(text)}",
                3: f'"Did anyone notice what post {i} says?"',
                4: f"Some things are better left unsaid, number {i}."}[level]

    server = fake_server(Scripted(answer))
    output = tmp_path / "graded.parquet"
    assert generate(server, "graded", "--input", str(posts), "--id-column", "origin", "--output", str(output)) == 0
    printed = capsys.readouterr().out
    assert "stage hedged: in 20 -> out 19 (dropped: empty 0, refused 1" in printed
    assert "stage indirect: in 20 -> out 18 (dropped: empty 0, refused 1, malformed 1" in printed
    assert "group with no rewrite left: 1 removed" in printed
    groups = pd.read_parquet(output)
    assert len(groups) == 19 and texts[1] not in set(groups["level1"])
    first = groups.set_index("level1").loc[texts[0]]
    assert first["level2"] == hedged(texts[0]) and pd.isna(first["level3"])
    assert groups["level3"].dropna().str.startswith("Did anyone").all()  # quotes cut
    assert first["upstream_id"] == "upstream#0" and set(groups["generator_model"]) == {"fake-model"}
    assert groups["prompt_hint"].str.len().eq(16).all()

    # The corpus reader pairs every more implicit level with every less implicit one, one group per input.
    (tmp_path / "llm_graded_capp.parquet").write_bytes(output.read_bytes())
    pairs = read_graded("llm_graded_capp", tmp_path)
    assert len(pairs.pairs) == 18 * 6 + 3  # 18 full groups (4 levels), one group with 3 levels
    assert (hedged(texts[0]), texts[0]) in pairs.pairs
    assert all(g.startswith("llm_graded_capp:g") for g in pairs.groups)
    assert any(o.endswith(":upstream#0:L4>L1") for o in pairs.origins)
    assert "CC BY-NC-SA" in pairs.licence

    # Negatives come only from direct (level-1) sentences of other groups, never from a hedged or indirect one.
    frame, _ = clean_pairs([pairs])
    frame["split"] = "train"
    negatives = sample_negatives(frame, seed=0)
    level1 = set(groups["level1"])
    assert (negatives >= 0).all()
    assert all(frame["explicit"].iat[j] in level1 for j in negatives)
    assert all(frame["group"].iat[j] != frame["group"].iat[i] for i, j in enumerate(negatives))


def test_rewrite_checks():
    direct = "Stop humming while I work."
    assert rewrite_reason(2, "Would you mind not humming while I work?", [direct]) is None
    assert rewrite_reason(3, "Stop humming while I work, please.", [direct]).startswith("copy")
    assert rewrite_reason(4, "The humming while I work again.", [direct]) == "hint restates the input's content words"
    assert rewrite_reason(4, "It is hard to think in here today.", [direct]) is None
    assert rewrite_reason(2, " ".join(["word"] * 40), [direct]).startswith("rewrite adds content")
    assert rewrite_reason(2, "I think there might be a few mistakes in this spreadsheet.", ["Open the door."]) == \
        "copies an example of the prompt"
    assert rewrite_reason(2, "Sure, I understand.", ["Listen to me carefully."]) == \
        "hedged version drops the input's content words"
    assert clean_rewrite('Hint: "It is cold in here."\nExplanation: ...') == "It is cold in here."


def test_unreadable_graded_file_names_the_file(tmp_path):
    (tmp_path / "llm_graded_capp.parquet").write_text("not parquet")
    with pytest.raises(DataError, match="llm_graded_capp.parquet"):
        read_graded("llm_graded_capp", tmp_path)
