"""Quantisation scales of 0, negative, NaN or infinite, on a model input, on
weights and on an operator's output (an activation): TFLite Micro's result
where it is defined, bit for bit; a located refusal where it is not.

TFLite Micro loads any scale. Its ``Prepare`` computes with them in IEEE
arithmetic: ``QuantizeMultiplier(0)`` is ``(0, 0)`` (a scale 0 in a
numerator: every output is the zero point), a negative multiplier works
(``MultiplyByQuantizedMultiplier`` is defined for it), and a quotient by an
infinite scale is 0. Undefined are a multiplier that is not finite (a scale 0
or tiny in a denominator, a NaN or an infinity in a numerator: ``frexp``'s
exponent is unspecified, the conversion to an integer undefined behaviour),
the ``TFLITE_CHECK``s that abort (ADD's ``QuantizeMultiplierSmallerThan
OneExp``, SOFTMAX's ``...GreaterThanOne``), a NaN or infinite quotient
converted to an int (QUANTIZE from float by 0 or NaN). DEQUANTIZE multiplies
floats: defined for every scale. FULLY_CONNECTED's ``Prepare`` refuses a
negative or NaN input-times-weights scale.

Each case is one operator with the odd scale on one tensor; the expected
outcome follows from those rules (not from running TFLite Micro, which on
x86 happens to produce numbers in undefined cases too). "same": the
importer's module equals TFLite Micro's output (oracle; and the generated C
for a few); "refused": ``usmp-import-tflite`` exits with status 1 and one
line ``<model>: error: operator 0 (<OPCODE>): <role> '<tensor>' (tensor k)
has quantisation scale <value>: <why>; ... finite, positive scales``, no
traceback (before, a scale 0 on an activation ended in "ZeroDivisionError",
and negative, NaN or infinite scales were refused by the reader for the whole
file, unlocated, even where TFLite Micro's result is defined).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.test_import_tflite_synthetic import ModelBuilder
from tests.test_malformed_tflite import _run
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.tflm_reference import run_tflm
from usmp.tools import import_tflite

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"
ZERO, NEGATIVE, NAN, INF = 0.0, -0.05, math.nan, math.inf
VALUES = {"0": ZERO, "negative": NEGATIVE, "nan": NAN, "inf": INF}

Model = tuple[bytes, list[np.ndarray]]


def _ints(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def build(opcode: str, role: str, value: float) -> Model:
    """``opcode`` on int8 tensors (DEQUANTIZE: to float; QUANTIZE_FLOAT:
    float to int8) with the scale ``value`` on its ``role`` tensor
    (``input``: the model input, ``weights``: the constant operand,
    ``output``: what the operator computes)."""
    rng = np.random.default_rng(24)
    scales = {"input": 0.05, "weights": 0.01, "output": 0.1, role: value}
    m = ModelBuilder()
    shape: tuple[int, ...] = (1, 16)
    if opcode == "FULLY_CONNECTED":
        x = m.tensor((1, 8), "int8", scale=scales["input"], zero_point=3)
        w = m.tensor((4, 8), "int8", _ints(rng, (4, 8)), scale=scales["weights"])
        bias = m.tensor((4,), "int32", rng.integers(-100, 100, 4), scale=5e-4)
        y = m.tensor((1, 4), "int8", scale=scales["output"], zero_point=-2)
        m.op(opcode, [x, w, bias], [y], ("FullyConnectedOptions", {}))
        shape = (1, 8)
    elif opcode == "CONV_2D":
        shape = (1, 4, 4, 2)
        x = m.tensor(shape, "int8", scale=scales["input"], zero_point=3)
        channel_scales = [scales["weights"], 0.02, 0.03]
        weights = _ints(rng, (3, 1, 1, 2))
        w = m.tensor((3, 1, 1, 2), "int8", weights, scale=channel_scales)
        bias = m.tensor((3,), "int32", rng.integers(-100, 100, 3), scale=[5e-4] * 3)
        y = m.tensor((1, 4, 4, 3), "int8", scale=scales["output"], zero_point=-2)
        options = dict(Padding=1, StrideW=1, StrideH=1)
        options.update(DilationWFactor=1, DilationHFactor=1)
        m.op(opcode, [x, w, bias], [y], ("Conv2DOptions", options))
    elif opcode in ("MUL", "ADD"):
        x = m.tensor(shape, "int8", scale=scales["input"], zero_point=3)
        w = m.tensor(
            shape, "int8", _ints(rng, shape), scale=scales["weights"], zero_point=1
        )
        y = m.tensor(shape, "int8", scale=scales["output"], zero_point=-2)
        m.op(opcode, [x, w], [y], (f"{opcode.title()}Options", {}))
    elif opcode == "DEQUANTIZE":
        x = m.tensor(shape, "int8", scale=scales["input"], zero_point=3)
        y = m.tensor(shape, "float32")
        m.op(opcode, [x], [y])
    elif opcode == "QUANTIZE_FLOAT":
        x = m.tensor(shape, "float32")
        y = m.tensor(shape, "int8", scale=scales["output"], zero_point=-2)
        m.op("QUANTIZE", [x], [y])
        data = m.build([x], [y])
        return data, [rng.standard_normal(shape).astype(np.float32)]
    else:
        fixed = {"LOGISTIC": (1 / 256, -128), "SOFTMAX": (1 / 256, -128)}
        scale, zero_point = fixed.get(opcode, (scales["output"], -2))
        x = m.tensor(shape, "int8", scale=scales["input"], zero_point=3)
        y = m.tensor(shape, "int8", scale=scale, zero_point=zero_point)
        options: dict[str, Any] = {
            "LEAKY_RELU": ("LeakyReluOptions", {"Alpha": 0.2}),
            "SOFTMAX": ("SoftmaxOptions", {"Beta": 1.0}),
        }
        m.op(opcode, [x], [y], options.get(opcode))
    return m.build([x], [y]), [_ints(rng, shape)]


SAME, REFUSED = "same", "refused"


def _expect(opcode: str, role: str, value: str) -> str:
    """The outcome the rules of the module doc give."""
    if opcode == "DEQUANTIZE":
        return SAME
    if opcode in ("ADD", "SOFTMAX"):  # TFLITE_CHECKs on the multipliers
        return SAME if (opcode, value) == ("SOFTMAX", "inf") else REFUSED
    if opcode == "QUANTIZE_FLOAT":
        return REFUSED if value in ("0", "nan") else SAME
    if value == "nan":
        return REFUSED
    if opcode == "FULLY_CONNECTED" and value == "negative" and role != "output":
        return REFUSED  # TFLite Micro refuses a negative input x weights scale
    if role == "output":  # the denominator
        return REFUSED if value == "0" else SAME
    return REFUSED if value == "inf" else SAME  # a numerator


ROLES = {
    "FULLY_CONNECTED": ("input", "weights", "output"),
    "CONV_2D": ("input", "weights", "output"),
    "MUL": ("input", "weights", "output"),
    "ADD": ("input", "weights", "output"),
    "QUANTIZE": ("input", "output"),
    "LEAKY_RELU": ("input", "output"),
    "RELU": ("input", "output"),
    "LOGISTIC": ("input",),
    "SOFTMAX": ("input",),
    "DEQUANTIZE": ("input",),
    "QUANTIZE_FLOAT": ("output",),
}
CASES = [
    (opcode, role, value)
    for opcode, roles in ROLES.items()
    for role in roles
    for value in VALUES
]


def _same_as_tflite_micro(data: bytes, inputs: list[np.ndarray]) -> None:
    model = read_model(data, "scales.tflite")
    ours = evaluate(import_model(model), inputs)
    (want,) = run_tflm(data, inputs, list(model.outputs))
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(want))


@pytest.mark.parametrize(("opcode", "role", "value"), CASES)
def test_odd_scale(opcode: str, role: str, value: str, tmp_path: Path) -> None:
    data, inputs = build(opcode, role, VALUES[value])
    if _expect(opcode, role, value) == SAME:
        _same_as_tflite_micro(data, inputs)
        return
    path = tmp_path / "scales.tflite"
    path.write_bytes(data)
    status, err = _run(import_tflite.main, [str(path)])
    assert status == 1, err
    assert "Traceback" not in err, err
    (line,) = err.splitlines()
    name = "QUANTIZE" if opcode == "QUANTIZE_FLOAT" else opcode
    assert line.startswith(f"scales.tflite: error: operator 0 ({name}): "), line
    assert "TFLite Micro" in line, line
    odd = VALUES[value]
    tensor = {"input": "'t0' (tensor 0)", "weights": "'t1' (tensor 1)"}.get(role)
    if odd <= 0 or not math.isfinite(odd):
        assert f"has quantisation scale {odd}" in line, line
        if tensor is not None:
            assert tensor in line, line
        assert line.endswith("the operator needs finite, positive scales"), line


C_CASES = [
    ("CONV_2D", "weights", "negative"),
    ("CONV_2D", "output", "inf"),
    ("MUL", "output", "negative"),
    ("MUL", "input", "0"),
    ("LEAKY_RELU", "input", "negative"),
    ("LOGISTIC", "input", "negative"),
    ("QUANTIZE", "output", "negative"),
    ("QUANTIZE_FLOAT", "output", "inf"),
    ("DEQUANTIZE", "input", "nan"),
]


@pytest.mark.parametrize(("opcode", "role", "value"), C_CASES)
def test_odd_scale_in_c(opcode: str, role: str, value: str) -> None:
    """The generated C computes TFLite Micro's result too."""
    assert _expect(opcode, role, value) == SAME
    data, inputs = build(opcode, role, VALUES[value])
    model = read_model(data, "scales.tflite")
    (ours,) = run_module(import_model(model), inputs, passes=PIPELINE)
    (want,) = run_tflm(data, inputs, list(model.outputs))
    np.testing.assert_array_equal(ours, np.asarray(want))


@pytest.mark.parametrize("value", ["nan", "0", "negative"])
def test_reshape_carries_any_scale(value: str) -> None:
    """RESHAPE never reads its scales (nor does TFLite Micro): a NaN, 0 or
    negative one on both sides is copied as it is."""
    m = ModelBuilder()
    x = m.tensor((1, 16), "int8", scale=VALUES[value], zero_point=3)
    y = m.tensor((4, 4), "int8", scale=VALUES[value], zero_point=3)
    m.op("RESHAPE", [x], [y])
    inputs = [np.arange(-8, 8, dtype=np.int8).reshape(1, 16)]
    _same_as_tflite_micro(m.build([x], [y]), inputs)
