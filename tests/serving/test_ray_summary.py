"""What ``pragmeter score --engine ray`` says about a run (no Ray needed: the summary of its counts)."""

from __future__ import annotations

from pragmeter.scale.ray_engine import summary_lines

SUMMARY = {"scored": 9, "rows": 10, "files": 2, "actors": 3, "backend": "openvino", "precision": "bf16", "failed": 1}


def test_summary_names_counts_settings_and_failed_rows():
    assert summary_lines(SUMMARY, "out") == [
        "scored 9 of 10 rows from 2 file(s) with 3 actor(s) (openvino, bf16) -> out",
        "warning: 1 row(s) not scored (reason in column 'impscore_error')"]
    assert len(summary_lines({**SUMMARY, "failed": 0}, "out")) == 1
