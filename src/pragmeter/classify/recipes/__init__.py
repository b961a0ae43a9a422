"""Training recipes, one module each: ``build(args) -> RecipeData`` from the data root."""
