"""ImpScore positive pairs (Wang et al., ICLR 2025, §4 and Appendix A.1): an LLM writes the explicit side of
each implicit sentence with the paper's system prompt for its kind of source; prefixes the prompt forbids are
cleaned off; pairs are deduplicated, split 8:1:1 and given negatives with the corpus builder's own functions.

Output columns: the corpus format that ``pragmeter impscore train --corpus`` reads (pair_id, source, implicit,
explicit, negative, negative_pair_id, split) plus provenance (generator_model, prompt_explicit = sha256 prefix
of the system prompt, prompt_source = the paper's source whose prompt was used, input_row).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from pragmeter.errors import PragmeterError
from pragmeter.generate.output import read_texts, write_rows
from pragmeter.generate.prompts import prompt_hash, prompt_text
from pragmeter.generate.session import GenerationSession
from pragmeter.generate.validation import Malformed
from pragmeter.impscore.corpus.build import COLUMNS, assign_splits, garbage_reason, sample_negatives
from pragmeter.text import normalise

PROMPT_FILE = "impscore_explicit_generation.txt"
# --source-type -> the paper source whose prompt it uses by default (any paper source can be named instead).
SOURCE_TYPES = {"hate": "toxigen", "dialogue": "implicatures", "sarcasm": "snarks", "sentiment": "absa",
                "irony": "semeval"}
PROVENANCE = ["generator_model", "prompt_explicit", "prompt_source", "input_row"]
MAX_TOKENS = 256

# Prefixes the prompts tell the model not to write ("Explicit version:", "An explicit version:",
# "<Explicit Response>:", "B:"), and close variants models produce anyway.
_PREFIX = re.compile(
    r"""^\s*(?:\*\*)?(?:
        (?:an?\s+|the\s+)?(?:more\s+)?explicit(?:\s+(?:version|sentence|response|statement|meaning))?
            (?:\s+of\s+(?:the|b['’]s)\s+(?:response|sentence))?
      | <\s*explicit\s+response\s*>
      | b
    )\s*(?:\*\*)?\s*:\s*(?:\*\*)?""",
    re.IGNORECASE | re.VERBOSE,
)
_QUOTES = "\"'“”‘’"


@cache
def system_prompts() -> dict[str, str]:
    """Paper source name (lower case) -> its system prompt, from the shipped Appendix A.1 file."""
    prompts: dict[str, str] = {}
    for line in prompt_text(PROMPT_FILE).splitlines():
        names, sep, text = line.partition(": ")
        if not sep or names.startswith("role"):
            continue
        for name in names.split(" / "):
            prompts[name.strip().lower()] = text.strip()
    return prompts


def prompt_source(source_type: str, source: str | None = None) -> str:
    name = (source or SOURCE_TYPES.get(source_type, "")).lower()
    if name not in system_prompts():
        known = ", ".join(sorted(system_prompts()))
        raise PragmeterError(f"no explicit-generation prompt for {source or source_type!r}; paper sources: {known}")
    return name


def clean_explicit(text: str) -> str:
    """The answer without forbidden prefixes, surrounding quotes or line breaks."""
    text = " ".join(text.split())
    previous = None
    while previous != text:
        previous = text
        text = _PREFIX.sub("", text).strip()
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            text = text[1:-1].strip()
    return text


def explicit_parser(implicit: str):
    def parse(answer: str) -> str:
        explicit = clean_explicit(answer)
        reason = garbage_reason(implicit, explicit) if explicit else "nothing left after removing prefixes"
        if reason:
            raise Malformed(reason)
        return explicit

    return parse


def assemble(source: str, implicit: list[str], explicit: list[str], extra: dict[str, list], seed: int,
             session: GenerationSession, stage: str) -> pd.DataFrame:
    """Deduplicate, split and attach negatives exactly as ``pragmeter impscore corpus build`` does."""
    frame = pd.DataFrame({"source": source, "implicit": implicit, "explicit": explicit, **extra})
    duplicate = pd.Series(list(zip(frame["implicit"].map(normalise), frame["explicit"].map(normalise)))).duplicated()
    if duplicate.any():
        session.filtered(stage, "duplicate pair", int(duplicate.sum()))
    frame = frame.loc[~duplicate.to_numpy()].reset_index(drop=True)
    frame["split"] = assign_splits(frame, seed)
    negatives = sample_negatives(frame, seed)
    frame["negative_pair_id"] = negatives
    frame["pair_id"] = np.arange(len(frame))
    frame["negative"] = [frame["explicit"].iat[j] if j >= 0 else None for j in negatives]
    frame["pragmatic"] = True  # the model writes a paraphrase of the implicit sentence
    if (negatives < 0).any():
        session.filtered(stage, "no negative available (split too small)", int((negatives < 0).sum()))
    return frame.loc[negatives >= 0, COLUMNS + [c for c in frame.columns if c not in COLUMNS]].reset_index(drop=True)


async def generate_pairs(session: GenerationSession, input_path: Path, column: str, source_type: str,
                         output: Path, overwrite: bool, source_name: str | None = None,
                         paper_source: str | None = None, seed: int = 0) -> pd.DataFrame:
    name = prompt_source(source_type, paper_source)
    system = system_prompts()[name]
    rows, texts = read_texts(input_path, column, session.say)
    prompts = [[{"role": "system", "content": system}, {"role": "user", "content": text}] for text in texts]
    outcomes = await session.stage("explicit", prompts, [explicit_parser(text) for text in texts], MAX_TOKENS,
                                   templates={"explicit": system})
    kept = [i for i, o in enumerate(outcomes) if o.ok]
    frame = assemble(
        source_name or f"generated_{source_type}", [texts[i] for i in kept], [outcomes[i].value for i in kept],
        {"generator_model": session.model, "prompt_explicit": prompt_hash(system), "prompt_source": name,
         "input_row": [rows[i] for i in kept]},
        seed, session, "explicit",
    )
    write_rows(frame, output, overwrite, session, "pairs", {"input": str(input_path), "source_type": source_type})
    return frame

