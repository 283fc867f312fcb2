"""``python -m usmp.tools.compare_tflm model.tflite``: compile a model to C,
build and run it with gcc, run TFLite Micro on the same seeded input, and say
whether they agree (int8 bit for bit, float within 1e-5 relative).

Exit status 0 when every output agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.tools.run_c import run_module
from usmp.tools.tflm_reference import difference, random_inputs, run_tflm

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a .tflite file")
    parser.add_argument(
        "--seeds", type=int, default=3, help="inputs to try (default 3)"
    )
    args = parser.parse_args(argv)

    model = read_model_file(args.model)
    module = import_model(model)
    data = args.model.read_bytes()
    failures = 0
    for seed in range(args.seeds):
        inputs = random_inputs(model, seed)
        ours = run_module(module, inputs, passes=PIPELINE)
        reference = run_tflm(data, inputs, list(model.outputs))
        for k, (got, want) in enumerate(zip(ours, reference, strict=True)):
            problem = difference(got, want)
            verdict = "matches TFLite Micro" if problem is None else problem
            print(f"seed {seed}, output {k} {got.dtype}{list(got.shape)}: {verdict}")
            print(f"  ours: {got.reshape(-1)[:12].tolist()}")
            failures += problem is not None
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
