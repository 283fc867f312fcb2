#!/usr/bin/env bash
# Set up (if needed) and run the main job on the shipped examples:
#  1. the user's command on a relay main: lower it to a sequential tir main and
#     plan every buffer (main's and each operator's scratch) into pools;
#  2. compile a real int8 model (MLPerf Tiny KWS) to a C library, build it with
#     gcc, run it next to TFLite Micro on the same input and compare.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== usmp-opt examples/chain.mlir -p aot-lower-main,usmp"
.venv/bin/usmp-opt examples/chain.mlir -p aot-lower-main,usmp
echo
echo "== usmp-compile examples/kws_ref_model.tflite -o out/kws"
.venv/bin/usmp-compile examples/kws_ref_model.tflite -o out/kws
echo
echo "== build with gcc and run against tflite-micro"
exec .venv/bin/python -m usmp.tools.compare_tflm examples/kws_ref_model.tflite
