"""The committed situated implicatures: what the reader gives, what it refuses, and how the interpreter's recipe splits
and trains on them."""
import hashlib
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from pragmeter.datasets.written_situated import (FILE, GENERATED_DIR, KINDS, READINGS, load_written_situated,
                                                 prompt_digests)
from pragmeter.errors import DataError, PragmeterError


@pytest.fixture(scope="module")
def items():
    return load_written_situated()


def test_every_kind_is_there_with_four_distinct_readings_and_provenance(items):
    counts = Counter(item.kind for item in items)
    assert set(counts) == set(KINDS) and min(counts.values()) >= 40
    assert len({item.id for item in items}) == len(items)
    assert all(len(set(item.readings)) == 4 for item in items)
    frame = pd.read_parquet(GENERATED_DIR / FILE)
    assert frame["generator_model"].str.startswith("Claude (Anthropic) language model, 2026-12-07").all()
    assert frame["prompt_sha256"].str.fullmatch(r"[0-9a-f]{16}").all()
    report = json.loads((GENERATED_DIR / f"{FILE}.report.json").read_text())
    assert report["items"] == len(items)
    # the meant reading does not stand out by length: within 25% of the other readings' mean word count
    words = report["mean_words"]
    others = sum(words[r] for r in READINGS[1:]) / 3
    assert abs(words["meant"] - others) <= 0.25 * others


def test_each_item_records_the_prompt_it_was_written_from():
    """The prompt of a kind in a round is that round's committed template with the kind's substitutions; every item
    records the sha256 prefix of one of its kind's prompts, and every round gave items of every kind."""
    rounds = json.loads((GENERATED_DIR / "written_situated.prompt_kinds.json").read_text(encoding="utf-8"))
    frame = pd.read_parquet(GENERATED_DIR / FILE)
    digests = prompt_digests()
    assert list(digests) == list(rounds) and len(rounds) == 3
    for template_name, kinds in rounds.items():
        for kind in KINDS:
            prompt = (GENERATED_DIR / template_name).read_text(encoding="utf-8")
            for placeholder, value in kinds[kind].items():
                prompt = prompt.replace(placeholder, value)
            assert "{" not in prompt  # every placeholder filled
            digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]
            assert digests[template_name][kind] == digest
            assert (frame.loc[frame["kind"] == kind, "prompt_sha256"] == digest).sum() >= 40, (template_name, kind)
    assert set(frame["prompt_sha256"]) == {d for kinds in digests.values() for d in kinds.values()}


def test_prompt_digests_name_a_missing_template_or_an_unfilled_placeholder(tmp_path):
    (tmp_path / "written_situated.prompt_kinds.json").write_text(json.dumps({"t.md": {"relation": {"{N}": "6"}}}))
    with pytest.raises(DataError, match="template 't.md' is not beside it"):
        prompt_digests(tmp_path)
    (tmp_path / "t.md").write_text("Write {N} items of {KIND}.")
    with pytest.raises(DataError, match="t.md, kind 'relation': a placeholder is left unfilled"):
        prompt_digests(tmp_path)
    (tmp_path / "t.md").write_text("Write {N} items.")
    assert prompt_digests(tmp_path) == {"t.md": {"relation": hashlib.sha256(b"Write 6 items.").hexdigest()[:16]}}


def test_the_premise_is_the_situation_with_the_quoted_utterance(items):
    item = items[0]
    assert item.premise == f'{item.context} "{item.utterance}"' and item.said == item.utterance


@pytest.mark.parametrize("change, message", [
    (lambda f: f.drop(columns=["opposite"]), "missing column(s) opposite"),
    (lambda f: f.assign(kind=["relation", "sarcasm"]), "row 2, field 'kind': 'sarcasm' is none of"),
    (lambda f: f.assign(context=["A situation.", None]), "row 2, field 'context': expected a text, got an empty cell"),
    (lambda f: f.assign(id=["a-1", "a-1"]), "row 2, field 'id': 'a-1' occurs twice"),
    (lambda f: f.assign(utterance=[5, 6]), "row 1, field 'utterance': expected a text, got 5"),
    (lambda f: f.assign(unsupported=f["meant"]), "row 1, field 'readings': two of the four readings are the same"),
])
def test_a_malformed_row_is_refused_naming_file_row_and_field(tmp_path, change, message):
    frame = pd.DataFrame({"id": ["a-1", "a-2"], "kind": ["relation", "quantity"],
                          "context": ["Ana asks Bo about the film. Bo replies:",
                                      "Cy asks Di how the cake was. Di says:"],
                          "utterance": ["The seats were comfy.", "Some of it was edible."],
                          "meant": ["Bo did not enjoy the film.", "Di did not like most of the cake."],
                          "literal": ["Bo found the cinema seats comfortable.", "Di ate only a part of the cake."],
                          "opposite": ["Bo loved the film from start to end.", "Di thought the cake was delicious."],
                          "unsupported": ["Bo fell asleep before the film began.", "Di is allergic to cake."]})
    path = tmp_path / "items.parquet"
    assert len(load_written_situated(_write(frame, path))) == 2
    with pytest.raises(DataError, match=str(path).replace("(", r"\(")) as error:
        load_written_situated(_write(change(frame), path))
    assert message in str(error.value)
    with pytest.raises(DataError, match="cannot read the written situated items"):
        load_written_situated(tmp_path / "absent.parquet")


def _write(frame, path):
    frame.to_parquet(path, index=False)
    return path


def test_the_recipe_holds_out_twenty_of_each_kind_and_trains_on_the_rest(items, data_root):
    from pragmeter.classify.recipes.interpreter import (MEANT_FIRST_DEV, SITUATED_DEV_PER_KIND, SITUATED_DEV_PROMPTS,
                                                        build, choice_examples, situated_items)

    train, dev = situated_items()
    assert Counter(item.kind for item in dev) == {kind: SITUATED_DEV_PER_KIND for kind in KINDS}
    assert not {item.id for item in train} & {item.id for item in dev}
    assert len(train) + len(dev) == len(items) and situated_items()[1] == dev  # seeded
    # dev is drawn from the first two rounds' items only: items written later train and leave it as it was
    digests = prompt_digests()
    later = {digests["written_situated.prompt_round3.md"][kind] for kind in KINDS}
    assert not any(item.prompt_sha256 in later for item in dev)
    assert sum(item.prompt_sha256 in later for item in train) == sum(item.prompt_sha256 in later for item in items) > 0
    assert set(SITUATED_DEV_PROMPTS) == set(digests) - {"written_situated.prompt_round3.md"}
    chosen = choice_examples(("situated",), situated_cap=None)
    assert chosen.premises == [item.premise for item in train]
    assert all(len(readings) == 4 for readings in chosen.readings) and set(chosen.golds) == {0}
    assert {g for g in chosen.groups} == {f"situated_{kind}_choice" for kind in KINDS}
    assert len(choice_examples(("situated",), situated_cap=30).premises) == 30
    split = MEANT_FIRST_DEV["situated_dev"]
    assert split.chance == 0.25 and not split.framed
    evaluator = split.evaluator(dev, "situated_dev")
    assert evaluator.premises == [item.premise for item in dev]
    recipe = build("pragmatic", sources=(), inli_cap=10, choice=("situated",), situated_cap=50, root=data_root)
    assert recipe.arguments["situated_cap"] == 50 and len(recipe.choice) == 50
    assert "situated_cap" not in build("pragmatic", sources=(), inli_cap=10, choice=("grice",), grice_cap=5,
                                       root=data_root).arguments


def test_the_card_says_who_wrote_the_situated_items():
    from pragmeter.classify.card import multi_source_data

    text = multi_source_data({"stage": "pragmatic", "sources": [], "choice": ["situated"], "situated_cap": 300})
    assert "situated implicatures written for pragmeter (300 of them, each" in text
    assert "written by the Claude (Anthropic) language model" in text
    named = multi_source_data({"stage": "pragmatic", "sources": [], "choice": ["situated"], "situated_cap": 300,
                               "situated_prompts": ["written_situated.prompt.md"]})
    assert "(300 of them from the writing runs of written_situated.prompt.md, each" in named


def test_the_items_of_chosen_writing_runs_train_and_dev_stays_as_it_was(items, data_root):
    from pragmeter.classify.recipes.interpreter import SITUATED_DEV_PROMPTS, build, choice_examples, situated_items

    digests = prompt_digests()
    train, dev = situated_items()
    first_two, same_dev = situated_items(prompts=SITUATED_DEV_PROMPTS)
    assert same_dev == dev
    written = {template: set(digests[template].values()) for template in digests}
    early = written[SITUATED_DEV_PROMPTS[0]] | written[SITUATED_DEV_PROMPTS[1]]
    assert first_two == [item for item in train if item.prompt_sha256 in early]  # file order kept
    assert 0 < len(first_two) < len(train)
    third, _ = situated_items(prompts=("written_situated.prompt_round3.md",))
    assert len(first_two) + len(third) == len(train)
    chosen = choice_examples(("situated",), situated_cap=None, situated_prompts=SITUATED_DEV_PROMPTS)
    assert chosen.premises == [item.premise for item in first_two]
    recipe = build("pragmatic", sources=(), inli_cap=10, choice=("situated",), situated_cap=None, root=data_root,
                   situated_prompts=tuple(reversed(SITUATED_DEV_PROMPTS)))
    assert recipe.arguments["situated_prompts"] == sorted(SITUATED_DEV_PROMPTS) and len(recipe.choice) == len(first_two)
    # a run on every writing run keeps the arguments (and so the digest) it had before the setting existed
    assert "situated_prompts" not in build("pragmatic", sources=(), inli_cap=10, choice=("situated",),
                                           situated_cap=None, root=data_root).arguments
    with pytest.raises(PragmeterError, match="unknown situated prompt 'round9.md'; choose among written_situated"):
        situated_items(prompts=("round9.md",))


def _item(number: int, **change) -> dict:
    item = {"id": f"rel-{number:03d}", "kind": "relation",
            "context": f"Noor asks her neighbour Emil, number {number}, whether he enjoyed her garden party. Emil "
                       "replies:",
            "utterance": f"Your roses are taller than last year, {number} of them at least.",
            "readings": ["Emil did not enjoy Noor's garden party much.",
                         "Emil is describing the height of Noor's roses.",
                         "Emil had a wonderful time at Noor's garden party.", "Emil wants Noor to give him a rose."]}
    return {**item, **change}


def test_the_tool_checks_items_drops_giveaways_and_writes_a_readable_file(tmp_path, data_root, run_as_main):
    """tools/written_situated.py: records from FILE.jsonl@PROMPT, an item whose reading names the figure dropped and
    counted, the prompt's sha256 prefix recorded; a file the reader opens. A line that is not an item, or a file
    without its prompt, ends the tool with a message naming it."""
    from pragmeter.generate.output import written_records

    root = Path(__file__).resolve().parents[2]
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Write items.\n", encoding="utf-8")
    giveaway = ["Emil literally means the roses are tall.", "b c d e f", "c d e f g", "d e f g h"]
    lines = [_item(1), _item(2), _item(3, readings=giveaway)]
    written = tmp_path / "relation.jsonl"
    written.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    output = tmp_path / "out" / "items.parquet"
    run_as_main(root / "tools" / "written_situated.py", f"{written}@{prompt}", "--output", output,
                "--data-root", data_root)
    items = load_written_situated(output)
    assert [item.id for item in items] == ["rel-001", "rel-002"]
    report = json.loads(Path(f"{output}.report.json").read_text())
    assert report["items"] == 2 and sum(report["dropped"].values()) == 1
    digest = hashlib.sha256(b"Write items.\n").hexdigest()[:16]
    assert set(pd.read_parquet(output)["prompt_sha256"]) == {digest}
    records = written_records([f"{written}@{prompt}"])
    assert [(n, d) for _, n, d, _ in records] == [(1, digest), (2, digest), (3, digest)]
    with pytest.raises(PragmeterError, match="FILE.jsonl@PROMPT"):
        written_records([str(written)])
    written.write_text(json.dumps(_item(1)) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"relation.jsonl: line 2: expected a JSON object"):
        written_records([f"{written}@{prompt}"])
    with pytest.raises(AssertionError, match=r"exited with .*relation.jsonl: line 2: expected a JSON object"):
        run_as_main(root / "tools" / "written_situated.py", f"{written}@{prompt}", "--output", output,
                    "--data-root", data_root)
