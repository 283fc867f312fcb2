"""One converter per supported TFLite builtin operator.

A converter reads the current operator from the ``RelayBuilder``, checks
what it supports (types, options) with a diagnostic naming the operator and
its index otherwise, emits relay ops and binds the operator's outputs.

Float operators map to the float relay ops plus the fused activation. int8
operators follow TFLite Micro's reference kernels exactly (the parameters
are computed as in their ``Prepare``, see ``quantization.py``):

* CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED:
  ``conv2d|dense (i8 x i8 -> i32, zero points) -> add(bias) ->
  fixed_point_multiply (per-channel along the output channels) ->
  add(output_zp) -> clip(fused activation range) -> cast(i8)``;
* ADD (int8 and int16): both inputs ``cast(i32) -> add(-zp) -> multiply(2^20)
  -> fixed_point_multiply`` (``2^15`` for int16), then sum ->
  ``fixed_point_multiply`` -> output stage clamped to the output type;
* AVERAGE_POOL_2D / MAX_POOL_2D on i8 directly (same in/out quantisation);
* SOFTMAX: ``relay.quantized_softmax`` (bit-exact int8 kernel);
* QUANTIZE / DEQUANTIZE: ``relay.quantize`` / ``relay.dequantize``; integer
  QUANTIZE (int8, int16 and int32 in and out, TFLM's ``Requantize``) as a
  requantisation chain;
* SUB, MUL, MAXIMUM, MINIMUM, CONCATENATION, PAD/PADV2, RELU, RELU6: in
  ``tflite_ops_elementwise`` (registered into ``CONVERTERS``);
* UNIDIRECTIONAL_SEQUENCE_LSTM: ``relay.lstm``, in ``tflite_ops_lstm``;
* VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE: resource variables
  as ``relay.state``, in ``tflite_ops_variables``.

Layouts: TFLite conv weights are OHWI and become HWIO; depthwise weights
(1, KH, KW, C*M) become (KH, KW, 1, C*M) with ``groups = C``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np
from xdsl.dialects.builtin import TensorType, i32
from xdsl.ir import SSAValue

from usmp.dialects.relay_ops import (
    AddOp,
    AvgPool2DOp,
    CastOp,
    ClipOp,
    Conv2DOp,
    DenseOp,
    DequantizeOp,
    FixedPointMultiplyOp,
    MaxPool2DOp,
    MultiplyOp,
    QuantizeOp,
    ReluOp,
    ReshapeOp,
    SoftmaxOp,
    SubtractOp,
)
from usmp.dialects.relay_tflite_ops import (
    SOFTMAX_OUTPUT_SCALE,
    SOFTMAX_OUTPUT_ZERO_POINT,
    QuantizedSoftmaxInt16Op,
    QuantizedSoftmaxOp,
)
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder, element_type, int_range
from usmp.frontend.tflite_reader import Quantization, Tensor

Converter = Callable[[RelayBuilder], None]

_PADDING_SAME, _PADDING_VALID = 0, 1


# -- checks --------------------------------------------------------------------


def _type(t: Tensor) -> str:
    return t.type_name


def _quant(b: RelayBuilder, t: Tensor, what: str) -> Quantization:
    if t.quantization is None:
        raise b.error(
            f"{what} '{t.name}' ({t.type_name}) has no quantisation parameters"
        )
    return t.quantization


def _per_tensor(b: RelayBuilder, t: Tensor, what: str) -> Quantization:
    quant = _quant(b, t, what)
    if quant.per_channel:
        raise b.error(f"{what} '{t.name}' must be quantised per tensor")
    return quant


def _activation(b: RelayBuilder, code: int) -> q.Activation:
    try:
        act = q.Activation(code)
    except ValueError:
        raise b.error(f"unknown fused activation {code}") from None
    if act in (q.Activation.TANH, q.Activation.SIGN_BIT):
        raise b.error(f"fused activation {act.name} is not supported")
    return act


_OUTPUT_TYPES = {
    "float": "FLOAT32",
    "int8": "INT8",
    "int16": "INT16",
    "hybrid": "FLOAT32",
}
"""The output type of a conv / dense of each kind (``_weights_kind``)."""
_BIAS_TYPES = {
    "float": "FLOAT32",
    "int8": "INT32",
    "int16": "INT64",
    "hybrid": "FLOAT32",
}
"""The bias type of each kind: TFLite Micro reads a 16x8 bias as int64."""


def _weights_kind(b: RelayBuilder, x: Tensor, w: Tensor, hybrid: bool = False) -> str:
    """``"float"``, ``"int8"``, ``"int16"`` (int16 activations with int8
    weights, "16x8") or, where the operator has a hybrid import
    (``hybrid``), ``"hybrid"`` (float32 activations with int8 weights,
    ``tflite_ops_hybrid``); refuses other combinations."""
    kinds = (_type(x), _type(w))
    if kinds == ("FLOAT32", "FLOAT32"):
        return "float"
    if kinds == ("INT8", "INT8"):
        return "int8"
    if kinds == ("INT16", "INT8"):
        return "int16"
    if hybrid and kinds == ("FLOAT32", "INT8"):
        return "hybrid"
    if _type(x) == "FLOAT32" and _type(w) in ("INT8", "UINT8", "INT4"):
        supported = "FULLY_CONNECTED and CONV_2D with INT8 weights"
        raise b.error(
            f"hybrid operator: float32 activations with {_type(w)} weights "
            f"(dynamic-range quantisation) are supported for {supported} only; "
            "convert the model fully to float32 or to int8"
        )
    raise b.error(
        f"unsupported types: input {_type(x)} with weights {_type(w)} "
        "(supported: FLOAT32 x FLOAT32, INT8 x INT8, INT16 x INT8)"
    )


def _expect_type(b: RelayBuilder, t: Tensor, type_name: str, what: str) -> None:
    if _type(t) != type_name:
        raise b.error(f"{what} '{t.name}' is {_type(t)}, expected {type_name}")


def _check_shape(b: RelayBuilder, value: SSAValue, out: Tensor) -> None:
    assert isinstance(value.type, TensorType)
    shape = tuple(value.type.get_shape())
    if shape != out.shape:
        raise b.error(
            f"computed output shape {list(shape)} differs from the shape "
            f"{list(out.shape)} stored for '{out.name}'"
        )


def _symmetric_weights(b: RelayBuilder, w: Tensor, channels: int) -> Quantization:
    """The weights' quantisation: zero points 0; one scale, or one per output
    channel (``channels``) along a dimension of the weights with that many
    entries. TFLite Micro checks just that (``filter->dims->data[
    quantized_dimension] == num_channels``) and reads scale ``i`` for output
    channel ``i`` whichever dimension the file names."""
    quant = _quant(b, w, "weights")
    if any(quant.zero_points):  # (ints: a zero point other than 0)
        raise b.error(f"int8 weights '{w.name}' must be symmetric (zero point 0)")
    dim = quant.axis
    if quant.per_channel and (
        len(quant.scales) != channels
        or not (0 <= dim < len(w.shape) and w.shape[dim] == channels)
    ):
        raise b.error(
            f"weights '{w.name}' have {len(quant.scales)} scales along dimension "
            f"{dim} of shape {list(w.shape)}; expected one scale, or one per output "
            f"channel ({channels}) along a dimension of that size"
        )
    return quant


# -- shared pieces -------------------------------------------------------------


def _padding(
    b: RelayBuilder,
    mode: int,
    in_size: int,
    filter_size: int,
    stride: int,
    dilation: int,
) -> tuple[int, int, int]:
    """TFLite ``ComputePaddingHeightWidth``: ``(before, after, out_size)``."""
    for what, value in (
        ("filter size", filter_size),
        ("stride", stride),
        ("dilation factor", dilation),
    ):
        if value < 1:
            raise b.error(f"{what} {value} must be at least 1")
    effective = (filter_size - 1) * dilation + 1
    if mode == _PADDING_SAME:
        out = (in_size + stride - 1) // stride
    elif mode == _PADDING_VALID:
        out = (in_size - effective + stride) // stride
    else:
        raise b.error(f"unknown padding mode {mode}")
    total = max(0, (out - 1) * stride + effective - in_size)
    return total // 2, total - total // 2, out


def _float_activation(b: RelayBuilder, x: SSAValue, act: q.Activation) -> SSAValue:
    bounds = q.activation_range_float(act)
    if bounds is None:
        return x
    if act == q.Activation.RELU:
        return b.emit(ReluOp(x))
    return b.emit(ClipOp(x, *bounds))


def _bias(
    b: RelayBuilder,
    acc: SSAValue,
    position: int,
    kind: str,
    channels: int,
    int32_accumulator: bool = True,
) -> SSAValue:
    """``acc`` plus the operator's bias, if it has one.

    16x8 (``kind == "int16"``): the i64 sum of ``relay.conv2d|dense`` is
    TFLite Micro's int64 accumulator when the bias is INT64 and when there
    is none; CONV_2D and FULLY_CONNECTED with an INT32 bias accumulate in
    int32 instead (``int32_accumulator``; the i64 sum cast to i32 is that
    int32 sum, wrap-around included), which changes the requantisation's
    rounding (``relay.fixed_point_multiply`` on i32: gemmlowp's double
    rounding instead of the int64 path's single rounding with a 16-bit
    multiplier). Without a bias TFLite Micro (the ``tflite-micro`` package
    the tests compare with) takes the int64 path: the int32 one mismatched
    it on 25 of 30 random no-bias convolutions. DEPTHWISE_CONV_2D always
    accumulates in int64 and takes no INT32 bias."""
    bias = b.input_tensor(position)
    if kind == "int16":
        allowed = ("INT64", "INT32") if int32_accumulator else ("INT64",)
        if bias is not None and _type(bias) not in allowed:
            raise b.error(
                f"bias '{bias.name}' is {_type(bias)}, expected "
                f"{' or '.join(allowed)} for int16 input with int8 weights"
            )
        if int32_accumulator and bias is not None and _type(bias) == "INT32":
            acc = b.emit(CastOp(acc, i32))
            kind = "int8"  # an int32 accumulator from here on
    if bias is None:
        return acc
    _expect_type(b, bias, _BIAS_TYPES[kind], "bias")
    if bias.shape != (channels,):
        raise b.error(
            f"bias '{bias.name}' has shape {list(bias.shape)}, expected [{channels}]"
        )
    return b.emit(AddOp(acc, b.tensor_constant(bias)))


def _output_stage(
    b: RelayBuilder,
    acc: SSAValue,
    x: Tensor,
    w_quant: Quantization,
    out: Tensor,
    act: q.Activation,
    axis: int,
    fully_connected: bool = False,
) -> SSAValue:
    """Requantise the accumulator of a conv/dense to ``out``: int32 to int8,
    or int64 to int16 (16x8, input and output zero points 0 as TFLite
    Micro requires)."""
    in_q = _per_tensor(b, x, "input")
    out_q = _per_tensor(b, out, "output")
    if _type(out) == "INT16":
        for what, t, quant in (("input", x, in_q), ("output", out, out_q)):
            if quant.zero_point != 0:
                raise b.error(
                    f"int16 {what} '{t.name}' has zero point {quant.zero_point}; "
                    "16x8 operators need 0 (symmetric), as TFLite Micro"
                )
    if fully_connected and not w_quant.per_channel:
        m, s = q.fully_connected_multiplier(in_q.scale, w_quant.scale, out_q.scale)
        multipliers, shifts = [m], [s]
    else:
        multipliers, shifts = q.conv_multipliers(
            in_q.scale, list(w_quant.scales), out_q.scale
        )
    dtype = np.dtype("int16" if _type(out) == "INT16" else "int8")
    lo, hi = q.activation_range_quantized(
        act, out_q.scale, out_q.zero_point, *int_range(dtype)
    )
    return b.requantize_i32(
        acc, multipliers, shifts, axis, out_q.zero_point, lo, hi, dtype
    )


# -- convolutions --------------------------------------------------------------


def _conv(b: RelayBuilder, depthwise: bool) -> None:
    opts = b.operator.options
    x, w, out = b.required_input(0), b.required_input(1), b.output_tensor()
    kind = _weights_kind(b, x, w, hybrid=not depthwise)
    _expect_type(b, out, _OUTPUT_TYPES[kind], "output")
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise b.error("input and weights must be 4-d (NHWC, OHWI / 1HWC)")
    _, in_h, in_w, in_c = x.shape
    act = _activation(b, opts.FusedActivationFunction())
    if depthwise:
        if w.shape[0] != 1:
            raise b.error(
                f"depthwise weights must be (1, KH, KW, C*M), got {list(w.shape)}"
            )
        _, kh, kw, out_c = w.shape
        if out_c % in_c:
            raise b.error(
                f"{out_c} output channels is not a multiple of {in_c} input channels"
            )
        multiplier = opts.DepthMultiplier()
        if multiplier not in (0, out_c // in_c):  # 0: deprecated, derived from shapes
            raise b.error(f"depth multiplier {multiplier} != {out_c} / {in_c}")
        groups = in_c
        weight = b.tensor_constant(w, "HWIO", lambda a: a.reshape(kh, kw, 1, out_c))
        kernel_layout = "HWIO"
    else:
        out_c, kh, kw, w_in_c = w.shape
        if in_c % w_in_c:
            raise b.error(f"{in_c} input channels is not a multiple of {w_in_c}")
        groups = in_c // w_in_c
        # int8: keep TFLite's OHWI (each output channel's taps contiguous, the
        # input-channel loop vectorises); float: HWIO (neighbouring output
        # channels contiguous, what the lowering's 4-channel jam reads)
        if kind == "float":
            kernel_layout = "HWIO"
            weight = b.tensor_constant(w, "HWIO", lambda a: a.transpose(1, 2, 3, 0))
        else:
            kernel_layout = "OHWI"
            weight = b.tensor_constant(w, "OHWI")
    sh, sw = opts.StrideH(), opts.StrideW()
    dh, dw = opts.DilationHFactor(), opts.DilationWFactor()
    pt, pb, _ = _padding(b, opts.Padding(), in_h, kh, sh, dh)
    pl, pr, _ = _padding(b, opts.Padding(), in_w, kw, sw, dw)
    padding = (pt, pl, pb, pr)

    def conv(input_zero_point: int = 0, data: SSAValue | None = None) -> SSAValue:
        return b.emit(
            Conv2DOp(
                b.value(x) if data is None else data,
                weight,
                strides=(sh, sw),
                padding=padding,
                dilation=(dh, dw),
                groups=groups,
                kernel_layout=kernel_layout,
                input_zero_point=input_zero_point,
            )
        )

    if kind == "float":
        acc = _bias(b, conv(), 2, kind, out_c)
        result = _float_activation(b, acc, act)
    elif kind == "hybrid":
        from usmp.frontend.tflite_ops_hybrid import hybrid_conv

        _symmetric_weights(b, w, out_c)
        if groups != 1:
            raise b.error("hybrid CONV_2D with groups is not supported")
        acc = hybrid_conv(b, x, w, lambda data: conv(data=data))
        result = _float_activation(b, _bias(b, acc, 2, kind, out_c), act)
    else:
        in_q = _per_tensor(b, x, "input")
        w_q = _symmetric_weights(b, w, out_c)
        # int16: a zero point != 0 is refused by the output stage
        zero_point = in_q.zero_point if kind == "int8" else 0
        acc = _bias(b, conv(zero_point), 2, kind, out_c, not depthwise)
        result = _output_stage(b, acc, x, w_q, out, act, axis=3)
    _check_shape(b, result, out)
    b.bind(out, result)


def convert_conv_2d(b: RelayBuilder) -> None:
    _conv(b, depthwise=False)


def convert_depthwise_conv_2d(b: RelayBuilder) -> None:
    _conv(b, depthwise=True)


def convert_fully_connected(b: RelayBuilder) -> None:
    opts = b.operator.options
    x, w, out = b.required_input(0), b.required_input(1), b.output_tensor()
    kind = _weights_kind(b, x, w, hybrid=True)
    _expect_type(b, out, _OUTPUT_TYPES[kind], "output")
    if opts is not None and opts.WeightsFormat() != 0:
        raise b.error("shuffled weights (WeightsFormat != DEFAULT) are not supported")
    if len(w.shape) != 2:
        raise b.error(f"weights must be 2-d (N, K), got {list(w.shape)}")
    n, k = w.shape
    count = int(np.prod(x.shape))
    if count % k:
        raise b.error(f"input {list(x.shape)} cannot be flattened to rows of {k}")
    batch = count // k
    act = _activation(b, opts.FusedActivationFunction() if opts is not None else 0)
    data = b.value(x)
    if x.shape != (batch, k):
        data = b.emit(ReshapeOp(data, (batch, k)))
    weight = b.tensor_constant(w)
    if kind == "float":
        acc = _bias(b, b.emit(DenseOp(data, weight)), 2, kind, n)
        result = _float_activation(b, acc, act)
    elif kind == "hybrid":
        from usmp.frontend.tflite_ops_hybrid import hybrid_fully_connected

        w_q = _symmetric_weights(b, w, n)
        asymmetric = opts is not None and bool(opts.AsymmetricQuantizeInputs())
        acc = hybrid_fully_connected(b, data, weight, w, w_q, asymmetric)
        result = _float_activation(b, _bias(b, acc, 2, kind, n), act)
    else:
        in_q = _per_tensor(b, x, "input")
        w_q = _symmetric_weights(b, w, n)
        acc = b.emit(
            DenseOp(
                data,
                weight,
                input_zero_point=in_q.zero_point if kind == "int8" else 0,
                kernel_zero_point=w_q.zero_point,
            )
        )
        acc = _bias(b, acc, 2, kind, n)
        result = _output_stage(b, acc, x, w_q, out, act, axis=1, fully_connected=True)
    if out.shape != (batch, n):  # keep_num_dims, or a stored rank != 2
        if int(np.prod(out.shape)) != batch * n:
            raise b.error(
                f"output shape {list(out.shape)} does not hold {batch}x{n} values"
            )
        result = b.emit(ReshapeOp(result, out.shape))
    b.bind(out, result)


# -- pooling -------------------------------------------------------------------


def _pool(b: RelayBuilder, op_class: type[AvgPool2DOp] | type[MaxPool2DOp]) -> None:
    opts = b.operator.options
    x, out = b.required_input(0), b.output_tensor()
    if _type(x) not in ("FLOAT32", "INT8") or _type(out) != _type(x):
        raise b.error(f"unsupported types {_type(x)} -> {_type(out)} (FLOAT32 or INT8)")
    if len(x.shape) != 4:
        raise b.error("input must be 4-d (NHWC)")
    act = _activation(b, opts.FusedActivationFunction())
    fh, fw = opts.FilterHeight(), opts.FilterWidth()
    sh, sw = opts.StrideH(), opts.StrideW()
    pt, pb, _ = _padding(b, opts.Padding(), x.shape[1], fh, sh, 1)
    pl, pr, _ = _padding(b, opts.Padding(), x.shape[2], fw, sw, 1)
    result = b.emit(
        op_class(b.value(x), (fh, fw), strides=(sh, sw), padding=(pt, pl, pb, pr))
    )
    if _type(x) == "FLOAT32":
        result = _float_activation(b, result, act)
    else:
        in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
        if (in_q.scale, in_q.zero_point) != (out_q.scale, out_q.zero_point):
            raise b.error("int8 pooling needs the same input and output quantisation")
        lo, hi = q.activation_range_quantized(
            act, out_q.scale, out_q.zero_point, -128, 127
        )
        if (lo, hi) != (-128, 127):
            result = b.emit(ClipOp(result, float(lo), float(hi)))
    _check_shape(b, result, out)
    b.bind(out, result)


def convert_average_pool_2d(b: RelayBuilder) -> None:
    _pool(b, AvgPool2DOp)


def convert_max_pool_2d(b: RelayBuilder) -> None:
    _pool(b, MaxPool2DOp)


# -- shape, softmax, (de)quantisation -----------------------------------------


def convert_reshape(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    if int(np.prod(x.shape)) != int(np.prod(out.shape)):
        raise b.error(f"cannot reshape {list(x.shape)} to {list(out.shape)}")
    if x.quantization != out.quantization:
        raise b.error("RESHAPE must not change the quantisation")
    b.bind(out, b.emit(ReshapeOp(b.value(x), out.shape)))


def convert_softmax(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    beta = float(b.operator.options.Beta())
    if not math.isfinite(beta):
        raise b.error(f"beta {beta} must be a finite number")
    if (_type(x), _type(out)) == ("FLOAT32", "FLOAT32"):
        data = b.value(x)
        if beta != 1.0:
            data = b.emit(MultiplyOp(data, b.scalar(beta, "float32")))
        b.bind(out, b.emit(SoftmaxOp(data, axis=-1)))
        return
    if (_type(x), _type(out)) == ("INT16", "INT16"):
        _int16_softmax(b, x, out, beta)
        return
    if (_type(x), _type(out)) not in (("INT8", "INT8"), ("INT8", "INT16")):
        raise b.error(
            f"unsupported types {_type(x)} -> {_type(out)} "
            "(supported: FLOAT32 -> FLOAT32, INT8 -> INT8, INT8 -> INT16, "
            "INT16 -> INT16)"
        )
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    bits = 16 if _type(out) == "INT16" else 8
    # TFLM's Prepare: int16 output zero point -32768, scale 1/65536 within 0.1%
    if bits == 16 and (
        out_q.zero_point != -32768 or abs(out_q.scale - 1.0 / 65536) > 0.001 / 65536
    ):
        raise b.error(
            f"int16 softmax output must have scale 1/65536 and zero point -32768, "
            f"got scale {out_q.scale} and zero point {out_q.zero_point}"
        )
    if bits == 8 and (out_q.scale, out_q.zero_point) != (
        SOFTMAX_OUTPUT_SCALE,
        SOFTMAX_OUTPUT_ZERO_POINT,
    ):
        raise b.error(
            f"int8 softmax output must have scale 1/256 and zero point -128, got "
            f"scale {out_q.scale} and zero point {out_q.zero_point}"
        )
    multiplier, left_shift, diff_min = q.softmax_params(beta, in_q.scale)
    op = QuantizedSoftmaxOp(
        b.value(x),
        multiplier,
        left_shift,
        diff_min,
        output_bits=bits if bits != 8 else None,
    )
    b.bind(out, b.emit(op))


def _int16_softmax(b: RelayBuilder, x: Tensor, out: Tensor, beta: float) -> None:
    """TFLite Micro's int16 SOFTMAX: output zero point 0 and scale 1/32768
    (within 0.1%, as its Prepare checks)."""
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    if out_q.zero_point != 0 or abs(out_q.scale - 1 / 32768) > 0.001 / 32768:
        raise b.error(
            "int16 softmax output must have scale 1/32768 and zero point 0, got "
            f"scale {out_q.scale} and zero point {out_q.zero_point}"
        )
    multiplier, left_shift = q.softmax_int16_params(beta, in_q.scale)
    if not -31 <= left_shift <= 30:
        raise b.error(
            f"input scale {in_q.scale} times beta {beta} is out of the range of "
            "TFLite Micro's int16 softmax"
        )
    b.bind(out, b.emit(QuantizedSoftmaxInt16Op(b.value(x), multiplier, left_shift)))


_REQUANTIZE_TYPES = (
    ("INT8", "INT8"),
    ("INT8", "INT16"),
    ("INT8", "INT32"),
    ("INT16", "INT8"),
    ("INT16", "INT16"),
    ("INT16", "INT32"),
    ("INT32", "INT8"),
    ("INT32", "INT16"),
    ("UINT8", "INT8"),
    ("INT8", "UINT8"),
)
"""Integer QUANTIZE pairs of TFLite Micro's ``quantize_common.cc``: all
``reference_ops::Requantize`` (uint8 only to and from int8, as TFLM)."""


def convert_quantize(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    out_q = _per_tensor(b, out, "output")
    dtype = np.dtype(out.dtype)
    if _type(x) == "FLOAT32":
        if _type(out) not in ("INT8", "INT16"):
            raise b.error(
                f"unsupported output type {_type(out)} (INT8 or INT16; TFLite "
                "Micro quantises FLOAT32 to no other)"
            )
        if out_q.scale == 0 or math.isnan(out_q.scale):
            raise q.ScaleError(
                f"the output scale is {out_q.scale}: TFLite Micro divides by it and "
                "converts the infinite or NaN quotient to an int, undefined"
            )
        value = QuantizeOp(
            b.value(x), out_q.scale, out_q.zero_point, element_type(dtype)
        )
        b.bind(out, b.emit(value))
        return
    if (_type(x), _type(out)) not in _REQUANTIZE_TYPES:
        pairs = ", ".join(" -> ".join(p) for p in _REQUANTIZE_TYPES)
        raise b.error(
            f"unsupported requantisation {_type(x)} -> {_type(out)} "
            f"(supported: FLOAT32 -> INT8 or INT16; {pairs})"
        )
    # Requantize: MultiplyByQuantizedMultiplier(x - zp_in) + zp_out, clamped
    in_q = _per_tensor(b, x, "input")
    m, s = q.requantize_multiplier(in_q.scale, out_q.scale)
    acc = b.value(x) if _type(x) == "INT32" else b.emit(CastOp(b.value(x), i32))
    if in_q.zero_point:
        acc = b.emit(AddOp(acc, b.scalar(-in_q.zero_point, "int32")))
    lo, hi = int_range(dtype)
    b.bind(out, b.requantize_i32(acc, [m], [s], -1, out_q.zero_point, lo, hi, dtype))


def convert_dequantize(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    if _type(x) == "FLOAT16":  # constants were folded (tflite_fold)
        raise b.error(
            f"input '{x.name}' is a FLOAT16 activation; FLOAT16 is supported only "
            "for constants (weights), folded into FLOAT32 constants"
        )
    if _type(x) not in ("INT8", "UINT8", "INT16") or _type(out) != "FLOAT32":
        raise b.error(
            f"unsupported types {_type(x)} -> {_type(out)} "
            "(INT8/UINT8/INT16 -> FLOAT32, or a FLOAT16 constant -> FLOAT32)"
        )
    in_q = _per_tensor(b, x, "input")
    b.bind(out, b.emit(DequantizeOp(b.value(x), in_q.scale, in_q.zero_point)))


def convert_densify(b: RelayBuilder) -> None:
    """DENSIFY of a constant was folded (``tflite_fold``): what is left
    densifies an activation."""
    x = b.required_input(0)
    raise b.error(
        f"input '{x.name}' is not a constant; DENSIFY is supported for sparse "
        "constants (densified at compile time)"
    )


# -- elementwise ---------------------------------------------------------------


def convert_add(b: RelayBuilder) -> None:
    x1, x2, out = b.required_input(0), b.required_input(1), b.output_tensor()
    act = _activation(b, b.operator.options.FusedActivationFunction())
    types = (_type(x1), _type(x2), _type(out))
    if types == ("FLOAT32",) * 3:
        result = _float_activation(b, b.emit(AddOp(b.value(x1), b.value(x2))), act)
    elif types in (("INT8",) * 3, ("INT16",) * 3):
        result = quantized_add(b, AddOp, x1, x2, out, act)
    else:
        raise b.error(
            f"unsupported types {', '.join(types)} (all FLOAT32, all INT8 or all INT16)"
        )
    _check_shape(b, result, out)
    b.bind(out, result)


def quantized_add(
    b: RelayBuilder,
    op_class: type[AddOp] | type[SubtractOp],
    x1: Tensor,
    x2: Tensor,
    out: Tensor,
    act: q.Activation,
) -> SSAValue:
    """int8 / int16 ADD and SUB (TFLite Micro's ``AddElementwise`` /
    ``SubElementwise``, the general path for both types): each input
    ``(x - zp) << left_shift`` (20 for int8, 15 for int16) times its
    multiplier, then the sum or difference rescaled to the output and
    clamped to the fused activation's range of the output type."""
    dtype = np.dtype(out.dtype)
    left_shift = q.ADD_LEFT_SHIFT_INT16 if dtype == np.int16 else q.ADD_LEFT_SHIFT_INT8
    q1, q2 = _per_tensor(b, x1, "input 1"), _per_tensor(b, x2, "input 2")
    out_q = _per_tensor(b, out, "output")
    (m1, s1), (m2, s2), (mo, so) = q.add_multipliers(
        q1.scale, q2.scale, out_q.scale, left_shift
    )
    lhs = _scaled_add_input(b, x1, q1.zero_point, m1, s1, left_shift)
    rhs = _scaled_add_input(b, x2, q2.zero_point, m2, s2, left_shift)
    total = b.emit(op_class(lhs, rhs))
    lo, hi = q.activation_range_quantized(
        act, out_q.scale, out_q.zero_point, *int_range(dtype)
    )
    return b.requantize_i32(total, [mo], [so], -1, out_q.zero_point, lo, hi, dtype)


def _scaled_add_input(
    b: RelayBuilder,
    t: Tensor,
    zero_point: int,
    multiplier: int,
    shift: int,
    left_shift: int,
) -> SSAValue:
    """``(x - zp) << left_shift`` then the input's fixed-point multiplier."""
    x = b.emit(CastOp(b.value(t), i32))
    if zero_point:
        x = b.emit(AddOp(x, b.scalar(-zero_point, "int32")))
    x = b.emit(MultiplyOp(x, b.scalar(1 << left_shift, "int32")))
    return b.emit(FixedPointMultiplyOp(x, [multiplier], [shift]))


_CONVERTERS: dict[str, Converter] = {
    "ADD": convert_add,
    "AVERAGE_POOL_2D": convert_average_pool_2d,
    "CONV_2D": convert_conv_2d,
    "DEPTHWISE_CONV_2D": convert_depthwise_conv_2d,
    "DEQUANTIZE": convert_dequantize,
    "DENSIFY": convert_densify,
    "FULLY_CONNECTED": convert_fully_connected,
    "MAX_POOL_2D": convert_max_pool_2d,
    "QUANTIZE": convert_quantize,
    "RESHAPE": convert_reshape,
    "SOFTMAX": convert_softmax,
}

CONVERTERS: Mapping[str, Converter] = MappingProxyType(_CONVERTERS)
"""TFLite builtin operator name -> converter (read-only view)."""


def register(converters: Mapping[str, Converter]) -> None:
    """Add the converters of another module (``tflite_ops_elementwise``)."""
    clash = sorted(set(converters) & set(_CONVERTERS))
    if clash:
        raise ValueError(f"converters registered twice: {clash}")
    _CONVERTERS.update(converters)


# imported last, in either import order: it uses the checks above and
# registers its converters when its body has run
from usmp.frontend import (  # noqa: E402, F401
    tflite_ops_activation,
    tflite_ops_conv,
    tflite_ops_elementwise,
    tflite_ops_image,
    tflite_ops_layout,
    tflite_ops_lstm,
    tflite_ops_svdf,
    tflite_ops_transcendental,
    tflite_ops_variables,
)
