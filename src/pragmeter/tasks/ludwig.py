"""LUDWIG implicature resolution with the paper's protocol (Ruis et al., NeurIPS 2023): does a response to a yes/no
question mean yes or no?

Each of the paper's six zero-shot prompt templates (``prompts/ludwig_templates.txt``, the paper's
``data/prompt_templates.txt`` verbatim) is one run: the example instruction, a blank line, and the template filled
with question and response and cut after its completion phrase ("implicature:", "which means", …), as the paper's
``prompt_for_completion`` builds it; the model completes it with yes or no. Metrics: accuracy (mean ± SD over the six
templates, as the paper reports), and the same on the items whose dialogue is not among INLI's premises
(``accuracy_outside_inli``; INLI built premises from LUDWIG) and on those that are. Task arguments: ``split`` (test,
the paper's 600; dev, its 118 example pool), ``shots`` (the paper's k-shot setting: k examples drawn from dev for each
item and template, seeded by ``seed``, filled with their yes/no, after the template's prompt instruction, as the
paper's ``_add_prompt_examples``; an item of dev is never its own example), ``mode`` (generate; logprob scores yes
against no by first-token log-probability, the chat form of the paper's likelihood ranking).
"""

from __future__ import annotations

import random
import re
from functools import cache, cached_property

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.ludwig import LABELS, LudwigItem, load_ludwig, split_file
from pragmeter.eval.classification import ClassificationTask
from pragmeter.eval.multiple_choice import ChoiceItem
from pragmeter.llm.request import ChoiceInput
from pragmeter.errors import PragmeterError
from pragmeter.eval.task import Sample, load_template

TEMPLATES = "ludwig_templates.txt"


@cache
def templates() -> tuple[dict[str, str], ...]:
    """The paper's templates: one dict per line (``example_template_text``, ``phrase_to_put_mask``,
    ``example_instruction_text``, …), read as the paper's ``read_prompt_file`` reads them."""
    lines = load_template(TEMPLATES).splitlines()
    keys = [key.strip() for key in lines[0].split(";")]
    return tuple({key: re.search('"(.*)"', value).group(1).replace(r"\n", "\n")
                  for key, value in zip(keys, line.split(";"))} for line in lines[1:] if line.strip())


def completion_prompt(template: dict[str, str], question: str, response: str,
                      examples: tuple[LudwigItem, ...] = ()) -> str:
    """The paper's prompt for completion: with examples, the prompt instruction and the examples filled with their
    yes/no, each followed by a blank line; then the example instruction, a blank line, and the filled template cut
    after the phrase before the implicature."""
    keep = template["phrase_to_put_mask"][: template["phrase_to_put_mask"].index(" %s")]
    filled = template["example_template_text"] % (question, response, "")
    cut = filled[: filled.rindex(keep) + len(keep)]
    shots = "".join(f"{text}\n\n" for text in (template["prompt_instruction_text"], *(
        template["example_template_text"] % (e.question, e.response, e.label) for e in examples)) if examples)
    return f"{shots}{template['example_instruction_text']}\n\n{cut}"


class Ludwig(ClassificationTask):
    name = "ludwig"
    version = "1"
    description = ("LUDWIG implicature (yes/no), the paper's 6 zero-shot templates as 6 runs; accuracy, also outside "
                   "INLI's premises")
    citation = ("Ruis et al. 2023, The Goldilocks of Pragmatic Understanding: Fine-Tuning Strategy Matters for "
                "Implicature Resolution by LLMs (NeurIPS 2023)")
    published = (
        "humans 86.2% (mean of 5 annotators on the 600 test items; the best 87.5%; from the paper's released "
        "annotations, LauraRuis/do-pigs-fly data/human_eval/*.csv)",
        "random 50%",
    )
    runs = 6
    max_tokens = 8
    arguments = {"split": "test", "shots": "0", "seed": "0", "mode": "generate"}
    labels = LABELS
    answer_words = {"yes": "yes", "no": "no"}
    group_field = "in_inli"

    def load(self) -> list[LudwigItem]:
        return load_ludwig(self.args["split"], self.data_root)

    def checksums(self) -> dict[str, str]:
        pool = [split_file("dev")] if int(self.args["shots"]) else []
        return dataset_checksums(sorted({split_file(self.args["split"]), *pool}))

    def templates(self) -> dict[str, str]:
        return {"ludwig_templates": load_template(TEMPLATES)}

    def check_arguments(self, given: set[str]) -> None:
        super().check_arguments(given)
        if int(self.args["shots"]) > len(self.pool) - (self.args["split"] == "dev"):
            raise PragmeterError(f"task {self.name}: argument shots={self.args['shots']!r} is more than the "
                                 f"{len(self.pool)} dev examples")

    @cached_property
    def pool(self) -> list[LudwigItem]:
        """The in-context example pool: the dev split."""
        return load_ludwig("dev", self.data_root)

    def examples(self, item: LudwigItem, run: int) -> tuple[LudwigItem, ...]:
        """The examples of ``item`` under template ``run``: a seeded draw from dev without the item itself."""
        shots = int(self.args["shots"])
        if not shots:
            return ()
        pool = [example for example in self.pool if example.id != item.id]
        return tuple(random.Random(f"ludwig-{self.args['seed']}-{run}-{item.id}").sample(pool, shots))

    def messages(self, item: LudwigItem, run: int) -> list[dict]:
        prompt = completion_prompt(templates()[run], item.question, item.response, self.examples(item, run))
        return [{"role": "user", "content": prompt}]

    def request_input(self, item: LudwigItem) -> ChoiceInput:
        choice = ChoiceItem(item.id, item.question, item.response, (("yes", "yes"), ("no", "no")), item.label,
                            item.response)
        return ChoiceInput(choice, dict(self.answer_words))

    def gold(self, item: LudwigItem) -> str:
        return item.label

    def fields(self, item: LudwigItem) -> dict:
        return {"text": item.response, "question": item.question, "in_inli": item.in_inli}

    def extra_metrics(self, samples: list[Sample]) -> dict:
        metrics = {}
        for name, inside in (("outside_inli", False), ("in_inli", True)):
            values = [s.scores["correct"] for s in samples if s.fields["in_inli"] is inside]
            metrics[f"accuracy_{name}"] = sum(values) / len(values) if values else float("nan")
            metrics[f"n_{name}"] = len(values)
        return metrics


TASKS = [Ludwig]
