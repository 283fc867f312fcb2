"""Memory-aware order of the relay main's calls, for ``aot-lower-main``.

Not a pass: ``aot-lower-main{order=memory}`` (the default) calls
``order_main`` on the relay main before it assigns storage. The steps of
main (each ``relay.call`` and ``relay.device_copy``) are the nodes of
``planning.operator_order``; their tensors are the storages of
``aot_storage`` (a reshape, tuple or ``on_device`` only views a storage, so a
storage is read by every step reading one of its views). Sizes are the bytes
of each storage in the workspace: internal storages always; main's inputs
and outputs only with ``io=True`` (``usmp{use_workspace_io=true}``), else
they are the application's buffers and cost nothing. Constants and states
are not in the workspace. Steps reading or writing one state keep their
source order (an operator updating a state in place, or a
``relay.assign_state`` copying into it, must stay after the earlier readers
and before the later ones).

When an order with a smaller peak exists, main's ops are moved into it:
the steps in the chosen order, every other op (constant, state, tuple,
reshape, ...) just before its first user, in source order, and what only
the terminator uses after the last step. The relay main stays valid SSA.
The result says what was chosen; ``aot-lower-main`` records it on the tir
main (``tir.call_order``).
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.ir import Operation

from usmp.dialects.limits import static_byte_size
from usmp.passes.aot_storage import CallStep, StorageKind, StoragePlan, assign_storage
from usmp.planning.operator_order import (
    DEFAULT_BUDGET,
    OrderResult,
    Tensor,
    best_order,
)


def order_main(
    main: func.FuncOp,
    functions: Mapping[str, func.FuncOp],
    io: bool = False,
    budget: int = DEFAULT_BUDGET,
    plan: StoragePlan | None = None,
) -> OrderResult:
    """Reorder ``main``'s ops into the order of least peak (see the module).
    ``plan``: ``assign_storage(main, functions)`` if the caller has it; it
    stays valid when the result is unchanged."""
    if plan is None:
        plan = assign_storage(main, functions)
    steps = [op for op in main.body.block.ops if op in plan.steps_of]
    index = {op: i for i, op in enumerate(steps)}
    consumers: dict[int, set[int]] = {}
    states: dict[int, list[int]] = {}
    for op, node in index.items():
        for step in plan.steps_of[op]:
            reads = step.inputs if isinstance(step, CallStep) else (step.source,)
            for view in reads:
                consumers.setdefault(view.storage.index, set()).add(node)
            written = () if isinstance(step, CallStep) else (step.destination,)
            for view in (*reads, *written):
                if view.storage.kind is StorageKind.STATE:
                    users = states.setdefault(view.storage.index, [])
                    if not users or users[-1] != node:
                        users.append(node)
    returned = {view.storage.index for view in plan.returns}
    tensors: list[Tensor] = []
    for storage in plan.storages:
        if storage.kind in (StorageKind.CONSTANT, StorageKind.STATE):
            continue
        is_io = storage.kind is StorageKind.INPUT or storage.index in returned
        size = static_byte_size(storage.type) or 0
        tensors.append(
            Tensor(
                size if io or not is_io else 0,
                None if storage.producer is None else index[storage.producer],
                tuple(sorted(consumers.get(storage.index, ()))),
                keep=storage.index in returned,
            )
        )
    edges = [e for u in states.values() for e in zip(u, u[1:], strict=False)]
    result = best_order(len(steps), tensors, edges, budget)
    if result.changed:
        _move(main, [steps[v] for v in result.order])
    return result


def _move(main: func.FuncOp, steps: list[Operation]) -> None:
    """Put ``main``'s ops in the order of ``steps`` (see the module)."""
    block = main.body.block
    terminator = block.last_op
    assert terminator is not None
    placed: set[Operation] = set()
    order: list[Operation] = []

    def place(op: Operation) -> None:
        # operands first (iteratively: the chains of views can be long)
        stack: list[tuple[Operation, bool]] = [(op, False)]
        while stack:
            current, ready = stack.pop()
            if current in placed:
                continue
            if ready:
                placed.add(current)
                order.append(current)
                continue
            stack.append((current, True))
            for operand in reversed(current.operands):
                owner = operand.owner
                if isinstance(owner, Operation) and owner.parent is block:
                    if owner not in placed:
                        stack.append((owner, False))

    for step in steps:
        place(step)
    for op in block.ops:
        if op is not terminator:
            place(op)
    for op in order:
        op.detach()
        block.insert_op_before(op, terminator)
