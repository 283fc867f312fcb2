#!/usr/bin/env bash
# Set up (if needed) and run every test: pytest is the outer runner, on every
# core (pytest-xdist); the lit FileCheck suite runs inside it
# (tests/test_lit.py). The slowest tests' durations are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/python -m pytest -q -n auto --durations=15 "$@"
