"""BIG-Bench Hard ``snarks`` with its paper's protocol (Suzgun et al., Findings of ACL 2023): which of two statements
is sarcastic, after BBH's task description and its three exemplars (``prompts/bbh_snarks_cot.txt``, the BBH
repository's ``cot-prompts/snarks.txt`` verbatim). Answer-only prompting (the default) answers each exemplar with its
option ("(A)"), as BBH's answer-only setting; ``cot=yes`` keeps the exemplars' reasoning and ends the question with
"Let's think step by step.". The answer is the last "the answer is (X)", else an option letter the reply begins with.
Exact-match accuracy over the 177 readable items (one of BBH's 178 is cut short upstream: ``datasets/snarks.py``).
"""

from __future__ import annotations

import re

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.snarks import FILE, TRUNCATED, load_snarks
from pragmeter.eval.multiple_choice import ChoiceItem, ChoiceTask
from pragmeter.eval.task import load_template

_EXEMPLAR = re.compile(
    r"\A(?P<question>Q: .*?\nA:) Let's think step by step\.\n.*So the answer is (?P<answer>\([AB]\))\.\Z", re.DOTALL)


def prompt_parts(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(task description, [(question block ending "A:", worked answer, final option)]) of BBH's prompt file, whose
    canary line and "-----" come first."""
    body = text.split("-----\n", 1)[1]
    description, *blocks = body.split("\n\nQ: ")
    exemplars = []
    for block in blocks:
        found = _EXEMPLAR.match("Q: " + block.strip())
        if not found:
            raise ValueError(f"unexpected exemplar in the snarks prompt: {block[:60]!r}")
        worked = ("Q: " + block.strip())[len(found["question"]):].strip()
        exemplars.append((found["question"], worked, found["answer"]))
    return description.strip(), exemplars


class Snarks(ChoiceTask):
    name = "bbh_snarks"
    version = "1"
    description = "BIG-Bench Hard snarks: which of two statements is sarcastic, BBH 3-shot prompt; exact-match accuracy"
    citation = ("Suzgun et al. 2023, Challenging BIG-Bench Tasks and Whether Chain-of-Thought Can Solve Them "
                "(Findings of ACL 2023); BIG-bench, Srivastava et al. 2023 (TMLR)")
    published = (
        "Codex (code-davinci-002) 3-shot on the 178 items: 61.2% answer-only, 59.6% chain-of-thought (the authors' "
        "released outputs, suzgunmirac/BIG-Bench-Hard code-davinci-002-outputs/*/"
        "snarks_few_shot_template_0-255000_eval_metrics.jsonl)",
        "random 50%",
    )
    arguments = {"cot": "no"}

    def __init__(self, args=None, data_root=None):
        super().__init__(args, data_root)
        self.max_tokens = 512 if self.cot else 16

    @property
    def cot(self) -> bool:
        return self.args["cot"].lower() in ("yes", "true", "1")

    def build(self) -> list[ChoiceItem]:
        return [ChoiceItem(item.id, item.question, "", item.options, item.answer, item.sarcastic)
                for item in load_snarks(self.data_root)]

    def checksums(self) -> dict[str, str]:
        return dataset_checksums([FILE])

    def templates(self) -> dict[str, str]:
        return {"bbh_snarks_cot": load_template("bbh_snarks_cot.txt")}

    def answer_text(self, key: str) -> str:
        return f"({key})"

    def prompt(self, item: ChoiceItem, run: int) -> str:
        description, exemplars = prompt_parts(self.templates()["bbh_snarks_cot"])
        shots = [f"{question} {worked if self.cot else answer}" for question, worked, answer in exemplars]
        options = "\n".join(f"({key}) {reading}" for key, reading in item.options)
        question = f"Q: {item.context}\nOptions:\n{options}\nA:" + (" Let's think step by step." if self.cot else "")
        return "\n\n".join([description, *shots, question])

    def metric_signatures(self) -> dict[str, str]:
        return {**super().metric_signatures(), "items": f"{len(TRUNCATED)} cut-short upstream item(s) left out"}


TASKS = [Snarks]
