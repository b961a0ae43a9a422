"""Length-grouped training batches and length-sorted prediction: every example once per epoch, seeded, less
padding than shuffled batches, and predictions in input order that match one-at-a-time scoring."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.training import LENGTH_WINDOW, FineTuneConfig, epoch_batches
from pragmeter.errors import PragmeterError


def padded_tokens(batches, lengths) -> int:
    return sum(max(lengths[i] for i in batch) * len(batch) for batch in batches)


@pytest.mark.parametrize("grouped", [False, True])
def test_every_example_once_per_epoch_and_seeded(grouped):
    lengths = np.random.default_rng(0).integers(5, 120, size=1000)
    make = lambda seed: epoch_batches(1000, 16, torch.Generator().manual_seed(seed),  # noqa: E731
                                      lengths if grouped else None)
    batches = make(3)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(1000))
    assert all(1 <= len(b) <= 16 for b in batches) and sum(len(b) == 16 for b in batches) >= len(batches) - 2
    assert make(3) == batches and make(4) != batches


def test_plain_batches_are_the_seeded_shuffle_cut_in_order():
    order = torch.randperm(100, generator=torch.Generator().manual_seed(7)).tolist()
    assert epoch_batches(100, 32, torch.Generator().manual_seed(7)) == [order[i:i + 32] for i in range(0, 100, 32)]


def test_grouped_batches_pad_much_less_and_stay_shuffled():
    lengths = np.random.default_rng(1).lognormal(3.2, 0.5, size=4000).astype(int) + 3
    plain = epoch_batches(4000, 32, torch.Generator().manual_seed(0))
    grouped = epoch_batches(4000, 32, torch.Generator().manual_seed(0), lengths)
    assert padded_tokens(grouped, lengths) < 0.75 * padded_tokens(plain, lengths)
    # Batch order is shuffled: consecutive batches are not sorted by length across the epoch.
    maxima = [max(lengths[i] for i in b) for b in grouped]
    assert maxima != sorted(maxima) and maxima != sorted(maxima, reverse=True)
    assert LENGTH_WINDOW * 32 < 4000  # the test spans several windows


def test_unknown_precision_is_a_clear_error():
    with pytest.raises(PragmeterError, match="precision='fp8': must be one of"):
        FineTuneConfig(precision="fp8")


def test_length_sorted_prediction_keeps_input_order():
    settings = ClassifierSettings(labels=["a", "b", "c"], base_encoder="all-MiniLM-L6-v2", max_length=64,
                                  input_kind="single")
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu", seed=0)
    texts = ["ok", "This is a much longer sentence than the first one, with several clauses in it.", "Fine then.",
             "Would you mind terribly closing the window if it is not too much trouble?", "no", "Sure, why not."]
    together = classifier.probabilities(texts, batch_size=4)
    alone = np.concatenate([classifier.probabilities([t], batch_size=1) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert classifier.token_lengths(texts).tolist() == [len(classifier.tokenizer(t)["input_ids"]) for t in texts]
