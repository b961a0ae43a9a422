"""The classifier commands' library pieces: the SVM C grid and the DRInQ run's output checks (before any model
loads)."""

from __future__ import annotations

import pytest

from pragmeter.errors import PragmeterError


def test_c_values_are_comma_separated_positive_numbers():
    from pragmeter.classify.svm import parse_c_values

    assert parse_c_values("1, 4,16,") == [1.0, 4.0, 16.0]
    for bad in ("", "1,x", "0,4", "-1"):
        with pytest.raises(PragmeterError, match=f"svm_c={bad!r}: expected comma-separated positive numbers"):
            parse_c_values(bad)


def test_drinq_nli_refuses_existing_outputs_before_loading_anything(tmp_path):
    from pragmeter.interpreter.drinq import drinq_nli

    predictions = tmp_path / "items.csv"
    predictions.write_text("x\n")
    with pytest.raises(PragmeterError, match="items.csv exists; pass overwrite=True"):
        next(drinq_nli(tmp_path / "no-such-model", output=tmp_path / "r.json", predictions=predictions))
