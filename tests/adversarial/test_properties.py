"""Property-based tests (hypothesis): the answer parsers never raise and never guess, and the table reader gives
back what the table writer wrote, for any text."""

from __future__ import annotations

import json
import math
import string

import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from pragmeter.llm.parsing import LabelParser, json_field, json_object

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Any text a model may answer: every code point but surrogates (which no UTF-8 channel can carry).
answers = st.text(st.characters(exclude_categories=("Cs",)), max_size=300)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                           lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=12)

WORDS = {"yes": "yes", "no": "no", "implied": "implied", "explicit": "explicit", "subtle": "subtle"}
PARSER = LabelParser(WORDS)
NOT_A_WORD_CHAR = st.sampled_from(list(" .,;:!?()[]\"'\n\t"))


# --------------------------------------------------------------------------------------------- label answers
@SETTINGS
@given(answers)
@example("non-subtle")
@example("Yes and no")
def test_label_parser_returns_a_label_or_nothing(text):
    parsed = PARSER(text)
    assert parsed is None or parsed in WORDS.values()
    if parsed is not None:  # the label it gives is one that the text names as a whole word
        assert parsed in text.lower()


@SETTINGS
@given(st.sampled_from(sorted(WORDS)), st.text(NOT_A_WORD_CHAR, max_size=5), st.text(NOT_A_WORD_CHAR, max_size=5),
       st.sampled_from([str.lower, str.upper, str.title]))
def test_label_parser_finds_a_lone_label_in_any_case_and_punctuation(word, before, after, case):
    assert PARSER(before + case(word) + after) == WORDS[word]


@SETTINGS
@given(st.lists(st.sampled_from(sorted(WORDS)), min_size=2, max_size=4, unique=True), st.text(NOT_A_WORD_CHAR, min_size=1,
                                                                                            max_size=3))
def test_label_parser_refuses_two_different_labels(words, separator):
    assert PARSER(separator.join(words)) is None


@SETTINGS
@given(st.text(string.ascii_lowercase + " ", max_size=40).filter(
    lambda t: not any(w in t.split() for w in WORDS)), st.sampled_from(sorted(WORDS)))
def test_label_parser_never_matches_inside_a_hyphenated_or_longer_word(text, word):
    assert PARSER(f"{text} non-{word} {word}s {word}-like".replace(f" {word} ", " ")) in (None,) or word in text.split()


# ---------------------------------------------------------------------------------------------- JSON answers
@SETTINGS
@given(answers)
def test_json_parsers_never_raise(text):
    value = json_object(text)
    assert value is None or isinstance(value, dict)
    json_field(text, "score")
    json_field(text, "selected_option")


@SETTINGS
@given(st.dictionaries(st.text(max_size=10), json_values, min_size=1, max_size=5),
       st.text(st.characters(exclude_categories=("Cs",), exclude_characters="{"), max_size=40), answers)
def test_json_object_finds_an_object_inside_prose(payload, before, after):
    assert json_object(before + json.dumps(payload, ensure_ascii=False) + after) == payload


@SETTINGS
@given(answers)
@example('{"score": 7}')
@example("score: 3 ... score: 5")
@example('{"score": "4.5"}')
def test_judge_score_is_in_range_or_none(text):
    from pragmeter.tasks.emphasized_talk import parse_judge_score

    score = parse_judge_score(text)
    assert score is None or (isinstance(score, float) and 0 <= score <= 5)


@SETTINGS
@given(st.integers(0, 5).map(float) | st.floats(0, 5, allow_nan=False))
def test_judge_score_reads_back_what_a_judge_writes(value):
    from pragmeter.tasks.emphasized_talk import parse_judge_score

    assert parse_judge_score(json.dumps({"analysis": "ok", "score": value})) == pytest.approx(value)


# ------------------------------------------------------------------------------------- every task's parser
@pytest.fixture(scope="module")
def task_items():
    """One real item of every task that loads from the data root (the parser may look at the item)."""
    from pragmeter.eval import registry

    found = []
    for name, cls in sorted(registry.all_tasks().items()):
        try:
            task = cls()
            items = task.items()
        except Exception:  # noqa: BLE001 - a task whose data is not here is not this test's subject
            continue
        if items:
            found.append((name, task, items[0]))
    assert len(found) >= 5
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers)
@example("")
@example('{"selected_option": "Z"}')
@example("A")
def test_every_task_parser_gives_a_valid_answer_or_none(task_items, text):
    for name, task, item in task_items:
        parsed = task.parse(text, item)
        reference = task.parse(task.reference_answer(item), item)
        assert reference is not None, name  # the task reads its own reference answer
        if parsed is not None and isinstance(reference, str) and hasattr(task, "answer_words"):
            assert parsed in set(task.answer_words.values()), (name, text, parsed)


# ----------------------------------------------------------------------------------- generation answers
@SETTINGS
@given(answers)
def test_generation_parsers_never_raise(text):
    from pragmeter.analysis.generation import parse_sentences
    from pragmeter.generate.drinq import _context_parser, _default_parser
    from pragmeter.generate.pairs import clean_explicit, explicit_parser
    from pragmeter.generate.validation import Malformed, labelled_lines

    sentences = parse_sentences(text)
    assert sentences is None or (len(sentences) == 4 and all(s.strip() for s in sentences))
    assert "\n" not in clean_explicit(text)
    for parse in (_default_parser, _context_parser, explicit_parser("Some implicit post."),
                  lambda t: labelled_lines(t, ["Passage", "Implicature"])):
        try:
            parse(text)
        except Malformed:
            pass


# ------------------------------------------------------------------------------------ table reader round-trip
cells = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
column_names = st.text(string.ascii_letters + "_", min_size=1, max_size=8)


@st.composite
def tables(draw):
    names = draw(st.lists(column_names, min_size=1, max_size=4, unique=True))
    rows = draw(st.integers(1, 8))
    return pd.DataFrame({name: draw(st.lists(cells, min_size=rows, max_size=rows)) for name in names})


def _same(written: str, read) -> bool:
    if isinstance(read, float) and math.isnan(read):
        return written == ""  # csv and tsv have no empty string: an empty cell reads back as missing
    return read == written


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tables(), st.sampled_from([".csv", ".tsv", ".jsonl", ".parquet"]))
def test_table_round_trip_keeps_every_cell_and_row_order(tmp_path_factory, frame, extension):
    """Every cell comes back as written, but that csv and tsv (which spreadsheets open) write a cell that would run as
    a formula with a ``'`` before it."""
    from pragmeter.io import read_table, write_table
    from pragmeter.io.tables import neutralise_formula

    if extension in (".csv", ".tsv"):
        assume(not frame.map(lambda v: v == "").all().all())
        # A NUL byte in a delimited text file is refused on reading (a binary file): JSON lines and parquet
        # carry it, escaped or typed.
        assume(not frame.map(lambda v: "\x00" in v).any().any())
    path = tmp_path_factory.mktemp("round") / f"table{extension}"
    write_table(frame, path)
    back = read_table(path)
    assert list(back.columns) == list(frame.columns) and len(back) == len(frame)
    for column in frame.columns:
        for row, value in enumerate(frame[column]):
            written = neutralise_formula(value) if extension in (".csv", ".tsv") else value
            assert _same(written, back[column].iloc[row]), (column, row, value, back[column].iloc[row])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\n\r"), max_size=60),
                min_size=1, max_size=10))
def test_text_file_round_trip_keeps_every_line(tmp_path_factory, lines):
    from pragmeter.io import read_table

    assume(any(line.strip() for line in lines) and not lines[0].startswith("\ufeff"))
    path = tmp_path_factory.mktemp("round") / "lines.txt"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    assume("\x00" not in path.read_text(encoding="utf-8"))
    assert read_table(path)["text"].tolist() == lines
