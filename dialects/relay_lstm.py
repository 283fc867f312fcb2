"""``relay.lstm``: TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as TFLite Micro runs it.

A recurrent operator cannot be a composition of relay ops (relay has no
loops), so it is one op; its result is the output sequence. It is a
*stateful* operator: the hidden and cell states are operands
(``STATE_OPERANDS``) that it reads and then overwrites in place with their
values after the last time step, so it is not ``Pure``. ``fuse-ops``
outlines it alone (``OPAQUE``) and ``lower-ops`` lowers it with
``usmp.lowering.ops_lstm``; the oracle is ``usmp.oracle.lstm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType, f32, i8, i16, i32, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition, operand_def, traits_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.str_enum import StrEnum

from usmp.dialects.relay_base import InferredResultOperator, fail, shape_of, tensor_of
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_props import (
    bool_prop,
    enum_prop,
    float_prop,
    int_prop,
    ints_prop,
    relay_op_definition,
)
from usmp.dialects.relay_state import StatefulOperator

GATES = ("input", "forget", "cell", "output")


class CellActivation(StrEnum):
    """The cell gate's activation (the other gates' is the sigmoid)."""

    TANH = "tanh"
    SIGMOID = "sigmoid"


@irdl_attr_definition
class CellActivationAttr(EnumAttribute[CellActivation], SpacedOpaqueSyntaxAttribute):
    """``#relay<cell_activation sigmoid>``"""

    name = "relay.cell_activation"


OPERANDS = (
    "data",
    *(f"input_to_{g}_weights" for g in GATES),
    *(f"recurrent_to_{g}_weights" for g in GATES),
    *(f"{g}_gate_bias" for g in GATES),
    "hidden_state",
    "cell_state",
)
"""Operand order (TFLite's inputs 0-8, 12-15, 18, 19); each is a named
operand of ``LstmOp``."""


@relay_op_definition
class LstmOp(StatefulOperator, InferredResultOperator):
    """A unidirectional LSTM over a sequence, TFLite Micro's kernel.

    Syntax::

        %r = relay.lstm(%x, %wi, %wf, %wc, %wo, %ri, %rf, %rc, %ro,
                        %bi, %bf, %bc, %bo, %h, %c) {cell_clip = 10.0 : f64}
          : (tensor<1x28x28xf32>, ..., tensor<1x20xf32>, tensor<1x20xf32>)
          -> tensor<1x28x20xf32>

    ``data`` is (B, T, I), or (T, B, I) with ``time_major``; the input
    weights are (S, I), the recurrent ones (S, S), the biases (S,), the
    states hold B*S elements each (any shape). Per time step and batch row::

        gate_g = act_g(W_g x + b_g + R_g h)    g = input, forget, cell, output
        c = forget * c + input * cell_gate;  h = tanh(c) * output;  out_t = h

    ``act`` is sigmoid; the cell gate's is ``cell_activation`` (``tanh`` or
    ``sigmoid``). ``cell_clip`` > 0 clips ``c`` (float). No peephole,
    projection, layer norm or coupled input gate (TFLite Micro has none).

    Float: all f32. Integer (``gate_multipliers`` given): ``data``, weights,
    hidden state i8 (weights symmetric), biases i32, cell state i16; the
    parameters TFLite Micro computes in ``Prepare``: per gate the
    ``(multiplier, shift)`` of the input FC (``gate_*[g]``) and of the
    recurrent FC (``gate_*[4 + g]``) to the Q3.12 gate scale, of the products
    forget·cell, input·cell_gate (to the cell scale) and tanh(c)·output (to
    the hidden scale) in ``mul_*``; the zero points of ``data`` and of the
    hidden state; ``cell_scale_power`` (cell scale = 2^power);
    ``quantized_cell_clip`` (0: none). See ``usmp.oracle.lstm``.
    """

    name = "relay.lstm"

    data = operand_def(TensorType)
    input_to_input_weights = operand_def(TensorType)
    input_to_forget_weights = operand_def(TensorType)
    input_to_cell_weights = operand_def(TensorType)
    input_to_output_weights = operand_def(TensorType)
    recurrent_to_input_weights = operand_def(TensorType)
    recurrent_to_forget_weights = operand_def(TensorType)
    recurrent_to_cell_weights = operand_def(TensorType)
    recurrent_to_output_weights = operand_def(TensorType)
    input_gate_bias = operand_def(TensorType)
    forget_gate_bias = operand_def(TensorType)
    cell_gate_bias = operand_def(TensorType)
    output_gate_bias = operand_def(TensorType)
    hidden_state = operand_def(TensorType)
    cell_state = operand_def(TensorType)

    STATE_OPERANDS: ClassVar[tuple[int, ...]] = (
        OPERANDS.index("hidden_state"),
        OPERANDS.index("cell_state"),
    )
    """The hidden and cell states: read, then overwritten in place."""

    traits = traits_def(
        MemoryReadEffect(), MemoryWriteEffect(), Fusion(OpPattern.OPAQUE, "lstm")
    )

    time_major = bool_prop(default=False)
    cell_activation = enum_prop(CellActivationAttr, default=CellActivation.TANH)
    cell_clip = float_prop(default=0.0)
    gate_multipliers = ints_prop(default=())
    gate_shifts = ints_prop(default=())
    mul_multipliers = ints_prop(default=())
    mul_shifts = ints_prop(default=())
    input_zero_point = int_prop(default=0)
    hidden_zero_point = int_prop(default=0)
    cell_scale_power = int_prop(default=0)
    quantized_cell_clip = int_prop(default=0)

    assembly_format = (
        "`(` "
        + " `,` ".join(f"${n}" for n in OPERANDS)
        + " `)` attr-dict `:` functional-type(operands, $result)"
    )

    def __init__(self, operands: Sequence[SSAValue], **properties: Any):
        """``operands`` in ``OPERANDS`` order."""
        self._build(list(operands), **properties)

    @property
    def quantized(self) -> bool:
        return bool(self.gate_multipliers)

    @property
    def input_weights(self) -> tuple[SSAValue, ...]:
        """The input weights of the gates, in ``GATES`` order."""
        return tuple(self.operands[1:5])

    @property
    def recurrent_weights(self) -> tuple[SSAValue, ...]:
        """The recurrent weights of the gates, in ``GATES`` order."""
        return tuple(self.operands[5:9])

    @property
    def gate_biases(self) -> tuple[SSAValue, ...]:
        """The biases of the gates, in ``GATES`` order."""
        return tuple(self.operands[9:13])

    def infer_result_type(self) -> TensorType:
        if len(self.operands) != len(OPERANDS):
            fail(self.name, f"{len(self.operands)} operands, expected {len(OPERANDS)}")
        types = [
            tensor_of(self.name, n, v)
            for n, v in zip(OPERANDS, self.operands, strict=True)
        ]
        data = types[0]
        if len(shape_of(data)) != 3:
            fail(self.name, f"data must have rank 3 (batch, time, input), got {data}")
        d0, d1, n_input = shape_of(data)
        batch, steps = (d1, d0) if self.time_major else (d0, d1)
        units = shape_of(types[1])[0] if shape_of(types[1]) else 0
        quantized = self.quantized
        act, weight, bias, cell = (i8, i8, i32, i16) if quantized else (f32,) * 4
        if quantized and data.element_type == i16:  # 16x8: int16 activations
            act, bias = i16, i64
        expected = {
            "data": act,
            **{n: weight for n in OPERANDS[1:9]},
            **{n: bias for n in OPERANDS[9:13]},
            "hidden_state": act,
            "cell_state": cell,
        }
        kind = "integer (gate_multipliers given)" if quantized else "float"
        for n, t in zip(OPERANDS, types, strict=True):
            if t.element_type != expected[n]:
                fail(
                    self.name,
                    f"{n} has element type {t.element_type}, expected "
                    f"{expected[n]} for a {kind} LSTM",
                )
        shapes = {
            **{n: (units, n_input) for n in OPERANDS[1:5]},
            **{n: (units, units) for n in OPERANDS[5:9]},
            **{n: (units,) for n in OPERANDS[9:13]},
        }
        for n, t in zip(OPERANDS, types, strict=True):
            if n in shapes and shape_of(t) != shapes[n]:
                fail(
                    self.name,
                    f"{n} has shape {list(shape_of(t))}, expected {list(shapes[n])}",
                )
            if (
                n in ("hidden_state", "cell_state")
                and t.element_count() != batch * units
            ):
                fail(
                    self.name,
                    f"{n} has {t.element_count()} elements, expected "
                    f"batch * units = {batch * units}",
                )
        if self.cell_clip < 0:
            fail(self.name, f"cell_clip {self.cell_clip} must be >= 0")
        self._check_quantization()
        out_shape = [d0, d1, units]
        return TensorType(act, out_shape)

    def _check_quantization(self) -> None:
        lengths = {
            "gate_multipliers": (self.gate_multipliers, 8),
            "gate_shifts": (self.gate_shifts, 8),
            "mul_multipliers": (self.mul_multipliers, 3),
            "mul_shifts": (self.mul_shifts, 3),
        }
        for what, (values, n) in lengths.items():
            if len(values) != (n if self.quantized else 0):
                fail(
                    self.name,
                    f"{what} has {len(values)} values, expected "
                    f"{n if self.quantized else 0} for a "
                    f"{'integer' if self.quantized else 'float'} LSTM",
                )
        for m in (*self.gate_multipliers, *self.mul_multipliers):
            if not 0 <= m < 1 << 31:
                fail(self.name, f"multiplier {m} is out of range, expected 0..2^31-1")
        for s in (*self.gate_shifts, *self.mul_shifts):
            if not -31 <= s <= 30:
                fail(self.name, f"shift {s} is out of range, expected -31..30")
        if not -27 <= self.cell_scale_power <= 0:
            fail(
                self.name,
                f"cell_scale_power {self.cell_scale_power} is out of range, "
                "expected -27..0",
            )
        if not 0 <= self.quantized_cell_clip <= 32767:
            fail(
                self.name,
                f"quantized_cell_clip {self.quantized_cell_clip} is out of range, "
                "expected 0..32767",
            )
