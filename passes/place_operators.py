"""``place-operators``: run the operators of chosen TFLite types on a target.

What it does
    Every op of ``@main`` that the TFLite importer emitted for an operator
    of a type named in ``offload`` (its location says so:
    ``loc("CONV_2D"("model.tflite":3:0))``, ``usmp.diagnostics
    .operator_location``) gets ``relay.virtual_device`` = that target's
    device (``#device.virtual_device<"accel", 0, target = "accel", scope =
    "global">``), every other op the host's (``cpu`` 0, target ``c``), and a
    value produced on one device and used on another goes through one
    ``relay.device_copy`` per (value, device), inserted after its producer
    (located at the producer: the memory report names the copy after the
    tensor). Constants are left free (``plan-devices`` gives each one its
    users' device) and ``@main``'s results stay on the host::

        %0 = relay.conv2d %x, %w {..., relay.virtual_device =
                 #device.virtual_device<"accel", 0, target = "accel", ...>}
        %1 = relay.device_copy %0 {src = <accel>, dst = <cpu>}
        %2 = relay.relu %1 {relay.virtual_device = <cpu>}

Options
    ``offload``: ``OP_TYPE=TARGET`` pairs, comma separated
    (``"CONV_2D=accel,DEPTHWISE_CONV_2D=accel"``); empty: nothing is moved.
    ``usmp-compile --target accel,c --offload CONV_2D,DEPTHWISE_CONV_2D=accel``
    runs the pass so.

Requires
    A relay ``@main`` with the importer's locations: ``usmp-compile`` runs
    it on the model it imported; in text, ``usmp-import-tflite
    --print-debuginfo`` keeps the locations, and ``usmp-opt`` reads them
    back. Before ``plan-devices``, which then makes every device explicit
    (``fuse-ops`` never fuses across devices).

Idempotence
    A second run places every op on the device it already has and finds
    every crossing already copied (an operand produced by a
    ``relay.device_copy`` is on the copy's destination): nothing changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.diagnostics import operator_location
from usmp.dialects import relay
from usmp.dialects.device import VirtualDeviceAttr

HOST_TARGET = "c"
"""The host target: it runs the AOT entry and every operator not offloaded."""

TARGET_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
"""A target name (TVM's: letters, digits, ``_`` and ``-``)."""

OP_TYPE = re.compile(r"[A-Z][A-Z0-9_]*")
"""A TFLite builtin operator type (``CONV_2D``)."""

OFFLOAD_SYNTAX = (
    'OP_TYPE=TARGET pairs, comma separated, e.g. "CONV_2D=accel,'
    'DEPTHWISE_CONV_2D=accel" (TARGET not the host target c)'
)


def device_of_target(target: str) -> VirtualDeviceAttr:
    """The virtual device of ``target``: the host's ``cpu`` 0 for ``c``, a
    device of the target's name otherwise."""
    if target == HOST_TARGET:
        return VirtualDeviceAttr("cpu", 0, HOST_TARGET, "global")
    return VirtualDeviceAttr(target, 0, target, "global")


def parse_offload_option(text: str) -> dict[str, str]:
    """The ``offload`` option as a map from TFLite operator type to target;
    a ``ValueError`` naming the bad entry and the syntax otherwise."""
    placed: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        op_type, eq, target = (s.strip() for s in entry.partition("="))
        if not eq or not OP_TYPE.fullmatch(op_type):
            raise ValueError(
                f"place-operators: offload entry '{entry}' is not OP_TYPE=TARGET; "
                f"expected {OFFLOAD_SYNTAX}"
            )
        if not TARGET_NAME.fullmatch(target) or target == HOST_TARGET:
            raise ValueError(
                f"place-operators: offload entry '{entry}': '{target}' is not an "
                f"offload target; expected {OFFLOAD_SYNTAX}"
            )
        if placed.get(op_type, target) != target:
            raise ValueError(
                f"place-operators: {op_type} is placed on both '{placed[op_type]}' "
                f"and '{target}'"
            )
        placed[op_type] = target
    return placed


def offload_option(offload: dict[str, str]) -> str:
    """``offload`` as the pass option (``parse_offload_option``'s inverse)."""
    return ",".join(f"{op_type}={target}" for op_type, target in offload.items())


@dataclass(frozen=True)
class PlaceOperatorsPass(ModulePass):
    """Place the TFLite operators of the given types on their targets."""

    name = "place-operators"

    offload: str = ""
    """``OP_TYPE=TARGET`` pairs, comma separated (see the module note)."""

    def __post_init__(self) -> None:
        parse_offload_option(self.offload)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        offload = parse_offload_option(self.offload)
        if offload:
            place_operators(op, offload)


def _main(module: ModuleOp) -> func.FuncOp | None:
    for f in module.ops:
        if isinstance(f, func.FuncOp) and f.sym_name.data == "main":
            return f if f.body.blocks else None
    return None


def place_operators(module: ModuleOp, offload: dict[str, str]) -> int:
    """Place the ops of ``@main`` as the module note says; the number of ops
    placed on another target than the host."""
    main = _main(module)
    if main is None:
        return 0
    host = device_of_target(HOST_TARGET)
    block = main.body.block
    device: dict[Operation, VirtualDeviceAttr] = {}
    offloaded = 0
    for op in block.ops:
        if isinstance(op, relay.ConstantOp | relay.DeviceCopyOp | func.ReturnOp):
            continue
        located = operator_location(op.location)
        target = offload.get(located[0]) if located is not None else None
        device[op] = device_of_target(target) if target else host
        offloaded += target is not None
        op.attributes[relay.VIRTUAL_DEVICE] = device[op]

    def device_of(value: SSAValue) -> VirtualDeviceAttr:
        producer = value.owner
        if isinstance(producer, relay.DeviceCopyOp):
            return producer.dst
        if isinstance(producer, Operation):
            return device.get(producer, host)
        return host  # an argument of @main: the host's

    copies: dict[tuple[SSAValue, VirtualDeviceAttr], SSAValue] = {}
    for op in list(block.ops):
        if isinstance(op, relay.ConstantOp | relay.DeviceCopyOp):
            continue
        wanted = device.get(op, host)  # func.return: main's results on the host
        for i, operand in enumerate(op.operands):
            producer = operand.owner
            if isinstance(producer, relay.ConstantOp):
                continue  # free: plan-devices gives it its users' device
            have = device_of(operand)
            if have == wanted:
                continue
            key = (operand, wanted)
            if key not in copies:
                copy = relay.DeviceCopyOp(operand, have, wanted)
                if isinstance(producer, Operation):
                    copy.location = producer.location
                    point = InsertPoint.after(producer)
                else:
                    copy.location = op.location
                    point = InsertPoint.at_start(block)
                Rewriter.insert_op(copy, point)
                copies[key] = copy.results[0]
            op.operands[i] = copies[key]
    return offloaded
