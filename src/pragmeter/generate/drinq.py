"""DRInQ generation (Arai & Ren, §3.3–3.6 and Appendix 8.2).

1. default: the LLM gives each question's context-free default intent I_d and implied comment A_d (the paper
   gives no prompt for this step; ours is ``prompts/drinq_default_interpretation.txt``).
2. ranking: the other intents, by cosine distance between sentence embeddings of the intent ("to <intent>")
   and A_d, most distant first (encoder all-MiniLM-L6-v2 by default).
3. contexts: for each (question, intent) in rank order, the Appendix 8.2 prompt asks for 3 (context, implied
   comment) pairs or an empty list (abstention, counted, not retried); the ``keep_intents`` highest-ranked
   intents with valid pairs are kept (paper: 10).
4. similarity filter: a generated comment A_g with cosine similarity to A_d of at least ``max_similarity`` goes.
5. assembly: one 5-option item per remaining (question, intent, context): A_g^k, A_d and one comment of each of
   3 other intents of the same question (seeded), shuffled; ``consensus`` and ``implied_comment`` are A_g^k
   (the paper's human verification, §3.7, is not automated: check items before using them as gold).

Intent labels: the 22 speech-act verbs the paper lists per category (its text counts 23).
"""

from __future__ import annotations

import ast
import json
import random
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from pragmeter.datasets.drinq import LETTERS
from pragmeter.errors import InvalidParameter
from pragmeter.generate.output import read_texts, write_rows
from pragmeter.generate.prompts import prompt_hash, prompt_text
from pragmeter.generate.session import GenerationSession
from pragmeter.generate.validation import ABSTAINED, Malformed
from pragmeter.llm.parsing import json_object
from pragmeter.text import normalise

CONTEXT_FILE = "drinq_context_generation.txt"
DEFAULT_FILE = "drinq_default_interpretation.txt"
MAX_TOKENS = 768
_CATEGORY = re.compile(r"^# (Directive|Assertive|Commissive|Expressive) \([^)]*\): (.+)$")


@dataclass
class DrinqOptions:
    candidate_intents: int | None = None  # ranked intents asked per question (None: all)
    keep_intents: int = 10
    max_similarity: float = 0.8
    encoder: str = "all-MiniLM-L6-v2"
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.max_similarity <= 1:
            raise InvalidParameter("max_similarity", self.max_similarity, "must be in (0, 1]")


@cache
def intents() -> tuple[str, ...]:
    found = []
    for line in prompt_text(CONTEXT_FILE).splitlines():
        match = _CATEGORY.match(line.strip())
        if match:
            found += [i.strip() for i in match.group(2).split(";")]
    return tuple(found)


def context_template() -> str:
    """The Appendix 8.2 prompt without our '#' notes, then the item and the answer keys."""
    body = "\n".join(l for l in prompt_text(CONTEXT_FILE).splitlines() if not l.startswith("#")).strip()
    return (body + '\n\nAnswer with a JSON list of {"context": ..., "implied comment": ...} dictionaries.\n\n'
            "Question: {QUESTION}\nIntent: to {INTENT}")


def _default_parser(answer: str) -> dict[str, str]:
    found = json_object(answer) or {}
    intent = " ".join(str(found.get("intent", "")).lower().split()).removeprefix("to ")
    comment = " ".join(str(found.get("implied_comment") or found.get("implied comment") or "").split())
    if intent not in intents():
        raise Malformed(f"intent {intent!r} is not one of the labels")
    if not comment:
        raise Malformed("no implied_comment")
    return {"intent": intent, "comment": comment}


def _first_list(text: str):
    for start in (m.start() for m in re.finditer(r"\[", text)):
        end = text.rfind("]")
        while end > start:
            snippet = text[start:end + 1]
            for reader in (json.loads, ast.literal_eval):
                try:
                    value = reader(snippet)
                except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                    continue
                if isinstance(value, list):
                    return value
            end = text.rfind("]", start, end)
    return None


def _context_parser(answer: str):
    pairs = _first_list(answer)
    if pairs is None:
        raise Malformed("no list in the answer")
    if not pairs:
        return ABSTAINED
    out = []
    for pair in pairs[:3]:
        if not isinstance(pair, dict):
            raise Malformed("list items are not dictionaries")
        keys = {" ".join(str(k).lower().replace("_", " ").split()): v for k, v in pair.items()}
        context = " ".join(str(keys.get("context") or "").split())
        comment = " ".join(str(keys.get("implied comment") or keys.get("implied meaning") or "").split())
        if not context or not comment:
            raise Malformed("a dictionary lacks 'context' or 'implied comment'")
        out.append((context, comment))
    return out


def _unit(vectors) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


def rank_intents(encoder, default_intent: list[str], default_comment: list[str]) -> list[list[str]]:
    """Per question, the other intents from most to least distant (cosine) from the default comment."""
    labels = list(intents())
    label_vectors = _unit(encoder.encode([f"to {i}" for i in labels]))
    comment_vectors = _unit(encoder.encode(default_comment))
    ranked = []
    for default, vector in zip(default_intent, comment_vectors):
        distance = 1 - label_vectors @ vector
        order = sorted(range(len(labels)), key=lambda j: (-distance[j], labels[j]))
        ranked.append([labels[j] for j in order if labels[j] != default])
    return ranked


def format_options(options: list[str]) -> str:
    """The validated file's layout: 'A. text \\nB. text …'."""
    return "\n".join(f"{letter}. {text} " for letter, text in zip(LETTERS, options)).rstrip()


def assemble_items(questions: list[dict], rng: random.Random) -> tuple[list[dict], int]:
    """5-option items; returns (rows, count of contexts left out for lack of 3 distinct other-intent comments)."""
    rows, short = [], 0
    for q in questions:
        for intent, pairs in q["kept"].items():
            others = [i for i in q["kept"] if i != intent]
            for context, comment, similarity in pairs:
                rng.shuffle(others)
                options, seen = [comment, q["default_comment"]], {normalise(comment), normalise(q["default_comment"])}
                for other in others:
                    candidates = [c for _, c, _ in q["kept"][other] if normalise(c) not in seen]
                    if candidates and len(options) < len(LETTERS):
                        choice = rng.choice(candidates)
                        options.append(choice)
                        seen.add(normalise(choice))
                if len(options) < len(LETTERS) or len(seen) < len(LETTERS):
                    short += 1
                    continue
                order = list(range(len(LETTERS)))
                rng.shuffle(order)
                shuffled = [options[i] for i in order]
                rows.append({"question": q["question"], "context": context, "options": format_options(shuffled),
                             "consensus": LETTERS[order.index(0)], "implied_comment": comment, "intent": intent,
                             "default_intent": q["default_intent"], "default_comment": q["default_comment"],
                             "similarity_to_default": round(similarity, 4), "input_row": q["row"]})
    return rows, short


async def generate_drinq(session: GenerationSession, input_path: Path, column: str, output: Path, overwrite: bool,
                         options: DrinqOptions) -> pd.DataFrame:
    from pragmeter.encoders import load_encoder

    if options.keep_intents < 1:
        raise InvalidParameter("keep_intents", options.keep_intents, "must be at least 1")
    rows, texts = read_texts(input_path, column, session.say)
    seen, questions = set(), []
    for row, text in zip(rows, texts):  # a question asked twice is generated once
        if normalise(text) not in seen:
            seen.add(normalise(text))
            questions.append({"row": row, "question": text})
    default_template = prompt_text(DEFAULT_FILE).rstrip("\n")
    label_list = ", ".join(intents())
    defaults = await session.stage(
        "default", [[{"role": "user", "content": default_template.replace("{INTENTS}", label_list)
                      .replace("{QUESTION}", q["question"])}] for q in questions],
        _default_parser, 256, templates={"default": default_template})
    questions = [{**q, "default_intent": o.value["intent"], "default_comment": o.value["comment"]}
                 for q, o in zip(questions, defaults) if o.ok]

    encoder = load_encoder(options.encoder)
    ranked = rank_intents(encoder, [q["default_intent"] for q in questions], [q["default_comment"] for q in questions])
    template = context_template()
    jobs = [(qi, intent) for qi, order in enumerate(ranked) for intent in order[: options.candidate_intents]]
    generated = await session.stage(
        "contexts", [[{"role": "user", "content": template.replace("{QUESTION}", questions[qi]["question"])
                       .replace("{INTENT}", intent)}] for qi, intent in jobs],
        _context_parser, MAX_TOKENS, templates={"contexts": template})
    by_question: list[dict[str, list]] = [{} for _ in questions]
    for (qi, intent), outcome in zip(jobs, generated):  # jobs are in rank order within each question
        if outcome.ok and len(by_question[qi]) < options.keep_intents:
            by_question[qi][intent] = outcome.value
    beyond = sum(o.ok for o in generated) - sum(len(k) for k in by_question)
    if beyond:
        session.filtered("contexts", f"valid but ranked below the top {options.keep_intents} intents", beyond)

    comments = [c for kept in by_question for pairs in kept.values() for _, c, in pairs]
    vectors = _unit(encoder.encode(comments)) if comments else np.zeros((0, 1))
    default_vectors = _unit(encoder.encode([q["default_comment"] for q in questions])) if questions else None
    position, too_similar = 0, 0
    for qi, kept in enumerate(by_question):
        for intent in list(kept):
            survivors = []
            for context, comment in kept[intent]:
                similarity = float(vectors[position] @ default_vectors[qi])
                position += 1
                if similarity >= options.max_similarity:
                    too_similar += 1
                else:
                    survivors.append((context, comment, similarity))
            if survivors:
                kept[intent] = survivors
            else:
                del kept[intent]
        questions[qi]["kept"] = kept
    session.filtered("contexts", f"comment too similar to the default (cosine >= {options.max_similarity:g})",
                     too_similar)

    items, short = assemble_items(questions, random.Random(options.seed))
    session.filtered("contexts", "fewer than 3 other intents to draw distractors from", short)
    frame = pd.DataFrame(items, columns=["question", "context", "options", "consensus", "implied_comment", "intent",
                                         "default_intent", "default_comment", "similarity_to_default", "input_row"])
    frame["generator_model"] = session.model
    frame["prompt_default"] = prompt_hash(default_template)
    frame["prompt_context"] = prompt_hash(template)
    write_rows(frame, output, overwrite, session, "drinq",
               {"input": str(input_path), "encoder": options.encoder, "max_similarity": options.max_similarity,
                "keep_intents": options.keep_intents})
    return frame
