"""Large relay graphs of a chosen size, for compile-time benchmarks and the
complexity tests (``benchmarks/compile_time.py``, ``tests/test_compile_scaling.py``).

``scale_graph(n_ops)`` returns an int8 relay ``@main`` (as the TFLite
importer writes int8 models: conv2d with a bias, fixed-point requantisation,
zero point, clamp and cast; ADD with both inputs rescaled) of about
``n_ops`` operators (relay ops other than ``relay.constant``), built from
four kinds of blocks in a fixed rotation:

* ``chain``: one 1x1 convolution with its requantisation (6 operators);
* ``diamond``: two convolutions of the same input joined by an int8 ADD;
* ``residual``: two convolutions in sequence plus an ADD of the block's input
  (a skip connection that keeps the input alive across the block);
* ``fanout``: ``FANOUT`` convolutions of the same input concatenated along
  the channels and brought back by one convolution.

Every tensor is ``1xHxWxC`` with ``C = CHANNELS``, so operator and buffer
sizes do not change with the graph's size: compile time per operator must
not either. The graph is a function of ``n_ops`` alone (no randomness);
weights are small deterministic patterns.

``chain_graph(n_ops)`` is the deepest graph of that size: one chain of
elementwise operators (int8 and int32, ``CHAIN_CYCLE`` in rotation), each
reading the one before; ``chain_reference`` computes its output with numpy.
Its depth is its size, so any walk of the compiler that recursed along
def-use chains or expression trees would overflow Python's stack on it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FunctionType,
    ModuleOp,
    TensorType,
    i8,
    i32,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

from usmp.dialects.relay import ConstantOp
from usmp.dialects.relay_ops import (
    AddOp,
    CastOp,
    ClipOp,
    ConcatenateOp,
    Conv2DOp,
    FixedPointMultiplyOp,
    MaximumOp,
    MultiplyOp,
    SubtractOp,
)

HEIGHT, WIDTH, CHANNELS = 4, 4, 4
FANOUT = 4
BLOCKS = ("chain", "diamond", "residual", "fanout")
ZERO_POINT = -3


class _Builder:
    def __init__(self) -> None:
        self.block = Block(arg_types=[TensorType(i8, (1, HEIGHT, WIDTH, CHANNELS))])
        self.operators = 0
        self.weights = 0
        self.scalars: dict[int, SSAValue] = {}

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        if not isinstance(op, ConstantOp):
            self.operators += 1
        return op.results[0]

    def constant(self, array: npt.NDArray[np.generic]) -> SSAValue:
        element = {"int8": i8, "int32": i32}[array.dtype.name]
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        t = TensorType(element, array.shape)
        return self.emit(
            ConstantOp(DenseIntOrFPElementsAttr(t, BytesAttr(data.tobytes())))
        )

    def scalar(self, value: int) -> SSAValue:
        if value not in self.scalars:
            self.scalars[value] = self.constant(np.array(value, dtype=np.int32))
        return self.scalars[value]

    def requantize(self, acc: SSAValue) -> SSAValue:
        x = self.emit(FixedPointMultiplyOp(acc, [1518500250], [-7]))
        x = self.emit(AddOp(x, self.scalar(ZERO_POINT)))
        x = self.emit(ClipOp(x, -128.0, 127.0))
        return self.emit(CastOp(x, i8))

    def conv(
        self, x: SSAValue, channels_in: int = CHANNELS, channels: int = CHANNELS
    ) -> SSAValue:
        """A 1x1 int8 convolution to ``channels`` channels, requantised."""
        self.weights += 1
        k = self.weights
        w = (np.arange(channels_in * channels, dtype=np.int64) * 7 + k) % 255 - 127
        weight = self.constant(w.astype(np.int8).reshape(1, 1, channels_in, channels))
        bias = self.constant(np.arange(channels, dtype=np.int32) * 100 - k % 1000)
        acc = self.emit(Conv2DOp(x, weight, input_zero_point=ZERO_POINT))
        return self.requantize(self.emit(AddOp(acc, bias)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """TFLite's int8 ADD: both inputs centred, scaled, rescaled."""

        def scaled(v: SSAValue) -> SSAValue:
            x = self.emit(CastOp(v, i32))
            x = self.emit(AddOp(x, self.scalar(-ZERO_POINT)))
            x = self.emit(MultiplyOp(x, self.scalar(1 << 20)))
            return self.emit(FixedPointMultiplyOp(x, [1073741824], [-1]))

        return self.requantize(self.emit(AddOp(scaled(a), scaled(b))))


def _chain(b: _Builder, x: SSAValue) -> SSAValue:
    return b.conv(x)


def _diamond(b: _Builder, x: SSAValue) -> SSAValue:
    return b.add(b.conv(x), b.conv(x))


def _residual(b: _Builder, x: SSAValue) -> SSAValue:
    return b.add(x, b.conv(b.conv(x)))


def _fanout(b: _Builder, x: SSAValue) -> SSAValue:
    branches = [b.conv(x) for _ in range(FANOUT)]
    joined = b.emit(ConcatenateOp(branches, axis=3))
    return b.conv(joined, CHANNELS * FANOUT)


_BLOCKS: dict[str, Callable[[_Builder, SSAValue], SSAValue]] = {
    "chain": _chain,
    "diamond": _diamond,
    "residual": _residual,
    "fanout": _fanout,
}


def scale_graph(n_ops: int, blocks: tuple[str, ...] = BLOCKS) -> ModuleOp:
    """A relay module of at least ``n_ops`` operators (at most one block
    more), its blocks taken from ``blocks`` in rotation."""
    b = _Builder()
    x: SSAValue = b.block.args[0]
    i = 0
    while b.operators < n_ops:
        x = _BLOCKS[blocks[i % len(blocks)]](b, x)
        i += 1
    b.block.add_op(ReturnOp(x))
    main = FuncOp(
        "main",
        FunctionType.from_lists([b.block.args[0].type], [x.type]),
        Region(b.block),
    )
    return ModuleOp([main])


def inception_graph(blocks: int, widths: tuple[int, ...] = (4, 1, 3, 2)) -> ModuleOp:
    """Inception-like blocks in the order a converter may write them,
    breadth first: every branch's expanding 1x1 convolution
    (``CHANNELS`` -> ``CHANNELS * widths[i]``), then every branch's reducing
    one (back to ``CHANNELS``), the branches concatenated and brought back to
    ``CHANNELS`` by one more convolution. Running each branch to its end
    before the next expansion needs less memory (``aot-lower-main``'s
    memory-aware order)."""
    b = _Builder()
    x: SSAValue = b.block.args[0]
    for _ in range(blocks):
        wide = [b.conv(x, CHANNELS, CHANNELS * w) for w in widths]
        narrow = [b.conv(e, CHANNELS * w) for e, w in zip(wide, widths, strict=True)]
        joined = b.emit(ConcatenateOp(narrow, axis=3))
        x = b.conv(joined, CHANNELS * len(widths))
    b.block.add_op(ReturnOp(x))
    main = FuncOp(
        "main",
        FunctionType.from_lists([b.block.args[0].type], [x.type]),
        Region(b.block),
    )
    return ModuleOp([main])


CHAIN_CYCLE = (
    "add 7",
    "cast i32",
    "multiply 3",
    "clip",
    "cast i8",
    "subtract 2",
    "maximum -128",
)
"""The operators of ``chain_graph``, in rotation: int8 ``add``/``subtract``
wrap, the int32 part widens, scales and narrows back (a requantisation's
shape; the clip keeps every value). Every step is a bijection of the int8
values (3 is odd), so the output still tells every input value apart."""


def chain_graph(n_ops: int) -> ModuleOp:
    """A relay module whose ``@main`` is one chain of ``n_ops`` elementwise
    operators (``CHAIN_CYCLE`` in rotation) on a ``1xHxWxC`` int8 input;
    the chain ends in int8 (cut short at an int8 step if needed)."""
    b = _Builder()
    x: SSAValue = b.block.args[0]
    scalars: dict[tuple[str, int], SSAValue] = {}

    def scalar(dtype: str, value: int) -> SSAValue:
        if (dtype, value) not in scalars:
            scalars[dtype, value] = b.constant(np.array(value, dtype=dtype))
        return scalars[dtype, value]

    i = 0
    while b.operators < n_ops or x.type != b.block.args[0].type:
        name, *arg = CHAIN_CYCLE[i % len(CHAIN_CYCLE)].split()
        i += 1
        if name == "cast":
            x = b.emit(CastOp(x, {"i8": i8, "i32": i32}[arg[0]]))
        elif name == "clip":
            x = b.emit(ClipOp(x, -400.0, 400.0))
        else:
            op = {
                "add": AddOp,
                "subtract": SubtractOp,
                "multiply": MultiplyOp,
                "maximum": MaximumOp,
            }[name]
            dtype = "int32" if x.type != b.block.args[0].type else "int8"
            x = b.emit(op(x, scalar(dtype, int(arg[0]))))
    b.block.add_op(ReturnOp(x))
    main = FuncOp(
        "main",
        FunctionType.from_lists([b.block.args[0].type], [x.type]),
        Region(b.block),
    )
    return ModuleOp([main])


def chain_reference(module: ModuleOp, x: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """The output of ``chain_graph``'s module for the input ``x``, computed
    with numpy (integers wrap)."""
    value: npt.NDArray[np.integer] = x
    for op in module.walk():
        if isinstance(op, ConstantOp) or not op.name.startswith("relay."):
            continue
        if isinstance(op, CastOp):
            value = value.astype(
                np.int32 if op.result.type.element_type == i32 else np.int8
            )  # pyright: ignore
        elif isinstance(op, ClipOp):
            value = np.clip(value, op.a_min, op.a_max).astype(value.dtype)
        else:
            rhs = op.operands[1].owner
            assert isinstance(rhs, ConstantOp)
            c = int(rhs.value.get_values()[0])  # pyright: ignore
            with np.errstate(over="ignore"):
                value = {
                    "relay.add": np.add,
                    "relay.subtract": np.subtract,
                    "relay.multiply": np.multiply,
                    "relay.maximum": np.maximum,
                }[op.name](value, value.dtype.type(c))
    return value.astype(np.int8)


def operator_count(module: ModuleOp) -> int:
    """Relay operators in ``module`` (every ``relay.*`` op but constants)."""
    return sum(
        1
        for op in module.walk()
        if op.name.startswith("relay.") and not isinstance(op, ConstantOp)
    )
