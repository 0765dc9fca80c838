"""The task families' generators, renderers and scorers, family by family."""
