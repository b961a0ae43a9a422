"""Recipes and augmenters on the real data root (no model): splits, label schemes, train-only augmentation."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pragmeter.classify.augment import AUGMENTERS, augment_minority, make_augmenter
from pragmeter.classify.recipes import inli, ishate
from pragmeter.errors import PragmeterError


def test_inli_label_and_split_schemes(data_root):
    four = inli.build("4way", root=data_root)
    assert four.labels == ["implied", "explicit", "neutral", "contradiction"]
    assert Counter(four.test.labels) == {label: 1000 for label in four.labels}
    three = inli.build("3way", root=data_root)
    assert three.labels == ["entailed", "neutral", "contradiction"] and len(three.test) == 4000
    assert Counter(three.test.labels)["entailed"] == 2000
    detector = inli.build("implied-vs-explicit", root=data_root)
    assert set(detector.train.labels) == {"implied", "explicit"} and len(detector.test) == 2000
    held_out = inli.build("4way", "leave-out-normbank", root=data_root)
    assert "normbank" not in set(held_out.train.groups) | set(held_out.val.groups)
    assert "normbank" in set(held_out.test.groups)  # the test split stays whole: both subsets are reported
    assert held_out.report_groups["generalisation_subset"] == ["normbank"]
    cross = inli.build("4way", "conversational-to-situational", root=data_root)
    assert set(cross.train.groups) == {"circa", "ludwig"}
    with pytest.raises(PragmeterError):
        inli.build("5way", root=data_root)


def test_every_offline_augmenter_changes_text_and_is_seeded(data_root):
    plain = ishate.build("implicit", root=data_root)
    implicit = [t for t, label in zip(plain.train.texts, plain.train.labels) if label == "implicit"][:200]
    for name in AUGMENTERS:
        augmenter = make_augmenter(name, data_root)
        first = [augmenter.augment(t, random.Random(7)) for t in implicit]
        again = [augmenter.augment(t, random.Random(7)) for t in implicit]
        assert first == again, name
        changed = [(old, new) for old, new in zip(implicit, first) if new is not None]
        assert len(changed) >= 10, f"{name} applies to only {len(changed)} of 200 implicit messages"
        assert all(new != old for old, new in changed), name


def test_augmentation_touches_only_the_train_split_and_keeps_labels(data_root):
    plain = ishate.build("subtle", root=data_root)
    grown = ishate.build("subtle", "local-all,bt", seed=3, root=data_root)
    assert grown.val.texts == plain.val.texts and grown.val.labels == plain.val.labels
    assert grown.test.texts == plain.test.texts and grown.test.labels == plain.test.labels
    assert grown.train.texts[:len(plain.train)] == plain.train.texts
    extra = grown.train.subset(range(len(plain.train), len(grown.train)))
    assert len(extra) > 0 and set(extra.labels) == {"subtle"}
    counts = Counter(plain.train.labels)
    for name in AUGMENTERS:  # each offline method balances subtle with non-subtle at most
        made = grown.arguments["augmented_examples"][name]
        assert 0 < made <= counts["non-subtle"] - counts["subtle"], name
    local = [t for t, g in zip(extra.texts, extra.groups) if g.startswith("aug:local-")]
    assert not set(local) & set(plain.train.texts)
    # (build drops the released BT set's copies of dev/test messages; pragmeter's own variants make none.)
    assert not set(local) & set(plain.val.texts + plain.test.texts)


def test_augment_minority_balances_against_the_named_class(data_root):
    plain = ishate.build("implicit", root=data_root).train.head(3000)
    extra = augment_minority(plain, make_augmenter("local-eda", data_root), "implicit", "explicit", seed=0)
    counts = Counter(plain.labels)
    assert len(extra) == counts["explicit"] - counts["implicit"]
    assert set(extra.labels) == {"implicit"}


def test_unknown_augmentation_is_a_clear_error(data_root):
    with pytest.raises(PragmeterError, match="unknown augmentation"):
        ishate.build("implicit", "local-gpt", root=data_root)


def test_released_rewrites_of_dev_and_test_posts_are_dropped(data_root):
    from pragmeter.classify.examples import Examples

    kept = ishate.build("subtle", "bt", root=data_root, keep_heldout_rewrites=True)
    clean = ishate.build("subtle", "bt", root=data_root)
    heldout = set(clean.val.texts + clean.test.texts)
    released = kept.train.texts[len(kept.train) - kept.arguments["augmented_examples"]["bt"]:]
    cleaned = clean.train.texts[len(clean.train) - clean.arguments["augmented_examples"]["bt"]:]
    dropped = clean.arguments["heldout_rewrites_dropped"]["bt"]
    assert dropped == len(released) - len(cleaned) and 0 < dropped < len(released) / 2
    assert len(set(released) & heldout) >= 3 and not set(cleaned) & heldout  # the verbatim copies go
    assert kept.arguments["heldout_rewrites_kept"] and "heldout_rewrites_dropped" not in kept.arguments
    # The rule itself: a rewrite of a training post stays, a rewrite of a held-out post goes.
    train = Examples(["the weather is warm and sunny today"], ["subtle"])
    added = Examples(["the weather is warm and sunny", "they will leave and go somewhere else soon"], ["subtle"] * 2)
    assert ishate.heldout_rewrites(added, train, ["they will just leave and go somewhere else"]) == [1]
