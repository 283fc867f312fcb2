#!/usr/bin/env bash
# Set up (if needed) and run the main job on a shipped example: lower a relay
# main to a sequential tir main and plan every buffer into pools.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/usmp-opt examples/chain.mlir -p aot-lower-main,usmp "$@"
