"""Typed loaders for the implicit-language benchmarks (files read from the data root, checksums verified).

Each module exposes one public loader returning a list of frozen dataclasses, plus ``FILES`` (the data-root
relative paths it reads) so results can record checksums and users can see where to download them:

- :func:`pragmeter.datasets.inli.load_inli` — INLI premise/hypothesis items (4 per premise)
- :func:`pragmeter.datasets.drinq.load_drinq` — DRInQ multiple-choice items
- :func:`pragmeter.datasets.emphasized_talk.load_emphasized_talk` — one item per emphasized word
- :func:`pragmeter.datasets.ishate.load_ishate` — ISHate Task A (implicit) / Task B (subtle)
- :func:`pragmeter.datasets.labelled_texts.load_labelled_texts` — any text + binary label table
"""

from pragmeter.datasets.common import upstream_urls

__all__ = ["upstream_urls"]
