"""Pairs whose explicit side an LLM wrote with the ImpScore paper's Appendix A.1 prompts (the paper did this for ~35k of
its 56k pairs). Ours come from `pragmeter generate pairs` run against the local Qwen2.5-Coder-1.5B-Instruct (Q4_K_M
GGUF, llama.cpp) and are committed as small project data in ``pragmeter/data/generated/`` with the generator model,
prompt hash, input row and upstream id of every row, so training never needs the LLM again.
``written_graded_everyday`` is different: whole graded groups (with distractors) written for pragmeter by the
Claude (Anthropic) language model, not rewrites of upstream text.

A 1.5B model often frames its answer ("The hate speech implies that ...") or copies the input: the framing is cut, and
copies (word Jaccard ≥ 0.7) and rewrites that add content (over 2x the words + 10) are dropped and counted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from pragmeter.datasets.pairs.base import SourcePairs, folder_licence, text
from pragmeter.errors import DataError
from pragmeter.metrics.overlap import word_jaccard

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
# Graded groups (level 1 = the direct sentence, 2 hedged, 3 indirect, 4 off-record): every more implicit level is
# paired with every less implicit one of its group. source name -> (file, upstream data folder of level 1 or None
# when the whole group was written for pragmeter, who wrote the levels, description).
GRADED = {
    "llm_graded_capp": ("llm_graded_capp.parquet", "capp", "Qwen2.5-Coder-1.5B",
                        "CAPP train direct requests -> LLM-written hedged / indirect / hint rewrites (graded groups)"),
    "written_graded_everyday": (
        "written_graded_everyday.parquet", None, "the Claude (Anthropic) language model",
        "everyday speech acts and figures in 32 domains, each meaning written at 4 levels of explicitness, with "
        "word-sharing distractors as hard negatives (graded groups)"),
    # written with a prompt that asks above all for a clear indirect (level 3) -> off-record (level 4) step, the step
    # the default model ranks worst; its own source so the groups above keep their splits
    "written_graded_offrecord": (
        "written_graded_offrecord.parquet", None, "the Claude (Anthropic) language model",
        "everyday speech acts and figures in 16 more domains, 4 levels of explicitness written to separate the "
        "indirect from the off-record level, with word-sharing distractors (graded groups)"),
}
# Optional columns of a graded file: distractors that share words with level 3/4 but mean something else, used as
# the hard negatives of the pairs whose implicit side is that level.
DISTRACTOR_COLUMNS = {3: ("level3_distractor",), 4: ("level4_distractor1", "level4_distractor2")}
LEVEL_COLUMNS = ("level1", "level2", "level3", "level4")
_FRAMING = re.compile(
    r"^(?:in (?:the|this) (?:given )?(?:text|sentence),?\s*)?(?:the|this) (?:given )?(?:hate speech|sentence|text|"
    r"statement|speaker|author|tweet|post)(?: in the given text)?\s+(?:implies|suggests|is implying|is suggesting|"
    r"is expressing|expresses|states|means)(?: that)?[:,]?\s*", re.IGNORECASE)


def strip_framing(text: str) -> str:
    stripped = _FRAMING.sub("", text.strip())
    return stripped[:1].upper() + stripped[1:] if stripped else stripped


def read_generated(name: str, folder: Path | None = None) -> SourcePairs:
    file, data_folder, description = FILES[name]
    path = (folder or GENERATED_DIR) / file
    out = SourcePairs(name, "LLM (Qwen2.5-Coder-1.5B)", description, licence=_licence(data_folder))
    frame = _read(path, ("implicit", "explicit", "input_row", "upstream_id"))
    for row in frame.itertuples(index=False):
        implicit, explicit = str(row.implicit).strip(), strip_framing(str(row.explicit))
        if not explicit:
            out.skipped["empty after removing the framing"] += 1
        elif word_jaccard(implicit, explicit) >= 0.7:
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
    file, data_folder, writer, description = GRADED[name]
    path = (folder or GENERATED_DIR) / file
    if data_folder is None:
        licence = "Apache-2.0 (written for pragmeter: project data, like the code)"
    else:
        licence = f"{folder_licence(data_folder)} (level 1); levels 2-4 written by {writer} (Apache-2.0)"
    out = SourcePairs(name, f"LLM ({writer}), graded rewrites", description, licence=licence)
    provenance = ("input_row", "upstream_id") if data_folder is not None else ()
    frame = _read(path, ("group_id", *LEVEL_COLUMNS, *provenance))
    for row in frame.itertuples(index=False):
        levels = [(k, text(getattr(row, c))) for k, c in enumerate(LEVEL_COLUMNS, 1)]
        levels = [(k, text) for k, text in levels if text]
        if len(levels) < 2:
            out.skipped["group with fewer than two levels"] += 1
            continue
        where = f"{row.input_row}:{row.upstream_id}" if provenance else str(row.group_id)
        for j, (high, implicit) in enumerate(levels):
            distractors = [d for d in (text(getattr(row, c, None)) for c in DISTRACTOR_COLUMNS.get(high, ())) if d]
            for i, (low, explicit) in enumerate(levels[:j]):
                out.add(implicit, explicit, f"pragmeter/data/generated/{file}#{where}:L{high}>L{low}",
                        group=f"{name}:{row.group_id}", donor=low == 1,
                        hard_negative=distractors[i % len(distractors)] if distractors else None)
    return out


def _licence(data_folder: str) -> str:
    return f"{folder_licence(data_folder)} (implicit side); explicit side written by Qwen2.5-Coder-1.5B (Apache-2.0)"


# One reader per shipped file; ``root`` is accepted (and unused) like every corpus source's.
GENERATED_SOURCES = {**{name: (lambda root=None, name=name: read_generated(name)) for name in FILES},
                     **{name: (lambda root=None, name=name: read_graded(name)) for name in GRADED}}
