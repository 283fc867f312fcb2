"""Real streaming models from a public package, against TFLite Micro.

    python benchmarks/wild_models.py [--steps N]

The int8 wake-word models ``pymicro-wakeword`` ships (microWakeWord's
streaming models: resource variables, an init subgraph run by CALL_ONCE)
are compiled to C and run for ``--steps`` invocations with a reset, every
tensor compared with TFLite Micro's. Columns:

* ``weights``: constant bytes; ``compile``: seconds of ``usmp.compile``
  (import to C library);
* ``state``: the persistent pool (the variables); ``workspace``: our
  workspace pool; ``tflm arena``: what TFLite Micro's recording allocator
  reports for the model (head + tail, its variables included);
* ``tensors``: every tensor subgraph 0 computes, at every step, against
  TFLite Micro (``bit-exact`` or how many differ).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import usmp
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.testing.run_c import run_module_sequence
from usmp.testing.tflm_reference import (
    random_inputs,
    run_tflm_sequence,
    tflm_arena_bytes,
)

COLUMNS = ("model", "weights", "compile", "state", "workspace", "tflm arena", "tensors")


def _models() -> list[Path]:
    import pymicro_wakeword  # a dev dependency

    return sorted((Path(pymicro_wakeword.__file__).parent / "models").glob("*.tflite"))


def _row(path: Path, steps: int) -> tuple[str, ...]:
    data = path.read_bytes()
    model = read_model(data, path.name)
    start = time.perf_counter()
    lib = usmp.compile(path)
    seconds = time.perf_counter() - start
    produced = [
        t
        for op in model.operators
        for t in op.outputs
        if model.tensors[t].type_name != "RESOURCE"
    ]
    sequence = [random_inputs(model, seed) for seed in range(steps)]
    resets = (steps // 2,)
    want = run_tflm_sequence(data, sequence, resets, tensors=produced)
    got = run_module_sequence(
        import_model(model, outputs=produced),
        sequence,
        resets=resets,
        passes="fuse-ops,lower-ops,aot-lower-main,usmp",
    )
    differ = sum(
        not np.array_equal(g, w.reshape(g.shape))
        for step in range(steps)
        for g, w in zip(got[step], want[step], strict=True)
    )
    weights = sum(t.data.nbytes for t in model.tensors if t.data is not None)
    return (
        path.stem,
        f"{weights:,}",
        f"{seconds:.2f} s",
        f"{lib.plan.persistent_bytes:,}",
        f"{lib.plan.workspace_bytes:,}",
        f"{tflm_arena_bytes(data)['total']:,}",
        "bit-exact" if not differ else f"{differ}/{steps * len(produced)} differ",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    rows = [COLUMNS] + [_row(p, args.steps) for p in _models()]
    widths = [max(len(r[k]) for r in rows) for k in range(len(COLUMNS))]
    for k, row in enumerate(rows):
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if k == 0:
            print("-|-".join("-" * w for w in widths))


if __name__ == "__main__":
    main()
