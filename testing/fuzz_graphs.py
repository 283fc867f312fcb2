"""Random valid relay graphs for the whole-pipeline fuzzer (``fuzz_run``).

``generate(choices, name)`` returns a ``Case``: a relay ``@main`` as MLIR
text (built with the dialect's op classes, so every type is inferred and
verified), numpy inputs, and the options the pipeline is run with (planning
algorithm, ``use_workspace_io``, ``fuse-ops`` depth, a pool policy).

Every decision goes through a ``Choices`` object: ``RandomChoices`` (a
seeded ``random.Random``: the case is a function of its seed, what
``benchmarks/fuzz.py`` uses) or, in the tests, one backed by hypothesis's
``draw`` (so failures shrink). Tensor data comes from a numpy generator
seeded by one choice.

Graphs mix what storage assignment, fusion, lowering and planning must get
right: diamonds and fan-out (operands are drawn from every value computed so
far), tuples built and taken apart, constants shared by several users,
reshapes (aliases), several outputs (repeated values, inputs returned
directly, a tuple result), int8 graphs as the TFLite importer writes them
(``frontend/tflite_ops.py``: conv2d/depthwise/dense with per-tensor or
per-channel requantisation computed by ``frontend/quantization.py``, ADD/SUB
with different input scales, MUL, quantised RELU/RELU6 clamps, pooling,
softmax, concatenate/pad/maximum on one quantisation, int8 -> int8
requantisation), float graphs, and quantize/dequantize between the two.

And the shapes that broke the memory tricks before: model outputs that a
later operator reads too (a "tail" operator on an output, returned as well),
a value returned twice, slices (contiguous ones are aliases) of values and of
outputs, a float SVDF whose state carries over (such a case runs twice in a
row, the oracle too), and a stem of widening convolutions on the first input
that ``patch-stage`` may cut into row stripes (the case then runs it).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FunctionType,
    ModuleOp,
    TensorType,
    f32,
    i8,
    i32,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.printer import Printer

from usmp.dialects.relay import ConstantOp, TupleGetItemOp, TupleOp
from usmp.dialects.relay_ops import (
    AddOp,
    AvgPool2DOp,
    CastOp,
    ClipOp,
    ConcatenateOp,
    Conv2DOp,
    DenseOp,
    DequantizeOp,
    FixedPointMultiplyOp,
    GlobalAvgPool2DOp,
    MaximumOp,
    MaxPool2DOp,
    MeanOp,
    MinimumOp,
    MultiplyOp,
    PadOp,
    QuantizeOp,
    ReluOp,
    ReshapeOp,
    SoftmaxOp,
    StridedSliceOp,
    SubtractOp,
    TransposeOp,
)
from usmp.dialects.relay_state import StateOp
from usmp.dialects.relay_svdf import SvdfOp
from usmp.dialects.relay_tflite_ops import (
    SOFTMAX_OUTPUT_SCALE,
    SOFTMAX_OUTPUT_ZERO_POINT,
    QuantizedSoftmaxOp,
)
from usmp.frontend import quantization as q
from usmp.planning.algorithms import ALGORITHMS

T = TypeVar("T")


class Choices(Protocol):
    """Where every random decision of the generator comes from."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``."""
        ...


@dataclass
class RandomChoices:
    """``Choices`` from a seeded ``random.Random``."""

    rng: random.Random

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


def pick(ch: Choices, options: Sequence[T]) -> T:
    return options[ch.integer(0, len(options) - 1)]


def chance(ch: Choices, percent: int) -> bool:
    return ch.integer(1, 100) <= percent


POOL_POLICIES = ("default", "fit", "fit", "fit", "too_small")
"""``default``: no pools given (one unbounded workspace); ``fit``: 1-3
workspace pools with random limits, the last large enough for any plan (and
sometimes a bounded constant pool); ``too_small``: every workspace pool is
smaller than the largest buffer (or the constant pool than the constants),
so ``usmp`` must fail with a located diagnostic."""


@dataclass(frozen=True)
class PoolDraw:
    """The pool policy and the raw numbers the limits are computed from once
    the buffers are known (``fuzz_run.pools_option``)."""

    policy: str
    n_pools: int
    fractions: tuple[int, ...]
    """Per pool, a percentage used to pick its limit."""
    alignments: tuple[int, ...]
    constant_pool: bool
    """``fit``: also a bounded constant pool; ``too_small``: the constant
    pool is the one too small (else the workspace pools are)."""


@dataclass
class Case:
    """One fuzz case: a relay module and how to compile it."""

    name: str
    """C identifier: the model name (``tvmgen_<name>_...``) and file stem."""
    text: str
    """The relay module (MLIR, custom syntax)."""
    inputs: list[npt.NDArray[Any]]
    algorithm: str
    use_workspace_io: bool
    max_depth: int
    pools: PoolDraw
    kinds: list[str] = field(default_factory=list[str])
    """The operator kinds generated, for statistics."""
    runs: int = 1
    """Invocations in a row on the same inputs (2 with state: the second
    starts from the state the first left)."""
    patch: str = ""
    """If set, ``patch-stage``'s options: it runs before ``fuse-ops`` (the
    graph then starts with a stem of convolutions on its first input)."""


# -- values ----------------------------------------------------------------------

Quant = tuple[float, int]
"""(scale, zero point) of an int8 value."""


@dataclass
class Value:
    ssa: SSAValue
    quant: Quant | None = None
    exact: bool = True
    """The C computes it bit for bit as the oracle does (integers, and floats
    that went through no rounding arithmetic): only those may be quantized,
    so that int8 results stay bit-exact in mixed graphs."""

    @property
    def type(self) -> TensorType:
        t = self.ssa.type
        assert isinstance(t, TensorType)
        return t  # pyright: ignore[reportUnknownVariableType]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape())

    @property
    def is_int8(self) -> bool:
        return self.type.element_type == i8


class _Graph:
    """A relay ``@main`` under construction."""

    def __init__(self, ch: Choices, name: str):
        self.ch = ch
        self.name = name
        self.rng = np.random.default_rng(ch.integer(0, 2**32 - 1))
        self.block = Block()
        self.values: list[Value] = []
        self.inputs: list[npt.NDArray[Any]] = []
        self.scalars: dict[tuple[float, str], SSAValue] = {}
        self.weights: dict[tuple[tuple[int, ...], str], list[tuple[SSAValue, Any]]] = {}
        self.kinds: list[str] = []
        self.states = 0

    # -- emission ------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def constant(self, array: npt.NDArray[Any]) -> SSAValue:
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        element = {"float32": f32, "int8": i8, "int32": i32}[array.dtype.name]
        t: Any = TensorType(element, array.shape)
        return self.emit(
            ConstantOp(DenseIntOrFPElementsAttr(t, BytesAttr(data.tobytes())))
        )

    def scalar(self, value: float, dtype: str) -> SSAValue:
        """One rank-0 constant per (value, dtype): shared by every user."""
        key = (value, dtype)
        if key not in self.scalars:
            self.scalars[key] = self.constant(np.array(value, dtype=dtype))
        return self.scalars[key]

    def weight(
        self, shape: tuple[int, ...], dtype: str, make: Callable[[], tuple[Any, Any]]
    ) -> tuple[SSAValue, Any]:
        """A weight constant of ``shape``; an existing one is reused (shared
        by several users) a third of the time. ``make() -> (array, info)``."""
        existing = self.weights.setdefault((shape, dtype), [])
        if existing and chance(self.ch, 35):
            return pick(self.ch, existing)
        array, info = make()
        entry = (self.constant(array), info)
        existing.append(entry)
        return entry

    def add_input(self, shape: tuple[int, ...], int8: bool) -> Value:
        t = TensorType(i8 if int8 else f32, shape)
        arg = self.block.insert_arg(t, len(self.block.args))
        if int8:
            data = self.rng.integers(-128, 128, size=shape).astype(np.int8)
            data.flat[: min(2, data.size)] = [-128, 127][: min(2, data.size)]
            v = Value(arg, self.random_quant())
        else:
            data = self.rng.uniform(-3, 3, size=shape).astype(np.float32)
            v = Value(arg)
        self.inputs.append(data)
        self.values.append(v)
        return v

    def random_quant(self) -> Quant:
        scale = q.f32(math.exp(self.rng.uniform(math.log(0.004), math.log(0.2))))
        zp = pick(self.ch, [0, -128, int(self.rng.integers(-128, 128))])
        return scale, zp

    def result(
        self, ssa: SSAValue, quant: Quant | None, kind: str, exact: bool = True
    ) -> Value:
        v = Value(ssa, quant, exact or quant is not None)
        self.values.append(v)
        self.kinds.append(kind)
        return v

    # -- int8 building blocks ------------------------------------------------

    def requantize_i32(
        self,
        acc: SSAValue,
        multipliers: list[int],
        shifts: list[int],
        axis: int,
        out: Quant,
        activation: q.Activation,
    ) -> SSAValue:
        """The importer's output stage (``RelayBuilder.requantize_i32``)."""
        if len(set(zip(multipliers, shifts, strict=True))) == 1:
            multipliers, shifts = multipliers[:1], shifts[:1]
        x = self.emit(FixedPointMultiplyOp(acc, multipliers, shifts, axis=axis))
        if out[1] != 0:
            x = self.emit(AddOp(x, self.scalar(out[1], "int32")))
        lo, hi = q.activation_range_quantized(activation, out[0], out[1], -128, 127)
        x = self.emit(ClipOp(x, float(lo), float(hi)))
        return self.emit(CastOp(x, i8))

    def centered(self, v: Value) -> SSAValue:
        assert v.quant is not None
        x = self.emit(CastOp(v.ssa, i32))
        if v.quant[1]:
            x = self.emit(AddOp(x, self.scalar(-v.quant[1], "int32")))
        return x

    def requantize(self, v: Value, out: Quant) -> Value:
        """int8 -> int8 QUANTIZE: ``v`` in quantisation ``out``."""
        assert v.quant is not None
        if v.quant == out:
            return v
        m, s = q.requantize_multiplier(v.quant[0], out[0])
        ssa = self.requantize_i32(
            self.centered(v), [m], [s], -1, out, q.Activation.NONE
        )
        return self.result(ssa, out, "requantize")

    def activation(self) -> q.Activation:
        return pick(self.ch, [q.Activation.NONE, q.Activation.RELU, q.Activation.RELU6])

    def weight_scales(self, n: int) -> list[float]:
        """Symmetric int8 weights use the full range in every channel, so
        per-channel scales differ by the channels' real ranges: a spread of
        about 2x around one base scale."""
        base = math.exp(self.rng.uniform(math.log(0.002), math.log(0.05)))
        return [q.f32(base * self.rng.uniform(0.7, 1.4)) for _ in range(n)]

    def output_quant(
        self, in_scale: float, w_scale: float, depth: int, act: q.Activation
    ) -> Quant:
        """The output quantisation of an accumulator over ``depth`` products
        (x - zp in [0, 255], |w| <= 127, a bias) that uses the int8 range,
        saturating now and then; after a RELU the zero point is usually
        -128 (as converters choose it)."""
        real = 0.0053 / math.sqrt(depth) * math.exp(self.rng.uniform(-1.0, 1.0))
        zp = int(self.rng.integers(-128, 128))
        if act != q.Activation.NONE and chance(self.ch, 80):
            zp = -128
        return q.f32(in_scale * w_scale / real), zp


# -- operators -------------------------------------------------------------------


def _conv(g: _Graph, a: Value, widen: bool = False) -> Value | None:
    """A convolution (a depthwise one a third of the time); ``widen``: a
    stem's, with more output channels than input ones."""
    n, h, w, c = a.shape
    ch = g.ch
    depthwise = chance(ch, 35)
    kh, kw = ch.integer(1, 3), ch.integer(1, 3)
    sh, sw = ch.integer(1, 2), ch.integer(1, 2)
    dh, dw = (ch.integer(1, 2), ch.integer(1, 2)) if chance(ch, 20) else (1, 1)
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    pad = [ch.integer(0, min(2, k - 1)) for k in (eh, ew, eh, ew)]
    if h + pad[0] + pad[2] < eh or w + pad[1] + pad[3] < ew:
        return None
    if depthwise:
        cout, groups, layout = c * ch.integer(1, 2), c, "HWIO"
        wshape: tuple[int, ...] = (kh, kw, 1, cout)
        depth = kh * kw
    else:
        cout, groups = ch.integer(c + 2, c + 6) if widen else ch.integer(1, 5), 1
        layout = pick(ch, ["HWIO", "OHWI"] if a.is_int8 else ["HWIO", "HWIO", "OHWI"])
        wshape = (kh, kw, c, cout) if layout == "HWIO" else (cout, kh, kw, c)
        depth = kh * kw * c
    strides, dilation = (sh, sw), (dh, dw)
    if not a.is_int8:

        def make_f() -> tuple[Any, Any]:
            bound = 1.5 / math.sqrt(depth)
            return g.rng.uniform(-bound, bound, wshape).astype(np.float32), None

        weight, _ = g.weight(wshape, layout + "f", make_f)
        x = g.emit(
            Conv2DOp(
                a.ssa,
                weight,
                strides=strides,
                padding=pad,
                dilation=dilation,
                groups=groups,
                kernel_layout=layout,
            )
        )
        if chance(ch, 70):
            bias = g.constant(g.rng.uniform(-0.5, 0.5, (cout,)).astype(np.float32))
            x = g.emit(AddOp(x, bias))
        x = _float_activation(g, x)
        return g.result(x, None, "conv2d" + ("_dw" if depthwise else ""), exact=False)
    assert a.quant is not None
    per_channel = chance(ch, 60)

    def make_q() -> tuple[Any, Any]:
        array = g.rng.integers(-127, 128, wshape).astype(np.int8)
        n_scales = cout if per_channel else 1
        scales = g.weight_scales(n_scales)
        return array, scales

    weight, scales = g.weight(wshape, layout + "q", make_q)
    acc = g.emit(
        Conv2DOp(
            a.ssa,
            weight,
            strides=strides,
            padding=pad,
            dilation=dilation,
            groups=groups,
            kernel_layout=layout,
            input_zero_point=a.quant[1],
        )
    )
    bias_bound = int(128 * 127 * math.sqrt(depth) * 0.3)
    bias = g.constant(
        g.rng.integers(-bias_bound, bias_bound + 1, (cout,)).astype(np.int32)
    )
    acc = g.emit(AddOp(acc, bias))
    act = g.activation()
    out = g.output_quant(a.quant[0], float(np.mean(scales)), depth, act)
    full = list(scales) * (cout // len(scales))
    multipliers, shifts = q.conv_multipliers(a.quant[0], full, out[0])
    y = g.requantize_i32(acc, multipliers, shifts, 3, out, act)
    return g.result(y, out, "conv2d" + ("_dw" if depthwise else "") + "_i8")


def _flatten(g: _Graph, a: Value) -> Value:
    if len(a.shape) == 2:
        return a
    n = math.prod(a.shape)
    return g.result(g.emit(ReshapeOp(a.ssa, (1, n))), a.quant, "reshape", a.exact)


def _dense(g: _Graph, a: Value) -> Value | None:
    a = _flatten(g, a)
    _, k = a.shape
    units = g.ch.integer(1, 6)
    wshape = (units, k)
    if not a.is_int8:

        def make_f() -> tuple[Any, Any]:
            bound = 1.5 / math.sqrt(k)
            return g.rng.uniform(-bound, bound, wshape).astype(np.float32), None

        weight, _ = g.weight(wshape, "f", make_f)
        x = g.emit(DenseOp(a.ssa, weight))
        if chance(g.ch, 70):
            x = g.emit(
                AddOp(x, g.constant(g.rng.uniform(-1, 1, (units,)).astype(np.float32)))
            )
        return g.result(_float_activation(g, x), None, "dense", exact=False)
    assert a.quant is not None
    per_channel = chance(g.ch, 40)

    def make_q() -> tuple[Any, Any]:
        array = g.rng.integers(-127, 128, wshape).astype(np.int8)
        n_scales = units if per_channel else 1
        scales = g.weight_scales(n_scales)
        return array, scales

    weight, scales = g.weight(wshape, "q", make_q)
    acc = g.emit(DenseOp(a.ssa, weight, input_zero_point=a.quant[1]))
    bias_bound = int(128 * 127 * math.sqrt(k) * 0.3)
    acc = g.emit(
        AddOp(
            acc,
            g.constant(
                g.rng.integers(-bias_bound, bias_bound + 1, (units,)).astype(np.int32)
            ),
        )
    )
    act = g.activation()
    out = g.output_quant(a.quant[0], float(np.mean(scales)), k, act)
    if len(scales) == 1:
        m, s = q.fully_connected_multiplier(a.quant[0], scales[0], out[0])
        multipliers, shifts = [m], [s]
    else:
        multipliers, shifts = q.conv_multipliers(a.quant[0], list(scales), out[0])
    y = g.requantize_i32(acc, multipliers, shifts, 1, out, act)
    return g.result(y, out, "dense_i8")


def _float_activation(g: _Graph, x: SSAValue) -> SSAValue:
    kind = pick(g.ch, ["none", "none", "relu", "relu6"])
    if kind == "relu":
        return g.emit(ReluOp(x))
    if kind == "relu6":
        return g.emit(ClipOp(x, 0.0, 6.0))
    return x


def _same_shape_partner(g: _Graph, a: Value, int8: bool) -> Value:
    """Another value of ``a``'s shape and kind (a fan-in), else ``a`` itself."""
    partners = [
        v for v in g.values if v.shape == a.shape and v.is_int8 == int8 and v is not a
    ]
    if partners and chance(g.ch, 80):
        return pick(g.ch, partners)
    return a


def _binary(g: _Graph, a: Value) -> Value | None:
    b = _same_shape_partner(g, a, a.is_int8)
    if not a.is_int8:
        kind = pick(g.ch, ["add", "subtract", "multiply", "maximum", "minimum"])
        if b is a and kind == "subtract":  # a - a is zero: no signal left
            kind = "add"
        cls = {
            "add": AddOp,
            "subtract": SubtractOp,
            "multiply": MultiplyOp,
            "maximum": MaximumOp,
            "minimum": MinimumOp,
        }[kind]
        if chance(g.ch, 30):  # broadcast a constant along the last axis
            shape = pick(
                g.ch, [(a.shape[-1],), (), (1,) * (len(a.shape) - 1) + (a.shape[-1],)]
            )
            rhs = g.constant(g.rng.uniform(-2, 2, shape).astype(np.float32))
        else:
            rhs = b.ssa
        exact = kind in ("maximum", "minimum") and a.exact and b.exact
        return g.result(g.emit(cls(a.ssa, rhs)), None, kind, exact)
    assert a.quant is not None and b.quant is not None
    kind = pick(g.ch, ["add", "add", "subtract", "multiply", "maximum", "minimum"])
    if b is a and kind == "subtract":  # a - a is all zero point: no signal left
        kind = "add"
    if kind in ("maximum", "minimum"):
        b = g.requantize(b, a.quant)
        cls = MaximumOp if kind == "maximum" else MinimumOp
        return g.result(g.emit(cls(a.ssa, b.ssa)), a.quant, kind + "_i8")
    out: Quant = (
        q.f32(max(a.quant[0], b.quant[0]) * g.rng.uniform(0.8, 2.5)),
        int(g.rng.integers(-128, 128)),
    )
    act = g.activation()
    if kind == "multiply":
        out = (q.f32(a.quant[0] * b.quant[0] * g.rng.uniform(20, 130)), out[1])
        m, s = q.quantize_multiplier(a.quant[0] * b.quant[0] / out[0])
        product = g.emit(MultiplyOp(g.centered(a), g.centered(b)))
        y = g.requantize_i32(product, [m], [s], -1, out, act)
        return g.result(y, out, "multiply_i8")
    (m1, s1), (m2, s2), (mo, so) = q.add_multipliers(a.quant[0], b.quant[0], out[0])

    def scaled(v: Value, m: int, s: int) -> SSAValue:
        x = g.emit(
            MultiplyOp(g.centered(v), g.scalar(1 << q.ADD_LEFT_SHIFT_INT8, "int32"))
        )
        return g.emit(FixedPointMultiplyOp(x, [m], [s]))

    lhs, rhs = scaled(a, m1, s1), scaled(b, m2, s2)
    total = g.emit((AddOp if kind == "add" else SubtractOp)(lhs, rhs))
    y = g.requantize_i32(total, [mo], [so], -1, out, act)
    return g.result(y, out, kind + "_i8")


def _relu(g: _Graph, a: Value) -> Value | None:
    if not a.is_int8:
        lo, hi = pick(g.ch, [(0.0, 6.0), (-1.0, 1.0), (-0.5, 2.0)])
        op = ReluOp(a.ssa) if chance(g.ch, 50) else ClipOp(a.ssa, lo, hi)
        return g.result(g.emit(op), None, op.name.split(".")[1], a.exact)
    assert a.quant is not None
    act = pick(g.ch, [q.Activation.RELU, q.Activation.RELU6])
    lo, hi = q.activation_range_quantized(act, a.quant[0], a.quant[1], -128, 127)
    return g.result(g.emit(ClipOp(a.ssa, float(lo), float(hi))), a.quant, "clip_i8")


def _pool(g: _Graph, a: Value) -> Value | None:
    _, h, w, _ = a.shape
    ph, pw = g.ch.integer(1, min(3, h + 1)), g.ch.integer(1, min(3, w + 1))
    pad = [g.ch.integer(0, p - 1) for p in (ph, pw, ph, pw)]
    if h + pad[0] + pad[2] < ph or w + pad[1] + pad[3] < pw:
        return None
    strides = (g.ch.integer(1, 2), g.ch.integer(1, 2))
    kind = pick(g.ch, ["max_pool2d", "avg_pool2d", "global_avg_pool2d", "mean"])
    if kind == "max_pool2d":
        op: Operation = MaxPool2DOp(a.ssa, (ph, pw), strides=strides, padding=pad)
    elif kind == "avg_pool2d":
        op = AvgPool2DOp(a.ssa, (ph, pw), strides=strides, padding=pad)
    elif kind == "global_avg_pool2d":
        op = GlobalAvgPool2DOp(a.ssa)
    else:
        op = MeanOp(a.ssa, pick(g.ch, [(1, 2), (3,), (2,)]), keepdims=chance(g.ch, 50))
    exact = a.exact and kind == "max_pool2d"
    return g.result(g.emit(op), a.quant, kind + ("_i8" if a.is_int8 else ""), exact)


def _softmax(g: _Graph, a: Value) -> Value | None:
    if not a.is_int8:
        axis = g.ch.integer(-1, len(a.shape) - 1) if chance(g.ch, 40) else -1
        return g.result(g.emit(SoftmaxOp(a.ssa, axis=axis)), None, "softmax", False)
    assert a.quant is not None
    beta = pick(g.ch, [1.0, 1.0, 0.5, 2.0])
    try:
        m, shift, diff_min = q.softmax_params(beta, a.quant[0])
    except ValueError:
        return None
    out: Quant = (SOFTMAX_OUTPUT_SCALE, SOFTMAX_OUTPUT_ZERO_POINT)
    y = g.emit(QuantizedSoftmaxOp(a.ssa, m, shift, diff_min))
    return g.result(y, out, "softmax_i8")


def _concatenate(g: _Graph, a: Value) -> Value | None:
    rank = len(a.shape)
    axis = g.ch.integer(1 if rank == 4 else 0, rank - 1)
    operands = [a]
    for _ in range(g.ch.integer(1, 2)):
        fits = [
            v
            for v in g.values
            if v.is_int8 == a.is_int8
            and len(v.shape) == rank
            and all(
                x == y
                for d, (x, y) in enumerate(zip(v.shape, a.shape, strict=True))
                if d != axis
            )
        ]
        b = pick(g.ch, fits)
        if b.is_int8:
            assert a.quant is not None
            b = g.requantize(b, a.quant)
        operands.append(b)
    written = axis - rank if chance(g.ch, 30) else axis
    y = g.emit(ConcatenateOp([v.ssa for v in operands], written))
    exact = all(v.exact for v in operands)
    return g.result(y, a.quant, "concatenate" + ("_i8" if a.is_int8 else ""), exact)


def _pad(g: _Graph, a: Value) -> Value | None:
    widths: list[int] = []
    for d in range(len(a.shape)):
        fixed = d == 0 and len(a.shape) == 4
        widths += [0, 0] if fixed else [g.ch.integer(0, 2), g.ch.integer(0, 2)]
    if a.is_int8:
        assert a.quant is not None
        value = (
            float(a.quant[1]) if chance(g.ch, 70) else float(g.rng.integers(-128, 128))
        )
    else:
        value = 0.0 if chance(g.ch, 70) else float(np.float32(g.rng.uniform(-2, 2)))
    y = g.emit(PadOp(a.ssa, widths, value))
    return g.result(y, a.quant, "pad" + ("_i8" if a.is_int8 else ""), a.exact)


def _reshape(g: _Graph, a: Value) -> Value | None:
    n = math.prod(a.shape)
    shapes = {(1, n), (1, 1, 1, n), (1, n, 1, 1), (1, 1, n, 1)}
    if len(a.shape) == 4:  # the batch is 1 unless a reshape made it b
        b, h, w, c = a.shape
        shapes |= {(b, h * w, 1, c), (b, w, h, c), (b * h, w * c)}
    else:
        b, k = a.shape
        shapes |= {(b, 1, 1, k), (k, b)}
    shapes.discard(a.shape)
    new = pick(g.ch, sorted(shapes))
    return g.result(g.emit(ReshapeOp(a.ssa, new)), a.quant, "reshape", a.exact)


def _transpose(g: _Graph, a: Value) -> Value | None:
    rank = len(a.shape)
    perms = (
        [(0, 2, 1, 3), (0, 3, 1, 2), (0, 1, 3, 2), (0, 2, 3, 1)]
        if rank == 4
        else [(1, 0)]
    )
    y = g.emit(TransposeOp(a.ssa, pick(g.ch, perms)))
    return g.result(y, a.quant, "transpose", a.exact)


def _tuple(g: _Graph, a: Value) -> Value | None:
    fields = [a] + [pick(g.ch, g.values) for _ in range(g.ch.integer(1, 2))]
    t = g.emit(TupleOp([v.ssa for v in fields]))
    index = g.ch.integer(0, len(fields) - 1)
    y = g.emit(TupleGetItemOp(t, index))
    return g.result(y, fields[index].quant, "tuple_get_item", fields[index].exact)


def _convert(g: _Graph, a: Value) -> Value | None:
    """float -> int8 (quantize) or int8 -> float (dequantize)."""
    if a.is_int8:
        assert a.quant is not None
        return g.result(g.emit(DequantizeOp(a.ssa, *a.quant)), None, "dequantize")
    if not a.exact:
        return None
    quant = g.random_quant()
    y = g.emit(QuantizeOp(a.ssa, quant[0], quant[1], i8))
    return g.result(y, quant, "quantize")


def _requantize(g: _Graph, a: Value) -> Value | None:
    if not a.is_int8:
        return None
    new = g.random_quant()
    return g.requantize(a, new) if new != a.quant else None


def _slice(g: _Graph, a: Value) -> Value | None:
    """A SLICE/STRIDED_SLICE: along one axis (a contiguous piece is an alias
    of its source), or every axis with steps (a copy)."""
    shape = a.shape
    begin, end, strides = [0] * len(shape), list(shape), [1] * len(shape)
    axes = [d for d, n in enumerate(shape) if n > 1]
    if not axes:
        return None
    for d in axes if chance(g.ch, 25) else [pick(g.ch, axes)]:
        n = shape[d]
        begin[d] = g.ch.integer(0, n - 1)
        end[d] = g.ch.integer(begin[d] + 1, n)
        strides[d] = 1 if chance(g.ch, 70) else 2
    y = g.emit(StridedSliceOp(a.ssa, begin, end, strides))
    return g.result(y, a.quant, "strided_slice", a.exact)


def _svdf(g: _Graph, a: Value) -> Value | None:
    """A float SVDF: state (its activation history) kept across runs."""
    if a.is_int8 or len(a.shape) != 2:
        return None
    batch, n_input = a.shape
    rank, units, memory = g.ch.integer(1, 2), g.ch.integer(1, 4), g.ch.integer(1, 4)
    features = rank * units
    bound = 1.5 / math.sqrt(n_input)
    wf = g.constant(
        g.rng.uniform(-bound, bound, (features, n_input)).astype(np.float32)
    )
    wt = g.constant(g.rng.uniform(-0.7, 0.7, (features, memory)).astype(np.float32))
    bias = g.constant(g.rng.uniform(-0.5, 0.5, (units,)).astype(np.float32))
    t = TensorType(f32, (batch, memory * features))
    initial = g.rng.uniform(-1, 1, (batch, memory * features)).astype(np.float32)
    value = DenseIntOrFPElementsAttr(t, BytesAttr(initial.tobytes()))
    g.states += 1
    state = g.emit(StateOp(f"svdf_{g.states}", value))
    activation = pick(g.ch, ["NONE", "RELU", "TANH"])
    y = g.emit(SvdfOp(a.ssa, wf, wt, bias, state, rank=rank, activation=activation))
    return g.result(y, None, "svdf", exact=False)


_OPS: dict[
    str, tuple[Callable[[_Graph, Value], Value | None], int, tuple[int, ...]]
] = {
    # name: (builder, weight, ranks it accepts)
    "conv": (_conv, 6, (4,)),
    "dense": (_dense, 3, (2, 4)),
    "binary": (_binary, 6, (2, 4)),
    "relu": (_relu, 3, (2, 4)),
    "pool": (_pool, 3, (4,)),
    "softmax": (_softmax, 2, (2, 4)),
    "concatenate": (_concatenate, 2, (2, 4)),
    "pad": (_pad, 2, (2, 4)),
    "reshape": (_reshape, 3, (2, 4)),
    "transpose": (_transpose, 1, (2, 4)),
    "tuple": (_tuple, 2, (2, 4)),
    "convert": (_convert, 1, (2, 4)),
    "requantize": (_requantize, 1, (2, 4)),
    "slice": (_slice, 2, (2, 4)),
    "svdf": (_svdf, 1, (2,)),
}


def _random_shape(ch: Choices) -> tuple[int, ...]:
    if chance(ch, 75):
        return (1, ch.integer(1, 6), ch.integer(1, 6), ch.integer(1, 4))
    return (ch.integer(1, 2), ch.integer(1, 12))


def _build(
    ch: Choices, name: str, patch: bool
) -> tuple[ModuleOp, list[npt.NDArray[Any]], list[str], int]:
    g = _Graph(ch, name)
    flavour = pick(ch, ["int8", "int8", "float", "mixed"])
    stem = ch.integer(1, 3) if patch else 0
    for k in range(ch.integer(1, 2)):
        int8 = flavour == "int8" or (flavour == "mixed" and chance(ch, 50))
        if k == 0 and stem:  # an image a stage of convolutions can stripe
            shape = (1, ch.integer(6, 14), ch.integer(3, 8), ch.integer(1, 3))
            g.add_input(shape, int8)
        else:
            g.add_input(_random_shape(ch), int8)
    if stem:  # a chain of convolutions (one use each): a patchable stage
        image = g.values[0]
        for _ in range(stem):
            image = _conv(g, image, widen=True) or image
        g.values = [v for v in g.values[:-1] if not v.ssa.uses] + [g.values[-1]]
    names = sorted(_OPS)
    weights = [_OPS[n][1] for n in names]
    menu = [n for n, w in zip(names, weights, strict=True) for _ in range(w)]
    if flavour != "mixed":
        menu = [n for n in menu if n != "convert"]
    for _ in range(ch.integer(1, 8)):
        # operands favour recent values (chains) but reach back (fan-out)
        recent = g.values[-3:]
        a = pick(ch, recent) if chance(ch, 65) else pick(ch, g.values)
        kind = pick(ch, menu)
        builder, _, ranks = _OPS[kind]
        if len(a.shape) not in ranks or math.prod(a.shape) > 512:
            continue
        builder(g, a)
    outputs = [g.values[-1]]
    for _ in range(ch.integer(0, 2)):
        # often a value a later operator reads too: it must outlive that read
        read_again = [v for v in g.values[:-1] if v.ssa.uses]
        if read_again and chance(ch, 60):
            outputs.append(pick(ch, read_again))
        else:
            outputs.append(pick(ch, g.values))
    if chance(ch, 25):  # an output read by one more operator, also returned
        tail = pick(ch, [_relu, _binary, _softmax])(g, pick(ch, outputs))
        if tail is not None:
            outputs.append(tail)
    if chance(ch, 15):  # a value returned twice
        outputs.append(pick(ch, outputs))
    if chance(ch, 15):  # a slice of an output returned too (an alias of it)
        piece = _slice(g, pick(ch, outputs))
        if piece is not None:
            outputs.append(piece)
    if chance(ch, 10):  # a constant returned directly
        c = g.constant(g.rng.integers(-5, 5, (2, 3)).astype(np.int8))
        outputs.append(Value(c, (1.0, 0)))
    ssa = [v.ssa for v in outputs]
    if len(ssa) > 1 and chance(ch, 30):
        ssa = [g.emit(TupleOp(ssa))]
    g.block.add_op(ReturnOp(*ssa))
    main = FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in g.block.args], [v.type for v in ssa]),
        Region(g.block),
    )
    return ModuleOp([main]), g.inputs, g.kinds, g.states


def print_module(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue() + "\n"


def generate(ch: Choices, name: str) -> Case:
    """A random case called ``name`` (a C identifier)."""
    patch = chance(ch, 20)
    module, inputs, kinds, states = _build(ch, name, patch)
    module.verify()
    n_pools = ch.integer(1, 3)
    pools = PoolDraw(
        policy=pick(ch, POOL_POLICIES),
        n_pools=n_pools,
        fractions=tuple(ch.integer(0, 100) for _ in range(n_pools)),
        alignments=tuple(pick(ch, [1, 4, 8, 16, 16, 32]) for _ in range(n_pools)),
        constant_pool=chance(ch, 30),
    )
    return Case(
        name=name,
        text=print_module(module),
        inputs=inputs,
        algorithm=pick(ch, sorted(ALGORITHMS)),
        use_workspace_io=chance(ch, 40),
        max_depth=pick(ch, [256, 256, 256, 3, 1]),
        pools=pools,
        kinds=kinds,
        runs=2 if states else 1,
        patch="budget=10.0" if patch else "",
    )


def generate_from_seed(seed: int) -> Case:
    return generate(RandomChoices(random.Random(seed)), f"fz{seed}")
