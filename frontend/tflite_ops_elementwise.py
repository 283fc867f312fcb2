"""Converters of the elementwise and data-movement TFLite builtins.

``tflite_ops`` imports this module, which registers its converters in
``tflite_ops.CONVERTERS`` and shares that module's checks. Every converter
emits existing relay ops only; int8 and int16 (every converter here but
RELU_N1_TO_1's, which TFLite Micro lacks) follow TFLite Micro's reference
kernels bit for bit, clamping to the output type's range:

* SUB: as ADD (``sub_common.cc``, the same multipliers, real values in
  double): both inputs ``cast(i32) -> add(-zp) -> multiply(2^20) ->
  fixed_point_multiply`` (``2^15`` for int16), then ``subtract`` -> output
  stage;
* MUL: ``(x1 - zp1) * (x2 - zp2)`` in i32 -> ``fixed_point_multiply`` by
  ``QuantizeMultiplier(s1 * s2 / s_out)`` -> ``add(out_zp)`` -> clamp (int16:
  zero points must be 0, as TFLM requires; the product of two int16 values
  fits in i32);
* MAXIMUM / MINIMUM: on the raw integer values, as TFLM, which neither
  rescales nor checks the quantisations (inputs and output quantised
  differently compare and copy raw values there too);
* CONCATENATION: raw copies; int8 inputs must have the output's scale and
  zero point (TFLM's ``Prepare`` refuses others), int16 ones are copied raw
  whatever their quantisation, as TFLM;
* PAD / PADV2: raw copies and constant padding (0.0, the output zero point
  for int8, 0 for int16 as TFLite Micro, or the PADV2 constant, which for
  int8 must be quantised like the output, as TFLM checks); input and output
  quantisations may differ (TFLM copies raw values without rescaling);
* RELU / RELU6: ``relu`` / ``clip(0, 6)`` on float, on int8 a ``clip`` in the
  quantised domain (``[zp, 127]`` / ``[zp, zp + round(6 / scale)]``); RELU
  requantises when the input and output quantisations differ (TFLM's
  ``ReluQuantized``), RELU6 needs one quantisation (TFLM's ignores the
  output's).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from usmp.dialects.relay_ops import (
    AddOp,
    CastOp,
    ClipOp,
    ConcatenateOp,
    MaximumOp,
    MinimumOp,
    MultiplyOp,
    PadOp,
    SubtractOp,
)
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder, int_range
from usmp.frontend.tflite_ops import (
    _activation,
    _check_shape,
    _float_activation,
    _per_tensor,
    _type,
    quantized_add,
    register,
)
from usmp.frontend.tflite_reader import Quantization, Tensor

# -- shared pieces -------------------------------------------------------------


def _fused_activation(b: RelayBuilder) -> q.Activation:
    opts = b.operator.options
    return _activation(b, opts.FusedActivationFunction() if opts is not None else 0)


def _binary_kind(b: RelayBuilder, *tensors: Tensor, int16: bool = False) -> str:
    """``"float"``, ``"int8"`` or (where the operator takes it, ``int16``)
    ``"int16"`` when all ``tensors`` have that type."""
    types = tuple(_type(t) for t in tensors)
    for kind, name in (("float", "FLOAT32"), ("int8", "INT8"), ("int16", "INT16")):
        if all(t == name for t in types) and (int16 or kind != "int16"):
            return kind
    accepted = (
        "all FLOAT32, all INT8 or all INT16" if int16 else "all FLOAT32 or all INT8"
    )
    raise b.error(f"unsupported types {', '.join(types)} ({accepted})")


def _affine(quant: Quantization) -> tuple[float, int]:
    return quant.scale, quant.zero_point


def _same_quantization(
    b: RelayBuilder, inputs: list[Tensor], out: Tensor, why: str
) -> Quantization:
    """The output's per-tensor quantisation; every input must have it."""
    out_q = _per_tensor(b, out, "output")
    for i, t in enumerate(inputs):
        in_q = _per_tensor(b, t, f"input {i}")
        if _affine(in_q) != _affine(out_q):
            raise b.error(
                f"{_type(out).lower()} {b.operator.opcode} needs every input "
                "quantised like the "
                f"output ({why}): input {i} '{t.name}' has scale {in_q.scale} and "
                f"zero point {in_q.zero_point}, the output scale {out_q.scale} and "
                f"zero point {out_q.zero_point}"
            )
    return out_q


def _centered_i32(b: RelayBuilder, t: Tensor, zero_point: int) -> SSAValue:
    """``cast(i32) - zero_point``."""
    x = b.emit(CastOp(b.value(t), i32))
    if zero_point:
        x = b.emit(AddOp(x, b.scalar(-zero_point, "int32")))
    return x


def _bind(b: RelayBuilder, out: Tensor, result: SSAValue) -> None:
    _check_shape(b, result, out)
    b.bind(out, result)


# -- arithmetic ----------------------------------------------------------------


def convert_sub(b: RelayBuilder) -> None:
    x1, x2, out = b.required_input(0), b.required_input(1), b.output_tensor()
    act = _fused_activation(b)
    if _binary_kind(b, x1, x2, out, int16=True) == "float":
        diff = b.emit(SubtractOp(b.value(x1), b.value(x2)))
        _bind(b, out, _float_activation(b, diff, act))
        return
    _bind(b, out, quantized_add(b, SubtractOp, x1, x2, out, act))


def convert_mul(b: RelayBuilder) -> None:
    x1, x2, out = b.required_input(0), b.required_input(1), b.output_tensor()
    act = _fused_activation(b)
    kind = _binary_kind(b, x1, x2, out, int16=True)
    if kind == "float":
        product = b.emit(MultiplyOp(b.value(x1), b.value(x2)))
        _bind(b, out, _float_activation(b, product, act))
        return
    q1, q2 = _per_tensor(b, x1, "input 1"), _per_tensor(b, x2, "input 2")
    out_q = _per_tensor(b, out, "output")
    if kind == "int16":
        _expect_symmetric(b, [(x1, q1), (x2, q2), (out, out_q)])
    # CalculateOpDataMul: double(s1) * double(s2) / double(s_out)
    m, s = q.mul_multiplier(q1.scale, q2.scale, out_q.scale)
    product = b.emit(
        MultiplyOp(
            _centered_i32(b, x1, q1.zero_point), _centered_i32(b, x2, q2.zero_point)
        )
    )
    dtype = np.dtype(out.dtype)
    lo, hi = q.activation_range_quantized(
        act, out_q.scale, out_q.zero_point, *int_range(dtype)
    )
    _bind(
        b,
        out,
        b.requantize_i32(product, [m], [s], -1, out_q.zero_point, lo, hi, dtype),
    )


def _expect_symmetric(
    b: RelayBuilder, tensors: list[tuple[Tensor, Quantization]]
) -> None:
    """int16 tensors must have zero point 0 where TFLite Micro requires it."""
    for t, quant in tensors:
        if quant.zero_point != 0:
            raise b.error(
                f"int16 {b.operator.opcode} needs zero point 0 (symmetric int16, as "
                f"TFLite Micro requires): '{t.name}' has zero point {quant.zero_point}"
            )


def _extremum(b: RelayBuilder, op_class: type[MaximumOp] | type[MinimumOp]) -> None:
    x1, x2, out = b.required_input(0), b.required_input(1), b.output_tensor()
    _binary_kind(b, x1, x2, out, int16=True)  # TFLM: raw values, no rescaling
    _bind(b, out, b.emit(op_class(b.value(x1), b.value(x2))))


def convert_maximum(b: RelayBuilder) -> None:
    _extremum(b, MaximumOp)


def convert_minimum(b: RelayBuilder) -> None:
    _extremum(b, MinimumOp)


# -- data movement -------------------------------------------------------------


def convert_concatenation(b: RelayBuilder) -> None:
    inputs = [b.required_input(i) for i in range(len(b.operator.inputs))]
    out = b.output_tensor()
    if _fused_activation(b) != q.Activation.NONE:
        raise b.error(
            "a fused activation on CONCATENATION is not supported (TFLite Micro "
            "refuses it too)"
        )
    kind = _binary_kind(b, *inputs, out, int16=True)
    if kind == "int8":  # int16 is copied raw whatever its quantisation
        _same_quantization(
            b,
            inputs,
            out,
            "TFLite Micro's Prepare checks the scale and zero point and copies "
            "the raw values",
        )
    axis = b.operator.options.Axis()
    rank = len(out.shape)
    if not -rank <= axis < rank:
        raise b.error(f"axis {axis} is out of range for rank {rank}")
    if any(len(t.shape) != rank for t in inputs):
        raise b.error(
            "inputs must have the output's rank "
            f"{rank}, got shapes {[list(t.shape) for t in inputs]}"
        )
    _bind(b, out, b.emit(ConcatenateOp([b.value(t) for t in inputs], axis)))


def _pad_width(b: RelayBuilder, x: Tensor) -> list[int]:
    paddings = b.required_input(1)
    if paddings.data is None:
        raise b.error(f"paddings '{paddings.name}' must be a constant")
    if _type(paddings) not in ("INT32", "INT64"):
        raise b.error(f"paddings '{paddings.name}' must be INT32 or INT64")
    rank = len(x.shape)
    if paddings.shape != (rank, 2):
        raise b.error(
            f"paddings '{paddings.name}' have shape {list(paddings.shape)}, "
            f"expected [{rank}, 2]"
        )
    widths = [int(v) for v in paddings.data.reshape(-1)]
    if any(w < 0 for w in widths):
        raise b.error(f"negative paddings {widths} are not supported")
    return widths


def _pad_constant(b: RelayBuilder, kind: str, zero_point: int) -> float:
    """The padding value: PADV2's constant input, else 0.0 / the zero point."""
    constant = b.input_tensor(2)
    if constant is None:
        return 0.0 if kind == "float" else float(zero_point)
    if constant.data is None or constant.data.size != 1:
        raise b.error(f"constant_values '{constant.name}' must be a scalar constant")
    expected = {"float": "FLOAT32", "int8": "INT8", "int16": "INT16"}[kind]
    if _type(constant) != expected:  # integers: TFLM copies the raw value
        raise b.error(f"constant_values '{constant.name}' must be {expected}")
    return float(constant.data.reshape(-1)[0])


def convert_pad(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    kind = _binary_kind(b, x, out, int16=True)
    zero_point = 0
    if kind == "int8":  # raw copies; int16 is padded with 0 as TFLite Micro
        out_q = _per_tensor(b, out, "output")
        zero_point = out_q.zero_point
        constant = b.input_tensor(2)
        if constant is not None:
            c_q = _per_tensor(b, constant, "constant_values")
            if _affine(c_q) != _affine(out_q):
                raise b.error(
                    f"constant_values '{constant.name}' has scale {c_q.scale} and "
                    f"zero point {c_q.zero_point}; TFLite Micro requires the "
                    f"output's scale {out_q.scale} and zero point {out_q.zero_point}"
                )
    value = _pad_constant(b, kind, zero_point)
    _bind(b, out, b.emit(PadOp(b.value(x), _pad_width(b, x), value)))


# -- activations ---------------------------------------------------------------


def _relu(b: RelayBuilder, act: q.Activation) -> None:
    x, out = b.required_input(0), b.output_tensor()
    # TFLite Micro's RELU and RELU6 take int16 (it has no RELU_N1_TO_1)
    int16 = act != q.Activation.RELU_N1_TO_1
    if _binary_kind(b, x, out, int16=int16) == "float":
        _bind(b, out, _float_activation(b, b.value(x), act))
        return
    if act == q.Activation.RELU:
        _requantized_relu(b, x, out)
        return
    out_q = _same_quantization(
        b, [x], out, "the clamp is applied in the quantised domain"
    )
    lo, hi = q.activation_range_quantized(
        act, out_q.scale, out_q.zero_point, *int_range(np.dtype(out.dtype))
    )
    _bind(b, out, b.emit(ClipOp(b.value(x), float(lo), float(hi))))


def _requantized_relu(b: RelayBuilder, x: Tensor, out: Tensor) -> None:
    """TFLite Micro's ``ReluQuantized``: ``MultiplyByQuantizedMultiplier(x -
    zp_in)`` by ``double(s_in) / double(s_out)``, ``+ zp_out``, clamped below
    at ``zp_out`` (real 0); with one quantisation just the clamp (the
    multiplier is exactly 1)."""
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    dtype = np.dtype(out.dtype)
    type_min, type_max = int_range(dtype)
    lo = max(type_min, out_q.zero_point)
    if _affine(in_q) == _affine(out_q):
        _bind(b, out, b.emit(ClipOp(b.value(x), float(lo), float(type_max))))
        return
    m, s = q.requantize_multiplier(in_q.scale, out_q.scale)
    centered = _centered_i32(b, x, in_q.zero_point)
    result = b.requantize_i32(
        centered, [m], [s], -1, out_q.zero_point, lo, type_max, dtype
    )
    _bind(b, out, result)


def convert_relu(b: RelayBuilder) -> None:
    _relu(b, q.Activation.RELU)


def convert_relu6(b: RelayBuilder) -> None:
    _relu(b, q.Activation.RELU6)


register(
    {
        "CONCATENATION": convert_concatenation,
        "MAXIMUM": convert_maximum,
        "MINIMUM": convert_minimum,
        "MUL": convert_mul,
        "PAD": convert_pad,
        "PADV2": convert_pad,
        "RELU": convert_relu,
        "RELU6": convert_relu6,
        "SUB": convert_sub,
    }
)
