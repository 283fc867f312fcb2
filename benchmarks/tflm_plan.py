"""TFLite Micro with our plan: its arena before and after ``--emit-tflm-plan``.

    python benchmarks/tflm_plan.py [--models NAME ...] [--seeds N] [--files F ...]

Each supported model in ``shared/models`` but the hybrid ones (TFLite
Micro refuses them) is compiled with ``usmp-compile
--use-workspace-io --emit-tflm-plan`` and both the original and the planned
model are loaded by TFLite Micro's own interpreter (the ``tflite-micro``
package):

* ``tflm head``/``ours head``: the planned (tensor) part of the arena TFLM's
  recording allocator reports ("Arena allocation head"), with TFLM's own
  planner and with our offline plan; ``tail``: the persistent part (the same
  for both);
* ``source``: ``compiled`` when the offsets are the C library's workspace
  offsets, ``replanned`` when our planner ran on TFLM's own lifetimes;
* ``outputs``: the planned model's outputs against the original's on
  ``--seeds`` seeded inputs (``bit-exact`` or how many values differ);
* ``why not smaller``: the reason ``usmp-compile`` gives (stderr and
  ``metadata.json``) when TFLM's arena does not shrink.

The wake-word models of ``pymicro-wakeword`` (resource variables and a
``CALL_ONCE`` subgraph) are measured too when the package is installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.testing.tflm_reference import is_hybrid, random_inputs, tflm_arena_bytes
from usmp.tools.usmp_compile import main as usmp_compile

COLUMNS = (
    "model",
    "tflm head",
    "ours head",
    "saved",
    "tail",
    "source",
    "outputs",
    "why not smaller",
)


def _outputs(data: bytes, inputs: list[np.ndarray], count: int) -> list[np.ndarray]:
    from tflite_micro.python.tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(
        data, arena_size=max(1 << 20, 10 * len(data))
    )
    for i, x in enumerate(inputs):
        interpreter.set_input(x, i)
    interpreter.invoke()
    return [interpreter.get_output(i) for i in range(count)]


def measure(model: Path, seeds: int, work: Path) -> list[str]:
    planned = work / "planned.tflite"
    status = usmp_compile(
        [str(model), "-o", str(work / "out"), "-q", "--use-workspace-io",
         "--emit-tflm-plan", str(planned)]
    )  # fmt: skip
    if status != 0:
        return [model.stem, "-", "-", "-", "-", "refused", "-", "-"]
    reader = read_model_file(model)
    entry = json.loads((work / "out/metadata.json").read_text())["tflm_plan"]
    original, ours = model.read_bytes(), planned.read_bytes()
    size = max(1 << 20, 10 * len(ours))  # one arena size: the same tail padding
    before, after = tflm_arena_bytes(original, size), tflm_arena_bytes(ours, size)
    measured = (before["head"], after["head"])
    assert measured == (entry["tflm_head_bytes"], entry["head_bytes"])
    differ = 0
    for seed in range(seeds):
        x = random_inputs(reader, seed)
        want = _outputs(original, x, len(reader.outputs))
        got = _outputs(ours, x, len(reader.outputs))
        differ += sum(
            int(np.count_nonzero(g != w)) for g, w in zip(got, want, strict=True)
        )
    saved = 1 - after["head"] / before["head"] if before["head"] else 0.0
    return [
        model.stem,
        f"{before['head']:,}",
        f"{after['head']:,}",
        f"{100 * saved:.0f}%",
        f"{after['tail']:,}" + ("" if after["tail"] == before["tail"] else " (!)"),
        entry["source"],
        "bit-exact" if not differ else f"{differ} values differ",
        _note(entry),
    ]


def _note(entry: dict[str, object]) -> str:
    """The compiler's reason, shortened to the parenthesis or clause that
    says why (the full line is in metadata.json)."""
    note = entry.get("note")
    if not note:
        return ""
    text = str(note)
    if "(" in text and text.endswith(")"):
        return text[text.index("(") + 1 : -1]
    return "larger: every tensor online"


def _wake_words() -> list[Path]:
    """The streaming wake-word models ``pymicro-wakeword`` ships (resource
    variables, a CALL_ONCE initialisation subgraph), when installed."""
    try:
        import pymicro_wakeword
    except ImportError:
        return []
    return sorted((Path(pymicro_wakeword.__file__).parent / "models").glob("*.tflite"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", nargs="*", help="model file stems (default: all)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--files", nargs="*", default=[], type=Path,
        help="more .tflite files (e.g. python -m usmp.testing.mobilenet_v2 m.tflite)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    rows = []
    shared = [*(MODELS_DIR / name for name in SUPPORTED_MODELS), *_wake_words()]
    for model in [*shared, *args.files]:
        if args.models and model.stem not in args.models and model not in args.files:
            continue
        if is_hybrid(read_model_file(model)):  # TFLite Micro refuses it
            continue
        with tempfile.TemporaryDirectory() as work:
            rows.append(measure(model, args.seeds, Path(work)))
        print(" | ".join(rows[-1]), file=sys.stderr)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---|" + "--:|" * 4 + "---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
