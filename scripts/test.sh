#!/usr/bin/env bash
# Set up everything the tests need, then run the whole suite. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check .            # lint (settings: pyproject.toml [tool.ruff])
.venv/bin/ruff format --check .   # the formatter would change nothing
.venv/bin/python -m pytest -q "$@"
[ "$#" -eq 0 ] || exit 0
# The tests whose expected outputs model scores decide, again as on another machine of this kind
# (docs/numerics.md; scripts/regimes.sh runs the whole suite under each regime).
echo "again with ONEDNN_MAX_CPU_ISA=AVX2 OMP_NUM_THREADS=1:"
ONEDNN_MAX_CPU_ISA=AVX2 OMP_NUM_THREADS=1 .venv/bin/python -m pytest -q tests/test_docs_examples.py tests/test_demo.py tests/generators/test_distributed.py
