"""The oracle's int8 arithmetic is bit-exact with TFLite Micro's reference
kernels: real models' ADD and FULLY_CONNECTED layers, recomputed as relay
modules from the parameters stored in the .tflite file (read with the
``tflite`` package) and evaluated by the relay interpreter, against the
``tflite-micro`` Python interpreter on the same inputs."""

from pathlib import Path

import numpy as np
import tflite
from tflite_micro.python.tflite_micro import runtime

from usmp.diagnostics import verify_located
from usmp.dialects import new_context
from usmp.oracle.quantization import quantize_multiplier
from usmp.oracle.relay_interpreter import evaluate
from usmp.parsing import LocatingParser
from usmp.testing.shared_models import MODELS_DIR

MODELS = MODELS_DIR / "tflite_micro"


def parse(src: str):  # noqa: ANN201
    module = LocatingParser(new_context(), src, "generated.mlir").parse_module()
    verify_located(module)
    return module


class Model:
    """The parts of subgraph 0 of a .tflite file these tests need."""

    def __init__(self, path: Path):
        self.path = path
        self.model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
        self.graph = self.model.Subgraphs(0)

    def quant(self, t: int) -> tuple[np.float32, int]:
        q = self.graph.Tensors(t).Quantization()
        scales, zps = q.ScaleAsNumpy(), q.ZeroPointAsNumpy()
        assert len(scales) == 1, "per-tensor quantization expected"
        return np.float32(scales[0]), int(zps[0])

    def data(self, t: int) -> np.ndarray:
        tensor = self.graph.Tensors(t)
        dtype = {tflite.TensorType.INT8: np.int8, tflite.TensorType.INT32: np.int32}
        raw = self.model.Buffers(tensor.Buffer()).DataAsNumpy()
        return raw.view(dtype[tensor.Type()]).reshape(tensor.ShapeAsNumpy())

    def fused_activation(self, op_index: int, options_class) -> int:  # noqa: ANN001
        table = self.graph.Operators(op_index).BuiltinOptions()
        options = options_class()
        options.Init(table.Bytes, table.Pos)
        return options.FusedActivationFunction()


def activation_range(activation: int, scale: np.float32, zp: int) -> tuple[int, int]:
    """TFLite ``CalculateActivationRangeQuantized`` for int8 (NONE / RELU)."""
    if activation == tflite.ActivationFunctionType.NONE:
        return -128, 127
    assert activation == tflite.ActivationFunctionType.RELU
    return max(-128, zp + int(np.round(np.float32(0.0) / scale))), 127


def literal(a: np.ndarray) -> str:
    return f"dense<{a.tolist()}>"


# ------------------------------------------------------------------- ADD


def add_module(model: Model) -> str:
    """TFLite Micro's int8 ADD (``PrepareGeneralSubgraph`` + reference
    ``AddFunc``) as relay ops."""
    g = model.graph
    (op,) = [g.Operators(i) for i in range(g.OperatorsLength())]
    in1, in2 = op.InputsAsNumpy()
    (out,) = op.OutputsAsNumpy()
    (s1, zp1), (s2, zp2), (so, zpo) = (
        model.quant(in1),
        model.quant(in2),
        model.quant(out),
    )
    left_shift = 20
    twice_max = 2 * max(float(s1), float(s2))
    m1, sh1 = quantize_multiplier(float(s1) / twice_max)
    m2, sh2 = quantize_multiplier(float(s2) / twice_max)
    mo, sho = quantize_multiplier(twice_max / ((1 << left_shift) * float(so)))
    lo, hi = activation_range(model.fused_activation(0, tflite.AddOptions), so, zpo)
    t8, t32 = "tensor<1x128x128x1xi8>", "tensor<1x128x128x1xi32>"

    def rescale(x: str, zp: int, m: int, sh: int, name: str) -> str:
        return f"""
  %{name}32 = relay.cast %{x} : {t8} -> {t32}
  %{name}c = relay.add %{name}32, %neg_zp_{name} : ({t32}, tensor<i32>) -> {t32}
  %{name}s = relay.multiply %{name}c, %two_pow_shift : ({t32}, tensor<i32>) -> {t32}
  %{name}r = relay.fixed_point_multiply %{name}s {{multiplier = array<i32: {m}>, shift = array<i32: {sh}>}} : {t32} -> {t32}"""

    return f"""
func.func @main(%a: {t8}, %b: {t8}) -> {t8} {{
  %neg_zp_a = relay.constant dense<{-zp1}> : tensor<i32>
  %neg_zp_b = relay.constant dense<{-zp2}> : tensor<i32>
  %two_pow_shift = relay.constant dense<{1 << left_shift}> : tensor<i32>
  %out_zp = relay.constant dense<{zpo}> : tensor<i32>
  {rescale("a", zp1, m1, sh1, "a")}
  {rescale("b", zp2, m2, sh2, "b")}
  %sum = relay.add %ar, %br : ({t32}, {t32}) -> {t32}
  %o = relay.fixed_point_multiply %sum {{multiplier = array<i32: {mo}>, shift = array<i32: {sho}>}} : {t32} -> {t32}
  %oz = relay.add %o, %out_zp : ({t32}, tensor<i32>) -> {t32}
  %oc = relay.clip %oz {{a_min = {float(lo)} : f64, a_max = {float(hi)} : f64}} : {t32} -> {t32}
  %r = relay.cast %oc : {t32} -> {t8}
  func.return %r : {t8}
}}
"""


def test_int8_add_is_bit_exact_with_tflite_micro() -> None:
    path = MODELS / "simple_add_model.tflite"
    module = parse(add_module(Model(path)))
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (1, 128, 128, 1), dtype=np.int8)
    b = rng.integers(-128, 128, (1, 128, 128, 1), dtype=np.int8)
    # every (a, b) pair of extremes and a full sweep of a against fixed b
    a.reshape(-1)[:256] = np.arange(-128, 128)
    b.reshape(-1)[:256] = 7
    a.reshape(-1)[256:260] = [-128, -128, 127, 127]
    b.reshape(-1)[256:260] = [-128, 127, -128, 127]

    interpreter = runtime.Interpreter.from_file(str(path), arena_size=256 * 1024)
    interpreter.set_input(a, 0)
    interpreter.set_input(b, 1)
    interpreter.invoke()
    expected = interpreter.get_output(0)

    (got,) = evaluate(module, [a, b])
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(got)) > 100  # the comparison covers the output range


# ------------------------------------------------------------ FULLY_CONNECTED


def fully_connected_module(model: Model, batch: int) -> str:
    """Every int8 FULLY_CONNECTED of the model, chained as the contract's
    ``dense -> add(bias) -> fixed_point_multiply -> add(zp) -> clip -> cast``,
    on a batch of ``batch`` independent rows."""
    g = model.graph
    (model_input,) = g.InputsAsNumpy()
    lines: list[str] = []
    current, k = "%x", int(g.Tensors(model_input).ShapeAsNumpy()[-1])
    for i in range(g.OperatorsLength()):
        op = g.Operators(i)
        code = model.model.OperatorCodes(op.OpcodeIndex()).BuiltinCode()
        assert code == tflite.BuiltinOperator.FULLY_CONNECTED
        x_t, w_t, b_t = op.InputsAsNumpy()
        (out_t,) = op.OutputsAsNumpy()
        (sx, zpx), (sw, zpw), (so, zpo) = (
            model.quant(x_t),
            model.quant(w_t),
            model.quant(out_t),
        )
        weight, bias = model.data(w_t), model.data(b_t)
        n = weight.shape[0]
        # GetQuantizedConvolutionMultipler: float scales, double arithmetic
        m, sh = quantize_multiplier(float(sx) * float(sw) / float(so))
        act = model.fused_activation(i, tflite.FullyConnectedOptions)
        lo, hi = activation_range(act, so, zpo)
        acc, out8 = f"tensor<{batch}x{n}xi32>", f"tensor<{batch}x{n}xi8>"
        lines.append(f"""
  %w{i} = relay.constant {literal(weight)} : tensor<{n}x{k}xi8>
  %b{i} = relay.constant {literal(bias)} : tensor<{n}xi32>
  %zp{i} = relay.constant dense<{zpo}> : tensor<i32>
  %d{i} = relay.dense {current}, %w{i} {{input_zero_point = {zpx} : i64, kernel_zero_point = {zpw} : i64}} : (tensor<{batch}x{k}xi8>, tensor<{n}x{k}xi8>) -> {acc}
  %ab{i} = relay.add %d{i}, %b{i} : ({acc}, tensor<{n}xi32>) -> {acc}
  %q{i} = relay.fixed_point_multiply %ab{i} {{multiplier = array<i32: {m}>, shift = array<i32: {sh}>}} : {acc} -> {acc}
  %az{i} = relay.add %q{i}, %zp{i} : ({acc}, tensor<i32>) -> {acc}
  %c{i} = relay.clip %az{i} {{a_min = {float(lo)} : f64, a_max = {float(hi)} : f64}} : {acc} -> {acc}
  %y{i} = relay.cast %c{i} : {acc} -> {out8}""")
        current, k = f"%y{i}", n
    return f"""
func.func @main(%x: tensor<{batch}x1xi8>) -> tensor<{batch}x{k}xi8> {{{"".join(lines)}
  func.return {current} : tensor<{batch}x{k}xi8>
}}
"""


def test_int8_fully_connected_is_bit_exact_with_tflite_micro() -> None:
    path = MODELS / "hello_world_int8.tflite"
    module = parse(fully_connected_module(Model(path), batch=256))
    inputs = np.arange(-128, 128, dtype=np.int8).reshape(256, 1)

    interpreter = runtime.Interpreter.from_file(str(path))
    expected = np.empty((256, 1), dtype=np.int8)
    for row in range(256):
        interpreter.set_input(inputs[row : row + 1], 0)
        interpreter.invoke()
        expected[row] = interpreter.get_output(0)[0]

    (got,) = evaluate(module, [inputs])
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(got)) > 50  # a sine: many distinct outputs
