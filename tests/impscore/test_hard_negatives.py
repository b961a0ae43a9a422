"""Hard negatives for the pragmatic margin: mined in encoder space, never a paraphrase of the pair's own meaning."""

import torch

from pragmeter.impscore.training import TrainConfig, hard_negative_batch, mine_hard_negatives
from pragmeter.impscore.triplets import TripletEmbeddings


def _data():
    # pair 0's implicit sentence lies near pair 1's explicit side; pair 2's explicit side paraphrases pair 0's.
    e1 = torch.tensor([[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    e2 = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.05, 1.0]])
    e3 = e2.roll(1, dims=0)
    hard = torch.tensor([False, True, False])
    e4 = torch.where(hard[:, None], torch.tensor([[9.0, 9.0, 9.0]]), e3)
    return TripletEmbeddings(e1, e2, e3, ["s"] * 3, None, e4, hard)


def test_mined_negative_is_the_nearest_non_paraphrase():
    data = _data()
    mined = mine_hard_negatives(data, pool=3)
    assert torch.equal(mined[0], data.e2[1])  # nearest to e1[0], and not its own pair
    assert not torch.equal(mined[0], data.e2[2])  # pair 2's explicit side paraphrases pair 0's: skipped


def test_modes_select_source_mined_or_both():
    data = _data()
    assert hard_negative_batch(data, TrainConfig(hard_negatives="none")) is None
    e4, mask = hard_negative_batch(data, TrainConfig(hard_negatives="source"))
    assert mask.tolist() == [False, True, False] and torch.equal(e4[1], data.e4[1])
    e4, mask = hard_negative_batch(data, TrainConfig(hard_negatives="both"))
    assert mask.all() and torch.equal(e4[1], data.e4[1]) and torch.equal(e4[0], data.e2[1])


def test_only_an_objective_with_source_hard_negatives_embeds_their_texts(tmp_path):
    """The corpus's hard_negative texts (a twelfth of the README's corpus) are embedded only when training reads them."""
    import pandas as pd

    from pragmeter.encoders.embedding_cache import EmbeddingCache
    from pragmeter.encoders.fingerprint import encoder_key
    from pragmeter.impscore.training import uses_source_hard_negatives
    from pragmeter.impscore.triplets import embed_corpus

    assert [uses_source_hard_negatives(TrainConfig(hard_negatives=mode)) for mode in ("none", "source", "mined", "both")] \
        == [False, True, False, True]
    assert not uses_source_hard_negatives(TrainConfig(hard_negatives="source", hard_alpha=0))
    near_miss = "The kettle is a rather large bird."
    corpus = pd.DataFrame({"implicit": ["It is freezing in here.", "Lovely weather for ducks."],
                           "explicit": ["Please close the window.", "It is raining hard."],
                           "negative": ["It is raining hard.", "Please close the window."],
                           "hard_negative": [None, near_miss], "source": ["s", "s"], "split": ["train", "train"]})
    cache = EmbeddingCache(tmp_path, f"{encoder_key('all-MiniLM-L6-v2')}-torch-fp32")
    splits = embed_corpus(corpus, "all-MiniLM-L6-v2", tmp_path, show_progress=False, hard_negatives=False)
    assert splits["train"].e4 is None and near_miss not in cache and "Lovely weather for ducks." in cache
    splits = embed_corpus(corpus, "all-MiniLM-L6-v2", tmp_path, show_progress=False)
    assert splits["train"].hard.tolist() == [False, True] and near_miss in cache
