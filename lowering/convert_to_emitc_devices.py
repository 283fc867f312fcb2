"""Device hooks to ``emitc`` (TVM's device API, ``passes/aot_device_hooks.py``).

The entry function of a model that calls the hooks of devices (its
``tir.device_contexts``) takes one ``void* device_context_<device>`` per
device after its other arguments (TVM's ``tvmgen_<m>___tvm_main__(...,
device_context_ethos_u)``); each ``tir.device_hook`` becomes
``emitc.call_opaque "TVMDevice<Device><Hook>"(%device_context_<device>)``.
The application implements the hooks (``int32_t f(void*)``, declared in the
model's header) and passes the contexts to ``run`` in
``TVMDevices_<m>``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.ir import Attribute, Block, Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.lowering.convert_to_emitc_common import EmitcPattern

DEVICE_CONTEXTS = "tir.device_contexts"
"""Entry attribute: the devices whose hooks it calls (``aot_device_hooks``)."""


def device_contexts(op: Operation) -> list[str]:
    """The devices of ``op``'s ``tir.device_contexts`` (empty if none)."""
    attr = op.attributes.get(DEVICE_CONTEXTS)
    if not isinstance(attr, ArrayAttr):
        return []
    return [a.data for a in attr.data if isinstance(a, StringAttr)]


def context_type() -> Attribute:
    """``void*``."""
    return emitc.PointerType(emitc.OpaqueType(StringAttr("void")))


def add_context_arguments(op: Operation, block: Block) -> list[Attribute]:
    """Append ``op``'s device context arguments to ``block``; their types."""
    types: list[Attribute] = []
    for device in device_contexts(op):
        arg = block.insert_arg(context_type(), len(block.args))
        arg.name_hint = tir.DeviceHookOp.device_context(device)
        types.append(arg.type)
    return types


class DeviceHookLowering(EmitcPattern):
    """``tir.device_hook`` -> ``emitc.call_opaque`` of TVM's hook with the
    device's context argument."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.DeviceHookOp, rewriter: PatternRewriter):
        function = self.state.function
        name = tir.DeviceHookOp.device_context(op.device.data)
        args = function.body.block.args if function is not None else ()
        context = next((a for a in args if a.name_hint == name), None)
        if context is None:
            raise located_error(
                op,
                f"tir.device_hook of device '{op.device.data}' outside an entry "
                f"function listing it in {DEVICE_CONTEXTS}",
            )
        lw = self.lowering(op, rewriter)
        lw.emit(emitc.CallOpaqueOp(op.c_function, [context], []))
        lw.replace()
