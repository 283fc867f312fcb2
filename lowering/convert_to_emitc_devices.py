"""Device hooks to ``emitc`` (TVM's device API, ``passes/aot_device_hooks.py``).

The entry function of a model that calls the hooks of devices (its
``tir.device_contexts``) takes one ``void* device_context_<device>`` per
device after its other arguments (TVM's ``tvmgen_<m>___tvm_main__(...,
device_context_ethos_u)``); each ``tir.device_hook`` becomes
``emitc.call_opaque "TVMDevice<Device><Hook>"(%device_context_<device>)``.
The application implements the hooks (``int32_t f(void*)``, declared in the
model's header) and passes the contexts to ``run`` in
``TVMDevices_<m>``.

As TVM's generated code (``tvm_check_return``), the entry checks every
hook's status: a non-zero one stops the run and is returned (``run``
returns it). An operator of a device (``tir.device_context``, set by
``aot-lower-main``) takes the device's context as its last argument and
returns a status the entry checks likewise; a portable C kernel ignores its
context and returns 0. Host operators stay ``void``: they cannot fail.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, StringAttr, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.lowering.convert_to_emitc_common import ConversionState, EmitcPattern
from usmp.lowering.convert_to_emitc_packed import check_status, return_status

DEVICE_CONTEXTS = "tir.device_contexts"
"""Entry attribute: the devices whose hooks it calls (``aot_device_hooks``)."""
DEVICE_CONTEXT = "tir.device_context"
"""Operator and call attribute: the device whose context it takes."""


def device_contexts(op: Operation) -> list[str]:
    """The devices whose contexts ``op`` takes: its ``tir.device_contexts``
    (an entry), or its ``tir.device_context`` (an operator); empty if none."""
    own = op.attributes.get(DEVICE_CONTEXT)
    if isinstance(own, StringAttr):
        return [own.data]
    attr = op.attributes.get(DEVICE_CONTEXTS)
    if not isinstance(attr, ArrayAttr):
        return []
    return [a.data for a in attr.data if isinstance(a, StringAttr)]


def context_type() -> Attribute:
    """``void*``."""
    return emitc.PointerType(emitc.OpaqueType(StringAttr("void")))


def add_context_arguments(op: Operation, block: Block | None) -> list[Attribute]:
    """Append ``op``'s device context arguments to ``block`` (None: a
    declaration); their types."""
    types: list[Attribute] = []
    for device in device_contexts(op):
        if block is not None:
            arg = block.insert_arg(context_type(), len(block.args))
            arg.name_hint = tir.DeviceHookOp.device_context(device)
        types.append(context_type())
    return types


def context_argument(function: emitc.FuncOp | None, device: str) -> SSAValue | None:
    """The context argument of ``device`` in ``function``, if it has one."""
    name = tir.DeviceHookOp.device_context(device)
    args = (
        function.body.block.args
        if function is not None and function.body.blocks
        else ()
    )
    return next((a for a in args if a.name_hint == name), None)


def finish_status_functions(state: ConversionState) -> None:
    """When the conversion ends: every status function returns ``int32_t``
    (0 where it returned nothing); an operator of a device that does not use
    its context says so (``(void)context;``, for ``-Wextra``)."""
    for function in state.status_functions:
        if DEVICE_CONTEXT in function.attributes and function.body.blocks:
            block = function.body.block
            for device in device_contexts(function):
                context = context_argument(function, device)
                first = block.first_op
                if context is not None and first is not None:
                    Rewriter.insert_op(
                        emitc.VerbatimOp("(void){};", [context]),
                        InsertPoint.before(first),
                    )
        return_status(function)


def mark_status(state: ConversionState, function: emitc.FuncOp | None) -> None:
    """``function`` returns a status (made so when the conversion ends)."""
    if function is not None and function not in state.status_functions:
        state.status_functions.append(function)


class DeviceHookLowering(EmitcPattern):
    """``tir.device_hook`` -> ``emitc.call_opaque`` of TVM's hook with the
    device's context argument."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.DeviceHookOp, rewriter: PatternRewriter):
        function = self.state.function
        context = context_argument(function, op.device.data)
        if context is None:
            raise located_error(
                op,
                f"tir.device_hook of device '{op.device.data}' outside an entry "
                f"function listing it in {DEVICE_CONTEXTS}",
            )
        lw = self.lowering(op, rewriter)
        status = lw.result(emitc.CallOpaqueOp(op.c_function, [context], [i32]))
        check_status(lw, status)
        mark_status(self.state, function)
        lw.replace()
