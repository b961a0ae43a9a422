"""Emphasized-Talk agreement filter (Lin & Lee, Findings of EMNLP 2024, §3 and Appendix B).

Input and output use the released ``data.json`` schema: ``{"<context turns joined by <br>>": {"current": "...",
"emphasis": {"<word>": ["implication", ...]}}}``. Each emphasized word with two or more annotated implications
is sent with the paper's prompt; the word is kept only when the judge's final verdict is "yes". A word with a
single annotation has nothing to disagree with and is kept unasked; a dialogue left without words is dropped.
Each kept dialogue gets an ``agreement`` object (judge model, prompt hash, per-word outcome); readers ignore it.
"""

from __future__ import annotations

import re
from pathlib import Path

from pragmeter.datasets.emphasized_talk import read_dialogues
from pragmeter.generate.output import check_output, report_path, write_report
from pragmeter.generate.prompts import prompt_hash, prompt_text
from pragmeter.generate.session import GenerationSession
from pragmeter.generate.validation import Malformed
from pragmeter.io import write_json_atomic

PROMPT_FILE = "emphasized_talk_agreement.txt"
MAX_TOKENS = 512
_VERDICT = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def verdict(answer: str) -> bool:
    """The last yes/no of the answer (the prompt asks for the explanation first, then the verdict)."""
    found = _VERDICT.findall(answer)
    if not found:
        raise Malformed("no yes/no verdict")
    return found[-1].lower() == "yes"


def agreement_prompt(implications: list[str]) -> str:
    sentences = "\n".join(f"{number}. {text}" for number, text in enumerate(implications, start=1))
    return f"{prompt_text(PROMPT_FILE).strip()}\n\nSentences:\n{sentences}"


async def filter_agreement(session: GenerationSession, input_path: Path, output: Path, overwrite: bool) -> dict:
    data = read_dialogues(path=input_path)
    asked = [(context, word) for context, value in data.items() for word, implications in value["emphasis"].items()
             if len(implications) >= 2]
    outcomes = await session.stage(
        "agreement", [[{"role": "user", "content": agreement_prompt(data[c]["emphasis"][w])}] for c, w in asked],
        verdict, MAX_TOKENS, templates={"agreement": prompt_text(PROMPT_FILE).strip()})
    rejected = {(c, w) for (c, w), o in zip(asked, outcomes) if not (o.ok and o.value)}
    disagreed = sum(o.ok and not o.value for o in outcomes)
    session.filtered("agreement", "annotations judged not semantically close", disagreed)
    template_hash = prompt_hash(prompt_text(PROMPT_FILE).strip())
    kept: dict = {}
    for context, value in data.items():
        emphasis = {w: i for w, i in value["emphasis"].items() if (context, w) not in rejected}
        if emphasis:
            judged = {w: "agreed" if len(i) >= 2 else "single annotation" for w, i in emphasis.items()}
            kept[context] = {**value, "emphasis": emphasis,
                             "agreement": {"judge_model": session.model, "prompt_agreement": template_hash,
                                           "words": judged}}
    words_in = sum(len(v["emphasis"]) for v in data.values())
    words_out = sum(len(v["emphasis"]) for v in kept.values())
    session.say(f"agreement: words in {words_in} -> out {words_out} ({words_in - len(asked)} single-annotation words "
                f"kept unasked); dialogues in {len(data)} -> out {len(kept)}")
    check_output(output, overwrite)
    write_json_atomic(output, kept)
    write_report(output, session, "agreement", len(kept),
                 {"input": str(input_path), "words_in": words_in, "words_out": words_out})
    session.say(f"agreement: wrote {len(kept)} dialogues to {output} (report {report_path(output)})")
    return kept
