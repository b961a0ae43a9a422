"""Every corpus source by name: the paper's (``paper``) and the figurative ones (``pairs``), with the presets
``--sources`` accepts. A new source is one module of this package plus one entry in its registry."""

from __future__ import annotations

from collections.abc import Callable

from pragmeter.datasets.pairs import PAIR_SOURCES
from pragmeter.datasets.pairs.base import SourcePairs
from pragmeter.datasets.pairs.llm_generated import GENERATED_SOURCES
from pragmeter.datasets.pairs.paper import PAPER_SOURCES

SOURCES: dict[str, Callable[..., SourcePairs]] = {**PAPER_SOURCES, **PAIR_SOURCES, **GENERATED_SOURCES}
# Sources one side of whose pairs a language model wrote (ours, and CAPP's machine paraphrases): model cards name them,
# and the human-written evidence suite leaves them out.
LLM_WRITTEN_SOURCES: list[str] = [*GENERATED_SOURCES, "capp"]
# Named sets for ``--sources``: ``paper`` (the Table-6 rebuild, the default), ``figurative`` (the sources added for
# everyday figurative, ironic and indirect language), ``human`` (those of them that people wrote), ``general`` (the
# shipped default model's corpus: the paper's, people's figurative language and our graded groups), ``all``.
PRESETS: dict[str, list[str]] = {
    "paper": list(PAPER_SOURCES), "figurative": list(PAIR_SOURCES),
    "human": [s for s in PAIR_SOURCES if s not in LLM_WRITTEN_SOURCES],
    "generated": list(GENERATED_SOURCES),
    "general": [*PAPER_SOURCES, *(s for s in PAIR_SOURCES if s not in LLM_WRITTEN_SOURCES),
                "written_graded_everyday", "written_graded_offrecord"],
    "all": list(SOURCES)}
DEFAULT_SOURCES = PRESETS["paper"]
# Data folder of a source whose name is not its folder (for the licence the manifest records).
FOLDERS = {"inli_train": "inli", "ishate_train": "ishate"}


def preset_lines() -> list[str]:
    """``pragmeter impscore corpus sources``: each preset with its sources, as ``PRESET: a,b,…``."""
    return [f"{preset}: {','.join(names)}" for preset, names in PRESETS.items()]
