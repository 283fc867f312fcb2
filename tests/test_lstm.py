"""UNIDIRECTIONAL_SEQUENCE_LSTM (``relay.lstm``): the shared LSTM models'
LSTM output and model output through the oracle and the generated C, equal to
TFLite Micro (int8 bit for bit, float within 1e-5); synthetic single-LSTM
models for what the models do not exercise (time-major, batch 2, no cell
clip, int8 with other scales); the variants TFLite Micro refuses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.test_import_tflite_synthetic import ModelBuilder, check
from tests.test_models import FLOAT_INTERMEDIATE_RTOL
from usmp.dialects import tir
from usmp.frontend.tflite_import import import_model, import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError, read_model, read_model_file
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"
MODELS = (
    "tflite_micro/trained_lstm.tflite",
    "tflite_micro/trained_lstm_int8.tflite",
    "tflite_micro/micro_speech_lstm.tflite",
)


def _compare_c(data: bytes, name: str, seeds: tuple[int, ...]) -> None:
    """Every operator's output, computed by the generated C, == TFLite Micro."""
    model = read_model(data, name)
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    for seed in seeds:
        inputs = random_inputs(model, seed)
        ours = run_module(module, inputs, passes=PIPELINE)
        reference = run_tflm(data, inputs, produced)
        for index, got, want in zip(produced, ours, reference, strict=True):
            diff = difference(got, want, FLOAT_INTERMEDIATE_RTOL)
            assert diff is None, f"{name}, seed {seed}, tensor #{index}: {diff}"


@pytest.mark.parametrize("name", MODELS)
def test_model_c_matches_tflite_micro(name: str) -> None:
    path = MODELS_DIR / name
    _compare_c(path.read_bytes(), path.name, (0, 1))


def _lstm_model(
    dtype: str,
    *,
    time_major: bool,
    batch: int,
    steps: int = 3,
    n_input: int = 5,
    units: int = 4,
    cell_clip: float = 0.0,
    extra_inputs: dict[int, int] | None = None,
) -> tuple[ModelBuilder, list[int], list[int]]:
    rng = np.random.default_rng(7)
    m = ModelBuilder()
    shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    out_shape = (*shape[:2], units)
    if dtype == "int8":
        x = m.tensor(shape, "int8", scale=0.05, zero_point=-3)
        weights = [
            m.tensor(
                (units, n_input if k < 4 else units),
                "int8",
                rng.integers(-127, 128, (units, n_input if k < 4 else units)),
                scale=0.004 + 0.001 * k,
            )
            for k in range(8)
        ]
        biases = [
            m.tensor((units,), "int32", rng.integers(-3000, 3000, units), scale=1e-4)
            for _ in range(4)
        ]
        h = m.tensor((batch, units), "int8", scale=1 / 128, zero_point=2, variable=True)
        c = m.tensor((batch, units), "int16", scale=2.0**-11, variable=True)
        y = m.tensor(out_shape, "int8", scale=1 / 128, zero_point=2)
    else:
        x = m.tensor(shape, "float32")
        weights = [
            m.tensor(
                (units, n_input if k < 4 else units),
                "float32",
                rng.normal(0, 0.5, (units, n_input if k < 4 else units)),
            )
            for k in range(8)
        ]
        biases = [
            m.tensor((units,), "float32", rng.normal(0, 0.3, units)) for _ in range(4)
        ]
        h = m.tensor((batch, units), "float32", variable=True)
        c = m.tensor((batch, units), "float32", variable=True)
        y = m.tensor(out_shape, "float32")
    inputs = [x, *weights, -1, -1, -1, *biases, -1, -1, h, c, -1, -1, -1, -1]
    for position, tensor in (extra_inputs or {}).items():
        inputs[position] = tensor
    options: dict[str, Any] = {
        "FusedActivationFunction": 4,
        "CellClip": cell_clip,
        "TimeMajor": time_major,
    }
    m.op(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        inputs,
        [y],
        ("UnidirectionalSequenceLSTMOptions", options),
    )
    return m, [x], [y]


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("time_major", [False, True])
def test_synthetic_lstm_matches_tflite_micro(dtype: str, time_major: bool) -> None:
    """Batch 2 (TFLM's batch-major path runs the rows one after the other,
    its time-major path all rows per step), oracle and C."""
    m, inputs, outputs = _lstm_model(
        dtype, time_major=time_major, batch=2, cell_clip=0.0 if time_major else 0.5
    )
    check(m, inputs, outputs)
    _compare_c(m.build(inputs, outputs), "synthetic.tflite", (0,))


def test_peephole_is_refused_with_the_operator() -> None:
    m, inputs, outputs = _lstm_model(
        "float32", time_major=False, batch=1, extra_inputs={10: 12}
    )
    with pytest.raises(
        TFLiteImportError,
        match=r"operator 0 \(UNIDIRECTIONAL_SEQUENCE_LSTM\): peephole weights "
        r"\(inputs 10\): not supported",
    ):
        import_tflite_bytes(m.build(inputs, outputs), "peephole.tflite")


def test_lowered_lstm_has_no_gate_buffers() -> None:
    """The gates are registers: the only scratch of the LSTM's function is
    the start values of its states (until they are persistent)."""
    model = read_model_file(MODELS_DIR / MODELS[1])
    lowered = run_pipeline(import_model(model), "fuse-ops,lower-ops")
    names = [
        op.name_hint.data for op in lowered.walk() if isinstance(op, tir.AllocateOp)
    ]
    assert names == ["lstm_hidden_state", "lstm_cell_state"]
