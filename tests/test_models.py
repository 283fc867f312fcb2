"""Real TinyML models: the imported relay module, evaluated by the numpy
oracle, gives TFLite Micro's answers.

For every supported model in ``shared/models`` (MLPerf Tiny KWS, VWW,
ResNet-8, AD in int8 and float; hello_world; micro_speech; simple_add):
import it with ``@main`` returning *every operator's output*, run the oracle
and the ``tflite-micro`` Python interpreter (all tensors preserved) on the
same seeded random inputs, and compare tensor by tensor:

* int8 (and every integer) tensor: bit-exact;
* float model outputs: ``max|ours - tflm| <= 1e-5 * max|tflm|``; float
  intermediates within 1e-4 of their range (summation order differs).

Models the importer must refuse (custom ops)
give exit status 1 and a message naming the operator and its index.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.func import FuncOp

from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import Model, read_model, read_model_file
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.testing.tflm_reference import (
    FLOAT_OUTPUT_RTOL,
    difference,
    random_inputs,
    run_reference,
)
from usmp.tools import import_tflite

REFUSED = {  # model -> start of the message after "<file>: error: "
    "tflite_micro/person_detect_vela.tflite": "operator 0 (CUSTOM 'ethos-u')",
    "tflite_micro/audio_preprocessor_float.tflite": (
        "operator 0 (CUSTOM 'SignalWindow')"
    ),
    "tflite_micro/audio_preprocessor_int8.tflite": "operator 0 (CUSTOM 'SignalWindow')",
}

FLOAT_INTERMEDIATE_RTOL = 1e-4


# ------------------------------------------------------------------ helpers


def compare_with_tflm(
    data: bytes, name: str, seeds: tuple[int, ...] = (0, 1, 2)
) -> None:
    """Import ``data`` returning every operator output; oracle == TFLM."""
    model = read_model(data, name)
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    outputs = set(model.outputs)
    for seed in seeds:
        inputs = random_inputs(model, seed)
        ours = evaluate(module, inputs)
        reference = run_reference(data, inputs, produced)
        for index, got, want in zip(produced, ours, reference, strict=True):
            what = f"{name}, seed {seed}, tensor #{index} '{model.tensors[index].name}'"
            rtol = FLOAT_OUTPUT_RTOL if index in outputs else FLOAT_INTERMEDIATE_RTOL
            assert difference(got, want, rtol) is None, (
                f"{what}: {difference(got, want, rtol)}"
            )


def test_models_directory_holds_the_models() -> None:
    missing = [
        m for m in (*SUPPORTED_MODELS, *REFUSED) if not (MODELS_DIR / m).is_file()
    ]
    assert not missing, f"missing under {MODELS_DIR} (set USMP_MODELS_DIR): {missing}"


@pytest.mark.parametrize("name", SUPPORTED_MODELS)
def test_oracle_matches_tflite_micro(name: str) -> None:
    path = MODELS_DIR / name
    compare_with_tflm(path.read_bytes(), path.name)


@pytest.mark.parametrize("name", SUPPORTED_MODELS)
def test_main_signature_is_the_models(name: str) -> None:
    model = read_model_file(MODELS_DIR / name)
    module = import_model(model)
    (func,) = module.ops
    assert isinstance(func, FuncOp)
    arg_shapes = [str(a.type) for a in func.body.block.args]
    result_shapes = [str(t) for t in func.function_type.outputs]
    assert arg_shapes == [tensor_type_of(model, i) for i in model.inputs]
    assert result_shapes == [tensor_type_of(model, i) for i in model.outputs]


def tensor_type_of(model: Model, index: int) -> str:
    """``tensor<AxBxT>`` of a TFLite tensor (shape as stored, batch 1)."""
    t = model.tensors[index]
    element = {"int8": "i8", "int16": "i16", "float32": "f32", "int32": "i32"}[
        str(t.dtype)
    ]
    return f"tensor<{'x'.join(map(str, t.shape))}x{element}>"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_models(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = MODELS_DIR / name
    assert import_tflite.main([str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{path.name}: error: {REFUSED[name]}")
    assert "Traceback" not in captured.err
