#!/usr/bin/env bash
# Set up (if needed) and run every test: pytest is the outer runner; the lit
# FileCheck suite runs inside it (tests/test_lit.py).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
