"""IMPPRES (Jeretic et al., ACL 2020): generated pairs that probe presupposition (9 triggers, 17,100 pairs:
entailment / neutral / contradiction) and scalar implicature (7 triggers; each pair has a logical and a pragmatic
label). ``presupposition`` reads the presupposition part; ``implicature`` the implicature part with its *pragmatic*
label (``gold_label_prag``): "Some teenagers criticize Guy." implies "Not all teenagers criticize Guy."."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, jsonl_rows

PRESUPPOSITION = ("all_n_presupposition", "both_presupposition", "change_of_state", "cleft_existence",
                  "cleft_uniqueness", "only_presupposition", "possessed_definites_existence",
                  "possessed_definites_uniqueness", "question_presupposition")
IMPLICATURE = ("connectives", "gradable_adjective", "gradable_verb", "modals", "numerals_10_100", "numerals_2_3",
               "quantifiers")
FILES = {"presupposition": tuple(f"imppres/dataset/presupposition/{n}.jsonl" for n in PRESUPPOSITION),
         "implicature": tuple(f"imppres/dataset/implicature/{n}.jsonl" for n in IMPLICATURE)}
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}
LABEL_FIELD = {"presupposition": "gold_label", "implicature": "gold_label_prag"}


def load(split: str = "presupposition", root: str | os.PathLike | None = None) -> list[NliPair]:
    """``split``: the part, ``presupposition`` or ``implicature`` (IMPPRES has no train/test split)."""
    pairs = []
    for relative in FILES[check_split("IMPPRES", split, FILES)]:
        rows = jsonl_rows(relative, root)
        pairs += checked_pairs(relative, rows, f"imppres_{split}", "sentence1", "sentence2", LABEL_FIELD[split],
                               LABELS, group="UID" if split == "presupposition" else "trigger")
    return pairs
