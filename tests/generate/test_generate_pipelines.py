"""Each pipeline, against a scripted fake server, on 20 real input rows: output accepted by its reader (and the
trainer / eval), per-stage counts printed, malformed / empty / refused answers counted and never written."""

from __future__ import annotations

import json
import re

import pandas as pd

from generate_helpers import (Scripted, generate, real_circa_frames, real_dialogues,  # noqa: F401
                              real_posts, real_questions, user_text)
from pragmeter.cli import main
from pragmeter.datasets.drinq import load_drinq
from pragmeter.datasets.emphasized_talk import load_emphasized_talk
from pragmeter.datasets.inli import load_inli
from pragmeter.generate.pairs import clean_explicit
from pragmeter.impscore.corpus.build import load_corpus

REFUSAL = "I'm sorry, but I can't help with that."


def test_pairs_corpus_accepted_by_loader_and_trainer(tmp_path, fake_server, capsys):
    posts = pd.read_csv(real_posts(tmp_path))["text"].tolist()
    refused, empty, flaky = posts[0], posts[1], posts[2]

    def answer(request, attempt):
        text = user_text(request)
        if text == refused:
            return REFUSAL
        if text == empty:
            return ""
        if text == flaky and attempt == 1:
            return "Explicit version:"  # nothing but the forbidden prefix: malformed, then fine on the retry
        return f'Explicit version: "The explicit meaning of post {posts.index(text)}."'

    server = fake_server(Scripted(answer))
    output = tmp_path / "pairs.csv"
    assert generate(server, "pairs", "--input", str(tmp_path / "posts.csv"), "--source-type", "hate",
                    "--output", str(output)) == 0
    printed = capsys.readouterr().out
    assert "stage explicit: in 20 -> out 18 (dropped: empty 1, refused 1, malformed 0" in printed
    assert "retried 5" in printed  # 2 retries for each of the two dropped, 1 for the flaky one
    corpus = load_corpus(output)
    written = set(corpus["implicit"])
    assert refused not in written and empty not in written and flaky in written
    assert not corpus["explicit"].str.contains("Explicit version|\"", regex=True).any()
    assert set(corpus["generator_model"]) == {"fake-model"} and corpus["prompt_explicit"].str.len().eq(16).all()
    assert (corpus["negative"] != corpus["explicit"]).all() and {"train", "val", "test"} == set(corpus["split"])
    model = tmp_path / "model"
    assert main(["impscore", "train", "--corpus", str(output), "--output", str(model), "--epochs", "1",
                 "--cache", str(tmp_path / "emb")]) == 0
    assert (model / "config.json").exists()


def test_prefix_cleaning():
    assert clean_explicit('An explicit version: "Foreigners are not trustworthy."') == "Foreigners are not trustworthy."
    assert clean_explicit("<Explicit Response>: I will not come.") == "I will not come."
    assert clean_explicit("B: No, I did not go.") == "No, I did not go."
    assert clean_explicit("Bob did not go.") == "Bob did not go."


def _inli_answer(request, attempt):
    text = user_text(request)
    if "The following passages consist of a conversation" in text:
        task = text.split("[your task]")[1]
        speaker = re.findall(r"(\w+) responds", task)[0]
        if "veterinary technician" in task:
            return REFUSAL
        return f"Implicature: {speaker} means what the answer implies.\nJustification: from the response."
    if "Given a passage and an implied statement" in text:
        implied = text.rsplit("Implied statement:", 1)[1].strip()
        if "love what I do" in text:
            return f"Explicit statement: {implied}\nJustification: none"  # copies the implied one: malformed
        return (f"Explicit statement: {implied[:-1]}, as stated.\nJustification: x\nNeutral statement: {implied[:-1]}, "
                f"perhaps.\nJustification: y\nContradictory statement: It is false that {implied}\nJustification: z")
    if "paraphrase" in text:
        statement = text.rsplit("Statement:", 1)[1].strip()
        return None if "perhaps" in statement and "Employed" in text else f"Paraphrase: Put differently, {statement}"
    return "unexpected prompt"


def test_inli_rows_accepted_by_loader_and_eval(tmp_path, fake_server, capsys):
    frames = pd.read_csv(real_circa_frames(tmp_path), sep="\t", dtype=str, keep_default_na=False)
    usable = frames["goldstandard1"].isin(["Yes", "No"]).sum()
    server = fake_server(Scripted(_inli_answer))
    output = tmp_path / "inli.csv"
    assert generate(server, "inli", "--input", str(tmp_path / "frames.tsv"), "--frame-type", "circa",
                    "--output", str(output)) == 0
    printed = capsys.readouterr().out
    assert f"stage augmentation: in {usable} -> out {usable - 1} (dropped: empty 0, refused 1" in printed
    assert f"stage alternatives: in {usable - 1} -> out {usable - 2} (dropped: empty 0, refused 0, malformed 1" in printed
    assert "stage paraphrase:" in printed
    items = load_inli(path=output)
    rows = len(items) // 4
    assert rows == usable - 2
    assert all(i.hypothesis.startswith("Put differently") for i in items if i.label != "explicit")
    assert not any("veterinary technician" in i.premise for i in items)
    table = pd.read_csv(output, dtype=str)
    assert table.columns[0].startswith("Unnamed") and set(table["generator_model"]) == {"fake-model"}
    # pragmeter eval takes the file unchanged
    evaluation = tmp_path / "eval"
    with_eval = fake_server(lambda request: "Implicature")
    assert main(["eval", "--tasks", "inli", "--task-arg", f"inli.path={output}", "--output", str(evaluation),
                 "--model-args", f"base_url={with_eval.url},model=m", "--no-progress"]) == 0
    result = json.loads((evaluation / "results.json").read_text())["results"]["inli"]
    assert result["n_items"] == 4 * rows and result["metrics"]["implied_accuracy"] == 1.0


def test_drinq_items_accepted_by_loader(tmp_path, fake_server, capsys):
    questions = pd.read_csv(real_questions(tmp_path, 4))["question"].tolist()

    def answer(request, attempt):
        text = user_text(request)
        question = text.rsplit("Question:", 1)[1].splitlines()[0].strip()
        if text.startswith("You are an insightful expert"):
            return json.dumps({"intent": "seek information", "implied_comment": f"I want to know: {question}"})
        intent = text.rsplit("Intent: to ", 1)[1].strip()
        number = questions.index(question)
        if intent == "threaten" or (number == 0 and attempt == 1):
            return "[]" if intent == "threaten" else "Here are three contexts."  # abstention / malformed once
        return json.dumps([{"context": f"Context {k} where the speaker wants to {intent}.",
                            "implied comment": f"{intent.capitalize()} number {k} about item {number}."}
                           for k in range(3)])

    server = fake_server(Scripted(answer))
    output = tmp_path / "drinq.csv"
    assert generate(server, "drinq", "--input", str(tmp_path / "questions.csv"), "--candidate-intents", "6",
                    "--keep-intents", "5", "--output", str(output)) == 0
    printed = capsys.readouterr().out
    assert "stage default: in 4 -> out 4" in printed and "stage contexts: in 24 -> out" in printed
    items = load_drinq(path=output)
    table = pd.read_csv(output, dtype=str)
    assert len(items) == len(table) > 0
    assert all(item.consensus == item.implied_letter for item in items)  # the generated comment is an option
    assert all(sum(text.startswith("I want to know") for _, text in item.options) == 1 for item in items)
    assert "threaten" not in set(table["intent"]) and (table["intent"] != table["default_intent"]).all()
    assert table.groupby("question")["intent"].nunique().max() <= 5
    assert set(table["generator_model"]) == {"fake-model"}


def test_agreement_filter_output_read_by_loader(tmp_path, fake_server, capsys):
    source = json.loads(real_dialogues(tmp_path).read_text())
    asked = [(c, w) for c, v in source.items() for w, i in v["emphasis"].items() if len(i) >= 2]
    disagree, garbled = asked[0], asked[1]

    def answer(request, attempt):
        text = user_text(request)
        first = source[disagree[0]]["emphasis"][disagree[1]][0]
        garbled_first = source[garbled[0]]["emphasis"][garbled[1]][0]
        if first in text:
            return "The first sentence is about time, the second about money.\nOutput: no"
        if garbled_first in text:
            return "Hmm."
        return "All the sentences express the same intention.\nyes"

    server = fake_server(Scripted(answer))
    output = tmp_path / "filtered.json"
    assert generate(server, "agreement", "--input", str(tmp_path / "annotations.json"), "--output", str(output)) == 0
    printed = capsys.readouterr().out
    assert f"stage agreement: in {len(asked)} -> out {len(asked) - 1} (dropped: empty 0, refused 0, malformed 1" in printed
    kept = json.loads(output.read_text())
    for context, word in (disagree, garbled):
        assert word not in kept.get(context, {}).get("emphasis", {})
    items = load_emphasized_talk(path=output)
    words_in = sum(len(v["emphasis"]) for v in source.values())
    assert len(items) == words_in - 2
    assert all(v["agreement"]["judge_model"] == "fake-model" for v in kept.values())
