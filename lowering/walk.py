"""``walk_ops``: the ops nested in an op, block or region, in the order of
xDSL's ``walk()`` (pre-order), from one explicit stack.

xDSL's ``walk`` is a generator per op, region and block, each yielding from
the next: an op ``d`` loops deep passes through about ``3 d`` suspended
generators on its way out, and the loop nests of a lowered kernel are
deep (a quarter of ``emit-c``'s CPU on MobileNetV2 was those walks). Here
an op costs one link followed, one push and one ``yield``.

For readers only: the ops of a block are listed when the walk reaches it,
so ops inserted into a block the walk has already entered, or erased after
it listed them, are not seen as a lazy walk would see them (materialize
with ``list`` first to rewrite, as with xDSL's walk).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.ir import Block, Operation, Region


def walk_ops(root: Operation | Block | Region) -> Iterator[Operation]:
    """``root.walk()``'s ops, in its order (an op's own first, then those
    of its regions, blocks and ops, in order)."""
    stack: list[Operation] = []
    push = stack.append
    if isinstance(root, Operation):
        push(root)
    else:
        for block in reversed((root,) if isinstance(root, Block) else root.blocks):
            push_ops(block, push)
    pop = stack.pop
    while stack:
        op = pop()
        yield op
        regions = op.regions
        if regions:
            for region in reversed(regions):
                for block in reversed(region.blocks):
                    push_ops(block, push)


def push_ops(block: Block, push: Callable[[Operation], None]) -> None:
    """Push ``block``'s ops, last first (following the links: ``list``
    of ``block.ops`` would walk them twice, once for its length). The
    links are read as the fields behind ``last_op``/``prev_op`` (xDSL
    0.74's properties return them as they are): a property is a Python
    call per op, and every analysis of the lowered kernels walks them."""
    op = block._last_op  # pyright: ignore[reportPrivateUsage]
    while op is not None:
        push(op)
        op = op._prev_op  # pyright: ignore[reportPrivateUsage]


def block_ops(block: Block) -> list[Operation]:
    """``list(block.ops)``, following the link fields (xDSL's iterator is a
    Python ``__next__`` and a ``next_op`` property call per op)."""
    ops: list[Operation] = []
    op = block._first_op  # pyright: ignore[reportPrivateUsage]
    while op is not None:
        ops.append(op)
        op = op._next_op  # pyright: ignore[reportPrivateUsage]
    return ops
