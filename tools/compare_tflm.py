"""``python -m usmp.tools.compare_tflm model.tflite``: compile a model to C,
build and run it with gcc, run TFLite Micro on the same seeded input, and say
whether they agree (int8 bit for bit, float within 1e-5 relative).
``--steps N`` runs each seed as a sequence of N invocations (one library
instance after ``init`` and one TFLite Micro interpreter, so the state of a
streaming model carries over) and compares every step.

Exit status 0 when every output agrees, 1 otherwise; a model that cannot be
compiled (unsupported or damaged) or that TFLite Micro cannot run gives
``<model>: error: <why>`` on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException

from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import damaged_model_errors, read_model_file
from usmp.testing.run_c import CRunError, run_module_sequence
from usmp.testing.tflm_reference import (
    TFLMError,
    difference,
    random_inputs,
    run_tflm_sequence,
)

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a .tflite file")
    parser.add_argument(
        "--seeds", type=int, default=3, help="inputs to try (default 3)"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=1,
        help="invocations per seed, the state carried over (default 1)",
    )
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    try:
        return _compare(args.model, args.seeds, args.steps)
    except DiagnosticException as e:
        print(str(e), file=sys.stderr)
        return 1
    except TFLMError as e:
        print(f"{args.model.name}: error: {e}", file=sys.stderr)
        return 1
    except CRunError as e:
        print(f"{args.model.name}: error: the generated C failed: {e}", file=sys.stderr)
        return 1


def _compare(path: Path, seeds: int, steps: int = 1) -> int:
    with damaged_model_errors(path):
        model = read_model_file(path)
        module = import_model(model)
    data = path.read_bytes()
    failures = 0
    for seed in range(seeds):
        sequence = [random_inputs(model, seed + 1000 * k) for k in range(steps)]
        ours = run_module_sequence(module, sequence, passes=PIPELINE)
        reference = run_tflm_sequence(data, sequence, tensors=list(model.outputs))
        for step in range(steps):
            pairs = zip(ours[step], reference[step], strict=True)
            for k, (got, want) in enumerate(pairs):
                problem = difference(got, want.reshape(got.shape))
                verdict = "matches TFLite Micro" if problem is None else problem
                at = f"seed {seed}" + (f", step {step}" if steps > 1 else "")
                print(f"{at}, output {k} {got.dtype}{list(got.shape)}: {verdict}")
                print(f"  ours: {got.reshape(-1)[:12].tolist()}")
                failures += problem is not None
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
