#!/usr/bin/env bash
# Set up (if needed) and run the main job on the shipped examples:
#  1. the user's command on a relay main: lower it to a sequential tir main and
#     plan every buffer (main's and each operator's scratch) into pools;
#  2. compile a real int8 model (MLPerf Tiny KWS) to a C library with its
#     firmware kit, build the kit's example with make and run it on an input
#     file; then build the library with gcc, run it next to TFLite Micro on
#     the same inputs and compare.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== usmp-opt examples/chain.mlir -p aot-lower-main,usmp"
.venv/bin/usmp-opt examples/chain.mlir -p aot-lower-main,usmp
echo
echo "== usmp-compile examples/kws_ref_model.tflite -o out/kws"
.venv/bin/usmp-compile examples/kws_ref_model.tflite -o out/kws
echo
echo "== firmware kit: make -C out/kws example; run it on one input file"
make -s -C out/kws example
.venv/bin/python -c "import numpy as np; np.random.default_rng(0).integers(-128, 128, 490).astype(np.int8).tofile('out/kws/input_1.bin')"
out/kws/build/tvmgen_default_example out/kws/input_1.bin
echo
echo "== build with gcc and run against tflite-micro"
exec .venv/bin/python -m usmp.testing.compare_tflm examples/kws_ref_model.tflite
