"""IR conventions and small IR helpers shared by the ``usmp-*`` passes.

Not a pass. The attribute names ``usmp`` writes (beyond those of
``usmp.dialects.tir``), how a buffer's byte size is computed, how the entry
function and pool arguments are found.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FixedBitwidthType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    MAIN_FUNC,
    POOL_ARGS,
    VIRTUAL_DEVICE,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    CallOp,
)
from usmp.lowering.walk import walk_ops


def byte_size(type_: MemRefType, anchor: Operation, what: str) -> int:
    """Bytes of a statically shaped, contiguous memref in the default memory space."""
    if not isinstance(type_.layout, NoneAttr):
        raise located_error(
            anchor,
            f"{what}: {type_} has a layout map; usmp places only contiguous "
            "memrefs with the identity layout",
        )
    if not isinstance(type_.memory_space, NoneAttr):
        raise located_error(
            anchor,
            f"{what}: {type_} is in memory space {type_.memory_space}; usmp places "
            "buffers of the default memory space (choose pools to pin memory)",
        )
    element = type_.get_element_type()
    if not isinstance(element, FixedBitwidthType):
        raise located_error(
            anchor,
            f"{what}: element type {element} has no fixed size in bytes; "
            "expected an integer, float or complex element type",
        )
    count = 1
    for dim in type_.get_shape():
        count *= dim
    return count * element.size


def string_list(attr: Attribute | None) -> list[str]:
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr if isinstance(a, StringAttr)]  # pyright: ignore
    return []


def find_main(module: ModuleOp) -> func.FuncOp:
    mains = [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and MAIN_FUNC in op.attributes
    ]
    if len(mains) != 1:
        raise located_error(
            mains[1] if mains else (module.body.block.first_op or module),
            f"usmp needs exactly one entry function (a func.func with '{MAIN_FUNC}', "
            f"as aot-lower-main produces); found {len(mains)}",
        )
    if not mains[0].body.blocks:
        raise located_error(mains[0], "usmp: the entry function has no body")
    return mains[0]


def is_rewritten(module: ModuleOp) -> bool:
    """Has ``usmp-convert-pool-allocations`` already run on ``module``?"""
    return any(
        isinstance(op, func.FuncOp) and POOL_ARGS in op.attributes for op in module.ops
    )


def merge_arg_attrs(f: func.FuncOp, updates: dict[int, dict[str, Attribute]]) -> None:
    """Add attributes to some arguments of ``f`` (for the passes that record
    buffer info or placements of main's inputs/outputs)."""
    if not updates:
        return
    attrs = (
        [dict(d.data) for d in f.arg_attrs.data]
        if f.arg_attrs is not None
        else [{} for _ in f.args]
    )
    for index, new in updates.items():
        attrs[index].update(new)
    f.arg_attrs = ArrayAttr(DictionaryAttr(d) for d in attrs)


def pool_arguments(f: func.FuncOp) -> dict[SSAValue, str]:
    """``f``'s pool arguments (after the rewrite): trailing arguments named by
    its ``tir.pool_args``."""
    names = string_list(f.attributes.get(POOL_ARGS))
    if not names or not f.body.blocks or len(f.args) < len(names):
        return {}
    return dict(zip(f.args[len(f.args) - len(names) :], names, strict=True))


def attr_list(attr: Attribute | None) -> list[Attribute]:
    return list(attr.data) if isinstance(attr, ArrayAttr) else []  # pyright: ignore


@dataclass(frozen=True)
class ModuleOps:
    """The few ops of a module the usmp analyses look for, found in one walk
    (``of``) instead of one walk of every kernel per analysis.

    Each list is in walk order (``Operation.walk``: pre-order, the order the
    analyses walked in before), so a consumer filtering it sees exactly what
    its own walk saw. Only adding or removing ops of these kinds invalidates
    it (adding index arithmetic, as reversing a loop nest does, or setting
    attributes does not)."""

    definers: Mapping[str, Sequence[Operation]]
    """Per function, its ``tir.allocate``/``allocate_const``/
    ``allocate_state`` and ``memref.view`` ops (``defines_buffer``'s
    candidates)."""
    calls: Mapping[str, Sequence[Operation]]
    """Per function, its ``tir.call``/``func.call`` ops."""
    allocations: Sequence[Operation]
    """Every ``tir.allocate``/``allocate_const``/``allocate_state`` of the
    module, in or outside functions."""
    placed: Sequence[Operation]
    """Every ``func.func`` and every op carrying ``tir.virtual_device``
    (``usmp_pools.module_targets``), the module itself included."""

    @staticmethod
    def of(module: ModuleOp) -> ModuleOps:
        definers: dict[str, list[Operation]] = {}
        calls: dict[str, list[Operation]] = {}
        allocations: list[Operation] = []
        placed: list[Operation] = []
        if VIRTUAL_DEVICE in module.attributes:
            placed.append(module)
        for top in module.ops:
            is_function = isinstance(top, func.FuncOp)
            mine: list[Operation] = []
            called: list[Operation] = []
            if is_function:
                definers[top.sym_name.data] = mine
                calls[top.sym_name.data] = called
            for op in walk_ops(top):
                kind = _op_kind(type(op))
                if kind == "function" or VIRTUAL_DEVICE in op.attributes:
                    placed.append(op)
                if kind == "allocation":
                    allocations.append(op)
                    mine.append(op)
                elif kind == "view":
                    mine.append(op)
                elif kind == "call":
                    called.append(op)
        return ModuleOps(definers, calls, allocations, placed)


@functools.cache
def _op_kind(cls: type[Operation]) -> str:
    """What ``ModuleOps`` keeps of an op of class ``cls`` (once per class:
    ``isinstance`` on xDSL's op classes is slow)."""
    if issubclass(cls, (AllocateOp, AllocateConstOp, AllocateStateOp)):
        return "allocation"
    if issubclass(cls, memref.ViewOp):
        return "view"
    if issubclass(cls, (CallOp, func.CallOp)):
        return "call"
    if issubclass(cls, func.FuncOp):
        return "function"
    return ""
