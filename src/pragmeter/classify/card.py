"""The model card (README.md) of a trained classifier: data, code commit, settings, metrics, command; of a shipped
interpreter; and of an interpreter exported as a CrossEncoder folder or a peft adapter. Each opens with the YAML
front matter the Hugging Face Hub reads (:mod:`pragmeter.io.model_card`)."""

from __future__ import annotations

import re

from pragmeter.errors import PragmeterError
from pragmeter.version import __version__
from pragmeter.io.model_card import base_model_id, combined_licence, front_matter, is_non_commercial

DATA_METRICS = ["accuracy", "f1"]
INTERPRETER_TAGS = ("pragmeter", "nli", "cross-encoder", "implicature")


def data_metadata(data_files) -> tuple[str, list[str]]:
    """(the Hub licence identifier of the data files, their data sets: the folders under the data root), licences as
    the data manifest records them; ``other`` for files it does not list or several licences."""
    from pragmeter.data.root import manifest

    try:
        entries = manifest()
    except Exception:  # noqa: BLE001  (a card is written without the manifest's licences rather than not at all)
        entries = {}
    files = sorted(data_files or ())
    licences = [(entries.get(path) or {}).get("licence") for path in files]
    return (combined_licence(licences) if files else "other"), list(dict.fromkeys(path.split("/")[0] for path in files))


def _percent(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def _test_lines(test: dict) -> list[str]:
    return [
        "## Test metrics", "",
        f"accuracy {_percent(test['accuracy'])}, macro-F1 {_percent(test['macro_f1'])} on {test['n']} items", "",
        "| label | precision | recall | F1 | support |", "|---|---|---|---|---|",
        *[f"| {label} | {v['precision']:.4f} | {v['recall']:.4f} | {v['f1']:.4f} | {v['support']} |"
          for label, v in test["precision_recall_f1"].items()], "",
        "Confusion matrix (rows gold, columns predicted):", "",
        "| gold \\ predicted | " + " | ".join(test["confusion"]["labels"]) + " |",
        "|---" * (len(test["confusion"]["labels"]) + 1) + "|",
        *[f"| {label} | " + " | ".join(map(str, row[:-1])) + " |"
          for label, row in zip(test["confusion"]["labels"], test["confusion"]["counts"])], "",
    ]


def model_card(info: dict) -> str:
    """Markdown from the ``info`` dict that is also saved as metrics.json (see :func:`run_recipe`)."""
    test, settings = info.get("test"), info["settings"]
    svm = info.get("head") == "svm"
    how = (f"An RBF support-vector machine on the frozen, L2-normalised sentence embeddings of "
           f"`{settings['base_encoder']}` (the ISHate paper's USE+SVM form)" if svm
           else f"Fine-tuned from `{settings['base_encoder']}`")
    versions = "" if svm else f"transformers {info['transformers']}; "
    chosen = (f"- C = {info['history'][info['best_epoch'] - 1]['C']:g} of {len(info['history'])} values"
              if svm else f"- best epoch {info['best_epoch']} of {len(info['history'])}")
    licence, datasets = data_metadata(info.get("data_files"))
    metadata = front_matter(licence, base_model_id(settings["base_encoder"]), datasets, "text-classification",
                            DATA_METRICS, None if svm else "transformers", ("pragmeter", info["recipe"]))
    train_config = info["train_config"]
    distilled = teacher_sentence(
        info.get("arguments") or {}, train_config.get("soft_weight"),
        choice_clause(train_config.get("choice_anchor")) if info.get("train_choice_items") else "",
        train_config.get("label_only_groups")).strip()
    lines = [
        f"# {info['name']}", "",
        f"{info['description']}. {how}, by pragmeter (`pragmeter classifier train {info['recipe']}`).", "",
        "## Reproduce", "", "```", info["command"], "```", "",
        f"- pragmeter commit: `{info['commit']}`; pragmeter {__version__}; torch {info['torch']}; "
        f"{versions}device: {info['device']}",
        "- training settings: " + ", ".join(f"{k}={v}" for k, v in info["train_config"].items()),
        f"{chosen} (selected on validation {info['train_config']['select_on']}); "
        f"{info['train_examples']} training examples", "",
        "## Data", "", *([distilled, ""] if distilled else []), "| file | sha256 |", "|---|---|",
        *[f"| {path} | `{digest[:16]}…` |" for path, digest in sorted(info["data_files"].items())], "",
        *(_test_lines(test) if test else
          ["## Test metrics", "", "Not measured: the test split was left unread for this run (a stage of a recipe, "
           "chosen on validation).", ""]),
    ]
    if info.get("decision_bias"):
        tuned = info["decision_bias"]
        plain = tuned["test_without_bias"]
        lines += [f"Decision bias (added to each label's log-probability, tuned on validation "
                  f"{tuned['selected_on']}: {tuned['val_before']:.4f} -> {tuned['val_after']:.4f}): "
                  + ", ".join(f"{label} {value:+.1f}" for label, value in tuned["bias"].items())
                  + f". Without it: test accuracy {_percent(plain['accuracy'])}, macro-F1 {_percent(plain['macro_f1'])}; "
                  + ", ".join(f"{label} F1 {v['f1']:.4f}" for label, v in plain["precision_recall_f1"].items()), ""]
    if info.get("test_by_group"):
        lines += ["Accuracy per source:", "", "| source | accuracy | n |", "|---|---|---|",
                  *[f"| {g} | {v['accuracy']:.4f} | {v['n']} |" for g, v in info["test_by_group"].items()], ""]
    if info.get("test_report_groups"):
        lines += ["Accuracy on groups of sources:", "",
                  *[f"- {name}: {v['accuracy']:.4f} (n={v['n']})" for name, v in info["test_report_groups"].items()], ""]
    if info.get("paper"):
        lines += ["## The paper's figures for comparison", "", "```", _json(info["paper"]), "```", ""]
    if svm:
        lines += ["## Training history", "", "| C | support vectors | val accuracy | val macro-F1 | seconds |",
                  "|---|---|---|---|---|",
                  *[f"| {h['C']:g} | {h['support_vectors']} | {h['val_accuracy']:.4f} | {h['val_macro_f1']:.4f} | "
                    f"{h['train_seconds']} |" for h in info["history"]], ""]
    else:
        lines += ["## Training history", "", "| epoch | train loss | val accuracy | val macro-F1 | seconds |",
                  "|---|---|---|---|---|",
                  *[f"| {h['epoch']} | {h['train_loss']:.4f} | {h['val_accuracy']:.4f} | {h['val_macro_f1']:.4f} | "
                    f"{h['train_seconds']} |" for h in info["history"]], ""]
    return metadata + "\n".join(lines)


def _json(value) -> str:
    import json

    return json.dumps(value, indent=2)


# What the shipped interpreter's card says about its data and base encoders (licences; which texts an LLM wrote).
INTERPRETER_DATA = (
    "Trained on the INLI train split (Havaldar et al., ACL 2025; google-deepmind/inli, CC BY-SA 4.0): 8,000 premises "
    "× 4 hypotheses. **Written by an LLM**: all four hypotheses per premise, the NormBank and Social-Chem-101 "
    "premises and the framing of the Circa and LUDWIG premises were generated by Gemini from human-written seeds; "
    "the quoted exchanges of the conversational premises come from Circa and LUDWIG. The weights are derived from "
    "CC BY-SA 4.0 data: share them under the same terms.")
EXTRA_DATA = {
    "flute": "Also FLUTE's training files (Chakrabarty et al., EMNLP 2022; no licence stated upstream): figurative "
             "sentences (idiom, metaphor, simile, sarcasm) with literal readings. **Written with an LLM**: FLUTE's "
             "figurative sentences were generated by GPT-3 and edited by people (model-in-the-loop).",
}
# The recipe's general families (classify/recipes/interpreter.py: GENERAL) as the card names them.
GENERAL_FAMILIES = {"nli": ("general NLI", "TaxiNLI, e-SNLI, CAD-NLI, SICK, ConjNLI"),
                    "monotonicity": ("monotonicity", "MED, HELP, MoNLI, ScoNe"),
                    "presupposition": ("presupposition", "IMPPRES")}


def general_sets(families: list[str] | None) -> str:
    """The general sets a run read, named by family (None, as configs that record no families: all of them)."""
    families = [f for f in GENERAL_FAMILIES if f in families] if families is not None else list(GENERAL_FAMILIES)
    if not families:
        raise PragmeterError(f"a recipe that reads the general sets names at least one of "
                             f"{', '.join(GENERAL_FAMILIES)}, got {families}")
    kinds = _and([GENERAL_FAMILIES[f][0] for f in families])
    names = ", ".join(GENERAL_FAMILIES[f][1] for f in families)
    reading = "entailment read as explicit" + (", IMPPRES's scalar implicatures as implied"
                                               if "presupposition" in families else "")
    return f"{kinds} sets ({names}; {reading})"


def multi_source_data(recipe: dict, data_files=None, soft_weight: float | None = None,
                      choice_anchor: float | None = None, label_only=None) -> str:
    """The card's account of a run of the multi-source recipe (``classify/recipes/interpreter.py``), from the
    arguments its config records (with ``soft_weight``, the teacher's share of each pair's target where a teacher
    is recorded, ``choice_anchor``, the weight pulling the choice items' readings towards it, and ``label_only``, the
    groups kept off the teacher), and what the
    licences of ``data_files`` (the paths it read) allow."""
    if recipe.get("stage") == "general":
        trained = f"Trained on {general_sets(recipe.get('families'))}."
    else:
        sources = recipe.get("sources") or []
        inli = (f"a seeded sample of {recipe['inli_cap']:,} INLI training pairs" if recipe.get("inli_cap")
                else "INLI train")
        parts = [inli] + (["FLUTE's training files"] if "flute" in sources else []) + (
            [f"Circa's yes/no exchanges outside INLI's premises ({recipe.get('circa_cap') or 'all'} of them, each with "
             "its question as a statement and the bare answers yes and no)"] if "circa" in sources else []) + (
            [f"{general_sets(recipe.get('families'))}, " + (
                f"a seeded sample of at most {recipe['cap']:,} pairs per set and split"
                if recipe.get("cap") is not None else "every pair")] if "general" in sources else [])
        choice = recipe.get("choice") or []
        if choice:
            parts.append("as choice items, with a loss over each item's reading scores: " + _and(
                ([f"GRICE's dialogue turns ({recipe.get('grice_cap') or 'all'} of them, four readings each; "
                  "Zheng et al. 2021, grammar-generated)"] if "grice" in choice else [])
                + (["Circa's yes/no exchanges (readings yes and no)"] if "circa" in choice else [])
                + ([f"FLUTE's figurative sentences ({recipe.get('flute_cap') or 'all'} of them from the training "
                    "files, each alone with three readings: its meaning, FLUTE's opposite reading and the sentence "
                    "restated; Chakrabarty et al., EMNLP 2022, written by GPT-3 and edited by people; no licence "
                    "stated upstream)"] if "flute" in choice else [])
                + ([f"sarcastic tweets ({recipe.get('sarcasm_cap') or 'all'} of them, each alone with two readings: "
                    "a person's non-sarcastic rewrite and the tweet restated; human-written: Ghosh et al. 2020's "
                    "crowd interpretations and Sarcasm SIGN's (Peled & Reichart, ACL 2017), no licence stated "
                    "upstream, and iSarcasmEval's authors' own rephrases, MIT)"] if "sarcasm" in choice else [])
                + ([f"Fig-QA's creative metaphors ({recipe.get('figqa_cap') or 'all'} of them from its train_xl "
                    "split, each alone with three readings: its meaning, the opposite ending and the metaphor "
                    "restated; crowd-written, Liu et al., NAACL 2022, MIT)"] if "figqa" in choice else [])
                + ([f"IMPLI's idiomatic and metaphoric sentences ({recipe.get('impli_cap') or 'all'} of them, each "
                    "alone with three readings: its meaning in plain words, a non-entailed rewrite (mostly the "
                    "figure's words taken literally) and the sentence restated; Stowe et al., ACL 2022, "
                    "Apache-2.0)"] if "impli" in choice else [])
                + ([f"situated implicatures written for pragmeter ({recipe.get('situated_cap') or 'all'} of them"
                    + (f" from the writing runs of {', '.join(recipe['situated_prompts'])}"
                       if recipe.get("situated_prompts") else "")
                    + ", each an utterance in its situation with four readings: the meant one, the words at face "
                    "value, the opposite and one the words do not convey; **written by the Claude (Anthropic) language "
                    "model**, not reviewed by people; Apache-2.0)"] if "situated" in choice else []))
                + (f"; a seeded {recipe['framed']:.0%} of the figurative and sarcastic items said in a frame instead "
                   "of alone (a named speaker, the quoted sentence, in half the frames a question about what was "
                   "meant)" if recipe.get("framed") else "")
                + (f"; a seeded {recipe['reworded']:.0%} of them with the sentence restated as a near copy (a changed "
                   "tense, an added adverb or another person) rather than its exact words" if recipe.get("reworded")
                   else ""))
        start = recipe.get("init_from", {}).get("folder")
        trained = (f"Trained (`classify/recipes/interpreter.py`) from the weights of `{start}` " if start else
                   "Trained (`classify/recipes/interpreter.py`) ") + "on " + "; ".join(parts) + "."
        average = recipe.get("average")
        if isinstance(average, dict) and average.get("folder"):
            trained += (f" The weights are then averaged with those of `{average['folder']}` (`classify/average.py`: "
                        f"each weight {_share(average.get('share'))} theirs, the rest this run's), which costs no "
                        "training; the average was judged on validation as a candidate of its own.")
        trained += teacher_sentence(recipe, soft_weight, choice_clause(choice_anchor), label_only)
    return trained + " " + licence_sentence(data_files)


def choice_clause(choice_anchor) -> str:
    """What the teacher sentence adds on a distilled run's choice items: their own loss, and the anchor towards the
    teacher's probabilities on their readings where ``choice_anchor`` is above 0."""
    anchored = (f", beside a cross-entropy (weight {choice_anchor:g}) towards the teacher's probabilities on their "
                "readings" if isinstance(choice_anchor, (int, float)) and choice_anchor > 0 else "")
    return f"; the choice items keep their own loss{anchored}"


def teacher_sentence(recipe: dict, soft_weight, choice: str = "", label_only=None) -> str:
    """The card's sentence on the teacher a run distilled (its recipe's ``teacher``, and ``soft_weight``, its share
    of each pair's target); empty without one. ``choice``: what the sentence adds on the choice items' loss;
    ``label_only``: the groups whose pairs trained on their labels alone (names that are not plain words are left
    out: they come from a file)."""
    teacher = recipe.get("teacher")
    if not (isinstance(teacher, dict) and teacher.get("folder")):
        return ""
    groups = [g for g in label_only if isinstance(g, str) and _PLAIN_NAME.fullmatch(g)] if isinstance(
        label_only, (list, tuple)) else []
    own = f", except the pairs of {_and([f'`{g}`' for g in groups])}, which train on their labels alone" if groups \
        else ""
    return (f" Each training pair's target is {_share(soft_weight)} the probabilities `{teacher['folder']}` gives "
            f"it and the rest its label (distillation, `classify/distillation.py`){own}{choice}.")


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def _share(share) -> str:
    return f"{share:.0%}" if isinstance(share, (int, float)) and not isinstance(share, bool) else "a share of"


def licence_sentence(data_files) -> str:
    """The card's sentence on what the licences of the files a run read allow (None: the run recorded none)."""
    if not data_files:
        return "The run recorded no list of the files it read: check each set's licence before using the weights."
    licences = sorted({_licence(path) for path in data_files})
    restricted = [licence for licence in licences if is_non_commercial(licence)]
    if not restricted:
        return "Every file read is below with its licence."
    return (f"Every file read is below with its licence. Non-commercial among them: {'; '.join(restricted)}; so the "
            "weights are for non-commercial use.")


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def _licence(path: str) -> str:
    from pragmeter.data.root import manifest

    return (manifest().get(path) or {}).get("licence", "not in the manifest").replace("|", "/")


BASE_LICENCES = {"all-MiniLM-L6-v2": "Apache-2.0", "all-mpnet-base-v2": "Apache-2.0",
                 "embeddinggemma-300m": "Gemma Terms of Use (ai.google.dev/gemma/terms)"}


def bf16_line(check: dict) -> str:
    """The card's sentence on the bf16 check (pragmeter.interpreter.runtime.bf16_bounds, ``path`` where it ran) and
    what ``--precision auto`` makes of it on a bf16 CPU, with and without the fp32 recheck of close calls."""
    from pragmeter.interpreter.runtime import RECHECKED_MAX_ABS_DIFF, bf16_within

    if not check.get("pairs"):
        return ("bf16 was not checked against fp32 for this folder: `--precision auto` runs it in fp32 on a CPU "
                "(`--precision bf16` still runs bf16 where asked).")
    rechecked = bf16_within(check, fp32_recheck=True)
    auto = ("with the recheck (the default) and, without it, only" if rechecked else "only")
    kept = check.get("fp32_layers") or []
    path = "OpenVINO" if check.get("path") == "openvino" else "torch autocast"
    if kept:
        path += f", encoder layers {', '.join(map(str, kept))} kept in fp32"
    return (f"bf16 on the CPU ({path}) against fp32 "
            f"({check['pairs']} validation pairs): largest change of a label probability "
            f"{check['max_abs_probability_diff']} and of a reading's score {check['max_abs_score_diff']}, same label "
            f"on {check['label_agreement']:.4f} of pairs — {'within' if check['within_bounds'] else 'outside'} the "
            f"strict bounds (≤ {check['bounds']['max_abs_score_diff']}, the same label on every pair) and "
            f"{'within' if rechecked else 'outside'} the bound with close calls answered again in fp32 "
            f"(≤ {RECHECKED_MAX_ABS_DIFF}). On a CPU with bf16, `--precision auto` runs bf16 {auto} when within the "
            "strict bounds.")


CARD_NOTES = "card_notes"  # metrics.json's paragraphs written by hand into a shipped card (release.add_card_note)


def card_notes(metrics: dict) -> list[str]:
    """The paragraphs a shipped interpreter's metrics carry for its card's data section (none when absent); a
    PragmeterError naming the field when they are not a list of texts."""
    notes = metrics.get(CARD_NOTES, [])
    if not isinstance(notes, list) or not all(isinstance(note, str) and note.strip() for note in notes):
        raise PragmeterError(f"metrics field {CARD_NOTES!r}: expected a list of non-empty paragraphs")
    return notes


def interpreter_card(metrics: dict) -> str:
    """Markdown card of a shipped interpreter from :func:`pragmeter.interpreter.release.ship`'s metrics, with the
    paragraphs of :func:`card_notes` after its data paragraphs."""
    training = metrics.get("training") or {}
    settings = training.get("settings") or {}
    base = settings.get("base_encoder", "?")
    whole, compressed = metrics["val_whole"], metrics["val_compressed"]
    check = metrics["bf16_check"]
    recipe = settings.get("recipe") or {}
    train_config = training.get("train_config") or {}
    soft_weight = train_config.get("soft_weight")
    # the INLI recipe's; the multi-source one says its own
    distilled = teacher_sentence(recipe, soft_weight, label_only=train_config.get("label_only_groups")).strip()
    licence, datasets = data_metadata(training.get("data_files"))
    if not training.get("data_files"):  # the INLI recipe's data when the run did not record its files
        licence, datasets = "cc-by-sa-4.0", ["inli"]
    metadata = front_matter(licence, base_model_id(base), datasets, "text-classification", DATA_METRICS,
                            tags=INTERPRETER_TAGS)
    lines = [
        f"# {metrics.get('name') or 'pragmeter interpreter'}", "",
        "Reads (context, utterance) as premise and a candidate reading as hypothesis and gives INLI's four labels "
        "(implied / explicit / neutral / contradiction). `from pragmeter import Interpreter`; `pragmeter interpret`.",
        "",
        f"Base encoder `{base}` ({BASE_LICENCES.get(base, 'see its model card')}), installed on its own; this "
        f"folder holds the fine-tuned encoder's change of each matrix as rank-{metrics['rank']} factors (fp16) and "
        f"the classification layer.", "",
        "## Data", "", INTERPRETER_DATA, "",
        *[line for name in recipe.get("extra", []) for line in (EXTRA_DATA.get(name, name), "")],
        *([multi_source_data(recipe, training.get("data_files"), soft_weight, train_config.get("choice_anchor"),
                             train_config.get("label_only_groups")), ""]
          if recipe.get("name") == "interpreter"
          else [distilled, ""] if distilled else []),
        *[line for note in card_notes(metrics) for line in (note.strip(), "")],
        *(["| file | licence | sha256 |", "|---|---|---|",
           *[f"| {path} | {_licence(path)} | `{digest[:16]}…` |"
             for path, digest in sorted((training.get("data_files") or {}).items())],
           ""] if training.get("data_files") else []),
        "## Reproduce", "", "```", str(training.get("command") or "?"), "```", "",
        f"- pragmeter commit: `{training.get('commit') or '?'}`; torch {training.get('torch') or '?'}; transformers "
        f"{training.get('transformers') or '?'}; device {training.get('device') or '?'}",
        "- training settings: " + ", ".join(f"{k}={v}" for k, v in (training.get("train_config") or {}).items()),
        f"- best epoch {training.get('best_epoch')} of {len(training.get('history') or [])}", "",
        "## Validation (INLI val, 4,000 pairs)", "",
        "| model | accuracy | macro-F1 |", "|---|---|---|",
        f"| fine-tuned, whole | {_percent(whole['accuracy'])} | {_percent(whole['macro_f1'])} |",
        f"| shipped (rank {metrics['rank']}) | {_percent(compressed['accuracy'])} | "
        f"{_percent(compressed['macro_f1'])} |", "",
        *(["The rank was chosen on validation accuracy: " + ", ".join(
            f"rank {rank} {accuracy:.4f}" for rank, accuracy in metrics["val_by_rank"].items()) + ".", ""]
          if metrics.get("val_by_rank") else []),
        bf16_line(check), "",
        # the weight chosen after training (record_weight), else the one the choice items were trained for
        *explicit_weight_lines((metrics.get("explicit_weight") or {}).get("weight", settings.get("explicit_weight", 1))),
    ]
    test = metrics.get("test_compressed")
    if test:
        per_label = test.get("precision_recall_f1", {})
        lines += ["## Test (INLI test, 4,000 pairs; measured once, with the shipped model)", "",
                  f"accuracy {_percent(test['accuracy'])}, macro-F1 {_percent(test['macro_f1'])}; implied recall "
                  f"{_percent(per_label.get('implied', {}).get('recall'))}", "",
                  *[f"- {source}: {v['accuracy']:.4f} (n={v['n']})" for source, v in test.get("per_source", {}).items()],
                  ""]
    return metadata + "\n".join(lines)


def source_card(source) -> tuple[str, dict]:
    """(the text, the front matter) of the card (README.md) of the model folder ``source``; empty for none, a link
    (a planted link is not read) or a card that does not parse."""
    from pathlib import Path

    card_path = Path(source) / "README.md" if source is not None else None
    if card_path is None or not card_path.is_file() or card_path.is_symlink():
        return "", {}
    try:
        from huggingface_hub import ModelCard

        parsed = ModelCard.load(card_path)
        return parsed.text.strip(), parsed.data.to_dict()
    except Exception:  # noqa: BLE001  (an unreadable source card: the new card without it)
        return "", {}


def _carried_front_matter(name: str, settings, source_metadata: dict, library_name: str) -> str:
    """The front matter of a card written from another folder's: its licence and data sets carried over."""
    datasets = source_metadata.get("datasets")
    return front_matter(source_metadata.get("license") if isinstance(source_metadata.get("license"), str)
                        else "other",
                        base_model_id(settings.base_encoder) or base_model_id(name),
                        [str(d) for d in datasets] if isinstance(datasets, list) else (),
                        "text-classification", DATA_METRICS, library_name, INTERPRETER_TAGS)


def _title(name: str) -> str:
    from pathlib import Path

    return name if base_model_id(name) == name else Path(name or "pragmeter interpreter").name  # Hub name or folder


def export_card(name: str, settings, source=None) -> str:
    """Card of an interpreter written as whole weights (:meth:`pragmeter.interpreter.model.Interpreter.save`):
    how to open it (pragmeter, sentence-transformers), its labels, and the card of the folder it came from (``source``;
    its licence and data sets carried into the front matter)."""
    text, source_metadata = source_card(source)
    metadata = _carried_front_matter(name, settings, source_metadata, "sentence-transformers")
    labels = _label_list(settings)
    lines = [
        f"# {_title(name)} (whole weights)", "",
        f"An NLI cross-encoder read as pragmeter's interpreter: premise = a context and the quoted utterance, "
        f"hypothesis = a candidate reading; labels {labels}; inputs truncated at {settings.max_length} tokens.", "",
        "```python", "from sentence_transformers import CrossEncoder", "",
        "model = CrossEncoder(\"FOLDER\")",
        "model.predict([(premise, hypothesis)], apply_softmax=True)  # label probabilities, columns as above", "",
    ]
    return _derived_card(metadata, lines, text, settings.explicit_weight)


def explicit_weight_lines(weight: float) -> list[str]:
    """The card's paragraph on the score pragmeter ranks readings by, when the folder's explicit weight is not 1 (none
    otherwise): what a user of the bare probabilities must compute to choose as pragmeter does."""
    if weight == 1:
        return []
    return [f"pragmeter scores a candidate reading as P(implied) + {weight:g} × P(explicit) (the folder's explicit "
            f"weight, chosen on development choice splits: `explicit_weight` in config.json) and chooses the highest; "
            f"labels are the plain argmax.", ""]


def _label_list(settings) -> str:
    return ", ".join(f"`{label}`" for label in settings.labels)


def adapter_card(name: str, settings, source=None) -> str:
    """Card of an interpreter written as a peft LoRA adapter (:func:`pragmeter.interpreter.adapter.export_adapter`): how
    to open it with peft and with pragmeter, its labels, and the card of the shipped folder it came from."""
    text, source_metadata = source_card(source)
    metadata = _carried_front_matter(name, settings, source_metadata, "peft")
    base = base_model_id(settings.base_encoder) or settings.base_encoder
    labels = _label_list(settings)
    lines = [
        f"# {_title(name)} (peft LoRA adapter)", "",
        f"pragmeter's interpreter as a LoRA adapter over `{base}`: premise = a context and the quoted utterance, "
        f"hypothesis = a candidate reading; labels {labels}; inputs truncated at {settings.max_length} tokens. "
        f"`config.json` builds the base classification model (its labels); the adapter holds the encoder's low-rank "
        f"changes, the changed biases and layer norms, and the classifier.", "",
        "```python", "import torch",
        "from peft import PeftModel",
        "from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer", "",
        f"base = AutoModelForSequenceClassification.from_pretrained(\"{base}\", "
        f"config=AutoConfig.from_pretrained(\"FOLDER\"))",
        "model = PeftModel.from_pretrained(base, \"FOLDER\").merge_and_unload().eval()",
        f"tokenizer = AutoTokenizer.from_pretrained(\"{base}\")",
        f"inputs = tokenizer(premises, hypotheses, truncation=True, max_length={settings.max_length}, "
        f"padding=True, return_tensors=\"pt\")",
        "with torch.no_grad():",
        "    probabilities = model(**inputs).logits.softmax(-1)  # columns as the labels above", "",
    ]
    return _derived_card(metadata, lines, text, settings.explicit_weight)


def _derived_card(metadata: str, lines: list[str], source_text: str, explicit_weight: float = 1) -> str:
    """A card written from another interpreter folder: ``lines`` (title, what it is, a code block left open) closed
    with pragmeter's way to open it, the score it ranks readings by where the explicit weight is not 1, then the card
    of the folder it came from, when it had one."""
    lines = [*lines, "from pragmeter import Interpreter", "",
             "Interpreter.load(\"FOLDER\").rank(context, utterance, readings)", "```", "",
             *explicit_weight_lines(explicit_weight)]
    if source_text:
        lines += ["## The card of the folder it was written from", "", source_text, ""]
    return metadata + "\n".join(lines)
