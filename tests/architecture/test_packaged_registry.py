"""One registry of packaged models (pragmeter.packaged): ImpScore models and interpreters are found, listed and
defaulted by the same code, and each kind's loader goes through it."""

from __future__ import annotations

import pytest

from pragmeter.errors import PragmeterError
from pragmeter.impscore.model import resolve_model_dir, shipped_models
from pragmeter.interpreter.hub import resolve_interpreter, shipped_interpreters
from pragmeter.packaged import REGISTRY


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_each_kind_ships_its_default_and_an_environment_variable_names_another(kind, monkeypatch):
    models = REGISTRY[kind]
    assert models.default in models.names()
    monkeypatch.delenv(models.env, raising=False)
    assert models.locate(None) == models.folder / models.default
    other = next(name for name in models.names() if name != models.default)
    monkeypatch.setenv(models.env, other)
    assert models.default_name() == other and models.locate(None) == models.folder / other


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_a_folder_with_a_config_is_taken_as_it_is_and_anything_else_is_not_found(kind, tmp_path):
    models = REGISTRY[kind]
    (tmp_path / "mine").mkdir()
    assert models.locate(tmp_path / "mine") is None  # no config.json: not a model folder
    (tmp_path / "mine" / "config.json").write_text("{}")
    assert models.locate(tmp_path / "mine") == tmp_path / "mine"
    assert models.locate("no-such-model") is None


def test_both_loaders_list_and_resolve_through_the_registry(monkeypatch):
    assert shipped_models() == REGISTRY["impscore"].names()
    assert shipped_interpreters() == REGISTRY["interpreter"].names()
    monkeypatch.setenv("PRAGMETER_IMPSCORE", "impscore-minilm")
    monkeypatch.setenv("PRAGMETER_INTERPRETER", "interpreter-minilm-inli")
    assert resolve_model_dir(None).name == "impscore-minilm"
    assert resolve_interpreter(None).name == "interpreter-minilm-inli"
    with pytest.raises(PragmeterError, match="no ImpScore model at 'no-such-model'.*impscore-minilm"):
        resolve_model_dir("no-such-model")
    with pytest.raises(PragmeterError, match="no interpreter at 'no-such-model'.*interpreter-minilm-inli"):
        resolve_interpreter("no-such-model")
