"""INLI hypothesis-only baseline (Havaldar et al., ACL 2025, Appendix D, after Poliak et al. 2018).

A classifier that never sees the premise labels each hypothesis; the closer its accuracy is to what the label
distribution alone gives, the fewer annotation artefacts the data has. The paper fine-tunes T5-XXL (overall
0.595, three classes: entailed = implied + explicit, neutral, contradiction); this check is TF-IDF (word 1–2
grams) + logistic regression, reported both 4-way (INLI labels) and 3-way (the paper's table).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pragmeter.datasets.inli import LABELS, InliItem, load_inli
from pragmeter.errors import InvalidParameter, MissingExtra, PragmeterError

THREE_WAY = {"implied": "entailed", "explicit": "entailed", "neutral": "neutral", "contradiction": "contradiction"}
FOLDS = 5


def _classifier(seed: int):
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
    except ImportError:
        raise MissingExtra("generate", "the hypothesis-only baseline", "scikit-learn is missing") from None
    return make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True),
                         LogisticRegression(max_iter=2000, random_state=seed))


def _predict(train: list[InliItem], test: list[InliItem], seed: int) -> np.ndarray:
    model = _classifier(seed)
    model.fit([i.hypothesis for i in train], [i.label for i in train])
    return model.predict([i.hypothesis for i in test])


def _scores(gold: list[str], predicted: list[str]) -> dict:
    gold_a, predicted_a = np.array(gold), np.array(predicted)
    result = {"n": len(gold), "accuracy": float((gold_a == predicted_a).mean()),
              "per_label": {label: float((predicted_a[gold_a == label] == label).mean())
                            for label in LABELS if (gold_a == label).any()}}
    gold3 = np.array([THREE_WAY[g] for g in gold])
    predicted3 = np.array([THREE_WAY[p] for p in predicted])
    result["accuracy_3way"] = float((gold3 == predicted3).mean())
    # What the label distribution alone gives: always answer the most frequent class.
    result["majority_4way"] = float(max((gold_a == l).mean() for l in LABELS))
    result["majority_3way"] = float(max((gold3 == l).mean() for l in set(THREE_WAY.values())))
    return result


def hypothesis_only(train: list[InliItem], test: list[InliItem], seed: int = 0) -> dict:
    return _scores([i.label for i in test], list(_predict(train, test, seed)))


def cross_validated(items: list[InliItem], seed: int = 0) -> dict:
    """Folds by premise, so the four hypotheses of one premise are never split between train and test."""
    premises = sorted({i.row for i in items})
    if len(premises) < 2:
        raise PragmeterError("cross-validation needs at least 2 premises")
    order = np.random.default_rng(seed).permutation(premises)
    fold_of = {row: k % min(FOLDS, len(premises)) for k, row in enumerate(order)}
    gold, predicted = [], []
    for fold in sorted(set(fold_of.values())):
        train = [i for i in items if fold_of[i.row] != fold]
        test = [i for i in items if fold_of[i.row] == fold]
        gold += [i.label for i in test]
        predicted += list(_predict(train, test, seed))
    return _scores(gold, predicted)


def run_hypothesis_baseline(file: str | None, train_file: str | None, root=None, seed: int = 0) -> dict:
    if file is None:
        if train_file is not None:
            raise InvalidParameter("train_file", train_file, "needs a file to test on")
        result = hypothesis_only(load_inli("train", root), load_inli("test", root), seed)
        return {**result, "setting": "trained on INLI train, tested on INLI test"}
    test = load_inli("test", path=Path(file))
    if train_file is None:
        return {**cross_validated(test, seed), "setting": f"{FOLDS}-fold cross-validation within {file}"}
    result = hypothesis_only(load_inli("train", path=Path(train_file)), test, seed)
    return {**result, "setting": f"trained on {train_file}, tested on {file}"}


def format_result(result: dict) -> str:
    per_label = "  ".join(f"{label} {value:.3f}" for label, value in result["per_label"].items())
    return (f"hypothesis-only baseline ({result['setting']}; TF-IDF + logistic regression), {result['n']} hypotheses\n"
            f"  4-way accuracy {result['accuracy']:.3f} (majority class {result['majority_4way']:.3f})\n"
            f"  3-way accuracy {result['accuracy_3way']:.3f} (majority class {result['majority_3way']:.3f}; "
            f"paper, T5-XXL: 0.595)\n"
            f"  per label: {per_label}")
