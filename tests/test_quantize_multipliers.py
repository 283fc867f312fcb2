"""Every multiplier the importer derives from quantisation scales is TFLite
Micro's, bit for bit, at scales where float32 and double arithmetic disagree.

TFLite Micro's ``Prepare`` steps turn float32 scales into ``(multiplier,
shift)`` pairs (``QuantizeMultiplier`` and friends); whether the quotients
and products before it are float32 or double decides the last bits of the
multiplier, and so, on some inputs, the last bit of the output. The
reference is the ``tflite-micro`` package's interpreter, whose build widens
the scales to double almost everywhere, also where the C++ sources divide
floats (LEAKY_RELU, HARD_SWISH, DIV, SVDF, FULLY_CONNECTED's
``GetQuantizedConvolutionMultipler``): read from its machine code
(``cvtss2sd`` + ``mulsd``/``divsd`` in each ``Prepare``) and measured here.

Each case is one operator at scales chosen so that the float32 and the
double evaluation of its formula give different multipliers (asserted: the
case can tell them apart), on inputs that cover the input range (every
int16 value, every pair of int8 values, accumulators written through the
bias, or sequences for the stateful operators); the imported module,
evaluated by the oracle, equals TFLite Micro on every output element.
``FIXED`` marks the cases that failed before the importer followed the
interpreter (ABS, LEAKY_RELU's identity multiplier, HARD_SWISH, DIV,
per-tensor FULLY_CONNECTED, SVDF, the LSTM's gates); the others lock in
formulas that were already the interpreter's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend import quantization as q
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.tflm_reference import random_inputs, run_tflm, run_tflm_sequence

F32 = np.float32
Number = Callable[[Any], Any]
"""``np.float32`` or ``float``: the precision a formula is evaluated in."""


def _all(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1, dtype=dtype).reshape(1, -1)


def _pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every int8 pair, or 60,000 seeded int16 pairs."""
    if dtype == "int8":
        a, b = np.meshgrid(_all("int8"), _all("int8"), indexing="ij")
        return a.reshape(1, -1), b.reshape(1, -1)
    rng = np.random.default_rng(24)
    return (
        rng.integers(-32768, 32768, (1, 60000)).astype(np.int16),
        rng.integers(-32768, 32768, (1, 60000)).astype(np.int16),
    )


Model = tuple[bytes, list[list[np.ndarray]]]
"""A model and the inputs of each invocation (one for stateless models)."""


def unary(
    opcode: str,
    dtype: str,
    s_in: float,
    s_out: float,
    zero_points: tuple[int, int] = (0, 0),
    options: tuple[str, dict[str, Any]] | None = None,
) -> Model:
    x = _all(dtype)
    m = ModelBuilder()
    a = m.tensor(x.shape, dtype, scale=s_in, zero_point=zero_points[0])
    y = m.tensor(x.shape, dtype, scale=s_out, zero_point=zero_points[1])
    m.op(opcode, [a], [y], options)
    return m.build([a], [y]), [[x]]


def binary(
    opcode: str,
    dtype: str,
    scales: tuple[float, float, float],
    zero_points: tuple[int, int, int] = (0, 0, 0),
    options: tuple[str, dict[str, Any]] | None = None,
) -> Model:
    x1, x2 = _pairs(dtype)
    m = ModelBuilder()
    a, b, y = (
        m.tensor(x1.shape, dtype, scale=s, zero_point=z)
        for s, z in zip(scales, zero_points, strict=True)
    )
    m.op(opcode, [a, b], [y], options)
    return m.build([a, b], [y]), [[x1, x2]]


def mean16(s_in: float, s_out: float) -> Model:
    x = _all("int16").reshape(1, 256, 256)
    m = ModelBuilder()
    a = m.tensor(x.shape, "int16", scale=s_in)
    axis = m.tensor((1,), "int32", np.array([2]))
    y = m.tensor((1, 256), "int16", scale=s_out)
    m.op("MEAN", [a, axis], [y], ("ReducerOptions", {"KeepDims": False}))
    return m.build([a], [y]), [[x]]


def fully_connected(
    s_in: float, weight_scales: list[float], s_out: float, accumulators: list[int]
) -> Model:
    """Input 0 times unit weights plus a bias of ``accumulators``: each output
    is one accumulator requantised (per-tensor weights with one scale, else
    per channel, the accumulators repeated for each channel)."""
    per_channel = len(weight_scales) > 1
    acc = np.repeat(accumulators, len(weight_scales)) if per_channel else accumulators
    units = len(acc)
    scales = np.resize(np.asarray(weight_scales, np.float32), units)
    m = ModelBuilder()
    x = m.tensor((1, 1), "int8", scale=s_in)
    w = m.tensor(
        (units, 1),
        "int8",
        np.ones((units, 1)),
        scale=[float(s) for s in scales] if per_channel else weight_scales[0],
    )
    bias_scales = [float(F32(s_in) * s) for s in scales]
    bias = m.tensor(
        (units,),
        "int32",
        np.asarray(acc, np.int32),
        scale=bias_scales if per_channel else bias_scales[0],
    )
    y = m.tensor((1, units), "int8", scale=s_out)
    m.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {}))
    return m.build([x], [y]), [[np.zeros((1, 1), np.int8)]]


def _sequence(data: bytes, steps: int) -> Model:
    model = read_model(data, "multipliers.tflite")
    return data, [random_inputs(model, seed) for seed in range(steps)]


def svdf(sx: float, sf: float, st: float, ss: float, so: float) -> Model:
    """int8 SVDF with int16 time weights and state, 64 rows of 16 features."""
    rng = np.random.default_rng(7)
    batch, n_input, units, memory = 64, 16, 16, 4
    m = ModelBuilder()
    x = m.tensor((batch, n_input), "int8", scale=sx, zero_point=3)
    weights = rng.integers(-127, 128, (units, n_input))
    wf = m.tensor((units, n_input), "int8", weights, scale=sf)
    time = rng.integers(-3000, 3000, (units, memory))
    wt = m.tensor((units, memory), "int16", time, scale=st)
    bias_scale = float(F32(ss) * F32(st))
    bias = m.tensor((units,), "int32", rng.integers(-500, 500, units), scale=bias_scale)
    state = m.tensor((batch, memory * units), "int16", scale=ss, variable=True)
    y = m.tensor((batch, units), "int8", scale=so, zero_point=-5)
    options = {"Rank": 1, "FusedActivationFunction": 0}
    m.op("SVDF", [x, wf, wt, bias, state], [y], ("SVDFOptions", options))
    return _sequence(m.build([x], [y]), 4)


def lstm(sx: float, weight_scales: list[float]) -> Model:
    """int8 UNIDIRECTIONAL_SEQUENCE_LSTM, 32 rows of 8 steps, 16 units."""
    rng = np.random.default_rng(7)
    batch, steps, n_input, units = 32, 8, 16, 16
    m = ModelBuilder()
    x = m.tensor((batch, steps, n_input), "int8", scale=sx, zero_point=-3)
    weights = []
    for k, scale in enumerate(weight_scales):
        shape = (units, n_input if k < 4 else units)
        weights.append(
            m.tensor(shape, "int8", rng.integers(-127, 128, shape), scale=scale)
        )
    biases = [
        m.tensor(
            (units,),
            "int32",
            rng.integers(-3000, 3000, units),
            scale=float(F32(sx) * F32(weight_scales[k])),
        )
        for k in range(4)
    ]
    h = m.tensor((batch, units), "int8", scale=1 / 128, zero_point=2, variable=True)
    c = m.tensor((batch, units), "int16", scale=2.0**-11, variable=True)
    y = m.tensor((batch, steps, units), "int8", scale=1 / 128, zero_point=2)
    inputs = [x, *weights, -1, -1, -1, *biases, -1, -1, h, c, -1, -1, -1, -1]
    options = {"FusedActivationFunction": 4, "CellClip": 0.0, "TimeMajor": False}
    m.op(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        inputs,
        [y],
        ("UnidirectionalSequenceLSTMOptions", options),
    )
    return _sequence(m.build([x], [y]), 3)


def _m16(real: float) -> tuple[int, int]:
    """HARD_SWISH's ``QuantizeMultiplier`` + ``DownScaleInt32ToInt16Multiplier``."""
    m, shift = q.quantize_multiplier(real)
    return (32767 if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16), shift


@dataclass(frozen=True)
class Case:
    model: Callable[[], Model]
    multiplier: Callable[[Number], tuple[int, int]]
    """The case's multiplier from its formula evaluated in a precision."""
    fixed: bool = False


def _qm(real: Any) -> tuple[int, int]:
    return q.quantize_multiplier(float(real))


def _add_output(t: Number, s1: float, s2: float, so: float, shift: int) -> Any:
    twice_max = t(2) * t(max(s1, s2))
    return twice_max / (t(so) * t(1 << shift))


def _f32s(*scales: float) -> tuple[float, ...]:
    """Scales as the file stores them (float32), as Python floats."""
    return tuple(float(F32(s)) for s in scales)


ABS = (0.007503889035433531, 0.0491633415222168)
LEAKY = (0.0031743068248033524, 0.07825388014316559, 0.13519416749477386)
HARD_SWISH = (0.0508384183049202, 0.022040609270334244)
DIV = (0.0034941353369504213, 0.0021446989849209785, 0.13926805555820465)
FC = (0.0036290111020207405, 0.004780229646712542, 0.0002819888759404421)
FC_CHANNELS = (
    0.002891228999942541,
    [0.0016988646239042282, 0.06203242391347885, 0.05203085765242577],
    0.0021922572050243616,
)
SVDF = _f32s(0.05, 0.01, 0.002, 0.004, 0.02)
LSTM_X = 0.018264682963490486
LSTM_W = [
    0.003233451396226883,
    0.007415652275085449,
    0.002318870509043336,
    0.005253905430436134,
    0.006460586562752724,
    0.002706245519220829,
    0.0021856259554624557,
    0.0031133312731981277,
]
MUL = (0.0018077584682032466, 0.00996679998934269, 0.015958670526742935)
ADD = (0.0013830604730173945, 0.0018178075551986694, 0.07882371544837952)
RATIO = (0.017529405653476715, 0.005469986237585545)
PRELU = (0.01053853053599596, 0.02116829715669155, 0.003553183516487479)
RSQRT = (0.0018877137918025255, 0.03767725080251694)
SOFTMAX = (0.017110532149672508, 1.0248339176177979)

CASES: dict[str, Case] = {
    "ABS int16": Case(
        lambda: unary("ABS", "int16", *ABS),
        lambda t: _qm(t(ABS[0]) / t(ABS[1])),
        fixed=True,
    ),
    "LEAKY_RELU int16, identity": Case(
        lambda: unary(
            "LEAKY_RELU",
            "int16",
            *LEAKY[:2],
            options=("LeakyReluOptions", {"Alpha": LEAKY[2]}),
        ),
        lambda t: _qm(t(LEAKY[0]) / t(LEAKY[1])),
        fixed=True,
    ),
    "LEAKY_RELU int16, alpha": Case(
        lambda: unary(
            "LEAKY_RELU",
            "int16",
            *LEAKY[:2],
            options=("LeakyReluOptions", {"Alpha": LEAKY[2]}),
        ),
        lambda t: _qm(t(LEAKY[0]) * t(LEAKY[2]) / t(LEAKY[1])),
        fixed=True,  # the model's identity multiplier was float32
    ),
    "HARD_SWISH int8": Case(
        lambda: unary("HARD_SWISH", "int8", *HARD_SWISH, zero_points=(-87, -93)),
        lambda t: _m16(
            float(t(F32(F32(HARD_SWISH[0]) * F32(1 / 128))) / t(HARD_SWISH[1]))
        ),
        fixed=True,
    ),
    "DIV int8": Case(
        lambda: binary("DIV", "int8", DIV, (30, 123, -32), ("DivOptions", {})),
        lambda t: _qm(t(DIV[0]) / (t(DIV[1]) * t(DIV[2]))),
        fixed=True,
    ),
    "FULLY_CONNECTED int8, per tensor": Case(
        lambda: fully_connected(FC[0], [FC[1]], FC[2], [-1942, 1942, -1941, 1943]),
        lambda t: _qm(t(FC[0]) * t(FC[1]) / t(FC[2])),
        fixed=True,
    ),
    "FULLY_CONNECTED int8, per channel": Case(
        lambda: fully_connected(*FC_CHANNELS, list(range(-300, 301))),
        lambda t: _qm(t(FC_CHANNELS[0]) * t(FC_CHANNELS[1][0]) / t(FC_CHANNELS[2])),
    ),
    "SVDF int8": Case(
        lambda: svdf(*SVDF),
        lambda t: _qm(t(SVDF[0]) * t(SVDF[1]) / t(SVDF[3])),
        fixed=True,
    ),
    "UNIDIRECTIONAL_SEQUENCE_LSTM int8": Case(
        lambda: lstm(LSTM_X, LSTM_W),
        lambda t: _qm(t(LSTM_X) * t(LSTM_W[0]) / t(2.0**-12)),
        fixed=True,
    ),
    "MUL int16": Case(
        lambda: binary("MUL", "int16", MUL, options=("MulOptions", {})),
        lambda t: _qm(t(MUL[0]) * t(MUL[1]) / t(MUL[2])),
    ),
    "ADD int16": Case(
        lambda: binary("ADD", "int16", ADD, options=("AddOptions", {})),
        lambda t: _qm(_add_output(t, *ADD, 15)),
    ),
    "SUB int16": Case(
        lambda: binary("SUB", "int16", ADD, options=("SubOptions", {})),
        lambda t: _qm(_add_output(t, *ADD, 15)),
    ),
    "SQUARED_DIFFERENCE int16": Case(
        lambda: binary("SQUARED_DIFFERENCE", "int16", ADD),
        lambda t: _qm(_add_output(t, *ADD, 0) * t(2) * t(max(ADD[:2]))),
    ),
    "PRELU int8": Case(
        lambda: binary("PRELU", "int8", PRELU, (5, -20, 7)),
        lambda t: _qm(t(PRELU[0]) * t(PRELU[1]) / t(PRELU[2])),
    ),
    "RELU int16": Case(
        lambda: unary("RELU", "int16", *RATIO),
        lambda t: _qm(t(RATIO[0]) / t(RATIO[1])),
    ),
    "QUANTIZE int16": Case(
        lambda: unary("QUANTIZE", "int16", *RATIO),
        lambda t: _qm(t(RATIO[0]) / t(RATIO[1])),
    ),
    "MEAN int16": Case(
        lambda: mean16(RATIO[0], RATIO[1] / 4),
        lambda t: _qm(t(RATIO[0]) / t(F32(RATIO[1] / 4))),
    ),
    "RSQRT int8": Case(
        lambda: unary("RSQRT", "int8", *RSQRT, zero_points=(-128, 0)),
        lambda t: _qm(t(1) / (t(np.sqrt(t(RSQRT[0]))) * t(RSQRT[1]))),
    ),
    "SOFTMAX int8": Case(
        lambda: unary(
            "SOFTMAX",
            "int8",
            SOFTMAX[0],
            1 / 256,
            zero_points=(0, -128),
            options=("SoftmaxOptions", {"Beta": SOFTMAX[1]}),
        ),
        lambda t: _qm(t(SOFTMAX[1]) * t(SOFTMAX[0]) * t(1 << 26)),
    ),
}
FIXED = [name for name, case in CASES.items() if case.fixed]


@pytest.mark.parametrize("name", CASES)
def test_multiplier_is_tflite_micros(name: str) -> None:
    case = CASES[name]
    assert case.multiplier(F32) != case.multiplier(float), (
        f"{name}: the scales do not tell float32 from double"
    )
    data, sequence = case.model()
    model = read_model(data, "multipliers.tflite")
    module = import_model(model)
    if len(sequence) == 1:
        want = [run_tflm(data, sequence[0], list(model.outputs))]
    else:
        want = run_tflm_sequence(data, sequence, [])
    states: dict[str, np.ndarray] = {}
    for step, inputs in enumerate(sequence):
        got = evaluate(module, inputs, states=states)
        for k, (ours, theirs) in enumerate(zip(got, want[step], strict=True)):
            differ = np.asarray(ours) != np.asarray(theirs)
            assert not differ.any(), (
                f"{name}, step {step}, output {k}: {int(differ.sum())} of "
                f"{differ.size} elements differ from TFLite Micro"
            )


_ODD = [0.0, -0.0, 1.0, -3.5, 1e-300, 5e-324, 1e308, float("inf"), -float("inf")]
_ODD += [float("nan"), float(np.float32(0.1)), 7]


@pytest.mark.parametrize("b", _ODD)
@pytest.mark.parametrize("a", _ODD)
def test_div_is_ieee_double_division(a: float, b: float) -> None:
    """``div`` (Python's division, numpy's for a zero divisor) is numpy's
    float64 division bit for bit: overflow, underflow, NaN, infinities and
    signed zeros included, never an exception."""
    with np.errstate(all="ignore"):
        expected = np.float64(a) / np.float64(b)
    got = q.div(a, b)
    assert type(got) is float
    assert np.float64(got).tobytes() == expected.tobytes() or (
        np.isnan(got) and np.isnan(expected)
    )


def _conv_multipliers_one_by_one(
    input_scale: float, filter_scales: list[float], output_scale: float
) -> tuple[list[int], list[int]]:
    pairs = [
        q.quantize_multiplier(
            q.div(float(input_scale) * float(s), output_scale),
            "input scale * filter scale / output scale",
        )
        for s in filter_scales
    ]
    return [m for m, _ in pairs], [s for _, s in pairs]


def test_conv_multipliers_of_all_channels_are_the_scalar_ones() -> None:
    """``conv_multipliers`` computes every channel at once with numpy: the
    same multipliers and shifts as ``quantize_multiplier`` per channel, on
    random scales and on the edges (ties, the carry into the exponent,
    shifts flushed below -31, zero, negative and subnormal scales)."""
    rng = np.random.default_rng(0)
    random = (10.0 ** rng.uniform(-12, 3, 20000)).tolist()
    ties = [(2**30 + k + 0.5) / 2**31 for k in range(50)]
    carry = [math.nextafter(1.0, 0.0), 1 - 2**-33, 0.5 - 2**-34]
    edges = [0.0, -0.0, -0.75, -0.5, 2**-40, 2**-32, 2**-31, 5e-324, 1e300, -1e-5]
    for input_scale, output_scale in ((1.0, 1.0), (0.0235, 0.0117), (3e-3, 0.0)):
        for scales in (random, ties, carry, edges):
            if output_scale == 0.0 and scales is not edges:
                continue
            if output_scale == 0.0:  # every nonzero channel infinite: an error
                with pytest.raises(q.ScaleError) as scalar:
                    _conv_multipliers_one_by_one(input_scale, scales, output_scale)
                with pytest.raises(q.ScaleError) as vector:
                    q.conv_multipliers(input_scale, scales, output_scale)
                assert str(vector.value) == str(scalar.value)
                continue
            want = _conv_multipliers_one_by_one(input_scale, scales, output_scale)
            got = q.conv_multipliers(input_scale, scales, output_scale)
            assert got == want
            assert all(type(v) is int for v in got[0] + got[1])
