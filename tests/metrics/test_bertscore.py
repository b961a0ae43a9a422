"""BERTScore with the local MiniLM encoder: identity, the multi-reference rule, idf."""

from __future__ import annotations

import numpy as np
import pytest

from pragmeter.datasets.emphasized_talk import load_emphasized_talk
from pragmeter.metrics.bertscore import BertScorer


@pytest.fixture(scope="module")
def multi_reference_items():
    items = [i for i in load_emphasized_talk() if len(i.references) >= 3]
    return items[:12]


@pytest.mark.parametrize("idf", [False, True])
def test_multi_reference_score_is_max_over_single_references(multi_reference_items, idf):
    scorer = BertScorer(layer=4, idf=idf)
    # Candidates: the current turn itself, which resembles some references more than others.
    candidates = [item.current[3:] for item in multi_reference_items]
    references = [list(item.references) for item in multi_reference_items]
    corpus = [r for refs in references for r in refs]  # idf from one fixed corpus in every call
    together = scorer.score(candidates, references, idf_references=corpus)
    singles = [scorer.score(candidates, [[refs[k] if k < len(refs) else refs[0]] for refs in references],
                            idf_references=corpus)
               for k in range(max(map(len, references)))]
    best = np.max([s.f1 for s in singles], axis=0)
    assert together.f1 == pytest.approx(best, abs=1e-6)
    assert len(set(together.best_reference.tolist())) > 1  # the max is not always the first reference


def test_identical_text_scores_one_and_empty_scores_zero():
    scorer = BertScorer()
    result = scorer.score(["the flight leaves at six.", ""], [["the flight leaves at six."], ["anything"]])
    assert result.f1[0] == pytest.approx(1.0, abs=1e-6) and result.f1[1] == 0.0
    assert "model=all-MiniLM-L6-v2|layer=6|idf=no|rescale=no" in scorer.signature()
