"""The interpreter's multi-source recipe: general NLI, monotonicity and presupposition first (stage ``general``), then
INLI with the implicature sets (stage ``pragmatic``, started from the general stage's weights).

Every set is read as INLI's four labels, so one head serves every stage and the interpreter's reading score
(P(implied) + P(explicit)) means the same after each:

- NLI ``entailment`` → ``explicit`` (what the premise says, in other words), or with ``nli_entailment="entailed"``
  → ``entailed`` (implied or explicit, either one, a coarse target the loss reads as one class), ``neutral`` →
  ``neutral``, ``contradiction`` → ``contradiction``; 2-way sets whose "no" is not split (DNC) are not read;
- IMPPRES implicature, read with its pragmatic label: ``entailment`` → ``implied`` (a scalar implicature is meant,
  not said);
- FLUTE's training files: the figurative sentence, quoted, implies its literal meaning and contradicts FLUTE's
  opposite reading (:func:`pragmeter.classify.recipes.inli.flute_examples`);
- Circa's question-answer pairs outside INLI's premises with a yes or no relaxed label: premise = the question with
  the quoted answer (as the interpreter writes LUDWIG's and DRInQ's premises), hypotheses = the question as a
  statement and the bare answers "yes" and "no": the meant one ``implied``, the other ``contradiction``.

Choice items (``choice``), trained with a loss over each item's reading scores (what ``Interpreter.choose`` decides
on; :func:`pragmeter.classify.training.choice_loss`):

- GRICE's turns: premise = the dialogue so far and the question, with the quoted answer; readings = its four;
- Circa's yes/no exchanges outside INLI's premises: readings "yes" and "no";
- FLUTE's idioms, metaphors and similes: premise = the figurative sentence alone, quoted; readings = its literal
  meaning, FLUTE's opposite literal reading, and the sentence itself restated (what was said is not what a figure
  means, the distractor the batteries of Floyd et al. and Fig-QA's literal endings set);
- sarcastic tweets with a person's non-sarcastic rewrite (Ghosh et al.'s crowd interpretations, Sarcasm SIGN's
  workers' interpretations, iSarcasmEval's authors' own rephrases; human-written, unlike FLUTE's): premise = the
  tweet alone, quoted; readings = the rewrite (meant) and the tweet restated;
- Fig-QA's crowd-written creative metaphors (``train_xl``): premise = the metaphor alone, quoted; readings = its
  meant ending, the opposite ending and the metaphor restated (as FLUTE's);
- IMPLI's idiomatic and metaphoric sentences that have a non-entailed rewrite: premise = the sentence alone, quoted;
  readings = its figurative meaning in plain words, the rewrite (mostly the figure's words taken literally, some
  antonyms) and the sentence restated (as FLUTE's): the literal reading of a figure is the distractor the Floyd
  battery's metaphors set, which neither FLUTE nor Fig-QA offers;
- situated implicatures written for pragmeter (``datasets/written_situated.py``; LLM-written, seven kinds: flouted
  relevance, quantity, quality and manner, questions that are not asking, indirect speech acts, figures in a
  situation): premise = the situation with the quoted utterance; readings = the meant one, the words at face value,
  the opposite and a plausible reading the words do not convey.

Validation is INLI's, plus development splits never trained on: 500 Circa dialogues scored as a two-way choice
between "yes" and "no" (the form of LUDWIG's items), 1,000 GRICE turns (seeded) as a four-way choice, 600 FLUTE
figurative sentences (seeded) as the three-way choice above, 300 sarcastic tweets (seeded) as the two-way choice
above, Fig-QA's validation split (the ``figqa`` benchmark's metaphors), 300 IMPLI sentences (seeded) as the
three-way choice above and 20 situated items of each kind (seeded) as the four-way choice above. GRICE training
leaves out every dialogue that has a development turn; FLUTE's, the sarcasm, Fig-QA, IMPLI and situated choice items
every item in their development split (FLUTE as pairs, ``flute`` among the pragmatic sources, reads every training
file).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from pragmeter.classify.examples import ChoiceExamples, Examples, RecipeData
from pragmeter.classify.recipes.inli import ANSWER_WORDS, PAPER, flute_examples, split_examples
from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.inli import FILES as INLI_FILES
from pragmeter.datasets.inli import LABELS
from pragmeter.datasets.pairs.figqa import FILES as FIGQA_FILES
from pragmeter.datasets.pairs.irony_interpretations import FILE as IRONY_FILE
from pragmeter.datasets.pairs.isarcasmeval import TRAIN as ISARCASMEVAL_TRAIN
from pragmeter.datasets.pairs.sarcasm_sign import FILE as SIGN_FILE
from pragmeter.errors import PragmeterError

STAGES = ("general", "pragmatic")
# The general stage's sets, by family (the ablation reads them so): set name -> split.
GENERAL = {"nli": {"taxinli": "train", "esnli": ("dev", "test"), "cad_nli": "train", "sick": "train",
                   "conjnli": "train"},
           "monotonicity": {"med": "train", "help": "train", "monli": "train", "scone": "train"},
           "presupposition": {"imppres": ("presupposition", "implicature")}}
PRAGMATIC = ("flute", "circa", "general")  # "general": the general families mixed into this stage
NLI_TO_INLI = {"entailment": "explicit", "neutral": "neutral", "contradiction": "contradiction"}
# How a general NLI set's entailment meets INLI's labels: as ``explicit`` (what the premise says, in other words), or as
# ``entailed`` (implied or explicit, either one: the loss reads the two as one class, as XNLI-en's 3-way figure does;
# classify/training.py ENTAILED), so that an NLI set's inferential entailments are not taught to be said outright.
NLI_ENTAILMENT = ("explicit", "entailed")
CIRCA_DEV_ITEMS = 500
CIRCA_LABELS = ("yes", "no")
CHOICE = ("grice", "circa", "flute", "sarcasm", "figqa", "impli", "situated")  # sets trained as choice items
# A figurative sentence as someone's words in a situation: a speaker, the quoted sentence and sometimes a question
# about what was meant, the form in which the benchmarks present a situated utterance. The same figure alone and in a
# frame are different premises: rejecting the restated figure when it stands alone does not carry over to the figure
# in a frame, where its restatement reads as explicit. Training and development frames (and names) are worded apart,
# so a framed development split measures frames the model has not read.
TRAIN_FRAMES = ("{name} turned to a colleague and said:", "{name} wrote in a message:",
                "During dinner, {name} remarked:",
                'When asked for an opinion, {name} answered: "{said}" What is {name} trying to say?',
                '{name} commented: "{said}" How should this be understood?',
                'Someone asked {name} about it, and {pronoun} responded: "{said}" What does {name} mean?')
TRAIN_SPEAKERS = (("Lena", "she"), ("Omar", "he"), ("Priya", "she"), ("Sam", "he"), ("Julia", "she"), ("Ben", "he"))
DEV_FRAMES = ('{name} said: "{said}" What did {pronoun} mean?',
              'Asked about it, {name} replied: "{said}" What does {pronoun} mean?', '{name} told a friend: "{said}"')
DEV_SPEAKERS = (("Anna", "she"), ("Tom", "he"), ("Maria", "she"), ("David", "he"))
# A figure's restatement, the distractor "what was said is not what was meant", as a near copy rather than the exact
# words: rejecting only an exact copy of the quoted sentence leaves a restatement with one word changed ("This town
# is a chimney." read as "The town is a chimney.") free to win in a frame. Training rewordings change a tense, add an
# adverb after the verb "to be", change the subject's person or the final punctuation; the development rewording
# swaps a determiner or possessive, which training never does, so a reworded development split measures near copies
# of a kind the model has not read.
TENSES = {"is": "was", "are": "were", "was": "is", "were": "are", "has": "had", "have": "had", "am": "was"}
ADVERBS = ("really", "actually", "literally", "truly")
SUBJECTS = {"i": ("he", "she"), "we": ("they",), "you": ("they",), "i'm": ("he's", "she's"), "we're": ("they're",),
            "you're": ("they're",)}
DEV_SWAPS = {"this": "the", "these": "the", "those": "the", "my": "their", "our": "their",
             "your": "their", "his": "their", "her": "their", "a": "the", "an": "the", "the": "a"}
GRICE_DEV_TURNS = 1000
FLUTE_DEV_ITEMS = 600
SARCASM_DEV_TWEETS = 300
IMPLI_DEV_ITEMS = 300
SITUATED_DEV_PER_KIND = 20
# the prompts whose items the situated development split is drawn from; items of later prompts only train
SITUATED_DEV_PROMPTS = ("written_situated.prompt.md", "written_situated.prompt_round2.md")


def general_sets(families: tuple[str, ...] = tuple(GENERAL)) -> list[str]:
    """The names of the sets the general ``families`` read (what ``set_caps`` may name)."""
    unknown = sorted(set(families) - set(GENERAL))
    if unknown:
        raise PragmeterError(f"unknown family {unknown[0]!r}; choose among {', '.join(GENERAL)}")
    return [name for family in families for name in GENERAL[family]]


def unread_sets(set_caps, families: tuple[str, ...]) -> list[str]:
    """The names among ``set_caps`` that no family of ``families`` reads, sorted."""
    return sorted(set(set_caps or ()) - set(general_sets(families)))


def general_examples(families: tuple[str, ...] = tuple(GENERAL), cap: int | None = 6000, seed: int = 0,
                     root: str | os.PathLike | None = None, entailment: str = "explicit",
                     set_caps: Mapping[str, int] | None = None) -> Examples:
    """The general stage's pairs as INLI labels: each set (and split) sampled to at most ``cap`` pairs (seeded), or
    to ``set_caps[name]`` for a set named there; an NLI entailment labelled ``entailment`` (one of
    :data:`NLI_ENTAILMENT`)."""
    from pragmeter.datasets.nli import load_nli

    if entailment not in NLI_ENTAILMENT:
        raise PragmeterError(f"unknown reading of NLI entailment {entailment!r}; choose one of "
                             f"{', '.join(NLI_ENTAILMENT)}")
    set_caps = dict(set_caps or {})
    unread = unread_sets(set_caps, families)
    if unread:
        raise PragmeterError(f"a cap for {unread[0]!r}, which the families {', '.join(families) or 'none'} do not "
                             f"read; they read {', '.join(general_sets(families)) or 'nothing'}")
    bad = sorted(name for name, value in set_caps.items()
                 if not isinstance(value, int) or isinstance(value, bool) or value < 0)
    if bad:
        raise PragmeterError(f"the cap for {bad[0]!r} must be a whole number of pairs, 0 or more; "
                             f"got {set_caps[bad[0]]!r}")
    mapping = {**NLI_TO_INLI, "entailment": entailment}
    texts, pairs, labels, groups = [], [], [], []
    for family in families:
        for name, splits in GENERAL[family].items():
            limit = set_caps.get(name, cap)
            for split in (splits,) if isinstance(splits, str) else splits:
                rows = load_nli(name, split, root)
                if limit is not None and len(rows) > limit:
                    rows = random.Random(f"{seed}-{name}-{split}").sample(rows, limit)
                for row in rows:
                    label = ("implied" if row.source == "imppres_implicature" and row.label == "entailment"
                             else mapping.get(row.label))
                    if label is None:
                        continue
                    texts.append(row.premise), pairs.append(row.hypothesis), labels.append(label)
                    groups.append(row.source)
    return Examples(texts=texts, pairs=pairs, labels=labels, groups=groups)


@dataclass(frozen=True)
class YesNoItem:
    premise: str
    statement: str
    label: str  # "yes" or "no"


def circa_items(root: str | os.PathLike | None = None) -> tuple[list[YesNoItem], list[YesNoItem]]:
    """(train, dev) of Circa's yes/no pairs whose dialogue is not one of INLI's premises; dev is ``CIRCA_DEV_ITEMS``
    items drawn by a fixed seed, and a dialogue (question, answer) never appears on both sides."""
    from pragmeter.datasets.circa import load_circa
    from pragmeter.interpreter.model import premise

    items = [YesNoItem(premise(item.question, item.answer), item.statement or item.question, item.label)
             for item in load_circa(root) if not item.in_inli and item.label in CIRCA_LABELS]
    dialogues = sorted({item.premise for item in items})
    dev = set(random.Random("circa-dev").sample(dialogues, min(CIRCA_DEV_ITEMS, len(dialogues))))
    return [i for i in items if i.premise not in dev], [i for i in items if i.premise in dev]


def circa_examples(items: list[YesNoItem], cap: int | None = 4000, seed: int = 0) -> Examples:
    """Three pairs per item: the statement and the meant bare answer ``implied``, the other answer
    ``contradiction``."""
    if cap is not None and len(items) > cap:
        items = random.Random(f"{seed}-circa").sample(items, cap)
    texts, pairs, labels = [], [], []
    for item in items:
        other = "no" if item.label == "yes" else "yes"
        for hypothesis, label in ((item.statement, "implied" if item.label == "yes" else "contradiction"),
                                  (item.label, "implied"), (other, "contradiction")):
            texts.append(item.premise), pairs.append(hypothesis), labels.append(label)
    return Examples(texts=texts, pairs=pairs, labels=labels, groups=["circa_yes_no"] * len(texts))


def grice_premise(turn) -> str:
    """A GRICE turn as the interpreter's premise: the earlier exchanges quoted, the question, then the quoted
    answer."""
    from pragmeter.interpreter.model import premise

    context = " ".join(f'"{question}" "{answer}"' for question, answer in turn.history)
    return premise(f"{context} {turn.question}?".strip(), turn.answer)


def grice_items(root: str | os.PathLike | None = None) -> tuple[list, list]:
    """(train, dev) of GRICE's turns: dev is ``GRICE_DEV_TURNS`` turns drawn by a fixed seed; train is every turn of
    the dialogues that have none in dev."""
    from pragmeter.datasets.grice import load_grice

    turns = load_grice(root)
    dev = random.Random("grice-dev").sample(turns, min(GRICE_DEV_TURNS, len(turns)))
    held = {turn.id.rsplit("-", 1)[0] for turn in dev}
    return [turn for turn in turns if turn.id.rsplit("-", 1)[0] not in held], dev


def framed_premise(said: str, key: str, frames: tuple[str, ...] = TRAIN_FRAMES,
                   speakers: tuple[tuple[str, str], ...] = TRAIN_SPEAKERS) -> str:
    """The interpreter's premise of ``said`` in one of ``frames`` with one of ``speakers`` (both drawn by the seed
    ``key``): the frame is the context, ``said`` the quoted utterance."""
    from pragmeter.interpreter.model import premise

    rng = random.Random(f"{key}-frame")
    name, pronoun = rng.choice(speakers)
    return premise(rng.choice(frames).format(name=name, pronoun=pronoun, said=said), said)


def _replace_word(sentence: str, index: int, word: str) -> str:
    """``sentence`` with its ``index``-th space-separated word's letters replaced by ``word`` (its case and the
    punctuation around it kept)."""
    words = sentence.split(" ")
    head, core, tail = _word_parts(words[index])
    words[index] = head + (word[:1].upper() + word[1:] if core[:1].isupper() else word) + tail
    return " ".join(words)


def _word_parts(token: str) -> tuple[str, str, str]:
    """(leading punctuation, the word, trailing punctuation) of a space-separated token."""
    start = next((i for i, c in enumerate(token) if c.isalnum()), len(token))
    end = next((i for i in range(len(token), start, -1) if token[i - 1].isalnum()), start)
    return token[:start], token[start:end], token[end:]


def train_reworded(sentence: str, key: str) -> str:
    """A near copy of ``sentence`` for training, never the sentence itself: one of a changed tense, an adverb after
    the verb "to be" or a subject in another person (seeded by ``key``, the first that applies), else its final
    punctuation changed."""
    rng = random.Random(f"{key}-reworded")
    cores = [_word_parts(token)[1].lower() for token in sentence.split(" ")]
    operations = ["tense", "adverb", "subject"]
    rng.shuffle(operations)
    for operation in operations:
        if operation == "tense":
            found = [i for i, core in enumerate(cores) if core in TENSES]
            if found:
                return _replace_word(sentence, found[0], TENSES[cores[found[0]]])
        elif operation == "adverb":
            words = sentence.split(" ")
            found = [i for i, core in enumerate(cores) if core in ("is", "are", "was", "were", "am")
                     and i > 0 and words[i].isalpha() and words[i - 1].isalpha()]  # a verb inside a clause
            if found:
                return " ".join(words[:found[0] + 1] + [rng.choice(ADVERBS)] + words[found[0] + 1:])
        else:
            found = [i for i, core in enumerate(cores) if core in SUBJECTS]
            if found:
                return _replace_word(sentence, found[0], rng.choice(SUBJECTS[cores[found[0]]]))
    stripped = sentence.rstrip()
    return stripped[:-1] if stripped[-1:] in ".!?" and len(stripped) > 1 else stripped + "."


def restated_as(item: "FigurativeItem | SarcasticItem", restatement: str) -> tuple[str, ...]:
    """``item``'s readings with its last one, the sentence restated, written as ``restatement``."""
    return tuple(item.readings[:-1]) + (restatement,)


def dev_reworded(sentence: str) -> str:
    """The development rewording of ``sentence``: its first determiner or possessive swapped (:data:`DEV_SWAPS`);
    the sentence itself where it has none."""
    for index, token in enumerate(sentence.split(" ")):
        core = _word_parts(token)[1].lower()
        if core in DEV_SWAPS:
            return _replace_word(sentence, index, DEV_SWAPS[core])
    return sentence


@dataclass(frozen=True)
class FigurativeItem:
    figure: str  # the figurative sentence (FLUTE's hypothesis)
    literal: str  # its literal meaning
    opposite: str  # FLUTE's opposite literal reading

    @property
    def said(self) -> str:
        return self.figure

    @property
    def premise(self) -> str:
        from pragmeter.interpreter.model import premise

        return premise("", self.said)

    @property
    def readings(self) -> tuple[str, str, str]:
        """The literal meaning (meant, index 0), the opposite reading, and the figure itself restated."""
        return self.literal, self.opposite, self.figure


def flute_items(root: str | os.PathLike | None = None) -> tuple[list[FigurativeItem], list[FigurativeItem]]:
    """(train, dev) of FLUTE's idiom, metaphor and simile training items that have an opposite reading; dev is
    ``FLUTE_DEV_ITEMS`` figurative sentences drawn by a fixed seed, and a sentence never appears on both sides."""
    from pragmeter.datasets.pairs.flute import flute

    source = flute(root, cap=None)
    items = [FigurativeItem(figure, literal, negative)
             for (figure, literal), where, negative in zip(source.pairs, source.origins, source.hard_negatives)
             if negative and "testgolddata/" not in where and "SarcasmNLI/" not in where]
    figures = sorted({item.figure for item in items})
    dev = set(random.Random("flute-dev").sample(figures, min(FLUTE_DEV_ITEMS, len(figures))))
    return [i for i in items if i.figure not in dev], [i for i in items if i.figure in dev]


@dataclass(frozen=True)
class SarcasticItem:
    tweet: str  # the sarcastic tweet
    meaning: str  # a person's non-sarcastic rewrite of it

    @property
    def said(self) -> str:
        return self.tweet

    @property
    def premise(self) -> str:
        from pragmeter.interpreter.model import premise

        return premise("", self.said)

    @property
    def readings(self) -> tuple[str, str]:
        """The rewrite (meant, index 0) and the tweet itself restated."""
        return self.meaning, self.tweet


# The human-written sarcasm sets' training files, as their readers name them; iSarcasmEval's task C is its test split.
SARCASM_FILES = (IRONY_FILE, SIGN_FILE, ISARCASMEVAL_TRAIN)
FIGQA_TRAIN = FIGQA_FILES[0]  # train_xl; the validation split is the figqa benchmark's


def sarcasm_items(root: str | os.PathLike | None = None) -> tuple[list[SarcasticItem], list[SarcasticItem]]:
    """(train, dev) of sarcastic tweets, one item per tweet (its first rewrite; a tweet in two sets counts once); dev
    is ``SARCASM_DEV_TWEETS`` tweets drawn by a fixed seed."""
    from pragmeter.datasets.pairs import irony_interpretations, isarcasmeval, sarcasm_sign
    from pragmeter.text import normalise

    first: dict[str, SarcasticItem] = {}
    for source in (irony_interpretations(root, cap=None), sarcasm_sign(root, cap=None), isarcasmeval(root, cap=None)):
        for (tweet, meaning), where in zip(source.pairs, source.origins):
            if where.split("#")[0] in SARCASM_FILES and normalise(tweet) != normalise(meaning):
                first.setdefault(normalise(tweet), SarcasticItem(tweet, meaning))
    return _held_out(first, SARCASM_DEV_TWEETS, "sarcasm-dev")


def figqa_items(root: str | os.PathLike | None = None) -> tuple[list[FigurativeItem], list[FigurativeItem]]:
    """(train, dev) of Fig-QA's valid metaphors as figurative items: train from ``train_xl`` less every metaphor that
    is also in the validation split, dev the validation split (the ``figqa`` benchmark's items), one item per
    metaphor."""
    from pragmeter.datasets.pairs.figqa import figqa
    from pragmeter.text import normalise

    source = figqa(root, cap=None)
    train_file, dev_file = FIGQA_FILES
    split: dict[str, dict[str, FigurativeItem]] = {train_file: {}, dev_file: {}}
    for (metaphor, meant), where, opposite in zip(source.pairs, source.origins, source.hard_negatives):
        if opposite and normalise(metaphor) != normalise(meant):
            split[where.split("#")[0]].setdefault(normalise(metaphor), FigurativeItem(metaphor, meant, opposite))
    dev = split[dev_file]
    return [item for key, item in split[train_file].items() if key not in dev], list(dev.values())


def impli_items(root: str | os.PathLike | None = None) -> tuple[list[FigurativeItem], list[FigurativeItem]]:
    """(train, dev) of IMPLI's figurative sentences that have a non-entailed rewrite, one item per sentence (its first
    paraphrase and the rewrite the reader pairs with it); dev is ``IMPLI_DEV_ITEMS`` sentences drawn by a fixed
    seed."""
    from pragmeter.datasets.pairs.impli import impli
    from pragmeter.text import normalise

    source = impli(root, cap=None)
    first: dict[str, FigurativeItem] = {}
    for (figure, meaning), rewrite in zip(source.pairs, source.hard_negatives):
        if rewrite and len({normalise(figure), normalise(meaning), normalise(rewrite)}) == 3:
            first.setdefault(normalise(figure), FigurativeItem(figure, meaning, rewrite))
    return _held_out(first, IMPLI_DEV_ITEMS, "impli-dev")


def situated_items(root: str | os.PathLike | None = None,
                   prompts: tuple[str, ...] | None = None) -> tuple[list, list]:
    """(train, dev) of the situated implicatures written for pragmeter (``datasets/written_situated.py``; they ship
    with the package, so ``root`` is not read): dev is ``SITUATED_DEV_PER_KIND`` items of each kind drawn by a fixed
    seed among the items written from ``SITUATED_DEV_PROMPTS`` (so that items written later train and leave the
    development split as it was), both sides in file order. ``prompts``: the prompt templates (writing runs) whose
    items train (default all); dev stays the same whichever are named."""
    from pragmeter.datasets.written_situated import KINDS, load_written_situated, prompt_digests

    items = load_written_situated()
    digests = prompt_digests()
    unknown = sorted(set(prompts or ()) - set(digests))
    if unknown:
        raise PragmeterError(f"unknown situated prompt {unknown[0]!r}; choose among {', '.join(sorted(digests))}")
    eligible = {digests[template][kind] for template in SITUATED_DEV_PROMPTS for kind in KINDS}
    dev = set()
    for kind in KINDS:
        ids = sorted(item.id for item in items if item.kind == kind and item.prompt_sha256 in eligible)
        dev |= set(random.Random(f"situated-dev-{kind}").sample(ids, min(SITUATED_DEV_PER_KIND, len(ids))))
    train = [item for item in items if item.id not in dev]
    if prompts:  # only the named runs' items; with none named, every item outside dev trains, whatever its prompt
        trained = {digests[template][kind] for template in prompts for kind in KINDS}
        train = [item for item in train if item.prompt_sha256 in trained]
    return train, [item for item in items if item.id in dev]


def _held_out(items: dict, count: int, seed: str) -> tuple[list, list]:
    """(train, dev) of ``items`` (one item per key): dev is ``count`` keys drawn by the fixed ``seed``, both sides in
    key order."""
    keys = sorted(items)
    dev = set(random.Random(seed).sample(keys, min(count, len(keys))))
    return [items[k] for k in keys if k not in dev], [items[k] for k in keys if k in dev]


def _sample(items: list, cap: int | None, key: str) -> list:
    """At most ``cap`` of ``items``: a sample seeded by ``key`` where there are more (None: all of them)."""
    return random.Random(key).sample(items, cap) if cap is not None and len(items) > cap else items


def choice_examples(sources: tuple[str, ...] = ("grice",), grice_cap: int | None = 4000,
                    circa_cap: int | None = 4000, seed: int = 0,
                    root: str | os.PathLike | None = None, flute_cap: int | None = 4000,
                    sarcasm_cap: int | None = 4000, figqa_cap: int | None = 4000,
                    impli_cap: int | None = 4000, framed: float = 0.0, reworded: float = 0.0,
                    situated_cap: int | None = 4000,
                    situated_prompts: tuple[str, ...] | None = None) -> ChoiceExamples:
    """The choice items of ``sources`` (see :data:`CHOICE`), each set sampled to at most its cap (seeded); a seeded
    share ``framed`` of the figurative and sarcastic items has its sentence said in one of :data:`TRAIN_FRAMES`, and
    an independent seeded share ``reworded`` has its restated reading as a near copy (:func:`train_reworded`). The
    situated items are said in their own situation, with their four readings as written; ``situated_prompts``: the
    writing runs whose items train (:func:`situated_items`)."""
    for name, share in (("framed", framed), ("reworded", reworded)):
        if not 0.0 <= share <= 1.0:
            raise PragmeterError(f"{name} must be a share between 0 and 1, got {share!r}")
    unknown = sorted(set(sources) - set(CHOICE))
    if unknown:
        raise PragmeterError(f"unknown choice source {unknown[0]!r}; choose among {', '.join(CHOICE)}")
    premises, readings, golds, groups = [], [], [], []
    if "grice" in sources:
        for turn in _sample(grice_items(root)[0], grice_cap, f"{seed}-grice"):
            premises.append(grice_premise(turn)), readings.append(turn.options), golds.append(turn.meant)
            groups.append("grice")
    if "circa" in sources:
        for item in _sample(circa_items(root)[0], circa_cap, f"{seed}-circa-choice"):
            premises.append(item.premise), readings.append(CIRCA_LABELS)
            golds.append(CIRCA_LABELS.index(item.label)), groups.append("circa_choice")
    meant_first = {"flute": (flute_items, flute_cap), "sarcasm": (sarcasm_items, sarcasm_cap),
                   "figqa": (figqa_items, figqa_cap), "impli": (impli_items, impli_cap)}
    for name, (items, cap) in meant_first.items():  # items whose first reading is the meant one
        if name in sources:
            for i, item in enumerate(_sample(items(root)[0], cap, f"{seed}-{name}-choice")):
                key = f"{seed}-{name}-{i}"
                in_frame = random.Random(key).random() < framed
                near = random.Random(f"{key}-near").random() < reworded
                premises.append(framed_premise(item.said, key) if in_frame else item.premise)
                readings.append(restated_as(item, train_reworded(item.said, key)) if near else item.readings)
                golds.append(0)
                groups.append(f"{name}{'_framed' if in_frame else ''}{'_reworded' if near else ''}_choice")
    if "situated" in sources:
        for item in _sample(situated_items(root, situated_prompts)[0], situated_cap, f"{seed}-situated-choice"):
            premises.append(item.premise), readings.append(item.readings), golds.append(0)
            groups.append(f"situated_{item.kind}_choice")
    return ChoiceExamples(premises, readings, golds, groups)


def pragmatic_examples(sources: tuple[str, ...] = ("flute", "circa"), circa_cap: int | None = 4000, seed: int = 0,
                       root: str | os.PathLike | None = None, inli_cap: int | None = None,
                       families: tuple[str, ...] = tuple(GENERAL), cap: int | None = 6000,
                       nli_entailment: str = "explicit", set_caps: Mapping[str, int] | None = None) -> Examples:
    """INLI train (a seeded sample of ``inli_cap`` pairs; None: all) and the sets in ``sources`` (``general``: the
    ``families`` at ``cap`` pairs per set, or ``set_caps[name]``, mixed in, their entailment read as
    ``nli_entailment``)."""
    unknown = sorted(set(sources) - set(PRAGMATIC))
    if unknown:
        raise PragmeterError(f"unknown pragmatic source {unknown[0]!r}; choose among {', '.join(PRAGMATIC)}")
    train = split_examples("train", "4way", None, root)
    if inli_cap is not None and len(train) > inli_cap:
        train = train.subset(sorted(random.Random(f"{seed}-inli").sample(range(len(train)), inli_cap)))
    if "general" in sources:
        train = train.extend(general_examples(families, cap, seed, root, nli_entailment, set_caps))
    if "flute" in sources:
        train = train.extend(flute_examples(root))
    if "circa" in sources:
        train = train.extend(circa_examples(circa_items(root)[0], circa_cap, seed))
    return train


def training_files(stage: str, families: tuple[str, ...] = (), sources: tuple[str, ...] = (),
                   choice: tuple[str, ...] = ()) -> list[str]:
    """The data-root files a stage trains on besides INLI (their licences go on the card of every model made from
    it)."""
    import importlib

    from pragmeter.datasets import circa, grice
    from pragmeter.datasets.nli import files

    flute = importlib.import_module("pragmeter.datasets.pairs.flute")
    impli = importlib.import_module("pragmeter.datasets.pairs.impli")
    if choice:
        return list(dict.fromkeys(training_files(stage, families, sources)
                                  + (list(grice.FILES.values()) if "grice" in choice else [])
                                  + (list(circa.FILES) if "circa" in choice else [])
                                  + ([f"{flute.NAME}/{f}" for f in flute.FIGURATIVE if "testgolddata/" not in f]
                                     if "flute" in choice else [])
                                  + (list(SARCASM_FILES) if "sarcasm" in choice else [])
                                  + ([FIGQA_TRAIN] if "figqa" in choice else [])
                                  + ([f"{impli.NAME}/{f}" for f in impli.GOLD + impli.SILVER + impli.HARD_NEGATIVES]
                                     if "impli" in choice else [])))

    if stage == "general":
        return list(dict.fromkeys(f for family in families for name, splits in GENERAL[family].items()
                                  for split in ((splits,) if isinstance(splits, str) else splits)
                                  for f in files(name, split)))
    return ([f"{flute.NAME}/{f}" for f in flute.FIGURATIVE + flute.SARCASM if "testgolddata/" not in f]
            if "flute" in sources else []) + (list(circa.FILES) if "circa" in sources else []) + (
        training_files("general", families) if "general" in sources else [])


def build(stage: str = "pragmatic", families: tuple[str, ...] = tuple(GENERAL),
          sources: tuple[str, ...] = ("flute", "circa"), cap: int | None = 6000, circa_cap: int | None = 4000,
          seed: int = 0, root: str | os.PathLike | None = None, inli_cap: int | None = None,
          choice: tuple[str, ...] = (), grice_cap: int | None = 4000, flute_cap: int | None = 4000,
          sarcasm_cap: int | None = 4000, figqa_cap: int | None = 4000,
          impli_cap: int | None = 4000, framed: float = 0.0, reworded: float = 0.0,
          nli_entailment: str = "explicit", set_caps: Mapping[str, int] | None = None,
          situated_cap: int | None = 4000, situated_prompts: tuple[str, ...] | None = None) -> RecipeData:
    """The recipe's data for one ``stage``: ``general`` (the ``families`` of GENERAL) or ``pragmatic`` (INLI train
    with ``sources``, and the choice items of ``choice``); both validate and test on INLI. ``nli_entailment``: how the
    general sets' entailment is labelled (:data:`NLI_ENTAILMENT`); ``set_caps``: a general set's own cap in place of
    ``cap`` (by the set's name, :func:`general_sets`); ``situated_prompts``: the writing runs whose situated items
    train (default all)."""
    if stage not in STAGES:
        raise PragmeterError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
    set_caps = dict(set_caps or {})
    if stage == "general":
        train = general_examples(tuple(families), cap, seed, root, nli_entailment, set_caps)
        arguments = {"stage": stage, "families": list(families), "cap": cap}
    else:
        if set_caps and "general" not in sources:
            raise PragmeterError("set caps size the general sets mixed into the pragmatic stage: add the source "
                                 "general, or give no set caps")
        train = pragmatic_examples(tuple(sources), circa_cap, seed, root, inli_cap, tuple(families), cap,
                                   nli_entailment, set_caps)
        arguments = {"stage": stage, "sources": list(sources), "circa_cap": circa_cap, "inli_cap": inli_cap,
                     **({"families": list(families), "cap": cap} if "general" in sources else {}),
                     **({"choice": list(choice), "grice_cap": grice_cap} if choice else {}),
                     **({"flute_cap": flute_cap} if "flute" in choice else {}),
                     **({"sarcasm_cap": sarcasm_cap} if "sarcasm" in choice else {}),
                     **({"figqa_cap": figqa_cap} if "figqa" in choice else {}),
                     **({"impli_cap": impli_cap} if "impli" in choice else {}),
                     **({"situated_cap": situated_cap} if "situated" in choice else {}),
                     # recorded only when given, so a run trained on every writing run keeps its digest
                     **({"situated_prompts": sorted(situated_prompts)}
                        if situated_prompts and "situated" in choice else {}),
                     **({"framed": framed} if framed and choice else {}),
                     **({"reworded": reworded} if reworded and choice else {})}
    if nli_entailment != "explicit" and (stage == "general" or "general" in sources):
        arguments["nli_entailment"] = nli_entailment
    if set_caps:  # recorded only when given, so a run without them keeps its digest
        arguments["set_caps"] = dict(sorted(set_caps.items()))
    chosen = (choice_examples(tuple(choice), grice_cap, circa_cap, seed, root, flute_cap, sarcasm_cap, figqa_cap,
                              impli_cap, framed, reworded, situated_cap, situated_prompts)
              if choice and stage == "pragmatic" else None)
    read = list(dict.fromkeys(list(INLI_FILES) + training_files(stage, families, sources,
                                                                tuple(choice) if chosen is not None else ())))
    return RecipeData(
        name="interpreter", labels=list(LABELS), input_kind="pair", train=train,
        val=split_examples("val", "4way", None, root), test=split_examples("test", "4way", None, root),
        arguments=arguments, answer_words=ANSWER_WORDS, data_files=dataset_checksums(read),
        description=f"interpreter, {stage} stage ({len(train)} training pairs"
                    + (f", {len(chosen)} choice items" if chosen is not None else "") + ")",
        paper={"label_scheme": {k: list(v) for k, v in PAPER["4way"].items()}}, choice=chosen)


def grice_evaluator(turns: list, name: str = "grice_dev", batch_size: int = 64):
    """GRICE turns as a four-way choice of the meant reading (a ReadingChoiceEvaluator)."""
    from pragmeter.classify.evaluators import ReadingChoiceEvaluator

    return ReadingChoiceEvaluator([grice_premise(turn) for turn in turns], [list(t.options) for t in turns],
                                  [turn.meant for turn in turns], name, batch_size=batch_size)


def figurative_evaluator(items: list[FigurativeItem] | list[SarcasticItem], name: str = "flute_dev",
                         batch_size: int = 64, framed: bool = False, reworded: bool = False):
    """Figurative items as a choice among their readings, the meant one first: FLUTE's sentences (the literal
    meaning against the opposite reading and the sentence restated), sarcastic tweets (the rewrite against the tweet
    restated), Fig-QA's metaphors (as FLUTE's), the situated items written for pragmeter (their four readings, in
    their own situation); ``framed``: each sentence said in one of :data:`DEV_FRAMES` (seeded
    per item); ``reworded``: the restated reading as :func:`dev_reworded` writes it, each item in the frame the split
    without it gives (seeded by the name less ``_reworded``), so the two differ in the restatement alone; a
    ReadingChoiceEvaluator."""
    from pragmeter.classify.evaluators import ReadingChoiceEvaluator

    key = name.removesuffix("_reworded") if reworded else name
    premises = [framed_premise(item.said, f"{key}-{i}", DEV_FRAMES, DEV_SPEAKERS) if framed else item.premise
                for i, item in enumerate(items)]
    readings = [list(restated_as(item, dev_reworded(item.said)) if reworded else item.readings) for item in items]
    return ReadingChoiceEvaluator(premises, readings, [0] * len(items), name, batch_size=batch_size)


class MeantFirstSplit(NamedTuple):
    """A development split whose items put the meant reading first."""

    reader: Callable  # root -> (train, dev) items
    form: str
    chance: float
    framed: bool = False  # each sentence said in a development frame
    reworded: bool = False  # the restatement as dev_reworded writes it

    def evaluator(self, items: list, name: str, batch_size: int = 64):
        return figurative_evaluator(items, name, batch_size, self.framed, self.reworded)


MEANT_FIRST_DEV = {
    "flute_dev": MeantFirstSplit(flute_items, "3-way choice (meaning, opposite, restated)", 1 / 3),
    "sarcasm_dev": MeantFirstSplit(sarcasm_items, "2-way choice (rewrite, restated)", 0.5),
    "figqa_dev": MeantFirstSplit(figqa_items, "3-way choice (meaning, opposite, restated)", 1 / 3),
    "impli_dev": MeantFirstSplit(impli_items, "3-way choice (meaning, literal rewrite, restated)", 1 / 3),
    "figqa_dev_framed": MeantFirstSplit(figqa_items, "3-way choice, the metaphor said in a frame", 1 / 3, True),
    "impli_dev_framed": MeantFirstSplit(impli_items, "3-way choice, the sentence said in a frame", 1 / 3, True),
    "figqa_dev_framed_reworded": MeantFirstSplit(
        figqa_items, "3-way choice, the metaphor said in a frame and restated as a near copy", 1 / 3, True, True),
    "impli_dev_framed_reworded": MeantFirstSplit(
        impli_items, "3-way choice, the sentence said in a frame and restated as a near copy", 1 / 3, True, True),
    "situated_dev": MeantFirstSplit(
        situated_items, "4-way choice (meant, literal, opposite, unsupported), an utterance in its situation", 0.25)}


def yes_no_evaluator(items: list[YesNoItem], name: str = "circa_dev", batch_size: int = 64):
    """Yes/no items as a choice between the readings "yes" and "no" (LUDWIG's form; a ReadingChoiceEvaluator)."""
    from pragmeter.classify.evaluators import ReadingChoiceEvaluator

    return ReadingChoiceEvaluator([item.premise for item in items], [list(CIRCA_LABELS)] * len(items),
                                  [CIRCA_LABELS.index(item.label) for item in items], name, batch_size=batch_size)
