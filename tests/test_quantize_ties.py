"""QUANTIZE and DEQUANTIZE are bit-exact with TFLite Micro at rounding ties.

TFLite Micro's ``AffineQuantize`` divides in float32
(``round(val / static_cast<float>(scale))``, ties away from zero) and its
``Dequantize`` multiplies in float32 (``static_cast<float>(scale) * (val -
zero_point)``). A double division rounds differently for inputs at and next
to the ties ``(k + 0.5) * scale``, so these inputs are the test: every tie of
the output range computed in float32, and both float32 neighbours of each.
Checked three ways: the oracle against the ``tflite-micro`` interpreter, the
generated C against the oracle, and MLPerf Tiny's ToyCar model (float I/O,
QUANTIZE first and DEQUANTIZE last) fed values on its input quantisation grid,
C against TFLite Micro, every tensor exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend.tflite_import import import_model, import_tflite_bytes
from usmp.frontend.tflite_reader import read_model_file
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import run_tflm

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"

CASES = {  # output type, scale, zero point, levels k around zero
    "int8": ("int8", 0.0123, 3, range(-140, 140)),
    "int8_ad01_input": ("int8", 0.391015, 89, range(-230, 50)),
    "int16": ("int16", 0.000317, 0, range(-1500, 1500)),
    "int16_large": ("int16", 0.05, -7, range(-32800, 32800, 97)),
}


def ties(scale: float, levels: range) -> np.ndarray:
    """``(k + 0.5) * scale`` in float32 for every ``k``, and the float32
    neighbours of each (below and above)."""
    s = np.float32(scale)
    at = (np.asarray(levels, np.float32) + np.float32(0.5)) * s
    below = np.nextafter(at, np.float32(-np.inf))
    above = np.nextafter(at, np.float32(np.inf))
    return np.concatenate([at, below, above]).astype(np.float32)


def quantize_model(dtype: str, scale: float, zero_point: int, n: int) -> bytes:
    """float32 -> QUANTIZE -> ``dtype`` -> DEQUANTIZE -> float32; both the
    quantised and the dequantised tensors are outputs."""
    m = ModelBuilder()
    x = m.tensor((1, n), "float32")
    q = m.tensor((1, n), dtype, scale=scale, zero_point=zero_point)
    y = m.tensor((1, n), "float32")
    m.op("QUANTIZE", [x], [q])
    m.op("DEQUANTIZE", [q], [y])
    return m.build([x], [q, y])


def float32_quantize_reference(
    x: np.ndarray, scale: float, zero_point: int, dtype: str
) -> np.ndarray:
    """TFLite Micro's arithmetic written out independently of the oracle."""
    q = x / np.float32(scale)
    assert q.dtype == np.float32
    rounded = np.where(
        np.abs(q - np.trunc(q)) >= 0.5, np.trunc(q) + np.sign(q), np.trunc(q)
    )
    info = np.iinfo(dtype)
    return np.clip(rounded.astype(np.int64) + zero_point, info.min, info.max).astype(
        dtype
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_quantize_ties_match_tflite_micro(case: str) -> None:
    dtype, scale, zero_point, levels = CASES[case]
    x = ties(scale, levels)[None, :]
    data = quantize_model(dtype, scale, zero_point, x.shape[1])
    want_q, want_y = run_tflm(data, [x], [1, 2])
    assert np.array_equal(
        want_q, float32_quantize_reference(x, scale, zero_point, dtype)
    )
    got_q, got_y = evaluate(import_tflite_bytes(data), [x])
    assert got_q.dtype == want_q.dtype and got_y.dtype == want_y.dtype == np.float32
    mismatches = np.flatnonzero(got_q.reshape(-1) != want_q.reshape(-1))
    assert mismatches.size == 0, (
        f"{mismatches.size}/{x.size} quantised values differ, first at "
        f"x={x[0, mismatches[0]]!r}"
    )
    np.testing.assert_array_equal(got_y, want_y.reshape(got_y.shape))


@pytest.mark.parametrize("case", ["int8", "int16"])
def test_quantize_ties_c_matches_oracle(case: str) -> None:
    dtype, scale, zero_point, levels = CASES[case]
    x = ties(scale, levels)[None, :]
    module = import_tflite_bytes(quantize_model(dtype, scale, zero_point, x.shape[1]))
    want_q, want_y = evaluate(module, [x])
    got_q, got_y = run_module(module, [x], passes=PIPELINE)
    np.testing.assert_array_equal(got_q, want_q)
    np.testing.assert_array_equal(got_y, want_y)


def test_toycar_on_its_input_grid_c_matches_tflite_micro() -> None:
    """ToyCar's float input is quantised first: values ``(q - zp) * scale``
    for every int8 ``q`` and the ties between grid points (and their
    neighbours) must give TFLite Micro's int8 input tensor, every int8
    intermediate and its float output exactly."""
    path = MODELS_DIR / "mlperf_tiny/model_ToyCar_quant_fullint.tflite"
    model = read_model_file(path)
    (first, *_), last = model.operators, model.operators[-1]
    quantized = model.tensors[first.outputs[0]]
    assert quantized.quantization is not None
    scale, zero_point = (
        quantized.quantization.scales[0],
        quantized.quantization.zero_points[0],
    )
    (n,) = [d for d in model.tensors[model.inputs[0]].shape if d != 1]
    s = np.float32(scale)
    grid = (np.arange(-128, 128, dtype=np.float32) - np.float32(zero_point)) * s
    tie_values = ties(scale, range(-128 - zero_point, 127 - zero_point))
    values = np.concatenate([grid, tie_values])
    assert values.size >= n
    rng = np.random.default_rng(7)
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    data = path.read_bytes()
    for order in (np.arange(values.size), rng.permutation(values.size)):
        x = values[order][:n].reshape(model.tensors[model.inputs[0]].shape)
        ours = run_module(module, [x], passes=PIPELINE)
        reference = run_tflm(data, [x], produced)
        for index, got, want in zip(produced, ours, reference, strict=True):
            np.testing.assert_array_equal(
                got,
                want.reshape(got.shape),
                err_msg=f"tensor #{index} '{model.tensors[index].name}'",
            )
    assert last.outputs[0] in produced
