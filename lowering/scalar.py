"""Scalar arithmetic by element type, for ``KernelBuilder`` (``loops.py``).

Signless integers are signed (TFLite's int8 is ``i8``), floats are IEEE with
NaN propagation (``arith.maximumf``), as the numpy oracle computes. An
integer ``max``/``min`` against the identity or absorbing bound of its type
emits nothing (``_int_identity``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cache
from typing import TypeAlias

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerAttr,
    IntegerType,
    Signedness,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation

from usmp.lowering.create import create

Ix: TypeAlias = "int | SSAValue"
"""An index: a compile-time integer or an SSA value of type ``index``."""


def is_float(t: Attribute) -> bool:
    """Whether ``t`` is a float type (``AnyFloat``), decided once per class:
    ``isinstance`` against the union checks each of its 18 classes (2 us
    for an integer type, on every scalar op the lowering builds)."""
    return _float_class(type(t))


@cache
def _float_class(cls: type[Attribute]) -> bool:
    return issubclass(cls, AnyFloat)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def int_bounds(t: IntegerType) -> tuple[int, int]:
    width = t.width.data
    if t.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


class ScalarArithmetic(ABC):
    """Scalar ops on values of any element type, emitted through ``emit``
    with immediates from ``const``."""

    _conversions: dict[
        tuple[int, int], tuple[Attribute, Attribute, tuple[ConversionStep, ...]]
    ]
    """``convert``'s steps by the ids of the source and target type objects
    (set by the subclass's constructor)."""

    @abstractmethod
    def emit(self, op: Operation) -> SSAValue: ...

    @abstractmethod
    def const(self, value: float, type_: Attribute) -> SSAValue: ...

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        op = arith.AddfOp if is_float(a.type) else arith.AddiOp
        return self.emit(create(op, (a, b), a.type))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        op = arith.SubfOp if is_float(a.type) else arith.SubiOp
        return self.emit(create(op, (a, b), a.type))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        op = arith.MulfOp if is_float(a.type) else arith.MuliOp
        return self.emit(create(op, (a, b), a.type))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if is_float(a.type):
            return self.emit(arith.MaximumfOp(a, b))
        if (same := _int_identity(a, b, lowest=True)) is not None:
            return same
        op = arith.MaxUIOp if is_unsigned(a.type) else arith.MaxSIOp
        return self.emit(create(op, (a, b), a.type))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if is_float(a.type):
            return self.emit(arith.MinimumfOp(a, b))
        if (same := _int_identity(a, b, lowest=False)) is not None:
            return same
        op = arith.MinUIOp if is_unsigned(a.type) else arith.MinSIOp
        return self.emit(create(op, (a, b), a.type))

    def shl(self, a: SSAValue, amount: int | SSAValue) -> SSAValue:
        """``a << amount`` (wrapping)."""
        if isinstance(amount, int):
            if amount == 0:
                return a
            amount = self.const(amount, a.type)
        return self.emit(create(arith.ShLIOp, (a, amount), a.type))

    def shrsi(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(create(arith.ShRSIOp, (a, b), a.type))

    def exp(self, a: SSAValue) -> SSAValue:
        return self.emit(math.ExpOp(a))

    def convert(self, value: SSAValue, target: Attribute) -> SSAValue:
        """Element type conversion with the contract's ``relay.cast`` rules:
        int -> int wraps or sign-extends (zero-extends from an unsigned
        type), int -> float rounds to nearest, float -> int rounds toward
        zero, float widening/narrowing rounds.

        ``arith`` computes on signless integers only, so an unsigned value
        (a ``ui8`` loaded from a ``memref<..xui8>``) is first seen as the
        signless type of its width and converted with the unsigned ops
        (``extui``, ``uitofp``), and an unsigned result is computed signless
        and then seen as unsigned (``builtin.unrealized_conversion_cast``,
        a plain C conversion between ``uint8_t`` and ``int8_t``).

        The steps depend on the two types alone: they are planned once per
        pair of type objects met (``conversion_steps``; a type compares and
        hashes through a Python call per parameter) and replayed."""
        source = value.type
        if source is target:
            return value
        known = self._conversions.get((id(source), id(target)))
        if known is None:
            steps = conversion_steps(source, target)
            # (the entry keeps both types alive: their ids stay theirs)
            self._conversions[id(source), id(target)] = (source, target, steps)
        else:
            steps = known[2]
        for kind, cls, type_ in steps:
            if kind == _CREATE:
                assert cls is not None
                value = self.emit(create(cls, (value,), type_))
            elif kind == _CONSTRUCT:
                assert cls is not None
                value = self.emit(cls(value, type_))  # pyright: ignore[reportCallIssue]
            else:
                value = self.emit(
                    UnrealizedConversionCastOp(operands=[value], result_types=[type_])
                )
        return value

    def index_to(self, value: Ix, target: Attribute) -> SSAValue:
        """An index as a scalar of ``target`` (integer or float) type."""
        if isinstance(value, int):
            return self.const(value, target)
        if is_float(target):
            i64 = IntegerType(64)
            return self.convert(self.emit(arith.IndexCastOp(value, i64)), target)
        return self.emit(arith.IndexCastOp(value, target))


def _int_identity(a: SSAValue, b: SSAValue, lowest: bool) -> SSAValue | None:
    """The result of integer ``max(a, b)`` (``lowest``) or ``min(a, b)`` when
    no comparison is needed: ``a`` is ``b``; one is the constant bound of the
    type that is the identity of the reduction (``max(x, INT8_MIN)`` is ``x``,
    e.g. a max over one element); or one is the bound that absorbs it
    (``max(x, INT8_MAX)`` is ``INT8_MAX``, e.g. a clip to ``[127, 127]``).
    The C of such a comparison is always true or false, which gcc rejects
    (-Wtautological-compare, -Wtype-limits)."""
    if a is b:
        return a
    t = a.type
    if not isinstance(t, IntegerType):
        return None
    width = t.width.data
    mask = (1 << width) - 1
    if is_unsigned(t):
        low, high = 0, mask
    else:
        low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    identity, absorbing = (low, high) if lowest else (high, low)
    for constant, other in ((a, b), (b, a)):
        op = constant.owner
        if not (isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr)):
            continue
        value = op.value.value.data
        if value in (identity, identity & mask):
            return other
        if value in (absorbing, absorbing & mask):
            return constant
    return None


_CREATE, _CONSTRUCT, _REINTERPRET = 0, 1, 2
"""A step of ``conversion_steps``: an op built with ``create``, one built
with its constructor ``cls(value, type)``, a reinterpretation
(``unrealized_conversion_cast``)."""

ConversionStep: TypeAlias = "tuple[int, type[IRDLOperation] | None, Attribute]"


def conversion_steps(
    source: Attribute, target: Attribute
) -> tuple[ConversionStep, ...]:
    """The ops ``ScalarArithmetic.convert`` emits to convert a value of type
    ``source`` to ``target``, in order (none when the types are equal)."""
    if source == target:
        return ()
    steps: list[ConversionStep] = []
    unsigned = is_unsigned(source)
    if unsigned:
        assert isinstance(source, IntegerType)
        source = IntegerType(source.width.data)
        steps.append((_REINTERPRET, None, source))
    if is_unsigned(target):
        assert isinstance(target, IntegerType)
        steps += _convert_steps(source, IntegerType(target.width.data), unsigned)
        steps.append((_REINTERPRET, None, target))
    else:
        steps += _convert_steps(source, target, unsigned)
    return tuple(steps)


def _convert_steps(
    source: Attribute, target: Attribute, unsigned: bool
) -> list[ConversionStep]:
    if source == target:
        return []
    if is_float(source) and is_float(target):
        assert isinstance(source, AnyFloat) and isinstance(target, AnyFloat)
        widen = source.bitwidth < target.bitwidth
        return [(_CONSTRUCT, arith.ExtFOp if widen else arith.TruncFOp, target)]
    if is_float(source) and isinstance(target, IntegerType):
        return [(_CONSTRUCT, arith.FPToSIOp, target)]
    if is_float(target):
        op = arith.UIToFPOp if unsigned else arith.SIToFPOp
        return [(_CONSTRUCT, op, target)]
    assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
    if source.width.data > target.width.data:
        return [(_CREATE, arith.TruncIOp, target)]
    if source.width.data < target.width.data:
        return [(_CREATE, arith.ExtUIOp if unsigned else arith.ExtSIOp, target)]
    return []
