"""relay operators the contract lacks, needed to import TFLite models bit-exactly.

``EXTRA_OPS`` is meant to be registered in the ``relay`` dialect next to
``relay_ops.OPERATOR_OPS``. Each op is TFLite Micro's reference kernel, with
every parameter TFLite computes in ``Prepare`` precomputed by the importer
(``usmp.frontend.quantization``), so the op itself is pure integer
arithmetic; the numpy oracle is ``usmp.oracle.tflite_kernels``.

* ``relay.quantized_softmax``: int8 SOFTMAX (``reference_ops::Softmax`` for
  int8 in/out: gemmlowp fixed point, Q5.26 input differences, Q12.19 sum of
  exponentials, ``one_over_one_plus_x_for_x_in_0_1`` reciprocal). The output
  is quantised with scale 1/256 and zero point -128, as TFLite requires;
  with ``output_bits = 16`` the output is int16 with scale 1/65536 and zero
  point -32768 (TFLM's int8 -> int16 softmax, ``Softmax<int8_t, int16_t>``).
* ``relay.quantized_softmax_i16``: int16 SOFTMAX (``reference_ops::
  SoftmaxInt16``: TFLite's interpolated int16 tables of ``exp`` and
  ``1/(1+x)``), Q0.15 output.
* ``relay.quantized_l2_normalize``: int8 L2_NORMALIZATION
  (``reference_integer_ops::L2Normalization``), output scale 1/128.
* ``relay.quantized_rsqrt``: int16 RSQRT (``RsqrtEvalQuantized``).
* ``relay.table_lookup``: ``table[x - min]`` for i8 / ui8 ``x``: any int8
  elementwise function whose output depends on the input value alone (the
  int8 LOGISTIC and TANH: the importer tabulates TFLite Micro's fixed-point
  kernel on the 256 input values, ``usmp.oracle.tflite_activations``).
* ``relay.quantized_divide``: the core of int8 DIV (``reference_ops::
  DivElementwise``) on i32 operands already centred on their zero points:
  TFLite's per-element reciprocal in fixed point, see the class.
* ``relay.quantized_sigmoid`` / ``relay.quantized_tanh``: the int16 LOGISTIC
  and TANH (``reference_integer_ops::Logistic`` / ``Tanh`` for int16: linear
  interpolation in TFLite's 256-entry ``sigmoid_table_uint16``).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType, i8, i16, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, traits_def

from usmp.dialects.relay_base import (
    UNARY_FORMAT,
    RelayOperator,
    fail,
    infer_shape,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_ops import BinaryElementwiseOp
from usmp.dialects.relay_props import int_prop, relay_op_definition
from usmp.dialects.relay_shapes import normalize_axis


def _row_operand(op: RelayOperator, element: Attribute, axis: int) -> TensorType:
    """The operand of a row operator: a tensor of ``element`` of rank >= 1
    whose ``axis`` is the last one."""
    t = tensor_of(op.name, "operand", op.operands[0])
    if t.element_type != element:
        fail(
            op.name,
            f"element type {t.element_type} is not supported, expected {element}",
        )
    rank = len(shape_of(t))
    if rank == 0:
        fail(op.name, "operand must have rank >= 1")
    if infer_shape(op.name, normalize_axis, axis, rank) != rank - 1:
        fail(op.name, f"axis {axis} is not the last axis ({rank - 1})")
    return t


SOFTMAX_OUTPUT_SCALE = 1.0 / 256.0
SOFTMAX_OUTPUT_ZERO_POINT = -128


@relay_op_definition
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

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "qnn.softmax"))

    data = operand_def(TensorType)
    input_multiplier = int_prop()
    input_left_shift = int_prop()
    diff_min = int_prop()
    axis = int_prop(default=-1)
    output_bits = int_prop(default=8)

    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        data: SSAValue,
        input_multiplier: int,
        input_left_shift: int,
        diff_min: int,
        axis: int | None = None,
        output_bits: int | None = None,
    ):
        self._build(
            [data],
            input_multiplier=input_multiplier,
            input_left_shift=input_left_shift,
            diff_min=diff_min,
            axis=axis,
            output_bits=output_bits,
        )

    def infer_result_type(self) -> TensorType:
        t = _row_operand(self, i8, self.axis)
        multiplier = self.input_multiplier
        if not 0 < multiplier < 1 << 31:
            fail(
                self.name,
                f"input_multiplier {multiplier} is out of range, expected 1..2^31-1",
            )
        shift = self.input_left_shift
        if not 0 <= shift <= 31:
            fail(self.name, f"input_left_shift {shift} is out of range, expected 0..31")
        if self.diff_min > 0:
            fail(self.name, f"diff_min {self.diff_min} must be <= 0")
        if self.output_bits not in (8, 16):
            fail(self.name, f"output_bits {self.output_bits} is not 8 or 16")
        if self.output_bits == 16:
            return TensorType(i16, t.get_shape())
        return t


@relay_op_definition
class TableLookupOp(RelayOperator):
    """An 8-bit elementwise function given by its table of 256 values.

    Syntax::

        %r = relay.table_lookup %x, %table
               : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>

    ``result = table[x - min]`` where ``min`` is the least value of ``x``'s
    type (-128 for ``i8``, 0 for ``ui8``), so ``table[0]`` is the value at
    ``min`` and ``table[255]`` the value at ``max``. The result has ``x``'s
    shape and the table's element type.
    """

    name = "relay.table_lookup"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "table_lookup"))

    data = operand_def(TensorType)
    table = operand_def(TensorType)

    assembly_format = (
        "$data `,` $table attr-dict `:` `(` type($data) `,` type($table) `)` "
        "`->` type($result)"
    )

    def __init__(self, data: SSAValue, table: SSAValue):
        self._build([data, table])

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "data", self.data)
        table = tensor_of(self.name, "table", self.table)
        el = t.element_type
        if not isinstance(el, IntegerType) or el.width.data != 8:
            fail(
                self.name,
                f"data element type {el} is not supported, expected i8 or ui8",
            )
        if shape_of(table) != (256,):
            fail(
                self.name,
                f"table shape {shape_of(table)} is wrong, expected (256,): one "
                "value per 8-bit input",
            )
        return TensorType(table.element_type, shape_of(t))


class _Int16TableActivation(RelayOperator):
    """Base of the int16 LOGISTIC / TANH of TFLite Micro (see the ops)."""

    data = operand_def(TensorType)
    input_multiplier = int_prop()
    input_left_shift = int_prop()

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, input_multiplier: int, input_left_shift: int):
        self._build(
            [data],
            data.type,
            input_multiplier=input_multiplier,
            input_left_shift=input_left_shift,
        )

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        if t.element_type != i16:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected i16",
            )
        if not 0 <= self.input_multiplier <= 32767:
            fail(
                self.name,
                f"input_multiplier {self.input_multiplier} is out of range, "
                "expected 0..32767",
            )
        if not 0 <= self.input_left_shift <= 31:
            fail(
                self.name,
                f"input_left_shift {self.input_left_shift} is out of range, "
                "expected 0..31",
            )
        if self.input_multiplier == 0 and 3 << self.input_left_shift > 32767:
            fail(
                self.name,
                f"input_left_shift {self.input_left_shift} is too large for "
                "multiplier 0 (3 << shift must not exceed 32767)",
            )
        return t


@relay_op_definition
class QuantizedSigmoidOp(_Int16TableActivation):
    """TFLite Micro's int16 LOGISTIC, bit for bit.

    Syntax::

        %r = relay.quantized_sigmoid %x {input_multiplier = 0 : i64,
                                         input_left_shift = 0 : i64}
               : tensor<1x8xi16> -> tensor<1x8xi16>

    ``v = (x * m + round) >> s`` with ``m = input_multiplier`` and ``s =
    input_left_shift`` (``m = 0`` means ``3 << s`` and no shift): the input
    at scale 1/(3 * 4096); then ``sigmoid(|v|)`` interpolated in
    ``sigmoid_table_uint16`` (index ``|v| >> 9``, 9 fraction bits,
    saturated from index 255), mirrored for ``v < 0``; Q0.15 result.
    The oracle is ``usmp.oracle.tflite_activations.logistic_int16``.
    """

    name = "relay.quantized_sigmoid"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "qnn.sigmoid"))


@relay_op_definition
class QuantizedTanhOp(_Int16TableActivation):
    """TFLite Micro's int16 TANH, bit for bit: as ``relay.quantized_sigmoid``
    with ``tanh(x) = 2 sigmoid(2x) - 1`` (index ``|v| >> 8``, 8 fraction
    bits); Q0.15 result. The oracle is
    ``usmp.oracle.tflite_activations.tanh_int16``."""

    name = "relay.quantized_tanh"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "qnn.tanh"))


@relay_op_definition
class QuantizedSoftmaxInt16Op(RelayOperator):
    """TFLite int16 softmax along the last axis, bit-exact with TFLite Micro
    (``reference_ops::SoftmaxInt16``).

    Syntax::

        %r = relay.quantized_softmax_i16 %x {input_multiplier = 1717986918 : i64,
                                             input_left_shift = 1 : i64}
               : tensor<1x12xi16> -> tensor<1x12xi16>

    For each row: ``exp`` of ``x - max(row)`` rescaled by
    ``MultiplyByQuantizedMultiplier(input_multiplier, input_left_shift)`` (so
    that [-65535, 0] is [-10, 0]) from TFLite's 513-entry interpolated exp
    table; the sum's reciprocal from its 1/(1+x) table after normalising the
    sum by its leading zeros; the output ``exp * reciprocal`` rounded, Q0.15
    (scale 1/32768, zero point 0). ``axis`` must denote the last
    dimension. The oracle is ``usmp.oracle.tflite_activations.softmax_int16``.
    """

    name = "relay.quantized_softmax_i16"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "qnn.softmax"))

    data = operand_def(TensorType)
    input_multiplier = int_prop()
    input_left_shift = int_prop()
    axis = int_prop(default=-1)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, input_multiplier: int, input_left_shift: int):
        self._build(
            [data],
            data.type,
            input_multiplier=input_multiplier,
            input_left_shift=input_left_shift,
        )

    def infer_result_type(self) -> TensorType:
        t = _row_operand(self, i16, self.axis)
        if not 0 <= self.input_multiplier < 1 << 31:
            fail(
                self.name,
                f"input_multiplier {self.input_multiplier} is out of range, "
                "expected 0..2^31-1",
            )
        if not -31 <= self.input_left_shift <= 30:
            fail(
                self.name,
                f"input_left_shift {self.input_left_shift} is out of range, "
                "expected -31..30",
            )
        return t


@relay_op_definition
class QuantizedL2NormalizeOp(RelayOperator):
    """TFLite int8 L2 normalisation along the last axis, bit-exact with
    TFLite Micro (``reference_integer_ops::L2Normalization``).

    Syntax::

        %r = relay.quantized_l2_normalize %x {input_zero_point = -3 : i64}
               : tensor<1x12xi8> -> tensor<1x12xi8>

    For each row: the sum of ``(x - input_zero_point)**2`` (i32), its inverse
    square root as a multiplier and shift (``GetInvSqrtQuantizedMultiplierExp``:
    five Newton-Raphson steps in Q3.28), then every ``x - input_zero_point``
    times it with 7 more bits (``MultiplyByQuantizedMultiplier``), saturated
    to i8: scale 1/128, zero point 0. ``axis`` must denote the last
    dimension. The oracle is
    ``usmp.oracle.tflite_activations.l2_normalize_int8``.
    """

    name = "relay.quantized_l2_normalize"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "l2_normalize"))

    data = operand_def(TensorType)
    input_zero_point = int_prop()
    axis = int_prop(default=-1)

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, input_zero_point: int):
        self._build([data], data.type, input_zero_point=input_zero_point)

    def infer_result_type(self) -> TensorType:
        t = _row_operand(self, i8, self.axis)
        if not -128 <= self.input_zero_point <= 127:
            fail(
                self.name,
                f"input_zero_point {self.input_zero_point} is out of range, "
                "expected -128..127",
            )
        return t


@relay_op_definition
class QuantizedRsqrtOp(RelayOperator):
    """TFLite Micro's int16 RSQRT (zero points 0), bit for bit.

    Syntax::

        %r = relay.quantized_rsqrt %x {multiplier = 1073741824 : i64,
                                       shift = 3 : i64}
               : tensor<1x8xi16> -> tensor<1x8xi16>

    Per element ``1 / sqrt(x)`` from ``GetInvSqrtQuantizedMultiplierExp`` (five
    Newton-Raphson steps in Q3.28) with 20 extra bits, then
    ``MultiplyByQuantizedMultiplier(multiplier, shift - 20)`` (``multiplier``,
    ``shift`` = ``QuantizeMultiplier(1 / (sqrt(s_in) * s_out))``), saturated;
    32767 for ``x <= 0``. The oracle is
    ``usmp.oracle.tflite_activations.quantized_rsqrt``.
    """

    name = "relay.quantized_rsqrt"

    traits = traits_def(Fusion(OpPattern.ELEMWISE, "qnn.rsqrt"))

    data = operand_def(TensorType)
    multiplier = int_prop()
    shift = int_prop()

    assembly_format = UNARY_FORMAT

    def __init__(self, data: SSAValue, multiplier: int, shift: int):
        self._build([data], data.type, multiplier=multiplier, shift=shift)

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        if t.element_type != i16:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected i16",
            )
        if not 0 <= self.multiplier < 1 << 31:
            fail(
                self.name,
                f"multiplier {self.multiplier} is out of range, expected 0..2^31-1",
            )
        if not -11 <= self.shift <= 30:
            fail(self.name, f"shift {self.shift} is out of range, expected -11..30")
        return t


@relay_op_definition
class QuantizedDivideOp(BinaryElementwiseOp):
    """TFLite Micro's int8 DIV on centred i32 operands (``lhs = x1 - zp1``,
    ``rhs = x2 - zp2``), bit for bit (``reference_ops::DivElementwise``),
    with numpy broadcasting; the result is before the output zero point.

    Syntax::

        %r = relay.quantized_divide %a, %b {output_multiplier = 1342177280 : i64,
                                            output_shift = 5 : i64}
               : (tensor<1x8xi32>, tensor<1x8xi32>) -> tensor<1x8xi32>

    Per element: a negative ``rhs`` flips both signs; ``inv, r =
    GetReciprocal(rhs, 31)`` (leading zeros and
    ``one_over_one_plus_x_for_x_in_0_1``); ``h`` = the leading sign bits of
    ``lhs``; ``q = SaturatingRoundingDoublingHighMul(lhs << h, inv)``; then
    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(q,
    output_multiplier), h + r - output_shift)``. A zero ``rhs`` (TFLite
    Micro only asserts in debug builds) and exponents from 32 on give what
    TFLite Micro's x86-64 build computes (``1 / 0`` from a zero leading-zero
    count, shift counts modulo 32); the importer refuses scales giving a
    negative exponent. The oracle is ``usmp.oracle.tflite_kernels.
    quantized_divide``.
    """

    name = "relay.quantized_divide"

    traits = traits_def(Fusion(OpPattern.BROADCAST, "qnn.divide"))

    output_multiplier = int_prop()
    output_shift = int_prop()

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, output_multiplier: int, output_shift: int
    ):
        self._build(
            [lhs, rhs],
            output_multiplier=output_multiplier,
            output_shift=output_shift,
        )

    @classmethod
    def check_element_type(cls, element_type: Attribute) -> None:
        if element_type != i32:
            fail(cls.name, f"element type {element_type} is not i32")

    def infer_result_type(self) -> TensorType:
        t = super().infer_result_type()
        if not 0 <= self.output_multiplier < 1 << 31:
            fail(
                self.name,
                f"output_multiplier {self.output_multiplier} is out of range, "
                "expected 0..2^31-1",
            )
        if not -31 <= self.output_shift <= 31:
            fail(
                self.name,
                f"output_shift {self.output_shift} is out of range, expected -31..31",
            )
        return t


EXTRA_OPS: list[type[IRDLOperation]] = [
    QuantizedDivideOp,
    QuantizedRsqrtOp,
    QuantizedL2NormalizeOp,
    QuantizedSoftmaxOp,
    QuantizedSoftmaxInt16Op,
    TableLookupOp,
    QuantizedSigmoidOp,
    QuantizedTanhOp,
]
"""relay operators beyond docs/relay-ops.md, for the TFLite importer."""
