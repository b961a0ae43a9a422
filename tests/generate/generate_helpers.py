"""Helpers of the generation tests: 20 real input rows from the data root, scripted answers, the CLI call."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pragmeter.cli import main
from pragmeter.data.root import data_file
from pragmeter.testing.fake_server import FakeChatServer

N_ROWS = 20
HATE_FILE = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg3_posts.tsv"


def real_posts(tmp_path: Path, n: int = N_ROWS) -> Path:
    posts = pd.read_csv(data_file(HATE_FILE), sep="\t", dtype=str)["post"].head(n).map(lambda t: " ".join(t.split()))
    path = tmp_path / "posts.csv"
    posts.to_frame("text").to_csv(path, index=False)
    return path


def real_circa_frames(tmp_path: Path) -> Path:
    frames = pd.read_csv(data_file("circa/data/CIRCA/unmatched/scenario0/circa-data-test.tsv"), sep="\t", dtype=str)
    path = tmp_path / "frames.tsv"
    frames.head(N_ROWS).to_csv(path, sep="\t", index=False)
    return path


def real_questions(tmp_path: Path, n: int) -> Path:
    questions = pd.read_csv(data_file("drinq/drinq_validated.csv"), dtype=str)["question"].head(n)
    path = tmp_path / "questions.csv"
    questions.to_frame("question").to_csv(path, index=False)
    return path


def real_dialogues(tmp_path: Path) -> Path:
    """The first 20 dialogues that have a word with several implications (the ones the filter asks about)."""
    data = json.loads(data_file("emphasized_talk/data.json").read_text(encoding="utf-8"))
    chosen = {k: v for k, v in data.items() if any(len(i) >= 2 for i in v["emphasis"].values())}
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(dict(list(chosen.items())[:N_ROWS])), encoding="utf-8")
    return path


def user_text(request: dict) -> str:
    return request["messages"][-1]["content"]


class Scripted:
    """A responder that counts how often each prompt was asked, so an answer can change on a retry."""

    def __init__(self, answer):
        self.answer = answer
        self.seen: dict[str, int] = {}

    def __call__(self, request: dict) -> str | None:
        key = json.dumps(request["messages"], sort_keys=True)
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.answer(request, self.seen[key])


def generate(server: FakeChatServer, *args: str) -> int:
    model_args = f"base_url={server.url},model=fake-model,concurrency=4,max_retries=1,backoff=0.01"
    return main(["generate", *args, "--model-args", model_args, "--no-progress"])
