"""`pragmeter eval --sample N`: a seeded, gold-stratified sample whose smaller sizes are prefixes of larger ones."""

from __future__ import annotations

from collections import Counter

from pragmeter.testing.fake_server import constant
from pragmeter.eval.runner import stratified_order
from pragmeter.tasks.inli import Inli

from eval_helpers import run_eval


def test_every_prefix_keeps_the_label_shares_and_seeds_differ():
    task = Inli()
    order = stratified_order(task, seed=0)
    assert sorted(map(task.item_id, order)) == sorted(map(task.item_id, task.items()))  # a permutation
    shares = Counter(task.gold(item) for item in task.items())
    for n in (8, 40, 100):
        counts = Counter(task.gold(item) for item in order[:n])
        for label, total in shares.items():
            assert abs(counts[label] - n * total / len(task.items())) <= 1, (n, label)
    assert [task.item_id(i) for i in stratified_order(task, 1)[:20]] != [task.item_id(i) for i in order[:20]]
    assert [task.item_id(i) for i in stratified_order(Inli(), 0)[:20]] == [task.item_id(i) for i in order[:20]]


def test_a_larger_sample_reuses_the_smaller_ones_answers(tmp_path, fake_server):
    server = fake_server(constant("Neutral"))
    small = run_eval(tmp_path, server, "inli", "--sample", "8", "--sample-seed", "3")
    result = small["results"]["inli"]
    assert small["sample"] == {"n": 8, "seed": 3, "stratified_by": "gold"} and result["n_items"] == 8
    assert "|sample=8,seed=3,stratified|" in result["signature"]
    assert result["metrics"]["accuracy_per_label"] == {"implied": 0.0, "explicit": 0.0, "neutral": 1.0,
                                                       "contradiction": 0.0}  # every label present
    larger = run_eval(tmp_path, server, "inli", "--sample", "12", "--sample-seed", "3", "--overwrite")["results"]["inli"]
    assert larger["cache_hits"] == 8 and server.total_calls == 12
