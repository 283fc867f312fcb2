"""TFLite CUSTOM operators with a kernel the user supplies.

``usmp-compile --custom-op NAME=path/to/kernel.h[:function]`` (``CustomOp``
in Python) names, for the custom code ``NAME``, a header declaring the C
function that computes it (``function``, default ``NAME``). The importer
turns each CUSTOM operator of that code into a ``relay.custom_call``:

* its inputs are the operator's inputs (constants stay constants: weights
  reach the kernel as constant tensors); an omitted optional input is
  refused;
* its output is the operator's output tensor as the model records it: its
  shape and type must be static (a ``-1`` in ``shape_signature`` is refused:
  the kernel's output buffer is planned at compile time); one output;
* the quantisation of every input and of the output (scales, zero points,
  quantised dimension) and the operator's ``custom_options`` bytes are
  carried to the kernel.

``check_custom_op`` checks what can be checked before the model is read:
the spelling, the header exists, and it declares the function (a
declaration or definition ``function(`` in its text, comments removed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    f32,
    i64,
)

from usmp.dialects.relay_custom import CustomCallOp
from usmp.frontend.builder import RelayBuilder, tensor_type
from usmp.frontend.custom_op import SYNTAX as SYNTAX
from usmp.frontend.custom_op import CustomOp as CustomOp
from usmp.frontend.custom_op import CustomOpError as CustomOpError
from usmp.frontend.custom_op import check_custom_op as check_custom_op
from usmp.frontend.custom_op import parse_custom_op as parse_custom_op
from usmp.frontend.tflite_reader import Model, Operator, Tensor


def check_custom_codes(model: Model, custom_ops: Sequence[CustomOp]) -> None:
    """Every ``--custom-op`` names a custom code of the model."""
    codes = sorted(
        {op.custom_code or "" for op in model.operators if op.opcode == "CUSTOM"}
    )
    for custom in custom_ops:
        if custom.name not in codes:
            has = (
                "its custom codes are " + ", ".join(f"'{c}'" for c in codes)
                if codes
                else "it has no CUSTOM operator"
            )
            raise model.error(
                f"--custom-op {custom.spelling}: the model has no CUSTOM operator "
                f"with custom code '{custom.name}'; {has}"
            )


def _quantization(t: Tensor) -> DictionaryAttr:
    """``{scale, zero_point, axis}`` of ``t`` (``{}``: not quantised)."""
    quant = t.quantization
    if quant is None or not quant.scales:
        return DictionaryAttr({})
    scales = [float(np.float32(s)) for s in quant.scales]
    zero_points = list(quant.zero_points) or [0] * len(scales)
    return DictionaryAttr(
        {
            "scale": DenseArrayBase.from_list(f32, scales),
            "zero_point": DenseArrayBase.from_list(i64, [int(z) for z in zero_points]),
            "axis": IntegerAttr(quant.axis if quant.per_channel else -1, i64),
        }
    )


def convert_custom(b: RelayBuilder, kernel: CustomOp) -> None:
    """The ``relay.custom_call`` of the current CUSTOM operator (module doc)."""
    op: Operator = b.operator
    if len(op.outputs) != 1:
        raise b.error(
            f"the operator has {len(op.outputs)} outputs; a custom kernel "
            "(--custom-op) computes one output tensor"
        )
    out = b.output_tensor(0)
    signature = out.shape_signature
    if signature is not None and any(d < 0 for d in signature):
        raise b.error(
            f"output tensor '{out.name}' (#{out.index}) has a dynamic shape "
            f"(shape_signature {list(signature)}); a custom kernel's output "
            "buffer is planned at compile time, so its shape must be static "
            "(export the model with fixed shapes)"
        )
    if out.dtype is None:
        raise b.error(
            f"output tensor '{out.name}' (#{out.index}) has type {out.type_name}, "
            "which a custom kernel's descriptor does not describe"
        )
    values = []
    tensors: list[Tensor] = []
    for position in range(len(op.inputs)):
        t = b.input_tensor(position)
        if t is None:
            raise b.error(
                f"input {position} is omitted (-1); a custom kernel gets every "
                "input as a tensor"
            )
        if t.dtype is None:
            raise b.error(
                f"input {position} '{t.name}' (#{t.index}) has type {t.type_name}, "
                "which a custom kernel's descriptor does not describe"
            )
        values.append(b.value(t))
        tensors.append(t)
    call = CustomCallOp(
        values,
        tensor_type(out.dtype, out.shape),
        code=op.custom_code or "",
        function=kernel.c_function,
        header=kernel.header,
        options=op.custom_options,
        quantization=[_quantization(t) for t in (*tensors, out)],
    )
    b.bind(out, b.emit(call))
