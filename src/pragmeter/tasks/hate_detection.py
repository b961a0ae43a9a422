"""Yes/no hate detection with the ImpScore paper's prompt (Wang et al., ICLR 2025, Appendix A.8), on any table
of texts with a binary label, so results can be stratified by implicitness later.

Task arguments: ``path`` (a txt/csv/tsv/jsonl/parquet table; default: the ISHate test split, gold = HS),
``text_column`` (text), ``label_column`` (label), ``positive`` (the label value meaning hateful, when it is
not 1/true/yes). Every sample log carries the text, gold, prediction and the table's other columns.
Metrics: accuracy, detection rate (recall of hateful texts, the paper's success rate), P/R/F1, macro-F1.
"""

from __future__ import annotations

from pathlib import Path

from pragmeter.data.root import dataset_checksums, sha256_of
from pragmeter.datasets.ishate import files, load_ishate
from pragmeter.datasets.labelled_texts import LabelledText, load_labelled_texts
from pragmeter.eval.classification import ClassificationTask
from pragmeter.eval.task import Sample, load_template
from pragmeter.llm.request import TextInput


class HateDetection(ClassificationTask):
    name = "hate_detection"
    version = "1"
    description = "yes/no toxicity detection (ImpScore A.8 prompt) on any labelled text table (default ISHate test)"
    citation = "Wang et al. 2025, ImpScore: A Learnable Metric for Quantifying the Implicitness Level of Sentences"
    max_tokens = 3  # as in the paper
    arguments = {"path": "", "text_column": "text", "label_column": "label", "positive": "", "mode": "generate"}
    labels = ("yes", "no")
    answer_words = {"yes": "yes", "no": "no"}

    def load(self) -> list[LabelledText]:
        if self.args["path"]:
            return load_labelled_texts(self.args["path"], self.args["text_column"], self.args["label_column"],
                                       self.args["positive"] or None)
        return [LabelledText(id=f"ishate-test-{i}", text=item.text, label=item.label != 0, row=i,
                             extra={"source": item.source, "ishate_label": item.label_name,
                                    "implicit_properties": list(item.implicit_properties)})
                for i, item in enumerate(load_ishate("implicit", "test", self.data_root))]

    def checksums(self) -> dict[str, str]:
        if self.args["path"]:
            return {str(Path(self.args["path"]).resolve()): sha256_of(Path(self.args["path"]))}
        return dataset_checksums(list(files("implicit", "test")))

    def templates(self) -> dict[str, str]:
        return {"impscore_hate_detection_system": load_template("impscore_hate_detection_system.txt")}

    def messages(self, item: LabelledText, run: int) -> list[dict]:
        system = self.templates()["impscore_hate_detection_system"]
        return [{"role": "system", "content": system}, {"role": "user", "content": item.text}]

    def request_input(self, item: LabelledText) -> TextInput:
        return TextInput(item.text)

    def gold(self, item: LabelledText) -> str:
        return "yes" if item.label else "no"

    def fields(self, item: LabelledText) -> dict:
        return {"text": item.text, "row": item.row, **{f"extra_{k}": v for k, v in item.extra.items()}}

    def extra_metrics(self, samples: list[Sample]) -> dict:
        hateful = [s.scores["correct"] for s in samples if s.gold == "yes"]
        return {"detection_rate": sum(hateful) / len(hateful) if hateful else float("nan")}


TASKS = [HateDetection]
