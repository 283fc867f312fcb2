"""uint8 (TFLite's legacy asymmetric type) where TFLite Micro takes it, and
nothing else: QUANTIZE between uint8 and int8, DEQUANTIZE from uint8, RESHAPE
(TFLM's CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, pools and SOFTMAX
dropped uint8, and its QUANTIZE makes no uint8 from float32 or uint8: all
refused with a located message). The usual model, uint8 in and out around an
int8 network, compiles end to end with its signedness kept: ``memref<..xui8>``
in the operators (``arith`` itself stays signless: ``extui``/``trunci``
through ``builtin.unrealized_conversion_cast``), ``uint8_t`` in C and in the
header, bit-exact with TFLite Micro on the whole uint8 range (oracle, every
tensor, and C).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_layout import check, refusal
from tests.test_import_tflite_synthetic import ModelBuilder

U8: dict[str, Any] = dict(scale=0.1, zero_point=128)


def uint8_model() -> tuple[ModelBuilder, list[int], list[int]]:
    """uint8 -> QUANTIZE -> int8 FULLY_CONNECTED -> QUANTIZE -> uint8, with a
    uint8 RESHAPE and a DEQUANTIZE of the uint8 output."""
    rng = np.random.default_rng(8)
    m = ModelBuilder()
    x = m.tensor((1, 2, 8), "uint8", **U8)
    flat = m.tensor((1, 16), "uint8", **U8)
    shape = m.tensor((2,), "int32", np.array([1, 16]))
    q = m.tensor((1, 16), "int8", scale=0.1, zero_point=0)
    w = m.tensor((5, 16), "int8", rng.integers(-127, 128, (5, 16)), scale=0.02)
    bias = m.tensor((5,), "int32", rng.integers(-500, 500, 5), scale=0.002)
    h = m.tensor((1, 5), "int8", scale=0.3, zero_point=-4)
    y = m.tensor((1, 5), "uint8", scale=0.3, zero_point=124)
    f = m.tensor((1, 5), "float32")
    m.op("RESHAPE", [x, shape], [flat], ("ReshapeOptions", dict(NewShape=[1, 16])))
    m.op("QUANTIZE", [flat], [q])
    m.op("FULLY_CONNECTED", [q, w, bias], [h])
    m.op("QUANTIZE", [h], [y])
    m.op("DEQUANTIZE", [y], [f])
    return m, [x], [y, f]


def test_uint8_model_matches_tflite_micro() -> None:
    text = check(uint8_model())
    assert "tensor<1x2x8xui8>" in text and "-> tensor<1x5xui8>" in text


def test_uint8_model_keeps_uint8_t_in_c(tmp_path: Path) -> None:
    m, inputs, outputs = uint8_model()
    path = tmp_path / "u8.tflite"
    path.write_bytes(m.build(inputs, outputs))
    lib = usmp.compile(path, module_name="u8", output_dir=tmp_path / "out")
    assert 'Input "t0": uint8_t[1][2][8]' in lib.header
    assert 'Output "t7": uint8_t[1][5]' in lib.header
    operators = lib.files["codegen/host/src/tvmgen_u8_operators.c"].read_text()
    assert "uint8_t* arg0" in operators and "(uint8_t)" in operators
    x = np.array([[[0, 1, 127, 128, 129, 200, 254, 255]] * 2], np.uint8)
    got, _ = lib.run([x])
    assert got.dtype == np.uint8


def _single(opcode: str, options: tuple[str, dict[str, Any]] | None = None) -> Any:
    m = ModelBuilder()
    x = m.tensor((1, 2, 2, 4), "uint8", **U8)
    inputs = [x]
    if opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        shape = (2, 1, 1, 4) if opcode == "CONV_2D" else (1, 1, 1, 4)
        w = m.tensor(shape, "uint8", np.full(shape, 130), scale=0.05, zero_point=128)
        bias = m.tensor((shape[0] * shape[3] // 4,), "int32", np.zeros(shape[0]))
        inputs += [w, bias]
        y = m.tensor((1, 2, 2, shape[0] if opcode == "CONV_2D" else 4), "uint8", **U8)
    elif opcode == "ADD":
        inputs.append(x)
        y = m.tensor((1, 2, 2, 4), "uint8", **U8)
    elif opcode.endswith("POOL_2D"):
        y = m.tensor((1, 1, 1, 4), "uint8", **U8)
    else:  # SOFTMAX
        y = m.tensor((1, 2, 2, 4), "uint8", scale=1 / 256, zero_point=0)
    m.op(opcode, inputs, [y], options)
    return m, [x], [y]


POOL = ("Pool2DOptions", dict(StrideH=2, StrideW=2, FilterHeight=2, FilterWidth=2))
REFUSED = {
    "CONV_2D": (("Conv2DOptions", dict(StrideH=1, StrideW=1)), "input UINT8"),
    "DEPTHWISE_CONV_2D": (
        ("DepthwiseConv2DOptions", dict(StrideH=1, StrideW=1, DepthMultiplier=1)),
        "input UINT8",
    ),
    "ADD": (None, "unsupported types UINT8, UINT8, UINT8"),
    "AVERAGE_POOL_2D": (POOL, "unsupported types UINT8 -> UINT8"),
    "MAX_POOL_2D": (POOL, "unsupported types UINT8 -> UINT8"),
    "SOFTMAX": (("SoftmaxOptions", dict(Beta=1.0)), "unsupported types UINT8"),
}


@pytest.mark.parametrize("opcode", sorted(REFUSED))
def test_uint8_where_tflite_micro_refuses_it(opcode: str) -> None:
    options, message = REFUSED[opcode]
    text = refusal(_single(opcode, options))
    assert text.startswith(f"crafted.tflite: error: operator 0 ({opcode}): "), text
    assert message in text, text


@pytest.mark.parametrize(
    ("source", "target"), [("float32", "uint8"), ("uint8", "uint8")]
)
def test_quantize_to_uint8_only_from_int8(source: str, target: str) -> None:
    m = ModelBuilder()
    x = m.tensor((4,), source, **(U8 if source == "uint8" else {}))
    y = m.tensor((4,), target, scale=0.2, zero_point=100)
    m.op("QUANTIZE", [x], [y])
    assert "operator 0 (QUANTIZE): unsupported" in refusal((m, [x], [y]))
