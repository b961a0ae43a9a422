"""ISHate Task A (non-hateful / explicit / implicit) and Task B (non-hateful / non-subtle / subtle), zero-shot.

The prompts are pragmeter's (the paper evaluates fine-tuned classifiers, not LLM prompting), built on the
paper's definitions (Ocampo et al., EACL 2023, §3). Metrics: per-class precision, recall and F1 (rows of the
confusion matrix are gold labels), macro-F1 (headline), accuracy, and recall per implicit property.
``mode=logprob`` scores the labels by log-probability; Task B answers with letters A/B/C there.
"""

from __future__ import annotations

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.ishate import LABEL_NAMES, IshateItem, files, load_ishate
from pragmeter.eval.classification import ClassificationTask
from pragmeter.metrics.classification import accuracy_by_group
from pragmeter.eval.task import Sample, load_template
from pragmeter.llm.request import TextInput


class IshateTask(ClassificationTask):
    version = "1"
    citation = "Ocampo et al. 2023, An In-depth Analysis of Implicit and Subtle Hate Speech Messages (EACL 2023)"
    max_tokens = 8
    arguments = {"split": "test", "mode": "generate"}
    ishate_task: str

    def load(self) -> list[IshateItem]:
        return load_ishate(self.ishate_task, self.args["split"], self.data_root)

    def checksums(self) -> dict[str, str]:
        return dataset_checksums(list(files(self.ishate_task, self.args["split"])))

    def templates(self) -> dict[str, str]:
        letters = "_letters" if self.mode == "logprob" and self.letters else ""
        name = f"ishate_{self.ishate_task}{letters}_system"
        return {name: load_template(f"{name}.txt")}

    def messages(self, item: IshateItem, run: int) -> list[dict]:
        (system,) = self.templates().values()
        return [{"role": "system", "content": system}, {"role": "user", "content": item.text}]

    def request_input(self, item: IshateItem) -> TextInput:
        return TextInput(item.text)

    def gold(self, item: IshateItem) -> str:
        return item.label_name

    def fields(self, item: IshateItem) -> dict:
        return {"text": item.text, "source": item.source, "implicit_properties": list(item.implicit_properties)}

    def extra_metrics(self, samples: list[Sample]) -> dict:
        pairs = [(s.gold, s.parsed, prop) for s in samples for prop in s.fields["implicit_properties"]]
        if not pairs:
            return {"recall_by_implicit_property": {}}
        golds, predictions, props = zip(*pairs)
        by_property = accuracy_by_group(golds, predictions, props)
        return {"recall_by_implicit_property": {p: {"recall": v["accuracy"], "n": v["n"]}
                                                for p, v in by_property.items()}}

    def headline(self) -> str:
        return "macro_f1"


class IshateImplicit(IshateTask):
    name = "ishate_implicit"
    description = "ISHate Task A zero-shot: non-hateful / explicit / implicit; per-class P/R/F1, macro-F1"
    ishate_task = "implicit"
    labels = LABEL_NAMES["implicit"]
    answer_words = {label: label for label in labels}


class IshateSubtle(IshateTask):
    name = "ishate_subtle"
    description = "ISHate Task B zero-shot: non-hateful / non-subtle / subtle; per-class P/R/F1, macro-F1"
    ishate_task = "subtle"
    labels = LABEL_NAMES["subtle"]
    answer_words = {label: label for label in labels}
    letters = dict(zip(labels, "ABC"))  # "non-hateful" and "non-subtle" begin alike


TASKS = [IshateImplicit, IshateSubtle]
GROUPS = {"ishate": ("ishate_implicit", "ishate_subtle")}
