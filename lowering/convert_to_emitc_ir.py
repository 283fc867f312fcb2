"""The IR edits ``convert-to-emitc`` makes per source op, without the
generic machinery around them: building an op (``lowering/create.py``'s
``create``, shared with ``lower-ops``), inserting the
ops built (``insert_before``), moving the uses of a value to another
(``replace_uses``) and, for an op whose emitc form has the same operands
and result type (most scalar arithmetic), handing its operands, result and
place to the new op (``transplant``).

The conversion builds about 20,000 ops and rebinds about 25,000 values on
MobileNetV2. xDSL's ``Operation.create`` sets the operands and successors
through their property setters and fills the IRDL defaults by reading the
op definition, per op; ``Block``'s
insertion checks that the op holds no block around the insertion point by
walking from the block up to the module (loop nests are deep); and
``SSAValue.replace_all_uses_with`` rewrites each use through the operand
view, which slices the operand tuple three times. Together that was a third
of the conversion's CPU. These functions set the same fields as xDSL 0.74
does (``pyproject.toml`` pins it); ``tests/test_convert_to_emitc_ir.py``
checks that an op built here equals one xDSL builds, field by field, that
the block's links are those xDSL's insertion makes, and that use lists stay
those of ``replace_all_uses_with``, so an xDSL upgrade that changes its
layout fails there, not in the C.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.core import SSAValues
from xdsl.irdl import IRDLOperation
from xdsl.rewriter import InsertPoint

from usmp.lowering.create import link_operands, set_fields

_Op = TypeVar("_Op", bound=IRDLOperation)


def replace_uses(old: SSAValue, new: SSAValue) -> None:
    """``old.replace_all_uses_with(new)``: every use of ``old`` now uses
    ``new`` (each user's operand tuple rebuilt once), and ``new`` takes
    ``old``'s name unless it has one."""
    if old is new:
        return
    use = old.first_use
    old.first_use = None
    # old.remove_use(use); new.add_use(use), inlined: every use moves, and
    # each one's links are set again when it joins ``new``'s list
    while use is not None:
        after = use._next_use  # pyright: ignore[reportPrivateUsage]
        user = use._operation  # pyright: ignore[reportPrivateUsage]
        operands = list(user._operands)  # pyright: ignore[reportPrivateUsage]
        operands[use._index] = new  # pyright: ignore[reportPrivateUsage]
        user._operands = SSAValues(operands)  # pyright: ignore[reportPrivateUsage]
        first = new.first_use
        use._prev_use = None  # pyright: ignore[reportPrivateUsage]
        use._next_use = first  # pyright: ignore[reportPrivateUsage]
        if first is not None:
            first._prev_use = use  # pyright: ignore[reportPrivateUsage]
        new.first_use = use
        use = after
    # (the setter re-validates a name: called only with one to give)
    if new.name_hint is None and (name := old.name_hint) is not None:
        new.name_hint = name


def remove_op(block: Block, op: Operation) -> None:
    """``block.detach_op(op)`` then ``op.drop_all_references()``: ``op``
    leaves ``block`` and its operands' use lists; its results keep theirs
    (the caller checks they have none). An op with regions or successors
    goes through xDSL's own methods."""
    if op.regions or op._successors:  # pyright: ignore[reportPrivateUsage]
        block.detach_op(op)
        op.drop_all_references()
        return
    if op.parent is not block:
        raise ValueError("Cannot detach operation from a different block.")
    _join(block, op._prev_op, op._next_op)  # pyright: ignore[reportPrivateUsage]
    op._prev_op = op._next_op = op.parent = None  # pyright: ignore[reportPrivateUsage]
    _unlink_uses(op)
    op._operand_uses = ()  # pyright: ignore[reportPrivateUsage]
    op._successor_uses = ()  # pyright: ignore[reportPrivateUsage]
    op._successors = ()  # pyright: ignore[reportPrivateUsage]


def append_op(block: Block, op: Operation) -> None:
    """``block.add_op(op)``. An op without regions cannot hold ``block``,
    so the ancestor check (a walk from the block up to the module) is left
    out for it."""
    if op.regions:
        block.add_op(op)
        return
    if op.parent is not None:
        raise ValueError("Can't add to a block an operation already in a block.")
    _link(block, op, block._last_op, None)  # pyright: ignore[reportPrivateUsage]


def _link(
    block: Block, op: Operation, before: Operation | None, after: Operation | None
) -> None:
    """Link ``op`` into ``block`` between the neighbours ``before`` and
    ``after`` (None: the block's start or end), as ``Block`` links it."""
    op.parent = block
    _join(block, before, op)
    _join(block, op, after)


def _join(block: Block, first: Operation | None, second: Operation | None) -> None:
    """``second`` follows ``first`` in ``block``: ``first``'s next op and
    ``second``'s previous one (None: the block's start or end)."""
    if first is None:
        block._first_op = second  # pyright: ignore[reportPrivateUsage]
    else:
        first._next_op = second  # pyright: ignore[reportPrivateUsage]
    if second is None:
        block._last_op = first  # pyright: ignore[reportPrivateUsage]
    else:
        second._prev_op = first  # pyright: ignore[reportPrivateUsage]


def _unlink_uses(op: Operation) -> None:
    """Take ``op``'s operand uses out of their values' use lists (``op``'s
    own fields are left as they are)."""
    operands, uses = op._operands, op._operand_uses  # pyright: ignore[reportPrivateUsage]
    for value, use in zip(operands, uses, strict=True):
        prev = use._prev_use  # pyright: ignore[reportPrivateUsage]
        next_ = use._next_use  # pyright: ignore[reportPrivateUsage]
        if prev is None:
            value.first_use = next_
        else:
            prev._next_use = next_  # pyright: ignore[reportPrivateUsage]
        if next_ is not None:
            next_._prev_use = prev  # pyright: ignore[reportPrivateUsage]


def insert_before(block: Block, ops: Sequence[Operation], existing: Operation) -> None:
    """``block.insert_ops_before(ops, existing)``. An op without regions
    cannot hold ``block``, so the ancestor check is left out for it."""
    if existing.parent is not block:
        raise ValueError("Can't insert operation before operation not in this block")
    for op in ops:
        if op.regions:
            block.insert_op_before(op, existing)
            continue
        if op.parent is not None:
            raise ValueError("Can't add to a block an operation already in a block.")
        _link(block, op, existing._prev_op, existing)  # pyright: ignore[reportPrivateUsage]


def insert_at(point: InsertPoint, op: Operation) -> None:
    """``Rewriter.insert_op(op, point)`` (what ``PatternRewriter.insert``
    does besides telling its listener, which the conversion has not):
    ``op`` before the point's op, or at the end of its block, without the
    ancestor check for an op without regions (``insert_before``,
    ``append_op``)."""
    if point.insert_before is None:
        append_op(point.block, op)
    else:
        insert_before(point.block, (op,), point.insert_before)


def transplant(
    op: Operation,
    cls: type[_Op],
    attributes: dict[str, Attribute],
    operands: Sequence[SSAValue] | None = None,
    **properties: Attribute,
) -> _Op:
    """``op`` (region-less, in a block, one result or none) replaced by a
    ``cls`` with the same result type: what ``create(cls, operands,
    type)``, inserting it before ``op``, ``replace_uses`` of ``op``'s
    result and ``remove_op(op)`` leave, but the new op takes ``op``'s
    result and place in the block instead of building its own and moving
    every use, and without ``operands`` (``None``: the same) ``op``'s
    operand tuple and use objects too. The result's use list keeps its
    order (``replace_uses`` reverses it), and so do the operands' without
    ``operands`` (``create`` puts the new uses first). ``op`` is left
    detached, with no operands, uses or results. The new op has ``op``'s
    location, ``cls``'s default properties and attributes, then
    ``attributes``."""
    new = cls.__new__(cls)
    uses = op._operand_uses  # pyright: ignore[reportPrivateUsage]
    if operands is None:
        for use in uses:
            use._operation = new  # pyright: ignore[reportPrivateUsage]
        new._operands = op._operands  # pyright: ignore[reportPrivateUsage]
        new._operand_uses = uses  # pyright: ignore[reportPrivateUsage]
    else:
        # remove_op's unlinking of op's uses, then create's linking of new's
        _unlink_uses(op)
        link_operands(new, operands)
    results = op.results
    for r in results:
        r.op = new
    new.results = results
    set_fields(new, properties, attributes, op.location)
    block = op.parent
    assert block is not None, "transplant: the op is in no block"
    _link(block, new, op._prev_op, op._next_op)  # pyright: ignore[reportPrivateUsage]
    op._prev_op = op._next_op = op.parent = None  # pyright: ignore[reportPrivateUsage]
    op._operands = op.results = SSAValues()  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    op._operand_uses = ()  # pyright: ignore[reportPrivateUsage]
    return new
