"""The rebuilt corpora, built once per test session and shared by the corpus, training, evaluator and model tests (a
rebuild reads every source file: the slowest fixture of the suite when each module built its own)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def corpus_and_report():
    from pragmeter.impscore.corpus import build_corpus

    return build_corpus(seed=0)


@pytest.fixture(scope="session")
def suite_corpus():
    """The corpus of every source that the human-written suite takes its held-out pairs from (what HumanSuite
    builds when given none), built once per session."""
    from pragmeter.impscore.corpus import build_corpus
    from pragmeter.impscore.evaluators import SUITE_CORPUS_SEED

    return build_corpus(["all"], seed=SUITE_CORPUS_SEED)[0]
