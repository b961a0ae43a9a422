"""LLM-written word-sharing distractors as ImpScore hard negatives (issue 11 experiment; nothing shipped).

    python tools/llm_distractors.py generate   # the local 1.5B model, temperature 0, ~35 min on 2 cores; resumable
    python tools/llm_distractors.py corpus     # filter, then runs/distractors/corpus_{replace,add}.parquet
    python tools/impscore_choice_variants.py runs/distractors/corpus_add.parquet '[{"name":"add-hn2","hn":"source","ha":2.0,"seeds":[0,1,2]}]'

``generate`` asks for one literal sentence that reuses the words of each implicit training sentence of bbh_snarks,
r3_sarcasm and ludwig and of 900 sampled level-3/4 sentences of the written groups (runs/corpus_default.parquet)
but says something else: the battery's distractor style, by a writer other than the one of our groups.
``corpus`` drops copies (word Jaccard >= 0.7), sentences sharing no content word, over-long ones and paraphrases
(mpnet cosine >= 0.88), then sets ``hard_negative`` of the train pairs whose implicit side has a distractor:
"replace" everywhere, "add" only where the pair had none (our groups keep their written distractors).
Results: docs/results.md, "LLM-written distractors".
"""
import asyncio
import hashlib
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path("runs/distractors")
SYSTEM = ("Write a sentence that reuses the main words of the user's sentence but states a different, plain fact "
          "about them, taken literally. It must not mean the same as the user's sentence, must not be a request, and "
          "must not hint at what the user's speaker wanted. "
          "Example: \"Can you reach the salt?\" -> \"The salt is on a shelf nobody can reach.\" "
          "Example: \"Nice weather for ducks today.\" -> \"Ducks were swimming in the pond today.\" "
          "Example: \"My glass seems to be empty.\" -> \"This glass is empty because it was just washed.\" "
          "Answer with the new sentence only.")


def generate(threads: str = "2") -> None:
    from pragmeter.llm.backends import load_backend
    from pragmeter.llm.batch import Prompt, answer_all, cached_clients

    corpus = pd.read_parquet("runs/corpus_default.parquet")
    train = corpus[corpus.split == "train"]
    pick = []
    for source in ["bbh_snarks", "r3_sarcasm", "ludwig"]:
        pick += sorted(set(train[train.source == source].implicit))
    written = train[(train.source == "written_graded_everyday") & train.origin.str.contains(r":L[34]>")]
    pick += pd.Series(sorted(set(written.implicit))).sample(900, random_state=0).tolist()
    print(len(pick), "sentences", file=sys.stderr)

    async def main():
        backend = load_backend("gguf:qwen2.5-coder-1.5b", {"threads": threads})
        async with cached_clients(OUT / "responses.jsonl", backend) as (client,):
            return await answer_all(client, [Prompt([{"role": "system", "content": SYSTEM}, {"role": "user", "content": x}], 48)
                                             for x in pick], "distractors")
    answers = asyncio.run(main())
    pd.DataFrame({"implicit": pick, "distractor": [a.text for a in answers], "generator_model": "qwen2.5-coder-1.5b",
                  "prompt_sha256": hashlib.sha256(SYSTEM.encode()).hexdigest()[:12]}).to_parquet(OUT / "raw.parquet")


def build_corpora() -> None:
    from pragmeter.encoders import embeddings_dir, load_encoder
    from pragmeter.encoders.embedding_cache import EmbeddingCache
    from pragmeter.generate.graded import clean_rewrite
    from pragmeter.metrics.overlap import FUNCTION_WORDS, word_jaccard, words

    raw = pd.read_parquet(OUT / "raw.parquet")
    reasons = []
    kept = []
    for implicit, answer in zip(raw.implicit, raw.distractor):
        text = clean_rewrite(answer or "").strip('"')
        why = None
        if len(re.findall(r"[^\W\d_]", text)) < 2:
            why = "empty"
        elif len(re.findall(r"[.!?](?:\s|$)", text.strip())) > 2:
            why = "more than two sentences"
        elif len(text.split()) > 2 * len(implicit.split()) + 10:
            why = "too long"
        elif word_jaccard(text, implicit) >= 0.7:
            why = "copy"
        elif not ((words(text) & words(implicit)) - FUNCTION_WORDS):
            why = "shares no content word"
        reasons.append(why)
        kept.append(text)
    raw["clean"], raw["reason"] = kept, reasons
    ok = raw[raw.reason.isna()].copy()
    enc = "all-mpnet-base-v2"
    cache = EmbeddingCache(embeddings_dir(), enc)
    model = load_encoder(enc, None)
    emb = lambda t: cache.get_or_compute(list(t), lambda b: model.encode(b, batch_size=32))
    a, b = emb(ok.implicit), emb(ok.clean)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    ok["cosine"] = cos
    raw.loc[ok.index[cos >= 0.88], "reason"] = "paraphrase (mpnet cosine >= 0.88)"
    print(raw.reason.fillna("kept").value_counts().to_string())
    good = raw[raw.reason.isna()].set_index("implicit")["clean"]
    good.to_frame("distractor").to_parquet(OUT / "kept.parquet")
    corpus = pd.read_parquet("runs/corpus_default.parquet")
    train = corpus.split == "train"
    llm = corpus.implicit.map(good)
    for name, mask in [("replace", train & llm.notna()), ("add", train & llm.notna() & corpus.hard_negative.isna())]:
        variant = corpus.copy()
        variant.loc[mask, "hard_negative"] = llm[mask]
        variant.to_parquet(OUT / f"corpus_{name}.parquet")
        print(name, int(mask.sum()), "train pairs get an LLM distractor;", int(variant[train].hard_negative.notna().sum()), "with any")


if __name__ == "__main__":
    {"generate": generate, "corpus": build_corpora}[sys.argv[1]](*sys.argv[2:])
