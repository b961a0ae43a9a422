"""Where models break: implicitness profiles of datasets, accuracy by implicitness, the generation check
(ImpScore paper §7 and A.7, A.15), and one HTML report per model.

- :mod:`pragmeter.analysis.profile` — score distribution and pragmatic diversity of a text collection
- :mod:`pragmeter.datasets.labelled_sets` — the hate-speech and sentiment sets of the data root, ready to profile
- :mod:`pragmeter.analysis.stratify` — accuracy per ImpScore bin with Wilson intervals and a trend statistic
- :mod:`pragmeter.analysis.generation` — ask a model for sentences from most explicit to most implicit
- :mod:`pragmeter.analysis.report` — self-contained HTML pages (plots embedded, no network)
"""
