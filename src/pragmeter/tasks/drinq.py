"""DRInQ multiple choice with the paper's core JSON-answer prompt (Arai & Ren, Appendix 8.4).

Conditions (one task each): ``vanilla`` (3 in-context examples sampled per run from a pool of 6 written for
pragmeter), ``explanation`` (the same, with the justification required before the selection), and the
``reasoning``, ``charitable``, ``conservative`` and ``all`` additions on top of vanilla. Each runs 3 times
with a different seeded sample of examples; metrics are accuracy against the human consensus (headline) and
against ``implied_comment``, mean ± SD over runs and a 95% item-level bootstrap CI (items resampled, each
item's correctness averaged over the runs). Task arguments: ``seed`` (example sampling), ``shots`` (3),
``path`` (a file of your own in the DRInQ CSV schema, e.g. from ``pragmeter generate drinq``), ``mode``
(``generate``: the paper's JSON answer; ``logprob``: the same prompt asking for the letter only, examples
answered with their letter, options scored by log-probability; not for ``explanation``, whose justification
comes before the answer).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, ClassVar

from pragmeter.data.root import dataset_checksums, sha256_of
from pragmeter.errors import PragmeterError
from pragmeter.datasets.drinq import FILES, LETTERS, DrinqItem, load_drinq
from pragmeter.metrics.classification import correct
from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE, bootstrap_ci, mean_sd
from pragmeter.llm.parsing import json_field
from pragmeter.eval.multiple_choice import ChoiceItem
from pragmeter.llm.request import ChoiceInput
from pragmeter.eval.task import Sample, ScoreContext, Task, load_template

BOOTSTRAP_RESAMPLES = 2000
_LETTER = re.compile(r"^\W*([A-E])(?:[\W_]|$)")


def example_pool() -> list[dict]:
    return json.loads(load_template("drinq_examples.json"))


def format_options(options) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in options)


def answer_json(letter: str, text: str, explanation: str, explanation_first: bool) -> str:
    fields = [("selected_option", f"{letter}. {text}"), ("explanation", explanation)]
    return json.dumps(dict(reversed(fields) if explanation_first else fields), indent=2, ensure_ascii=False)


class DrinqTask(Task):
    version = "1"
    citation = "Arai & Ren, DRInQ: Evaluating Conversational Implicature with Controlled Context Variation"
    runs = 3
    max_tokens = 512
    arguments = {"seed": "1234", "shots": "3", "path": "", "mode": "generate"}  # path: your own DRInQ-schema CSV
    explanation_first: ClassVar[bool] = False
    additions: ClassVar[tuple[str, ...]] = ()  # template names of the added instructions/constraints

    def load(self) -> list[DrinqItem]:
        return load_drinq(self.data_root, path=self.args["path"] or None)

    def checksums(self) -> dict[str, str]:
        if self.args["path"]:
            return {self.args["path"]: sha256_of(Path(self.args["path"]))}
        return dataset_checksums(list(FILES))

    def templates(self) -> dict[str, str]:
        core = "drinq_core_letter" if self.mode == "logprob" else "drinq_core"
        names = [core, "drinq_item", "drinq_examples", *self.additions]
        if self.explanation_first:
            names.append("drinq_explanation")
        return {n: load_template(f"{n}.json" if n == "drinq_examples" else f"{n}.txt") for n in names}

    def check_arguments(self, given: set[str]) -> None:
        super().check_arguments(given)
        pool = len(example_pool())
        if int(self.args["shots"]) > pool:
            raise PragmeterError(f"task {self.name}: argument shots={self.args['shots']!r} is more than the "
                                 f"{pool} examples in the pool")

    def examples(self, run: int) -> list[dict]:
        """The in-context examples of run ``run``: a seeded sample from the pool, the same for every item."""
        rng = random.Random(f"drinq-{self.args['seed']}-{run}")
        return rng.sample(example_pool(), int(self.args["shots"]))

    def _item_block(self, question: str, context: str, options) -> str:
        return (self.templates()["drinq_item"].replace("{QUESTION}", question).replace("{CONTEXT}", context)
                .replace("{OPTIONS}", format_options(options)))

    def _answer(self, letter: str, text: str, explanation: str) -> str:
        if self.mode == "logprob":
            return letter
        return answer_json(letter, text, explanation, self.explanation_first)

    def messages(self, item: DrinqItem, run: int) -> list[dict]:
        templates = self.templates()
        parts = [templates["drinq_core_letter" if self.mode == "logprob" else "drinq_core"]]
        if self.explanation_first:
            parts.append(self.templates()["drinq_explanation"])
        if self.additions:
            parts.append("Additional instructions:\n" + "\n".join(self.templates()[n] for n in self.additions))
        shots = self.examples(run)
        if shots:
            blocks = []
            for shot in shots:
                options = list(zip(LETTERS, shot["options"]))
                answer = self._answer(shot["answer"], dict(options)[shot["answer"]], shot["explanation"])
                blocks.append(f"{self._item_block(shot['question'], shot['context'], options)}\nanswer\n{answer}")
            parts.append("## Examples\n\n" + "\n\n".join(blocks))
        parts.append("## Your item\n\n" + self._item_block(item.question, item.context, item.options))
        return [{"role": "user", "content": "\n\n".join(parts)}]

    def request_input(self, item: DrinqItem) -> ChoiceInput:
        choice = ChoiceItem(item.id, item.context, item.question, item.options, item.consensus, item.question)
        return ChoiceInput(choice, {letter: self._answer(letter, text, "") for letter, text in item.options})

    def parse(self, response: str | None, item: DrinqItem) -> str | None:
        """The selected letter: from "selected_option" (JSON, or a tolerant regex), else a bare letter answer;
        a selection given as an option's text without its letter is matched to that option."""
        if not response:
            return None
        selected = json_field(response, "selected_option")
        candidate = selected if isinstance(selected, str) else (response if len(response.strip()) <= 3 else None)
        if candidate is None:
            return None
        found = _LETTER.match(candidate.strip())
        if found:
            return found.group(1)
        texts = {text.strip().lower().rstrip("."): letter for letter, text in item.options}
        return texts.get(candidate.strip().lower().rstrip("."))

    def gold(self, item: DrinqItem) -> str:
        return item.consensus

    def reference_answer(self, item: DrinqItem) -> str:
        return self._answer(item.consensus, item.option_text(item.consensus), "reference answer")

    def choices(self, item: DrinqItem) -> dict[str, str]:
        return {letter: letter for letter, _ in item.options}

    def fields(self, item: DrinqItem) -> dict:
        return {"implied_letter": item.implied_letter}

    async def score(self, samples: list[Sample], context: ScoreContext) -> dict:
        for sample in samples:
            sample.scores["correct_consensus"] = correct(sample.gold, sample.parsed)
            sample.scores["correct_implied_comment"] = correct(sample.fields["implied_letter"], sample.parsed)
        n = len(samples)
        return {
            "accuracy": sum(s.scores["correct_consensus"] for s in samples) / n if n else float("nan"),
            "accuracy_implied_comment": sum(s.scores["correct_implied_comment"] for s in samples) / n if n else float("nan"),
            "n": n,
            "invalid": sum(not s.valid for s in samples),
        }

    def combine_runs(self, per_run: list[dict], samples: list[Sample]) -> dict:
        combined: dict[str, Any] = {}
        seed = int(self.args["seed"])
        for metric, key in (("accuracy", "correct_consensus"), ("accuracy_implied_comment", "correct_implied_comment")):
            by_item: dict[str, list[float]] = {}
            for sample in samples:
                by_item.setdefault(sample.item_id, []).append(sample.scores[key])
            item_means = [sum(v) / len(v) for v in by_item.values()]
            combined[metric] = {**mean_sd([run[metric] for run in per_run]),
                                "ci95": list(bootstrap_ci(item_means, BOOTSTRAP_RESAMPLES, seed))}
        combined["invalid"] = mean_sd([run["invalid"] for run in per_run])
        combined["n"] = per_run[0]["n"]
        return combined

    def metric_signatures(self) -> dict[str, str]:
        return {"accuracy": "accuracy|gold=consensus|invalid=wrong|runs=3:mean,sd(ddof=1)",
                "accuracy_implied_comment": "accuracy|gold=implied_comment option|invalid=wrong|runs=3:mean,sd(ddof=1)",
                "ci95": BOOTSTRAP_SIGNATURE.format(n=BOOTSTRAP_RESAMPLES, seed=self.args["seed"])
                + "|item value=mean over runs"}


class DrinqVanilla(DrinqTask):
    name = "drinq_vanilla"
    description = "DRInQ MCQ, core prompt + 3 sampled in-context examples; accuracy vs consensus, 3 runs"


class DrinqExplanation(DrinqTask):
    name = "drinq_explanation"
    description = "DRInQ MCQ, justification written before the selected option; 3 runs"
    explanation_first = True
    arguments = {k: v for k, v in DrinqTask.arguments.items() if k != "mode"}  # the answer follows a text


class DrinqReasoning(DrinqTask):
    name = "drinq_reasoning"
    description = "DRInQ MCQ, vanilla + pragmatic reasoning steps; 3 runs"
    additions = ("drinq_reasoning",)


class DrinqCharitable(DrinqTask):
    name = "drinq_charitable"
    description = "DRInQ MCQ, vanilla + charitable interpretation constraint; 3 runs"
    additions = ("drinq_charitable",)


class DrinqConservative(DrinqTask):
    name = "drinq_conservative"
    description = "DRInQ MCQ, vanilla + conservativeness constraint; 3 runs"
    additions = ("drinq_conservative",)


class DrinqAll(DrinqTask):
    name = "drinq_all"
    description = "DRInQ MCQ, vanilla + reasoning, charitable and conservative together; 3 runs"
    additions = ("drinq_reasoning", "drinq_charitable", "drinq_conservative")


TASKS = [DrinqVanilla, DrinqExplanation, DrinqReasoning, DrinqCharitable, DrinqConservative, DrinqAll]
GROUPS = {"drinq": ("drinq_vanilla", "drinq_explanation"),
          "drinq_variants": tuple(task.name for task in TASKS)}
