"""The ImpScore training corpus rebuilt from public sources."""

from pragmeter.impscore.corpus.build import build_corpus, format_report, load_corpus, make_corpus_file, write_corpus
from pragmeter.datasets.pairs.registry import SOURCES

__all__ = ["SOURCES", "build_corpus", "format_report", "load_corpus", "make_corpus_file", "write_corpus"]
