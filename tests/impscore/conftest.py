"""The rebuilt corpus, built once per test session and shared by the corpus and training tests (a rebuild reads
every source file: the slowest fixture of the suite when each module built its own)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def corpus_and_report():
    from pragmeter.impscore.corpus import build_corpus

    return build_corpus(seed=0)
