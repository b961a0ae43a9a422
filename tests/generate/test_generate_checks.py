"""Answer checks (refusals, labelled lines), the upstream prompt files, and the INLI hypothesis-only baseline."""

from __future__ import annotations

import dataclasses

import pytest

from pragmeter.datasets.inli import load_inli
from pragmeter.generate.hypothesis_baseline import cross_validated
from pragmeter.generate.inli import PROMPTS
from pragmeter.generate.prompts import python_prompts
from pragmeter.generate.validation import Malformed, is_refusal, labelled_lines


@pytest.mark.parametrize("text", ["I can't help with that.", "I’m sorry, but I cannot generate hateful content.",
                                  "As an AI language model, I must decline.", "Sure. I cannot assist with this request."])
def test_refusals_recognised(text):
    assert is_refusal(text)


@pytest.mark.parametrize("text", ["I'm sorry I missed your party.", "Immigrants cannot be trusted.",
                                  "I can't help you move this weekend."])
def test_data_about_declining_is_not_a_refusal(text):
    assert not is_refusal(text)


def test_labelled_lines_stop_at_other_labels_and_require_each():
    answer = "**Passage:** Ann waved.\nShe smiled.\nImplicature: Ann is friendly.\nJustification: waving."
    assert labelled_lines(answer, ["Passage", "Implicature"]) == {"Passage": "Ann waved. She smiled.",
                                                                 "Implicature": "Ann is friendly."}
    with pytest.raises(Malformed):
        labelled_lines("Passage: Ann waved.", ["Passage", "Implicature"])


def test_upstream_inli_prompts_have_a_template_per_frame_type():
    augmentation = python_prompts("inli_implicature_augmentation.txt")
    alternatives = python_prompts("inli_alternative_hypotheses.txt")
    for frame_type, (stage1, stage2) in PROMPTS.items():
        assert augmentation[stage1].count("{}") == (3 if frame_type == "normbank" else 2)
        assert alternatives[stage2].count("{}") == 2 and alternatives[stage2].startswith("You are an expert")


def test_hypothesis_only_baseline_finds_a_planted_artefact(data_root):
    items = [i for i in load_inli("val", data_root) if i.row < 300]
    clean = cross_validated(items)
    marked = [dataclasses.replace(i, hypothesis=i.hypothesis + " Not at all.") if i.label == "contradiction" else i
              for i in items]
    planted = cross_validated(marked)
    assert planted["per_label"]["contradiction"] > 0.95 > clean["per_label"]["contradiction"]
    assert planted["accuracy"] > clean["accuracy"] + 0.1
    assert clean["majority_4way"] == 0.25 and clean["n"] == 1200
