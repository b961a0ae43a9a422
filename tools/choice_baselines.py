"""Choice checks of our OOD development sets with raw representations instead of ImpScore's pragmatic distance
(issue 11): how far do the sentence encoders themselves, or the local LLM's state, put the meant reading?

    python tools/choice_baselines.py                 # cosine of all-mpnet-base-v2 and all-MiniLM-L6-v2 embeddings
    python tools/choice_baselines.py --llm-probe     # Qwen2.5-Coder-1.5B (packaged GGUF), battery only (~12 min)
    python tools/choice_baselines.py --llm-reader    # the same LLM asked to pick the meant reading (~7 min)

The probe embeds each sentence as the last-token state of the model after "What does the speaker really mean by
saying: …" and "The speaker means:" (llama.cpp embeddings, one thread). The reader asks the LLM which option the
speaker means, lettered, and reads the letters' log-probabilities (`pragmeter.llm.choice`); each item is asked once
per rotation of its options and the rotations' log-probabilities are summed, so a preferred letter position cannot
decide (one thread)."""
import argparse
import json

import numpy as np

from pragmeter.impscore import ood

PROBE = ('<|im_start|>user\nWhat does the speaker really mean by saying: "{s}"<|im_end|>\n'
         '<|im_start|>assistant\nThe speaker means:')


class CosineDistance:
    """The ``pragmatic_distance`` interface of ImpScore over any unit-vector embedding function."""

    def __init__(self, embed):
        self.embed, self.memory = embed, {}

    def vectors(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.memory]
        if missing:
            self.memory.update(zip(missing, self.embed(missing)))
        return np.stack([self.memory[t] for t in texts])

    def pragmatic_distance(self, a, b):
        return 1.0 - (self.vectors(list(a)) * self.vectors(list(b))).sum(1)


READER = 'Someone says: "{s}"\nWhat does the speaker actually mean?\n{options}\nAnswer with the letter only.'


def llm_server(embedding: bool, threads: int):
    import xllamacpp

    from pragmeter.llm.packaged import packaged_model_path  # joins and checks the packaged parts once

    params = xllamacpp.CommonParams()
    params.model.path = str(packaged_model_path("qwen2.5-coder-1.5b"))
    params.embedding, params.offline, params.n_ctx, params.n_parallel = embedding, True, 2048, 1
    if embedding:
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
    return xllamacpp.Server(params)


def llm_reader_accuracy(server, items) -> float:
    """Share of (utterance, options, answer) items whose meant reading the LLM picks, over all rotations."""
    from pragmeter.llm.choice import TOP_LOGPROBS, option_logprobs

    right = 0
    for utterance, options, answer in items:
        n, total = len(options), np.zeros(len(options))
        letters = {chr(65 + k): chr(65 + k) for k in range(n)}
        for shift in range(n):
            order = [(k + shift) % n for k in range(n)]
            listed = "\n".join(f"{chr(65 + k)}. {options[j]}" for k, j in enumerate(order))
            reply = server.handle_chat_completions({
                "model": "reader", "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": TOP_LOGPROBS,
                "messages": [{"role": "user", "content": READER.format(s=utterance, options=listed)}]})
            alternatives = [(a["token"], a["logprob"]) for a in reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]]
            scores = option_logprobs(alternatives, letters)
            logp = np.array([scores[chr(65 + k)] for k in range(n)])
            logp = np.maximum(logp, -30.0) - np.logaddexp.reduce(np.maximum(logp, -30.0))  # unseen letters: ~0
            for k, j in enumerate(order):
                total[j] += logp[k]
        right += int(np.argmax(total) == answer)
    return right / len(items)


def encoder_embedding(name: str):
    from pragmeter.encoders import load_encoder

    encoder = load_encoder(name)
    return lambda texts: encoder.encode(texts, normalize_embeddings=True)


def llm_embedding():
    server = llm_server(embedding=True, threads=1)

    def embed(texts):
        out = []
        for text in texts:
            reply = server.handle_embeddings({"input": [PROBE.format(s=text)], "model": "probe"})
            vector = np.asarray(reply["data"][0]["embedding"], dtype=np.float32)
            out.append(vector / np.linalg.norm(vector))
        return out
    return embed


def battery_choice(model) -> float:
    items = [ood.ChoiceItem(i.id, i.utterance, i.options, i.answer)
             for i in ood.load_battery(ood.DATA_DIR / "dev_battery.json")]
    return ood.evaluate_choice(model, items)["accuracy"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm-probe", action="store_true", help="the local LLM's state, battery only")
    parser.add_argument("--llm-reader", action="store_true", help="the local LLM picking the meant reading")
    args = parser.parse_args()
    if args.llm_reader:
        server = llm_server(embedding=False, threads=1)
        battery = [(i.utterance, i.options, i.answer) for i in ood.load_battery(ood.DATA_DIR / "dev_battery.json")]
        choice = [(i.reference, i.options, i.answer) for i in ood.load_choice(ood.DATA_DIR / "dev_choice.json")]
        print(json.dumps({"representation": "qwen2.5-coder-1.5b reader", "battery_b": llm_reader_accuracy(server, battery),
                          "dev_choice": llm_reader_accuracy(server, choice)}))
    elif args.llm_probe:
        print(json.dumps({"representation": "qwen2.5-coder-1.5b probe", "battery_b": battery_choice(CosineDistance(llm_embedding()))}))
    else:
        groups = ood.load_ranking(ood.DATA_DIR / "dev_ranking.json")
        for name in ("all-mpnet-base-v2", "all-MiniLM-L6-v2"):
            model = CosineDistance(encoder_embedding(name))
            print(json.dumps({"representation": name,
                              "group_choice": ood.evaluate_choice(model, ood.choice_from_groups(groups))["accuracy"],
                              "paper_choice": ood.paper_group_choice(model, groups),
                              "dev_choice": ood.evaluate_choice(model, ood.load_choice(ood.DATA_DIR / "dev_choice.json"))["accuracy"],
                              "battery_b": battery_choice(model)}))
