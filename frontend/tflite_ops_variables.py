"""Resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE.

How TFLite Micro runs them (``var_handle.cc``, ``read_variable.cc``,
``assign_variable.cc``, ``call_once.cc``, ``micro_resource_variable.cc``):
``VAR_HANDLE`` names a variable by its ``shared_name`` (the handle is a
resource tensor holding its id; every subgraph sees the same variable under
the same name); the first ``ASSIGN_VARIABLE`` prepared (subgraph 0's first,
else the init subgraph's) allocates its buffer in the persistent arena and
fills it with the byte ``int8(zero_point)`` of the assigned tensor (0 when
it has no quantisation); ``CALL_ONCE`` runs its init subgraph on the first
invocation only; ``READ_VARIABLE`` copies the buffer into its output and
``ASSIGN_VARIABLE`` copies its input into the buffer.

Here every variable used by subgraph 0 is a ``relay.state`` (one per
``shared_name``, emitted at its first ``VAR_HANDLE``) whose initial value is
what the first invocation sees: the default fill, then what the init
subgraphs of the ``CALL_ONCE`` operators assign, folded at compile time. An
init subgraph may hold only ``VAR_HANDLE`` and ``ASSIGN_VARIABLE`` of
constants, and ``CALL_ONCE`` must come before any read or assignment of a
variable. ``READ_VARIABLE`` is ``relay.read_state``, ``ASSIGN_VARIABLE``
``relay.assign_state``; every read and assignment of a variable has the
variable's type (TFLite Micro copies bytes and checks only their count; a
different type or shape is refused here). ``tvmgen_<model>_init`` writes the
initial values (a fresh interpreter); TFLite Micro's ``Reset`` instead
fills the buffers with their default byte and does not run ``CALL_ONCE``
again, which differs only where an init subgraph assigns other values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from usmp.dialects.relay_state import AssignStateOp, ReadStateOp
from usmp.frontend.builder import RelayBuilder, dense_attr
from usmp.frontend.tflite_ops import register
from usmp.frontend.tflite_reader import (
    Model,
    Operator,
    Subgraph,
    Tensor,
    TFLiteImportError,
)


@dataclass(frozen=True)
class Variable:
    """A resource variable of subgraph 0: its name, its tensor type (dtype
    and shape) and its value when the first invocation starts."""

    name: str
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    initial: npt.NDArray[Any]


def _shared_name(op: Operator) -> str:
    raw = op.options.SharedName() if op.options is not None else None
    return raw.decode("utf-8", "replace") if raw else ""


def _graph(model: Model, k: int) -> tuple[tuple[Tensor, ...], tuple[Operator, ...]]:
    if k == 0:
        return model.tensors, model.operators
    sub: Subgraph = model.subgraphs[k - 1]
    return sub.tensors, sub.operators


def _handles(model: Model, k: int) -> dict[int, str]:
    """Resource tensor -> variable name, for the VAR_HANDLEs of subgraph k."""
    _, operators = _graph(model, k)
    return {
        op.outputs[0]: _shared_name(op)
        for op in operators
        if op.opcode == "VAR_HANDLE" and op.outputs
    }


def _uses(
    model: Model, k: int, handles: dict[int, str]
) -> list[tuple[Operator, str, Tensor]]:
    """(operator, variable, tensor read or assigned) of the READ_VARIABLE and
    ASSIGN_VARIABLE operators of subgraph k, in order."""
    tensors, operators = _graph(model, k)
    found: list[tuple[Operator, str, Tensor]] = []
    for op in operators:
        if op.opcode not in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
            continue
        position = 0 if op.opcode == "READ_VARIABLE" else 1
        resource = op.inputs[0] if op.inputs else -1
        if resource not in handles:
            raise model.op_error(
                op,
                "input 0 must be the resource of a VAR_HANDLE of the same subgraph",
            )
        if op.opcode == "ASSIGN_VARIABLE":
            if len(op.inputs) < 2 or op.inputs[1] < 0:
                raise model.op_error(op, "input 1 (the value) is missing")
            tensor = tensors[op.inputs[position]]
        else:
            if not op.outputs:
                raise model.op_error(op, "output 0 is missing")
            tensor = tensors[op.outputs[0]]
        if tensor.dtype is None:
            raise model.op_error(
                op, f"tensor '{tensor.name}' has unsupported type {tensor.type_name}"
            )
        found.append((op, handles[resource], tensor))
    return found


def resource_variables(model: Model) -> dict[str, Variable]:
    """The variables subgraph 0 reads or assigns, by name (see the module
    doc); a ``TFLiteImportError`` names the operator that breaks a rule."""
    main_handles = _handles(model, 0)
    main_uses = _uses(model, 0, main_handles)
    first: dict[str, Tensor] = {}
    for op, name, tensor in main_uses:
        known = first.setdefault(name, tensor)
        if (known.dtype, known.shape) != (tensor.dtype, tensor.shape):
            raise model.op_error(
                op,
                f"variable '{name}' is {known.type_name}{list(known.shape)} "
                f"elsewhere, here {tensor.type_name}{list(tensor.shape)}; every read "
                "and assignment of a variable must have one type and shape",
            )
    calls = [op for op in model.operators if op.opcode == "CALL_ONCE"]
    inits: list[tuple[Operator, int]] = []
    for call in calls:
        k = int(call.options.InitSubgraphIndex()) if call.options is not None else 0
        if not 0 < k <= len(model.subgraphs):
            raise model.op_error(
                call,
                f"init_subgraph_index {k} does not name another subgraph (the model "
                f"has {len(model.subgraphs) + 1})",
            )
        early = [op for op, _, _ in main_uses if op.index < call.index]
        if early:
            raise model.op_error(
                call,
                f"operator {early[0].index} ({early[0].opcode}) uses a variable before "
                "this CALL_ONCE; the initialisation must come first",
            )
        inits.append((call, k))
    # the tensor whose zero point fills a variable: its first ASSIGN_VARIABLE
    # in TFLM's Prepare order (subgraph 0, then the others by index)
    defaults: dict[str, Tensor] = {}
    for k in range(len(model.subgraphs) + 1):
        handles = main_handles if k == 0 else _handles(model, k)
        for op, name, tensor in _uses(model, k, handles) if k == 0 or handles else ():
            if op.opcode == "ASSIGN_VARIABLE":
                defaults.setdefault(name, tensor)
    for op, name, _ in main_uses:
        if name not in defaults:
            raise model.op_error(
                op,
                f"variable '{name}' is read but never assigned (TFLite Micro "
                "allocates a variable at its first ASSIGN_VARIABLE)",
            )
    assigned: dict[str, npt.NDArray[Any]] = {}
    for call, k in inits:
        handles = _handles(model, k)
        _, operators = _graph(model, k)
        for op in operators:
            if op.opcode not in ("VAR_HANDLE", "ASSIGN_VARIABLE"):
                raise model.op_error(
                    op,
                    f"the init subgraph {k} of CALL_ONCE (operator {call.index}) may "
                    "only hold VAR_HANDLE and ASSIGN_VARIABLE of constants",
                )
        for op, name, tensor in _uses(model, k, handles):
            if name not in first:
                continue  # a variable subgraph 0 never uses
            want = first[name]
            if tensor.data is None:
                raise model.op_error(
                    op,
                    f"variable '{name}' is initialised from tensor '{tensor.name}', "
                    "which is not a constant; an init subgraph may only assign "
                    "constants",
                )
            if (tensor.dtype, tensor.shape) != (want.dtype, want.shape):
                raise model.op_error(
                    op,
                    f"variable '{name}' is {want.type_name}{list(want.shape)} in "
                    f"subgraph 0, initialised with {tensor.type_name}"
                    f"{list(tensor.shape)}",
                )
            assigned[name] = tensor.data
    variables: dict[str, Variable] = {}
    for name, t in first.items():
        assert t.dtype is not None
        initial = assigned.get(name)
        if initial is None:
            initial = _default_fill(defaults[name], t)
        variables[name] = Variable(name, t.dtype, t.shape, np.array(initial))
    return variables


def _default_fill(prepared: Tensor, t: Tensor) -> npt.NDArray[Any]:
    """TFLite Micro's fill of a new variable: every byte ``int8(zero point)``
    of the tensor its first ASSIGN_VARIABLE prepares (0 unquantised)."""
    assert t.dtype is not None
    zero = prepared.quantization.zero_point if prepared.quantization else 0
    count = int(np.prod(t.shape, dtype=np.int64)) * t.dtype.itemsize
    filled = np.full(count, np.int8(np.int64(zero).astype(np.int8)).view(np.uint8))
    return filled.view(t.dtype).reshape(t.shape)


def convert_var_handle(b: RelayBuilder) -> None:
    """The handle is the variable's ``relay.state`` (unused variables have
    none)."""
    name = _shared_name(b.operator)
    variable = resource_variables(b.model).get(name)
    if variable is None:
        return
    state = b.named_state(name, dense_attr(variable.initial))
    b.bind(b.output_tensor(0), state)


def convert_read_variable(b: RelayBuilder) -> None:
    state = b.value(b.required_input(0))
    b.bind(b.output_tensor(0), b.emit(ReadStateOp(state)))


def convert_assign_variable(b: RelayBuilder) -> None:
    state = b.value(b.required_input(0))
    b.emit_effect(AssignStateOp(state, b.value(b.required_input(1))))


def convert_call_once(b: RelayBuilder) -> None:
    """Its effect is the variables' initial values (``resource_variables``)."""
    resource_variables(b.model)  # the checks of the init subgraph


register(
    {
        "VAR_HANDLE": convert_var_handle,
        "READ_VARIABLE": convert_read_variable,
        "ASSIGN_VARIABLE": convert_assign_variable,
        "CALL_ONCE": convert_call_once,
    }
)

__all__ = ["TFLiteImportError", "Variable", "resource_variables"]
