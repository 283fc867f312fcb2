"""Dynamic-range ("hybrid") quantisation of float activations, as LiteRT does it.

A hybrid TFLite operator (FULLY_CONNECTED, CONV_2D with float32 activations
and int8 weights) quantises its input at run time, one batch row at a time,
multiplies integers and rescales the int32 sums to float. The importer
composes it from these three row operators and the contract's ``dense`` /
``conv2d``, ``cast``, ``multiply``, ``add`` and activations. Each takes a
rank-2 f32 ``(rows, values)`` tensor (the importer reshapes, an alias) and
quantises each row on its own, as LiteRT's ``tensor_utils`` do (portable
kernels, bit for bit with ai-edge-litert's ``BUILTIN_REF`` resolver; the
oracle is ``usmp.oracle.hybrid``):

* symmetric (``SymmetricQuantizeFloats``): ``range = max(|min|, |max|)`` in
  f32; ``scale = range / 127``, ``q = clamp(round(x * (127 / range)), -127,
  127)`` (round half away from zero, in f32); an all-zero row: ``q = 0``,
  ``scale = 1``; zero point 0;
* asymmetric (``AsymmetricQuantizeFloats``, ``asymmetric = true``): ``rmin =
  min(0, min)``, ``rmax = max(0, max)`` in f32, ``scale = f64(rmax - rmin)
  / 255`` and the nudged zero point in f64 (TFLite's choice between the
  zero points from ``rmin`` and ``rmax``, clamped to -128..127, rounded
  half away from zero), the scale stored as f32; ``q = clamp(zp + round(x
  * f32(1.0 / f64(scale))), -128, 127)`` (the zero point added after the
  rounding, as LiteRT's optimised ``NeonAsymmetricQuantizeFloats``, which
  its x86 build runs through NEON_2_SSE; the portable kernel rounds ``zp +
  x * inverse`` instead, which differs on a value now and then); an
  all-zero row: ``q = 0``, scale 1, zero point 0.

``relay.dynamic_quantize`` gives ``q`` (i8, same shape),
``relay.dynamic_quantize_scale`` the scale (f32, shape ``(rows, 1)``) and
``relay.dynamic_quantize_zero_point`` the zero point (i32, ``(rows, 1)``;
asymmetric only, a symmetric one is 0).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f32, i8, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import operand_def, traits_def

from usmp.dialects.relay_base import (
    UNARY_FORMAT,
    RelayOperator,
    fail,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_props import bool_prop, relay_op_definition


class DynamicQuantizeBase(RelayOperator):
    """A row operator on an f32 ``(rows, values)`` tensor."""

    data = operand_def(TensorType)
    asymmetric = bool_prop(default=False)

    assembly_format = UNARY_FORMAT

    @property
    def axis(self) -> int:
        """The row axis (what ``lower-ops``' row statistics read)."""
        return 1

    def _rows(self) -> tuple[int, int]:
        t = tensor_of(self.name, "operand", self.data)
        if t.element_type != f32:
            fail(self.name, f"operand element type {t.element_type} is not f32")
        shape = shape_of(t)
        if len(shape) != 2:
            fail(
                self.name, f"operand must have rank 2 (rows, values), got {list(shape)}"
            )
        return shape[0], shape[1]

    def _result(self, element: Attribute, per_row: bool) -> TensorType:
        rows, values = self._rows()
        return TensorType(element, [rows, 1 if per_row else values])


@relay_op_definition
class DynamicQuantizeOp(DynamicQuantizeBase):
    """Each f32 row quantised to i8 with its own scale (see the module).

    Syntax::

        %q = relay.dynamic_quantize %x {asymmetric = true}
               : tensor<1x640xf32> -> tensor<1x640xi8>
    """

    name = "relay.dynamic_quantize"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "dynamic_quantize"))

    def __init__(self, data: SSAValue, asymmetric: bool = False):
        self._build([data], asymmetric=asymmetric)

    def infer_result_type(self) -> TensorType:
        return self._result(i8, per_row=False)


@relay_op_definition
class DynamicQuantizeScaleOp(DynamicQuantizeBase):
    """The f32 scale ``relay.dynamic_quantize`` uses for each row.

    Syntax::

        %s = relay.dynamic_quantize_scale %x : tensor<2x640xf32> -> tensor<2x1xf32>
    """

    name = "relay.dynamic_quantize_scale"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "dynamic_quantize_scale"))

    def __init__(self, data: SSAValue, asymmetric: bool = False):
        self._build([data], asymmetric=asymmetric)

    def infer_result_type(self) -> TensorType:
        return self._result(f32, per_row=True)


@relay_op_definition
class DynamicQuantizeZeroPointOp(DynamicQuantizeBase):
    """The i32 zero point of each row of the asymmetric
    ``relay.dynamic_quantize`` (0 when ``asymmetric`` is false).

    Syntax::

        %z = relay.dynamic_quantize_zero_point %x {asymmetric = true}
               : tensor<2x640xf32> -> tensor<2x1xi32>
    """

    name = "relay.dynamic_quantize_zero_point"

    traits = traits_def(Fusion(OpPattern.COMM_REDUCE, "dynamic_quantize_zero_point"))

    def __init__(self, data: SSAValue, asymmetric: bool = True):
        self._build([data], asymmetric=asymmetric)

    def infer_result_type(self) -> TensorType:
        return self._result(i32, per_row=True)


HYBRID_OPS = [DynamicQuantizeOp, DynamicQuantizeScaleOp, DynamicQuantizeZeroPointOp]
"""The dynamic-range quantisation operators, registered in ``relay``."""
