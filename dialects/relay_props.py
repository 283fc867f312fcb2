"""Typed properties of the relay operators: each declared once.

An operator declares a property with one of the helpers below::

    @relay_op_definition
    class Conv2DOp(RelayOperator):
        strides = ints_prop(default=(1, 1))
        groups = int_prop(default=1)

The helper is the IRDL property (constraint and default; it prints in the
attribute dictionary as any ``prop_def``, defaults elided:
``{strides = array<i64: 2, 2>, groups = 2 : i64}``) and, once
``relay_op_definition`` has defined the op, a typed Python accessor:
``op.strides`` is a ``tuple[int, ...]``, ``op.groups`` an ``int``, and
assigning a Python value stores the attribute. ``property_values(op)`` gives
all of them at once (builders, the numpy oracle); ``property_attrs`` turns
Python values back into attributes for builders.

| helper       | IR                  | Python            |
|--------------|---------------------|-------------------|
| ``ints_prop``  | ``array<i64: ..>``  | ``tuple[int, ...]`` |
| ``i32s_prop``  | ``array<i32: ..>``  | ``tuple[int, ...]`` |
| ``int_prop``   | ``N : i64``         | ``int``           |
| ``float_prop`` | ``X : f64``         | ``float``         |
| ``bool_prop``  | ``true`` / ``false``| ``bool``          |
| ``str_prop``   | ``"..."``           | ``str``           |
| ``enum_prop``  | ``#relay<kind V>``  | the ``StrEnum``   |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

from xdsl.dialects.builtin import I64 as _I64
from xdsl.dialects.builtin import (
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation
from xdsl.irdl import IRDLOperation
from xdsl.irdl.attributes import IRDLAttrConstraint
from xdsl.utils.str_enum import StrEnum

from usmp.dialects.irdl_adapter import PropertyField
from usmp.dialects.op_definition import op_definition

_T = TypeVar("_T")
_E = TypeVar("_E", bound=StrEnum)
_OpT = TypeVar("_OpT", bound=IRDLOperation)


@dataclass(frozen=True)
class PropKind(Generic[_T]):
    """How one kind of property is stored (constraint) and read (Python type)."""

    constr: IRDLAttrConstraint
    to_attr: Callable[[_T], Attribute]
    to_py: Callable[[Attribute], _T]


def _array_kind(element: IntegerType) -> PropKind[tuple[int, ...]]:
    half = 1 << (element.width.data - 1)
    signed = element.signedness.data != Signedness.UNSIGNED

    def to_attr(values: Sequence[int]) -> Attribute:
        # values in the signed range are their own normalized values: packed
        # at once, not normalized one by one (xDSL's ``from_list``: 0.1 CPU s
        # of MobileNetV2's import, per-channel multipliers and shifts)
        if signed and len(values) and -half <= min(values) and max(values) < half:
            return DenseArrayBase(element, BytesAttr(element.pack(values)))
        return DenseArrayBase.from_list(element, values)

    def to_py(attr: Attribute) -> tuple[int, ...]:
        return tuple(cast(DenseArrayBase[IntegerType], attr).get_values())

    return PropKind(DenseArrayBase.constr(element), to_attr, to_py)


INTS = _array_kind(i64)
I32S = _array_kind(i32)
INT: PropKind[int] = PropKind(
    IntegerAttr[_I64],
    lambda v: IntegerAttr(v, i64),
    lambda a: cast(IntegerAttr[IntegerType], a).value.data,
)
FLOAT: PropKind[float] = PropKind(
    FloatAttr[Float64Type],
    lambda v: FloatAttr(v, f64),
    lambda a: float(cast(FloatAttr[Float64Type], a).value.data),
)
BOOL: PropKind[bool] = PropKind(
    BoolAttr,
    lambda v: IntegerAttr(int(v), i1),
    lambda a: bool(cast(IntegerAttr[IntegerType], a).value.data),
)
STR: PropKind[str] = PropKind(
    StringAttr, StringAttr, lambda a: cast(StringAttr, a).data
)


class TypedPropDef(PropertyField, Generic[_T]):
    """The IRDL property of a typed field (replaced by its accessor); an
    IRDL property field through ``irdl_adapter``, the one place that knows
    how xDSL recognises one."""

    def __init__(self, kind: PropKind[_T], default: _T | None):
        default_attr = None if default is None else kind.to_attr(default)
        super().__init__(kind.constr, default_attr)
        self.kind = kind


@dataclass(frozen=True)
class TypedPropAccessor(Generic[_T]):
    """``op.<name>``: the property as a Python value; assigning stores it."""

    name: str
    kind: PropKind[_T]

    def __get__(self, obj: Operation | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return self.kind.to_py(obj.properties[self.name])

    def __set__(self, obj: Operation, value: _T) -> None:
        obj.properties[self.name] = self.kind.to_attr(value)


def _field(kind: PropKind[_T], default: _T | None) -> Any:
    return TypedPropDef(kind, default)


def ints_prop(default: Sequence[int] | None = None) -> tuple[int, ...]:
    """``array<i64: ..>`` property, read as ``tuple[int, ...]``."""
    return _field(INTS, None if default is None else tuple(default))


def i32s_prop(default: Sequence[int] | None = None) -> tuple[int, ...]:
    """``array<i32: ..>`` property, read as ``tuple[int, ...]``."""
    return _field(I32S, None if default is None else tuple(default))


def int_prop(default: int | None = None) -> int:
    """``N : i64`` property, read as ``int``."""
    return _field(INT, default)


def float_prop(default: float | None = None) -> float:
    """``X : f64`` property, read as ``float``."""
    return _field(FLOAT, default)


def bool_prop(default: bool | None = None) -> bool:
    """``true``/``false`` property, read as ``bool``."""
    return _field(BOOL, default)


def str_prop(default: str | None = None) -> str:
    """String property, read as ``str``."""
    return _field(STR, default)


def enum_prop(attr_type: type[EnumAttribute[_E]], default: _E | None = None) -> _E:
    """Enum attribute property (``#relay<data_layout NCHW>``), read as the
    ``StrEnum`` member (which compares equal to its string)."""
    enum_type = cast(type[_E], attr_type.enum_type)
    kind: PropKind[_E] = PropKind(
        attr_type,
        lambda v: attr_type(enum_type(v)),
        lambda a: cast(EnumAttribute[_E], a).data,
    )
    return _field(kind, default)


_XDSL_BASES = frozenset(IRDLOperation.__mro__)


def _own_bases(cls: type) -> list[type]:
    """``cls.__mro__`` reversed, without ``IRDLOperation`` and its bases
    (xDSL's classes declare no typed property; ``Operation`` alone has ~100
    names, which every op definition would look through)."""
    return [klass for klass in reversed(cls.__mro__) if klass not in _XDSL_BASES]


def relay_op_definition(cls: type[_OpT]) -> type[_OpT]:
    """``op_definition`` (xDSL's ``irdl_op_definition``, the assembly format
    compiled on first use), then typed accessors for the typed properties."""
    kinds: dict[str, PropKind[Any]] = {}
    for klass in _own_bases(cls):
        for name, value in vars(klass).items():
            if isinstance(value, TypedPropDef):
                kinds[name] = cast(TypedPropDef[Any], value).kind
            else:
                kinds.pop(name, None)
    cls = op_definition(cls)
    for name, kind in kinds.items():
        setattr(cls, name, TypedPropAccessor(name, kind))
    return cls


def typed_accessors(
    op_type: type[Operation],
) -> Mapping[str, TypedPropAccessor[Any]]:
    """The typed properties of an op class, by name (read-only), found once
    per class: every op the importer builds converts its properties
    through them."""
    return _typed_accessors(op_type)


@cache
def _typed_accessors(
    op_type: type[Operation],
) -> Mapping[str, TypedPropAccessor[Any]]:
    found: dict[str, TypedPropAccessor[Any]] = {}
    for klass in _own_bases(op_type):
        for name, value in vars(klass).items():
            if isinstance(value, TypedPropAccessor):
                found[name] = cast(TypedPropAccessor[Any], value)
    return MappingProxyType(found)


def property_values(op: Operation) -> dict[str, Any]:
    """Every typed property of ``op`` as a Python value, by name."""
    return {
        name: accessor.kind.to_py(op.properties[name])
        for name, accessor in typed_accessors(type(op)).items()
    }


def property_attrs(
    op_type: type[Operation], values: Mapping[str, Any]
) -> dict[str, Attribute]:
    """Attributes for the given Python values (``None``: the declared default)."""
    accessors = typed_accessors(op_type)
    attrs: dict[str, Attribute] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name not in accessors:
            raise TypeError(f"{op_type.name} has no property '{name}'")
        attrs[name] = accessors[name].kind.to_attr(value)
    return attrs
