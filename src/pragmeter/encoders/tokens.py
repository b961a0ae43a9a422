"""Token ids for an encoder, safe to ask from many threads at once and bounded in memory for any text length.

The ``tokenizers`` library keeps truncation as state of the tokenizer object; a caller that switches it per call
races every other thread using the same object (rows longer than the limit came out). Here each tokenizer object is
configured once, when it is made, and never changed: one that truncates at the encoder's limit, one that does not
(for counting). A text far longer than any encoder takes is cut by characters before it is tokenized (a 50 MB line
would otherwise become millions of tokens), generously enough that the tokens the encoder keeps are the same.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

CHARS_PER_TOKEN = 32  # a text is cut at limit × this many characters before tokenizing (real text: ~4-6 per token)


def cut_long_text(text: str, max_tokens: int, count_tokens: Callable[[str], int]) -> str:
    """``text``, or a prefix of it whose first ``max_tokens`` tokens are the text's own: cut at ``max_tokens`` ×
    CHARS_PER_TOKEN characters, and longer (4× a step) while the prefix has fewer than twice ``max_tokens`` tokens
    (long runs of spaces): the word cut at the end lies beyond what truncation keeps."""
    chars = max_tokens * CHARS_PER_TOKEN
    while len(text) > chars:
        prefix = text[:chars]
        if count_tokens(prefix) >= 2 * max_tokens:
            return prefix
        chars *= 4
    return text


def tokens_over_limit(encoder, texts: list[str]) -> int:
    """How many of ``texts`` are longer than ``encoder``'s token limit, which truncates them: any encoder with a
    ``tokenizer`` and ``max_seq_length`` (sentence-transformers, the ONNX and OpenVINO encoders); 0 without them."""
    limit, tokenizer = getattr(encoder, "max_seq_length", None), getattr(encoder, "tokenizer", None)
    if not limit or tokenizer is None or not texts:
        return 0
    if hasattr(encoder, "count_truncated"):  # the graph encoders (pragmeter.encoders.graph)
        return encoder.count_truncated(texts)
    # counted without changing the shared tokenizer's truncation (another thread may be encoding with it), and
    # without tokenizing more of a huge text than decides the answer
    count = token_counter(tokenizer)
    return sum(count(cut_long_text(text, limit, count)) > limit for text in texts)


class FastTokenizer:
    """The encoder folder's ``tokenizer.json`` through the ``tokenizers`` library (what the transformers fast
    tokenizer runs, without importing transformers or torch). Used only for sentence-transformers folders of
    Transformer + mean/CLS Pooling."""

    def __init__(self, folder: Path, max_seq_length: int, dimension: int) -> None:
        from tokenizers import Tokenizer

        whole = Tokenizer.from_file(str(folder / "tokenizer.json"))
        whole.no_padding()  # tokenizer.json may carry a fixed padding and truncation: batches set their own
        whole.no_truncation()
        truncating = Tokenizer.from_str(whole.to_str())
        truncating.enable_truncation(max_seq_length)  # set once: never switched per call (threads share it)
        self._whole, self._truncating = whole, truncating
        special = json.loads((folder / "special_tokens_map.json").read_text(encoding="utf-8"))
        pad = special.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        self.pad_token_id = whole.token_to_id(pad) if pad else 0
        self.max_seq_length, self.dimension = max_seq_length, dimension

    @classmethod
    def from_folder(cls, encoder_name: str) -> "FastTokenizer | None":
        """None when the folder lacks what is needed (then the sentence-transformers model is loaded instead)."""
        import importlib.util

        from pragmeter.encoders import require_encoder
        from pragmeter.encoders.registry import encoder_width

        if importlib.util.find_spec("tokenizers") is None:
            return None
        folder = Path(require_encoder(encoder_name))
        dimension = encoder_width(folder)  # None: not the plain Transformer-Pooling layout
        if dimension is None:
            return None
        try:
            config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
            if config.get("do_lower_case"):
                return None
            tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
            limit = min(int(config["max_seq_length"]), int(tokenizer_config.get("model_max_length", 1 << 30)))
            return cls(folder, limit, dimension)
        except (OSError, KeyError, ValueError, IndexError):
            return None

    def count(self, text: str) -> int:
        """Tokens of ``text``, special tokens included, untruncated."""
        return len(self._whole.encode(text).ids)

    def tokenize(self, texts: Sequence[str]) -> tuple[list[list[int]], list[bool]]:
        """Token ids as sentence-transformers makes them (special tokens, truncated to the limit) and whether each
        text was truncated, from one tokenization."""
        cut = [cut_long_text(text, self.max_seq_length, self.count) for text in texts]
        encodings = self._truncating.encode_batch(cut)
        return [e.ids for e in encodings], [bool(e.overflowing) for e in encodings]


class TransformersTokenizer:
    """A transformers tokenizer (of an encoder FastTokenizer does not cover) behind the same calls. transformers
    sets truncation on its shared backend per call: a caller counting untruncated tokens races one that truncates,
    so counting goes through an untruncating copy of the backend (:func:`token_counter`)."""

    def __init__(self, tokenizer, max_seq_length: int, dimension: int) -> None:
        self._tokenizer, self.pad_token_id = tokenizer, tokenizer.pad_token_id or 0
        self.max_seq_length, self.dimension = max_seq_length, dimension
        self.count = token_counter(tokenizer)

    def tokenize(self, texts: Sequence[str]) -> tuple[list[list[int]], list[bool]]:
        """As FastTokenizer.tokenize."""
        cut = [cut_long_text(text, self.max_seq_length, self.count) for text in texts]
        ids = self._tokenizer(cut, truncation=True, max_length=self.max_seq_length, return_attention_mask=False,
                              return_token_type_ids=False)["input_ids"]
        return ids, [self.count(text) > self.max_seq_length for text in cut]


def token_counter(tokenizer) -> Callable[[str], int]:
    """Untruncated token count of one text (special tokens included) by a transformers ``tokenizer``, never changing
    its state: a fast tokenizer's backend is copied once per tokenizer, untruncated and unpadded."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:  # a slow (Python) tokenizer takes truncation per call, without shared state
        return lambda text: len(tokenizer(text, add_special_tokens=True, verbose=False)["input_ids"])
    with _COPIES_LOCK:
        counter = _COPIES.get(tokenizer)
        if counter is None:
            from tokenizers import Tokenizer

            copy = Tokenizer.from_str(backend.to_str())
            copy.no_truncation()
            copy.no_padding()
            counter = _COPIES[tokenizer] = lambda text: len(copy.encode(text).ids)
    return counter


_COPIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # transformers tokenizer -> its untruncated counter
_COPIES_LOCK = threading.Lock()
