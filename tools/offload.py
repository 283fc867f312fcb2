"""Two targets: ``--target accel,c`` and ``--offload OP_TYPE[,...]=TARGET``.

``usmp-compile --target accel,c`` names the targets the model may run on,
TVM's way (``tvmc --target "ethos-u,c"``): the last one is the host target
``c``, which runs everything not offloaded and the AOT entry. ``--offload
CONV_2D,DEPTHWISE_CONV_2D=accel`` (repeatable) places every operator of
those TFLite types of a ``.tflite`` model on ``accel`` (``place_operators``):
each relay op the importer emitted for such an operator gets
``relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel",
scope = "global">``, every other op the host's device, and a value produced
on one device and used on another goes through one ``relay.device_copy``
per (value, device), inserted after its producer. Constants are left free:
``plan-devices`` gives them their users' device (a copy per device). A relay
``.mlir`` input carries ``on_device``/``device_copy`` annotations itself.
``plan-devices`` then makes every device explicit, ``fuse-ops`` never fuses
across devices and names offloaded groups ``tvmgen_<m>_<target>_fused_...``,
``aot-lower-main`` calls the device hooks, ``usmp`` places each buffer in a
pool its users' targets may access, and the C library puts the offloaded
operators in ``tvmgen_<m>_<target>.c``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.diagnostics import operator_location
from usmp.dialects import relay
from usmp.dialects.device import VirtualDeviceAttr

HOST_TARGET = "c"
_TARGET_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_OPCODE = re.compile(r"[A-Z][A-Z0-9_]*")


class OffloadError(ValueError):
    """A bad ``--target`` or ``--offload`` value (the message says why)."""


TARGET_OPTIONS = ("mcpu", "march")
"""Options a ``--target`` entry may carry (TVM's ``c`` target options the
lowering reads: ``-mcpu=cortex-m4`` selects its kernels, ``lower-ops``'s
``mcpu``)."""


def parse_target_entries(text: str) -> list[tuple[str, dict[str, str]]]:
    """``--target``: comma-separated entries ``NAME [-OPTION=VALUE ...]`` (TVM's
    spelling, e.g. ``"c -mcpu=cortex-m4"``), the host ``c`` last; each entry's
    name and options."""
    entries: list[tuple[str, dict[str, str]]] = []
    for entry in text.split(","):
        name, *options = entry.split() or [""]
        if not _TARGET_NAME.fullmatch(name):
            raise OffloadError(
                f"--target {text!r}: '{name}' is not a target name (expected letters, "
                "digits, '_' and '-', e.g. --target accel,c)"
            )
        values: dict[str, str] = {}
        for option in options:
            key, eq, value = option.removeprefix("-").partition("=")
            if not option.startswith("-") or not eq or key not in TARGET_OPTIONS:
                raise OffloadError(
                    f"--target {text!r}: '{option}' is not an option of '{name}' "
                    f"(accepted: {', '.join(f'-{o}=VALUE' for o in TARGET_OPTIONS)}, "
                    'e.g. --target "c -mcpu=cortex-m4")'
                )
            values[key] = value
        entries.append((name, values))
    targets = [name for name, _ in entries]
    if targets[-1] != HOST_TARGET:
        raise OffloadError(
            f"--target {text!r}: the last target must be the host target "
            f"'{HOST_TARGET}' (it runs the AOT entry and every operator not "
            "offloaded), e.g. --target accel,c"
        )
    if len(set(targets)) != len(targets):
        raise OffloadError(f"--target {text!r}: a target is named twice")
    return entries


def parse_targets(text: str) -> list[str]:
    """``--target``'s target names, the host ``c`` last (options dropped)."""
    return [name for name, _ in parse_target_entries(text)]


def host_mcpu(text: str) -> str:
    """The host target's ``-mcpu`` (``""`` when not given)."""
    return parse_target_entries(text)[-1][1].get("mcpu", "")


def parse_offload(specs: Sequence[str], targets: Sequence[str]) -> dict[str, str]:
    """``--offload OP_TYPE[,OP_TYPE...]=TARGET`` (repeatable) as a map from
    TFLite builtin operator type to target."""
    from tflite.BuiltinOperator import BuiltinOperator

    known = {n for n in vars(BuiltinOperator) if not n.startswith("_")}
    placed: dict[str, str] = {}
    for spec in specs:
        types, sep, target = spec.partition("=")
        if not sep or not types or not target:
            raise OffloadError(
                f"--offload {spec!r}: expected OP_TYPE[,OP_TYPE...]=TARGET, e.g. "
                "--offload CONV_2D,DEPTHWISE_CONV_2D=accel"
            )
        if target not in targets or target == HOST_TARGET:
            others = ", ".join(t for t in targets if t != HOST_TARGET)
            others = others or "none: add one, e.g. --target accel,c"
            raise OffloadError(
                f"--offload {spec!r}: target '{target}' is not one of the offload "
                f"targets of --target ({others})"
            )
        for op_type in (t.strip() for t in types.split(",")):
            if not _OPCODE.fullmatch(op_type) or op_type not in known:
                raise OffloadError(
                    f"--offload {spec!r}: '{op_type}' is not a TFLite builtin "
                    "operator type (e.g. CONV_2D, DEPTHWISE_CONV_2D, "
                    "FULLY_CONNECTED; see docs/tflite-builtins.md)"
                )
            if placed.get(op_type, target) != target:
                raise OffloadError(
                    f"--offload: {op_type} is placed on both '{placed[op_type]}' "
                    f"and '{target}'"
                )
            placed[op_type] = target
    return placed


def device_of_target(target: str) -> VirtualDeviceAttr:
    """The virtual device of ``target``: the host's ``cpu`` 0 for ``c``, a
    device of the target's name otherwise."""
    if target == HOST_TARGET:
        return VirtualDeviceAttr("cpu", 0, HOST_TARGET, "global")
    return VirtualDeviceAttr(target, 0, target, "global")


def place_operators(module: ModuleOp, offload: Mapping[str, str]) -> int:
    """Place the ops of ``@main`` the TFLite importer emitted for operators of
    the types in ``offload`` on their target, every other op on the host,
    with a ``relay.device_copy`` per value and device where a value crosses
    devices (module note); the number of ops offloaded."""
    main = next(
        (
            f
            for f in module.ops
            if isinstance(f, func.FuncOp) and f.sym_name.data == "main"
        ),
        None,
    )
    if main is None or not main.body.blocks:
        return 0
    host = device_of_target(HOST_TARGET)
    block = main.body.block
    device: dict[Operation, VirtualDeviceAttr] = {}
    offloaded = 0
    for op in block.ops:
        if isinstance(op, relay.ConstantOp | func.ReturnOp):
            continue
        located = operator_location(op.location)
        target = offload.get(located[0]) if located is not None else None
        device[op] = device_of_target(target) if target else host
        offloaded += target is not None
        op.attributes[relay.VIRTUAL_DEVICE] = device[op]

    copies: dict[tuple[SSAValue, VirtualDeviceAttr], SSAValue] = {}
    for op in list(block.ops):
        if isinstance(op, relay.ConstantOp):
            continue
        wanted = device.get(op, host)  # func.return: main's results on the host
        for i, operand in enumerate(op.operands):
            producer = operand.owner
            if isinstance(producer, relay.ConstantOp):
                continue  # free: plan-devices gives it its users' device
            have = (
                device.get(producer, host) if isinstance(producer, Operation) else host
            )
            if have == wanted:
                continue
            key = (operand, wanted)
            if key not in copies:
                copy = relay.DeviceCopyOp(operand, have, wanted)
                # the copy holds the producer's tensor (memory report labels)
                copy.location = (
                    producer.location
                    if isinstance(producer, Operation)
                    else op.location
                )
                point = (
                    InsertPoint.after(producer)
                    if isinstance(producer, Operation)
                    else InsertPoint.at_start(block)
                )
                Rewriter.insert_op(copy, point)
                copies[key] = copy.results[0]
            op.operands[i] = copies[key]
    return offloaded
