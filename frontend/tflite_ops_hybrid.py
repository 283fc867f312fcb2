"""Hybrid FULLY_CONNECTED and CONV_2D: float32 activations, int8 weights.

TFLite Micro refuses these ("dynamic-range quantised") operators; LiteRT
runs them, quantising the input at run time. The import is what LiteRT's
reference kernels compute (``fully_connected.cc`` / ``conv.cc``
``EvalHybrid`` with the portable ``tensor_utils``), composed of relay
operators so that every integer step stays an integer step:

* FULLY_CONNECTED: ``x -> reshape (batch, depth)``; ``q =
  dynamic_quantize(x)`` (i8, per batch row, symmetric or asymmetric as
  ``asymmetric_quantize_inputs``), ``s = dynamic_quantize_scale(x)``
  (f32, (batch, 1)); ``acc = dense(q, w)`` (i32); asymmetric: ``acc -=
  dynamic_quantize_zero_point(x) * row_sum(w)`` (the row sums are i32
  constants); ``out = cast(acc, f32) * (s * weight_scale)`` with the weight
  scale per tensor or per output unit (LiteRT multiplies the row scale by it
  first), ``+ bias``, the fused activation;
* CONV_2D (weights per tensor, LiteRT's ``EvalHybrid``): each batch image
  quantised symmetrically as one row (``reshape`` to (batch, H*W*C), an
  alias), ``conv2d(q, w)`` with zero padding, then the same rescale with
  ``s`` reshaped to (batch, 1, 1, 1).

The quantised input, its scales (and zero points) are tensors of their own,
planned by USMP like any activation: the buffers LiteRT's kernels take as
temporaries. LiteRT computes the asymmetric correction as ``dot -
float(row_sum * zero_point)``; here it is exact int32 arithmetic, the same
value while ``|dot|`` and ``|row_sum * zero_point|`` stay below 2^24 (depth
below 1,032).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from usmp.dialects.relay_hybrid_ops import (
    DynamicQuantizeOp,
    DynamicQuantizeScaleOp,
    DynamicQuantizeZeroPointOp,
)
from usmp.dialects.relay_ops import (
    CastOp,
    DenseOp,
    MultiplyOp,
    ReshapeOp,
    SubtractOp,
)
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_reader import Quantization, Tensor


def _weight_scale(b: RelayBuilder, quant: Quantization) -> SSAValue:
    if quant.per_channel:
        return b.constant(np.asarray(quant.scales, np.float32))
    return b.scalar(quant.scale, "float32")


def _quantized_rows(
    b: RelayBuilder, rows: SSAValue, asymmetric: bool
) -> tuple[SSAValue, SSAValue]:
    """(i8 rows, f32 scale per row) of a (batch, values) f32 tensor."""
    return (
        b.emit(DynamicQuantizeOp(rows, asymmetric)),
        b.emit(DynamicQuantizeScaleOp(rows, asymmetric)),
    )


def _rescale(
    b: RelayBuilder, acc: SSAValue, row_scale: SSAValue, quant: Quantization
) -> SSAValue:
    """``float(acc) * (row scale * weight scale)``, in LiteRT's order."""
    scale = b.emit(MultiplyOp(row_scale, _weight_scale(b, quant)))
    return b.emit(MultiplyOp(b.emit(CastOp(acc, f32)), scale))


def hybrid_fully_connected(
    b: RelayBuilder,
    rows: SSAValue,
    weight: SSAValue,
    w: Tensor,
    w_quant: Quantization,
    asymmetric: bool,
) -> SSAValue:
    """The rescaled product of the (batch, depth) f32 ``rows`` and the int8
    weights ``w`` (units, depth; ``weight`` its constant), before bias and
    activation."""
    q_rows, row_scale = _quantized_rows(b, rows, asymmetric)
    acc = b.emit(DenseOp(q_rows, weight))
    if asymmetric:
        assert w.data is not None
        row_sums = np.asarray(w.data, np.int32).sum(axis=1, dtype=np.int32)
        zero_point = b.emit(DynamicQuantizeZeroPointOp(rows, asymmetric=True))
        acc = b.emit(
            SubtractOp(acc, b.emit(MultiplyOp(zero_point, b.constant(row_sums))))
        )
    return _rescale(b, acc, row_scale, w_quant)


def hybrid_conv(
    b: RelayBuilder,
    x: Tensor,
    w: Tensor,
    conv: Callable[[SSAValue], SSAValue],
) -> SSAValue:
    """``conv`` (an int8 x int8 -> i32 ``relay.conv2d`` of its input) of
    ``x`` quantised per batch image, rescaled, before bias and activation.
    LiteRT's per-tensor kernel: refused when the weights' channel scales
    differ (``is_hybrid_per_channel``: asymmetric inputs)."""
    quant = _weights_quant(b, w)
    n = x.shape[0]
    rows = b.emit(ReshapeOp(b.value(x), (n, int(np.prod(x.shape[1:])))))
    q_rows, row_scale = _quantized_rows(b, rows, asymmetric=False)
    acc = conv(b.emit(ReshapeOp(q_rows, x.shape)))
    scale = b.emit(ReshapeOp(row_scale, (n, 1, 1, 1)))
    return _rescale(b, acc, scale, quant)


def _weights_quant(b: RelayBuilder, w: Tensor) -> Quantization:
    quant = w.quantization
    assert quant is not None
    if quant.per_channel and len(set(quant.scales)) > 1:
        raise b.error(
            f"hybrid CONV_2D with per-channel weight scales ('{w.name}') is not "
            "supported (LiteRT's per-channel hybrid kernel quantises the input "
            "asymmetrically); supported: int8 weights with one scale"
        )
    return Quantization((quant.scale,), (0,), 0)
