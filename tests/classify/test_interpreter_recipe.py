"""The interpreter's multi-source recipe: how each set's labels meet INLI's four, Circa's and GRICE's development
splits kept out of training, choice items trained with the loss over their readings' scores, and a stage that starts
from another run's weights refusing weights that do not fit."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from pragmeter.classify.job import start_from
from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.examples import ChoiceExamples, Examples
from pragmeter.classify.recipes.interpreter import (CIRCA_DEV_ITEMS, FLUTE_DEV_ITEMS, GRICE_DEV_TURNS, YesNoItem,
                                                    build, choice_examples, circa_examples, circa_items,
                                                    flute_items, general_examples, general_sets, grice_items,
                                                    grice_premise, training_files)
from pragmeter.classify.training import (FineTuneConfig, Trainer, choice_loss, fingerprint, joined_columns, joined_rows,
                                         pair_loss, pair_targets, run_identity)
from pragmeter.errors import InvalidParameter
from pragmeter.errors import PragmeterError

INLI_LABELS = {"implied", "explicit", "neutral", "contradiction"}


def test_general_sets_meet_inli_labels(data_root):
    examples = general_examples(cap=40, root=data_root)
    by_source = {}
    for source, label in zip(examples.groups, examples.labels):
        by_source.setdefault(source, Counter())[label] += 1
    assert set(examples.labels) <= INLI_LABELS
    assert set(by_source) == {"taxinli", "esnli", "cad_nli", "sick", "conjnli", "med", "help", "monli", "scone",
                              "imppres_presupposition", "imppres_implicature"}  # DNC's 2-way "no" is not read
    assert by_source["imppres_implicature"]["implied"] > 0 and "explicit" not in by_source["imppres_implicature"]
    assert by_source["taxinli"]["explicit"] > 0 and "implied" not in by_source["taxinli"]
    assert sum(by_source["esnli"].values()) == 80  # the cap is per split: dev and test
    assert general_examples(cap=40, root=data_root).texts == examples.texts  # seeded
    with pytest.raises(PragmeterError, match="unknown family"):
        general_examples(("nli", "sarcasm"), root=data_root)


def test_a_general_set_takes_its_own_cap(data_root):
    """set_caps: the named set (per split) at its own cap, the same seeded sample a plain cap of that size draws, the
    other sets at ``cap``; a name the families do not read, a negative cap, and caps without the general source in the
    pragmatic stage are refused; the recipe records the caps only when given, so earlier runs keep their digest."""
    examples = general_examples(("nli",), cap=40, root=data_root, set_caps={"taxinli": 120, "esnli": 10})
    counts = Counter(examples.groups)
    assert counts == {"taxinli": 120, "esnli": 20, "cad_nli": 40, "sick": 40, "conjnli": 40}
    plain = general_examples(("nli",), cap=120, root=data_root)
    assert [t for t, g in zip(examples.texts, examples.groups) if g == "taxinli"] == \
        [t for t, g in zip(plain.texts, plain.groups) if g == "taxinli"]
    assert general_sets(("nli", "presupposition")) == ["taxinli", "esnli", "cad_nli", "sick", "conjnli", "imppres"]
    with pytest.raises(PragmeterError, match="a cap for 'med', which the families nli do not read"):
        general_examples(("nli",), cap=5, root=data_root, set_caps={"med": 10})
    with pytest.raises(PragmeterError, match="the cap for 'sick' must be a whole number"):
        general_examples(("nli",), cap=5, root=data_root, set_caps={"sick": -1})
    with pytest.raises(PragmeterError, match="set caps size the general sets mixed into the pragmatic stage"):
        build("pragmatic", families=("nli",), sources=("circa",), cap=5, inli_cap=10, root=data_root,
              set_caps={"sick": 10})
    recipe = build("pragmatic", families=("nli",), sources=("general",), cap=5, inli_cap=10, root=data_root,
                   set_caps={"taxinli": 30})
    assert recipe.arguments["set_caps"] == {"taxinli": 30} and Counter(recipe.train.groups)["taxinli"] == 30
    assert "set_caps" not in build("pragmatic", families=("nli",), sources=("general",), cap=5, inli_cap=10,
                                   root=data_root).arguments
    assert build("general", families=("nli",), cap=5, root=data_root, set_caps={"sick": 7}).arguments["set_caps"] \
        == {"sick": 7}


def test_general_entailment_can_be_read_as_implied_or_explicit(data_root):
    """--nli-entailment entailed: the same pairs, each general NLI entailment labelled ``entailed`` instead of
    ``explicit``; IMPPRES's implicatures stay ``implied``; the recipe records the choice only when it is not the
    default, so earlier runs keep their arguments."""
    explicit = general_examples(cap=40, root=data_root)
    entailed = general_examples(cap=40, root=data_root, entailment="entailed")
    assert (entailed.texts, entailed.pairs) == (explicit.texts, explicit.pairs)
    changed = {(a, b) for a, b in zip(explicit.labels, entailed.labels) if a != b}
    assert changed == {("explicit", "entailed")}
    assert "explicit" not in entailed.labels
    assert {label for label, group in zip(entailed.labels, entailed.groups) if group == "imppres_implicature"} >= \
        {"implied"}
    with pytest.raises(PragmeterError, match="unknown reading of NLI entailment"):
        general_examples(("nli",), cap=5, root=data_root, entailment="implied")
    recipe = build("pragmatic", families=("nli",), sources=("general",), cap=5, inli_cap=10, root=data_root,
                   nli_entailment="entailed")
    assert recipe.arguments["nli_entailment"] == "entailed" and "entailed" in recipe.train.labels
    assert "nli_entailment" not in build("pragmatic", families=("nli",), sources=("general",), cap=5, inli_cap=10,
                                         root=data_root).arguments


def test_an_entailed_pair_s_loss_reads_implied_and_explicit_as_one_class():
    labels = ["implied", "explicit", "neutral", "contradiction"]
    pairs = Examples(["p"] * 3, ["entailed", "neutral", "implied"], ["h"] * 3,
                     soft=[(0.1, 0.6, 0.2, 0.1), (0.3, 0.3, 0.3, 0.1), (0.7, 0.1, 0.1, 0.1)])
    joined, columns = joined_rows(pairs, labels), joined_columns(labels)
    assert joined.tolist() == [True, False, False] and columns == [0, 1]
    targets = pair_targets(pairs, labels, 0.5)
    assert targets[0].tolist() == pytest.approx([0.3, 0.55, 0.1, 0.05])  # the label's half spread over both
    logits = torch.tensor([[2.0, -1.0, 0.5, 0.0], [0.0, 1.0, 2.0, 0.0], [1.0, 0.0, 0.0, -1.0]], requires_grad=True)
    loss = pair_loss(logits, targets, joined, columns)
    log_p = torch.log_softmax(logits, dim=-1)
    first = -(0.85 * torch.logsumexp(log_p[0, :2], 0) + 0.1 * log_p[0, 2] + 0.05 * log_p[0, 3])
    rest = torch.nn.functional.cross_entropy(logits[1:], targets[1:], reduction="sum")
    assert loss.item() == pytest.approx(((first + rest) / 3).item(), rel=1e-6)
    swapped = logits.detach().clone()
    swapped[0, :2] = swapped[0, :2].flip(0)  # implied and explicit exchanged on the entailed pair: the same loss
    assert pair_loss(swapped, targets, joined, columns).item() == pytest.approx(loss.item(), rel=1e-6)
    loss.backward()
    # descent moves the entailed pair's implied and explicit logits together (in proportion to their probabilities)
    probabilities = torch.softmax(logits.detach()[0], dim=-1)
    assert (logits.grad[0, 0] / logits.grad[0, 1]).item() == pytest.approx((probabilities[0] / probabilities[1]).item(),
                                                                             rel=1e-5)
    # without an entailed pair, targets and loss are what they always were
    plain = Examples(["p", "p"], ["explicit", "neutral"], ["h", "h"])
    assert pair_targets(plain, labels).tolist() == [1, 2]
    assert pair_loss(logits[:2], torch.tensor([1, 2]), joined_rows(plain, labels), columns).item() == \
        pytest.approx(torch.nn.functional.cross_entropy(logits[:2], torch.tensor([1, 2])).item())
    # a 3-way model has the label itself; a label the model lacks is refused by name
    assert pair_targets(Examples(["p"], ["entailed"], ["h"]), ["entailed", "neutral", "contradiction"]).tolist() == [0]
    with pytest.raises(InvalidParameter, match="'said'"):
        pair_targets(Examples(["p"], ["said"], ["h"]), labels)


def test_training_on_entailed_pairs_raises_their_meant_probability(tmp_path):
    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu", seed=0)
    texts = ["A man is playing a guitar on stage.", "Two dogs run across a field.", "A woman is slicing bread.",
             "Children are swimming in a lake."]
    hypotheses = ["A person is making music.", "Animals are outside.", "Someone is preparing food.",
                  "Kids are in the water."]
    train = Examples(texts * 2, ["entailed"] * 4 + ["contradiction"] * 4,
                     hypotheses + ["Nobody is here.", "The field is empty.", "The kitchen is empty.",
                                   "The lake is empty."])
    val = Examples(texts, ["explicit"] * 4, hypotheses)
    meant = lambda: classifier.probabilities(texts, hypotheses)[:, :2].sum(axis=1)  # noqa: E731
    before = meant()
    config = FineTuneConfig(epochs=8, batch_size=4, lr=5e-4, max_length=32, select_on="accuracy", warmup_ratio=0.0)
    Trainer(classifier, config, tmp_path / "work", progress=False).fit(train, val)
    after = meant()
    assert after.mean() > before.mean() + 0.2 and (after > before).all()


def test_circa_development_split_never_trains(data_root):
    train, dev = circa_items(data_root)
    assert len({item.premise for item in dev}) == CIRCA_DEV_ITEMS
    assert not {item.premise for item in train} & {item.premise for item in dev}
    assert {item.label for item in train + dev} == {"yes", "no"}
    data = build("pragmatic", sources=("circa",), circa_cap=50, root=data_root)
    assert not set(data.train.texts) & {item.premise for item in dev}
    assert set(data.train.labels) <= INLI_LABELS and data.val.labels and data.arguments["stage"] == "pragmatic"


def test_each_circa_item_gives_its_statement_and_both_bare_answers():
    items = [YesNoItem('Do you like pizza? "I eat it every day."', "You like pizza.", "yes"),
             YesNoItem('Are you free tonight? "I have to work."', "You are free tonight.", "no")]
    examples = circa_examples(items, cap=None)
    assert list(zip(examples.pairs, examples.labels)) == [
        ("You like pizza.", "implied"), ("yes", "implied"), ("no", "contradiction"),
        ("You are free tonight.", "contradiction"), ("no", "implied"), ("yes", "contradiction")]


@pytest.fixture(scope="module")
def classifier():
    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
    return TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu")


def test_a_stage_starts_from_a_fitting_run_only(classifier, tmp_path):
    source = tmp_path / "run"
    with torch.no_grad():
        classifier.model.classifier.bias.fill_(0.25)
    classifier.save(source, card="test")
    with torch.no_grad():
        classifier.model.classifier.bias.zero_()
    start_from(classifier, source)
    assert torch.allclose(classifier.model.classifier.bias, torch.full((4,), 0.25))

    from safetensors.torch import load_file, save_file

    weights = load_file(source / "model.safetensors")
    weights["classifier.bias"] = torch.tensor([float("nan"), 0.0, 0.0, 0.0])
    save_file(weights, source / "model.safetensors")
    with pytest.raises(PragmeterError, match="NaN or infinity"):
        start_from(classifier, source)
    weights["classifier.bias"] = torch.zeros(3)
    save_file(weights, source / "model.safetensors")
    with pytest.raises(PragmeterError, match="not those of a all-MiniLM-L6-v2 classifier"):
        start_from(classifier, source)
    import json

    config = json.loads((source / "config.json").read_text())
    config["pragmeter"]["labels"] = ["entailed", "neutral", "contradiction", "other"]
    (source / "config.json").write_text(json.dumps(config))
    with pytest.raises(PragmeterError, match="differ from the recipe's"):
        start_from(classifier, source)


def test_grice_development_dialogues_never_train(data_root):
    train, dev = grice_items(data_root)
    dialogue = lambda turn: turn.id.rsplit("-", 1)[0]  # noqa: E731
    assert len(dev) == GRICE_DEV_TURNS and not {dialogue(t) for t in train} & {dialogue(t) for t in dev}
    assert len(train) > 10_000
    choice = choice_examples(("grice", "circa"), grice_cap=30, circa_cap=20, root=data_root)
    assert Counter(choice.groups) == {"grice": 30, "circa_choice": 20}
    assert set(choice.premises) & {grice_premise(t) for t in dev} == set()
    first = next(t for t in train if t.history)
    assert grice_premise(first).endswith(f'{first.question}? "{first.answer}"')
    assert grice_premise(first).startswith(f'"{first.history[0][0]}" "{first.history[0][1]}" ')
    assert all(len(r) == 4 for r, g in zip(choice.readings, choice.groups) if g == "grice")
    assert all(r == ("yes", "no") for r, g in zip(choice.readings, choice.groups) if g == "circa_choice")
    data = build("pragmatic", sources=(), choice=("grice",), grice_cap=10, root=data_root)
    assert len(data.choice) == 10 and data.arguments["choice"] == ["grice"] and "10 choice items" in data.description
    assert any(path.startswith("grice/") for path in data.data_files)
    assert any(path.startswith("grice/") for path in training_files("pragmatic", choice=("grice",)))
    with pytest.raises(PragmeterError, match="unknown choice source"):
        choice_examples(("drinq",), root=data_root)


def test_flute_development_sentences_never_train_and_the_restated_figure_is_a_reading(data_root):
    train, dev = flute_items(data_root)
    assert len({item.figure for item in dev}) == FLUTE_DEV_ITEMS and len(train) > 1000
    assert not {item.figure for item in train} & {item.figure for item in dev}
    item = dev[0]
    assert item.readings == (item.literal, item.opposite, item.figure) and item.premise == f'"{item.figure}"'
    choice = choice_examples(("flute",), flute_cap=25, root=data_root)
    assert Counter(choice.groups) == {"flute_choice": 25} and set(choice.golds) == {0}
    assert not set(choice.premises) & {i.premise for i in dev}
    files = training_files("pragmatic", choice=("flute",))
    assert "flute/metaphorNLI/metaphor_train.jsonl" in files and not any("testgolddata" in f for f in files)
    assert not any("Sarcasm" in f for f in files)
    data = build("pragmatic", sources=(), choice=("flute",), flute_cap=7, root=data_root)
    assert len(data.choice) == 7 and data.arguments["flute_cap"] == 7
    assert "flute/idiomNLI/idiom_train.jsonl" in data.data_files


def test_sarcasm_development_tweets_never_train_and_the_restated_tweet_is_a_reading(data_root):
    from pragmeter.classify.recipes.interpreter import SARCASM_DEV_TWEETS, SARCASM_FILES, sarcasm_items
    from pragmeter.text import normalise

    train, dev = sarcasm_items(data_root)
    assert len(dev) == SARCASM_DEV_TWEETS and len(train) > 4000
    keys = [normalise(item.tweet) for item in train + dev]
    assert len(keys) == len(set(keys))  # one item per tweet, a tweet in two sets counted once
    assert all(normalise(item.meaning) != normalise(item.tweet) for item in train + dev)
    item = dev[0]
    assert item.readings == (item.meaning, item.tweet) and item.premise == f'"{item.tweet}"'
    from pragmeter.datasets.pairs import isarcasmeval

    source = isarcasmeval(data_root, cap=None)
    task_c = {normalise(tweet) for (tweet, _), where in zip(source.pairs, source.origins)
              if where.startswith("isarcasmeval/test/")}
    assert task_c and not task_c & set(keys)  # iSarcasmEval's test pairs never train nor select
    choice = choice_examples(("sarcasm",), sarcasm_cap=25, root=data_root)
    assert Counter(choice.groups) == {"sarcasm_choice": 25} and set(choice.golds) == {0}
    assert not set(choice.premises) & {i.premise for i in dev}
    assert training_files("pragmatic", choice=("sarcasm",)) == list(SARCASM_FILES)
    data = build("pragmatic", sources=(), choice=("sarcasm",), sarcasm_cap=7, root=data_root)
    assert len(data.choice) == 7 and data.arguments["sarcasm_cap"] == 7
    assert set(SARCASM_FILES) <= set(data.data_files)


def test_figqa_validation_metaphors_never_train_and_the_restated_metaphor_is_a_reading(data_root):
    from pragmeter.classify.recipes.interpreter import FIGQA_TRAIN, figqa_items
    from pragmeter.datasets.figqa import load_figqa
    from pragmeter.text import normalise

    train, dev = figqa_items(data_root)
    benchmark = load_figqa("dev", data_root)
    assert {normalise(i.figure) for i in dev} == {normalise(i.metaphor) for i in benchmark}  # the benchmark's items
    assert len(train) > 7900 and not {normalise(i.figure) for i in train} & {normalise(i.figure) for i in dev}
    first = next(i for i in benchmark if i.metaphor == dev[0].figure)
    assert dev[0].literal == first.endings[first.answer] and dev[0].opposite == first.endings[1 - first.answer]
    assert dev[0].readings == (dev[0].literal, dev[0].opposite, dev[0].figure)
    assert dev[0].premise == f'"{dev[0].figure}"'
    choice = choice_examples(("figqa",), figqa_cap=30, root=data_root)
    assert Counter(choice.groups) == {"figqa_choice": 30} and set(choice.golds) == {0}
    assert all(len(r) == 3 for r in choice.readings) and not set(choice.premises) & {i.premise for i in dev}
    assert training_files("pragmatic", choice=("figqa",)) == [FIGQA_TRAIN] == ["figqa/data/filtered/train_xl.csv"]
    data = build("pragmatic", sources=(), choice=("figqa",), figqa_cap=5, root=data_root)
    assert len(data.choice) == 5 and data.arguments["figqa_cap"] == 5 and FIGQA_TRAIN in data.data_files
    assert "figqa/data/filtered/dev.csv" not in data.data_files


def test_impli_development_sentences_never_train_and_each_item_has_a_rewrite_to_reject(data_root):
    from pragmeter.classify.recipes.interpreter import IMPLI_DEV_ITEMS, impli_items
    from pragmeter.datasets.pairs.impli import HARD_NEGATIVES, NAME
    from pragmeter.text import normalise

    train, dev = impli_items(data_root)
    assert len(dev) == IMPLI_DEV_ITEMS and len(train) > 2500
    assert not {normalise(i.figure) for i in train} & {normalise(i.figure) for i in dev}
    assert dev == impli_items(data_root)[1]  # the same seeded split every time
    for item in train + dev:  # three different readings, the meant one first, the sentence itself last
        assert len({normalise(r) for r in item.readings}) == 3 and item.readings[2] == item.figure
    rung = next(i for i in train + dev if i.figure == "That rings a bell.")  # MAGPIE's row and its adversarial one
    assert rung.literal == "That sounds familiar." and rung.opposite == "That rings a church bell."
    choice = choice_examples(("impli",), impli_cap=20, root=data_root)
    assert Counter(choice.groups) == {"impli_choice": 20} and set(choice.golds) == {0}
    assert not set(choice.premises) & {i.premise for i in dev}
    assert {f"{NAME}/{f}" for f in HARD_NEGATIVES} <= set(training_files("pragmatic", choice=("impli",)))
    data = build("pragmatic", sources=(), choice=("impli",), impli_cap=4, root=data_root)
    assert len(data.choice) == 4 and data.arguments["impli_cap"] == 4
    assert not any(f.startswith("impli/idioms/lit_context") for f in data.data_files)  # literal contexts: unread


def test_a_seeded_share_of_figurative_items_is_said_in_a_frame_worded_apart_from_the_development_frames(data_root):
    from pragmeter.classify.recipes.interpreter import (DEV_FRAMES, DEV_SPEAKERS, MEANT_FIRST_DEV, TRAIN_FRAMES,
                                                        TRAIN_SPEAKERS, figqa_items, figurative_evaluator, impli_items)
    from pragmeter.interpreter.model import premise as quoted

    plain = choice_examples(("figqa", "impli"), figqa_cap=40, impli_cap=40, root=data_root)
    framed = choice_examples(("figqa", "impli"), figqa_cap=40, impli_cap=40, framed=0.5, root=data_root)
    assert framed == choice_examples(("figqa", "impli"), figqa_cap=40, impli_cap=40, framed=0.5, root=data_root)
    counts = Counter(framed.groups)
    assert set(counts) == {"figqa_choice", "figqa_framed_choice", "impli_choice", "impli_framed_choice"}
    assert all(10 <= counts[f"{name}_framed_choice"] <= 30 for name in ("figqa", "impli"))
    assert framed.readings == plain.readings and framed.golds == plain.golds  # the same items, the same readings
    train_names = {name for name, _ in TRAIN_SPEAKERS}
    for premise, group, was, readings in zip(framed.premises, framed.groups, plain.premises, framed.readings):
        if "framed" in group:  # a speaker's words: the frame, then the sentence (the restated reading) quoted
            assert premise.endswith(quoted("", readings[2])) and premise != was
            assert premise.split()[0].rstrip(",") in train_names | {"When", "During", "Someone"}
        else:
            assert premise == was == quoted("", readings[2])  # the sentence alone, quoted
    assert not set(TRAIN_FRAMES) & set(DEV_FRAMES) and not set(TRAIN_SPEAKERS) & set(DEV_SPEAKERS)
    assert choice_examples(("figqa",), figqa_cap=5, framed=0.0, root=data_root).groups == ["figqa_choice"] * 5
    with pytest.raises(PragmeterError, match="framed must be a share between 0 and 1"):
        choice_examples(("figqa",), figqa_cap=5, framed=1.5, root=data_root)
    # the share is part of the recipe (and so of a run's resume key) only when it is set
    assert build("pragmatic", sources=(), choice=("figqa",), figqa_cap=4, framed=0.5,
                 root=data_root).arguments["framed"] == 0.5
    assert "framed" not in build("pragmatic", sources=(), choice=("figqa",), figqa_cap=4, root=data_root).arguments
    # the framed development splits: the same items as the bare ones, each said in a development frame
    for name, reader in (("figqa_dev_framed", figqa_items), ("impli_dev_framed", impli_items)):
        assert MEANT_FIRST_DEV[name][0] is reader and MEANT_FIRST_DEV[name][3] is True
        dev = reader(data_root)[1][:6]
        premises = figurative_evaluator(dev, name, framed=True).premises
        assert all(p.split()[0].rstrip(",") in {n for n, _ in DEV_SPEAKERS} | {"Asked"} for p in premises)
        assert all(p.endswith(quoted("", item.said)) for p, item in zip(premises, dev))
        assert figurative_evaluator(dev, name).premises == [item.premise for item in dev]


def test_a_seeded_share_of_restated_readings_is_a_near_copy_reworded_apart_from_the_development_rewording(data_root):
    from pragmeter.classify.recipes.interpreter import (DEV_SWAPS, MEANT_FIRST_DEV, dev_reworded, figqa_items,
                                                        figurative_evaluator, impli_items, train_reworded)

    plain = choice_examples(("figqa", "impli"), figqa_cap=40, impli_cap=40, framed=0.5, root=data_root)
    near = choice_examples(("figqa", "impli"), figqa_cap=40, impli_cap=40, framed=0.5, reworded=0.5, root=data_root)
    assert near == choice_examples(("figqa", "impli"), figqa_cap=40, impli_cap=40, framed=0.5, reworded=0.5,
                                   root=data_root)
    assert near.premises == plain.premises and near.golds == plain.golds  # the same items, said the same way
    counts = Counter("reworded" in group for group in near.groups)
    assert 20 <= counts[True] <= 60 and counts[True] + counts[False] == 80
    for group, readings, was in zip(near.groups, near.readings, plain.readings):
        assert readings[:-1] == was[:-1]  # the meant reading and the other distractor are kept
        if "reworded" in group:
            restated = readings[-1]
            assert restated != was[-1] and restated.strip() and group.endswith("_reworded_choice")
            # a near copy: at most one word changed or added, never a determiner or possessive swapped
            before, after = was[-1].split(" "), restated.split(" ")
            changed = [(a, b) for a, b in zip(before, after) if a != b]
            assert len(after) - len(before) in (0, 1) and (len(changed) <= 1 or len(after) > len(before))
            assert not any(a.lower().strip('.,"') in DEV_SWAPS and b.lower().strip('.,"') in DEV_SWAPS.values()
                           for a, b in changed)
        else:
            assert readings == was
    # the rewordings on their own
    assert train_reworded("This town is a chimney.", "k") != "This town is a chimney."
    assert train_reworded("Why not?", "k") == "Why not"  # nothing else applies: the final punctuation changes
    assert dev_reworded("This town is a chimney.") == "The town is a chimney."
    assert dev_reworded('"Our baby is a lovebird\'s egg."') == '"Their baby is a lovebird\'s egg."'
    assert dev_reworded("Nothing to swap here.") == "Nothing to swap here."
    with pytest.raises(PragmeterError, match="reworded must be a share between 0 and 1"):
        choice_examples(("figqa",), figqa_cap=5, reworded=-0.1, root=data_root)
    assert build("pragmatic", sources=(), choice=("figqa",), figqa_cap=4, reworded=0.5,
                 root=data_root).arguments["reworded"] == 0.5
    assert "reworded" not in build("pragmatic", sources=(), choice=("figqa",), figqa_cap=4,
                                   root=data_root).arguments
    # the reworded development splits: the framed splits' premises, the restated reading swapped
    for name, framed_name, reader in (("figqa_dev_framed_reworded", "figqa_dev_framed", figqa_items),
                                      ("impli_dev_framed_reworded", "impli_dev_framed", impli_items)):
        assert MEANT_FIRST_DEV[name][0] is reader and MEANT_FIRST_DEV[name][3:] == (True, True)
        dev = reader(data_root)[1][:6]
        evaluator = figurative_evaluator(dev, name, framed=True, reworded=True)
        assert evaluator.premises == figurative_evaluator(dev, framed_name, framed=True).premises  # the same frames
        assert [r[-1] for r in evaluator.readings] == [dev_reworded(item.said) for item in dev]
        assert any(r[-1] != item.said for r, item in zip(evaluator.readings, dev))


def test_the_choice_loss_is_a_softmax_over_each_items_reading_scores():
    meant = [0, 1]  # implied, explicit
    logits = torch.tensor([[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0],  # item 1: reading 0 meant, reading 1 neutral
                           [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],  # item 2: 3 readings
                          requires_grad=True)
    loss = choice_loss(logits, [2, 3], [0, 1], meant)
    score = torch.log(torch.softmax(logits, dim=-1)[:, meant].sum(dim=-1))
    first = -torch.log_softmax(score[:2], dim=0)[0]
    second = -torch.log_softmax(score[2:], dim=0)[1]
    assert loss.item() == pytest.approx(((first + second) / 2).item(), rel=1e-6)
    loss.backward()
    # descent raises the meant reading's implied logit and lowers the other reading's (its neutral one rises)
    assert logits.grad[0, 0] < 0 and logits.grad[1, 0] > 0 and logits.grad[1, 2] < 0
    with pytest.raises(ValueError, match="readings with the meant one at 2"):
        ChoiceExamples(["p"], [("a", "b")], [2])


def test_the_choice_loss_can_train_a_weighted_score_and_the_trained_folder_ranks_by_it(tmp_path):
    """weights: a reading's score is log(P(implied) + w P(explicit)); w = 1 is the plain loss, w = 0 reads P(implied)
    alone. Trained with choice_explicit_weight, the classifier's settings (what its folder records) carry the weight;
    at 1 the run's digest is what it was before the setting existed; a weight outside 0..1, or one for a model
    without an explicit label, is refused."""
    meant = [0, 1]
    logits = torch.tensor([[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert choice_loss(logits, [3], [1], meant, [1.0, 1.0]).item() == pytest.approx(
        choice_loss(logits, [3], [1], meant).item(), abs=1e-7)
    probabilities = torch.softmax(logits, dim=-1)
    for w in (0.25, 0.0):
        score = torch.log(probabilities[:, 0] + w * probabilities[:, 1])
        expected = -torch.log_softmax(score, dim=0)[1]
        assert choice_loss(logits, [3], [1], meant, [1.0, w]).item() == pytest.approx(expected.item(), rel=1e-6)
    # the face-value reading (P(explicit) high) wins the plain score, the implied one wins at w = 0.25
    assert choice_loss(logits, [3], [1], meant, [1.0, 0.25]) < choice_loss(logits, [3], [1], meant)

    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu", seed=0)
    choice = ChoiceExamples(['Ann: "Coffee?" Bob: "It would keep me awake."'] * 2,
                            [("Bob declines.", "Bob accepts.")] * 2, [0, 0])
    train = Examples(["It rains."] * 2, ["explicit", "neutral"], ["It is raining.", "It is Monday."])
    config = FineTuneConfig(epochs=1, batch_size=8, max_length=32, select_on="accuracy", choice_explicit_weight=0.25)
    Trainer(classifier, config, tmp_path / "work", progress=False).fit(train, train, choice=choice)
    assert classifier.settings.explicit_weight == 0.25
    plain = FineTuneConfig(epochs=1, batch_size=8, max_length=32, select_on="accuracy")
    assert "choice_explicit_weight" not in run_identity(plain, classifier, train, train, choice)["settings"]
    assert run_identity(config, classifier, train, train, choice)["settings"]["choice_explicit_weight"] == 0.25
    with pytest.raises(InvalidParameter, match="choice_explicit_weight"):
        FineTuneConfig(choice_explicit_weight=1.5)
    three = TextClassifier.from_encoder("all-MiniLM-L6-v2", ClassifierSettings(
        labels=["entailed", "neutral", "contradiction"], base_encoder="all-MiniLM-L6-v2", max_length=32,
        input_kind="pair"), "cpu", seed=0)
    with pytest.raises(InvalidParameter, match="weighs P\\(explicit\\), which a model with labels"):
        Trainer(three, config, tmp_path / "three", progress=False).fit(
            Examples(["It rains."], ["entailed"], ["Water falls."]), Examples(["It rains."], ["entailed"], ["Water falls."]),
            choice=choice)


def test_training_on_choice_items_lowers_their_loss_and_keys_the_resume(tmp_path):
    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu", seed=0)
    animals = ["cat", "dog", "bird", "fish", "horse", "cow", "sheep", "goat"]
    choice = ChoiceExamples([f'Where is the {a}? "Look under the table."' for a in animals],
                            [(f"The {a} is under the table.", f"The {a} is on the roof.") for a in animals],
                            [0] * len(animals))
    train = Examples(["It rains."] * 4, ["explicit", "neutral", "explicit", "contradiction"],
                     ["It is raining.", "It is Monday.", "Water falls.", "It is dry."])
    config = FineTuneConfig(epochs=3, batch_size=8, lr=2e-4, max_length=32, select_on="accuracy", warmup_ratio=0.0)
    result = Trainer(classifier, config, tmp_path / "work", progress=False).fit(train, train, choice=choice)
    losses = [row["choice_loss"] for row in result.history]
    assert losses[-1] < losses[0] and all(row["choice_items"] == 8 for row in result.history)
    assert fingerprint(config, classifier, train, train, choice) != fingerprint(config, classifier, train, train)
    assert fingerprint(config, classifier, train, train, ChoiceExamples([], [], [])) == \
        fingerprint(config, classifier, train, train)


def test_the_card_says_which_sets_were_trained_as_choice_items():
    from pragmeter.classify.card import multi_source_data

    text = multi_source_data({"stage": "pragmatic", "sources": ["circa"], "circa_cap": 50, "choice": ["grice", "circa"],
                              "grice_cap": 10})
    assert "GRICE's dialogue turns (10 of them, four readings each" in text
    assert "and Circa's yes/no exchanges (readings yes and no)" in text
    assert "choice items" not in multi_source_data({"stage": "pragmatic", "sources": ["circa"]})
    figurative = multi_source_data({"stage": "pragmatic", "sources": ["circa"], "choice": ["grice", "circa", "flute"],
                                    "grice_cap": 10, "flute_cap": 7})
    assert ", Circa's yes/no exchanges (readings yes and no) and FLUTE's figurative sentences (7 of them" in figurative
    assert "no licence stated upstream" in figurative
    sarcastic = multi_source_data({"stage": "pragmatic", "sources": [], "choice": ["flute", "sarcasm"],
                                   "flute_cap": 7, "sarcasm_cap": 9})
    assert "and sarcastic tweets (9 of them, each alone with two readings" in sarcastic and "MIT" in sarcastic
    metaphors = multi_source_data({"stage": "pragmatic", "sources": [], "choice": ["figqa"], "figqa_cap": 11})
    assert "Fig-QA's creative metaphors (11 of them from its train_xl split" in metaphors
    idioms = multi_source_data({"stage": "pragmatic", "sources": [], "choice": ["figqa", "impli"], "impli_cap": 5})
    assert "and IMPLI's idiomatic and metaphoric sentences (5 of them" in idioms and "Apache-2.0" in idioms
    situated = multi_source_data({"stage": "pragmatic", "sources": [], "choice": ["figqa"], "figqa_cap": 11,
                                  "framed": 0.5, "reworded": 0.25})
    assert "a seeded 50% of the figurative and sarcastic items said in a frame" in situated
    assert "a seeded 25% of them with the sentence restated as a near copy" in situated
    assert "near copy" not in metaphors


def test_the_card_names_only_the_general_families_a_run_read():
    from pragmeter.classify.card import GENERAL_FAMILIES, multi_source_data
    from pragmeter.classify.recipes.interpreter import GENERAL

    assert set(GENERAL_FAMILIES) == set(GENERAL)  # a new family gets its name on the card
    nli = multi_source_data({"stage": "pragmatic", "sources": ["general"], "families": ["nli"], "cap": 3000})
    assert "general NLI sets (TaxiNLI, e-SNLI, CAD-NLI, SICK, ConjNLI; entailment read as explicit), a seeded sample " \
           "of at most 3,000 pairs per set and split" in nli
    uncapped = multi_source_data({"stage": "pragmatic", "sources": ["general"], "families": ["nli"], "cap": None})
    assert "entailment read as explicit), every pair" in uncapped
    assert "MED" not in nli and "IMPPRES" not in nli and "monotonicity" not in nli
    every = multi_source_data({"stage": "general"})  # a config that records no families read all of them
    assert "MED, HELP, MoNLI, ScoNe, IMPPRES" in every and "scalar implicatures as implied" in every
    with pytest.raises(PragmeterError, match="names at least one of nli, monotonicity, presupposition"):
        multi_source_data({"stage": "general", "families": []})


def test_the_card_says_non_commercial_only_where_a_file_read_is():
    from pragmeter.classify.card import multi_source_data
    from pragmeter.classify.recipes.interpreter import training_files

    recipe = {"stage": "general", "families": ["monotonicity"]}
    free = multi_source_data(recipe, training_files("general", ("monotonicity",)))
    assert free.endswith("Every file read is below with its licence.") and "non-commercial" not in free
    with_sick = multi_source_data({"stage": "general", "families": ["nli"]}, training_files("general", ("nli",)))
    assert "Non-commercial among them: CC BY-NC-SA 3.0" in with_sick and "for non-commercial use" in with_sick
    assert "recorded no list of the files" in multi_source_data(recipe)
