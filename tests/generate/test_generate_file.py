"""``generate.output.generate_file``, what ``pragmeter generate PIPELINE`` calls: the output is checked before the
backend is built, and requests that fail after every retry are counted (the command says so and exits 3)."""

from __future__ import annotations

import pytest
from generate_helpers import real_posts, user_text

from pragmeter.errors import PragmeterError
from pragmeter.generate.drinq import DrinqOptions
from pragmeter.generate.output import generate_file


def never():
    raise AssertionError("backend built before the output check")


def test_an_existing_output_is_refused_before_the_backend_is_built(tmp_path):
    output = tmp_path / "pairs.csv"
    output.write_text("x\n")
    with pytest.raises(PragmeterError, match="pairs.csv exists; pass overwrite=True"):
        generate_file("pairs:generate_pairs", tmp_path / "posts.csv", output, never, None)


def test_failed_requests_are_counted(tmp_path, fake_server):
    from pragmeter.llm.backends import load_backend

    posts = real_posts(tmp_path)
    server = fake_server(lambda request: f'Explicit version: "Said plainly: {len(user_text(request))} characters."',
                         fault_rate=0.3, faults=("500",))
    backend = load_backend("openai-chat", {"base_url": server.url, "model": "fake-model", "max_retries": "0",
                                           "concurrency": "1"})
    failed = generate_file("pairs:generate_pairs", posts, tmp_path / "pairs.csv", lambda: backend, None, progress=False,
                           column="text", source_type="hate", source_name=None, paper_source=None, seed=0)
    assert 0 < failed == server.faults_sent["500"] < 20


def test_the_command_says_failed_requests_and_exits_3(tmp_path, fake_server, capsys):
    from pragmeter.cli import main

    posts = real_posts(tmp_path)
    server = fake_server(lambda request: f'Explicit version: "Said plainly: {len(user_text(request))} characters."',
                         fault_rate=0.3, faults=("500",))
    code = main(["generate", "pairs", "--input", str(posts), "--output", str(tmp_path / "pairs.csv"), "--no-progress",
                 "--source-type", "hate",
                 "--model-args", f"base_url={server.url},model=fake-model,max_retries=0,concurrency=1"])
    failed = server.faults_sent["500"]
    assert code == 3 and failed > 0
    assert f"warning: {failed} request(s) failed after retries and were left out" in capsys.readouterr().err


def test_drinq_options_refuse_a_similarity_bound_outside_0_1():
    for bad in (0.0, 1.5):
        with pytest.raises(PragmeterError, match=r"max_similarity=.*: must be in \(0, 1\]"):
            DrinqOptions(max_similarity=bad)
    assert DrinqOptions(max_similarity=1.0).max_similarity == 1.0
