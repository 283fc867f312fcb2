"""``scf`` to ``emitc``: ``scf.for`` -> ``emitc.for``, ``scf.if`` -> ``emitc.if``.

``emitc.for``/``emitc.if`` define no values (MLIR 22), so loop-carried values
and ``scf.if`` results go through C variables, as upstream's SCFToEmitC does:
one ``emitc.variable`` per value before the op, an ``emitc.assign`` where the
region yields, an ``emitc.load`` where the value is read (at the top of the
loop body for iteration arguments, after the op for results).

The patterns move the regions' blocks into the new op, their ops unchanged
(the loop body's arguments replaced by the induction variable): the walker
converts them next (it visits an op before the ops nested in it).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.lowering.convert_to_emitc_common import (
    ConversionState,
    EmitcPattern,
    OpLowering,
    assign_op,
    convert_type,
    load_op,
    variable_op,
)
from usmp.lowering.convert_to_emitc_ir import insert_before, remove_op
from usmp.lowering.convert_to_emitc_memref import copy_run
from usmp.lowering.create import create, create_with_regions


def _variables(
    lw: OpLowering, results: Sequence[SSAValue], carried: Sequence[SSAValue] = ()
) -> list[SSAValue]:
    """One uninitialised C variable per result, named after it (or after the
    loop-carried value it holds)."""
    variables: list[SSAValue] = []
    for k, result in enumerate(results):
        type_ = lw.state.lvalue_type(convert_type(result.type, lw.op))
        var = lw.result(variable_op(type_))
        var.name_hint = result.name_hint or (
            carried[k].name_hint if k < len(carried) else None
        )
        variables.append(var)
    return variables


def _finish_body(lw: OpLowering, block: Block, variables: Sequence[SSAValue]) -> None:
    """End ``block`` (ending in ``scf.yield``) as the body of an emitc op:
    the yielded values assigned to ``variables``, then ``emitc.yield``."""
    terminator = block.last_op
    assert isinstance(terminator, scf.YieldOp)
    # (the rewriter's insert and erase, without its listener and checks:
    # region-less ops, a terminator with no results)
    yielded = terminator._operands  # pyright: ignore[reportPrivateUsage]
    ends: list[Operation] = [
        assign_op(var, lw.value(value))
        for var, value in zip(variables, yielded, strict=True)
    ]
    for assign in ends:
        assign.location = terminator.location
    ends.append(create(emitc.YieldOp, ()))
    insert_before(block, ends, terminator)
    remove_op(block, terminator)
    lw.rewriter.has_done_action = True


def _take_body(lw: OpLowering, region: Region, variables: Sequence[SSAValue]) -> Block:
    """The block of ``region``, taken out of it (its ops stay in it, not
    moved one by one) and ended by ``_finish_body``."""
    block = region.detach_block(region.block)
    _finish_body(lw, block, variables)
    return block


def _loads(lw: OpLowering, variables: Sequence[SSAValue]) -> list[SSAValue]:
    """Read each variable. The reads stay unnamed (the variable carries the
    name), so the C printer can use the variable itself where that reads the
    same value."""
    return [lw.result(load_op(var)) for var in variables]


def _unnamed(values: Sequence[SSAValue]) -> None:
    for value in values:
        value.name_hint = None


class ForOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        if copy_run(lw, op):
            lw.replace()
            return
        (region,) = op.regions  # (the fields behind the descriptors)
        body = region.detach_block(region.block)  # the ops stay where they are
        induction, *iter_args = body.args
        lb, ub, step, *inits = op._operands  # pyright: ignore[reportPrivateUsage]
        variables = _variables(lw, op.results, iter_args)
        for var, init in zip(variables, inits, strict=True):
            lw.emit(assign_op(var, lw.value(init)))
        bounds = (lb, ub, step)
        lw.emit(create_with_regions(emitc.ForOp, bounds, (), [Region(body)]))
        outer, lw.at = lw.at, InsertPoint.at_start(body)
        lw.bind(induction, body.insert_arg(lb.type, 0))
        carried = _loads(lw, variables)
        lw.replace_block_args(iter_args, carried)
        _unnamed(carried)
        lw.at = outer
        for arg in (induction, *iter_args):
            body.erase_arg(arg)
        _finish_body(lw, body, variables)
        results = _loads(lw, variables)
        lw.replace(*results)
        _unnamed(results)


class IfOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.IfOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        variables = _variables(lw, op.output)
        then_block = _take_body(lw, op.true_region, variables)
        else_region = Region()
        if op.false_region.blocks:
            else_region = Region(_take_body(lw, op.false_region, variables))
        lw.emit(emitc.IfOp(lw.value(op.cond), Region(then_block), else_region))
        results = _loads(lw, variables)
        lw.replace(*results)
        _unnamed(results)


class UnsupportedScfOpLowering(RewritePattern):
    """``scf.while``/``scf.parallel``, and a ``scf.yield`` the ``for``/``if``
    patterns did not take: located errors."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, scf.YieldOp):
            raise located_error(op, "scf.yield outside scf.for / scf.if")
        if isinstance(op, scf.WhileOp | scf.ParallelOp):
            raise located_error(
                op,
                f"'{op.name}' cannot be emitted as C yet; lower it to scf.for / "
                "scf.if first",
            )


def scf_patterns(state: ConversionState) -> list[RewritePattern]:
    return [ForOpLowering(state), IfOpLowering(state), UnsupportedScfOpLowering()]
