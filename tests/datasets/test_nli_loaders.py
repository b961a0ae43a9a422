"""The general NLI, monotonicity and presupposition sets read from the data root: every split's size and labels as
their papers (and SOURCES.md) give them, and a bad row named by file, row and field."""

from __future__ import annotations

from collections import Counter

import pytest

from pragmeter.datasets.nli import SETS, files, load_nli
from pragmeter.datasets.nli.base import checked_pairs
from pragmeter.data.root import manifest
from pragmeter.errors import DataError

SIZES = {("taxinli", "train"): 10071, ("esnli", "dev"): 9842, ("esnli", "test"): 9824, ("cad_nli", "train"): 8330,
         ("cad_nli", "dev"): 1000, ("cad_nli", "test"): 2000, ("conjnli", "train"): 15000, ("conjnli", "dev"): 623,
         ("med", "train"): 5382, ("help", "train"): 6076 + 438, ("monli", "train"): 1002 + 1476,
         ("monli", "test"): 200, ("scone", "train"): 6 * 1002, ("scone", "test"): 6 * 200,
         ("imppres", "presupposition"): 17100, ("xnli_en", "validation"): 2490, ("xnli_en", "test"): 5010,
         ("control", "dev"): 799, ("control", "test"): 805, ("breaking_nli", "test"): 8193}


@pytest.mark.parametrize("name,split", sorted(SIZES))
def test_each_split_has_its_published_size(data_root, name, split):
    pairs = load_nli(name, split, data_root)
    assert len(pairs) == SIZES[name, split]
    assert all(p.premise and p.hypothesis for p in pairs)
    assert {p.source for p in pairs} <= {name, f"imppres_{split}"}


def test_labels_are_read_as_released(data_root):
    assert Counter(p.label for p in load_nli("imppres", "presupposition", data_root)) == {
        "entailment": 4500, "neutral": 7200, "contradiction": 5400}
    assert Counter(p.label for p in load_nli("xnli_en", "test", data_root)) == {
        "entailment": 1670, "neutral": 1670, "contradiction": 1670}
    sick = load_nli("sick", "train", data_root) + load_nli("sick", "test", data_root)
    assert len(sick) == 9840 and {p.group for p in sick} == {"TRAIN", "TRIAL", "TEST"}
    assert {p.label for p in load_nli("med", "train", data_root)} == {"entailment", "neutral"}
    assert {p.label for p in load_nli("dnc", "train", data_root)} == {"entailment", "not_entailment"}
    implicature = load_nli("imppres", "implicature", data_root)  # the pragmatic label: "some" implies "not all"
    some = next(p for p in implicature if p.premise == "Some teenagers criticize Guy."
                and p.hypothesis == "Not all teenagers criticize Guy.")
    assert some.label == "entailment"


def test_scone_reads_each_condition_from_its_edited_sentences(data_root):
    pairs = load_nli("scone", "train", data_root)
    first = {p.group: p for p in reversed(pairs)}  # first pair of each condition
    assert first["one_scoped"].premise == "There is a man not wearing a hat staring at people on a subway."
    assert first["no_negation"].premise == "There is a man wearing a hat staring at people on a subway."
    assert first["no_negation"].label == "neutral"  # hat -> sunhat without negation is not entailed


def test_every_file_a_set_reads_is_in_the_manifest():
    known = manifest()
    for name in SETS:
        assert files(name) and all(relative in known for relative in files(name)), name


def test_a_bad_row_is_named_by_file_row_and_field():
    rows = [{"p": "A dog runs.", "h": "An animal runs.", "l": "entailment"}, {"p": "A cat.", "h": "", "l": "neutral"}]
    with pytest.raises(DataError, match=r"x\.tsv: data row 2: field 'h' is empty"):
        checked_pairs("x.tsv", rows, "x", "p", "h", "l", {"entailment": "entailment", "neutral": "neutral"})
    with pytest.raises(DataError, match=r"x\.tsv: data row 1: field 'l' is 'maybe', not one of"):
        checked_pairs("x.tsv", [{"p": "a", "h": "b", "l": "maybe"}], "x", "p", "h", "l", {"entailment": "e"})
    with pytest.raises(DataError, match=r"x\.tsv: data row 1: field 'h' is missing"):
        checked_pairs("x.tsv", [{"p": "a", "l": "entailment"}], "x", "p", "h", "l", {"entailment": "e"})
    with pytest.raises(DataError, match="unknown NLI set 'mnli'"):
        load_nli("mnli")
    with pytest.raises(DataError, match="SICK has no split 'dev'"):
        load_nli("sick", "dev")


def test_grice_turns_are_choice_items_with_their_dialogue_so_far(data_root):
    from pragmeter.datasets.grice import load_grice

    turns = load_grice(data_root)
    assert len(turns) == 17492 and {t.kind for t in turns} == {"cb", "ig", "li", "re", "st"}
    assert all(len(t.options) == 4 and 0 <= t.meant < 4 for t in turns)
    second = next(t for t in turns if t.id == "grice-cb-1-2")
    assert second.history == (("did you leave the cucumber in the den", "I was in the dining_room"),)
    assert second.options[second.meant] == "Mia didn't place the cucumber in the den"
