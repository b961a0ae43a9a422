"""INLI generation (Havaldar et al., ACL 2025, §4 and Appendix E) with the upstream prompts.

Stage 1, implicature augmentation: a conversational frame (Circa, Ludwig) becomes a premise by template, with two
random first names, and the LLM extracts the implied entailment given the yes/no meaning of the indirect answer;
a situational frame (NormBank, SocialChem) goes to the LLM, which writes the premise (passage) and implicature.
Stage 2, alternative hypotheses: explicit, neutral and contradictory statements made by editing the implied one.
Stage 3, paraphrasing of every generated hypothesis, except the explicit ones of conversational frames (the
paper: "these hypotheses are simpler and paraphrasing them might alter their true labels"). A row is written
only when all its stages succeeded.

Output: the INLI CSV schema (unnamed index, dataset, premise, implied_entailment, explicit_entailment, neutral,
contradiction) + generator_model, prompt_augmentation, prompt_alternatives, prompt_paraphrase, frame_row.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pragmeter.errors import DataError
from pragmeter.generate.output import write_rows
from pragmeter.generate.prompts import fill, prompt_hash, prompt_text, python_prompts
from pragmeter.generate.session import GenerationSession
from pragmeter.generate.validation import Malformed, labelled_lines
from pragmeter.text import normalise
from pragmeter.io import read_table, require_column

AUGMENTATION = "inli_implicature_augmentation.txt"
ALTERNATIVES = "inli_alternative_hypotheses.txt"
PARAPHRASING = "inli_paraphrasing.txt"
CONVERSATIONAL = ("circa", "ludwig")
# Frame type -> (stage-1 prompt, stage-2 prompt) names in the upstream files (Ludwig comes from BIG-bench).
PROMPTS = {"circa": ("indirect_extraction_prompt", "circa_prompt"),
           "ludwig": ("yesno_extraction_prompt", "bigbench_prompt"),
           "normbank": ("normbank_prompt", "normbank_prompt"),
           "socialchem": ("socialchem_prompt", "socialchem_prompt")}
COLUMNS = {"circa": ("context", "question-X", "answer-Y", "goldstandard1"),
           "ludwig": ("Context utterance", "Response utterance", "Implicature"),
           "normbank": ("setting", "behavior", "details"),
           "socialchem": ("situation", "rot")}
HYPOTHESES = ("implied_entailment", "explicit_entailment", "neutral", "contradiction")
MAX_TOKENS = 512


@dataclass
class Frame:
    row: int
    prompt: str  # stage-1 prompt, filled
    premise: str | None  # set for conversational frames (template); situational ones get it from the LLM


def names() -> list[str]:
    return [n.strip() for n in prompt_text("names.txt").splitlines() if n.strip()]


def _meaning(value: str) -> str | None:
    """'Yes', 'No.', 'yes' -> 'yes'/'no'; graded or missing answers ('Probably yes', '') -> None (skipped)."""
    word = value.strip().rstrip(".").lower()
    return word if word in ("yes", "no") else None


def read_frames(path: Path, frame_type: str, seed: int, say: Callable[[str], None]) -> list[Frame]:
    table = read_table(path)
    columns = [require_column(table, c, path).fillna("").astype(str) for c in COLUMNS[frame_type]]
    stage1 = python_prompts(AUGMENTATION)[PROMPTS[frame_type][0]]
    rng = random.Random(seed)
    pool = names()
    frames, skipped = [], 0
    for row, values in enumerate(zip(*columns)):
        values = [" ".join(v.split()) for v in values]
        texts = values[:-1] if frame_type in CONVERSATIONAL else values  # an empty gold meaning is skipped below
        if not all(texts):
            raise DataError(f"{path}: data row {row + 1}: field {COLUMNS[frame_type][texts.index('')]!r} is empty")
        if frame_type in CONVERSATIONAL:
            *parts, gold = values
            meaning = _meaning(gold)
            if meaning is None:
                skipped += 1
                continue
            first, second = rng.sample(pool, 2)
            if frame_type == "circa":
                context, question, answer = parts
                context = re.sub(r"\bY\b", second, re.sub(r"\bX\b", first, context))
                premise = f'{context} {first} says, "{question}" {second} responds, "{answer}"'
            else:
                question, answer = parts
                premise = f'{first} says, "{question}" {second} responds, "{answer}"'
            frames.append(Frame(row, fill(stage1, meaning, premise), premise))
        else:
            frames.append(Frame(row, fill(stage1, *values), None))
    if skipped:
        say(f"input {path}: {skipped} frame(s) without a plain yes/no meaning skipped")
    return frames


def _augmentation_parser(conversational: bool):
    labels = ["Implicature"] if conversational else ["Passage", "Implicature"]

    def parse(answer: str) -> dict[str, str]:
        return labelled_lines(answer, labels)

    return parse


def _alternatives_parser(implied: str):
    labels = ["Explicit statement", "Neutral statement", "Contradictory statement"]

    def parse(answer: str) -> dict[str, str]:
        found = labelled_lines(answer, labels)
        texts = [normalise(implied), *(normalise(found[label]) for label in labels)]
        if len(set(texts)) < 4:
            raise Malformed("two hypotheses are the same")
        return {"explicit_entailment": found["Explicit statement"], "neutral": found["Neutral statement"],
                "contradiction": found["Contradictory statement"]}

    return parse


def _paraphrase(answer: str) -> str:
    return labelled_lines(answer, ["Paraphrase"])["Paraphrase"]


def _user(prompt: str) -> list[dict]:
    return [{"role": "user", "content": prompt}]


async def generate_inli(session: GenerationSession, input_path: Path, frame_type: str, output: Path,
                        overwrite: bool, seed: int = 0) -> pd.DataFrame:
    conversational = frame_type in CONVERSATIONAL
    stage1_name, stage2_name = PROMPTS[frame_type]
    stage1_template = python_prompts(AUGMENTATION)[stage1_name]
    stage2_template = python_prompts(ALTERNATIVES)[stage2_name]
    paraphrase_template = python_prompts(PARAPHRASING)["paraphrase_prompt"]
    frames = read_frames(input_path, frame_type, seed, session.say)

    augmented = await session.stage("augmentation", [_user(f.prompt) for f in frames],
                                    _augmentation_parser(conversational), MAX_TOKENS,
                                    templates={"augmentation": stage1_template})
    rows = []
    for frame, outcome in zip(frames, augmented):
        if outcome.ok:
            premise = frame.premise or outcome.value["Passage"]
            rows.append({"frame_row": frame.row, "premise": premise, "implied_entailment": outcome.value["Implicature"]})

    alternatives = await session.stage(
        "alternatives", [_user(fill(stage2_template, r["premise"], r["implied_entailment"])) for r in rows],
        [_alternatives_parser(r["implied_entailment"]) for r in rows], MAX_TOKENS,
        templates={"alternatives": stage2_template})
    rows = [{**r, **o.value} for r, o in zip(rows, alternatives) if o.ok]

    paraphrased = [h for h in HYPOTHESES if not (conversational and h == "explicit_entailment")]
    targets = [(i, h) for i, r in enumerate(rows) for h in paraphrased]
    paraphrases = await session.stage(
        "paraphrase", [_user(fill(paraphrase_template, rows[i][h])) for i, h in targets], _paraphrase, MAX_TOKENS,
        templates={"paraphrase": paraphrase_template})
    failed = set()
    for (i, hypothesis), outcome in zip(targets, paraphrases):
        if outcome.ok:
            rows[i][hypothesis] = outcome.value
        else:
            failed.add(i)
    rows = [r for i, r in enumerate(rows) if i not in failed]
    session.filtered("paraphrase", "rows with a hypothesis left unparaphrased", len(failed))

    hashes = {"prompt_augmentation": prompt_hash(stage1_template), "prompt_alternatives": prompt_hash(stage2_template),
              "prompt_paraphrase": prompt_hash(paraphrase_template)}
    frame = pd.DataFrame([{"dataset": frame_type, "premise": r["premise"], **{h: r[h] for h in HYPOTHESES},
                           "generator_model": session.model, **hashes, "frame_row": r["frame_row"]} for r in rows],
                         columns=["dataset", "premise", *HYPOTHESES, "generator_model", *hashes, "frame_row"])
    frame.insert(0, "", range(len(frame)))  # the upstream files' unnamed index column
    write_rows(frame, output, overwrite, session, "inli", {"input": str(input_path), "frame_type": frame_type})
    return frame
