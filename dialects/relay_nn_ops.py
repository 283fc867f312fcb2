"""relay operators with windows or reductions: conv2d, conv2d_transpose, dense,
pooling, mean.

Registered through ``relay_ops.OPERATOR_OPS``; the shape rules are the plain
functions of ``relay_shapes`` (``conv2d_output_shape``, ``dense_output_shape``,
``pool2d_output_shape``, ``global_pool2d_output_shape``,
``reduce_output_shape``), shared with the oracle and ``lower-ops``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, f32, i8, i16, i32, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition, operand_def, traits_def
from xdsl.utils.str_enum import StrEnum

from usmp.dialects.relay_base import (
    DATA_WEIGHT_FORMAT,
    UNARY_FORMAT,
    RelayOperator,
    fail,
    infer_shape,
    int_range,
    shape_of,
    tensor_of,
    tensor_type,
)
from usmp.dialects.relay_fusion import Fusion, OpPattern, RelayOnly
from usmp.dialects.relay_props import (
    bool_prop,
    enum_prop,
    int_prop,
    ints_prop,
    relay_op_definition,
)
from usmp.dialects.relay_shapes import (
    conv2d_output_shape,
    conv2d_transpose_output_shape,
    dense_output_shape,
    global_pool2d_output_shape,
    pool2d_output_shape,
    reduce_output_shape,
)


class DataLayout(StrEnum):
    """Order of an activation's dimensions (batch, height, width, channels)."""

    NHWC = "NHWC"
    NCHW = "NCHW"


class KernelLayout(StrEnum):
    """Order of a convolution weight's dimensions (height, width, input and
    output channels); which pairs with which data layout: ``CONV2D_LAYOUTS``."""

    HWIO = "HWIO"
    OHWI = "OHWI"
    OIHW = "OIHW"


@irdl_attr_definition
class DataLayoutAttr(EnumAttribute[DataLayout], SpacedOpaqueSyntaxAttribute):
    """``#relay<data_layout NCHW>``"""

    name = "relay.data_layout"


@irdl_attr_definition
class KernelLayoutAttr(EnumAttribute[KernelLayout], SpacedOpaqueSyntaxAttribute):
    """``#relay<kernel_layout OIHW>``"""

    name = "relay.kernel_layout"


LAYOUT_ATTRS = (DataLayoutAttr, KernelLayoutAttr)
"""The layout enum attributes (registered by ``relay.py``)."""


class AccumulatingOp(RelayOperator):
    """Base of ``relay.conv2d`` and ``relay.dense``: sums of products of
    ``data`` and ``weight`` elements, ``(x - input_zero_point) * (w -
    kernel_zero_point)`` for i8 operands; i16 data with i8 weights (TFLite's
    "16x8" quantisation, symmetric: zero points 0) accumulate in i64."""

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = int_prop(default=0)
    kernel_zero_point = int_prop(default=0)

    assembly_format = DATA_WEIGHT_FORMAT

    def accumulation_types(self) -> tuple[TensorType, TensorType, Attribute]:
        """(data, weight, accumulator element type): f32 x f32 -> f32 and
        i16 x i8 -> i64 with zero points 0, i8 x i8 -> i32 with zero points
        in i8's range."""
        name = self.name
        data = tensor_of(name, "data", self.data)
        weight = tensor_of(name, "weight", self.weight)
        input_zp, kernel_zp = self.input_zero_point, self.kernel_zero_point
        pair = (data.element_type, weight.element_type)
        if pair in ((f32, f32), (i16, i8)):
            if input_zp != 0 or kernel_zp != 0:
                fail(
                    name,
                    f"zero points ({input_zp}, {kernel_zp}) must be 0 for "
                    f"({pair[0]}, {pair[1]}) operands",
                )
            return data, weight, f32 if pair[0] == f32 else i64
        if pair == (i8, i8):
            lo, hi = int_range(i8)
            for what, zp in (
                ("input_zero_point", input_zp),
                ("kernel_zero_point", kernel_zp),
            ):
                if not lo <= zp <= hi:
                    fail(
                        name,
                        f"{what} {zp} is out of range for i8 (expected {lo}..{hi})",
                    )
            return data, weight, i32
        fail(
            name,
            f"operand element types ({pair[0]}, {pair[1]}) are not supported, "
            "expected (f32, f32), (i8, i8) or (i16, i8)",
        )


@relay_op_definition
class Conv2DOp(AccumulatingOp):
    """2-d convolution, grouped and depthwise included.

    Syntax::

        %r = relay.conv2d %x, %w {strides = array<i64: 2, 2>,
                                  padding = array<i64: 0, 0, 1, 1>,
                                  input_zero_point = -128 : i64}
               : (tensor<1x8x8x3xi8>, tensor<3x3x3x16xi8>) -> tensor<1x4x4x16xi32>

    Layouts NHWC + HWIO/OHWI or NCHW + OIHW; the weight holds Cin/groups input
    channels (depthwise: groups == Cin). ``padding`` is (top, left, bottom,
    right). f32 x f32 -> f32, i8 x i8 -> i32 accumulating
    (x - input_zero_point) * (w - kernel_zero_point), or i16 x i8 -> i64
    (zero points 0); padding contributes 0.
    """

    name = "relay.conv2d"

    traits = traits_def(Fusion(OpPattern.OUT_ELEMWISE_FUSABLE, "nn.conv2d"))

    strides = ints_prop(default=(1, 1))
    padding = ints_prop(default=(0, 0, 0, 0))
    dilation = ints_prop(default=(1, 1))
    groups = int_prop(default=1)
    data_layout = enum_prop(DataLayoutAttr, default=DataLayout.NHWC)
    kernel_layout = enum_prop(KernelLayoutAttr, default=KernelLayout.HWIO)

    def __init__(
        self,
        data: SSAValue,
        weight: SSAValue,
        *,
        strides: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        dilation: Sequence[int] | None = None,
        groups: int | None = None,
        data_layout: str | None = None,
        kernel_layout: str | None = None,
        input_zero_point: int | None = None,
        kernel_zero_point: int | None = None,
    ):
        """Properties left ``None`` take their declared default."""
        self._build(
            [data, weight],
            strides=strides,
            padding=padding,
            dilation=dilation,
            groups=groups,
            data_layout=data_layout,
            kernel_layout=kernel_layout,
            input_zero_point=input_zero_point,
            kernel_zero_point=kernel_zero_point,
        )

    def infer_result_type(self) -> TensorType:
        dt, wt, el = self.accumulation_types()
        shape = infer_shape(
            self.name,
            conv2d_output_shape,
            shape_of(dt),
            shape_of(wt),
            strides=self.strides,
            padding=self.padding,
            dilation=self.dilation,
            groups=self.groups,
            data_layout=self.data_layout,
            kernel_layout=self.kernel_layout,
        )
        return tensor_type(el, shape)


@relay_op_definition
class Conv2DTransposeOp(AccumulatingOp):
    """2-d transposed convolution (TFLite's TRANSPOSE_CONV), NHWC data and
    OHWI weight.

    Syntax::

        %r = relay.conv2d_transpose %x, %w {strides = array<i64: 2, 2>,
                                            padding = array<i64: 1, 1, 0, 0>}
               : (tensor<1x4x4x8xi8>, tensor<3x3x3x8xi8>) -> tensor<1x8x8x3xi32>

    Each input element ``x[n, iy, ix, c]`` spreads over the output window at
    ``(iy * sh - top, ix * sw - left)``; an output element sums, for every
    input position whose window covers it, in ascending ``(iy, ix, c)``::

        out[n, oy, ox, o] = sum (x[n, iy, ix, c] - input_zero_point)
                                * (w[o, oy + top - iy*sh, ox + left - ix*sw, c]
                                   - kernel_zero_point)

    ``padding`` (top, left, bottom, right) crops the full
    ``(in - 1) * stride + K`` output, ``output_padding`` (h, w) extends it at
    the bottom / right (elements no input reaches: 0). Element types as
    ``relay.conv2d``.
    """

    name = "relay.conv2d_transpose"

    traits = traits_def(Fusion(OpPattern.OUT_ELEMWISE_FUSABLE, "nn.conv2d_transpose"))

    strides = ints_prop(default=(1, 1))
    padding = ints_prop(default=(0, 0, 0, 0))
    output_padding = ints_prop(default=(0, 0))

    def __init__(
        self,
        data: SSAValue,
        weight: SSAValue,
        *,
        strides: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        output_padding: Sequence[int] | None = None,
        input_zero_point: int | None = None,
        kernel_zero_point: int | None = None,
    ):
        """Properties left ``None`` take their declared default."""
        self._build(
            [data, weight],
            strides=strides,
            padding=padding,
            output_padding=output_padding,
            input_zero_point=input_zero_point,
            kernel_zero_point=kernel_zero_point,
        )

    def infer_result_type(self) -> TensorType:
        dt, wt, el = self.accumulation_types()
        shape = infer_shape(
            self.name,
            conv2d_transpose_output_shape,
            shape_of(dt),
            shape_of(wt),
            strides=self.strides,
            padding=self.padding,
            output_padding=self.output_padding,
        )
        return tensor_type(el, shape)


@relay_op_definition
class DenseOp(AccumulatingOp):
    """Fully connected layer: data (B, K) x weight (N, K) -> (B, N).

    Syntax::

        %r = relay.dense %x, %w {input_zero_point = 3 : i64}
               : (tensor<1x64xi8>, tensor<10x64xi8>) -> tensor<1x10xi32>

    Element types and zero points as ``relay.conv2d``.
    """

    name = "relay.dense"

    traits = traits_def(Fusion(OpPattern.OUT_ELEMWISE_FUSABLE, "nn.dense"))

    def __init__(
        self,
        data: SSAValue,
        weight: SSAValue,
        *,
        input_zero_point: int | None = None,
        kernel_zero_point: int | None = None,
    ):
        self._build(
            [data, weight],
            input_zero_point=input_zero_point,
            kernel_zero_point=kernel_zero_point,
        )

    def infer_result_type(self) -> TensorType:
        dt, wt, el = self.accumulation_types()
        shape = infer_shape(self.name, dense_output_shape, shape_of(dt), shape_of(wt))
        return tensor_type(el, shape)


class Pool2DOp(RelayOperator):
    """Base of ``relay.max_pool2d`` and ``relay.avg_pool2d``."""

    data = operand_def(TensorType)
    pool_size = ints_prop()
    strides = ints_prop(default=(1, 1))
    padding = ints_prop(default=(0, 0, 0, 0))
    layout = enum_prop(DataLayoutAttr, default=DataLayout.NHWC)

    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        data: SSAValue,
        pool_size: Sequence[int],
        *,
        strides: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        layout: str | None = None,
        count_include_pad: bool | None = None,
    ):
        """``count_include_pad``: ``relay.avg_pool2d`` only."""
        self._build(
            [data],
            pool_size=pool_size,
            strides=strides,
            padding=padding,
            layout=layout,
            count_include_pad=count_include_pad,
        )

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        shape = infer_shape(
            self.name,
            pool2d_output_shape,
            shape_of(t),
            self.pool_size,
            strides=self.strides,
            padding=self.padding,
            layout=self.layout,
        )
        return tensor_type(t.element_type, shape)


@relay_op_definition
class MaxPool2DOp(Pool2DOp):
    """2-d max pooling; padded positions are ignored.

    Syntax::

        %r = relay.max_pool2d %x {pool_size = array<i64: 2, 2>,
                                  strides = array<i64: 2, 2>}
               : tensor<1x8x8x4xi8> -> tensor<1x4x4x4xi8>
    """

    name = "relay.max_pool2d"

    traits = traits_def(Fusion(OpPattern.OUT_ELEMWISE_FUSABLE, "nn.max_pool2d"))


@relay_op_definition
class AvgPool2DOp(Pool2DOp):
    """2-d average pooling (attributes of max_pool2d + ``count_include_pad``).

    Syntax::

        %r = relay.avg_pool2d %x {pool_size = array<i64: 3, 3>,
                                  padding = array<i64: 1, 1, 1, 1>,
                                  count_include_pad = true}
               : tensor<1x8x8x4xf32> -> tensor<1x8x8x4xf32>

    f32: mean; integers accumulate in i32 and divide rounding half away from
    zero (TFLite).
    """

    name = "relay.avg_pool2d"

    traits = traits_def(Fusion(OpPattern.OUT_ELEMWISE_FUSABLE, "nn.avg_pool2d"))

    count_include_pad = bool_prop(default=False)


@relay_op_definition
class GlobalAvgPool2DOp(RelayOperator):
    """Mean over H and W: (N, H, W, C) -> (N, 1, 1, C) in NHWC.

    Syntax::

        %r = relay.global_avg_pool2d %x : tensor<1x4x4x8xi8> -> tensor<1x1x1x8xi8>
    """

    name = "relay.global_avg_pool2d"

    traits = traits_def(
        Fusion(OpPattern.OUT_ELEMWISE_FUSABLE, "nn.global_avg_pool2d"), RelayOnly()
    )

    data = operand_def(TensorType)
    layout = enum_prop(DataLayoutAttr, default=DataLayout.NHWC)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, layout: str | None = None):
        self._build([data], layout=layout)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        shape = infer_shape(
            self.name, global_pool2d_output_shape, shape_of(t), self.layout
        )
        return tensor_type(t.element_type, shape)


class ReduceOp(RelayOperator):
    """Base of the reductions over ``axis`` (negative axes allowed), which
    drop the reduced axes unless ``keepdims``; the result has the operand's
    element type.

    Syntax::

        %r = relay.sum %x {axis = array<i64: 1, 2>, keepdims = true}
               : tensor<1x4x4x8xi32> -> tensor<1x1x1x8xi32>
    """

    data = operand_def(TensorType)
    axis = ints_prop()
    keepdims = bool_prop(default=False)

    assembly_format = UNARY_FORMAT

    def __init__(
        self, data: SSAValue, axis: Sequence[int], keepdims: bool | None = None
    ):
        self._build([data], axis=axis, keepdims=keepdims)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        shape = infer_shape(
            self.name, reduce_output_shape, shape_of(t), self.axis, self.keepdims
        )
        return tensor_type(t.element_type, shape)


@relay_op_definition
class MeanOp(ReduceOp):
    """Mean over ``axis`` (see ``ReduceOp``).

    Integers: i32 accumulation, division rounding half away from zero.
    """

    name = "relay.mean"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "mean"))


@relay_op_definition
class SumOp(ReduceOp):
    """Sum over ``axis`` (see ``ReduceOp``) in the operand's element type
    (integers wrap), as TVM's ``sum``: an int8 sum casts to i32 first."""

    name = "relay.sum"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "sum"))


@relay_op_definition
class MaxOp(ReduceOp):
    """Largest element over ``axis`` (see ``ReduceOp``)."""

    name = "relay.max"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "max"))


@relay_op_definition
class MinOp(ReduceOp):
    """Smallest element over ``axis`` (see ``ReduceOp``)."""

    name = "relay.min"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "min"))


class ArgReduceOp(RelayOperator):
    """Base of ``argmax``/``argmin``: the index along ``axis`` (may be
    negative) of the first extreme element; the axis is dropped and the
    result type (i32) is given.

    Syntax::

        %r = relay.argmax %x {axis = 1 : i64} : tensor<2x5xi8> -> tensor<2xi32>
    """

    data = operand_def(TensorType)
    axis = int_prop()

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, axis: int, element_type: Attribute):
        t = tensor_of(self.name, "operand", data)
        shape = infer_shape(self.name, _drop_axis, shape_of(t), axis)
        self._build([data], tensor_type(element_type, shape), axis=axis)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        el = tensor_of(self.name, "result", self.result.type).element_type
        if el != i32:
            fail(
                self.name,
                f"result element type {el} is not supported, expected i32",
            )
        return tensor_type(
            el, infer_shape(self.name, _drop_axis, shape_of(t), self.axis)
        )


def _drop_axis(shape: Sequence[int], axis: int) -> tuple[int, ...]:
    return reduce_output_shape(shape, (axis,), False)


@relay_op_definition
class ArgMaxOp(ArgReduceOp):
    """Index of the first largest element along ``axis`` (see ``ArgReduceOp``)."""

    name = "relay.argmax"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "argmax"))


@relay_op_definition
class ArgMinOp(ArgReduceOp):
    """Index of the first smallest element along ``axis`` (see ``ArgReduceOp``)."""

    name = "relay.argmin"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "argmin"))
