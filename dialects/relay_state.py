"""State that lives across invocations of a model: ``relay.state``.

A streaming model (keyword spotting, noise suppression) keeps tensors from
one call of ``run`` to the next: TFLite's *variable* tensors (an SVDF's
activation history, an LSTM's hidden and cell state). In relay such a tensor
is the result of ``relay.state``::

    %h = relay.state "lstm/h" dense<0> : tensor<1x16xi8>
    %y = relay.svdf %x, %wf, %wt, %b, %h {...} : (...) -> tensor<1x4xi8>

Its value is the state as the previous invocation left it (``value`` the
first time, and after a reset). An operator that updates state (a *stateful*
operator) lists the operand positions it overwrites in its class attribute
``STATE_OPERANDS``; it reads the old state there and writes the new one in
place, before the end of the call. Every other use of a state value only
reads it. Stateful operators are not ``Pure`` (they carry
``MemoryWriteEffect``), so dead code elimination and CSE keep them.

Down the pipeline: ``fuse-ops`` passes a state as an argument of the
primitive function that updates it (the lowered loops store into that
argument); ``aot-lower-main`` gives every ``relay.state`` its own
``tir.allocate_state`` (``state_N``, holding ``value``); ``usmp`` plans those
into a ``persistent`` pool, live for the whole program, and
``tvmgen_<model>_init`` writes the initial values (see ``docs/relay-ops.md``).

TFLite's *resource variables* (``VAR_HANDLE``/``READ_VARIABLE``/
``ASSIGN_VARIABLE``, which TFLite Micro keeps in its persistent arena) are
states too, read and written by two ops that stay in main (no kernel, no
fusion): ``relay.read_state`` copies the state into a new tensor, as TFLite
Micro's ``READ_VARIABLE`` copies the resource into its output, and
``relay.assign_state`` copies a tensor into the state. ``aot-lower-main``
makes each a ``memref.copy`` and keeps the reads and writes of one state in
their source order.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.limits import check_buffer_size, check_nonempty
from usmp.dialects.op_definition import op_definition
from usmp.dialects.relay_fusion import Structural


@op_definition
class StateOp(IRDLOperation):
    """A tensor kept across invocations (a TFLite variable tensor).

    Syntax::

        %s = relay.state "svdf/state" dense<0> : tensor<1x64xi16>

    ``state_name`` names it (unique in the module); ``value`` is its initial
    value (a splat or a full dense), whose type is the result type.
    """

    name = "relay.state"

    traits = traits_def(MemoryAllocEffect(), Structural())

    state_name = prop_def(StringAttr)
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    def __init__(self, state_name: str, value: DenseIntOrFPElementsAttr):
        super().__init__(
            properties={"state_name": StringAttr(state_name), "value": value},
            result_types=[value.type],
        )

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"relay.state: result type {self.result.type} differs from the "
                f"initial value's type {self.value.type}"
            )
        check_nonempty(self.result.type, "relay.state")
        check_buffer_size(self.result.type, "relay.state")
        module = self.get_toplevel_object()
        if module is self:
            return
        for other in module.walk():
            if (
                isinstance(other, StateOp)
                and other is not self
                and other.state_name == self.state_name
            ):
                raise VerifyException(
                    f"relay.state: two states are named '{self.state_name.data}'; "
                    "state names must be unique in the module"
                )

    @classmethod
    def parse(cls, parser: Parser) -> StateOp:
        name = parser.parse_str_literal("state name")
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(
                "relay.state expects its initial value as a dense<...> attribute "
                "with a tensor type",
                pos,
                parser.pos,
            )
        attrs = parser.parse_optional_attr_dict()
        op = cls(name, value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.state_name.data)
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)


@op_definition
class ReadStateOp(IRDLOperation):
    """A copy of a state's current value (TFLite's ``READ_VARIABLE``).

    Syntax::

        %x = relay.read_state %s : tensor<1x4x40xi8>

    Reads the state when it runs: a later ``relay.assign_state`` of the same
    state does not change ``%x``.
    """

    name = "relay.read_state"

    traits = traits_def(MemoryReadEffect(), Structural())

    T: ClassVar = VarConstraint("T", base(TensorType))
    state = operand_def(T)
    result = result_def(T)

    assembly_format = "$state attr-dict `:` type($result)"

    def __init__(self, state: SSAValue):
        super().__init__(operands=[state], result_types=[state.type])


@op_definition
class AssignStateOp(IRDLOperation):
    """Overwrite a state with a tensor (TFLite's ``ASSIGN_VARIABLE``).

    Syntax::

        relay.assign_state %s, %x : tensor<1x4x40xi8>

    ``%s`` must be a ``relay.state``; from here on (and in the next
    invocations, until an other assignment or a reset) the state holds the
    value of ``%x``. No result.
    """

    name = "relay.assign_state"

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), Structural())

    T: ClassVar = VarConstraint("T", base(TensorType))
    state = operand_def(T)
    value = operand_def(T)

    assembly_format = "$state `,` $value attr-dict `:` type($state)"

    def __init__(self, state: SSAValue, value: SSAValue):
        super().__init__(operands=[state, value])

    def verify_(self) -> None:
        if not isinstance(self.state.owner, StateOp):
            raise VerifyException(
                "relay.assign_state: the first operand must be a relay.state"
            )


class StatefulOperator:
    """Mixin of relay operators that update state in place: ``STATE_OPERANDS``
    are the positions of the operands they overwrite (``relay.state``
    values)."""

    STATE_OPERANDS: ClassVar[tuple[int, ...]] = ()


def state_operands(op: Operation) -> tuple[int, ...]:
    """Positions of the operands ``op`` updates in place (none for most ops)."""
    return getattr(type(op), "STATE_OPERANDS", ())


STATE_OPS: list[type[IRDLOperation]] = [StateOp, ReadStateOp, AssignStateOp]
