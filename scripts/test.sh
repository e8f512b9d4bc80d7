#!/usr/bin/env bash
# Set up everything the tests need, then run the whole suite. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check .            # lint (settings: pyproject.toml [tool.ruff])
.venv/bin/ruff format --check .   # the formatter would change nothing
exec .venv/bin/python -m pytest -q "$@"
