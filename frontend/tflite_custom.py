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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
from usmp.frontend.tflite_reader import Model, Operator, Tensor

SYNTAX = "NAME=path/to/kernel.h[:function]"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


class CustomOpError(ValueError):
    """A ``--custom-op`` that cannot be used as given."""


@dataclass(frozen=True)
class CustomOp:
    """The C kernel of the TFLite custom code ``name``: ``function`` (default:
    ``name``), declared in the header ``header``."""

    name: str
    header: str
    function: str = ""

    @property
    def c_function(self) -> str:
        return self.function or self.name

    @property
    def spelling(self) -> str:
        fn = f":{self.function}" if self.function else ""
        return f"{self.name}={self.header}{fn}"


def parse_custom_op(text: str) -> CustomOp:
    """``NAME=path/to/kernel.h[:function]``; a ``CustomOpError`` otherwise."""
    name, eq, rest = text.partition("=")
    if not eq or not name or not rest:
        raise CustomOpError(f"--custom-op '{text}' is not {SYNTAX}")
    header, function = rest, ""
    head, colon, tail = rest.rpartition(":")
    if colon and _IDENTIFIER.fullmatch(tail) and head:
        header, function = head, tail
    return CustomOp(name, header, function)


def check_custom_op(op: CustomOp) -> None:
    """The function is a C identifier, the header a readable file that
    declares it."""
    where = f"--custom-op {op.spelling}"
    if not _IDENTIFIER.fullmatch(op.c_function):
        raise CustomOpError(
            f"{where}: '{op.c_function}' is not a C identifier; name the function "
            f"after the header: {SYNTAX}"
        )
    path = Path(op.header)
    if not path.suffix == ".h":
        raise CustomOpError(f"{where}: '{op.header}' is not a header (.h); {SYNTAX}")
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise CustomOpError(
            f"{where}: cannot read the header '{op.header}': {e.strerror or e}"
        ) from None
    code = _COMMENTS.sub(" ", text)
    if not re.search(rf"\b{re.escape(op.c_function)}\s*\(", code):
        raise CustomOpError(
            f"{where}: '{op.header}' does not declare the function "
            f"'{op.c_function}'; expected a declaration such as: int32_t "
            f"{op.c_function}(const tvmgen_custom_tensor_t* inputs, int32_t n_inputs, "
            "tvmgen_custom_tensor_t* outputs, int32_t n_outputs, const uint8_t* "
            "options, int32_t options_len);"
        )


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
