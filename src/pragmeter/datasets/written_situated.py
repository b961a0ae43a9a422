"""Situated implicatures written for pragmeter: short situations in which someone says something that means more
than, or other than, what the words say, each with four readings of what the speaker means — the meant one, the
words taken at face value, the opposite, and a plausible reading the words do not convey.

Seven kinds, three runs of the prompt each (the second asks for other settings and speakers, the third for a
face-value reading as tempting as a careless listener would find it): replies that flout relevance (``relation``),
say less or more than asked (``quantity``), are not true as said (``quality``: irony, hyperbole, understatement), are
said in a pointed manner (``manner``), questions that are not asking (``question``), statements that do something
else (``indirect``: hints, refusals, warnings) and figures of speech in a situation (``metaphor``).

Written by the Claude (Anthropic) language model from the prompts ``written_situated.prompt.md``,
``written_situated.prompt_round2.md`` and ``written_situated.prompt_round3.md`` beside the file (2026-12-07), each
filled per kind as ``written_situated.prompt_kinds.json`` says (:func:`prompt_digests`). Not rewritten from any
upstream text and not reviewed by people: project data (Apache-2.0, like the code). It trains the interpreter's choice
items and gives a development split; it is never evidence on its own (the human-written batteries are the test).
Every row is checked: a malformed one is a DataError naming the file, row and field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pragmeter.datasets.pairs.llm_generated import GENERATED_DIR
from pragmeter.errors import DataError

FILE = "written_situated.parquet"
PROMPT_KINDS = "written_situated.prompt_kinds.json"  # template file -> kind -> its placeholders' values
KINDS = ("relation", "quantity", "quality", "manner", "question", "indirect", "metaphor")
READINGS = ("meant", "literal", "opposite", "unsupported")  # the file's reading columns, meant first


@dataclass(frozen=True)
class SituatedItem:
    id: str
    kind: str  # one of KINDS
    context: str  # the situation, ending just before the utterance
    utterance: str  # the words said
    readings: tuple[str, str, str, str]  # meant, literal, opposite, unsupported
    prompt_sha256: str = ""  # the sha256 prefix of the filled prompt it was written from

    @property
    def said(self) -> str:
        return self.utterance

    @property
    def premise(self) -> str:
        """The interpreter's premise: the context, then the quoted utterance."""
        from pragmeter.interpreter.model import premise

        return premise(self.context, self.utterance)


def load_written_situated(path: str | Path | None = None) -> list[SituatedItem]:
    """Every item of the file (default: the one shipped in ``pragmeter/data/generated/``), in file order."""
    import pandas as pd

    path = Path(path) if path is not None else GENERATED_DIR / FILE
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: cannot read the written situated items ({error.__class__.__name__})") from None
    missing = [c for c in ("id", "kind", "context", "utterance", *READINGS) if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
    items, seen = [], set()
    for row, record in enumerate(frame.to_dict("records"), 1):
        def field(name: str) -> str:
            value = record[name]
            if not isinstance(value, str) or not value.strip():
                shown = "an empty cell" if value is None or value != value or not str(value).strip() else repr(value)
                raise DataError(f"{path}: row {row}, field {name!r}: expected a text, got {shown}")
            return value.strip()

        item_id, kind = field("id"), field("kind")
        if kind not in KINDS:
            raise DataError(f"{path}: row {row}, field 'kind': {kind!r} is none of {', '.join(KINDS)}")
        if item_id in seen:
            raise DataError(f"{path}: row {row}, field 'id': {item_id!r} occurs twice")
        seen.add(item_id)
        readings = tuple(field(name) for name in READINGS)
        if len({r.casefold() for r in readings}) < len(readings):
            raise DataError(f"{path}: row {row}, field 'readings': two of the four readings are the same text")
        items.append(SituatedItem(item_id, kind, field("context"), field("utterance"), readings,
                                  field("prompt_sha256") if "prompt_sha256" in frame.columns else ""))
    return items


def prompt_digests(directory: str | Path | None = None) -> dict[str, dict[str, str]]:
    """{template file: {kind: sha256 prefix of the template filled with the kind's values}}: the prompts the items
    were written from, as ``PROMPT_KINDS`` fills each template (``directory``: default the package's generated
    data). A DataError when a template is missing or a placeholder is left unfilled."""
    import hashlib
    import json

    directory = Path(directory) if directory is not None else GENERATED_DIR
    try:
        rounds = json.loads((directory / PROMPT_KINDS).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{directory / PROMPT_KINDS}: not readable JSON ({error.__class__.__name__})") from None
    digests = {}
    for template_name, kinds in rounds.items():
        try:
            template = (directory / template_name).read_text(encoding="utf-8")
        except OSError:
            raise DataError(f"{directory / PROMPT_KINDS}: template {template_name!r} is not beside it") from None
        digests[template_name] = {}
        for kind, values in kinds.items():
            prompt = template
            for placeholder, value in values.items():
                prompt = prompt.replace(placeholder, value)
            if "{" in prompt:
                raise DataError(f"{directory / PROMPT_KINDS}: {template_name}, kind {kind!r}: a placeholder is left "
                                f"unfilled")
            digests[template_name][kind] = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]
    return digests
