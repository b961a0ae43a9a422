"""Emphasized-Talk generation with the paper's prompt (Lin & Lee, Findings of EMNLP 2024, §4.1).

Metrics: BERTScore F1 against the references, best reference per item (headline; task arguments
``bertscore_model`` (a local folder or packaged encoder name), ``bertscore_layer``, ``bertscore_idf``), and,
when a judge model is given, the paper's LLM-judge scores on 0–5: ``auto_gpt4`` (rubric of Figure 4) and
``auto_gpt4_gt`` (similarity to the references, Appendix D); the judge analyses then scores, as JSON, and
``judge_samples`` (3) answers are averaged. An empty answer is invalid and scores 0 on every metric; a judge
answer without a readable 0–5 score is left out of that item's average (counted in ``judge_invalid``).
"""

from __future__ import annotations

import re

import numpy as np

from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.emphasized_talk import FILES, EmphasizedTalkItem, load_emphasized_talk
from pragmeter.metrics.bertscore import DEFAULT_LAYER, DEFAULT_MODEL, BertScorer
from pragmeter.llm.batch import answer_all
from pragmeter.llm.request import Request
from pragmeter.llm.parsing import json_field
from pragmeter.eval.task import JUDGE_MAX_TOKENS, Sample, ScoreContext, Task, load_template

_SCORE = re.compile(r"score\W{0,4}([0-5](?:\.\d+)?)", re.IGNORECASE)


def parse_judge_score(text: str | None) -> float | None:
    """The 0–5 score of a judge answer: the JSON "score" field, else the last "score: N" in the text."""
    value = json_field(text, "score")
    if isinstance(value, str):
        value = value.strip()
        value = float(value) if re.fullmatch(r"[0-5](?:\.\d+)?", value) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if 0 <= value <= 5 else None
    found = _SCORE.findall(text or "")
    return float(found[-1]) if found else None


class EmphasizedTalk(Task):
    name = "emphasized_talk"
    version = "1"
    description = ("Emphasized-Talk implication generation (2,085 items); BERTScore F1 (max over references), "
                   "optional LLM judge auto-gpt4 / auto-gpt4-gt")
    citation = "Lin & Lee 2024, Can LLMs Understand the Implication of Emphasized Sentences in Dialogue?"
    max_tokens = 128
    uses_judge = True
    arguments = {"bertscore_model": DEFAULT_MODEL, "bertscore_layer": str(DEFAULT_LAYER), "bertscore_idf": "no",
                 "judge_samples": "3"}

    def load(self) -> list[EmphasizedTalkItem]:
        return load_emphasized_talk(self.data_root)

    def checksums(self) -> dict[str, str]:
        return dataset_checksums(list(FILES))

    def templates(self) -> dict[str, str]:
        names = ["emphasized_talk_generate", "emphasized_talk_judge", "emphasized_talk_judge_format",
                 "emphasized_talk_judge_gt_instructions", "emphasized_talk_judge_gt_inputs"]
        return {name: load_template(f"{name}.txt") for name in names}

    def messages(self, item: EmphasizedTalkItem, run: int) -> list[dict]:
        prompt = self.templates()["emphasized_talk_generate"]
        prompt = prompt.replace("{CONTEXT}", item.context_text).replace("{CURRENT}", item.marked_current)
        return [{"role": "user", "content": prompt}]

    def parse(self, response: str | None, item: EmphasizedTalkItem) -> str | None:
        return response.strip() if response and response.strip() else None

    def gold(self, item: EmphasizedTalkItem) -> list[str]:
        return list(item.references)

    def reference_answer(self, item: EmphasizedTalkItem) -> str:
        return item.references[0]

    def fields(self, item: EmphasizedTalkItem) -> dict:
        return {"dialogue": item.dialogue, "word": item.word, "occurrences": item.occurrences,
                "match": item.match, "context": item.context_text, "current": item.marked_current}

    def scorer(self) -> BertScorer:
        return BertScorer(self.args["bertscore_model"], int(self.args["bertscore_layer"]),
                          idf=self.args["bertscore_idf"].lower() in ("yes", "true", "1"))

    def judge_prompts(self, sample: Sample) -> dict[str, list[dict]]:
        t = self.templates()

        def fill(text: str) -> str:
            references = "\n".join(f"- {r}" for r in sample.gold)
            return (text.replace("{CONTEXT}", sample.fields["context"]).replace("{CURRENT}", sample.fields["current"])
                    .replace("{PREDICTION}", sample.parsed).replace("{REFERENCES}", references))

        rubric = fill(t["emphasized_talk_judge"]) + "\n\n" + t["emphasized_talk_judge_format"]
        with_references = t["emphasized_talk_judge_gt_instructions"] + "\n\n" + fill(t["emphasized_talk_judge_gt_inputs"])
        return {"auto_gpt4": [{"role": "user", "content": rubric}],
                "auto_gpt4_gt": [{"role": "user", "content": with_references}]}

    async def _judge(self, samples: list[Sample], context: ScoreContext) -> dict:
        n_samples = int(self.args["judge_samples"])
        valid = [s for s in samples if s.valid]
        jobs = [(s, metric, messages, k) for s in valid for metric, messages in self.judge_prompts(s).items()
                for k in range(n_samples)]
        answers = await answer_all(context.judge, [Request(m, JUDGE_MAX_TOKENS, k) for _, _, m, k in jobs], "judge",
                                   context.progress)
        scores: dict[tuple[str, str], list[float]] = {}
        invalid = 0
        for (sample, metric, _, _), answer in zip(jobs, answers):
            value = parse_judge_score(answer.text)
            invalid += value is None
            if value is not None:
                scores.setdefault((sample.item_id, metric), []).append(value)
        result = {"judge_invalid": invalid, "judge_requests": len(jobs)}
        for metric in ("auto_gpt4", "auto_gpt4_gt"):
            for sample in samples:
                values = scores.get((sample.item_id, metric))
                sample.scores[metric] = float(np.mean(values)) if values else (0.0 if not sample.valid else None)
            scored = [s.scores[metric] for s in samples if s.scores[metric] is not None]
            result[metric] = float(np.mean(scored)) if scored else float("nan")
            result[f"{metric}_n"] = len(scored)
        return result

    async def score(self, samples: list[Sample], context: ScoreContext) -> dict:
        scorer = self.scorer()
        valid = [s for s in samples if s.valid]
        # idf (when on) comes from all the benchmark's references, so scores do not depend on --limit.
        corpus = [r for item in self.items() for r in item.references]
        result = scorer.score([s.parsed for s in valid], [s.gold for s in valid], idf_references=corpus)
        for sample in samples:
            sample.scores.update(bertscore_f1=0.0, bertscore_precision=0.0, bertscore_recall=0.0)
        for i, sample in enumerate(valid):
            sample.scores.update(bertscore_f1=float(result.f1[i]), bertscore_precision=float(result.precision[i]),
                                 bertscore_recall=float(result.recall[i]))
        n = len(samples)
        metrics = {key: float(np.mean([s.scores[key] for s in samples])) if n else float("nan")
                   for key in ("bertscore_f1", "bertscore_precision", "bertscore_recall")}
        metrics.update(n=n, invalid=n - len(valid))
        if context.judge is not None:
            metrics.update(await self._judge(samples, context))
        return metrics

    def metric_signatures(self) -> dict[str, str]:
        judge = f"llm-judge|scale=0-5|samples={self.args['judge_samples']}|mean|json+fallback|invalid-gen=0"
        return {"bertscore_f1": self.scorer().signature() + "|invalid=0",
                "auto_gpt4": judge + "|prompt=rubric", "auto_gpt4_gt": judge + "|prompt=references"}

    def headline(self) -> str:
        return "bertscore_f1"


TASKS = [EmphasizedTalk]
