#!/usr/bin/env bash
# Set up a fresh machine: MLIR 22 tools (for the composition tests), a venv
# with usmp-opt installed in editable mode with its dev extras.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v /usr/lib/llvm-22/bin/mlir-opt >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mlir-22-tools gcc g++ >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e '.[dev]'
