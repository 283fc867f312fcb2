"""Hybrid FULLY_CONNECTED and CONV_2D (float32 activations, int8 weights)
against LiteRT's reference kernels (``ai-edge-litert``, ``BUILTIN_REF``;
TFLite Micro refuses hybrid models): single-operator models written with the
flatbuffer builder covering every option (batch rows, ``keep_num_dims``,
per-channel weight scales, ``asymmetric_quantize_inputs``, bias or none,
fused activations, conv strides / padding / dilation), and the two shared
hybrid models (ToyCar, KWS float32) with every operator's output; the numpy
oracle and our C (gcc) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend.tflite_import import (
    TFLiteImportError,
    import_model,
    import_tflite_bytes,
)
from usmp.frontend.tflite_reader import Model, Operator, read_model
from usmp.oracle.hybrid import dynamic_quantize_rows
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import (
    FLOAT_OUTPUT_RTOL,
    difference,
    random_inputs,
    run_litert,
)

PASSES = "fuse-ops,lower-ops,aot-lower-main,usmp"
F32 = np.float32


def hard_rows(depth: int, rows: int, seed: int) -> np.ndarray:
    """Rows that exercise every branch of the row quantisation: random,
    rounding ties at range 127, all zeros, all positive, all negative,
    tiny and large magnitudes."""
    rng = np.random.default_rng(seed)
    data = (3 * rng.standard_normal((rows, depth))).astype(F32)
    specials = [
        np.resize(np.array([127, 2.5, -2.5, 0.5, -1.5, 63.5, 0], F32), depth),
        np.zeros(depth, F32),
        np.abs(data[0]) + F32(0.25),
        -np.abs(data[0]) - F32(0.25),
        data[0] * F32(1e-3),
        data[0] * F32(1e4),
    ]
    for r, row in enumerate(specials[: rows - 1]):
        data[r + 1] = row
    return data


def matches_litert(data: bytes, x: np.ndarray) -> None:
    """Oracle and C == LiteRT's reference kernels on ``x``, bit for bit."""
    model = read_model(data, "hybrid.tflite")
    (want,) = run_litert(data, [x], model.outputs)
    module = import_tflite_bytes(data)
    (oracle,) = evaluate(module, [x])
    np.testing.assert_array_equal(oracle, want.reshape(oracle.shape))
    (got,) = run_module(module, [x], passes=PASSES)
    np.testing.assert_array_equal(got, want.reshape(got.shape))


def fully_connected(
    in_shape: tuple[int, ...],
    units: int,
    *,
    per_channel: bool = False,
    asymmetric: bool = False,
    bias: bool = True,
    activation: int = 0,
    keep_num_dims: bool = False,
    seed: int = 0,
) -> bytes:
    rng = np.random.default_rng(seed)
    depth = in_shape[-1]
    weights = rng.integers(-127, 128, (units, depth)).astype(np.int8)
    scale = list(rng.uniform(0.005, 0.03, units)) if per_channel else 0.0173
    rows = int(np.prod(in_shape)) // depth
    out_shape = (*in_shape[:-1], units) if keep_num_dims else (rows, units)
    m = ModelBuilder()
    x = m.tensor(in_shape, "float32")
    w = m.tensor((units, depth), "int8", weights, scale=scale)
    b = m.tensor((units,), "float32", rng.standard_normal(units)) if bias else -1
    y = m.tensor(out_shape, "float32")
    options = dict(
        FusedActivationFunction=activation,
        KeepNumDims=keep_num_dims,
        AsymmetricQuantizeInputs=asymmetric,
    )
    m.op("FULLY_CONNECTED", [x, w, b], [y], ("FullyConnectedOptions", options))
    return m.build([x], [y])


@pytest.mark.parametrize(
    "in_shape, options",
    [
        ((1, 9), dict(activation=1)),
        ((7, 9), dict(per_channel=True, bias=False)),
        ((7, 9), dict(asymmetric=True, activation=3)),
        ((7, 9), dict(asymmetric=True, per_channel=True, bias=False)),
        ((2, 3, 9), dict(keep_num_dims=True, asymmetric=True)),
        ((2, 3, 9), dict(activation=1)),
    ],
)
def test_fully_connected_equals_litert(in_shape, options):
    data = fully_connected(in_shape, 5, **options)
    rows = hard_rows(in_shape[-1], int(np.prod(in_shape[:-1])), seed=len(options))
    matches_litert(data, rows.reshape(in_shape))


@pytest.mark.parametrize("asymmetric", [False, True])
def test_many_rows_equal_litert(asymmetric):
    """4,096 rows of random magnitudes: the row quantisation's float steps
    (inverse scale, rounding, asymmetric zero point) as LiteRT's, bit for bit
    (oracle and C)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4096, 16)) * 10.0 ** rng.uniform(-3, 3, (4096, 1))
    x += rng.uniform(-1, 1, (4096, 1)) * np.abs(x).max(axis=1, keepdims=True)
    data = fully_connected((4096, 16), 3, asymmetric=asymmetric, per_channel=True)
    matches_litert(data, x.astype(F32))


def test_asymmetric_zero_point_is_added_after_the_rounding():
    """A row (all negative: zero point 127) where ``x * inverse`` is -91.5
    in f32: LiteRT rounds it to -92 and then adds 127 (35); rounding ``127 +
    x * inverse`` = 35.5 would give 36. Found by re-seeding
    ``test_many_rows_equal_litert`` (1 row in 4,096)."""
    row = np.frombuffer(
        bytes.fromhex(
            "853b27bb7f1699bb0add73bbb623b4ba8d048fbbe3b9dbba98d1f5b95a284bbb"
            "a947ddba0fe83bbbde022cba76d071bbada254baed512cbbb46b50bb8f4e24ba"
        ),
        F32,
    ).reshape(1, 16)
    q, _, zero_point = dynamic_quantize_rows(row, asymmetric=True)
    assert zero_point[0, 0] == 127 and q[0, 5] == 35
    matches_litert(fully_connected((1, 16), 3, asymmetric=True, per_channel=True), row)


def test_asymmetric_inputs_change_the_result():
    """The option is honoured: the symmetric model differs on a shifted row."""
    x = (np.random.default_rng(3).standard_normal((1, 9)) + 2).astype(F32)
    symmetric = import_tflite_bytes(fully_connected((1, 9), 5))
    asymmetric_data = fully_connected((1, 9), 5, asymmetric=True)
    (want,) = run_litert(asymmetric_data, [x], read_model(asymmetric_data, "m").outputs)
    (other,) = evaluate(symmetric, [x])
    assert not np.array_equal(other, want)
    matches_litert(asymmetric_data, x)


def conv(
    in_shape: tuple[int, int, int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    padding: int,
    scales: float | list[float] = 0.02,
    activation: int = 1,
    depthwise: bool = False,
) -> bytes:
    rng = np.random.default_rng(sum(kernel) + padding)
    n, h, w_, c = in_shape
    out_c = c if depthwise else 6
    w_shape = (1, *kernel, c) if depthwise else (out_c, *kernel, c)
    weights = rng.integers(-127, 128, w_shape).astype(np.int8)
    sizes = []
    for size, k, s, d in zip((h, w_), kernel, stride, dilation, strict=True):
        effective = (k - 1) * d + 1
        sizes.append(
            (size + s - 1) // s if padding == 0 else (size - effective + s) // s
        )
    m = ModelBuilder()
    x = m.tensor(in_shape, "float32")
    axis = 3 if depthwise else 0
    wt = m.tensor(w_shape, "int8", weights, scale=scales, axis=axis)
    b = m.tensor((out_c,), "float32", rng.standard_normal(out_c))
    y = m.tensor((n, *sizes, out_c), "float32")
    options = dict(
        Padding=padding,
        StrideH=stride[0],
        StrideW=stride[1],
        DilationHFactor=dilation[0],
        DilationWFactor=dilation[1],
        FusedActivationFunction=activation,
    )
    if depthwise:
        options["DepthMultiplier"] = 1
        m.op("DEPTHWISE_CONV_2D", [x, wt, b], [y], ("DepthwiseConv2DOptions", options))
    else:
        m.op("CONV_2D", [x, wt, b], [y], ("Conv2DOptions", options))
    return m.build([x], [y])


@pytest.mark.parametrize(
    "in_shape, kernel, stride, dilation, padding",
    [
        ((1, 7, 6, 3), (3, 2), (2, 2), (1, 1), 0),
        ((2, 7, 6, 3), (3, 2), (1, 1), (1, 1), 1),
        ((1, 7, 6, 3), (3, 2), (1, 2), (2, 1), 0),
        ((3, 4, 5, 4), (1, 1), (1, 1), (1, 1), 1),
    ],
)
def test_conv_2d_equals_litert(in_shape, kernel, stride, dilation, padding):
    data = conv(in_shape, kernel, stride, dilation, padding)
    x = hard_rows(int(np.prod(in_shape[1:])), in_shape[0], seed=padding)
    matches_litert(data, x.reshape(in_shape))


def test_conv_2d_per_channel_with_one_scale_is_per_tensor():
    data = conv((1, 5, 5, 2), (3, 3), (1, 1), (1, 1), 0, scales=[0.02] * 6)
    matches_litert(data, hard_rows(50, 1, seed=4).reshape(1, 5, 5, 2))


@pytest.mark.parametrize(
    "depthwise, scales, message",
    [
        (False, [0.01, 0.02, 0.03, 0.04, 0.05, 0.06], "per-channel weight scales"),
        (True, 0.02, "supported for FULLY_CONNECTED and CONV_2D"),
    ],
)
def test_refused_hybrid_operators(depthwise, scales, message):
    data = conv((1, 5, 5, 3), (3, 3), (1, 1), (1, 1), 0, scales, depthwise=depthwise)
    with pytest.raises(TFLiteImportError, match=message):
        import_tflite_bytes(data, "crafted.tflite")


def _is_hybrid(model: Model, op: Operator) -> bool:
    types = [model.tensors[i].type_name for i in op.inputs[:2]]
    return types == ["FLOAT32", "INT8"]


def _alone(model: Model, op: Operator) -> bytes:
    """``op`` of ``model`` as a single-operator model (same weights, bias,
    quantisation and options)."""
    m = ModelBuilder()
    x_t, w_t, b_t = (model.tensors[i] for i in op.inputs)
    assert w_t.quantization is not None and w_t.data is not None
    x = m.tensor(x_t.shape, "float32")
    w = m.tensor(w_t.shape, "int8", w_t.data, scale=list(w_t.quantization.scales))
    b = m.tensor(b_t.shape, "float32", b_t.data)
    y = m.tensor(model.tensors[op.outputs[0]].shape, "float32")
    o = op.options
    if op.opcode == "CONV_2D":
        names = ["Padding", "StrideH", "StrideW", "DilationHFactor", "DilationWFactor"]
        kind = "Conv2DOptions"
    else:
        names, kind = (
            ["KeepNumDims", "AsymmetricQuantizeInputs"],
            "FullyConnectedOptions",
        )
    options = {n: getattr(o, n)() for n in [*names, "FusedActivationFunction"]}
    m.op(op.opcode, [x, w, b], [y], (kind, options))
    return m.build([x], [y])


@pytest.mark.parametrize(
    "name, count",
    [
        ("mlperf_tiny/model_ToyCar_quant.tflite", 10),
        ("mlperf_tiny/kws_ref_model_float32.tflite", 5),
    ],
)
def test_shared_hybrid_model_every_tensor_equals_litert(name, count):
    """Every hybrid operator alone on LiteRT's own input, bit for bit; every
    operator's output of the whole model (oracle): bit for bit for ToyCar
    (hybrid only), within the model tests' float tolerances for KWS, whose
    float depthwise convolutions, pooling and softmax sum in another order;
    the model's output through C."""
    data = (MODELS_DIR / name).read_bytes()
    model = read_model(data, name)
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    hybrid = [op for op in model.operators if _is_hybrid(model, op)]
    assert len(hybrid) == count
    for seed in (0, 1):
        inputs = random_inputs(model, seed)
        want = dict(zip(produced, run_litert(data, inputs, produced), strict=True))
        for op in hybrid:
            x = run_litert(data, inputs, [op.inputs[0]])[0]
            (got,) = evaluate(import_tflite_bytes(_alone(model, op)), [x])
            expected = want[op.outputs[0]]
            np.testing.assert_array_equal(got, expected.reshape(got.shape))
        ours = dict(zip(produced, evaluate(module, inputs), strict=True))
        for index in produced:
            got, expected = ours[index], want[index].reshape(ours[index].shape)
            if count == len(model.operators):
                np.testing.assert_array_equal(got, expected, err_msg=f"#{index}")
            rtol = FLOAT_OUTPUT_RTOL if index in model.outputs else 1e-4
            assert difference(got, expected, rtol) is None, f"seed {seed} #{index}"
    inputs = random_inputs(model, 2)
    (want_out,) = run_litert(data, inputs, model.outputs)
    (got_out,) = run_module(import_tflite_bytes(data), inputs, passes=PASSES)
    assert difference(got_out, want_out.reshape(got_out.shape)) is None
