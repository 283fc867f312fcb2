"""Converters of the transcendental TFLite builtins: LOGISTIC, TANH, EXP,
LOG, SQRT, RSQRT and L2_NORMALIZATION.

``tflite_ops`` imports this module, which registers its converters. Float is
``relay.sigmoid`` / ``relay.tanh``. The integer kernels are TFLite Micro's,
bit for bit (the oracle, ``usmp.oracle.tflite_activations``, is checked
against them; the importer computes its tables with its own scalar
``usmp.frontend.gemmlowp``):

* int8: TFLite Micro computes gemmlowp's fixed-point ``logistic`` / ``tanh``
  on the input rescaled to Q4.27, per element. The output depends on the
  input value alone, so the importer runs that kernel
  (``gemmlowp.logistic_int8_table``) on the 256 int8 values once and emits
  ``relay.table_lookup`` of the 256 results: a constant the planner places
  in the constant pool, one load per element at run time. The output
  quantisation must be TFLite's (LOGISTIC: scale 1/256, zero point -128;
  TANH: 1/128, 0), which TFLite Micro assumes.
* int16: ``relay.quantized_sigmoid`` / ``relay.quantized_tanh`` (the
  interpolation in TFLite's 256-entry table of ``reference_integer_ops``),
  with ``input_multiplier`` / ``input_left_shift`` from TFLite Micro's
  Prepare (``quantization.logistic_tanh_int16_params``); zero points 0 and
  an output scale of 2**-15, as TFLite Micro requires.

EXP, LOG and SQRT are float only in TFLite Micro (``relay.exp``, ``relay.log``,
``relay.sqrt``: libm's ``expf``, ``logf``, ``sqrtf``). RSQRT is float
(``relay.rsqrt``, ``1.0f / sqrtf``) and int8: TFLite Micro computes ``1 /
sqrt(x - zp)`` per element with ``GetInvSqrtQuantizedMultiplierExp`` (five
Newton-Raphson steps) and rescales it; as for LOGISTIC, the importer
tabulates that kernel on the 256 values (``relay.table_lookup``); int16 RSQRT
(zero points 0) is ``relay.quantized_rsqrt``, the same kernel per element.
Inputs below the zero point, which TFLite Micro refuses while running, give
the type's largest value (the kernel's value at the zero point).

L2_NORMALIZATION (last axis): float as TFLite Micro's reference, ``x /
max(sqrt(sum(x * x)), 1e-6)`` (``relay.sum`` of the squares with
``keepdims``, then ``sqrt``, ``maximum``, a broadcast ``divide``); int8 is
``relay.quantized_l2_normalize`` (TFLite Micro's integer kernel; output
scale 1/128 and zero point 0, as TFLite Micro requires).
"""

from __future__ import annotations

import numpy as np

from usmp.dialects.relay_nn_ops import SumOp
from usmp.dialects.relay_ops import (
    DivideOp,
    ExpOp,
    LogOp,
    MaximumOp,
    MultiplyOp,
    RsqrtOp,
    SigmoidOp,
    SqrtOp,
    TanhOp,
)
from usmp.dialects.relay_tflite_ops import (
    QuantizedL2NormalizeOp,
    QuantizedRsqrtOp,
    QuantizedSigmoidOp,
    QuantizedTanhOp,
    TableLookupOp,
)
from usmp.frontend import gemmlowp
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_ops import _per_tensor, _type, register
from usmp.frontend.tflite_ops_elementwise import _bind, _fused_activation
from usmp.frontend.tflite_reader import Tensor

# opcode -> (float op, int8 kernel, int8 output (scale, zero point), int16 op)
_KERNELS = {
    "LOGISTIC": (
        SigmoidOp,
        gemmlowp.logistic_int8_table,
        (1.0 / 256.0, -128),
        QuantizedSigmoidOp,
    ),
    "TANH": (TanhOp, gemmlowp.tanh_int8_table, (1.0 / 128.0, 0), QuantizedTanhOp),
}


def _check_output_quantization(
    b: RelayBuilder, scale: float, zero_point: int, want: tuple[float, int]
) -> None:
    if q.f32(scale) != q.f32(want[0]) or zero_point != want[1]:
        raise b.error(
            f"output quantisation (scale {scale}, zero point {zero_point}) is not "
            f"TFLite's for {b.operator.opcode} (scale {want[0]}, zero point "
            f"{want[1]}), which TFLite Micro's kernel assumes"
        )


def _logistic_or_tanh(b: RelayBuilder) -> None:
    opcode = b.operator.opcode
    float_op, int8_kernel, int8_out, int16_op = _KERNELS[opcode]
    x, out = b.required_input(0), b.output_tensor()
    types = (_type(x), _type(out))
    if types == ("FLOAT32", "FLOAT32"):
        _bind(b, out, b.emit(float_op(b.value(x))))
        return
    if types not in (("INT8", "INT8"), ("INT16", "INT16")):
        raise b.error(
            f"unsupported types {', '.join(types)} (FLOAT32, INT8 or INT16, the "
            "same for input and output, as TFLite Micro's kernel)"
        )
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    if types[0] == "INT8":
        _check_output_quantization(b, out_q.scale, out_q.zero_point, int8_out)
        multiplier, shift, radius = q.logistic_tanh_int8_params(q.f32(in_q.scale))
        table = int8_kernel(in_q.zero_point, radius, multiplier, shift)
        lut = b.constant(np.array(table, np.int8), f"{opcode.lower()}_table")
        _bind(b, out, b.emit(TableLookupOp(b.value(x), lut)))
        return
    if in_q.zero_point != 0 or out_q.zero_point != 0:
        raise b.error(
            f"int16 {opcode} needs zero points 0 (input {in_q.zero_point}, output "
            f"{out_q.zero_point}), as TFLite Micro's kernel"
        )
    log2, is_pot = q.checked_log2(q.f32(out_q.scale))
    if not is_pot or log2 != -15:
        raise b.error(
            f"int16 {opcode} needs the output scale 2**-15 (got {out_q.scale}), as "
            "TFLite Micro's kernel"
        )
    multiplier, shift = q.logistic_tanh_int16_params(
        q.f32(in_q.scale), tanh=opcode == "TANH"
    )
    _bind(b, out, b.emit(int16_op(b.value(x), multiplier, shift)))


_FLOAT_FUNCTIONS = {"EXP": ExpOp, "LOG": LogOp, "SQRT": SqrtOp, "RSQRT": RsqrtOp}


def _float_function(b: RelayBuilder) -> None:
    opcode = b.operator.opcode
    x, out = b.required_input(0), b.output_tensor()
    types = (_type(x), _type(out))
    if types == ("FLOAT32", "FLOAT32"):
        _bind(b, out, b.emit(_FLOAT_FUNCTIONS[opcode](b.value(x))))
        return
    if opcode == "RSQRT" and types in (("INT8", "INT8"), ("INT16", "INT16")):
        _quantized_rsqrt(b, x, out)
        return
    accepted = "FLOAT32, INT8 or INT16" if opcode == "RSQRT" else "FLOAT32 only"
    raise b.error(
        f"unsupported types {', '.join(types)} ({accepted}, as TFLite Micro's {opcode})"
    )


def _quantized_rsqrt(b: RelayBuilder, x: Tensor, out: Tensor) -> None:
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    multiplier, shift = q.rsqrt_multiplier(q.f32(in_q.scale), q.f32(out_q.scale))
    if not -11 <= shift <= 30:
        raise b.error(
            f"input scale {in_q.scale} and output scale {out_q.scale} are out of "
            f"the range of TFLite Micro's {_type(x)} RSQRT"
        )
    if _type(x) == "INT16":
        if in_q.zero_point != 0 or out_q.zero_point != 0:
            raise b.error(
                f"int16 RSQRT needs zero points 0 (input {in_q.zero_point}, "
                f"output {out_q.zero_point}), as TFLite Micro's kernel"
            )
        op = QuantizedRsqrtOp(b.value(x), multiplier, shift)
        _bind(b, out, b.emit(op))
        return
    table = gemmlowp.rsqrt_int8_table(
        in_q.zero_point, out_q.zero_point, multiplier, shift
    )
    lut = b.constant(np.array(table, np.int8), "rsqrt_table")
    _bind(b, out, b.emit(TableLookupOp(b.value(x), lut)))


def _l2_normalization(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    activation = _fused_activation(b)
    if activation != q.Activation.NONE:
        raise b.error(
            f"fused activation {activation.name} is not supported (TFLite "
            "Micro's L2_NORMALIZATION applies none)"
        )
    types = (_type(x), _type(out))
    rank = len(x.shape)
    if rank == 0:
        raise b.error("the input must have rank 1 or more")
    if types == ("FLOAT32", "FLOAT32"):
        v = b.value(x)
        squares = b.emit(SumOp(b.emit(MultiplyOp(v, v)), [rank - 1], keepdims=True))
        norm = b.emit(SqrtOp(squares))
        norm = b.emit(MaximumOp(norm, b.scalar(q.f32(1e-6), "float32")))
        _bind(b, out, b.emit(DivideOp(v, norm)))
        return
    if types != ("INT8", "INT8"):
        raise b.error(
            f"unsupported types {', '.join(types)} (FLOAT32 or INT8, as TFLite "
            "Micro's L2_NORMALIZATION)"
        )
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    _check_output_quantization(b, out_q.scale, out_q.zero_point, (1.0 / 128.0, 0))
    _bind(b, out, b.emit(QuantizedL2NormalizeOp(b.value(x), in_q.zero_point)))


register(
    {
        "L2_NORMALIZATION": _l2_normalization,
        "LOGISTIC": _logistic_or_tanh,
        "TANH": _logistic_or_tanh,
        **dict.fromkeys(_FLOAT_FUNCTIONS, _float_function),
    }
)
