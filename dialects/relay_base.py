"""Shared pieces of the relay operator definitions (``relay_*ops.py``).

``RelayOperator`` is the base of every operator: its ``verify_`` recomputes the
result type from the operand types and properties (``infer_result_type``, the
analogue of MLIR's ``InferTypeOpInterface``) and compares it with the declared
one. Shape arithmetic lives in ``relay_shapes`` (plain Python); this module
adds element-type rules, the builder helper and the error format
``relay.<op>: <what is wrong>, expected <what would be accepted>``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn, ParamSpec, TypeVar

from xdsl.dialects.builtin import (
    IntegerType,
    Signedness,
    TensorType,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, OpResult, SSAValue, SSAValues
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.limits import check_buffer_size, check_nonempty
from usmp.dialects.relay_props import property_attrs
from usmp.dialects.relay_shapes import Shape, ShapeError

ui8 = IntegerType(8, Signedness.UNSIGNED)
"""TFLite's uint8."""

ELEMENT_TYPES: tuple[Attribute, ...] = (f32, i8, i16, i32, i64, ui8)
"""Element types relay operators accept (docs/relay-ops.md); i64 holds the
accumulators and biases of 16x8 convolutions."""
INT_TYPES: tuple[Attribute, ...] = (i8, i16, i32, i64, ui8)


def is_int(t: Attribute) -> bool:
    return t in INT_TYPES


def int_range(t: IntegerType) -> tuple[int, int]:
    """Representable range of a relay integer type (signless = signed)."""
    width = t.width.data
    if t.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


UNARY_FORMAT = "$data attr-dict `:` type($data) `->` type($result)"
"""``%r = relay.<op> %x {props} : tensor<..> -> tensor<..>``"""
DATA_WEIGHT_FORMAT = (
    "$data `,` $weight attr-dict `:` `(` type($data) `,` type($weight) `)` "
    "`->` type($result)"
)
"""``%r = relay.<op> %x, %w {props} : (tensor<..>, tensor<..>) -> tensor<..>``"""


def fail(op_name: str, message: str) -> NoReturn:
    raise VerifyException(f"{op_name}: {message}")


_TENSOR_TYPES_MAX = 4096
"""Entries of the type caches below before they start over."""
_RELAY_TENSORS: dict[int, TensorType] = {}
"""Types ``tensor_of`` accepted, by ``id`` (each kept alive here, so an id is
not reused while listed): the checks depend on the type alone, and the same
few type instances come back on every op (``tensor_type``)."""


def tensor_of(op_name: str, what: str, value: SSAValue | Attribute) -> TensorType:
    """The ``TensorType`` of an operand (or a type), with a relay element type."""
    t = value.type if isinstance(value, SSAValue) else value
    if _RELAY_TENSORS.get(id(t)) is t:
        return t  # pyright: ignore[reportReturnType]
    if not isinstance(t, TensorType):
        fail(op_name, f"{what} must be a tensor, got {t}")
    if t.element_type not in ELEMENT_TYPES:
        fail(
            op_name,
            f"{what} element type {t.element_type} is not supported "
            "(expected f32, i8, i16, i32, i64 or ui8)",
        )
    try:
        check_nonempty(t, what)
        check_buffer_size(t, what)
    except VerifyException as e:
        fail(op_name, str(e))
    if len(_RELAY_TENSORS) >= _TENSOR_TYPES_MAX:  # bounded in a long process
        _RELAY_TENSORS.clear()
    _RELAY_TENSORS[id(t)] = t
    return t


_TENSOR_TYPES: dict[tuple[Attribute, tuple[int, ...]], TensorType] = {}


def tensor_type(element_type: Attribute, shape: Sequence[int]) -> TensorType:
    """``TensorType(element_type, shape)``, one instance per type: inferring
    result types builds the same few types again and again (MobileNetV2's
    import, verification included, builds ~800, of ~60 distinct ones), and
    an attribute is an immutable value, so sharing it is safe."""
    key = (element_type, tuple(shape))
    t = _TENSOR_TYPES.get(key)
    if t is None:
        if len(_TENSOR_TYPES) >= _TENSOR_TYPES_MAX:  # bounded in a long process
            _TENSOR_TYPES.clear()
        t = _TENSOR_TYPES[key] = TensorType(element_type, key[1])
    return t


def shape_of(t: TensorType) -> Shape:
    return tuple(t.get_shape())


_P = ParamSpec("_P")
_R = TypeVar("_R")


def infer_shape(
    op_name: str, fn: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs
) -> _R:
    """Call a ``relay_shapes`` function, turning ``ShapeError`` into a diagnostic."""
    try:
        return fn(*args, **kwargs)
    except ShapeError as e:
        fail(op_name, str(e))


class InferredResultOperator(IRDLOperation):
    """An operator with one tensor ``result`` whose type is inferred from its
    operands and properties: verify = infer the result type and compare.

    Subclasses implement ``infer_result_type()``; it raises
    ``VerifyException`` for invalid inputs, so the same code validates ops and
    builds them (``_build`` infers the result type). Properties print in the
    attribute dictionary. The printed form keeps the result type: xDSL's
    declarative format infers result types only from constraint variables
    shared with operands (no hook computing them from properties), so the
    builders infer it instead. Carries no traits: ``RelayOperator`` adds
    ``Pure``, stateful operators (``relay_state.StatefulOperator``) their
    memory effects.
    """

    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)

    def infer_result_type(self) -> TensorType:
        raise NotImplementedError

    def verify_(self) -> None:
        expected = self.infer_result_type()
        actual = self.results[0].type
        if actual != expected:
            fail(self.name, f"result type {actual} is wrong, expected {expected}")

    def _build(
        self,
        operands: Sequence[SSAValue | Sequence[SSAValue]],
        result_type: Attribute | None = None,
        **values: Any,
    ) -> None:
        """Build from operands and Python property values (``None``: the
        declared default). Without ``result_type``, the result type is
        ``infer_result_type()``, which raises ``VerifyException`` for invalid
        operands or properties."""
        super().__init__(
            operands=operands,
            properties=property_attrs(type(self), values),
            result_types=[result_type or _PENDING],
        )
        if result_type is not None:
            return
        try:
            result_type = self.infer_result_type()
        except VerifyException:
            self.drop_all_references()
            raise
        # The result type depends on the properties, which the op's typed
        # accessors read: built with a placeholder, the result is replaced
        # before anything can use it.
        self.results = SSAValues((OpResult(result_type, self, 0),))


class RelayOperator(InferredResultOperator):
    """Base of the relay operators (an ``InferredResultOperator``).

    Every operator is ``Pure``: relay is functional, an operator's result is a
    new tensor computed from its operands and properties only (no state, no
    I/O, operands are never written), so an unused one can be erased (``dce``)
    and two identical ones merged (``cse``).
    """

    traits = traits_def(Pure())


_PENDING = TensorType(i8, [])
"""Placeholder result type of an operator whose type is being inferred."""
