"""``scf`` to ``emitc``: ``scf.for`` -> ``emitc.for``, ``scf.if`` -> ``emitc.if``.

``emitc.for``/``emitc.if`` define no values (MLIR 22), so loop-carried values
and ``scf.if`` results go through C variables, as upstream's SCFToEmitC does:
one ``emitc.variable`` per value before the op, an ``emitc.assign`` where the
region yields, an ``emitc.load`` where the value is read (at the top of the
loop body for iteration arguments, after the op for results).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, Region, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.lowering.convert_to_emitc import FunctionLowering, Handler, convert_type


def _variables(
    fl: FunctionLowering,
    results: Sequence[SSAValue],
    op: Operation,
    carried: Sequence[SSAValue] = (),
) -> list[SSAValue]:
    """One uninitialised C variable per result, named after it (or after the
    loop-carried value it holds)."""
    variables: list[SSAValue] = []
    for k, result in enumerate(results):
        var = fl.result(
            emitc.VariableOp(emitc.LValueType(convert_type(result.type, op)))
        )
        var.name_hint = result.name_hint or (
            carried[k].name_hint if k < len(carried) else None
        )
        variables.append(var)
    return variables


def _lower_body(
    fl: FunctionLowering, block: Block, into: Block, variables: Sequence[SSAValue]
) -> None:
    """Lower ``block`` (ending in ``scf.yield``) into ``into``; the yielded
    values are assigned to ``variables``."""
    terminator = block.last_op
    assert isinstance(terminator, scf.YieldOp)
    fl.lower_ops([op for op in block.ops if op is not terminator], into)
    for var, value in zip(variables, terminator.operands, strict=True):
        assign = emitc.AssignOp(var, fl.value(value))
        assign.location = terminator.location
        into.add_op(assign)
    into.add_op(emitc.YieldOp())


def _load_into(
    fl: FunctionLowering,
    values: Sequence[SSAValue],
    variables: Sequence[SSAValue],
    named: bool = True,
) -> None:
    """Read each variable into the value it stands for; unless ``named`` the
    read stays unnamed (the variable carries the name), so the C printer can
    use the variable itself where that reads the same value."""
    for value, var in zip(values, variables, strict=True):
        loaded = fl.result(emitc.LoadOp(var))
        fl.bind(value, loaded)
        if not named:
            loaded.name_hint = None


def _for(fl: FunctionLowering, op: scf.ForOp) -> None:
    lb, ub, step = fl.value(op.lb), fl.value(op.ub), fl.value(op.step)
    variables = _variables(fl, op.res, op, op.body.block.args[1:])
    for var, init in zip(variables, op.iter_args, strict=True):
        fl.emit(emitc.AssignOp(var, fl.value(init)))
    body = Block(arg_types=[lb.type])
    induction, *iter_args = op.body.block.args
    fl.bind(induction, body.args[0])
    loop = emitc.ForOp(lb, ub, step, Region(body))
    fl.emit(loop)
    outer, fl.block = fl.block, body
    fl.current = op
    _load_into(fl, iter_args, variables, named=False)
    fl.block = outer
    _lower_body(fl, op.body.block, body, variables)
    fl.current = op
    _load_into(fl, op.res, variables, named=False)


def _if(fl: FunctionLowering, op: scf.IfOp) -> None:
    variables = _variables(fl, op.output, op)
    then_block = Block()
    _lower_body(fl, op.true_region.block, then_block, variables)
    else_region = Region()
    if op.false_region.blocks:
        else_block = Block()
        else_region = Region(else_block)
        _lower_body(fl, op.false_region.block, else_block, variables)
    fl.current = op
    fl.emit(emitc.IfOp(fl.value(op.cond), Region(then_block), else_region))
    _load_into(fl, op.output, variables, named=False)


def _unsupported(fl: FunctionLowering, op: Operation) -> None:
    raise located_error(
        op,
        f"'{op.name}' cannot be emitted as C yet; lower it to scf.for / scf.if first",
    )


def _stray_yield(fl: FunctionLowering, op: Operation) -> None:
    raise located_error(op, "scf.yield outside scf.for / scf.if")


HANDLERS: dict[type[Operation], Handler] = {
    scf.ForOp: _for,
    scf.IfOp: _if,
    scf.YieldOp: _stray_yield,
    scf.WhileOp: _unsupported,
    scf.ParallelOp: _unsupported,
}
