"""FLUTE (Chakrabarty et al., EMNLP 2022): figurative-language NLI, per-type train files and the gold test files.

The label means different things per type, so each is read on its own terms:

* idiom, metaphor, simile: the hypothesis carries the figure, the premise is literal. An ``Entailment`` row is a
  pair (figurative hypothesis -> literal premise); the ``Contradiction`` row of the same item keeps the figurative
  hypothesis and gives the opposite literal reading, its hard negative.
* sarcasm: the premise is a literal statement; a ``Contradiction`` hypothesis is a sarcastic rewrite of it (its
  literal words contradict the premise, its intended meaning is the premise: FLUTE's explanations say so), an
  ``Entailment`` hypothesis a literal paraphrase. So each sarcastic rewrite pairs with the premise, and with the
  item's literal paraphrase where there is one (a group of rewrites); an ``Entailment`` row alone is literal ->
  literal and pairs with nothing.

``FLUTEfinal{train,val}.json`` hold the same items as the per-type train files in prompt form, and
``FLUTEfinaltest.json`` has no labels, so they are not read.
"""

from __future__ import annotations

from collections import defaultdict

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs, origin, read_jsonl, text

NAME = "flute"
LICENCE = "none stated"
FIGURATIVE = ("idiomNLI/idiom_train.jsonl", "metaphorNLI/metaphor_train.jsonl", "simileNLI/simile_train.jsonl",
              "testgolddata/idiom_test.jsonl", "testgolddata/metaphor_test.jsonl", "testgolddata/simile_test.jsonl")
SARCASM = ("SarcasmNLI/sarcasm_train.jsonl", "testgolddata/sarcasm_test.jsonl")
FIELDS = ("id", "premise", "hypothesis", "label")


def _items(relative: str, root) -> dict[str, list[tuple[int, dict]]]:
    items: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for index, row in enumerate(read_jsonl(f"{NAME}/{relative}", root, FIELDS)):
        items[str(row["id"])].append((index, row))
    return items


def flute(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "FLUTE: idiom/metaphor/simile -> literal premise (contradicting premise = "
                      "hard negative); sarcastic rewrite -> literal premise and literal paraphrase",
                      licence=LICENCE, cap=cap)
    for relative in FIGURATIVE:
        where = f"{NAME}/{relative}"
        for item, rows in _items(relative, root).items():
            contradictions = {text(r["hypothesis"]): text(r["premise"])
                              for _, r in rows if r["label"] == "Contradiction"}
            for index, row in rows:
                figure, literal = text(row["hypothesis"]), text(row["premise"])
                if row["label"] == "Contradiction":
                    continue  # used as the hard negative of its item's Entailment row
                if row["label"] != "Entailment":
                    out.skipped[f"label {row['label']!r}"] += 1
                elif not figure or not literal:
                    out.skipped["empty field"] += 1
                else:
                    out.add(figure, literal, origin(where, index), group=f"{where}:{item}",
                            hard_negative=contradictions.get(figure))
            if not any(r["label"] == "Entailment" for _, r in rows):
                out.skipped["contradiction without an entailing row"] += len(rows)
    for relative in SARCASM:
        where = f"{NAME}/{relative}"
        for item, rows in _items(relative, root).items():
            sarcastic = [(i, r) for i, r in rows if r["label"] == "Contradiction" and text(r["hypothesis"])]
            literal = [(i, r) for i, r in rows if r["label"] == "Entailment" and text(r["hypothesis"])]
            if not sarcastic:
                out.skipped["literal paraphrase without a sarcastic rewrite (literal -> literal)"] += len(rows)
                continue
            for index, row in sarcastic:
                premise = text(row["premise"])
                if not premise:
                    out.skipped["empty field"] += 1
                    continue
                out.add(text(row["hypothesis"]), premise, origin(where, index), group=f"{where}:{item}")
                for other, paraphrase in literal:
                    out.add(text(row["hypothesis"]), text(paraphrase["hypothesis"]),
                            origin(where, f"{index}+{other}"), group=f"{where}:{item}")
    return out
