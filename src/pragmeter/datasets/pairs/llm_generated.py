"""Pairs whose explicit side an LLM wrote with the ImpScore paper's Appendix A.1 prompts (the paper did this for
~35k of its 56k pairs). Ours come from `pragmeter generate pairs` run against the local Qwen2.5-Coder-1.5B-Instruct
(Q4_K_M GGUF, llama.cpp) and are committed as small project data in ``pragmeter/data/generated/`` with the generator
model, prompt hash, input row and upstream id of every row, so training never needs the LLM again.

A 1.5B model often frames its answer ("The hate speech implies that ...") or copies the input: the framing is cut,
and copies (word Jaccard ≥ 0.7) and rewrites that add content (over 2x the words + 10) are dropped and counted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from pragmeter.datasets.pairs.base import SourcePairs, folder_licence
from pragmeter.errors import DataError

GENERATED_DIR = Path(__file__).resolve().parents[2] / "data" / "generated"
# source name -> (file, upstream data folder whose licence the implicit side carries, description)
FILES = {
    "llm_ishate_train": ("llm_ishate_train.parquet", "ishate",
                         "ISHate train implicit HS -> LLM-written explicit statement (paper's 'Adversarial' prompt)"),
    "llm_absa_train": ("llm_absa_train.parquet", "absa_implicit",
                       "SemEval-2014 ABSA train, implicit-sentiment sentences -> LLM-written explicit sentiment"),
    "llm_dghsd_dev": ("llm_dghsd_dev.parquet", "dghsd",
                      "DynaHate dev 'animosity' hate -> LLM-written explicit statement (paper's DGHSD prompt)"),
}
# Graded groups from `pragmeter generate graded` (level 1 = the upstream direct sentence, 2 hedged, 3 indirect,
# 4 hint): every more implicit level is paired with every less implicit one of its group.
GRADED = {
    "llm_graded_capp": ("llm_graded_capp.parquet", "capp",
                        "CAPP train direct requests -> LLM-written hedged / indirect / hint rewrites (graded groups)"),
}
LEVEL_COLUMNS = ("level1", "level2", "level3", "level4")
_FRAMING = re.compile(
    r"^(?:in (?:the|this) (?:given )?(?:text|sentence),?\s*)?(?:the|this) (?:given )?(?:hate speech|sentence|text|"
    r"statement|speaker|author|tweet|post)(?: in the given text)?\s+(?:implies|suggests|is implying|is suggesting|"
    r"is expressing|expresses|states|means)(?: that)?[:,]?\s*", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9']+")


def strip_framing(text: str) -> str:
    stripped = _FRAMING.sub("", text.strip())
    return stripped[:1].upper() + stripped[1:] if stripped else stripped


def _jaccard(a: str, b: str) -> float:
    left, right = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(left & right) / max(len(left | right), 1)


def read_generated(name: str, folder: Path | None = None) -> SourcePairs:
    file, data_folder, description = FILES[name]
    path = (folder or GENERATED_DIR) / file
    out = SourcePairs(name, "LLM (Qwen2.5-Coder-1.5B)", description, licence=_licence(data_folder))
    frame = _read(path, ("implicit", "explicit", "input_row", "upstream_id"))
    for row in frame.itertuples(index=False):
        implicit, explicit = str(row.implicit).strip(), strip_framing(str(row.explicit))
        if not explicit:
            out.skipped["empty after removing the framing"] += 1
        elif _jaccard(implicit, explicit) >= 0.7:
            out.skipped["copy of the implicit sentence (word Jaccard >= 0.7)"] += 1
        elif len(explicit.split()) > 2 * len(implicit.split()) + 10:
            out.skipped["rewrite adds content (over 2x the words + 10)"] += 1
        else:
            out.add(implicit, explicit, f"pragmeter/data/generated/{file}#{row.input_row}:{row.upstream_id}")
    return out


def _read(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: cannot read the generated pairs ({error.__class__.__name__})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
    return frame


def read_graded(name: str, folder: Path | None = None) -> SourcePairs:
    """Pairs (more implicit level, less implicit level) of every shipped graded group; a group is one split unit,
    and only direct (level-1) sentences serve as other pairs' negatives."""
    file, data_folder, description = GRADED[name]
    path = (folder or GENERATED_DIR) / file
    out = SourcePairs(name, "LLM (Qwen2.5-Coder-1.5B), graded rewrites", description,
                      licence=f"{folder_licence(data_folder)} (level 1); levels 2-4 written by Qwen2.5-Coder-1.5B "
                              "(Apache-2.0)")
    frame = _read(path, ("group_id", *LEVEL_COLUMNS, "input_row", "upstream_id"))
    for row in frame.itertuples(index=False):
        levels = [(k, " ".join(str(text).split())) for k, text in enumerate((getattr(row, c) for c in LEVEL_COLUMNS), 1)
                  if isinstance(text, str) and text.strip()]
        if len(levels) < 2:
            out.skipped["group with fewer than two levels"] += 1
            continue
        for j, (high, implicit) in enumerate(levels):
            for low, explicit in levels[:j]:
                out.add(implicit, explicit, f"pragmeter/data/generated/{file}#{row.input_row}:{row.upstream_id}:"
                                            f"L{high}>L{low}", group=f"{name}:{row.group_id}", donor=low == 1)
    return out


def _licence(data_folder: str) -> str:
    return f"{folder_licence(data_folder)} (implicit side); explicit side written by Qwen2.5-Coder-1.5B (Apache-2.0)"


# One reader per shipped file; ``root`` is accepted (and unused) like every corpus source's.
GENERATED_SOURCES = {**{name: (lambda root=None, name=name: read_generated(name)) for name in FILES},
                     **{name: (lambda root=None, name=name: read_graded(name)) for name in GRADED}}
