"""The pytest-reasoning command line."""
