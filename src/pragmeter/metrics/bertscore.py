"""BERTScore (Zhang et al., ICLR 2020) with any local transformers encoder, offline.

Greedy cosine matching of contextual token embeddings from one hidden layer: precision averages, over the
candidate's tokens, the best similarity to a reference token; recall the reverse; F1 their harmonic mean.
[CLS]/[SEP] (special tokens) get weight 0; with ``idf`` the other tokens are weighted by
log((M + 1) / (df + 1)) over the M reference sentences, as in the bert-score package. Baseline rescaling is
not applied. With several references an item scores its best reference by F1 (P and R of that reference),
the bert-score package's multi-reference rule. An empty candidate scores 0.

Default encoder: all-MiniLM-L6-v2 (6 layers), last layer: this sentence-transformers model is contrastively
tuned at its output, so its last layer carries the semantic similarity. The paper used the bert-score
default (roberta-large, layer 17): figures from different encoders are not comparable.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import cache

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_LAYER = 6


@cache
def _load(location: str):
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(location)
    model = AutoModel.from_pretrained(location)
    model.eval()
    model.requires_grad_(False)  # not torch.set_grad_enabled(False): that would stop training later in the process
    return tokenizer, model


@dataclass(frozen=True)
class BertScoreResult:
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    best_reference: np.ndarray  # index of the reference each item's scores come from


class BertScorer:
    def __init__(self, model: str = DEFAULT_MODEL, layer: int = DEFAULT_LAYER, idf: bool = False,
                 batch_size: int = 64, max_length: int = 256):
        from pragmeter.encoders import canonical_name, resolve_encoder

        self.model_name = canonical_name(model)
        self.location = resolve_encoder(model)
        self.layer, self.idf, self.batch_size, self.max_length = layer, idf, batch_size, max_length

    def signature(self) -> str:
        import transformers

        return (f"bertscore|model={self.model_name}|layer={self.layer}|idf={'yes' if self.idf else 'no'}"
                f"|rescale=no|multi-ref=max-f1|transformers={transformers.__version__}")

    def _embed(self, sentences: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """sentence -> (unit-norm token embeddings, token ids), special tokens included (weighted 0 later)."""
        import torch

        from pragmeter.errors import PragmeterError

        tokenizer, model = _load(self.location)
        n_layers = model.config.num_hidden_layers
        if not 0 <= self.layer <= n_layers:
            raise PragmeterError(f"BERTScore layer {self.layer} out of range: {self.model_name} has {n_layers} layers")
        unique = sorted(set(sentences), key=len)
        out = {}
        for start in range(0, len(unique), self.batch_size):
            batch = unique[start:start + self.batch_size]
            encoded = tokenizer(batch, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
            with torch.no_grad():
                hidden = model(**encoded, output_hidden_states=True).hidden_states[self.layer]
            hidden = torch.nn.functional.normalize(hidden, dim=-1)
            for row, sentence in enumerate(batch):
                length = int(encoded["attention_mask"][row].sum())
                out[sentence] = (hidden[row, :length].numpy().astype(np.float32),
                                 encoded["input_ids"][row, :length].numpy())
        return out

    def _weights(self, ids: np.ndarray, idf: dict[int, float] | None) -> np.ndarray:
        tokenizer, _ = _load(self.location)
        special = set(tokenizer.all_special_ids)
        weights = np.array([0.0 if t in special else (idf.get(int(t), self._max_idf) if idf else 1.0) for t in ids])
        return weights

    def _idf(self, references: list[str], embedded) -> dict[int, float]:
        documents = Counter()
        for sentence in references:
            documents.update(set(int(t) for t in embedded[sentence][1]))
        total = len(references)
        self._max_idf = math.log(total + 1)  # unseen tokens: df = 0
        return {token: math.log((total + 1) / (df + 1)) for token, df in documents.items()}

    def score(self, candidates: list[str], references: list[list[str]],
              idf_references: list[str] | None = None) -> BertScoreResult:
        """Scores of each candidate against its references; idf (when on) is computed over ``idf_references``
        (default: all the references given), so a fixed corpus gives scores independent of the batch."""
        if len(candidates) != len(references):
            raise ValueError("one list of references per candidate")
        all_refs = [r for refs in references for r in refs]
        idf_corpus = all_refs if idf_references is None else list(idf_references)
        embedded = self._embed([c for c in candidates if c.strip()] + all_refs + (idf_corpus if self.idf else []))
        self._max_idf = 1.0
        idf = self._idf(idf_corpus, embedded) if self.idf else None
        n = len(candidates)
        precision, recall, f1 = np.zeros(n), np.zeros(n), np.zeros(n)
        best = np.zeros(n, dtype=int)
        for i, (candidate, refs) in enumerate(zip(candidates, references)):
            if not candidate.strip() or not refs:
                continue
            cand_emb, cand_ids = embedded[candidate]
            cand_w = self._weights(cand_ids, idf)
            scored = []
            for ref in refs:
                ref_emb, ref_ids = embedded[ref]
                ref_w = self._weights(ref_ids, idf)
                similarity = np.clip(cand_emb @ ref_emb.T, -1.0, 1.0)  # float error can exceed 1
                p = float((similarity.max(axis=1) * cand_w).sum() / cand_w.sum()) if cand_w.sum() else 0.0
                r = float((similarity.max(axis=0) * ref_w).sum() / ref_w.sum()) if ref_w.sum() else 0.0
                scored.append((2 * p * r / (p + r) if p + r > 0 else 0.0, p, r))
            j = int(np.argmax([s[0] for s in scored]))
            f1[i], precision[i], recall[i] = scored[j]
            best[i] = j
        return BertScoreResult(precision, recall, f1, best)
