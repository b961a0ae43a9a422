"""Experimental pragmatic objectives for ImpScore, scored on our OOD development sets (issue 11, choice checks).

    python tools/impscore_choice_variants.py runs/corpus_default.parquet \
      '[{"name": "hardest1", "ib": 1.0, "kind": "hardest", "seeds": [0, 1, 2]}, {"name": "mlp-hn16", "mlp": 512, "hn": "source", "ha": 16.0}]'

Variants on top of the shipped default's recipe (frozen all-mpnet-base-v2, paper heads and losses, α = 8, written
groups ×8), none of them shipped (docs/results.md, "what moves the choice checks"):
``ib`` weight of an in-batch term: the implicit sentence against the explicit sides of up to ``sub`` (1,024) other
pairs of its batch, pairs whose implicit or explicit sides are paraphrases (encoder cosine ≥ ``para``, 0.8) masked;
``kind`` "hinge" (the paper's margin, averaged over the batch), "hardest" (against the nearest: the package's
``impscore train --in-batch-negatives``, default sub-batch and masking) or "infonce" (temperature ``T``); ``mlp`` a hidden width: a GELU branch added to the linear pragmatic map; and the TrainConfig
fields of tools/impscore_ablation.py (hn, ha, sw, dim, gamma2, lr, bs, epochs), whose loop trains and prints
one JSON line per seed; ``"ensemble": true`` also prints the test accuracies and development-set figures of the
variant's seeds as one ensemble (:class:`Ensemble`).
"""
import json
import sys
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).parent))
import impscore_ablation as ablation  # noqa: E402
from pragmeter.impscore import losses, training  # noqa: E402
from pragmeter.impscore.heads import ImpScoreHeads  # noqa: E402

ENCODER = "all-mpnet-base-v2"
MODE = {}
paper_loss = losses.ImpScoreLoss.forward


def in_batch_term(loss, e1, e2, pragmatic, weights):
    """Mean in-batch pragmatic term over a random sub-batch, "hinge" or "infonce" (the "hardest" form is the
    package's own: TrainConfig.in_batch_negatives)."""
    rows, distances, same = losses.in_batch_distances(loss.heads, e1, e2, MODE.get("sub", 1024), MODE.get("para", 0.8))
    positive = distances.diagonal()
    if MODE.get("kind", "hinge") == "hinge":
        hinge = torch.clamp(loss.gamma2 - (distances - positive[:, None]), min=0.0).masked_fill(same, 0.0)
        per_item = hinge.sum(1) / (~same).sum(1).clamp(min=1)
    else:
        logits = (-distances / MODE.get("T", 0.5)).masked_fill(same, float("-inf"))
        logits = torch.where(torch.eye(len(distances), dtype=torch.bool), -distances / MODE.get("T", 0.5), logits)
        per_item = torch.nn.functional.cross_entropy(logits, torch.arange(len(distances)), reduction="none")
    return losses.sub_batch_mean(per_item, rows, pragmatic, weights)


def forward(self, e1, e2, e3, pragmatic=None, e4=None, hard=None, hard_alpha=0.0, weights=None, in_batch=0.0):
    total = paper_loss(self, e1, e2, e3, pragmatic, e4, hard, hard_alpha, weights, in_batch)
    if MODE.get("ib", 0.0) > 0:
        total = total + MODE["ib"] * in_batch_term(self, e1, e2, pragmatic, weights)
    return total


class BranchedHeads(ImpScoreHeads):
    """The paper's heads, plus (``mlp`` > 0) a non-linear branch added to the pragmatic map."""

    def __init__(self, config):
        super().__init__(config)
        if MODE.get("mlp", 0):
            self.hidden = torch.nn.Linear(config.embedding_dim, MODE["mlp"])
            self.out = torch.nn.Linear(MODE["mlp"], config.dim, bias=False)

    def features(self, embeddings):
        h_p, h_s = super().features(embeddings)
        if MODE.get("mlp", 0):
            h_p = h_p + self.out(torch.nn.functional.gelu(self.hidden(embeddings)))
        return h_p, h_s


class Ensemble(torch.nn.Module):
    """Several trained heads as one model: pragmatic features concatenated and scaled by 1/√K, so the pragmatic
    distance stays a Euclidean distance (the root mean square of the members' distances); implicitness is the mean
    of the members' implicitness."""

    def __init__(self, members):
        super().__init__()
        self.members, self.config, self.k = torch.nn.ModuleList(members), members[0].config, len(members)
        self.W_p = members[0].W_p  # where ImpScore looks for the heads' device

    def features(self, embeddings):
        pragmatic, semantic = zip(*(m.features(embeddings) for m in self.members))
        return torch.cat(pragmatic, -1) / self.k ** 0.5, torch.cat(semantic, -1)

    def implicitness_from_features(self, h_p, h_s):
        l = h_s.shape[-1] // self.k
        return torch.stack([m.implicitness_from_features(h_p[..., i * l:(i + 1) * l] * self.k ** 0.5,
                                                         h_s[..., i * l:(i + 1) * l])
                            for i, m in enumerate(self.members)]).mean(0)

    def pragmatic_distance_from_features(self, a, b):
        return torch.linalg.vector_norm(a - b, dim=-1)

    def forward(self, embeddings):
        h_p, h_s = self.features(embeddings)
        return self.implicitness_from_features(h_p, h_s), h_p, h_s


losses.ImpScoreLoss.forward = forward
training.ImpScoreHeads = BranchedHeads

if __name__ == "__main__":
    corpus = pd.read_parquet(sys.argv[1])
    corpus["pragmatic"] = corpus["pragmatic"].fillna(True).astype(bool)
    splits = ablation.embed(corpus, ENCODER)
    for v in json.loads(sys.argv[2]):
        MODE.clear()
        MODE.update({k: v[k] for k in ("ib", "kind", "T", "para", "sub", "mlp") if k in v})
        if MODE.get("kind") == "hardest":  # the package's own term (TrainConfig.in_batch_negatives)
            v["ibh"] = MODE.pop("ib", 0.0)
        v.setdefault("sw", {"written_graded_everyday": 8.0})  # the shipped default's weight
        heads = [ablation.train_and_report(splits, v, ENCODER, seed) for seed in v.get("seeds", [0])]
        if v.get("ensemble"):
            ensemble = Ensemble(heads)
            test, _ = training.evaluate_heads(ensemble, splits["test"])
            print(json.dumps({"v": v.get("name"), "ensemble_of_seeds": v.get("seeds", [0]),
                              "imp": round(test["implicitness_accuracy"], 4), "prag": round(test["pragmatics_accuracy"], 4),
                              **ablation.ood_eval(ensemble, ENCODER)}), flush=True)
