"""``relay.svdf``: TFLite's SVDF (singular value decomposition filter) as
TFLite Micro runs it.

A *stateful* operator (``dialects/relay_state.py``): its last operand is the
activation history (a ``relay.state``, TFLite's variable input 4), which it
shifts left by one time step, extends with this step's feature projection
and then reads; the result is the output of this step. ``fuse-ops``
outlines it alone, ``lower-ops`` lowers it whole (``lowering/ops_svdf.py``),
the oracle is ``usmp.oracle.svdf``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType, f32, i8, i16, i32
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    operand_def,
    traits_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.str_enum import StrEnum

from usmp.dialects.relay_base import InferredResultOperator, fail, shape_of, tensor_of
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_props import (
    enum_prop,
    int_prop,
    relay_op_definition,
)
from usmp.dialects.relay_state import StatefulOperator


class FusedActivation(StrEnum):
    """TFLite's fused activations the float SVDF applies (the integer one
    ignores its activation, as TFLite Micro's reference kernel does)."""

    NONE = "NONE"
    RELU = "RELU"
    RELU_N1_TO_1 = "RELU_N1_TO_1"
    RELU6 = "RELU6"
    TANH = "TANH"


@irdl_attr_definition
class FusedActivationAttr(EnumAttribute[FusedActivation], SpacedOpaqueSyntaxAttribute):
    """``#relay<fused_activation RELU6>``"""

    name = "relay.fused_activation"


@relay_op_definition
class SvdfOp(StatefulOperator, InferredResultOperator):
    """One step of an SVDF layer, bit-exact with TFLite Micro.

    Syntax::

        %y = relay.svdf %x, %wf, %wt, %b, %state {rank = 1 : i64, ...}
          : (tensor<1x96xi8>, tensor<64x96xi8>, tensor<64x8xi16>,
             tensor<64xi32>, tensor<1x512xi16>) -> tensor<1x64xi8>

    Shapes: ``x`` (B, I), ``weights_feature`` (F, I), ``weights_time`` (F, M),
    ``bias`` (U,) with U = F / ``rank``, ``state`` (B, M·F) laid out as
    (B, F, M); the result is (B, U). Per step and batch row::

        state[f, :] = state[f, 1:] ++ [proj_f]       proj_f = wf[f] · x
        s_f = wt[f] · state[f, :]
        y_u = act(bias_u + sum_{r < rank} s_{u·rank + r})

    Float (all f32): ``activation`` is applied. Integer: ``x``/``wf`` i8,
    ``wt``/``state`` i16 or i8 (the same), bias i32, result i8; ``proj_f`` is
    ``MultiplyByQuantizedMultiplier(wf[f]·(x − input_zero_point),
    multiplier_1, shift_1) + state_zero_point`` clamped to the state type;
    ``s_f`` uses ``state − state_zero_point``; the output is
    ``MultiplyByQuantizedMultiplier(y, multiplier_2, shift_2) +
    output_zero_point`` clamped to i8 (no activation, as TFLite Micro).
    """

    name = "relay.svdf"

    traits = traits_def(
        MemoryReadEffect(), MemoryWriteEffect(), Fusion(OpPattern.OPAQUE, "svdf")
    )

    data = operand_def(TensorType)
    weights_feature = operand_def(TensorType)
    weights_time = operand_def(TensorType)
    bias = operand_def(TensorType)
    state = operand_def(TensorType)

    STATE_OPERANDS: ClassVar[tuple[int, ...]] = (4,)

    rank = int_prop(default=1)
    activation = enum_prop(FusedActivationAttr, default=FusedActivation.NONE)
    input_zero_point = int_prop(default=0)
    state_zero_point = int_prop(default=0)
    output_zero_point = int_prop(default=0)
    multiplier_1 = int_prop(default=0)
    shift_1 = int_prop(default=0)
    multiplier_2 = int_prop(default=0)
    shift_2 = int_prop(default=0)

    assembly_format = (
        "$data `,` $weights_feature `,` $weights_time `,` $bias `,` $state "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        data: SSAValue,
        weights_feature: SSAValue,
        weights_time: SSAValue,
        bias: SSAValue,
        state: SSAValue,
        **properties: Any,
    ):
        self._build([data, weights_feature, weights_time, bias, state], **properties)

    @property
    def quantized(self) -> bool:
        return tensor_of(self.name, "data", self.data).element_type != f32

    def infer_result_type(self) -> TensorType:
        names = ("data", "weights_feature", "weights_time", "bias", "state")
        types = [
            tensor_of(self.name, n, v)
            for n, v in zip(names, self.operands, strict=True)
        ]
        x, wf, wt, b, s = types
        for n, t, rank in zip(names, types, (2, 2, 2, 1, 2), strict=True):
            if len(shape_of(t)) != rank:
                fail(self.name, f"{n} must have rank {rank}, got {t}")
        batch, n_input = shape_of(x)
        n_filter, wf_input = shape_of(wf)
        wt_filter, n_memory = shape_of(wt)
        if self.rank < 1 or n_filter % self.rank:
            fail(
                self.name,
                f"rank {self.rank} must be >= 1 and divide the {n_filter} filters",
            )
        n_unit = n_filter // self.rank
        expected = {
            "weights_feature": (n_filter, n_input),
            "weights_time": (n_filter, n_memory),
            "bias": (n_unit,),
            "state": (batch, n_memory * n_filter),
        }
        del wf_input, wt_filter
        for n, t in zip(names[1:], types[1:], strict=True):
            if shape_of(t) != expected[n]:
                fail(
                    self.name,
                    f"{n} has shape {list(shape_of(t))}, expected {list(expected[n])}",
                )
        if x.element_type == f32:
            wanted = (f32, f32, f32, f32, f32)
        else:
            state_type = s.element_type
            if state_type not in (i8, i16):
                fail(self.name, f"state has element type {state_type}, expected i16/i8")
            wanted = (i8, i8, state_type, i32, state_type)
        for n, t, w in zip(names, types, wanted, strict=True):
            if t.element_type != w:
                fail(self.name, f"{n} has element type {t.element_type}, expected {w}")
        for m in (self.multiplier_1, self.multiplier_2):
            if not 0 <= m < 1 << 31:
                fail(self.name, f"multiplier {m} is out of range, expected 0..2^31-1")
        for sh in (self.shift_1, self.shift_2):
            if not -31 <= sh <= 30:
                fail(self.name, f"shift {sh} is out of range, expected -31..30")
        return TensorType(i8 if x.element_type != f32 else f32, [batch, n_unit])


SVDF_OPS: list[type[IRDLOperation]] = [SvdfOp]
