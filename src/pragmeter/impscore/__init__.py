"""ImpScore: the model (``model``), its heads, losses, training, corpus and scoring of columns.

``ImpScore.load`` is the one entry point that loads a model for scoring (backend, precision, embedding cache)."""


def __getattr__(name: str):
    # Lazy, so that importing a submodule (e.g. the corpus builder) does not import the model's dependencies.
    if name == "ImpScore":
        from pragmeter.impscore import model

        return getattr(model, name)
    raise AttributeError(name)
