"""Lowering of a post-``usmp`` module to the ``emitc`` dialect (the engine of
the ``convert-to-emitc`` pass; see ``passes/convert_to_emitc.py`` for the
contract).

Structured like MLIR's ``*ToEmitC`` conversions: one rewrite pattern per
source op (``convert_to_emitc_{arith,memref,scf,func}.py``; ops that lower
alike share one pattern over a table), a type converter
(``EmitcTypeConverter`` in ``convert_to_emitc_common.py``) and one
ordered walk over the module, in pre-order and without re-walking (every
op is converted once; no pattern matches what patterns build:
``pattern_dispatch.rewrite_in_order``), each op tried only on the patterns
of its class (``pattern_dispatch.TypeDispatchApplier``). Types change in place: memref
values are materialised with ``builtin.unrealized_conversion_cast`` while
their users still need the memref type, and the casts are removed when the
walk ends.

``convert_module`` then finishes: materialisations removed, dead values of
each converted function erased, includes and the pool summary added
(``convert_to_emitc_module.py``, the only part that reads ``tir`` pool
attributes).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import RewritePattern

from usmp.dialects import emitc
from usmp.lowering.convert_to_emitc_arith import arith_patterns
from usmp.lowering.convert_to_emitc_common import (
    ALIGNMENT_ATTR,
    MEMREF_ARG_ATTR,
    NAME_ATTR,
    POOL_ATTR,
    POOLS_ATTR,
    ConversionState,
    convert_scalar_type,
    convert_type,
)
from usmp.lowering.convert_to_emitc_custom import CustomCallLowering
from usmp.lowering.convert_to_emitc_devices import finish_status_functions
from usmp.lowering.convert_to_emitc_func import func_patterns, unsupported_op_pattern
from usmp.lowering.convert_to_emitc_ir import remove_op, replace_uses
from usmp.lowering.convert_to_emitc_library import add_library
from usmp.lowering.convert_to_emitc_memref import find_packed_reads, memref_patterns
from usmp.lowering.convert_to_emitc_module import (
    GlobalOpLowering,
    ModuleInfo,
    finish_module,
)
from usmp.lowering.convert_to_emitc_packed import PackedCallLowering, PackedCalls
from usmp.lowering.convert_to_emitc_scf import scf_patterns
from usmp.lowering.gc_pause import cyclic_gc_paused
from usmp.lowering.pattern_dispatch import TypeDispatchApplier, rewrite_in_order
from usmp.lowering.walk import walk_ops

__all__ = [
    "ALIGNMENT_ATTR",
    "MEMREF_ARG_ATTR",
    "NAME_ATTR",
    "POOL_ATTR",
    "POOLS_ATTR",
    "convert_module",
    "convert_scalar_type",
    "convert_type",
]


def conversion_patterns(
    state: ConversionState, info: ModuleInfo, packed: PackedCalls | None = None
) -> list[RewritePattern]:
    """Every pattern, the most frequent source ops first; the last one
    reports ops that none converts."""
    return [
        *memref_patterns(state)[:2],  # load, store
        *arith_patterns(state),
        *memref_patterns(state)[2:],
        *scf_patterns(state),
        PackedCallLowering(state, packed or PackedCalls()),
        CustomCallLowering(state),
        *func_patterns(state, info),
        GlobalOpLowering(info, state),
        unsupported_op_pattern(state),
    ]


_VALUE_OPS = frozenset(
    (
        emitc.ConstantOp,
        emitc.LiteralOp,
        emitc.VariableOp,
        emitc.LoadOp,
        emitc.SubscriptOp,
        emitc.GetGlobalOp,
        emitc.AddOp,
    )
)
_EXPRESSIONS = emitc.CastOp.__module__  # arithmetic, comparisons, casts: pure


def _dead(op: Operation) -> bool:
    """Is ``op`` a value nobody uses, whose computation does nothing else
    (constants whose uses were folded into an index, unread loads...)?"""
    results = op.results
    if len(results) != 1 or next(iter(results)).first_use is not None:
        return False
    kind = type(op)
    if kind is emitc.ApplyOp:
        return op.applicableOperator.data == "&"  # pyright: ignore[reportAttributeAccessIssue]
    return kind in _VALUE_OPS or kind.__module__ == _EXPRESSIONS


def erase_dead_values(block: Block) -> None:
    """Erase unused side-effect-free ops in ``block`` and nested blocks.

    By kind rather than with xDSL's ``dce``: the emitc ops carry no memory
    effect traits (as upstream's, and xDSL's own ``emitc.add``/``apply`` could
    not get any), and marking loads or variables ``Pure`` would let ``cse``
    merge them.

    In the order of ``reversed(list(walk_ops(block)))`` (a user before the
    ops it uses), following the blocks' links from their last op: an op's
    nested blocks, last first, before the op itself."""
    op = block._last_op  # pyright: ignore[reportPrivateUsage]
    while op is not None:
        before = op._prev_op  # pyright: ignore[reportPrivateUsage]
        regions = op.regions
        if regions:
            for region in reversed(regions):
                for inner in reversed(region.blocks):
                    erase_dead_values(inner)
        # (``_dead``'s first test, inlined: most ops have a used result)
        for result in op.results:
            if result.first_use is None and _dead(op):
                op.detach()
                op.erase()
            break
        op = before


def _progress(
    module: ModuleOp, reached: Callable[[int, int, str], None]
) -> Callable[[Operation], None]:
    """Tells ``reached`` which top-level op of the module the walk is at
    (``rewrite_in_order`` calls it with those only)."""
    tops = {op: k for k, op in enumerate(module.ops)}

    def visit(op: Operation) -> None:
        if (k := tops.get(op)) is not None:
            name = op.get_attr_or_prop("sym_name")
            what = name.data if isinstance(name, StringAttr) else op.name
            reached(k + 1, len(tops), what)

    return visit


def convert_module(
    module: ModuleOp, reached: Callable[[int, int, str], None] | None = None
) -> None:
    """Replace every function and global of ``module`` by its emitc form.
    ``reached`` hears ``(k, n, name)`` as the conversion reaches the
    ``k``-th of the module's ``n`` top-level ops (progress)."""
    info = ModuleInfo.of(module)
    state = ConversionState()
    packed = PackedCalls()
    applier = TypeDispatchApplier(conversion_patterns(state, info, packed))
    visit = None if reached is None else _progress(module, reached)
    ops = list(walk_ops(module.body))  # one walk for both
    state.packed = find_packed_reads(ops)
    with cyclic_gc_paused():
        rewrite_in_order(module.body, applier, visit, ops)
        for cast in state.casts:
            (pointer,), (memref_value,) = cast._operands, cast.results  # pyright: ignore[reportPrivateUsage]
            replace_uses(memref_value, pointer)
            block = cast.parent
            assert block is not None, "a materialisation outside the IR"
            remove_op(block, cast)  # (``detach`` and ``erase``: no uses left)
        packed.finish(module)
        finish_status_functions(state)
        for f in state.functions:
            erase_dead_values(f.body.block)
    finish_module(module, info, state.includes, state.helpers)
    add_library(module)
