"""Suite files: schema, loading and precise one-line errors (file, key path, expectation).

A suite is a YAML mapping with a top-level ``tasks:`` list; see ``docs/suites.md``. Any other
YAML file is not a suite and is left alone. Three rooms: ``yamlfile`` reads YAML bounded and
strict, ``schema`` holds the keys, defaults and specs, ``parse`` validates one into the other.
"""

from __future__ import annotations

from .parse import load_suite, parse_suite
from .schema import (
    DEFAULTS,
    ENTRY_KEYS,
    KEY_DOCS,
    LEVEL_KEYS,
    MAX_REPEATS,
    MAX_SAMPLES,
    SUITE_KEYS,
    Address,
    EntrySpec,
    LevelSpec,
    SuiteSpec,
    addresses,
)
from .yamlfile import MAX_SUITE_BYTES, is_suite_file, parse_param

__all__ = [
    "DEFAULTS",
    "ENTRY_KEYS",
    "KEY_DOCS",
    "LEVEL_KEYS",
    "MAX_REPEATS",
    "MAX_SAMPLES",
    "MAX_SUITE_BYTES",
    "SUITE_KEYS",
    "Address",
    "EntrySpec",
    "LevelSpec",
    "SuiteSpec",
    "addresses",
    "is_suite_file",
    "load_suite",
    "parse_param",
    "parse_suite",
]
