"""LLM-written pairs shipped with pragmeter, and the per-source --cap of corpus build."""

import pandas as pd
import pytest

from pragmeter.datasets.pairs.llm_generated import GENERATED_DIR, read_generated, strip_framing
from pragmeter.errors import DataError
from pragmeter.impscore.corpus import build_corpus


def test_framing_is_cut_and_case_restored():
    assert strip_framing("The hate speech implies that immigrants are criminals.") == "Immigrants are criminals."
    assert strip_framing("The speaker is expressing frustration with X.") == "Frustration with X."
    assert strip_framing("Foreigners are not trustworthy.") == "Foreigners are not trustworthy."


def test_shipped_ishate_pairs_keep_provenance_and_count_drops():
    pairs = read_generated("llm_ishate_train")
    shipped = pd.read_parquet(GENERATED_DIR / "llm_ishate_train.parquet")
    assert len(pairs.pairs) + sum(pairs.skipped.values()) == len(shipped)
    assert len(pairs.pairs) >= 50
    assert all(o.startswith("pragmeter/data/generated/llm_ishate_train.parquet#") and ":implicit-train-" in o
               for o in pairs.origins)
    assert not any(explicit.lower().startswith("the hate speech implies") for _, explicit in pairs.pairs)
    assert "ISHate" in pairs.description and "Qwen2.5-Coder-1.5B" in pairs.licence


def test_unreadable_generated_file_names_the_file(tmp_path):
    (tmp_path / "llm_ishate_train.parquet").write_text("not parquet")
    with pytest.raises(DataError, match="llm_ishate_train.parquet"):
        read_generated("llm_ishate_train", tmp_path)


def test_cap_bounds_every_source():
    corpus, report = build_corpus(["imppres", "ludwig", "llm_ishate_train"], cap=100)
    counts = corpus.groupby("source").size()
    assert counts.max() <= 100 and set(counts.index) == {"imppres", "ludwig", "llm_ishate_train"}
    assert report.set_index("source").loc["imppres", "cap"] == "100"


def test_every_registered_generated_source_ships_its_file():
    # A source registered without its committed file would break `corpus build --sources all` for every user.
    from pragmeter.datasets.pairs.llm_generated import GENERATED_SOURCES

    for name, read in GENERATED_SOURCES.items():
        pairs = read()
        assert len(pairs.pairs) >= 30, name
        assert all(origin.startswith(f"pragmeter/data/generated/{name}.parquet#") for origin in pairs.origins), name
