"""The paper's corpus sources (Table 6, rebuilt offline): readers that turn each into (implicit, explicit) pairs.

Every reader returns ``SourcePairs``: the pairs plus counts of rows it could not use, by reason. Files are read
through the data root and verified by checksum.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from pragmeter.data.root import data_file
from pragmeter.datasets import inli, ishate, latent_hatred
from pragmeter.datasets.pairs.base import SourcePairs, read_delimited
from pragmeter.datasets.pairs.negation import negate, tidy


def dialogue(question: str, answer: str) -> str:
    """The paper's dialogue format for conversational sources: "- question - answer"."""
    return f"- {' '.join(question.split())} - {' '.join(answer.split())}"


def implicit_hate(root=None) -> SourcePairs:
    out = SourcePairs("implicit_hate", "original", "Latent Hatred stage-3 posts paired with their implied statement")
    for row in read_delimited(latent_hatred.STAGE3, root, delimiter="\t", encoding="utf-8"):
        post, implied = (row.get("post") or "").strip(), (row.get("implied_statement") or "").strip()
        if not post or not implied:
            out.skipped["empty field"] += 1
            continue
        out.pairs.append((post, implied))
    return out


def sbic(root=None) -> SourcePairs:
    out = SourcePairs("sbic", "original", "SBIC v2 dev+test posts paired with each targetStereotype statement")
    for split in ("dev", "tst"):
        for row in read_delimited(f"sbic/datasets/sbf/SBIC.v2.agg.{split}.csv", root, encoding="utf-8"):
            post = (row.get("post") or "").strip()
            try:
                statements = json.loads(row.get("targetStereotype") or "[]")
            except json.JSONDecodeError:
                out.skipped["unparseable targetStereotype"] += 1
                continue
            if not statements:
                continue  # posts without an implied statement are not pairs, not errors
            seen = set()
            for statement in statements:
                statement = (statement or "").strip()
                if statement and statement.lower() not in seen:
                    seen.add(statement.lower())
                    out.pairs.append((post, statement))
    return out


def imppres(root=None) -> SourcePairs:
    out = SourcePairs("imppres", "original", "IMPPRES implicature rows with pragmatic entailment and logical neutral")
    for name in ("connectives", "gradable_adjective", "gradable_verb", "modals", "numerals_10_100", "numerals_2_3",
                 "quantifiers"):
        path = data_file(f"imppres/dataset/implicature/{name}.jsonl", root)
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("gold_label_prag") == "entailment" and row.get("gold_label_log") == "neutral":
                out.pairs.append((row["sentence1"].strip(), row["sentence2"].strip()))
    return out


# Answers that start with a polar particle are direct, not implicit ("Yes they hired me back."); "No problem" stays.
DIRECT_ANSWER = re.compile(
    r"^(yes|yeah|yep|yup|nope|nah)\b|^no(?=[,.!]|\s+(i|we|you|he|she|they|it|i'm|i've|i'd|thanks|thank|not)\b)",
    re.IGNORECASE)


def circa(root=None) -> SourcePairs:
    """Indirect answer in its exchange -> canonical yes/no statement, as INLI frames Circa:
    "- Are you in the mood for burgers? - I'd rather have ramen." -> "No, I am not in the mood for burgers."

    The question stays on the implicit side because an indirect answer only means something in its exchange
    (without it, "At the moment it is" cannot be paired with "Yes, it is full-time."); the explicit side is the
    canonical statement alone.
    """
    out = SourcePairs("circa", "template",
                      "Circa '- question - indirect answer' -> 'Yes, <statement>' or 'No, <rule-negated statement>'")
    for scenario in range(10):
        relative = f"circa/data/CIRCA/unmatched/scenario{scenario}/circa-data-test.tsv"
        for row in read_delimited(relative, root, delimiter="\t", encoding="utf-8"):
            gold = row.get("goldstandard1")
            if gold not in ("Yes", "No"):
                continue
            question, statement, answer = row.get("question-X", ""), row.get("canquestion-X", ""), row.get("answer-Y", "")
            if not question.strip() or not statement.strip() or not answer.strip():
                out.skipped["empty field"] += 1
                continue
            if DIRECT_ANSWER.match(answer.strip()):
                out.skipped["direct yes/no answer"] += 1
                continue
            clause = statement if gold == "Yes" else negate(statement)
            if clause is None:
                out.skipped["no negation rule"] += 1
                continue
            clause = tidy(clause)
            if not clause.startswith(("I ", "I'")):
                clause = clause[:1].lower() + clause[1:]
            out.pairs.append((dialogue(question, answer), f"{gold}, {clause}"))
    return out


def ludwig(root=None) -> SourcePairs:
    out = SourcePairs("ludwig", "original", "LUDWIG: '- utterance - response' -> '- utterance - implicature'")
    for split in ("dev", "test"):
        for row in read_delimited(f"ludwig/data/{split}_conversational_implicatures.csv", root, encoding="utf-8"):
            context, response = row.get("Context utterance", ""), row.get("Response utterance", "")
            implicature = row.get("Implicature", "")
            if not context.strip() or not response.strip() or not implicature.strip():
                out.skipped["empty field"] += 1
                continue
            out.pairs.append((dialogue(context, response), dialogue(context, implicature)))
    return out


def r3_sarcasm(root=None) -> SourcePairs:
    out = SourcePairs("r3_sarcasm", "original", "R3: human and R3-generated sarcasm paired with the literal input")
    literal = data_file("r3_sarcasm/data/non-sarcastic.txt", root).read_text(encoding="utf-8").splitlines()
    for name in ("human-sarcasm.txt", "FM-output.txt"):
        sarcastic = data_file(f"r3_sarcasm/data/{name}", root).read_text(encoding="utf-8").splitlines()
        for sarcasm, plain in zip(sarcastic, literal):
            if sarcasm.strip() and plain.strip():
                out.pairs.append((sarcasm.strip(), plain.strip()))
            else:
                out.skipped["empty line"] += 1
    return out


def bbh_snarks(root=None) -> SourcePairs:
    out = SourcePairs("bbh_snarks", "original", "BBH snarks: the sarcastic option paired with its literal twin")
    examples = json.loads(data_file("bbh_snarks/bbh/snarks.json", root).read_text(encoding="utf-8"))["examples"]
    for example in examples:
        options = {}
        for line in example["input"].splitlines():
            if line.startswith(("(A) ", "(B) ")):
                options[line[:3]] = line[4:].strip()
        target = example["target"].strip()
        other = "(B)" if target == "(A)" else "(A)"
        if target in options and other in options:
            out.pairs.append((options[target], options[other]))
        else:
            out.skipped["unparseable options"] += 1
    return out


def inli_train(root=None) -> SourcePairs:
    """INLI train split only: val and test stay held out for the INLI benchmark."""
    out = SourcePairs("inli_train", "original", "INLI train split: premise -> implied_entailment hypothesis")
    for row in read_delimited(inli.split_file("train"), root, encoding="utf-8"):
        premise, implied = (row.get("premise") or "").strip(), (row.get("implied_entailment") or "").strip()
        if premise and implied:
            out.pairs.append((premise, implied))
        else:
            out.skipped["empty field"] += 1
    return out


ISHATE_PAIRS_PER_ANCHOR = 3


def ishate_train(root=None, per_anchor: int = ISHATE_PAIRS_PER_ANCHOR, seed: int = 0) -> SourcePairs:
    """ISHate train split, original messages only (dev and test stay held out): each implicit HS message paired
    with ``per_anchor`` explicit HS messages about the same target group, each explicit message used once.

    The paper's largest hate source ("Adversarial", 25,193 pairs) paired ISHate-derived implicit messages with
    GPT-written explicit versions; without an LLM, the closest explicit side is a real explicit message with the
    same target. Both sides are posts of the same genre, so the pairs teach that explicit hate *posts* are
    explicit (paraphrase-only sources let length and tweet style stand in for implicitness).
    """
    import numpy as np

    out = SourcePairs("ishate_train", "same target",
                      f"ISHate train: implicit HS message -> {per_anchor} explicit HS messages with the same target",
                      topics=[], paraphrase=False)
    frame = ishate.read_messages("train", root)
    frame = frame[frame["aug_method"] == "orig"]
    text_ok = frame["cleaned_text"].map(lambda v: isinstance(v, str) and bool(v.strip()))
    if (empty := int((~text_ok & frame["implicit_layer"].notna()).sum())):
        out.skipped["empty text"] += empty
    frame = frame[text_ok]
    rng = np.random.default_rng(seed)
    for target, group in frame.groupby("target", sort=True):
        implicit = group.loc[group["implicit_layer"] == "Implicit HS", "cleaned_text"].tolist()
        explicit = group.loc[group["implicit_layer"] == "Explicit HS", "cleaned_text"].tolist()
        explicit = [explicit[i] for i in rng.permutation(len(explicit))]
        for n, anchor in enumerate(implicit):
            partners = explicit[n * per_anchor : (n + 1) * per_anchor]
            if not partners:
                out.skipped["no explicit message left for the target"] += 1
            for partner in partners:
                out.pairs.append((anchor, partner))
                out.topics.append(str(target))
    return out


PAPER_SOURCES: dict[str, Callable[..., SourcePairs]] = {
    "implicit_hate": implicit_hate,
    "sbic": sbic,
    "imppres": imppres,
    "circa": circa,
    "ludwig": ludwig,
    "r3_sarcasm": r3_sarcasm,
    "bbh_snarks": bbh_snarks,
    "inli_train": inli_train,
    "ishate_train": ishate_train,
}
