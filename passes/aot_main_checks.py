"""What ``aot-lower-main`` accepts in the relay ``main`` (checks only).

``check_main``: one block of ``relay.call``/``constant``/``state``/
``read_state``/``assign_state``/``tuple``/
``tuple_get_item``/``on_device``/``device_copy``/``reshape``, contiguous
``strided_slice`` (views, see ``relay_ops.is_view``) and ``func.return``;
control flow, unlowered relay operators and other ops are located errors
saying what to run first. ``check_callee``: a ``relay.call``
in main calls a tir prim func (or an external declaration) whose memref
signature is the call's flattened operands then results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Operation

from usmp.diagnostics import located_error
from usmp.dialects import relay
from usmp.dialects.relay_ops import is_view
from usmp.dialects.relay_state import AssignStateOp, ReadStateOp, StateOp
from usmp.dialects.tir import PRIM_FUNC

SUPPORTED_OPS = (
    "relay.call, relay.constant, relay.state, relay.read_state, "
    "relay.assign_state, relay.tuple, relay.tuple_get_item, "
    "relay.on_device, relay.device_copy, relay.reshape, a relay.strided_slice "
    "selecting one contiguous block in order, and func.return"
)


_ACCEPTED = (
    relay.CallOp,
    relay.ConstantOp,
    StateOp,
    ReadStateOp,
    AssignStateOp,
    relay.TupleOp,
    relay.TupleGetItemOp,
    relay.OnDeviceOp,
    relay.DeviceCopyOp,
    func.ReturnOp,
)


def _check_op_kind(op: Operation) -> None:
    if isinstance(op, _ACCEPTED) or is_view(op):
        return
    if op.regions or op.successors:
        raise located_error(
            op,
            f"'{op.name}' is control flow, which aot-lower-main does not support "
            f"(relay 'if' is rejected as in TVM); main may only contain "
            f"{SUPPORTED_OPS}",
        )
    if op.dialect_name() == "relay":
        raise located_error(
            op,
            f"'{op.name}' must first be fused into a primitive function and lowered "
            f"to a tir prim func (fuse-ops, lower-ops); main may only contain "
            f"{SUPPORTED_OPS}",
        )
    raise located_error(
        op,
        f"'{op.name}' is not supported in main; main may only contain {SUPPORTED_OPS}",
    )


def check_callee(
    call: relay.CallOp,
    functions: Mapping[str, func.FuncOp],
    inputs: Sequence[MemRefType],
    outputs: Sequence[MemRefType],
) -> str:
    """The callee's name, once known to be a tir prim func or declaration
    taking ``inputs`` then ``outputs``."""
    name = call.callee.string_value()
    callee = functions.get(name)
    if callee is None:
        raise located_error(
            call, f"relay.call to @{name}, which is not a function of the module"
        )
    is_prim = PRIM_FUNC in callee.attributes
    if not is_prim and (callee.body.blocks or relay.PRIMITIVE in callee.attributes):
        kind = (
            "a relay primitive function (run lower-ops first)"
            if relay.PRIMITIVE in callee.attributes
            else "a function with a body but no 'tir.prim_func' attribute"
        )
        raise located_error(
            call,
            f"relay.call to @{name}, which is {kind}; aot-lower-main calls tir "
            "prim funcs (func.func with 'tir.prim_func') or external declarations "
            "on memrefs",
        )
    ftype = callee.function_type
    expected = [*inputs, *outputs]
    if ftype.outputs.data:
        raise located_error(
            call,
            f"@{name} returns {len(ftype.outputs)} value(s); an operator function "
            "returns nothing and writes its outputs into its trailing memref arguments",
        )
    got = list(ftype.inputs.data)
    if len(got) != len(expected):
        raise located_error(
            call,
            f"relay.call @{name} passes {len(inputs)} input and {len(outputs)} output "
            f"buffer(s) ({len(expected)} in all), but @{name} takes {len(got)} "
            f"argument(s) {_types(got)}; expected {_types(expected)}",
        )
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if g != e:
            role = "input" if i < len(inputs) else "output"
            raise located_error(
                call,
                f"relay.call @{name}: argument {i} ({role}) of @{name} is {g}, but "
                f"the call passes {e}",
            )
    return name


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def check_main(main: func.FuncOp) -> None:
    """A located error unless ``main`` is one block of the ops aot-lower-main
    lowers (checked before dead code is removed, so that a dead unsupported
    op is still reported)."""
    if not main.body.blocks:
        raise located_error(
            main, "@main is a declaration; expected a relay main with a body"
        )
    if len(main.body.blocks) != 1:
        raise located_error(
            main,
            f"@main has {len(main.body.blocks)} blocks: control flow is not "
            "supported; main must be one block of relay dataflow",
        )
    for op in main.body.block.ops:
        _check_op_kind(op)
