"""Fig-QA (Liu et al., NAACL 2022): which of two endings is the meaning of a creative metaphor. The paper scored
language models by the likelihood of each ending after the metaphor; a chat model is asked to choose the meaning
(``prompts/figqa.txt``, pragmeter's wording), or with ``mode=logprob`` the two letters are scored by log-probability.
Validation split (the test labels are hidden upstream); accuracy over all metaphors, as the paper (not per pair).
"""

from __future__ import annotations

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.figqa import load_figqa, split_file
from pragmeter.eval.multiple_choice import ChoiceItem, ChoiceTask
from pragmeter.eval.task import load_template


class Figqa(ChoiceTask):
    name = "figqa"
    version = "1"
    description = "Fig-QA: the meaning of a creative metaphor, 2 options, validation split; accuracy"
    citation = ("Liu, Cui, Zheng & Neubig 2022, Testing the Ability of Language Models to Interpret Figurative "
                "Language (NAACL 2022)")
    published = (
        "humans 94.42% (Liu et al. 2022; nightingal3/Fig-QA metaphor_performance_results.csv, which names no split)",
        "GPT-3 Davinci zero-shot 68.41%, GPT-3 Curie fine-tuned 79.04%, RoBERTa fine-tuned up to 90.77% (same file)",
        "random 50%",
    )
    max_tokens = 8
    arguments = {"mode": "generate"}

    def build(self) -> list[ChoiceItem]:
        return [ChoiceItem(item.id, "", item.metaphor, tuple(zip("AB", item.endings)), "AB"[item.answer],
                           item.metaphor, {"qid": item.qid})
                for item in load_figqa("dev", self.data_root)]

    def checksums(self) -> dict[str, str]:
        return dataset_checksums([split_file("dev")])

    def templates(self) -> dict[str, str]:
        return {"figqa": load_template("figqa.txt")}

    def prompt(self, item: ChoiceItem, run: int) -> str:
        return (self.templates()["figqa"].replace("{METAPHOR}", item.utterance)
                .replace("{OPTIONS}", "\n".join(f"{key}. {reading}" for key, reading in item.options)))


TASKS = [Figqa]
