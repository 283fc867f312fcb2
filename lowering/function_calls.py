"""``FunctionCalls``: the calls each function of an emitc module makes, found
by one walk of the function and kept for the rest of one ``emit-c``.

Three readers of the same module want them: the C names (``metadata.
module_c_names``: the opaque callees are external names no symbol may
take), the prototypes printed before each function (``c_library``: its
``emitc.call`` callees) and the DSP preludes (``c_library``: whether an
operator calls a helper). Each walked every function on its own, and the
functions' loop nests are most of the module: one walk per function serves
all three."""

from __future__ import annotations

from xdsl.ir import Operation

from usmp.dialects import emitc
from usmp.lowering.walk import push_ops


class FunctionCalls:
    """The calls of each function asked about, walked once per function
    (the module must not change while this is used)."""

    def __init__(self) -> None:
        self._found: dict[Operation, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def _of(self, f: Operation) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = self._found.get(f)
        if found is None:
            opaque: list[str] = []
            callees: list[str] = []
            # (``walk_ops``' walk, inlined: no generator resumed per op)
            stack = [f]
            push, pop = stack.append, stack.pop
            while stack:
                op = pop()
                kind = type(op)  # (final classes: no ABC check per op)
                if kind is emitc.CallOpaqueOp:
                    opaque.append(op.properties["callee"].data)  # pyright: ignore[reportAttributeAccessIssue]
                elif kind is emitc.CallOp:
                    callees.append(op.properties["callee"].root_reference.data)  # pyright: ignore[reportAttributeAccessIssue]
                regions = op.regions
                if regions:
                    for region in reversed(regions):
                        for block in reversed(region.blocks):
                            push_ops(block, push)
            found = self._found[f] = (tuple(opaque), tuple(callees))
        return found

    def opaque(self, f: Operation) -> tuple[str, ...]:
        """The callees of ``f``'s ``emitc.call_opaque`` ops, in walk order."""
        return self._of(f)[0]

    def callees(self, f: Operation) -> tuple[str, ...]:
        """The callees of ``f``'s ``emitc.call`` ops, in walk order."""
        return self._of(f)[1]
