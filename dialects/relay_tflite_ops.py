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
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, i8, i16
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, operand_def

from usmp.dialects.relay_base import (
    UNARY_FORMAT,
    RelayOperator,
    fail,
    infer_shape,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_props import int_prop, relay_op_definition
from usmp.dialects.relay_shapes import normalize_axis

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
        t = tensor_of(self.name, "operand", self.data)
        if t.element_type != i8:
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected i8",
            )
        rank = len(shape_of(t))
        if rank == 0:
            fail(self.name, "operand must have rank >= 1")
        axis = infer_shape(self.name, normalize_axis, self.axis, rank)
        if axis != rank - 1:
            fail(self.name, f"axis {self.axis} is not the last axis ({rank - 1})")
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


EXTRA_OPS: list[type[IRDLOperation]] = [QuantizedSoftmaxOp]
"""relay operators beyond docs/relay-ops.md, for the TFLite importer."""
