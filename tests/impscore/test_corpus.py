"""The corpus builder on the real shared files."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from pragmeter.data.root import data_file
from pragmeter.errors import DataError
from pragmeter.impscore.corpus import build_corpus, load_corpus
from pragmeter.text import normalise
from pragmeter.datasets.pairs.negation import negate


def test_size_and_sources(corpus_and_report):
    corpus, report = corpus_and_report
    assert len(corpus) >= 40_000
    required = {"implicit_hate", "sbic", "imppres", "circa", "ludwig", "r3_sarcasm", "bbh_snarks", "inli_train",
                "ishate_train"}
    assert required <= set(corpus["source"])
    per_source = report.set_index("source")["pos_pairs"]
    assert per_source["total"] == len(corpus)
    # every stage-3 post has an implied statement; 185 of the 6,358 are ISHate dev/test messages (held out)
    assert per_source["implicit_hate"] == 6358 - 185
    assert per_source["imppres"] == 1200


def test_no_empty_duplicate_or_identical_rows(corpus_and_report):
    corpus, _ = corpus_and_report
    for column in ("implicit", "explicit", "negative"):
        assert corpus[column].str.strip().str.len().min() > 0
    keys = corpus["implicit"].map(normalise) + "\x1f" + corpus["explicit"].map(normalise)
    assert keys.is_unique
    assert (corpus["implicit"].map(normalise) != corpus["explicit"].map(normalise)).all()


def test_negatives_come_from_another_pair_of_the_same_source_and_split(corpus_and_report):
    corpus, _ = corpus_and_report
    by_id = corpus.set_index("pair_id")
    other = by_id.loc[corpus["negative_pair_id"]]
    assert (other["source"].to_numpy() == corpus["source"].to_numpy()).all()
    assert (other["split"].to_numpy() == corpus["split"].to_numpy()).all()
    assert (other["explicit"].to_numpy() == corpus["negative"].to_numpy()).all()
    assert (corpus["negative"].map(normalise) != corpus["explicit"].map(normalise)).all()


def test_split_is_8_1_1_and_grouped_by_anchor(corpus_and_report):
    corpus, _ = corpus_and_report
    shares = corpus["split"].value_counts(normalize=True)
    assert shares["train"] == pytest.approx(0.8, abs=0.01)
    assert shares["test"] == pytest.approx(0.1, abs=0.01)
    splits_per_anchor = corpus.groupby(corpus["implicit"].map(normalise))["split"].nunique()
    assert splits_per_anchor.max() == 1


def test_held_out_benchmarks_stay_out(corpus_and_report, data_root):
    corpus, _ = corpus_and_report
    texts = set(corpus["implicit"].map(normalise)) | set(corpus["explicit"].map(normalise))
    for split in ("val", "test"):
        with open(data_file(f"inli/INLI_Data/{split}.csv"), encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                assert normalise(row["premise"]) not in texts
                assert normalise(row["implied_entailment"]) not in texts
    with open(data_file("drinq/drinq_validated.csv"), encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            assert normalise(row["implied_comment"]) not in texts
    dialogues = json.loads(data_file("emphasized_talk/data.json").read_text(encoding="utf-8"))
    for value in dialogues.values():
        for implications in value["emphasis"].values():
            for implication in implications:
                assert normalise(implication) not in texts


def test_ishate_pairs_share_a_target_and_are_implicitness_only(corpus_and_report, data_root):
    corpus, _ = corpus_and_report
    train = pd.read_parquet(data_file("ishate/data/ishate_train.parquet.gzip"))
    train = train[train["aug_method"] == "orig"]
    keys = train["cleaned_text"].map(normalise)
    implicit_texts, explicit_texts = (set(keys[train["implicit_layer"] == layer]) for layer in ("Implicit HS", "Explicit HS"))
    targets = train.assign(key=keys).groupby("key")["target"].agg(set)  # a few texts recur with other labels
    ishate = corpus[corpus["source"] == "ishate_train"]
    assert len(ishate) > 800
    implicit, explicit, negative = (ishate[c].map(normalise) for c in ("implicit", "explicit", "negative"))
    assert implicit.isin(implicit_texts).all() and explicit.isin(explicit_texts).all()
    same_target = [bool(targets[a] & targets[b]) for a, b in zip(implicit, explicit)]
    other_target = [targets[a] != targets[b] for a, b in zip(implicit, negative)]
    assert all(same_target) and all(other_target)
    assert not ishate["pragmatic"].any() and corpus.loc[corpus["source"] != "ishate_train", "pragmatic"].all()
    held_out = set()
    for split in ("dev", "test"):
        frame = pd.read_parquet(data_file(f"ishate/data/ishate_{split}.parquet.gzip"))
        held_out |= set(frame["cleaned_text"].dropna().map(normalise)) | set(frame["text"].dropna().map(normalise))
    texts = set(corpus["implicit"].map(normalise)) | set(corpus["explicit"].map(normalise))
    assert not texts & held_out


def test_adding_a_source_leaves_sources_without_shared_anchors_alone(corpus_and_report):
    corpus, _ = corpus_and_report
    without, _ = build_corpus(sources=["implicit_hate", "sbic", "imppres", "circa", "ludwig", "r3_sarcasm",
                                       "bbh_snarks", "inli_train"], seed=0)
    anchors = corpus["implicit"].map(normalise)
    shared = set(corpus.loc[anchors.isin(set(anchors[corpus["source"] == "ishate_train"])), "source"]) - {"ishate_train"}
    # ISHate shares posts with Latent Hatred and SBIC; a shared anchor keeps the split of the source first by name,
    # so only SBIC (after ishate_train) changes
    assert shared == {"implicit_hate", "sbic"}
    changed = {"sbic", "ishate_train"}
    keep = ~corpus["source"].isin(changed)
    same, before = corpus[keep].reset_index(drop=True), without[~without["source"].isin(changed)].reset_index(drop=True)
    for column in ("implicit", "explicit", "negative", "split"):
        assert (same[column].to_numpy() == before[column].to_numpy()).all(), column


def test_seeded_and_deterministic(corpus_and_report):
    corpus, _ = corpus_and_report
    again, _ = build_corpus(seed=0)
    pd.testing.assert_frame_equal(corpus, again)
    other, _ = build_corpus(seed=1)
    assert not (other["negative"].to_numpy() == corpus["negative"].to_numpy()).all()


def test_circa_pairs_map_indirect_answers_to_yes_no_statements(corpus_and_report):
    corpus, _ = corpus_and_report
    circa = corpus[corpus["source"] == "circa"]
    assert circa["explicit"].str.match(r"^(Yes|No), ").all()
    answers = circa["implicit"].str.split(" - ").str[-1]
    assert circa["implicit"].str.startswith("- ").all()
    assert not answers.str.match(r"^(yes|no)[ ,.!]+(i|we)\b", case=False).any()
    pair = circa[circa["implicit"] == "- Are you in the mood for burgers? - I'd rather have ramen."]
    assert "No, I am not in the mood for burgers." in set(pair["explicit"])
    ludwig = corpus[corpus["source"] == "ludwig"]
    assert ludwig["implicit"].str.startswith("- ").all()  # the paper's dialogue format for LUDWIG


@pytest.mark.parametrize("sentence, expected", [
    ("I like Korean food .", "I do not like Korean food."),
    ("I have children .", "I do not have children."),
    ("I have heard the latest music .", "I have not heard the latest music."),
    ("It is really expensive .", "It is not really expensive."),
    ("She likes dogs .", "She does not like dogs."),
    ("My parents live nearby .", None),
])
def test_negation_rules(sentence, expected):
    assert negate(sentence) == expected


def test_official_schema_is_accepted(tmp_path):
    path = tmp_path / "all_data.csv"
    rows = [{"pos_implicit": f"implicit {i}", "pos_explicit": f"explicit {i}", "neg_implicit": f"implicit {i}",
             "neg_explicit": f"explicit {(i + 1) % 30}"} for i in range(30)]
    pd.DataFrame(rows).to_csv(path, index=False)
    corpus = load_corpus(path)
    assert len(corpus) == 30
    assert set(corpus["split"]) == {"train", "val", "test"}
    assert corpus.loc[0, "negative"] == "explicit 1"


def test_official_schema_with_an_empty_cell_names_row_and_field(tmp_path):
    path = tmp_path / "all_data.csv"
    path.write_text("pos_implicit,pos_explicit,neg_implicit,neg_explicit\na,b,a,c\nd,,d,f\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"data row 2, field 'pos_explicit'"):
        load_corpus(path)


@pytest.mark.parametrize("bad", ["trian", "", "TEST"])
def test_a_row_of_an_unknown_split_is_refused_naming_row_and_field(tmp_path, bad):
    """It used to be left out of training and evaluation without a word."""
    path = tmp_path / "corpus.csv"
    rows = [{"source": "s", "implicit": f"i{k}", "explicit": f"e{k}", "negative": f"n{k}", "split": split}
            for k, split in enumerate(["train", "train", "val", "test", bad, "train"])]
    pd.DataFrame(rows).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"corpus.csv: data row 5, field 'split': .* is not one of train, val, test "
                                        r"\(1 such row"):
        load_corpus(path)


def test_the_source_table_prints_every_count_with_thousands_separators():
    from collections import Counter

    import pandas as pd

    from pragmeter.datasets.pairs.base import SourcePairs
    from pragmeter.impscore.corpus.build import format_report, source_report

    frame = pd.DataFrame({"source": ["big"] * 1_200, "split": ["train"] * 1_000 + ["val"] * 100 + ["test"] * 100})
    big = SourcePairs("big", "human", "a large source", licence="MIT", cap=5_275)
    table = format_report(source_report([big], frame, Counter({("big", "duplicate"): 138_645})))
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    assert rows[0][1:5] == ["1,200", "1,000", "100", "100"] and rows[0][7:9] == ["5,275", "duplicate 138,645 |"]
    assert rows[1][1] == "1,200" and rows[1][-1] == "138,645 |"  # the total row
