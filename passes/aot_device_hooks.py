"""Device hooks of the AOT entry (TVM's device API, seed 000).

``aot-lower-main`` calls ``insert_device_hooks`` on the entry it built. For
every device that is not the host's and runs at least one operator (a
``tir.call`` whose ``tir.virtual_device`` has a target other than ``c``),
the entry calls the hooks the application implements, in TVM's order
(``tests/python/relay/aot/test_c_device_api.py``)::

    tir.device_hook activate "accel"     // first, for each device
    ...
    tir.device_hook open "accel"         // around every call on the device
    tir.call @tvmgen_m_accel_fused_...(...)
    tir.device_hook close "accel"
    ...
    tir.device_hook deactivate "accel"   // last, before func.return

Devices are named by their target as a C identifier (``ethos-u`` ->
``ethos_u``, TVM's ``device_context_ethos_u``) and listed, in order of first
call, in the entry's ``tir.device_contexts``. Each call on such a device and
its callee get ``tir.device_context = "<device>"``: as in TVM, the operator
receives the device context as its last argument and returns a status the
entry checks (``convert-to-emitc``), like every hook's. Without such a device
nothing is inserted (single-device models are unchanged).

A target without a device API (``NO_DEVICE_API``: TVM's target kinds without
``use_device_api``, e.g. ``cmsis-nn``, whose operators are plain C functions
of the host) gets no hooks and no context.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.dialects import tir
from usmp.dialects.device import VirtualDeviceAttr
from usmp.lowering.c_names import c_identifier
from usmp.passes.fuse_ops import HOST_TARGET

DEVICE_CONTEXTS = "tir.device_contexts"
"""Entry attribute: the devices whose hooks the entry calls, in order."""
DEVICE_CONTEXT = "tir.device_context"
"""Call and callee attribute: the device whose context the operator takes."""
NO_DEVICE_API = frozenset({"cmsis-nn"})
"""Targets without a device API: no hooks, no context (TVM's target kinds
without ``use_device_api``)."""


def call_device(call: tir.CallOp) -> str | None:
    """The device (C identifier of its target) ``call`` runs on, ``None`` for
    the host or when devices were not planned."""
    device = call.attributes.get(tir.VIRTUAL_DEVICE)
    if not isinstance(device, VirtualDeviceAttr):
        return None
    target = device.target.data
    if target in ("", HOST_TARGET) or target in NO_DEVICE_API:
        return None
    return c_identifier(target)


def insert_device_hooks(entry: func.FuncOp) -> None:
    """Insert the hooks of every non-host device ``entry`` calls (module doc)."""
    block = entry.body.block
    devices: list[str] = []
    module = entry.parent_op()
    functions = {
        f.sym_name.data: f
        for f in (module.regions[0].block.ops if module is not None else ())
        if isinstance(f, func.FuncOp)
    }
    for op in list(block.ops):
        if isinstance(op, tir.CallOp) and (device := call_device(op)) is not None:
            if device not in devices:
                devices.append(device)
            op.attributes[DEVICE_CONTEXT] = StringAttr(device)
            callee = functions.get(op.callee.root_reference.data)
            if callee is not None:
                callee.attributes[DEVICE_CONTEXT] = StringAttr(device)
            Rewriter.insert_op(_hook("open", device, op), InsertPoint.before(op))
            Rewriter.insert_op(_hook("close", device, op), InsertPoint.after(op))
    if not devices:
        return
    first = block.first_op
    assert first is not None and block.last_op is not None
    for device in devices:
        Rewriter.insert_op(_hook("activate", device, first), InsertPoint.before(first))
    last = block.last_op
    for device in devices:
        Rewriter.insert_op(_hook("deactivate", device, last), InsertPoint.before(last))
    entry.attributes[DEVICE_CONTEXTS] = ArrayAttr(StringAttr(d) for d in devices)


def _hook(hook: str, device: str, origin: Operation) -> tir.DeviceHookOp:
    op = tir.DeviceHookOp(hook, device)
    op.location = origin.location
    return op
