"""Real MLIR 22 and usmp-opt compose in both directions.

* Round trip: after every stage of the pipeline (import, fuse-ops, lower-ops,
  aot-lower-main, usmp, convert-to-emitc) on a real int8 and a real float
  model, the IR goes through ``mlir-opt --canonicalize --cse`` and what
  mlir-opt prints is read back by usmp-opt; the rest of the pipeline then
  gives the same C (byte for byte) or, where canonicalisation changed the
  code (folded ``0 + x``, renamed values), C that computes bit-identical
  outputs on seeded inputs.
* ``convert-to-emitc``'s module is the whole library: ``mlir-translate
  --mlir-to-cpp`` of it builds with ``gcc -std=c99 -Wall -Wextra -Werror
  -pedantic`` and its ``run`` gives the same outputs as usmp-opt's own C, on
  the same real models.
* Every positive FileCheck input is run through ``usmp-opt --print-op-generic``
(with the pass pipeline of the file's first ``RUN`` line, so pass outputs are
checked too) and the result is parsed by ``mlir-opt --allow-unregistered-dialect`` (relay
and tir are not MLIR dialects; their ops and attributes are parsed opaquely).
In CI (``CI`` set) a missing ``mlir-opt`` is a failure, not a skip.
"""

import io
import re
import subprocess
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from tests.mlir_tools import missing_tool, mlir_bin
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs
from usmp.tools.c_library import load, single_source
from usmp.tools.usmp_compile import PIPELINE
from usmp.tools.usmp_opt import main as usmp_opt

FILECHECK_DIR = Path(__file__).parent / "filecheck"
POSITIVE_TESTS = sorted(
    p
    for p in FILECHECK_DIR.rglob("*.mlir")
    if "invalid" not in p.name and "inputs" not in p.parts
)


def _pipeline(path: Path) -> list[str]:
    """The ``-p`` argument of the first ``// RUN: usmp-opt`` line, if any."""
    for line in path.read_text().splitlines():
        if line.startswith("// RUN: usmp-opt"):
            match = re.search(r"(?:-p|--passes)[ =]('[^']*'|\"[^\"]*\"|\S+)", line)
            return ["-p", match.group(1).strip("'\"")] if match else []
    return []


def _mlir_opt() -> Path:
    folder = mlir_bin()
    if folder is None:
        missing_tool("mlir-opt (MLIR 22)", "apt-get install mlir-22-tools")
    return folder / "mlir-opt"


@pytest.mark.parametrize(
    "path",
    POSITIVE_TESTS,
    ids=[str(p.relative_to(FILECHECK_DIR)) for p in POSITIVE_TESTS],
)
def test_generic_form_parses_with_mlir_opt(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mlir_opt = _mlir_opt()
    # usmp-opt in this process (its ``main`` is re-entrant): a new interpreter
    # per file cost more than the run itself
    status = usmp_opt(
        [str(path), "--split-input-file", "--print-op-generic", *_pipeline(path)]
    )
    ours = capsys.readouterr()
    assert status == 0, ours.err
    theirs = subprocess.run(
        [str(mlir_opt), "--allow-unregistered-dialect", "--split-input-file", "-"],
        input=ours.out,
        capture_output=True,
        text=True,
        check=False,
    )
    assert theirs.returncode == 0, theirs.stderr


STAGES = PIPELINE[: PIPELINE.index("emit-c")]
"""Every step whose result is MLIR."""
ROUND_TRIP_MODELS = {
    "int8": "mlperf_tiny/kws_ref_model.tflite",
    "float": "tflite_micro/hello_world_float.tflite",
}


def _generic(module: ModuleOp) -> str:
    text = io.StringIO()
    Printer(stream=text, print_generic_format=True).print_op(module)
    return text.getvalue()


@cache
def _imported(model: str) -> tuple[ModuleOp, tuple[np.ndarray, ...]]:
    path = MODELS_DIR / ROUND_TRIP_MODELS[model]
    tflite = read_model_file(path)
    return import_model(tflite), tuple(random_inputs(tflite, seed=3))


@cache
def _after(model: str, stage: str) -> ModuleOp:
    """The module after ``stage`` (usmp-opt alone)."""
    module, _ = _imported(model)
    done = STAGES[1 : STAGES.index(stage) + 1]
    return run_pipeline(module, ",".join(done)) if done else module


@cache
def _reference(model: str) -> tuple[str, tuple[np.ndarray, ...]]:
    """The C and the outputs of the whole pipeline run by usmp-opt alone."""
    _, inputs = _imported(model)
    final = _after(model, STAGES[-1])
    return single_source(final), tuple(run_module(final, list(inputs)))


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("model", list(ROUND_TRIP_MODELS))
def test_mlir_opt_output_reads_back_after_every_stage(model: str, stage: str) -> None:
    mlir_opt = _mlir_opt()
    canonical = subprocess.run(
        [
            str(mlir_opt),
            "--allow-unregistered-dialect",
            "--canonicalize",
            "--cse",
            "-",
        ],
        input=_generic(_after(model, stage)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert canonical.returncode == 0, canonical.stderr
    module = load(canonical.stdout)  # mlir-opt's pretty form, read back
    rest = STAGES[STAGES.index(stage) + 1 :]
    if rest:
        module = run_pipeline(module, ",".join(rest))
    reference_c, reference_outputs = _reference(model)
    if single_source(module) == reference_c:
        return  # byte-identical C
    _, inputs = _imported(model)
    outputs = run_module(module, list(inputs))
    for k, (got, want) in enumerate(zip(outputs, reference_outputs, strict=True)):
        assert got.dtype == want.dtype and np.array_equal(got, want), (
            f"{model} after {stage}, output {k}: {got} != {want}"
        )


@pytest.mark.parametrize("model", list(ROUND_TRIP_MODELS))
def test_mlir_translate_library_runs_like_ours(model: str) -> None:
    folder = mlir_bin()
    if folder is None or not (folder / "mlir-translate").exists():
        _mlir_opt()  # fails in CI, skips elsewhere
    _, inputs = _imported(model)
    _, reference_outputs = _reference(model)
    theirs = run_module(
        _after(model, "convert-to-emitc"), list(inputs), emitter="mlir-translate"
    )
    for k, (got, want) in enumerate(zip(theirs, reference_outputs, strict=True)):
        assert got.dtype == want.dtype and np.array_equal(got, want), (
            f"{model}, output {k}: mlir-translate's C gives {got}, ours {want}"
        )
