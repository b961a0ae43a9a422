"""Circa (Louis, Roth & Radlinski, EMNLP 2020): how will the asker interpret an indirect answer to a yes/no question,
in its social situation? The paper's relaxed labels (``datasets/circa.py``) as four lettered options, worded as the
annotators' choices; the paper trained classifiers, so the prompt (``prompts/circa.txt``) is pragmeter's, built from
its annotation question ("how the question seeker would likely interpret a particular answer").

All 32,993 pairs with a relaxed label are the items (upstream id order); ``scenario`` (0–9, the data root's
per-situation files) keeps one situation, the paper's unmatched setting, where a situation is held out. Metrics:
accuracy, per relaxed label, per situation file, and inside/outside INLI's premises (INLI built premises from Circa).
For a chat model, ``--sample N`` draws a label-stratified sample.
"""

from __future__ import annotations

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.circa import FILES, RELAXED, SCENARIOS, load_circa
from pragmeter.errors import PragmeterError
from pragmeter.eval.multiple_choice import ChoiceItem, ChoiceTask
from pragmeter.eval.task import load_template

# relaxed label -> (letter, the annotators' wording of the choice)
OPTIONS = {label: (letter, wording) for letter, (wording, label) in zip("ABCD", RELAXED.items())}


class Circa(ChoiceTask):
    name = "circa"
    version = "1"
    description = "Circa indirect answers to yes/no questions in a situation, 4 relaxed labels as options"
    citation = ("Louis, Roth & Radlinski 2020, \"I'd rather just go to bed\": Understanding Indirect Answers "
                "(EMNLP 2020)")
    published = (
        "annotators: 92.8% of the 5 relaxed judgements per pair agree with its relaxed majority, all 5 agree on 73.4% "
        "of pairs (computed from the release)",
        "the paper's BERT-based models: 82-88% accuracy on the 4 relaxed classes across its settings (Louis et al. "
        "2020, abstract)",
        "majority class (yes) 50.4% of the 32,993 pairs",
    )
    max_tokens = 8
    arguments = {"scenario": "", "mode": "generate"}
    group_fields = ("label", "scenario", "in_inli")

    def check_arguments(self, given: set[str]) -> None:
        super().check_arguments(given)
        if self.args["scenario"] and self.args["scenario"] not in {str(s) for s in SCENARIOS}:
            raise PragmeterError(f"task {self.name}: argument scenario={self.args['scenario']!r} must be 0 to 9 "
                                 "(or empty for all)")

    def _scenarios(self) -> tuple[int, ...]:
        return (int(self.args["scenario"]),) if self.args["scenario"] else SCENARIOS

    def build(self) -> list[ChoiceItem]:
        return [ChoiceItem(item.id, item.situation, item.answer,
                           tuple(OPTIONS[label] for label in RELAXED.values()), OPTIONS[item.label][0], item.answer,
                           {"question": item.question, "label": item.label, "scenario": item.scenario,
                            "in_inli": item.in_inli})
                for item in load_circa(self.data_root, self._scenarios())]

    def checksums(self) -> dict[str, str]:
        return dataset_checksums([FILES[s] for s in self._scenarios()])

    def templates(self) -> dict[str, str]:
        return {"circa": load_template("circa.txt")}

    def prompt(self, item: ChoiceItem, run: int) -> str:
        return (self.templates()["circa"].replace("{SITUATION}", item.context)
                .replace("{QUESTION}", item.extra["question"]).replace("{ANSWER}", item.utterance)
                .replace("{OPTIONS}", "\n".join(f"{key}. {reading}" for key, reading in item.options)))


TASKS = [Circa]
