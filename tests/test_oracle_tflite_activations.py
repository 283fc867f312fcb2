"""The integer LOGISTIC / TANH oracle (``usmp.oracle.tflite_activations``)
and its prepare-time parameters (``usmp.frontend.quantization``) against
TFLite Micro's kernels on every int8 and every int16 input value."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend import quantization as q
from usmp.oracle import tflite_activations as act
from usmp.testing.tflm_reference import run_tflm

EVERY_INT8 = np.arange(-128, 128).astype(np.int8).reshape(1, -1)
EVERY_INT16 = np.arange(-32768, 32768).astype(np.int16).reshape(1, -1)


def tflm(
    opcode: str, x: np.ndarray, in_q: tuple[float, int], out_q: tuple[float, int]
) -> np.ndarray:
    m = ModelBuilder()
    dtype = str(x.dtype)
    a = m.tensor(x.shape, dtype, scale=in_q[0], zero_point=in_q[1])
    b = m.tensor(x.shape, dtype, scale=out_q[0], zero_point=out_q[1])
    m.op(opcode, [a], [b])
    return run_tflm(m.build([a], [b]), [x], [b])[0]


@pytest.mark.parametrize(
    ("scale", "zero_point"), [(0.05, -3), (0.1, 20), (0.002, -128), (1.0, 0)]
)
def test_int8_logistic_and_tanh_match_tflite_micro(
    scale: float, zero_point: int
) -> None:
    params = q.logistic_tanh_int8_params(q.f32(scale))
    got = act.logistic_int8(EVERY_INT8, zero_point, params[2], *params[:2])
    want = tflm("LOGISTIC", EVERY_INT8, (scale, zero_point), (1 / 256, -128))
    np.testing.assert_array_equal(got, want)
    got = act.tanh_int8(EVERY_INT8, zero_point, params[2], *params[:2])
    want = tflm("TANH", EVERY_INT8, (scale, zero_point), (1 / 128, 0))
    np.testing.assert_array_equal(got, want)


# 2**-12: the table's own scale (multiplier 0); 2**-11: TANH's second power
# of two, a multiplier for LOGISTIC; others: general multipliers
@pytest.mark.parametrize("scale", [2.0**-12, 2.0**-11, 2.0**-15, 1 / 3000, 5e-5])
@pytest.mark.parametrize("opcode", ["LOGISTIC", "TANH"])
def test_int16_logistic_and_tanh_match_tflite_micro(opcode: str, scale: float) -> None:
    tanh = opcode == "TANH"
    multiplier, shift = q.logistic_tanh_int16_params(q.f32(scale), tanh)
    kernel = act.tanh_int16 if tanh else act.logistic_int16
    want = tflm(opcode, EVERY_INT16, (scale, 0), (2.0**-15, 0))
    np.testing.assert_array_equal(kernel(EVERY_INT16, multiplier, shift), want)


def test_int16_parameters() -> None:
    assert q.logistic_tanh_int16_params(2.0**-12, tanh=False) == (0, 0)
    assert q.logistic_tanh_int16_params(2.0**-11, tanh=True) == (0, 1)
    assert q.logistic_tanh_int16_params(2.0**-11, tanh=False) == (24576, 12)
    assert q.logistic_tanh_int16_params(q.f32(0.001), tanh=False) == (25165, 11)
    with pytest.raises(ValueError, match="too large"):
        q.logistic_tanh_int16_params(4.0, tanh=False)


def test_lstm_gate_calls() -> None:
    """As TFLite Micro's integer LSTM calls them: sigmoid of Q3.12 gates is
    the (0, 0) power-of-two case; tanh of a cell state of scale 2**-16
    (shift 12 - 16 < 0) is the multiplier 3 with a right shift of 4."""
    x = EVERY_INT16
    np.testing.assert_array_equal(
        act.logistic_int16(x, 0, 0), act.logistic_int16(x, 3, 0)
    )
    real = x.astype(np.float64)
    sigmoid = 1.0 / (1.0 + np.exp(-real / 4096.0))
    assert np.abs(act.logistic_int16(x, 0, 0) / 32768.0 - sigmoid).max() < 1e-4
    cell = act.tanh_int16(x, 3, 4) / 32768.0
    assert np.abs(cell - np.tanh(real / 65536.0)).max() < 1e-4
