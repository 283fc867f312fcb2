"""Operators of the ``relay`` dialect (registered by ``relay.py``).

The contract is ``docs/relay-ops.md``. This module holds the elementwise and
data-movement operators and ``OPERATOR_OPS``, the list of every operator
(``relay_nn_ops.py``: conv2d, dense, pooling, mean; ``relay_quant_ops.py``:
fixed_point_multiply, quantize, dequantize). All operator classes are
re-exported here, so ``from usmp.dialects.relay_ops import Conv2DOp`` works.

Each operator is one ``@relay_op_definition`` class (``relay_props``): every
property is declared once, as a typed field (``axes = ints_prop()``) that is
both the IRDL property, printed in the attribute dictionary with defaults
elided, and a Python accessor (``op.axes`` is a ``tuple[int, ...]``) read by
the verifier, ``lower-ops`` and the numpy oracle. ``infer_result_type`` (in
``relay_base.RelayOperator``) verifies the op, and the ``__init__`` builders
use it to infer the result type; a builder argument left ``None`` takes the
declared default.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    operand_def,
    traits_def,
    var_operand_def,
)

from usmp.dialects.relay_base import (
    UNARY_FORMAT,
    RelayOperator,
    fail,
    infer_shape,
    int_range,
    is_int,
    shape_of,
    tensor_of,
    tensor_type,
)
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_nn_ops import (
    ArgMaxOp,
    ArgMinOp,
    AvgPool2DOp,
    Conv2DOp,
    Conv2DTransposeOp,
    DenseOp,
    GlobalAvgPool2DOp,
    MaxOp,
    MaxPool2DOp,
    MeanOp,
    MinOp,
    SumOp,
)
from usmp.dialects.relay_props import (
    float_prop,
    int_prop,
    ints_prop,
    relay_op_definition,
)
from usmp.dialects.relay_quant_ops import DequantizeOp, FixedPointMultiplyOp, QuantizeOp
from usmp.dialects.relay_shapes import (
    broadcast_shapes,
    concatenate_output_shape,
    contiguous_slice_offset,
    normalize_axis,
    pad_output_shape,
    strided_slice_output_shape,
    transpose_output_shape,
)


class BinaryElementwiseOp(RelayOperator):
    """Base of the broadcasting binary operators.

    Syntax::

        %r = relay.add %a, %b : (tensor<1x4xi32>, tensor<4xi32>) -> tensor<1x4xi32>

    Both operands have the same element type; the result shape is the numpy
    broadcast of the operand shapes, its element type the operands'. Integer
    arithmetic wraps (two's complement).
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` "
        "`->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        self._build([lhs, rhs])

    @classmethod
    def check_element_type(cls, element_type: Attribute) -> None:
        """Hook for operators restricted to some element types."""

    def infer_result_type(self) -> TensorType:
        name = self.name
        lt = tensor_of(name, "lhs", self.lhs)
        rt = tensor_of(name, "rhs", self.rhs)
        if lt.element_type != rt.element_type:
            fail(
                name,
                f"operand element types differ ({lt.element_type} vs "
                f"{rt.element_type}); insert a relay.cast",
            )
        self.check_element_type(lt.element_type)
        shape = broadcast_shapes(shape_of(lt), shape_of(rt))
        if shape is None:
            fail(
                name,
                f"shapes {list(shape_of(lt))} and {list(shape_of(rt))} "
                "do not broadcast",
            )
        return tensor_type(lt.element_type, shape)


@relay_op_definition
class AddOp(BinaryElementwiseOp):
    """Elementwise ``lhs + rhs`` with numpy broadcasting (integers wrap)."""

    name = "relay.add"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "add"))


@relay_op_definition
class SubtractOp(BinaryElementwiseOp):
    """Elementwise ``lhs - rhs`` with numpy broadcasting (integers wrap)."""

    name = "relay.subtract"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "subtract"))


@relay_op_definition
class MultiplyOp(BinaryElementwiseOp):
    """Elementwise ``lhs * rhs`` with numpy broadcasting (integers wrap)."""

    name = "relay.multiply"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "multiply"))


@relay_op_definition
class MaximumOp(BinaryElementwiseOp):
    """Elementwise maximum with numpy broadcasting."""

    name = "relay.maximum"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "maximum"))


@relay_op_definition
class MinimumOp(BinaryElementwiseOp):
    """Elementwise minimum with numpy broadcasting."""

    name = "relay.minimum"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "minimum"))


@relay_op_definition
class RightShiftOp(BinaryElementwiseOp):
    """Elementwise arithmetic ``lhs >> rhs``; integer element types only."""

    name = "relay.right_shift"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "right_shift"))

    @classmethod
    def check_element_type(cls, element_type: Attribute) -> None:
        if not is_int(element_type):
            fail(cls.name, f"element type {element_type} is not an integer type")

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        # A shift by a negative amount or by the width or more is undefined
        # behaviour in C; shift amounts known at compile time are checked.
        owner = self.rhs.owner
        if isinstance(owner, Operation) and owner.name == "relay.constant":
            value = owner.properties.get("value")
            if isinstance(value, DenseIntOrFPElementsAttr):
                width = t.element_type.width.data  # pyright: ignore
                bad = [v for v in value.get_values() if not 0 <= int(v) < width]
                if bad:
                    fail(
                        self.name,
                        f"shift amount {bad[0]} is out of range for "
                        f"{t.element_type}, expected 0..{width - 1}",
                    )
        return t


@relay_op_definition
class DivideOp(BinaryElementwiseOp):
    """Elementwise ``lhs / rhs`` with numpy broadcasting; float element types
    only (IEEE division, as C's ``/``)."""

    name = "relay.divide"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "divide"))

    @classmethod
    def check_element_type(cls, element_type: Attribute) -> None:
        if is_int(element_type):
            fail(cls.name, f"element type {element_type} is not a float type")


class UnarySameTypeOp(RelayOperator):
    """Base of the operators whose result type is the operand's."""

    data = operand_def(TensorType)

    assembly_format = UNARY_FORMAT

    def infer_result_type(self) -> TensorType:
        return tensor_of(self.name, "operand", self.data)


@relay_op_definition
class ClipOp(UnarySameTypeOp):
    """Clamp to ``[a_min, a_max]``; the result type is the operand's.

    Syntax::

        %r = relay.clip %x {a_min = -128.0 : f64, a_max = 127.0 : f64}
               : tensor<4xi32> -> tensor<4xi32>
    """

    name = "relay.clip"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "clip"))

    a_min = float_prop()
    a_max = float_prop()

    def __init__(self, data: SSAValue, a_min: float, a_max: float):
        self._build([data], data.type, a_min=a_min, a_max=a_max)

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        lo, hi = self.a_min, self.a_max
        for what, bound in (("a_min", lo), ("a_max", hi)):
            if math.isnan(bound):
                fail(self.name, f"{what} is NaN, expected a number")
            if is_int(t.element_type) and math.isinf(bound):
                fail(
                    self.name,
                    f"{what} {bound} is not finite; bounds of an integer clip "
                    "must be finite numbers",
                )
        if lo > hi:
            fail(self.name, f"a_min {lo} is greater than a_max {hi}")
        return t


@relay_op_definition
class ReluOp(UnarySameTypeOp):
    """``max(x, 0)``: ``%r = relay.relu %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.relu"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "nn.relu"))

    def __init__(self, data: SSAValue):
        self._build([data], data.type)


class FloatUnaryOp(UnarySameTypeOp):
    """Base of the ``f32``-only elementwise functions (``sigmoid``, ``tanh``,
    ``exp``, ``log``, ``sqrt``, ``rsqrt``)."""

    def __init__(self, data: SSAValue):
        self._build([data], data.type)

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        if t.element_type != f32:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected f32",
            )
        return t


@relay_op_definition
class SigmoidOp(FloatUnaryOp):
    """``1 / (1 + exp(-x))``, ``f32`` only:
    ``%r = relay.sigmoid %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.sigmoid"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "sigmoid"))


@relay_op_definition
class TanhOp(FloatUnaryOp):
    """``tanh(x)``, ``f32`` only:
    ``%r = relay.tanh %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.tanh"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "tanh"))


@relay_op_definition
class ExpOp(FloatUnaryOp):
    """``exp(x)``, ``f32`` only:
    ``%r = relay.exp %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.exp"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "exp"))


@relay_op_definition
class LogOp(FloatUnaryOp):
    """Natural logarithm, ``f32`` only (``log(0) = -inf``, negative: NaN):
    ``%r = relay.log %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.log"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "log"))


@relay_op_definition
class SqrtOp(FloatUnaryOp):
    """``sqrt(x)``, ``f32`` only (negative: NaN):
    ``%r = relay.sqrt %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.sqrt"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "sqrt"))


@relay_op_definition
class RsqrtOp(FloatUnaryOp):
    """``1 / sqrt(x)``, ``f32`` only:
    ``%r = relay.rsqrt %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.rsqrt"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "rsqrt"))


@relay_op_definition
class SoftmaxOp(UnarySameTypeOp):
    """Softmax along ``axis`` (default -1); ``f32`` only.

    Syntax::

        %r = relay.softmax %x {axis = 1 : i64} : tensor<1x10xf32> -> tensor<1x10xf32>
    """

    name = "relay.softmax"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "nn.softmax"))

    axis = int_prop(default=-1)

    def __init__(self, data: SSAValue, axis: int | None = None):
        self._build([data], data.type, axis=axis)

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        if t.element_type != f32:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected f32",
            )
        infer_shape(self.name, normalize_axis, self.axis, len(shape_of(t)))
        return t


class _ShapeOp(RelayOperator):
    """Base of the ops whose result type gives a new static shape for the
    operand's elements (same element type)."""

    data = operand_def(TensorType)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, shape: Sequence[int]):
        t = tensor_of(self.name, "operand", data)
        super().__init__(
            operands=[data], result_types=[tensor_type(t.element_type, shape)]
        )

    def _types(self) -> tuple[TensorType[Attribute], TensorType[Attribute]]:
        """Operand and result types, checked to have one element type."""
        src = tensor_of(self.name, "operand", self.data)
        dst = tensor_of(self.name, "result", self.result.type)
        if src.element_type != dst.element_type:
            fail(
                self.name,
                f"element type changes from {src.element_type} to "
                f"{dst.element_type}; use relay.cast",
            )
        return src, dst


@relay_op_definition
class ReshapeOp(_ShapeOp):
    """Reshape: same elements, new static shape given by the result type.

    Syntax::

        %r = relay.reshape %x : tensor<1x1x1x64xi8> -> tensor<1x64xi8>
    """

    name = "relay.reshape"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "reshape"))

    def verify_(self) -> None:
        src, dst = self._types()
        if src.element_count() != dst.element_count():
            fail(
                self.name,
                f"{src} has {src.element_count()} elements but {dst} has "
                f"{dst.element_count()}",
            )


@relay_op_definition
class BroadcastToOp(_ShapeOp):
    """numpy ``broadcast_to``: the result type gives the shape.

    Syntax::

        %r = relay.broadcast_to %x : tensor<1x3xi8> -> tensor<2x4x3xi8>
    """

    name = "relay.broadcast_to"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "broadcast_to"))

    def verify_(self) -> None:
        src, dst = self._types()
        target = shape_of(dst)
        if broadcast_shapes(shape_of(src), target) != target:
            fail(
                self.name,
                f"{list(shape_of(src))} does not broadcast to {list(target)}",
            )


@relay_op_definition
class CastOp(RelayOperator):
    """Convert the element type; the shape is unchanged.

    Syntax::

        %r = relay.cast %x : tensor<1x8xi32> -> tensor<1x8xi8>

    int->int wraps (truncates to the width), int->float is exact, float->int
    rounds toward zero.
    """

    name = "relay.cast"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "cast"))

    data = operand_def(TensorType)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, element_type: Attribute):
        t = tensor_of(self.name, "operand", data)
        super().__init__(
            operands=[data], result_types=[tensor_type(element_type, t.get_shape())]
        )

    def verify_(self) -> None:
        src = tensor_of(self.name, "operand", self.data)
        dst = tensor_of(self.name, "result", self.result.type)
        expected = tensor_type(dst.element_type, src.get_shape())
        if dst != expected:
            fail(self.name, f"result type {dst} is wrong, expected {expected}")


@relay_op_definition
class TransposeOp(RelayOperator):
    """Permute dimensions (numpy ``transpose(x, axes)``).

    Syntax::

        %r = relay.transpose %x {axes = array<i64: 0, 3, 1, 2>}
               : tensor<1x4x4x8xf32> -> tensor<1x8x4x4xf32>
    """

    name = "relay.transpose"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "transpose"))

    data = operand_def(TensorType)
    axes = ints_prop()

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, axes: Sequence[int]):
        self._build([data], axes=axes)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        shape = infer_shape(self.name, transpose_output_shape, shape_of(t), self.axes)
        return tensor_type(t.element_type, shape)


@relay_op_definition
class StridedSliceOp(RelayOperator):
    """Elements ``begin + i * strides`` of every axis (strides may be negative).

    Syntax::

        %r = relay.strided_slice %x {begin = array<i64: 0, 3>, end = array<i64: 2, -1>,
                                     strides = array<i64: 1, -2>}
               : tensor<2x5xi8> -> tensor<2x2xi8>

    One value per axis; positions are absolute (the importer resolves TFLite's
    negative indices, masks and clamping): axis ``d`` has
    ``ceil((end - begin) / stride) >= 1`` elements, all inside the axis.
    """

    name = "relay.strided_slice"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "strided_slice"))

    data = operand_def(TensorType)
    begin = ints_prop()
    end = ints_prop()
    strides = ints_prop()

    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        data: SSAValue,
        begin: Sequence[int],
        end: Sequence[int],
        strides: Sequence[int],
    ):
        self._build([data], begin=begin, end=end, strides=strides)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        shape = infer_shape(
            self.name,
            strided_slice_output_shape,
            shape_of(t),
            self.begin,
            self.end,
            self.strides,
        )
        return tensor_type(t.element_type, shape)

    def contiguous_offset(self) -> int | None:
        """The element offset of the result in its operand when the result is
        one contiguous block of it, in order (then it is a view: ``fuse-ops``
        leaves it alone in main and ``aot-lower-main`` aliases it), else
        ``None``."""
        t = tensor_of(self.name, "operand", self.data)
        return contiguous_slice_offset(shape_of(t), self.begin, self.end, self.strides)


@relay_op_definition
class PadOp(RelayOperator):
    """Constant padding; ``pad_width`` = (before0, after0, before1, after1, ...).

    Syntax::

        %r = relay.pad %x {pad_width = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>,
                           pad_value = -128.0 : f64}
               : tensor<1x4x4x8xi8> -> tensor<1x6x6x8xi8>

    For integer tensors ``pad_value`` must be an integer representable in the
    element type.
    """

    name = "relay.pad"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "nn.pad"))

    data = operand_def(TensorType)
    pad_width = ints_prop()
    pad_value = float_prop(default=0.0)

    assembly_format = UNARY_FORMAT

    def __init__(
        self, data: SSAValue, pad_width: Sequence[int], pad_value: float | None = None
    ):
        self._build([data], pad_width=pad_width, pad_value=pad_value)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        el, pad_value = t.element_type, self.pad_value
        if isinstance(el, IntegerType):
            lo, hi = int_range(el)
            if pad_value != int(pad_value) or not lo <= pad_value <= hi:
                fail(
                    self.name,
                    f"pad_value {pad_value} is not representable in {el} "
                    f"(expected an integer in {lo}..{hi})",
                )
        shape = infer_shape(self.name, pad_output_shape, shape_of(t), self.pad_width)
        return tensor_type(el, shape)


@relay_op_definition
class ConcatenateOp(RelayOperator):
    """Join tensors along ``axis`` (may be negative), numpy ``concatenate``.

    Syntax::

        %r = relay.concatenate %a, %b {axis = -1 : i64}
               : (tensor<1x2xi8>, tensor<1x3xi8>) -> tensor<1x5xi8>
    """

    name = "relay.concatenate"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "concatenate"))

    inputs = var_operand_def(TensorType)
    axis = int_prop()

    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        self._build([inputs], axis=axis)

    def infer_result_type(self) -> TensorType:
        name = self.name
        types = [tensor_of(name, f"input {i}", v) for i, v in enumerate(self.inputs)]
        if not types:
            fail(name, "needs at least one input")
        el = types[0].element_type
        for i, t in enumerate(types):
            if t.element_type != el:
                fail(
                    name,
                    f"input {i} has element type {t.element_type}, expected {el} "
                    "(all inputs must agree)",
                )
        shape = infer_shape(
            name, concatenate_output_shape, [shape_of(t) for t in types], self.axis
        )
        return tensor_type(el, shape)


OPERATOR_OPS: list[type[IRDLOperation]] = [
    Conv2DOp,
    DenseOp,
    AddOp,
    SubtractOp,
    MultiplyOp,
    MaximumOp,
    MinimumOp,
    RightShiftOp,
    ClipOp,
    ReluOp,
    MaxPool2DOp,
    AvgPool2DOp,
    GlobalAvgPool2DOp,
    MeanOp,
    SumOp,
    MaxOp,
    MinOp,
    ArgMaxOp,
    ArgMinOp,
    ReshapeOp,
    BroadcastToOp,
    TransposeOp,
    StridedSliceOp,
    PadOp,
    ConcatenateOp,
    SoftmaxOp,
    CastOp,
    FixedPointMultiplyOp,
    QuantizeOp,
    DequantizeOp,
    DivideOp,
    SigmoidOp,
    TanhOp,
    Conv2DTransposeOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
]
"""Every relay operator of docs/relay-ops.md, in the contract's order."""


def tensor_shape(t: Attribute) -> tuple[int, ...]:
    """Static shape of a tensor type."""
    return shape_of(tensor_of("relay", "value", t))


def is_view(op: Operation) -> bool:
    """Whether ``op`` moves no data: a ``relay.reshape`` or a contiguous
    ``relay.strided_slice`` (its result is its operand's storage, seen with
    another shape at an element offset). ``fuse-ops`` leaves a group of views
    alone in main, ``aot-lower-main`` aliases them."""
    if isinstance(op, StridedSliceOp):
        return op.contiguous_offset() is not None
    return isinstance(op, ReshapeOp)
