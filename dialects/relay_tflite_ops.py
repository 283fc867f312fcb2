"""relay operators the contract lacks, needed to import TFLite models bit-exactly.

``EXTRA_OPS`` is meant to be registered in the ``relay`` dialect next to
``relay_ops.OPERATOR_OPS``. Each op is TFLite Micro's reference kernel, with
every parameter TFLite computes in ``Prepare`` precomputed by the importer
(``usmp.frontend.quantization``), so the op itself is pure integer
arithmetic; the numpy oracle is ``usmp.oracle.tflite_kernels``.

* ``relay.quantized_softmax``: int8 SOFTMAX (``reference_ops::Softmax`` for
  int8 in/out: gemmlowp fixed point, Q5.26 input differences, Q12.19 sum of
  exponentials, ``one_over_one_plus_x_for_x_in_0_1`` reciprocal). The output
  is quantised with scale 1/256 and zero point -128, as TFLite requires.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, i8
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)

from usmp.dialects.relay_base import (
    I64,
    RelayOperator,
    fail,
    i64_attr,
    infer_shape,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_shapes import normalize_axis

SOFTMAX_OUTPUT_SCALE = 1.0 / 256.0
SOFTMAX_OUTPUT_ZERO_POINT = -128


@irdl_op_definition
class QuantizedSoftmaxOp(RelayOperator):
    """TFLite int8 softmax along the last axis, bit-exact with TFLite Micro.

    Syntax::

        %r = relay.quantized_softmax %x {input_multiplier = 1288490189 : i64,
                                         input_left_shift = 23 : i64,
                                         diff_min = -248 : i64}
               : tensor<1x12xi8> -> tensor<1x12xi8>

    For each row: ``diff = x - max(row)``; entries with ``diff >= diff_min``
    contribute ``exp(diff * input_multiplier * 2**(input_left_shift - 31))``
    (``MultiplyByQuantizedMultiplierGreaterThanOne`` into Q5.26, then
    gemmlowp's ``exp_on_negative_values``); the output is
    ``exp / sum * 256 - 128`` in TFLite's fixed-point rounding, saturated to
    i8; entries below ``diff_min`` give -128. ``input_multiplier`` /
    ``input_left_shift`` / ``diff_min`` are TFLite's ``SoftmaxParams``
    (``PreprocessSoftmaxScaling(beta, input_scale, 5)`` and
    ``-CalculateInputRadius(5, input_left_shift)``). ``axis`` must denote the
    last dimension.
    """

    name = "relay.quantized_softmax"

    data = operand_def(TensorType)
    input_multiplier = prop_def(I64)
    input_left_shift = prop_def(I64)
    diff_min = prop_def(I64)
    axis = prop_def(I64, default_value=i64_attr(-1))
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$data attr-dict `:` type($data) `->` type($result)"

    def __init__(
        self,
        data: SSAValue,
        input_multiplier: int,
        input_left_shift: int,
        diff_min: int,
        axis: int = -1,
    ):
        super().__init__(
            operands=[data],
            properties={
                "input_multiplier": i64_attr(input_multiplier),
                "input_left_shift": i64_attr(input_left_shift),
                "diff_min": i64_attr(diff_min),
                "axis": i64_attr(axis),
            },
            result_types=[data.type],
        )

    def get_input_multiplier(self) -> int:
        return self._int("input_multiplier")

    def get_input_left_shift(self) -> int:
        return self._int("input_left_shift")

    def get_diff_min(self) -> int:
        return self._int("diff_min")

    def get_axis(self) -> int:
        return self._int("axis")

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        if t.element_type != i8:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected i8",
            )
        rank = len(shape_of(t))
        if rank == 0:
            fail(self.name, "operand must have rank >= 1")
        axis = infer_shape(self.name, normalize_axis, self.get_axis(), rank)
        if axis != rank - 1:
            fail(self.name, f"axis {self.get_axis()} is not the last axis ({rank - 1})")
        multiplier = self.get_input_multiplier()
        if not 0 < multiplier < 1 << 31:
            fail(
                self.name,
                f"input_multiplier {multiplier} is out of range, expected 1..2^31-1",
            )
        shift = self.get_input_left_shift()
        if not 0 <= shift <= 31:
            fail(self.name, f"input_left_shift {shift} is out of range, expected 0..31")
        if self.get_diff_min() > 0:
            fail(self.name, f"diff_min {self.get_diff_min()} must be <= 0")
        return t


EXTRA_OPS: list[type[IRDLOperation]] = [QuantizedSoftmaxOp]
"""relay operators beyond docs/relay-ops.md, for the TFLite importer."""
