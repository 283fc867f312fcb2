"""End to end on real models: ``.tflite`` -> import -> fuse-ops -> lower-ops
-> aot-lower-main -> usmp -> C library -> gcc (``-std=c99 -Wall -Wextra
-Werror -pedantic``) -> run, against the ``tflite-micro`` interpreter on the
same inputs (seeded uniform, and one smooth input over the input quantisation
range from ``tests.model_inputs``): int8 outputs bit-exact, float outputs
within 1e-5 of the output's magnitude; also with the I/O planned inside the workspace. The C is
built and run by ``usmp.testing.run_c``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.model_inputs import structured_inputs
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.testing.tflm_reference import difference, random_inputs, run_reference
from usmp.tools.c_library import as_emitc

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"


@pytest.mark.parametrize("name", SUPPORTED_MODELS)
def test_c_matches_tflite_micro(name: str) -> None:
    check_c(name, PIPELINE, seeds=(0,), structured=True)


@pytest.mark.parametrize(
    "name",
    [
        "mlperf_tiny/kws_ref_model.tflite",
        "mlperf_tiny/model_ToyCar_quant_fullint.tflite",
        "tflite_micro/simple_add_model.tflite",
    ],
)
def test_c_with_io_in_the_workspace(name: str) -> None:
    check_c(name, PIPELINE + "{use_workspace_io=true}", seeds=(2,))


def check_c(
    name: str, pipeline: str, seeds: tuple[int, ...], structured: bool = False
) -> None:
    path = MODELS_DIR / name
    model = read_model_file(path)
    module = import_model(model)
    data = path.read_bytes()
    cases: list[tuple[str, list[np.ndarray]]] = [
        (f"seed {seed}", random_inputs(model, seed)) for seed in seeds
    ]
    if structured:
        cases.append(("structured input", structured_inputs(model, seed=1)))
    lowered = as_emitc(run_pipeline(module, pipeline))  # once for every case
    for what, inputs in cases:
        ours = run_module(lowered, inputs)
        reference = run_reference(data, inputs, list(model.outputs))
        for k, (got, want) in enumerate(zip(ours, reference, strict=True)):
            problem = difference(got, want)
            assert problem is None, f"{name}, {what}, output {k}: {problem}"
