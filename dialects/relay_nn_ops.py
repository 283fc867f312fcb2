"""relay operators with windows or reductions: conv2d, dense, pooling, mean.

Registered through ``relay_ops.OPERATOR_OPS``; the shape rules are the plain
functions of ``relay_shapes`` (``conv2d_output_shape``, ``dense_output_shape``,
``pool2d_output_shape``, ``global_pool2d_output_shape``,
``reduce_output_shape``), shared with the oracle and ``lower-ops``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, TensorType, f32, i8, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)

from usmp.dialects.relay_base import (
    DATA_WEIGHT_FORMAT,
    I64,
    UNARY_FORMAT,
    Bool,
    I64Array,
    RelayOperator,
    bool_attr,
    fail,
    i64_array,
    i64_attr,
    infer_shape,
    int_range,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_shapes import (
    conv2d_output_shape,
    dense_output_shape,
    global_pool2d_output_shape,
    pool2d_output_shape,
    reduce_output_shape,
)


def accumulator_type(
    name: str, data: TensorType, weight: TensorType, input_zp: int, kernel_zp: int
) -> Attribute:
    """Element type of a conv2d/dense result: f32 x f32 -> f32, i8 x i8 -> i32."""
    pair = (data.element_type, weight.element_type)
    if pair == (f32, f32):
        if input_zp != 0 or kernel_zp != 0:
            fail(
                name,
                f"zero points ({input_zp}, {kernel_zp}) must be 0 for f32 operands",
            )
        return f32
    if pair == (i8, i8):
        lo, hi = int_range(i8)
        for what, zp in (
            ("input_zero_point", input_zp),
            ("kernel_zero_point", kernel_zp),
        ):
            if not lo <= zp <= hi:
                fail(name, f"{what} {zp} is out of range for i8 (expected {lo}..{hi})")
        return i32
    fail(
        name,
        f"operand element types ({pair[0]}, {pair[1]}) are not supported, "
        "expected (f32, f32) or (i8, i8)",
    )


@irdl_op_definition
class Conv2DOp(RelayOperator):
    """2-d convolution, grouped and depthwise included.

    Syntax::

        %r = relay.conv2d %x, %w {strides = array<i64: 2, 2>,
                                  padding = array<i64: 0, 0, 1, 1>,
                                  input_zero_point = -128 : i64}
               : (tensor<1x8x8x3xi8>, tensor<3x3x3x16xi8>) -> tensor<1x4x4x16xi32>

    Layouts NHWC + HWIO/OHWI or NCHW + OIHW; the weight holds Cin/groups input
    channels (depthwise: groups == Cin). ``padding`` is (top, left, bottom,
    right). f32 x f32 -> f32, or i8 x i8 -> i32 accumulating
    (x - input_zero_point) * (w - kernel_zero_point); padding contributes 0.
    """

    name = "relay.conv2d"

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = prop_def(I64Array, default_value=i64_array((1, 1)))
    padding = prop_def(I64Array, default_value=i64_array((0, 0, 0, 0)))
    dilation = prop_def(I64Array, default_value=i64_array((1, 1)))
    groups = prop_def(I64, default_value=i64_attr(1))
    data_layout = prop_def(StringAttr, default_value=StringAttr("NHWC"))
    kernel_layout = prop_def(StringAttr, default_value=StringAttr("HWIO"))
    input_zero_point = prop_def(I64, default_value=i64_attr(0))
    kernel_zero_point = prop_def(I64, default_value=i64_attr(0))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = DATA_WEIGHT_FORMAT

    def __init__(
        self,
        data: SSAValue,
        weight: SSAValue,
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
        data_layout: str = "NHWC",
        kernel_layout: str = "HWIO",
        input_zero_point: int = 0,
        kernel_zero_point: int = 0,
    ):
        super().__init__(
            operands=[data, weight],
            properties={
                "strides": i64_array(strides),
                "padding": i64_array(padding),
                "dilation": i64_array(dilation),
                "groups": i64_attr(groups),
                "data_layout": StringAttr(data_layout),
                "kernel_layout": StringAttr(kernel_layout),
                "input_zero_point": i64_attr(input_zero_point),
                "kernel_zero_point": i64_attr(kernel_zero_point),
            },
            result_types=[
                self.infer(
                    data.type,
                    weight.type,
                    strides=strides,
                    padding=padding,
                    dilation=dilation,
                    groups=groups,
                    data_layout=data_layout,
                    kernel_layout=kernel_layout,
                    input_zero_point=input_zero_point,
                    kernel_zero_point=kernel_zero_point,
                )
            ],
        )

    @classmethod
    def infer(
        cls,
        data: Attribute,
        weight: Attribute,
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
        data_layout: str = "NHWC",
        kernel_layout: str = "HWIO",
        input_zero_point: int = 0,
        kernel_zero_point: int = 0,
    ) -> TensorType:
        """The result type of a conv2d on these operand types and attributes."""
        dt = tensor_of(cls.name, "data", data)
        wt = tensor_of(cls.name, "weight", weight)
        el = accumulator_type(cls.name, dt, wt, input_zero_point, kernel_zero_point)
        shape = infer_shape(
            cls.name,
            conv2d_output_shape,
            shape_of(dt),
            shape_of(wt),
            strides=strides,
            padding=padding,
            dilation=dilation,
            groups=groups,
            data_layout=data_layout,
            kernel_layout=kernel_layout,
        )
        return TensorType(el, shape)

    def get_strides(self) -> tuple[int, ...]:
        return self._ints("strides")

    def get_padding(self) -> tuple[int, ...]:
        return self._ints("padding")

    def get_dilation(self) -> tuple[int, ...]:
        return self._ints("dilation")

    def get_groups(self) -> int:
        return self._int("groups")

    def get_data_layout(self) -> str:
        return self._str("data_layout")

    def get_kernel_layout(self) -> str:
        return self._str("kernel_layout")

    def get_input_zero_point(self) -> int:
        return self._int("input_zero_point")

    def get_kernel_zero_point(self) -> int:
        return self._int("kernel_zero_point")

    def infer_result_type(self) -> TensorType:
        return self.infer(
            self.data.type,
            self.weight.type,
            strides=self.get_strides(),
            padding=self.get_padding(),
            dilation=self.get_dilation(),
            groups=self.get_groups(),
            data_layout=self.get_data_layout(),
            kernel_layout=self.get_kernel_layout(),
            input_zero_point=self.get_input_zero_point(),
            kernel_zero_point=self.get_kernel_zero_point(),
        )


@irdl_op_definition
class DenseOp(RelayOperator):
    """Fully connected layer: data (B, K) x weight (N, K) -> (B, N).

    Syntax::

        %r = relay.dense %x, %w {input_zero_point = 3 : i64}
               : (tensor<1x64xi8>, tensor<10x64xi8>) -> tensor<1x10xi32>

    Element types and zero points as ``relay.conv2d``.
    """

    name = "relay.dense"

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = prop_def(I64, default_value=i64_attr(0))
    kernel_zero_point = prop_def(I64, default_value=i64_attr(0))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = DATA_WEIGHT_FORMAT

    def __init__(
        self,
        data: SSAValue,
        weight: SSAValue,
        *,
        input_zero_point: int = 0,
        kernel_zero_point: int = 0,
    ):
        super().__init__(
            operands=[data, weight],
            properties={
                "input_zero_point": i64_attr(input_zero_point),
                "kernel_zero_point": i64_attr(kernel_zero_point),
            },
            result_types=[
                self.infer(data.type, weight.type, input_zero_point, kernel_zero_point)
            ],
        )

    @classmethod
    def infer(
        cls,
        data: Attribute,
        weight: Attribute,
        input_zero_point: int = 0,
        kernel_zero_point: int = 0,
    ) -> TensorType:
        dt = tensor_of(cls.name, "data", data)
        wt = tensor_of(cls.name, "weight", weight)
        el = accumulator_type(cls.name, dt, wt, input_zero_point, kernel_zero_point)
        shape = infer_shape(cls.name, dense_output_shape, shape_of(dt), shape_of(wt))
        return TensorType(el, shape)

    def get_input_zero_point(self) -> int:
        return self._int("input_zero_point")

    def get_kernel_zero_point(self) -> int:
        return self._int("kernel_zero_point")

    def infer_result_type(self) -> TensorType:
        return self.infer(
            self.data.type,
            self.weight.type,
            self.get_input_zero_point(),
            self.get_kernel_zero_point(),
        )


class Pool2DOp(RelayOperator):
    """Base of ``relay.max_pool2d`` and ``relay.avg_pool2d``."""

    data = operand_def(TensorType)
    pool_size = prop_def(I64Array)
    strides = prop_def(I64Array, default_value=i64_array((1, 1)))
    padding = prop_def(I64Array, default_value=i64_array((0, 0, 0, 0)))
    layout = prop_def(StringAttr, default_value=StringAttr("NHWC"))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        data: SSAValue,
        pool_size: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        layout: str = "NHWC",
        **extra: Attribute,
    ):
        super().__init__(
            operands=[data],
            properties={
                "pool_size": i64_array(pool_size),
                "strides": i64_array(strides),
                "padding": i64_array(padding),
                "layout": StringAttr(layout),
                **extra,
            },
            result_types=[
                self.infer(
                    data.type,
                    pool_size,
                    strides=strides,
                    padding=padding,
                    layout=layout,
                )
            ],
        )

    @classmethod
    def infer(
        cls,
        data: Attribute,
        pool_size: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        layout: str = "NHWC",
    ) -> TensorType:
        t = tensor_of(cls.name, "operand", data)
        shape = infer_shape(
            cls.name,
            pool2d_output_shape,
            shape_of(t),
            pool_size,
            strides=strides,
            padding=padding,
            layout=layout,
        )
        return TensorType(t.element_type, shape)

    def get_pool_size(self) -> tuple[int, ...]:
        return self._ints("pool_size")

    def get_strides(self) -> tuple[int, ...]:
        return self._ints("strides")

    def get_padding(self) -> tuple[int, ...]:
        return self._ints("padding")

    def get_layout(self) -> str:
        return self._str("layout")

    def infer_result_type(self) -> TensorType:
        return self.infer(
            self.data.type,
            self.get_pool_size(),
            strides=self.get_strides(),
            padding=self.get_padding(),
            layout=self.get_layout(),
        )


@irdl_op_definition
class MaxPool2DOp(Pool2DOp):
    """2-d max pooling; padded positions are ignored.

    Syntax::

        %r = relay.max_pool2d %x {pool_size = array<i64: 2, 2>,
                                  strides = array<i64: 2, 2>}
               : tensor<1x8x8x4xi8> -> tensor<1x4x4x4xi8>
    """

    name = "relay.max_pool2d"


@irdl_op_definition
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

    count_include_pad = prop_def(Bool, default_value=bool_attr(False))

    def __init__(
        self,
        data: SSAValue,
        pool_size: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0, 0, 0),
        layout: str = "NHWC",
        count_include_pad: bool = False,
    ):
        super().__init__(
            data,
            pool_size,
            strides=strides,
            padding=padding,
            layout=layout,
            count_include_pad=bool_attr(count_include_pad),
        )

    def get_count_include_pad(self) -> bool:
        return self._bool("count_include_pad")


@irdl_op_definition
class GlobalAvgPool2DOp(RelayOperator):
    """Mean over H and W: (N, H, W, C) -> (N, 1, 1, C) in NHWC.

    Syntax::

        %r = relay.global_avg_pool2d %x : tensor<1x4x4x8xi8> -> tensor<1x1x1x8xi8>
    """

    name = "relay.global_avg_pool2d"

    data = operand_def(TensorType)
    layout = prop_def(StringAttr, default_value=StringAttr("NHWC"))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, layout: str = "NHWC"):
        super().__init__(
            operands=[data],
            properties={"layout": StringAttr(layout)},
            result_types=[self.infer(data.type, layout)],
        )

    @classmethod
    def infer(cls, data: Attribute, layout: str = "NHWC") -> TensorType:
        t = tensor_of(cls.name, "operand", data)
        shape = infer_shape(cls.name, global_pool2d_output_shape, shape_of(t), layout)
        return TensorType(t.element_type, shape)

    def get_layout(self) -> str:
        return self._str("layout")

    def infer_result_type(self) -> TensorType:
        return self.infer(self.data.type, self.get_layout())


@irdl_op_definition
class MeanOp(RelayOperator):
    """Mean over ``axis`` (negative axes allowed), dropping them unless ``keepdims``.

    Syntax::

        %r = relay.mean %x {axis = array<i64: 1, 2>, keepdims = true}
               : tensor<1x4x4x8xf32> -> tensor<1x1x1x8xf32>

    Integers: i32 accumulation, division rounding half away from zero.
    """

    name = "relay.mean"

    data = operand_def(TensorType)
    axis = prop_def(I64Array)
    keepdims = prop_def(Bool, default_value=bool_attr(False))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, axis: Sequence[int], keepdims: bool = False):
        super().__init__(
            operands=[data],
            properties={"axis": i64_array(axis), "keepdims": bool_attr(keepdims)},
            result_types=[self.infer(data.type, axis, keepdims)],
        )

    @classmethod
    def infer(
        cls, data: Attribute, axis: Sequence[int], keepdims: bool = False
    ) -> TensorType:
        t = tensor_of(cls.name, "operand", data)
        shape = infer_shape(cls.name, reduce_output_shape, shape_of(t), axis, keepdims)
        return TensorType(t.element_type, shape)

    def get_axis(self) -> tuple[int, ...]:
        return self._ints("axis")

    def get_keepdims(self) -> bool:
        return self._bool("keepdims")

    def infer_result_type(self) -> TensorType:
        return self.infer(self.data.type, self.get_axis(), self.get_keepdims())
