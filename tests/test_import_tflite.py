"""The TFLite importer on real models: what the relay module looks like
(signature, names, layouts, padding, requantisation parameters, locations),
TFLite's prepare-time arithmetic, weight printing, and the command line.

Numerical agreement with TFLite Micro is ``test_models.py`` (real models)
and ``test_import_tflite_synthetic.py`` (operators and options the real
models do not exercise).
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    StringAttr,
)
from xdsl.dialects.func import FuncOp

from usmp.diagnostics import location_of, verify_located
from usmp.dialects import new_context
from usmp.dialects.relay import INPUT_TENSOR_NAMES, OUTPUT_TENSOR_NAMES, ConstantOp
from usmp.dialects.relay_ops import Conv2DOp, FixedPointMultiplyOp
from usmp.dialects.relay_tflite_ops import QuantizedSoftmaxOp
from usmp.frontend import quantization as q
from usmp.frontend.printing import format_constants, print_module
from usmp.frontend.tflite_import import import_model, import_tflite
from usmp.frontend.tflite_reader import TFLiteImportError, read_model_file
from usmp.oracle.values import dense_to_numpy
from usmp.parsing import LocatingParser
from usmp.testing.shared_models import MODELS_DIR
from usmp.tools import import_tflite as cli

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
MICRO_SPEECH = MODELS_DIR / "tflite_micro/micro_speech_quantized.tflite"
KWS_FLOAT = MODELS_DIR / "mlperf_tiny/converted/kws_ref_model_float32_full.tflite"
HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
AD01 = MODELS_DIR / "mlperf_tiny/ad01_int8.tflite"
SIMPLE_ADD = MODELS_DIR / "tflite_micro/simple_add_model.tflite"


def main_of(module) -> FuncOp:  # noqa: ANN001
    (func,) = module.ops
    assert isinstance(func, FuncOp)
    return func


def ops_of(module, cls):  # noqa: ANN001, ANN201
    return [op for op in module.walk() if isinstance(op, cls)]


def values_of(op: ConstantOp) -> np.ndarray:
    assert isinstance(op.value, DenseIntOrFPElementsAttr)
    return dense_to_numpy(op.value)


def parse(text: str):  # noqa: ANN201
    module = LocatingParser(new_context(), text, "imported.mlir").parse_module()
    verify_located(module)
    return module


def printed(module, **kwargs) -> str:  # noqa: ANN001, ANN003
    out = io.StringIO()
    print_module(module, out, **kwargs)
    return out.getvalue()


# ------------------------------------------------- TFLite's prepare arithmetic


@pytest.mark.parametrize(
    ("real", "expected"),
    [
        (0.5, (1 << 30, 0)),
        (1.0, (1 << 30, 1)),
        (0.0, (0, 0)),
        (2.0**-40, (0, 0)),  # shift < -31 flushes to zero
        (1.0 - 2.0**-40, (1 << 30, 1)),  # q * 2^31 rounds to 2^31: carry
        (0.75, (3 << 29, 0)),
        (2.0**-31 * 0.75, (3 << 29, -31)),
    ],
)
def test_quantize_multiplier(real: float, expected: tuple[int, int]) -> None:
    assert q.quantize_multiplier(real) == expected


def test_tflite_round_is_half_away_from_zero_and_exact() -> None:
    assert [q.tflite_round(x) for x in (2.5, -2.5, 0.49999999999999994, -0.5)] == [
        3.0,
        -3.0,
        0.0,
        -1.0,
    ]


def test_activation_ranges() -> None:
    relu6 = q.activation_range_quantized(q.Activation.RELU6, 0.05, -10, -128, 127)
    assert relu6 == (-10, 110)
    relu_n1 = q.activation_range_quantized(
        q.Activation.RELU_N1_TO_1, 0.05, 0, -128, 127
    )
    assert relu_n1 == (-20, 20)
    assert q.activation_range_quantized(q.Activation.RELU, 0.1, -128, -128, 127) == (
        -128,
        127,
    )
    assert q.activation_range_quantized(q.Activation.NONE, 0.1, 3, -128, 127) == (
        -128,
        127,
    )


def test_fully_connected_multiplies_scales_in_double() -> None:
    # float32 scales whose product rounds differently in float32 and double:
    # the interpreter's build multiplies in double, as for CONV_2D
    # (tests/test_quantize_multipliers.py checks it against TFLite Micro)
    a, b, out = 0.031848084181547165, 0.013489335775375366, 0.002048676135018468
    assert q.fully_connected_multiplier(a, b, out) == (1801318155, -2)
    float32_product = float(np.float32(a) * np.float32(b))
    assert q.quantize_multiplier(float32_product / out) == (1801318147, -2)
    assert q.conv_multipliers(a, [b], out) == ([1801318155], [-2])


def test_add_multipliers_follow_tflite() -> None:
    (m1, s1), (m2, s2), (mo, so) = q.add_multipliers(0.5, 0.25, 0.75)
    # input 1 is the larger scale: real multiplier 0.5 / (2 * 0.5) = 0.5
    assert (m1, s1) == (1 << 30, 0)
    assert (m2, s2) == (1 << 30, -1)
    assert (mo, so) == q.quantize_multiplier(1.0 / (2**20 * 0.75))


# ------------------------------------------------------------ module shape


def test_main_signature_names_and_batch() -> None:
    model = read_model_file(KWS)
    assert model.tensors[model.inputs[0]].shape_signature == (-1, 49, 10, 1)
    func = main_of(import_model(model))
    assert [str(a.type) for a in func.body.block.args] == ["tensor<1x49x10x1xi8>"]
    # the SSA name is a hint (xDSL drops a trailing _<digits>); the TFLite
    # names are kept verbatim in the attributes
    assert func.body.block.args[0].name_hint == "input"
    assert func.attributes[INPUT_TENSOR_NAMES] == ArrayAttr([StringAttr("input_1")])
    assert func.attributes[OUTPUT_TENSOR_NAMES] == ArrayAttr([StringAttr("Identity")])


def test_two_inputs_are_named_and_ordered() -> None:
    func = main_of(import_tflite(SIMPLE_ADD))
    names = func.attributes[INPUT_TENSOR_NAMES]
    assert names == ArrayAttr(
        [
            StringAttr("serving_default_input_1:0"),
            StringAttr("serving_default_input_2:0"),
        ]
    )
    hints = [a.name_hint for a in func.body.block.args]
    assert hints == ["serving_default_input_1", "serving_default_input_2"]


def test_int8_conv_weights_stay_ohwi_with_tflite_padding() -> None:
    """int8 conv weights keep TFLite's OHWI (each output channel's taps are
    contiguous, so the generated input-channel loop vectorises)."""
    model = read_model_file(KWS)
    module = import_model(model)
    convs = ops_of(module, Conv2DOp)
    assert len(convs) == 9
    first = convs[0]
    # SAME padding of 49x10 by 10x4, stride 2: out 25x5, total padding 9
    # (4 top, 5 bottom) and 2 (1 left, 1 right) as TFLite
    assert str(first.weight.type) == "tensor<64x10x4x1xi8>"
    assert first.kernel_layout == "OHWI"
    assert first.padding == (4, 1, 5, 1)
    assert first.strides == (2, 2)
    assert first.input_zero_point == 83
    weight_op = first.weight.owner
    assert isinstance(weight_op, ConstantOp)
    ohwi = model.tensors[model.operators[0].inputs[1]].data
    assert ohwi is not None
    np.testing.assert_array_equal(values_of(weight_op), ohwi)


def test_float_conv_weights_become_hwio() -> None:
    """float conv weights go to HWIO (neighbouring output channels contiguous,
    what the lowering's four-channel reduction reads)."""
    model = read_model_file(KWS_FLOAT)
    convs = ops_of(import_model(model), Conv2DOp)
    first = convs[0]
    assert str(first.weight.type) == "tensor<10x4x1x64xf32>"
    weight_op = first.weight.owner
    assert isinstance(weight_op, ConstantOp)
    ohwi = model.tensors[model.operators[0].inputs[1]].data
    assert ohwi is not None
    np.testing.assert_array_equal(values_of(weight_op), ohwi.transpose(1, 2, 3, 0))


def test_depthwise_weights_and_groups() -> None:
    convs = ops_of(import_tflite(KWS), Conv2DOp)
    depthwise = convs[1]
    assert depthwise.groups == 64
    assert str(depthwise.weight.type) == "tensor<3x3x1x64xi8>"
    assert depthwise.padding == (1, 1, 1, 1)
    # micro_speech: one input channel, depth multiplier 8
    (ms_conv,) = ops_of(import_tflite(MICRO_SPEECH), Conv2DOp)
    assert ms_conv.groups == 1
    assert str(ms_conv.weight.type) == "tensor<10x8x1x8xi8>"
    assert str(ms_conv.result.type) == "tensor<1x25x20x8xi32>"


def test_per_channel_requantisation_parameters() -> None:
    model = read_model_file(KWS)
    module = import_model(model)
    fpm = ops_of(module, FixedPointMultiplyOp)[0]
    conv = model.operators[0]
    x, w, out = (
        model.tensors[i] for i in (conv.inputs[0], conv.inputs[1], conv.outputs[0])
    )
    assert w.quantization is not None and x.quantization and out.quantization
    expected = q.conv_multipliers(
        x.quantization.scale, list(w.quantization.scales), out.quantization.scale
    )
    assert (list(fpm.multiplier), list(fpm.shift)) == expected
    assert fpm.axis == 3
    assert len(fpm.multiplier) == 64


def test_int8_softmax_parameters() -> None:
    (softmax,) = ops_of(import_tflite(KWS), QuantizedSoftmaxOp)
    assert (
        softmax.input_multiplier,
        softmax.input_left_shift,
        softmax.diff_min,
    ) == (1242899200, 24, -124)


def test_ops_are_located_at_their_tflite_operator() -> None:
    module = import_tflite(KWS)
    convs = ops_of(module, Conv2DOp)
    model = read_model_file(KWS)
    assert [location_of(c) for c in convs] == [
        f"kws_ref_model.tflite:{k} ({model.operators[k].opcode})" for k in range(9)
    ]
    assert model.operators[1].opcode == "DEPTHWISE_CONV_2D"


def test_outputs_option_returns_intermediate_tensors() -> None:
    model = read_model_file(HELLO)
    module = import_model(model, [op.outputs[0] for op in model.operators])
    func = main_of(module)
    assert [str(t) for t in func.function_type.outputs] == [
        "tensor<1x16xi8>",
        "tensor<1x16xi8>",
        "tensor<1x1xi8>",
    ]
    names = func.attributes[OUTPUT_TENSOR_NAMES]
    assert isinstance(names, ArrayAttr) and len(names) == 3


def test_constants_and_scalars_are_shared() -> None:
    module = import_tflite(KWS)
    scalars = [
        op for op in ops_of(module, ConstantOp) if op.result.type.get_shape() == ()
    ]
    values = [int(values_of(op)) for op in scalars]
    assert sorted(values) == sorted(set(values))  # one constant per value


# ---------------------------------------------------------------- printing


def test_hex_weights_round_trip_through_the_parser() -> None:
    module = import_tflite(AD01)
    text = printed(module)
    assert 'dense<"0x' in text  # 128x640 weights are one hex string
    reparsed = parse(text)
    assert printed(reparsed) == text


def test_kws_round_trips_with_its_softmax() -> None:
    text = printed(import_tflite(KWS))
    assert "relay.quantized_softmax" in text
    assert printed(parse(text)) == text


def test_elided_weights_are_readable_and_short() -> None:
    module = import_tflite(AD01)
    text = printed(module, weights="elided")
    assert 'dense<"0x' not in text
    # 10 weights + 9 biases; the 8-element bias is under the threshold (16)
    assert text.count("dense_resource<__elided__>") == 19
    assert "relay.constant dense<[" in text
    assert len(text) < len(printed(module)) / 20


def test_resource_weights_keep_the_bytes_out_of_line() -> None:
    module = import_tflite(HELLO)
    text = printed(module, weights="resource")
    body, _, blobs = text.partition("{-#")
    assert 'dense<"0x' not in body
    assert "dense_resource<sequential_dense_1_MatMul>" in body
    weight = next(
        op
        for op in ops_of(module, ConstantOp)
        if op.result.name_hint == "sequential_dense_1_MatMul"
    )
    blob = "0x01000000" + values_of(weight).tobytes().hex().upper()
    assert f'sequential_dense_1_MatMul: "{blob}"' in blobs
    # printing works on a clone: the module still holds the dense values
    assert isinstance(weight.value, DenseIntOrFPElementsAttr)


def test_resource_file_is_read_by_usmp_opt(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "hello.mlir"
    path.write_text(printed(import_tflite(HELLO), weights="resource"))
    result = subprocess.run(
        [sys.executable, "-m", "usmp.tools.usmp_opt", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "dense_resource<sequential_dense_1_MatMul>" in result.stdout


def test_print_weights_lists_arrays() -> None:
    text = format_constants(import_tflite(HELLO))
    assert "%sequential_dense_2_MatMul : tensor<1x16xi8>\n[[-39,  59,  39," in text
    assert "%sequential_dense_2_BiasAdd_ReadVariableOp : tensor<1xi32>\n[429]\n" in text


# ------------------------------------------------------------ command line


def test_cli_writes_the_module(tmp_path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "hello.mlir"
    assert cli.main([str(HELLO), "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""
    assert out.read_text() == printed(import_tflite(HELLO))


def test_cli_outputs_all(capsys) -> None:  # noqa: ANN001
    assert cli.main([str(HELLO), "--outputs", "all", "--weights", "elided"]) == 0
    text = capsys.readouterr().out
    assert "-> (tensor<1x16xi8>, tensor<1x16xi8>, tensor<1x1xi8>)" in text


def test_cli_rejects_bad_outputs(capsys) -> None:  # noqa: ANN001
    assert cli.main([str(HELLO), "--outputs", "99"]) == 1
    assert "tensor indices [99] out of range (0..9)" in capsys.readouterr().err


def test_cli_refusal_has_no_traceback() -> None:
    result = subprocess.run(
        [
            "usmp-import-tflite",
            str(MODELS_DIR / "tflite_micro/person_detect_vela.tflite"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "person_detect_vela.tflite: error: operator 0 (CUSTOM 'ethos-u'): custom "
        "operator 'ethos-u' (an Arm Ethos-U NPU command stream (compiled by Vela), "
        "not CPU code) has no kernel: supply its C function with --custom-op "
        "ethos-u=path/to/kernel.h[:function] (usmp.CustomOp in Python)\n"
    )


def test_unsupported_builtin_names_every_unsupported_operator(tmp_path) -> None:  # noqa: ANN001
    from tests.test_import_tflite_synthetic import ModelBuilder

    m = ModelBuilder()
    x = m.tensor((1, 4), "float32")
    y = m.tensor((1, 4), "float32")
    m.op("RELU", [x], [y])
    for _ in range(3):  # a builtin no converter handles, three times
        z = m.tensor((1, 4), "float32")
        m.op("RFFT2D", [y], [z])
        y = z
    path = tmp_path / "rfft.tflite"
    path.write_bytes(m.build([x], [y]))
    with pytest.raises(TFLiteImportError) as info:
        import_tflite(path)
    message = str(info.value)
    assert message.startswith("rfft.tflite: error: operator 1 (RFFT2D): ")
    assert "[2 other unsupported operator(s): 2 (RFFT2D), 3 (RFFT2D)]" in message


def test_not_a_tflite_file(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "x.tflite"
    path.write_bytes(b"\x00" * 64)
    with pytest.raises(
        TFLiteImportError, match="x.tflite: error: cannot read the model"
    ):
        import_tflite(path)


def test_resource_keys_of_two_inputs_in_one_process_keep_their_own_data(
    tmp_path,  # noqa: ANN001
) -> None:
    """xDSL keeps resource blobs process-wide and renames a key another input
    took; each input's uses and its blob must still meet (the second input
    with the same key used to have no data), and neither overwrites the
    other's bytes."""
    from usmp.oracle.values import builtin_resource_blob

    def parse(data: str) -> str:
        text = (
            "func.func @main() -> tensor<4xi8> {\n"
            "  %0 = relay.constant dense_resource<w> : tensor<4xi8>\n"
            "  func.return %0 : tensor<4xi8>\n}\n"
            f'{{-# dialect_resources: {{ builtin: {{ w: "0x04000000{data}" }} }} #-}}\n'
        )
        module = LocatingParser(new_context(), text, "r.mlir").parse_module()
        (op,) = ops_of(module, ConstantOp)
        return op.value.resource_handle.data  # pyright: ignore

    first, second = parse("01020304"), parse("0A0B0C0D")
    assert first != second
    assert builtin_resource_blob(first) == "0x0400000001020304"
    assert builtin_resource_blob(second) == "0x040000000A0B0C0D"
    # the same file twice through the API: both compile, the same C
    path = tmp_path / "hello.mlir"
    path.write_text(printed(import_tflite(HELLO), weights="resource"))
    import usmp

    libraries = [usmp.compile(path, output_dir=tmp_path / f"out{k}") for k in (0, 1)]
    sources = [
        {p.name: p.read_bytes() for p in (tmp_path / f"out{k}").rglob("*.c")}
        for k in (0, 1)
    ]
    assert sources[0] and sources[0] == sources[1]
    assert libraries[0].plan.workspace_bytes == libraries[1].plan.workspace_bytes > 0
