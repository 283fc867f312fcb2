"""``relay.custom_call`` -> ``tir.custom_call``: a user's C kernel, lowered
whole (``prim_func.WHOLE_OPERATORS``).

The prim func passes its memref arguments straight to the kernel; a
constant input (weights) is a hoisted ``tir.allocate_const`` (``usmp``
places it in a constant pool), passed like any other input. The prim func
is marked ``tir.returns_status`` (its caller checks the kernel's status) and
``tir.custom_header`` (the C library includes and ships the header).
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr
from xdsl.ir import SSAValue

from usmp.diagnostics import located_error
from usmp.dialects import relay
from usmp.dialects.relay_custom import CustomCallOp
from usmp.dialects.tir_custom import CustomCallOp as TirCustomCallOp
from usmp.lowering.kernel import FusedKernel


def _buffer(k: FusedKernel, op: CustomCallOp, value: SSAValue, i: int) -> SSAValue:
    """The memref holding input ``i`` of ``op``: an argument of the primitive
    function, or a hoisted constant."""
    if (buffer := k.buffers.get(value)) is not None and value not in k.constants:
        return buffer
    owner = value.owner
    if not isinstance(owner, relay.ConstantOp):
        owner = k.constants.get(value)
    if owner is None:
        raise located_error(
            op,
            f"relay.custom_call: input {i} is neither an argument of the primitive "
            "function nor a constant",
        )
    data = owner.value
    assert isinstance(data, DenseIntOrFPElementsAttr | DenseResourceAttr)
    return k.table(owner.result.name_hint or f"custom_input{i}", data, owner)


def lower_custom(k: FusedKernel, op: CustomCallOp, out: SSAValue) -> None:
    """Emit the ``tir.custom_call`` of ``op`` writing ``out``."""
    inputs = [_buffer(k, op, v, i) for i, v in enumerate(op.inputs)]
    k.b.emit(
        TirCustomCallOp(
            op.function.data,
            [*inputs, out],
            len(inputs),
            code=op.code.data,
            header=op.header.data,
            options=op.options.data,
            quantization=op.quantization,
        )
    )
