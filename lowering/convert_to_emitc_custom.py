"""``tir.custom_call`` to ``emitc``: a user kernel called through tensor
descriptors (``usmp-compile --custom-op``, ``dialects/tir_custom.py``).

In the operator (the prim func ``lower-ops`` made), for each operand a
``static const int32_t`` shape array (and per-channel scales and zero points
when the tensor has them), the custom options as a ``static const uint8_t``
array, one ``tvmgen_custom_tensor_t`` array of the inputs and one of the
outputs, then::

    int32_t status = fn(inputs, n_inputs, outputs, n_outputs, options, len);
    if (status != 0) return status;

The operator returns ``int32_t`` (0 at its end), and the AOT entry checks
it (``tir.returns_status``): a failing kernel stops the run, whose status
``run`` returns. The types and the signature are in ``CUSTOM_OP_HEADER``
(``tvmgen_custom_op.h``), which the C library ships and includes before the
user's header.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    f32,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.dialects.tir_custom import CUSTOM_HEADER, CustomCallOp
from usmp.lowering.c_printer_expr import float_literal, int_literal
from usmp.lowering.convert_to_emitc_common import EmitcPattern
from usmp.lowering.convert_to_emitc_devices import mark_status
from usmp.lowering.convert_to_emitc_memref import first_element_pointer

CUSTOM_OP_HEADER_NAME = "tvmgen_custom_op.h"
CUSTOM_OP_HEADER = """\
/*
 * Custom operators of usmp-opt (usmp-compile --custom-op NAME=kernel.h[:fn]).
 * The same for every model; include it in the header of your kernel.
 */
#ifndef TVMGEN_CUSTOM_OP_H_
#define TVMGEN_CUSTOM_OP_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: TFLite's TfLiteType values. */
#define TVMGEN_CUSTOM_FLOAT32 1
#define TVMGEN_CUSTOM_INT32 2
#define TVMGEN_CUSTOM_UINT8 3
#define TVMGEN_CUSTOM_INT64 4
#define TVMGEN_CUSTOM_BOOL 6
#define TVMGEN_CUSTOM_INT16 7
#define TVMGEN_CUSTOM_INT8 9
#define TVMGEN_CUSTOM_FLOAT64 11
#define TVMGEN_CUSTOM_UINT64 13
#define TVMGEN_CUSTOM_UINT32 16
#define TVMGEN_CUSTOM_UINT16 17

/* One tensor of a custom operator. Row-major (TFLite's layout: NHWC).
 * Quantised tensors: real = scale * (q - zero_point); a tensor quantised per
 * channel along dimension quantized_dimension has shape[quantized_dimension]
 * scales and zero points in scales/zero_points (scale and zero_point then
 * hold the first ones); otherwise quantized_dimension is -1 and scales and
 * zero_points are NULL. A tensor that is not quantised has scale 0. */
typedef struct tvmgen_custom_tensor {
  void* data;                  /* inputs: read only (constants are in flash) */
  int32_t type;                /* TVMGEN_CUSTOM_INT8, ... */
  int32_t rank;
  const int32_t* shape;        /* rank dimensions */
  int32_t bytes;               /* size of data in bytes */
  float scale;
  int32_t zero_point;
  int32_t quantized_dimension;
  const float* scales;
  const int32_t* zero_points;
} tvmgen_custom_tensor_t;

/* The kernel: compute outputs[0..n_outputs) from inputs[0..n_inputs) and the
 * operator's custom options (the model's custom_options bytes, a flexbuffer
 * for most converters; NULL and 0 when it has none). Return 0, or a non-zero
 * status that stops the model's run and is returned by tvmgen_<model>_run.
 * Inputs and outputs never share bytes; inputs must not be written. */
typedef int32_t (*tvmgen_custom_op_fn)(const tvmgen_custom_tensor_t* inputs,
                                       int32_t n_inputs,
                                       tvmgen_custom_tensor_t* outputs,
                                       int32_t n_outputs,
                                       const uint8_t* options,
                                       int32_t options_len);

#ifdef __cplusplus
}
#endif

#endif /* TVMGEN_CUSTOM_OP_H_ */
"""
"""``tvmgen_custom_op.h``: the descriptor and the kernel's signature."""


def type_code(element: Attribute) -> int | None:
    """TFLite's ``TfLiteType`` of a memref element type."""
    if isinstance(element, Float32Type):
        return 1
    if isinstance(element, Float64Type):
        return 11
    if isinstance(element, IntegerType):
        width = element.width.data
        if width == 1:
            return 6
        if element.signedness.data == Signedness.UNSIGNED:
            return {8: 3, 16: 17, 32: 16, 64: 13}.get(width)
        return {8: 9, 16: 7, 32: 2, 64: 4}.get(width)
    return None


def _values(q: DictionaryAttr, key: str) -> list[int | float]:
    attr = q.data.get(key)
    if not isinstance(attr, DenseArrayBase):
        return []
    return list(attr.get_values())  # pyright: ignore[reportUnknownArgumentType]


def _list(values: list[str]) -> str:
    return "{" + ", ".join(values) + "}"


class CustomCallLowering(EmitcPattern):
    """``tir.custom_call`` -> descriptors and a checked call (module doc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CustomCallOp, rewriter: PatternRewriter) -> None:
        function = self.state.function
        if function is None:
            raise located_error(op, "tir.custom_call outside a function")
        lw = self.lowering(op, rewriter)
        lines: list[str] = []
        pointers: list[SSAValue] = []
        entries: list[str] = []
        for k, (value, q) in enumerate(zip(op.args, op.quantization.data, strict=True)):
            t = value.type
            assert isinstance(t, MemRefType)
            code = type_code(t.element_type)
            if code is None:
                raise located_error(
                    op,
                    f"tir.custom_call: operand {k} has element type "
                    f"{t.element_type}, which tvmgen_custom_tensor_t does not describe",
                )
            shape = [int(d) for d in t.get_shape()]
            rank = len(shape)
            shape_name = "NULL"
            if rank:
                shape_name = f"custom_shape{k}"
                dims = _list([str(d) for d in shape])
                lines.append(f"static const int32_t {shape_name}[{rank}] = {dims};")
            nbytes = t.element_type.size  # pyright: ignore[reportAttributeAccessIssue]
            for d in shape:
                nbytes *= d
            scales = [float(s) for s in _values(q, "scale")]
            zero_points = [int(z) for z in _values(q, "zero_point")]
            axis_attr = q.data.get("axis")
            axis = axis_attr.value.data if isinstance(axis_attr, IntegerAttr) else -1
            scale = float_literal(scales[0] if scales else 0.0, f32)
            zero = int_literal(zero_points[0] if zero_points else 0, i32)
            scales_name = zeros_name = "NULL"
            if axis >= 0 and len(scales) > 1:
                scales_name, zeros_name = f"custom_scales{k}", f"custom_zero_points{k}"
                lines.append(
                    f"static const float {scales_name}[{len(scales)}] = "
                    + _list([float_literal(s, f32) for s in scales])
                    + ";"
                )
                lines.append(
                    f"static const int32_t {zeros_name}[{len(zero_points)}] = "
                    + _list([int_literal(z, i32) for z in zero_points])
                    + ";"
                )
            else:
                axis = -1
            pointers.append(first_element_pointer(lw, value, op))
            # "{{" is a brace in an emitc.verbatim with arguments, "{}" the pointer
            entries.append(
                f"{{{{(void*){{}}, {code}, {rank}, {shape_name}, {nbytes}, {scale}, "
                f"{zero}, {axis}, {scales_name}, {zeros_name}}}"
            )
        options = bytes.fromhex(op.options.data)
        options_name = "NULL"
        if options:
            options_name = "custom_options"
            lines.append(
                f"static const uint8_t custom_options[{len(options)}] = "
                + _list([str(b) for b in options])
                + ";"
            )
        n_in = op.n_inputs
        n_out = len(op.args) - n_in
        for line in lines:
            lw.emit(emitc.VerbatimOp(line))
        if n_in:
            lw.emit(
                emitc.VerbatimOp(
                    f"tvmgen_custom_tensor_t custom_inputs[{n_in}] = {{"
                    + ", ".join(entries[:n_in])
                    + "};",
                    pointers[:n_in],
                )
            )
        lw.emit(
            emitc.VerbatimOp(
                f"tvmgen_custom_tensor_t custom_outputs[{n_out}] = {{"
                + ", ".join(entries[n_in:])
                + "};",
                pointers[n_in:],
            )
        )
        lw.emit(
            emitc.VerbatimOp(
                f"int32_t custom_status = {op.function.data}("
                f"{'custom_inputs' if n_in else 'NULL'}, {n_in}, custom_outputs, "
                f"{n_out}, {options_name}, {len(options)});"
            )
        )
        lw.emit(emitc.VerbatimOp("if (custom_status != 0) return custom_status;"))
        mark_status(self.state, function)
        function.attributes[CUSTOM_HEADER] = op.header
        lw.replace()
