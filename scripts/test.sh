#!/usr/bin/env bash
# Set up, lint, and run the whole test suite against the real embedded PostgreSQL and model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/lint-imports --no-cache  # the layer contracts of pyproject.toml
.venv/bin/python -m pytest "$@"
