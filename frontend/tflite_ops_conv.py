"""TRANSPOSE_CONV (``tflite_ops`` imports this module, which registers its
converter).

TFLite Micro's kernel (``transpose_conv.cc``) ignores input 0 (the output
shape tensor: it may be a constant or, as in TFLM's seanet models, a model
input) and takes the output tensor's stored shape; padding is TFLite's
``ComputePaddingHeightWidth`` run on the *output* size. The operator becomes
``relay.conv2d_transpose`` (a gather: each output element sums the input
positions whose window covers it, in the order TFLM's scatter adds them, so
no accumulator scratch is needed) whose ``padding`` crops the full
``(in - 1) * stride + K`` output at the top / left by TFLM's padding and at
the bottom / right by what is left, and whose ``output_padding`` extends it
when the stored output is larger. Then, as CONV_2D:

* float: ``add(bias) -> fused activation``;
* int8: ``conv2d_transpose(i8, i8 -> i32, input zero point) -> add(bias
  i32) -> fixed_point_multiply (per-channel) -> add(output zp) -> clip ->
  cast(i8)``;
* int16 x int8 (16x8): the same on an i64 accumulator with an INT64 bias
  (TFLM converts an INT16 one to int64, so does the importer).

The fused activation (TFLite's schema has one since version 2.15) is
applied as TFLite Micro applies it.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from usmp.dialects.relay_ops import AddOp, Conv2DTransposeOp
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_ops import (
    _activation,
    _check_shape,
    _expect_type,
    _float_activation,
    _output_stage,
    _padding,
    _per_tensor,
    _symmetric_weights,
    _type,
    _weights_kind,
    register,
)
from usmp.frontend.tflite_reader import Tensor


def _bias(b: RelayBuilder, acc: SSAValue, kind: str, channels: int) -> SSAValue:
    bias = b.input_tensor(3)
    if bias is None:
        return acc
    allowed = {"float": ("FLOAT32",), "int8": ("INT32",), "int16": ("INT64", "INT16")}
    if _type(bias) not in allowed[kind]:
        raise b.error(
            f"bias '{bias.name}' is {_type(bias)}, expected "
            f"{' or '.join(allowed[kind])}"
        )
    if bias.shape != (channels,):
        raise b.error(
            f"bias '{bias.name}' has shape {list(bias.shape)}, expected [{channels}]"
        )
    if _type(bias) == "INT16":  # TFLM widens it to int64 before the kernel
        value = b.tensor_constant(bias, "i64", lambda a: a.astype(np.int64))
    else:
        value = b.tensor_constant(bias)
    return b.emit(AddOp(acc, value))


def _output_shape_input(b: RelayBuilder, out: Tensor) -> None:
    """Input 0 (the output shape): INT32 of 4 values; a constant one must
    agree with the output tensor, which is what TFLite Micro uses."""
    shape = b.required_input(0)
    if _type(shape) != "INT32" or shape.shape != (4,):
        raise b.error(
            f"output shape '{shape.name}' must be INT32 of shape [4], got "
            f"{_type(shape)} {list(shape.shape)}"
        )
    if shape.data is not None and tuple(int(v) for v in shape.data) != out.shape:
        raise b.error(
            f"output shape {[int(v) for v in shape.data]} differs from the shape "
            f"{list(out.shape)} stored for '{out.name}'"
        )


def convert_transpose_conv(b: RelayBuilder) -> None:
    opts = b.operator.options
    w, x, out = b.required_input(1), b.required_input(2), b.output_tensor()
    kind = _weights_kind(b, x, w)
    _expect_type(
        b, out, {"float": "FLOAT32", "int8": "INT8", "int16": "INT16"}[kind], "output"
    )
    if len(x.shape) != 4 or len(w.shape) != 4 or len(out.shape) != 4:
        raise b.error("input, weights and output must be 4-d (NHWC, OHWI, NHWC)")
    _output_shape_input(b, out)
    n, in_h, in_w, in_c = x.shape
    out_c, kh, kw, w_in_c = w.shape
    if w_in_c != in_c or out.shape[0] != n or out.shape[3] != out_c:
        raise b.error(
            f"weights {list(w.shape)} (OHWI) do not fit input {list(x.shape)} and "
            f"output {list(out.shape)}"
        )
    act = _activation(b, opts.FusedActivationFunction())
    strides = (opts.StrideH(), opts.StrideW())
    padding = [0, 0, 0, 0]
    output_padding = [0, 0]
    for axis, (size, k, out_size) in enumerate(
        ((in_h, kh, out.shape[1]), (in_w, kw, out.shape[2]))
    ):
        before, _, _ = _padding(b, opts.Padding(), out_size, k, strides[axis], 1)
        rest = (size - 1) * strides[axis] + k - before - out_size
        padding[axis] = before
        padding[axis + 2] = max(rest, 0)
        output_padding[axis] = max(-rest, 0)

    def conv(input_zero_point: int = 0) -> SSAValue:
        return b.emit(
            Conv2DTransposeOp(
                b.value(x),
                b.tensor_constant(w),
                strides=strides,
                padding=padding,
                output_padding=output_padding,
                input_zero_point=input_zero_point,
            )
        )

    if kind == "float":
        result = _float_activation(b, _bias(b, conv(), kind, out_c), act)
    else:
        in_q = _per_tensor(b, x, "input")
        w_q = _symmetric_weights(b, w, out_c)
        zero_point = in_q.zero_point if kind == "int8" else 0
        acc = _bias(b, conv(zero_point), kind, out_c)
        result = _output_stage(b, acc, x, w_q, out, act, axis=3)
    _check_shape(b, result, out)
    b.bind(out, result)


register({"TRANSPOSE_CONV": convert_transpose_conv})
