"""int16 activations ("16x8" models) of the non-convolution builtins, bit
for bit with TFLite Micro.

* TFLM's own int16 integration-test models (``shared/models/tflite_micro/
  seanet/<op>/``): through ``usmp.compile`` and gcc, each reproduces its
  golden CSV exactly; and on seeded random inputs over the whole int16 range,
  every operator output (the oracle's and the C library's) equals TFLite
  Micro's.
* Single-operator models written with ``ModelBuilder`` for every option and
  the edge shapes (broadcasting, size-1 dimensions), compared the same way.
* The refusals TFLite Micro's kernels make for int16 (a non-zero zero point
  where it needs symmetric int16).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import (
    RELU,
    RELU6,
    RELU_N1_TO_1,
    ModelBuilder,
    refusal,
)
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import TFLMError, difference, random_inputs, run_tflm
from usmp.tools.c_library import as_emitc

SEANET = MODELS_DIR / "tflite_micro/seanet"
PASSES = "fuse-ops,lower-ops,aot-lower-main,usmp"


def compare_every_tensor(data: bytes, seeds: tuple[int, ...] = (0, 1)) -> None:
    """Every operator output of the model, from the oracle and from the C
    library (the module returning all of them), equals TFLite Micro's on
    seeded inputs uniform over each input's whole integer range."""
    model = read_model(data, "int16.tflite")
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    lowered = as_emitc(run_pipeline(module, PASSES))  # once for every seed
    for seed in seeds:
        inputs = random_inputs(model, seed)
        want = run_tflm(data, inputs, produced)
        for source, got in (
            ("oracle", evaluate(module, inputs)),
            ("C", run_module(lowered, inputs)),
        ):
            for index, g, w in zip(produced, got, want, strict=True):
                name = model.tensors[index].name
                assert difference(g, w) is None, (
                    f"{source}, seed {seed}, tensor #{index} '{name}': "
                    f"{difference(g, w)}"
                )


# --------------------------------------------------- TFLM's seanet models


def _csv(path: Path, dtype: str) -> np.ndarray:
    return np.loadtxt(path, delimiter=",", dtype=np.int64).astype(dtype).reshape(-1)


SEANET_OPS = ["add", "sub", "leaky_relu", "pad", "quantize", "strided_slice"]


@pytest.mark.parametrize("op", SEANET_OPS)
def test_seanet_reproduces_the_golden_output(op: str, tmp_path: Path) -> None:
    """TFLM's integration test: the golden CSV exactly, through
    ``usmp.compile`` (usmp-compile's path) and gcc."""
    folder = SEANET / op
    path = folder / f"{op}0.tflite"
    model = read_model(path.read_bytes(), path.name)
    inputs = []
    for k, index in enumerate(model.inputs):
        t = model.tensors[index]
        assert t.dtype is not None
        (csv,) = folder.glob(f"{op}0_input{k}_*.csv")
        inputs.append(_csv(csv, str(t.dtype)).reshape(t.shape))
    lib = usmp.compile(path, output_dir=tmp_path / "out")
    (got,) = lib.run(inputs)
    golden = _csv(folder / f"{op}0_golden_int16.csv", "int16")
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got.reshape(-1), golden)


@pytest.mark.parametrize("op", SEANET_OPS)
def test_seanet_matches_tflite_micro_on_random_inputs(op: str) -> None:
    compare_every_tensor((SEANET / op / f"{op}0.tflite").read_bytes())


# ------------------------------------------------ single-operator models


def _i16(m: ModelBuilder, shape: tuple[int, ...], scale: float, zp: int = 0) -> int:
    return m.tensor(shape, "int16", scale=scale, zero_point=zp)


@pytest.mark.parametrize(
    ("opcode", "options"), [("ADD", "AddOptions"), ("SUB", "SubOptions")]
)
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "activation"),
    [
        ((1, 3, 4, 5), (1, 3, 4, 5), 0),  # same shape, no activation
        ((2, 3, 1, 5), (1, 1, 4, 1), RELU),  # both sides broadcast
        ((1, 4, 4, 3), (3,), RELU6),  # a bias-like vector
        ((5,), (1,), 0),  # size-1 dimension
    ],
)
def test_add_sub_int16(
    opcode: str,
    options: str,
    shape_a: tuple[int, ...],
    shape_b: tuple[int, ...],
    activation: int,
) -> None:
    m = ModelBuilder()
    a = _i16(m, shape_a, 0.0004)
    b = _i16(m, shape_b, 0.00013)
    out_shape = np.broadcast_shapes(shape_a, shape_b)
    y = _i16(m, out_shape, 0.0005)
    m.op(opcode, [a, b], [y], (options, dict(FusedActivationFunction=activation)))
    # a second one whose output scale is smaller than the inputs' (saturates)
    z = _i16(m, out_shape, 0.00005)
    m.op(opcode, [y, b], [z], (options, {}))
    compare_every_tensor(m.build([a, b], [z]))


def test_add_int16_with_zero_points() -> None:
    """TFLM's ADD / SUB kernels take int16 zero points (the general path)."""
    m = ModelBuilder()
    a = _i16(m, (2, 8), 0.002, zp=-1200)
    b = _i16(m, (2, 8), 0.0031, zp=700)
    y = _i16(m, (2, 8), 0.004, zp=-35)
    m.op("ADD", [a, b], [y], ("AddOptions", {}))
    z = _i16(m, (2, 8), 0.004, zp=90)
    m.op("SUB", [y, a], [z], ("SubOptions", dict(FusedActivationFunction=RELU)))
    compare_every_tensor(m.build([a, b], [z]))


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "activation", "out_scale"),
    [
        ((1, 3, 4, 5), (1, 3, 4, 5), 0, 0.00002),  # right-shifting multiplier
        ((2, 3, 6), (3, 1), RELU, 0.0000001),  # broadcast, left-shifting one
        ((4, 1), (1,), RELU6, 0.0003),  # size-1 dimensions
    ],
)
def test_mul_int16(
    shape_a: tuple[int, ...],
    shape_b: tuple[int, ...],
    activation: int,
    out_scale: float,
) -> None:
    m = ModelBuilder()
    a = _i16(m, shape_a, 0.0004)
    b = _i16(m, shape_b, 0.0002)
    y = _i16(m, np.broadcast_shapes(shape_a, shape_b), out_scale)
    m.op("MUL", [a, b], [y], ("MulOptions", dict(FusedActivationFunction=activation)))
    compare_every_tensor(m.build([a, b], [y]))


def test_mul_int16_needs_zero_point_0() -> None:
    m = ModelBuilder()
    a = _i16(m, (4,), 0.001, zp=3)
    b = _i16(m, (4,), 0.001)
    y = _i16(m, (4,), 0.001)
    m.op("MUL", [a, b], [y], ("MulOptions", {}))
    message = refusal(m, [a, b], [y])
    assert message.startswith(
        "crafted.tflite: error: operator 0 (MUL): int16 MUL needs zero point 0 (symmetric int16, as "
        "TFLite Micro requires): 't0' has zero point 3"
    ), message


@pytest.mark.parametrize(
    ("alpha", "in_scale", "out_scale", "zero_points"),
    [
        (0.2, 0.0017, 0.0017, (0, 0)),  # seanet's: one quantisation
        (-0.3, 0.001, 0.0004, (0, 0)),  # negative alpha, a left shift
        (1.7, 0.0002, 0.0009, (0, 0)),  # alpha above 1, a right shift
        (0.05, 0.001, 0.002, (-300, 120)),  # zero points (TFLM takes them)
    ],
)
def test_leaky_relu_int16(
    alpha: float, in_scale: float, out_scale: float, zero_points: tuple[int, int]
) -> None:
    m = ModelBuilder()
    x = _i16(m, (1, 3, 5, 4), in_scale, zero_points[0])
    y = _i16(m, (1, 3, 5, 4), out_scale, zero_points[1])
    m.op("LEAKY_RELU", [x], [y], ("LeakyReluOptions", dict(Alpha=alpha)))
    compare_every_tensor(m.build([x], [y]))


@pytest.mark.parametrize(
    ("shape", "paddings"),
    [
        ((1, 3, 2, 4), [[0, 0], [1, 2], [2, 0], [0, 1]]),  # every side of H, W, C
        ((2, 1, 3), [[1, 1], [0, 3], [2, 2]]),  # batch and a size-1 dimension
        ((5,), [[4, 0]]),  # rank 1
    ],
)
def test_pad_int16(shape: tuple[int, ...], paddings: list[list[int]]) -> None:
    m = ModelBuilder()
    x = _i16(m, shape, 0.0009)
    widths = m.tensor((len(shape), 2), "int32", np.array(paddings))
    out = tuple(s + a + b for s, (a, b) in zip(shape, paddings, strict=True))
    y = _i16(m, out, 0.0009)
    m.op("PAD", [x, widths], [y], ("PadOptions", {}))
    # PADV2 with an int16 constant (TFLM copies its raw value)
    value = m.tensor((), "int16", np.array(-1234), scale=0.0009)
    z = _i16(m, out, 0.0009)
    m.op("PADV2", [x, widths, value], [z], ("PadV2Options", {}))
    compare_every_tensor(m.build([x], [y, z]))


def test_pad_int16_pads_with_0_whatever_the_zero_point() -> None:
    """TFLite Micro pads int16 with the raw value 0 (int8: the zero point)."""
    m = ModelBuilder()
    x = _i16(m, (2, 3), 0.001, zp=77)
    widths = m.tensor((2, 2), "int32", np.array([[1, 0], [0, 2]]))
    y = _i16(m, (3, 5), 0.001, zp=77)
    m.op("PAD", [x, widths], [y], ("PadOptions", {}))
    compare_every_tensor(m.build([x], [y]))


@pytest.mark.parametrize(
    ("source", "target", "ratio"),
    [
        ("int16", "int8", 1 / 300),
        ("int16", "int16", 0.37),
        ("int16", "int16", 2.5),
        ("int16", "int32", 70.0),
        ("int8", "int16", 90.0),
        ("int8", "int32", 3.0),
        ("int8", "int8", 0.6),
        ("int32", "int16", 1.49e-7 / 0.00092),  # seanet's quantize0
        ("int32", "int8", 1e-9),
    ],
)
def test_requantize_int16(source: str, target: str, ratio: float) -> None:
    """Every integer QUANTIZE pair TFLite Micro's kernel takes (int8, int16,
    int32; its ``Requantize``), on inputs over the source's whole range."""
    m = ModelBuilder()
    in_zp = -7 if source == "int8" else 0
    out_zp = 11 if target == "int8" else 0
    x = m.tensor((3, 17), source, scale=0.001, zero_point=in_zp)
    y = m.tensor((3, 17), target, scale=0.001 / ratio, zero_point=out_zp)
    m.op("QUANTIZE", [x], [y])
    compare_every_tensor(m.build([x], [y]))


def test_quantize_dequantize_float_int16() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 40), "float32")
    q = _i16(m, (2, 40), 0.0002)  # +-6.5: the normal inputs saturate at times
    y = m.tensor((2, 40), "float32")
    m.op("QUANTIZE", [x], [q])
    m.op("DEQUANTIZE", [q], [y])
    compare_every_tensor(m.build([x], [y]))


def test_unsupported_requantisation() -> None:
    m = ModelBuilder()
    x = m.tensor((4,), "int32", scale=0.001)
    y = m.tensor((4,), "int32", scale=0.002)
    m.op("QUANTIZE", [x], [y])
    message = refusal(m, [x], [y])
    assert message.startswith(
        "crafted.tflite: error: operator 0 (QUANTIZE): unsupported requantisation "
        "INT32 -> INT32 (supported: FLOAT32 -> INT8 or INT16; INT8 -> INT8,"
    ), message


@pytest.mark.parametrize("opcode", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [((1, 4, 6), (1, 4, 6)), ((2, 1, 6), (3, 1)), ((5,), (1,))],
)
def test_maximum_minimum_int16(
    opcode: str, shape_a: tuple[int, ...], shape_b: tuple[int, ...]
) -> None:
    m = ModelBuilder()
    a = _i16(m, shape_a, 0.0003)
    b = _i16(m, shape_b, 0.0003)
    y = _i16(m, np.broadcast_shapes(shape_a, shape_b), 0.0003)
    m.op(opcode, [a, b], [y], ("MaximumMinimumOptions", {}))
    compare_every_tensor(m.build([a, b], [y]))


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_concatenation_int16(axis: int) -> None:
    shapes = []
    for size in (2, 5, 1):
        shape = [2, 3, 4]
        shape[axis] = size
        shapes.append(tuple(shape))
    m = ModelBuilder()
    inputs = [_i16(m, shape, 0.0007) for shape in shapes]
    out = list(shapes[0])
    out[axis] = sum(shape[axis] for shape in shapes)
    y = _i16(m, tuple(out), 0.0007)
    m.op("CONCATENATION", inputs, [y], ("ConcatenationOptions", dict(Axis=axis)))
    compare_every_tensor(m.build(inputs, [y]))


@pytest.mark.parametrize(
    ("opcode", "in_scale", "out_scale"),
    [
        ("RELU", 0.0004, 0.0004),  # one quantisation: a clamp
        ("RELU", 0.0004, 0.0001),  # TFLM's ReluQuantized rescaling
        ("RELU6", 0.0004, 0.0004),  # 6.0 inside the int16 range: both ends
    ],
)
def test_relu_int16(opcode: str, in_scale: float, out_scale: float) -> None:
    m = ModelBuilder()
    x = _i16(m, (2, 5, 7), in_scale)
    y = _i16(m, (2, 5, 7), out_scale)
    m.op(opcode, [x], [y])
    compare_every_tensor(m.build([x], [y]))


def test_data_movement_chain_int16() -> None:
    """RESHAPE -> TRANSPOSE -> SQUEEZE -> EXPAND_DIMS -> SLICE -> STRIDED_SLICE
    on int16: every intermediate tensor equal to TFLite Micro's."""
    m = ModelBuilder()
    s = 0.0005
    x = _i16(m, (1, 24, 5), s)
    shape = m.tensor((4,), "int32", np.array([1, 4, 6, 5]))
    r = _i16(m, (1, 4, 6, 5), s)
    m.op("RESHAPE", [x, shape], [r])
    perm = m.tensor((4,), "int32", np.array([0, 3, 1, 2]))
    t = _i16(m, (1, 5, 4, 6), s)
    m.op("TRANSPOSE", [r, perm], [t])
    sq = _i16(m, (5, 4, 6), s)
    m.op("SQUEEZE", [t], [sq], ("SqueezeOptions", dict(SqueezeDims=[0])))
    axis = m.tensor((), "int32", np.array(1))
    e = _i16(m, (5, 1, 4, 6), s)
    m.op("EXPAND_DIMS", [sq, axis], [e])
    begin = m.tensor((4,), "int32", np.array([1, 0, 1, 2]))
    size = m.tensor((4,), "int32", np.array([3, 1, 3, -1]))
    sl = _i16(m, (3, 1, 3, 4), s)
    m.op("SLICE", [e, begin, size], [sl])
    b2 = m.tensor((4,), "int32", np.array([2, 0, 2, 3]))
    e2 = m.tensor((4,), "int32", np.array([0, 1, 0, 0]))
    st = m.tensor((4,), "int32", np.array([-1, 1, -2, -2]))
    ss = _i16(m, (3, 1, 2, 2), s)
    m.op(
        "STRIDED_SLICE",
        [sl, b2, e2, st],
        [ss],
        ("StridedSliceOptions", dict(EndMask=5)),
    )
    compare_every_tensor(m.build([x], [ss]))


@pytest.mark.parametrize(
    ("in_scale", "out_scale", "zero_points"),
    [
        (0.0004, 0.0004, (0, 0)),  # one scale: no rescaling
        (0.0004, 0.0003, (0, 0)),  # rescaled (saturates near the ends)
    ],
)
def test_abs_int16(
    in_scale: float, out_scale: float, zero_points: tuple[int, int]
) -> None:
    m = ModelBuilder()
    x = _i16(m, (3, 11), in_scale, zero_points[0])
    y = _i16(m, (3, 11), out_scale, zero_points[1])
    m.op("ABS", [x], [y])
    compare_every_tensor(m.build([x], [y]))


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "scales"),
    [
        ((2, 3, 5), (2, 3, 5), (0.0003, 0.0005, 0.02)),
        ((2, 3, 5), (3, 1), (0.0005, 0.0001, 0.01)),  # broadcast
        ((4,), (1,), (0.0002, 0.0002, 0.0000001)),  # saturating output
    ],
)
def test_squared_difference_int16(
    shape_a: tuple[int, ...],
    shape_b: tuple[int, ...],
    scales: tuple[float, float, float],
) -> None:
    m = ModelBuilder()
    a = _i16(m, shape_a, scales[0])
    b = _i16(m, shape_b, scales[1])
    y = _i16(m, np.broadcast_shapes(shape_a, shape_b), scales[2])
    m.op("SQUARED_DIFFERENCE", [a, b], [y])
    compare_every_tensor(m.build([a, b], [y]))


def test_abs_int16_needs_zero_point_0() -> None:
    m = ModelBuilder()
    x = _i16(m, (4,), 0.001, zp=9)
    y = _i16(m, (4,), 0.001)
    m.op("ABS", [x], [y])
    assert refusal(m, [x], [y]).endswith(
        "int16 ABS needs zero point 0 (symmetric int16, as TFLite Micro "
        "requires): 't0' has zero point 9"
    )


def test_squared_difference_int16_needs_zero_point_0() -> None:
    m = ModelBuilder()
    a = _i16(m, (4,), 0.001)
    b = _i16(m, (4,), 0.001)
    y = _i16(m, (4,), 0.001, zp=-5)
    m.op("SQUARED_DIFFERENCE", [a, b], [y])
    assert refusal(m, [a, b], [y]).endswith(
        "int16 SQUARED_DIFFERENCE needs zero point 0 (symmetric int16, as TFLite "
        "Micro requires): 't2' has zero point -5"
    )


@pytest.mark.parametrize("activation", [0, RELU_N1_TO_1])
def test_sub_int16_constant_operand(activation: int) -> None:
    """A constant int16 operand (a bias, as in seanet's sub0 where it is an
    input): an int16_t constant in the C library's constant pool."""
    m = ModelBuilder()
    x = _i16(m, (1, 2, 12, 64), 0.0009)
    bias = m.tensor(
        (64,),
        "int16",
        np.random.default_rng(5).integers(-32768, 32768, 64),
        scale=0.00004,
    )
    y = _i16(m, (1, 2, 12, 64), 0.001)
    m.op(
        "SUB", [x, bias], [y], ("SubOptions", dict(FusedActivationFunction=activation))
    )
    z = _i16(m, (1, 2, 12, 64), 0.0007)
    m.op(
        "MUL", [y, bias], [z], ("MulOptions", dict(FusedActivationFunction=activation))
    )
    compare_every_tensor(m.build([x], [z]))


def _refused_int16(opcode: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    x = _i16(m, (2, 4), 0.001)
    if opcode in ("REDUCE_MAX", "REDUCE_MIN", "ARG_MAX"):
        axis = m.tensor((1,), "int32", np.array([1]))
        if opcode == "ARG_MAX":
            y = m.tensor((2,), "int32")
            m.op(opcode, [x, axis], [y], ("ArgMaxOptions", dict(OutputType=2)))
        else:
            y = _i16(m, (2,), 0.001)
            m.op(opcode, [x, axis], [y], ("ReducerOptions", {}))
        return m, [x], [y]
    y = _i16(m, (2, 4), 0.001)
    if opcode in ("PRELU", "DIV"):
        other = _i16(m, (2, 4), 0.01)
        m.op(opcode, [x, other], [y])
        return m, [x, other], [y]
    m.op(opcode, [x], [y])
    return m, [x], [y]


@pytest.mark.parametrize(
    "opcode",
    ["REDUCE_MAX", "REDUCE_MIN", "ARG_MAX", "HARD_SWISH", "NEG", "PRELU", "DIV"],
)
def test_int16_operators_tflite_micro_refuses_are_refused(opcode: str) -> None:
    """Where TFLite Micro's kernel has no int16 path, the importer says so at
    the operator (and TFLite Micro indeed fails on the same model)."""
    m, inputs, outputs = _refused_int16(opcode)
    data = m.build(inputs, outputs)
    model = read_model(data, "int16.tflite")
    with pytest.raises(TFLMError):
        run_tflm(data, random_inputs(model, 0), outputs)
    message = refusal(m, inputs, outputs)
    assert message.startswith(f"crafted.tflite: error: operator 0 ({opcode}): "), (
        message
    )
    assert "INT16" in message, message


def _split_pack_model(opcode: str) -> tuple[ModelBuilder, list[int], list[int]]:
    m = ModelBuilder()
    s = 0.0006
    if opcode == "SPLIT":
        x, axis = _i16(m, (2, 6, 3), s), m.tensor((), "int32", np.array(1))
        parts = [_i16(m, (2, 2, 3), s) for _ in range(3)]
        m.op(opcode, [axis, x], parts, ("SplitOptions", dict(NumSplits=3)))
        return m, [x], parts
    if opcode == "SPLIT_V":
        x = _i16(m, (2, 6, 3), s)
        sizes = m.tensor((2,), "int32", np.array([4, -1]))
        axis = m.tensor((), "int32", np.array(-2))
        parts = [_i16(m, (2, 4, 3), s), _i16(m, (2, 2, 3), s)]
        m.op(opcode, [x, sizes, axis], parts, ("SplitVOptions", dict(NumSplits=2)))
        return m, [x], parts
    if opcode == "PACK":
        xs = [_i16(m, (2, 3), s) for _ in range(3)]
        y = _i16(m, (2, 3, 3), s)
        m.op(opcode, xs, [y], ("PackOptions", dict(ValuesCount=3, Axis=-1)))
        return m, xs, [y]
    if opcode == "UNPACK":
        x = _i16(m, (2, 3, 4), s)
        parts = [_i16(m, (2, 4), s) for _ in range(3)]
        m.op(opcode, [x], parts, ("UnpackOptions", dict(Num=3, Axis=1)))
        return m, [x], parts
    x = _i16(m, (1, 3, 1), s)
    shape = m.tensor((3,), "int32", np.array([2, 3, 4]))
    y = _i16(m, (2, 3, 4), s)
    m.op(opcode, [x, shape], [y])
    return m, [x], [y]


@pytest.mark.parametrize(
    "opcode", ["SPLIT", "SPLIT_V", "PACK", "UNPACK", "BROADCAST_TO"]
)
def test_split_pack_broadcast_int16(opcode: str) -> None:
    """Data movement on int16 (raw values), every output equal to TFLite Micro."""
    m, inputs, outputs = _split_pack_model(opcode)
    compare_every_tensor(m.build(inputs, outputs))
