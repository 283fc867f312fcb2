"""One way to build an op without xDSL's IRDL constructor, for the hot
paths of the lowering: ``lower-ops``' element builders and the patterns of
``convert-to-emitc`` create one op per scalar operation of every kernel.

xDSL's ``Operation.create`` sets the operands and successors through their
property setters and fills the IRDL defaults by reading the op definition,
per op, and the IRDL constructor's argument handling costs twice that
(xDSL 0.74). ``create`` sets the same fields as xDSL 0.74's ``create`` does
(``pyproject.toml`` pins it); ``tests/test_convert_to_emitc_ir.py`` checks
that an op built here equals one xDSL builds, field by field, so an xDSL
upgrade that changes its layout fails there, not in the C. Nothing is
checked here; the module is verified after the last step with
``--verify-final`` (always in the test suite) and after every step with
``--verify-each``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TypeVar

from xdsl.dialects.builtin import UNKNOWN_LOC, LocationAttr
from xdsl.ir import Attribute, Operation, OpResult, Region, SSAValue, Use
from xdsl.ir.core import SSAValues
from xdsl.irdl import IRDLOperation, OptionalDef

_Op = TypeVar("_Op", bound=IRDLOperation)


@cache
def defaults(cls: type[IRDLOperation]) -> tuple[dict[str, Attribute], ...]:
    """The default properties and attributes of ``cls``'s definition (what
    ``IRDLOperation.__post_init__`` fills in)."""
    op_def = cls.get_irdl_definition()
    return tuple(
        {
            name: d.default_value
            for name, d in defs.items()
            if not isinstance(d, OptionalDef) and d.default_value is not None
        }
        for defs in (op_def.properties, op_def.attributes)
    )


def create(
    cls: type[_Op],
    operands: Sequence[SSAValue],
    result_type: Attribute | None = None,
    **properties: Attribute,
) -> _Op:
    """``cls`` with these operands, result type and properties: the op
    xDSL's ``Operation.create`` builds (no regions, no successors, unknown
    location: the caller sets the op's own), unchecked as there."""
    op = cls.__new__(cls)
    link_operands(op, operands)
    op.results = SSAValues(
        () if result_type is None else (OpResult(result_type, op, 0),)
    )
    # (``set_fields`` with no attributes, inlined: once per op built)
    default_properties, default_attributes = defaults(cls)
    if default_properties:
        for name, value in default_properties.items():
            properties.setdefault(name, value)
    op.properties = properties  # (``**properties``: a new dict per call)
    op.attributes = {**default_attributes}
    op.location = UNKNOWN_LOC
    op._successors = ()  # pyright: ignore[reportPrivateUsage]
    op._successor_uses = ()  # pyright: ignore[reportPrivateUsage]
    op.regions = ()
    return op


def set_fields(
    op: IRDLOperation,
    properties: dict[str, Attribute],
    attributes: dict[str, Attribute],
    location: LocationAttr,
) -> None:
    """The fields ``create`` sets besides operands and results: the given
    properties, then the definition's defaults (xDSL's order); the default
    attributes, then ``attributes``; ``location``; no successors, no
    regions."""
    default_properties, default_attributes = defaults(type(op))
    if default_properties:
        properties = {**properties}
        for name, value in default_properties.items():
            properties.setdefault(name, value)
    op.properties = properties
    op.attributes = {**default_attributes, **attributes}
    op.location = location
    op._successors = ()  # pyright: ignore[reportPrivateUsage]
    op._successor_uses = ()  # pyright: ignore[reportPrivateUsage]
    op.regions = ()


def create_with_regions(
    cls: type[_Op],
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    regions: Sequence[Region],
    **properties: Attribute,
) -> _Op:
    """``create`` for an op with ``regions`` (unattached, each taken by the
    op as ``Operation.add_region`` takes it) and any number of results:
    loops and conditionals, whose bodies the builder has filled."""
    op = create(cls, operands, None, **properties)
    op.results = SSAValues(
        [OpResult(type_, op, k) for k, type_ in enumerate(result_types)]
    )
    for region in regions:
        op.add_region(region)
    return op


def link_operands(op: Operation, operands: Sequence[SSAValue]) -> None:
    """``op``'s operands set as ``Operation.create`` sets them: each
    operand's new use first in its use list (``value.add_use(Use(op, k))``,
    inlined)."""
    values = SSAValues(operands)
    uses: list[Use] = []
    for k, value in enumerate(values):
        first = value.first_use
        use = Use(op, k, None, first)
        if first is not None:
            first._prev_use = use  # pyright: ignore[reportPrivateUsage]
        value.first_use = use
        uses.append(use)
    op._operands = values  # pyright: ignore[reportPrivateUsage]
    op._operand_uses = tuple(uses)  # pyright: ignore[reportPrivateUsage]
