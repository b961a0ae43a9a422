"""INLI with the paper's 8-shot prompt (Havaldar et al., ACL 2025, Appendix E.3).

Label words: Implicature / Explicature / Neutral / Contradiction. Headline: accuracy on implied items. Task argument
``shots`` (0-8, default the paper's 8) keeps the first N of the prompt's examples in their order; 0 drops the example
block (a short prompt, e.g. for a slow local model).
"""

from __future__ import annotations

from pathlib import Path

from pragmeter.data.root import dataset_checksums, sha256_of
from pragmeter.errors import PragmeterError
from pragmeter.datasets.inli import LABELS, InliItem, load_inli, split_file
from pragmeter.eval.classification import ClassificationTask
from pragmeter.eval.task import Sample, load_template
from pragmeter.llm.request import PairInput


class Inli(ClassificationTask):
    name = "inli"
    version = "1"
    description = "INLI 4-way implied NLI, paper 8-shot prompt; accuracy, per label (implied = headline), per source"
    citation = "Havaldar et al. 2025, Entailed Between the Lines: Incorporating Implication into NLI (ACL 2025)"
    max_tokens = 16
    # path: your own file in the INLI CSV schema instead of the split; mode: generate or logprob
    arguments = {"split": "test", "path": "", "mode": "generate", "shots": "8"}
    labels = LABELS
    answer_words = {"Implicature": "implied", "Explicature": "explicit", "Neutral": "neutral",
                    "Contradiction": "contradiction"}
    group_field = "source"

    def load(self) -> list[InliItem]:
        return load_inli(self.args["split"], self.data_root, path=self.args["path"] or None)

    def checksums(self) -> dict[str, str]:
        if self.args["path"]:
            return {self.args["path"]: sha256_of(Path(self.args["path"]))}
        return dataset_checksums([split_file(self.args["split"])])

    def templates(self) -> dict[str, str]:
        return {"inli_eval_8shot": load_template("inli_eval_8shot.txt")}

    def check_arguments(self, given: set[str]) -> None:
        super().check_arguments(given)
        available = len(_split_examples(self.templates()["inli_eval_8shot"])[1])
        if int(self.args["shots"]) > available:
            raise PragmeterError(f"task {self.name}: argument shots={self.args['shots']!r} is more than the "
                                 f"{available} examples of the paper's prompt")

    def messages(self, item: InliItem, run: int) -> list[dict]:
        head, examples, tail = _split_examples(self.templates()["inli_eval_8shot"])
        shots = int(self.args["shots"])
        if shots:  # all 8: the paper's text byte for byte
            prompt = head + "\n\n".join(examples[:shots]) + tail
        else:
            prompt = head[: head.index(_INTRO)].rstrip("\n") + tail[len(_END):]
        prompt = prompt.replace("{PREMISE}", item.premise).replace("{HYPOTHESIS}", item.hypothesis)
        return [{"role": "user", "content": prompt}]

    def request_input(self, item: InliItem) -> PairInput:
        return PairInput(item.premise, item.hypothesis)

    def gold(self, item: InliItem) -> str:
        return item.label

    def fields(self, item: InliItem) -> dict:
        return {"source": item.source, "premise_row": item.row}

    def extra_metrics(self, samples: list[Sample]) -> dict:
        implied = [s.scores["correct"] for s in samples if s.gold == "implied"]
        return {"implied_accuracy": sum(implied) / len(implied) if implied else float("nan")}

    def headline(self) -> str:
        return "implied_accuracy"


_INTRO, _BEGIN, _END = "Here are some examples:", "[----- begin examples -----]\n", "\n[----- end examples -----]"


def _split_examples(template: str) -> tuple[str, list[str], str]:
    """(text up to the example block's first example, the examples, the text from the block's end marker)."""
    start, end = template.index(_BEGIN) + len(_BEGIN), template.index(_END)
    return template[:start], template[start:end].split("\n\n"), template[end:]


TASKS = [Inli]
