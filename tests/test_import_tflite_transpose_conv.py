"""TRANSPOSE_CONV on single-operator models written with ``ModelBuilder``:
float, int8 (per-tensor and per-channel) and 16x8, with and without bias,
SAME / VALID padding, strides, an output larger than the inputs' windows
reach (``output_padding``), a kernel smaller than the stride; every tensor
compared with TFLite Micro through the oracle and the C compared with
TFLite Micro on seeded inputs; TFLM's seanet TRANSPOSE_CONV integration
model (whose output shape is a model input) against its golden CSV; the
refusals.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_conv16 import extremes_match_tflm
from tests.test_import_tflite_layout import Built, check, refusal
from tests.test_import_tflite_synthetic import ModelBuilder, weights_i8
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import read_model
from usmp.testing.run_c import run_pipeline
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import run_tflm

SAME, VALID = 0, 1
RELU = 1
RNG = np.random.default_rng(2417)

_QUANT = {"int8": (0.02, -3), "int16": (0.0005, 0)}
_BIAS = {"float32": "float32", "int8": "int32", "int16": "int64"}


def transpose_conv_model(
    dtype: str,
    x_shape: tuple[int, int, int, int],
    kernel: tuple[int, int],
    out_shape: tuple[int, int, int, int],
    padding: int,
    strides: tuple[int, int],
    bias: bool = True,
    per_channel: bool = True,
    activation: int = 0,
) -> Built:
    m = ModelBuilder()
    out_c, in_c = out_shape[3], x_shape[3]
    w_shape = (out_c, *kernel, in_c)
    shape = m.tensor((4,), "int32", np.array(out_shape))
    if dtype == "float32":
        x = m.tensor(x_shape, dtype)
        w = m.tensor(w_shape, dtype, RNG.standard_normal(w_shape) * 0.3)
        b = m.tensor((out_c,), dtype, RNG.standard_normal(out_c)) if bias else -1
        y = m.tensor(out_shape, dtype)
    else:
        x_scale, x_zp = _QUANT[dtype]
        scales = list(RNG.uniform(0.004, 0.02, out_c)) if per_channel else [0.01]
        w = m.tensor(w_shape, "int8", weights_i8(*w_shape), scale=scales)
        x = m.tensor(x_shape, dtype, scale=x_scale, zero_point=x_zp)
        b = -1
        if bias:
            values = RNG.integers(-20_000, 20_000, out_c)
            b_scales = [x_scale * s for s in (scales * out_c)[:out_c]]
            b = m.tensor((out_c,), _BIAS[dtype], values, scale=b_scales)
        y = m.tensor(out_shape, dtype, scale=x_scale * 2, zero_point=x_zp)
    options = dict(
        Padding=padding,
        StrideH=strides[0],
        StrideW=strides[1],
        FusedActivationFunction=activation,
    )
    inputs = [shape, w, x] + ([b] if bias else [])
    m.op("TRANSPOSE_CONV", inputs, [y], ("TransposeConvOptions", options))
    return m, [x], [y]


CASES = {
    "same-stride2": ((1, 3, 4, 3), (3, 3), (1, 6, 8, 2), SAME, (2, 2)),
    "valid-stride-2x1-even-kernel": ((1, 3, 3, 2), (4, 2), (1, 8, 4, 3), VALID, (2, 1)),
    "valid-output-padding": ((1, 3, 2, 2), (3, 3), (1, 8, 6, 2), VALID, (2, 2)),
    "same-kernel-below-stride": ((2, 3, 2, 4), (1, 2), (2, 9, 6, 3), SAME, (3, 3)),
    "same-size-one": ((1, 1, 5, 2), (1, 3), (1, 1, 5, 4), SAME, (1, 1)),
}


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("case", CASES)
def test_transpose_conv_matches_tflite_micro(case: str, dtype: str) -> None:
    text = check(transpose_conv_model(dtype, *CASES[case]))
    assert "relay.conv2d_transpose" in text


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_transpose_conv_without_bias(dtype: str) -> None:
    check(transpose_conv_model(dtype, *CASES["same-stride2"], bias=False))


def test_transpose_conv_int8_per_tensor_relu() -> None:
    check(
        transpose_conv_model(
            "int8", *CASES["valid-output-padding"], per_channel=False, activation=RELU
        )
    )


def test_transpose_conv_float_relu() -> None:
    check(transpose_conv_model("float32", *CASES["same-stride2"], activation=RELU))


def test_transpose_conv_16x8_extreme_inputs() -> None:
    extremes_match_tflm(transpose_conv_model("int16", *CASES["same-stride2"]))


def test_transpose_conv_has_no_scratch() -> None:
    """The gather needs no accumulator buffer (TFLite Micro's scatter uses
    one of the output's size, int32 or int64)."""
    m, inputs, outputs = transpose_conv_model("int16", *CASES["same-stride2"])
    module = import_tflite_bytes(m.build(inputs, outputs))
    lowered = str(run_pipeline(module, "fuse-ops,lower-ops"))
    assert "tir.allocate " not in lowered and "tir.allocate{" not in lowered


def test_transpose_conv_refuses_a_wrong_constant_output_shape() -> None:
    m, inputs, outputs = transpose_conv_model("float32", *CASES["same-stride2"])
    m.tensors[0]["buffer"] = len(m.buffers)
    m.buffers.append(np.array([1, 6, 9, 2], np.int32).tobytes())
    assert refusal((m, inputs, outputs)).endswith(
        "operator 0 (TRANSPOSE_CONV): output shape [1, 6, 9, 2] differs from the "
        "shape [1, 6, 8, 2] stored for 't4'"
    )


def test_transpose_conv_refuses_an_int32_bias_on_int16() -> None:
    m, inputs, outputs = transpose_conv_model("int16", *CASES["same-stride2"])
    m.tensors[3]["dtype"] = "int32"
    m.buffers[m.tensors[3]["buffer"]] = np.zeros(2, np.int32).tobytes()
    assert refusal((m, inputs, outputs)).endswith(
        "operator 0 (TRANSPOSE_CONV): bias 't3' is INT32, expected INT64 or INT16"
    )


def test_seanet_transpose_conv_reproduces_the_golden_output(tmp_path: Path) -> None:
    """TFLM's own int16 TRANSPOSE_CONV integration-test model (stride 1x2, 3x4
    kernel, INT64 bias; the output shape is model input 0): through
    ``usmp.compile`` and gcc, the golden CSV exactly, and TFLite Micro on a
    random input."""
    folder = MODELS_DIR / "tflite_micro/seanet/transpose_conv"
    path = folder / "transpose_conv0.tflite"
    data = path.read_bytes()
    model = read_model(data, path.name)
    shape = model.tensors[model.inputs[1]].shape
    out_shape = np.loadtxt(folder / "transpose_conv0_input0_int32.csv", delimiter=",")
    x = np.loadtxt(folder / "transpose_conv0_input1_int16.csv", delimiter=",")
    golden = np.loadtxt(folder / "transpose_conv0_golden_int16.csv", delimiter=",")
    lib = usmp.compile(path, output_dir=tmp_path / "out")
    inputs = [out_shape.astype(np.int32), x.astype(np.int16).reshape(shape)]
    (got,) = lib.run(inputs)
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got.reshape(-1), golden.astype(np.int16))
    inputs[1] = RNG.integers(-32768, 32768, shape).astype(np.int16)
    (got,) = lib.run(inputs)
    np.testing.assert_array_equal(got, run_tflm(data, inputs, model.outputs)[0])
