"""Graded groups for ImpScore (issue 11, item 3): an LLM rewrites each direct sentence at three less explicit
levels — hedged (2), indirect (3), off-record hint (4) — one request per level with our prompt
``impscore_graded_rewrites.txt``. The direct sentence is level 1. A group is kept with every level that passed
the checks; the corpus source ``llm_graded`` turns each group into pairs (more implicit level, less implicit level).

Checks per level (on top of empty / refused): one sentence or two at most, not a copy of any lower level
(word Jaccard ≥ 0.7) or of an example in the prompt (≥ 0.5), not much longer than the input (over 2x the words
+ 10); a hedged version keeps at least 0.3 of the input's content words, and a hint must not repeat them
(overlap ≥ 0.6) — an off-record hint that restates the request is not one.
Output columns: group_id, level1 … level4 (None where a level was dropped), input_row, upstream_id (with
``--id-column``), generator_model and the
sha256 prefix of each level's prompt.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pandas as pd

from pragmeter.generate.output import read_texts, write_rows
from pragmeter.generate.pairs import clean_explicit
from pragmeter.generate.prompts import prompt_hash, prompt_text
from pragmeter.generate.session import GenerationSession
from pragmeter.generate.validation import Malformed
from pragmeter.metrics.overlap import FUNCTION_WORDS, word_jaccard, words

PROMPT_FILE = "impscore_graded_rewrites.txt"
LEVELS = {2: "hedged", 3: "indirect", 4: "hint"}
MAX_TOKENS = 96
_PREFIX = re.compile(r"^\s*(?:\*\*)?(?:hedged|indirect|hint|remark|rewritten(?: sentence)?|answer|level \d)"
                     r"(?: version)?\s*(?:\*\*)?\s*:\s*", re.IGNORECASE)


@cache
def level_prompts() -> dict[int, str]:
    """Level -> system prompt, from the shipped prompt file (``name: text`` lines, ``#`` lines are notes)."""
    by_name = {}
    for line in prompt_text(PROMPT_FILE).splitlines():
        name, sep, text = line.partition(": ")
        if sep and not line.startswith("#"):
            by_name[name.strip()] = text.strip()
    return {level: by_name[name] for level, name in LEVELS.items()}


def rewrite_reason(level: int, text: str, lower_levels: list[str]) -> str | None:
    """Why a rewrite at ``level`` is not kept (None: kept); ``lower_levels[0]`` is the direct input."""
    direct = lower_levels[0]
    if len(re.findall(r"[^\W\d_]", text)) < 2:
        return "too few letters"
    if len(re.findall(r"[.!?](?:\s|$)", text.strip())) > 2:
        return "more than two sentences"
    if len(text.split()) > 2 * len(direct.split()) + 10:
        return "rewrite adds content (over 2x the words + 10)"
    if any(word_jaccard(text, lower) >= 0.7 for lower in lower_levels):
        return "copy of a lower level (word Jaccard >= 0.7)"
    if any(word_jaccard(text, example) >= 0.5 for example in prompt_examples()):
        return "copies an example of the prompt"
    content = words(direct) - FUNCTION_WORDS
    overlap = len(content & words(text)) / len(content) if content else None
    if level == 2 and overlap is not None and overlap < 0.3:
        return "hedged version drops the input's content words"
    if level == 4 and overlap is not None and overlap >= 0.6:
        return "hint restates the input's content words"
    return None


@cache
def prompt_examples() -> tuple[str, ...]:
    """The example answers written in the prompts (a small model sometimes answers with one of them)."""
    return tuple(example for prompt in level_prompts().values() for example in re.findall(r'-> "([^"]+)"', prompt))


def clean_rewrite(answer: str) -> str:
    text = clean_explicit(answer.strip().splitlines()[0] if answer.strip() else "")
    return clean_explicit(_PREFIX.sub("", text))


def level_parser(level: int, lower_levels: list[str]):
    def parse(answer: str) -> str:
        text = clean_rewrite(answer)
        reason = rewrite_reason(level, text, lower_levels)
        if reason:
            raise Malformed(reason)
        return text

    return parse


async def generate_graded(session: GenerationSession, input_path: Path, column: str, output: Path,
                          overwrite: bool, id_column: str | None = None) -> pd.DataFrame:
    rows, texts = read_texts(input_path, column, session.say)
    ids = None
    if id_column is not None:
        from pragmeter.io import read_table, require_column

        values = require_column(read_table(input_path), id_column, input_path)
        ids = [str(values[row]) for row in rows]
    prompts = level_prompts()
    levels: dict[int, list[str | None]] = {1: list(texts)}
    for level, system in prompts.items():
        # A level is checked against the levels below it that were kept, so each step is a new rewrite.
        lower = [[levels[k][i] for k in sorted(levels) if levels[k][i] is not None] for i in range(len(texts))]
        messages = [[{"role": "system", "content": system}, {"role": "user", "content": text}] for text in texts]
        outcomes = await session.stage(LEVELS[level], messages, [level_parser(level, lw) for lw in lower],
                                       MAX_TOKENS, templates={LEVELS[level]: system})
        levels[level] = [o.value if o.ok else None for o in outcomes]
    frame = pd.DataFrame({"group_id": [f"g{row}" for row in rows],
                          **{f"level{k}": v for k, v in levels.items()},
                          "input_row": rows, **({"upstream_id": ids} if ids is not None else {}),
                          "generator_model": session.model,
                          **{f"prompt_{name}": prompt_hash(prompts[level]) for level, name in LEVELS.items()}})
    kept = frame[[f"level{k}" for k in LEVELS]].notna().any(axis=1)
    if not kept.all():
        session.filtered(LEVELS[4], "group with no rewrite left", int((~kept).sum()))
    frame = frame.loc[kept].reset_index(drop=True)
    write_rows(frame, output, overwrite, session, "graded", {"input": str(input_path), "column": column})
    return frame
