"""Whole real models: the relay oracle on the imported module agrees with the
TFLite Micro interpreter — bit for bit for int8 models, to float rounding
for float models. Exercises every operator the MLPerf Tiny models use
(depthwise/strided conv2d with per-channel requantisation, average pooling,
fully connected, reshape, int8 softmax) through the importer."""

from pathlib import Path

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime

from usmp.frontend.tflite_import import import_tflite
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.shared_models import MODELS_DIR


def run_both(path: Path, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(oracle output, TFLite Micro output) for one random input."""
    interpreter = runtime.Interpreter.from_file(str(path), arena_size=1 << 20)
    detail = interpreter.get_input_details(0)
    shape, dtype = tuple(detail["shape"]), np.dtype(detail["dtype"])
    rng = np.random.default_rng(seed)
    if dtype.kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, shape, dtype=dtype)
    interpreter.set_input(x, 0)
    interpreter.invoke()
    expected = interpreter.get_output(0)
    (got,) = evaluate(import_tflite(path), [x])
    return got.reshape(expected.shape), expected


@pytest.mark.parametrize(
    "model",
    [
        "mlperf_tiny/vww_96_int8.tflite",
        "mlperf_tiny/kws_ref_model.tflite",
        "mlperf_tiny/pretrainedResnet_quant.tflite",
        "mlperf_tiny/ad01_int8.tflite",
        "tflite_micro/micro_speech_quantized.tflite",
    ],
)
def test_int8_model_is_bit_exact_with_tflite_micro(model: str) -> None:
    got, expected = run_both(MODELS_DIR / model, seed=0)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "model",
    ["mlperf_tiny/vww_96_float.tflite", "mlperf_tiny/ad01_fp32.tflite"],
)
def test_float_model_matches_tflite_micro(model: str) -> None:
    got, expected = run_both(MODELS_DIR / model, seed=0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
