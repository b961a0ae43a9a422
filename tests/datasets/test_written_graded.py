"""The committed written graded groups (issue 11): what the corpus source gives and what it must never contain."""
import re

import pandas as pd
import pytest

from pragmeter.datasets.pairs.llm_generated import GENERATED_DIR, read_graded
from pragmeter.errors import DataError
from pragmeter.impscore.corpus.build import clean_pairs, sample_negatives
from pragmeter.impscore.ood import close_development_sentence, development_sentences

SOURCES = ("written_graded_everyday", "written_graded_offrecord")


@pytest.fixture(scope="module", params=SOURCES)
def source(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def groups(source) -> pd.DataFrame:
    return pd.read_parquet(GENERATED_DIR / f"{source}.parquet")


@pytest.fixture(scope="module")
def pairs(source):
    return read_graded(source)


def test_every_group_gives_six_ordered_pairs_with_provenance(source, groups, pairs):
    assert len(groups) >= 400 and groups["group_id"].is_unique
    assert len(pairs.pairs) == 6 * len(groups)
    first = groups.iloc[0]
    for high in range(2, 5):
        for low in range(1, high):
            assert (first[f"level{high}"], first[f"level{low}"]) in pairs.pairs
    assert all(o.startswith(f"pragmeter/data/generated/{source}.parquet#") and re.search(r":L[234]>L[123]$", o)
               for o in pairs.origins)
    assert pairs.licence.startswith("Apache-2.0") and "Claude" in pairs.method


def test_hard_negatives_are_the_distractors_of_level_3_and_4(groups, pairs):
    by_implicit = {row.level4: {row.level4_distractor1, row.level4_distractor2} for row in groups.itertuples()}
    by_implicit.update({row.level3: {row.level3_distractor} for row in groups.itertuples()})
    for (implicit, _), hard in zip(pairs.pairs, pairs.hard_negatives, strict=True):
        if implicit in by_implicit:
            assert hard in by_implicit[implicit]
        else:
            assert hard is None  # level-2 pairs have no distractor
    # both level-4 distractors are used across the group's three level-4 pairs
    used = {h for (implicit, _), h in zip(pairs.pairs, pairs.hard_negatives) if implicit == groups.iloc[0]["level4"]}
    assert used == {groups.iloc[0]["level4_distractor1"], groups.iloc[0]["level4_distractor2"]}


def test_negatives_come_only_from_direct_sentences_of_other_groups(groups, pairs):
    frame, _ = clean_pairs([pairs])
    frame["split"] = "train"
    negatives = sample_negatives(frame, seed=0)
    level1 = set(groups["level1"])
    assert all(frame["explicit"].iat[j] in level1 for j in negatives)
    assert all(frame["group"].iat[j] != frame["group"].iat[i] for i, j in enumerate(negatives))


def test_no_sentence_is_or_nearly_is_an_ood_development_sentence(groups):
    columns = ["level1", "level2", "level3", "level4", "level3_distractor", "level4_distractor1", "level4_distractor2"]
    texts = groups[columns].to_numpy().ravel()
    assert not {" ".join(t.split()).casefold() for t in texts} & {t.casefold() for t in development_sentences()}
    assert [t for t in texts if close_development_sentence(t)] == []
    # the check itself: a light rewording of a development sentence is caught
    assert close_development_sentence("These potatoes are really crying out for something!") is not None


def test_missing_columns_name_the_file(tmp_path, source, groups):
    groups.drop(columns=["level4"]).to_parquet(tmp_path / f"{source}.parquet")
    with pytest.raises(DataError, match=f"{source}.parquet: missing column"):
        read_graded(source, tmp_path)


def test_no_implicit_sentence_belongs_to_two_groups(groups):
    # tools/written_groups.py drops a group that repeats another group's sentence: the same text would be a
    # pair of one group and a hard negative or a pair of another (the 2026-11-24 rounds had six such groups)
    implicit = pd.concat([groups[f"level{k}"] for k in (2, 3, 4)]).str.casefold()
    assert implicit.is_unique, implicit[implicit.duplicated()].tolist()[:3]


def test_the_sources_share_no_sentence():
    # tools/written_groups.py --known: a later round never repeats a sentence of an earlier source
    columns = ["level1", "level2", "level3", "level4", "level3_distractor", "level4_distractor1", "level4_distractor2"]
    texts = [{t.casefold() for t in pd.read_parquet(GENERATED_DIR / f"{s}.parquet")[columns].to_numpy().ravel()}
             for s in SOURCES]
    assert not texts[0] & texts[1]
