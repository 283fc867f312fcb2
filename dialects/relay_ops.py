"""Operators of the ``relay`` dialect (registered by ``relay.py``).

The contract is ``docs/relay-ops.md``. This module holds the elementwise and
data-movement operators and ``OPERATOR_OPS``, the list of every operator
(``relay_nn_ops.py``: conv2d, dense, pooling, mean; ``relay_quant_ops.py``:
fixed_point_multiply, quantize, dequantize). All operator classes are
re-exported here, so ``from usmp.dialects.relay_ops import Conv2DOp`` works.

Each operator is one ``@irdl_op_definition`` class whose properties print in
the attribute dictionary (defaults elided), a verifier that recomputes the
result type (``relay_base.RelayOperator``) and an ``__init__`` that infers the
result type from the operands and Python-valued attributes.
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
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)

from usmp.dialects.relay_base import (
    F64,
    I64,
    UNARY_FORMAT,
    I64Array,
    RelayOperator,
    f64_attr,
    fail,
    i64_array,
    i64_attr,
    infer_shape,
    int_range,
    is_int,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_nn_ops import (
    AvgPool2DOp,
    Conv2DOp,
    DenseOp,
    GlobalAvgPool2DOp,
    MaxPool2DOp,
    MeanOp,
)
from usmp.dialects.relay_quant_ops import DequantizeOp, FixedPointMultiplyOp, QuantizeOp
from usmp.dialects.relay_shapes import (
    broadcast_shapes,
    concatenate_output_shape,
    normalize_axis,
    pad_output_shape,
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
    result = result_def(TensorType)

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` "
        "`->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[self.infer(lhs.type, rhs.type)],
        )

    @classmethod
    def check_element_type(cls, element_type: Attribute) -> None:
        """Hook for operators restricted to some element types."""

    @classmethod
    def infer(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        name = cls.name
        lt = tensor_of(name, "lhs", lhs)
        rt = tensor_of(name, "rhs", rhs)
        if lt.element_type != rt.element_type:
            fail(
                name,
                f"operand element types differ ({lt.element_type} vs "
                f"{rt.element_type}); insert a relay.cast",
            )
        cls.check_element_type(lt.element_type)
        shape = broadcast_shapes(shape_of(lt), shape_of(rt))
        if shape is None:
            fail(
                name,
                f"shapes {list(shape_of(lt))} and {list(shape_of(rt))} "
                "do not broadcast",
            )
        return TensorType(lt.element_type, shape)

    def infer_result_type(self) -> TensorType:
        return self.infer(self.lhs.type, self.rhs.type)


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """Elementwise ``lhs + rhs`` with numpy broadcasting (integers wrap)."""

    name = "relay.add"


@irdl_op_definition
class SubtractOp(BinaryElementwiseOp):
    """Elementwise ``lhs - rhs`` with numpy broadcasting (integers wrap)."""

    name = "relay.subtract"


@irdl_op_definition
class MultiplyOp(BinaryElementwiseOp):
    """Elementwise ``lhs * rhs`` with numpy broadcasting (integers wrap)."""

    name = "relay.multiply"


@irdl_op_definition
class MaximumOp(BinaryElementwiseOp):
    """Elementwise maximum with numpy broadcasting."""

    name = "relay.maximum"


@irdl_op_definition
class MinimumOp(BinaryElementwiseOp):
    """Elementwise minimum with numpy broadcasting."""

    name = "relay.minimum"


@irdl_op_definition
class RightShiftOp(BinaryElementwiseOp):
    """Elementwise arithmetic ``lhs >> rhs``; integer element types only."""

    name = "relay.right_shift"

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


class UnarySameTypeOp(RelayOperator):
    """Base of the operators whose result type is the operand's."""

    data = operand_def(TensorType)
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def infer_result_type(self) -> TensorType:
        return tensor_of(self.name, "operand", self.data)


@irdl_op_definition
class ClipOp(UnarySameTypeOp):
    """Clamp to ``[a_min, a_max]``; the result type is the operand's.

    Syntax::

        %r = relay.clip %x {a_min = -128.0 : f64, a_max = 127.0 : f64}
               : tensor<4xi32> -> tensor<4xi32>
    """

    name = "relay.clip"

    a_min = prop_def(F64)
    a_max = prop_def(F64)

    def __init__(self, data: SSAValue, a_min: float, a_max: float):
        super().__init__(
            operands=[data],
            properties={"a_min": f64_attr(a_min), "a_max": f64_attr(a_max)},
            result_types=[data.type],
        )

    def get_a_min(self) -> float:
        return self._float("a_min")

    def get_a_max(self) -> float:
        return self._float("a_max")

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        lo, hi = self.get_a_min(), self.get_a_max()
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


@irdl_op_definition
class ReluOp(UnarySameTypeOp):
    """``max(x, 0)``: ``%r = relay.relu %x : tensor<4xf32> -> tensor<4xf32>``."""

    name = "relay.relu"

    def __init__(self, data: SSAValue):
        super().__init__(operands=[data], result_types=[data.type])


@irdl_op_definition
class SoftmaxOp(UnarySameTypeOp):
    """Softmax along ``axis`` (default -1); ``f32`` only.

    Syntax::

        %r = relay.softmax %x {axis = 1 : i64} : tensor<1x10xf32> -> tensor<1x10xf32>
    """

    name = "relay.softmax"

    axis = prop_def(I64, default_value=i64_attr(-1))

    def __init__(self, data: SSAValue, axis: int = -1):
        super().__init__(
            operands=[data],
            properties={"axis": i64_attr(axis)},
            result_types=[data.type],
        )

    def get_axis(self) -> int:
        return self._int("axis")

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        if t.element_type != f32:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected f32",
            )
        infer_shape(self.name, normalize_axis, self.get_axis(), len(shape_of(t)))
        return t


@irdl_op_definition
class ReshapeOp(RelayOperator):
    """Reshape: same elements, new static shape given by the result type.

    Syntax::

        %r = relay.reshape %x : tensor<1x1x1x64xi8> -> tensor<1x64xi8>
    """

    name = "relay.reshape"

    data = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, shape: Sequence[int]):
        t = tensor_of(self.name, "operand", data)
        super().__init__(
            operands=[data], result_types=[TensorType(t.element_type, shape)]
        )

    def verify_(self) -> None:
        src = tensor_of(self.name, "operand", self.data)
        dst = tensor_of(self.name, "result", self.result.type)
        if src.element_type != dst.element_type:
            fail(
                self.name,
                f"element type changes from {src.element_type} to "
                f"{dst.element_type}; use relay.cast",
            )
        if src.element_count() != dst.element_count():
            fail(
                self.name,
                f"{src} has {src.element_count()} elements but {dst} has "
                f"{dst.element_count()}",
            )


@irdl_op_definition
class CastOp(RelayOperator):
    """Convert the element type; the shape is unchanged.

    Syntax::

        %r = relay.cast %x : tensor<1x8xi32> -> tensor<1x8xi8>

    int->int wraps (truncates to the width), int->float is exact, float->int
    rounds toward zero.
    """

    name = "relay.cast"

    data = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, element_type: Attribute):
        t = tensor_of(self.name, "operand", data)
        super().__init__(
            operands=[data], result_types=[TensorType(element_type, t.get_shape())]
        )

    def verify_(self) -> None:
        src = tensor_of(self.name, "operand", self.data)
        dst = tensor_of(self.name, "result", self.result.type)
        expected = TensorType(dst.element_type, src.get_shape())
        if dst != expected:
            fail(self.name, f"result type {dst} is wrong, expected {expected}")


@irdl_op_definition
class TransposeOp(RelayOperator):
    """Permute dimensions (numpy ``transpose(x, axes)``).

    Syntax::

        %r = relay.transpose %x {axes = array<i64: 0, 3, 1, 2>}
               : tensor<1x4x4x8xf32> -> tensor<1x8x4x4xf32>
    """

    name = "relay.transpose"

    data = operand_def(TensorType)
    axes = prop_def(I64Array)
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, axes: Sequence[int]):
        super().__init__(
            operands=[data],
            properties={"axes": i64_array(axes)},
            result_types=[self.infer(data.type, axes)],
        )

    @classmethod
    def infer(cls, data: Attribute, axes: Sequence[int]) -> TensorType:
        t = tensor_of(cls.name, "operand", data)
        shape = infer_shape(cls.name, transpose_output_shape, shape_of(t), axes)
        return TensorType(t.element_type, shape)

    def get_axes(self) -> tuple[int, ...]:
        return self._ints("axes")

    def infer_result_type(self) -> TensorType:
        return self.infer(self.data.type, self.get_axes())


@irdl_op_definition
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

    data = operand_def(TensorType)
    pad_width = prop_def(I64Array)
    pad_value = prop_def(F64, default_value=f64_attr(0.0))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(
        self, data: SSAValue, pad_width: Sequence[int], pad_value: float = 0.0
    ):
        super().__init__(
            operands=[data],
            properties={
                "pad_width": i64_array(pad_width),
                "pad_value": f64_attr(pad_value),
            },
            result_types=[self.infer(data.type, pad_width, pad_value)],
        )

    @classmethod
    def infer(
        cls, data: Attribute, pad_width: Sequence[int], pad_value: float
    ) -> TensorType:
        t = tensor_of(cls.name, "operand", data)
        el = t.element_type
        if isinstance(el, IntegerType):
            lo, hi = int_range(el)
            if pad_value != int(pad_value) or not lo <= pad_value <= hi:
                fail(
                    cls.name,
                    f"pad_value {pad_value} is not representable in {el} "
                    f"(expected an integer in {lo}..{hi})",
                )
        shape = infer_shape(cls.name, pad_output_shape, shape_of(t), pad_width)
        return TensorType(el, shape)

    def get_pad_width(self) -> tuple[int, ...]:
        return self._ints("pad_width")

    def get_pad_value(self) -> float:
        return self._float("pad_value")

    def infer_result_type(self) -> TensorType:
        return self.infer(self.data.type, self.get_pad_width(), self.get_pad_value())


@irdl_op_definition
class ConcatenateOp(RelayOperator):
    """Join tensors along ``axis`` (may be negative), numpy ``concatenate``.

    Syntax::

        %r = relay.concatenate %a, %b {axis = -1 : i64}
               : (tensor<1x2xi8>, tensor<1x3xi8>) -> tensor<1x5xi8>
    """

    name = "relay.concatenate"

    inputs = var_operand_def(TensorType)
    axis = prop_def(I64)
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        super().__init__(
            operands=[inputs],
            properties={"axis": i64_attr(axis)},
            result_types=[self.infer([v.type for v in inputs], axis)],
        )

    @classmethod
    def infer(cls, inputs: Sequence[Attribute], axis: int) -> TensorType:
        types = [tensor_of(cls.name, f"input {i}", t) for i, t in enumerate(inputs)]
        if not types:
            fail(cls.name, "needs at least one input")
        el = types[0].element_type
        for i, t in enumerate(types):
            if t.element_type != el:
                fail(
                    cls.name,
                    f"input {i} has element type {t.element_type}, expected {el} "
                    "(all inputs must agree)",
                )
        shape = infer_shape(
            cls.name, concatenate_output_shape, [shape_of(t) for t in types], axis
        )
        return TensorType(el, shape)

    def get_axis(self) -> int:
        return self._int("axis")

    def infer_result_type(self) -> TensorType:
        return self.infer([v.type for v in self.inputs], self.get_axis())


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
    ReshapeOp,
    TransposeOp,
    PadOp,
    ConcatenateOp,
    SoftmaxOp,
    CastOp,
    FixedPointMultiplyOp,
    QuantizeOp,
    DequantizeOp,
]
"""Every relay operator of docs/relay-ops.md, in the contract's order."""


def tensor_shape(t: Attribute) -> tuple[int, ...]:
    """Static shape of a tensor type."""
    return shape_of(tensor_of("relay", "value", t))
