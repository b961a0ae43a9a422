"""The figurative, ironic and indirect pair sources (SOURCES.md "Added 2026-11-22") on the real shared files."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from pragmeter.cli import main
from pragmeter.data import root as data_root_module
from pragmeter.datasets.pairs import PAIR_SOURCES
from pragmeter.text import normalise
from pragmeter.errors import DataError
from pragmeter.impscore.corpus import build_corpus
from pragmeter.impscore.corpus.build import resolve_sources
from pragmeter.datasets.pairs.registry import PAPER_SOURCES


def read(name: str):
    source = PAIR_SOURCES[name]()
    assert source.name == name and source.licence
    assert len(source.origins) == len(source.pairs) == len(source.groups) == len(source.hard_negatives)
    assert all(o.startswith(f"{name}/") and "#" in o for o in source.origins)
    return source


def find(source, implicit: str, explicit: str | None = None) -> list[int]:
    return [i for i, (a, b) in enumerate(source.pairs) if a == implicit and (explicit is None or b == explicit)]


def test_impli_entailing_rows_pair_and_non_entailing_rows_are_hard_negatives():
    impli = read("impli")
    assert len(impli.pairs) > 15_000
    [i] = find(impli, "How have you weathered the storm ?")
    assert impli.pairs[i][1] == "How have you succeeded in getting through the difficult situation?"
    assert impli.origins[i] == "impli/idioms/manual_e.tsv#0" and impli.tiers[i] == 0
    assert impli.hard_negatives[i] == "How have you calmed the storm?"  # idioms/manual_ne.tsv, same sentence
    # the cp1252 file is decoded: curly quotes, no replacement characters
    [j] = find(impli, "Our conversation turned to the subject of “tongues”.")
    assert impli.origins[j] == "impli/metaphors/replacement_tsvetkov_e.tsv#0"
    # silver substitutions at a sentence start get a capital, so case does not tell the sides apart
    assert not any(b[:1].islower() and a[:1].isupper() for a, b in impli.pairs)
    assert impli.skipped["non-entailing row with a literal context (no figurative anchor)"] == 687 + 57 + 142
    assert impli.skipped["mojibake (mis-decoded UTF-8)"] > 0


def test_flute_figures_pair_with_the_entailed_premise_and_sarcasm_with_its_literal_premise():
    flute = read("flute")
    [i] = find(flute, "To add insult to injury, a boy was leading a handsome sheep on a string behind him.")
    assert flute.pairs[i][1] == "To make things worse, a boy was leading a handsome sheep on a string behind him."
    assert flute.hard_negatives[i] == ("In order to make things a lot better, a boy was leading a handsome sheep on "
                                       "a string behind him.")
    assert flute.origins[i] == "flute/idiomNLI/idiom_train.jsonl#0"
    sarcastic = "I think it's adorable when my boyfriend gets drunk and starts acting like an idiot."
    explicit = {flute.pairs[k][1] for k in find(flute, sarcastic)}
    assert explicit == {"My boyfriend is drinking beer and he so dumb when he drinks.",
                        "I think it's ridiculous when my boyfriend gets drunk and starts acting like an idiot"}
    assert len({flute.groups[k] for k in find(flute, sarcastic)}) == 1
    # a sarcasm Entailment row is literal -> literal, never an anchor
    assert not find(flute, "I think it's ridiculous when my boyfriend gets drunk and starts acting like an idiot")
    assert flute.skipped["literal paraphrase without a sarcastic rewrite (literal -> literal)"] > 0


def test_irony_interpretations_pair_each_interpretation_without_links():
    irony = read("irony_interpretations")
    assert len(irony.pairs) == 4762
    rows = find(irony, "Nice having a conversation with you before I headed to bed.")
    assert len(rows) == 4 and {irony.groups[k] for k in rows} == {"irony_interpretations:384499124747251713"}
    assert irony.pairs[rows[0]][1] == "I am too tired to talk to you right now."
    assert find(irony, "I'm starting to enjoy cardio now ? ?", "I hate cardio!")  # t.co link removed
    assert not any("http" in a or "http" in b for a, b in irony.pairs)


def test_isarcasmeval_pairs_sarcastic_tweets_with_the_authors_rephrase():
    isarcasm = read("isarcasmeval")
    assert len(isarcasm.pairs) == 867 + 200
    [i] = find(isarcasm, "The only thing I got from college is a caffeine addiction")
    assert isarcasm.pairs[i][1].startswith("College is really difficult, expensive, tiring")
    assert isarcasm.origins[i] == "isarcasmeval/train/train.En.csv#0"
    # task C: sarcastic_id says which text is the sarcastic one
    [j] = find(isarcasm, "What a glorious weather today", "the weather is gloomy, just raining and dull.")
    assert isarcasm.origins[j] == "isarcasmeval/test/task_C_En_test.csv#2"
    assert isarcasm.skipped["not sarcastic (no rephrase)"] == 2601


def test_sarcasm_sign_drops_interpretations_equal_to_the_tweet():
    sign = read("sarcasm_sign")
    assert len(sign.pairs) > 10_000
    assert find(sign, "best day of my life", "worst day of my life")
    assert not any(normalise(a) == normalise(b) for a, b in sign.pairs)
    # 3 of 5 workers left it unchanged: the 2 rewrites go too
    assert not find(sign, "terry got sent off ? maybe hiddink needs to have more control over his players")
    assert len(find(sign, "dressler on the bench problems in the peg ? stay tuned")) == 3  # 2 of 5 unchanged
    assert sign.skipped["interpretation equals the tweet (worker found it not sarcastic)"] > 1000
    assert sign.skipped["tweet left unchanged by most workers (not sarcastic)"] > 0


def test_capp_pairs_the_indirect_paraphrase_with_the_direct_utterance():
    capp = read("capp")
    assert capp.licence == "CC BY-NC-SA 4.0"
    assert len(capp.pairs) > 3000
    rows = find(capp, "Could you please repeat that?", "Say it again.")  # the same pair recurs upstream
    assert capp.origins[rows[0]] == "capp/Dataset/train.csv#0"
    assert not find(capp, "Oh dear, my foot!")  # 'My foot!' is elliptical
    for reason in ("utterance under 3 words (elliptical)", "paraphrase not indirect (no hedge marker)"):
        assert capp.skipped[reason] > 1000


def test_pets_substitutes_the_real_meaning_of_the_euphemism():
    pets = read("pets_euphemisms")
    assert len(pets.pairs) > 1000
    i = pets.origins.index("pets_euphemisms/Euphemism_Corpus.csv#230")
    implicit, explicit = pets.pairs[i]
    assert "my deceased grandparents" in implicit and "my dead grandparents" in explicit
    assert implicit.replace("deceased", "dead") == explicit
    assert "<" not in implicit
    # the sentence splitter keeps "on Nov. 5" inside its sentence
    j = pets.origins.index("pets_euphemisms/Euphemism_Corpus.csv#48")
    assert pets.pairs[j][0].endswith("set off the new round of fighting.")
    assert pets.skipped["literal use of the term (is_euph 0)"] == 583


def test_figqa_pairs_the_metaphor_with_its_correct_ending_and_the_wrong_one_as_hard_negative():
    figqa = read("figqa")
    assert len(figqa.pairs) == 8016 + 1094
    [i] = find(figqa, "Her word had the strength of titanium.")
    assert figqa.pairs[i][1] == "Her promises can be believed."
    assert figqa.hard_negatives[i] == "Her promises cannot be trusted."
    [j] = find(figqa, "Her word had the strength of a wine glass.")
    assert figqa.pairs[j][1] == "Her promises cannot be trusted." and figqa.groups[i] == figqa.groups[j]
    assert figqa.origins[i] == "figqa/data/filtered/train_xl.csv#0"


@pytest.fixture(scope="module")
def figurative():
    return build_corpus(["figurative"], seed=0)


def test_figurative_corpus_has_provenance_groups_caps_and_a_per_source_table(figurative):
    corpus, report = figurative
    assert set(corpus["source"]) == set(PAIR_SOURCES)
    assert corpus["origin"].notna().all() and corpus["licence"].notna().all()
    table = report.set_index("source")
    for name in PAIR_SOURCES:
        assert 0 < table.loc[name, "pos_pairs"] <= 6000
        assert table.loc[name, "dropped"] != "-"
    assert "over the cap of 6,000 pairs" in table.loc["figqa", "dropped"]
    # impli keeps its hand-written pairs under the cap
    impli = corpus[corpus["source"] == "impli"]
    assert impli["origin"].str.contains("manual_e|replacement_").sum() > 1400
    grouped = corpus[corpus["group"].notna()]
    assert grouped.groupby("group")["split"].nunique().max() == 1
    assert corpus.groupby(corpus["implicit"].map(normalise))["split"].nunique().max() == 1
    negatives = corpus.set_index("pair_id").loc[grouped["negative_pair_id"]]
    assert (negatives["group"].to_numpy() != grouped["group"].to_numpy()).all()
    hard = corpus[corpus["hard_negative"].notna()]
    assert set(hard["source"]) == {"impli", "flute", "figqa"}
    assert (hard["hard_negative"].map(normalise) != hard["explicit"].map(normalise)).all()


def test_presets_expand_and_the_default_stays_the_paper_sources():
    assert resolve_sources(None) == list(PAPER_SOURCES)
    assert resolve_sources(["paper", "figqa"]) == [*PAPER_SOURCES, "figqa"]
    assert resolve_sources(["figurative", "capp"]) == list(PAIR_SOURCES)
    assert resolve_sources(["human"]) == [s for s in PAIR_SOURCES if s != "capp"]  # CAPP's side is machine-written
    general = resolve_sources(["general"])
    assert general[:len(PAPER_SOURCES)] == list(PAPER_SOURCES) and "capp" not in general
    assert general[-2:] == ["written_graded_everyday", "written_graded_offrecord"]
    with pytest.raises(DataError, match="unknown corpus source.*presets: paper, figurative, human, generated, general, all"):
        resolve_sources(["figurativ"])


def test_missing_or_corrupted_source_file_is_a_one_line_error_naming_it(tmp_path, data_root, monkeypatch, capsys):
    relative = "figqa/data/filtered/dev.csv"
    (tmp_path / "data/figqa/data/filtered").mkdir(parents=True)
    shutil.copy(data_root / "figqa/data/filtered/train_xl.csv", tmp_path / "data/figqa/data/filtered/train_xl.csv")
    argv = ["impscore", "corpus", "build", "--sources", "figqa", "--data-root", str(tmp_path / "data"),
            "--output", str(tmp_path / "out.parquet")]
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and f"{relative} is missing; download it from https://raw.githubusercontent.com" in error
    (tmp_path / "data" / relative).write_bytes((data_root / relative).read_bytes()[:-10])
    monkeypatch.setattr(data_root_module, "_verified", set())
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and relative in error and "checksum mismatch" in error
    assert not (tmp_path / "out.parquet").exists()


def test_a_file_without_the_expected_columns_names_file_and_column(tmp_path, data_root, monkeypatch):
    relative = "figqa/data/filtered/dev.csv"
    (tmp_path / "figqa/data/filtered").mkdir(parents=True)
    shutil.copy(data_root / "figqa/data/filtered/train_xl.csv", tmp_path / "figqa/data/filtered/train_xl.csv")
    frame = pd.read_csv(data_root / relative).drop(columns=["labels"])
    frame.to_csv(tmp_path / relative, index=False)
    monkeypatch.setattr(data_root_module, "verify_file", lambda path, rel: None)  # the checksum would catch it first
    with pytest.raises(DataError, match=r"figqa/data/filtered/dev.csv: missing column\(s\) labels"):
        PAIR_SOURCES["figqa"](root=tmp_path)
