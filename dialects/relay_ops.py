"""Operators of the ``relay`` dialect (registered by ``relay.py``).

Each operator is one ``@irdl_op_definition`` class with a declarative syntax,
properties named as in TVM Relay, and a verifier that checks operand shapes and
element types and the result type, with a message saying what was expected.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of two static shapes; ``None`` if incompatible."""
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    out: list[int] = []
    for x, y in zip(pa, pb, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def tensor_shape(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


class BinaryElementwiseOp(IRDLOperation):
    """Base of the broadcasting binary operators.

    Syntax::

        %r = relay.add %a, %b : (tensor<1x4xi32>, tensor<4xi32>) -> tensor<1x4xi32>

    Both operands have the same element type; the result shape is the numpy
    broadcast of the operand shapes, its element type the operands'.
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def verify_(self) -> None:
        lt, rt, res = self.lhs.type, self.rhs.type, self.result.type
        assert isinstance(lt, TensorType) and isinstance(rt, TensorType)
        assert isinstance(res, TensorType)
        if lt.element_type != rt.element_type:
            raise VerifyException(
                f"{self.name}: operand element types differ ({lt.element_type} vs "
                f"{rt.element_type}); insert a relay.cast"
            )
        shape = broadcast_shapes(tensor_shape(lt), tensor_shape(rt))
        if shape is None:
            raise VerifyException(
                f"{self.name}: shapes {list(tensor_shape(lt))} and "
                f"{list(tensor_shape(rt))} do not broadcast"
            )
        expected = TensorType(lt.element_type, shape)
        if res != expected:
            raise VerifyException(
                f"{self.name}: result type {res} is wrong, expected {expected}"
            )


@irdl_op_definition
class AddOp(BinaryElementwiseOp):
    """Elementwise addition with numpy broadcasting (wrapping for integers)."""

    name = "relay.add"


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Reshape: same elements, new static shape given by the result type.

    Syntax::

        %r = relay.reshape %x : tensor<1x1x1x64xi8> -> tensor<1x64xi8>
    """

    name = "relay.reshape"

    T: ClassVar = VarConstraint("T", AnyAttr())
    data = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$data attr-dict `:` type($data) `->` type($result)"

    def verify_(self) -> None:
        src, dst = self.data.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        if src.element_type != dst.element_type:
            raise VerifyException(
                f"relay.reshape: element type changes from {src.element_type} to "
                f"{dst.element_type}; use relay.cast"
            )
        if src.element_count() != dst.element_count():
            raise VerifyException(
                f"relay.reshape: {src} has {src.element_count()} elements but "
                f"{dst} has {dst.element_count()}"
            )


OPERATOR_OPS: list[type[IRDLOperation]] = [AddOp, ReshapeOp]
