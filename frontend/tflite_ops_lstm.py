"""UNIDIRECTIONAL_SEQUENCE_LSTM -> ``relay.lstm`` (``dialects/relay_lstm.py``).

``tflite_ops`` imports this module, which registers its converter. What
TFLite Micro's kernel supports is imported, the rest refused with the
operator's index: float32, or int8 activations and weights with int32 biases
and an int16 cell state (TFLM's integer LSTM), or 16x8 (int16 activations of
zero point 0, int8 weights, int64 biases); time-major or batch-major;
the cell gate's activation TANH (TFLM's only other one, sigmoid, cannot be
written in a model's options). Refused as TFLM refuses them: peephole
weights (inputs 9-11), projection (16-17), layer norm (20-23), coupled
input and forget gates (inputs 1 and 5 omitted), hybrid models (float
activations with int8 weights).

The integer parameters are the ones TFLM's ``Prepare`` computes
(``lstm_eval_common.cc``): each gate's two FCs requantise to the Q3.12 gate
scale 2^-12 (``GetQuantizedConvolutionMultipler``: input and weight scale
multiplied and divided in double, ``quantization.fully_connected_multiplier``);
the three products of Q0.15
values (scale 2^-15) requantise to the cell scale and to the hidden state's
scale (``CreateInterGateMulParams``, in double); the cell scale's power of
two is ``round(log2(scale))`` (``CheckedLog2``) and the cell clip
``int16(clip / cell_scale)``, saturated.

The states (inputs 18 and 19) are TFLite variable tensors: ``relay.state``
values (``RelayBuilder.state``, TFLM's reset value: the zero point for int8,
else 0), the op's state operands, updated in place at every invocation.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from usmp.dialects.relay_lstm import LstmOp
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_ops import _per_tensor, register  # pyright: ignore[reportPrivateUsage]
from usmp.frontend.tflite_reader import Tensor

_WEIGHTS = tuple(range(1, 9))
_BIASES = tuple(range(12, 16))
_HIDDEN, _CELL = 18, 19
_UNSUPPORTED = {
    "peephole weights": (9, 10, 11),
    "a projection": (16, 17),
    "layer normalisation": (20, 21, 22, 23),
}
_GATE_SCALE = 2.0**-12
"""Scale of the gates' inputs: Q3.12 (TFLM's ``nonlinear_input_scale``)."""
_NONLINEAR_OUTPUT_SCALE = 2.0**-15
"""Scale of sigmoid / tanh outputs: Q0.15."""


def _state(b: RelayBuilder, t: Tensor, what: str) -> SSAValue:
    if not t.is_variable:
        raise b.error(f"{what} '{t.name}' must be a variable tensor")
    return b.state(t)


def _check_inputs(b: RelayBuilder) -> None:
    inputs = b.operator.inputs
    if len(inputs) != 24:
        raise b.error(f"{len(inputs)} inputs, expected 24")
    for what, positions in _UNSUPPORTED.items():
        given = [p for p in positions if b.input_tensor(p) is not None]
        if given:
            raise b.error(
                f"{what} (inputs {', '.join(map(str, given))}): not supported, "
                "TFLite Micro's LSTM has none (supported: the standard LSTM with "
                "inputs 0-8, 12-15, 18, 19)"
            )
    if b.input_tensor(1) is None or b.input_tensor(5) is None:
        raise b.error(
            "coupled input and forget gates (CIFG: inputs 1 and 5 omitted) are not "
            "supported, as in TFLite Micro"
        )


def _integer_properties(
    b: RelayBuilder,
    x: Tensor,
    weights: list[Tensor],
    hidden: Tensor,
    cell: Tensor,
    cell_clip: float,
) -> dict[str, object]:
    x_q = _per_tensor(b, x, "input")
    h_q = _per_tensor(b, hidden, "hidden state")
    c_q = _per_tensor(b, cell, "cell state")
    multipliers: list[int] = []
    shifts: list[int] = []
    for k, w in enumerate(weights):
        w_q = _per_tensor(b, w, f"weights (input {k + 1})")
        if w_q.zero_point != 0:
            raise b.error(
                f"weights '{w.name}' (input {k + 1}) have zero point "
                f"{w_q.zero_point}; TFLite's int8 weights are symmetric (zero point 0)"
            )
        source = x_q if k < 4 else h_q
        m, s = q.fully_connected_multiplier(source.scale, w_q.scale, _GATE_SCALE)
        multipliers.append(m)
        shifts.append(s)
    cell_scale = float(c_q.scale)
    hidden_scale = float(h_q.scale)
    products = [
        (_NONLINEAR_OUTPUT_SCALE, cell_scale, cell_scale),
        (_NONLINEAR_OUTPUT_SCALE, _NONLINEAR_OUTPUT_SCALE, cell_scale),
        (_NONLINEAR_OUTPUT_SCALE, _NONLINEAR_OUTPUT_SCALE, hidden_scale),
    ]
    pairs = [
        q.quantize_multiplier(q.div(a * c, o), "Q0.15 scale * scale / output scale")
        for a, c, o in products
    ]
    if c_q.zero_point != 0:
        raise b.error(f"cell state '{cell.name}' must have zero point 0")
    # CheckedLog2 (TFLM ignores whether the scale is an exact power of two)
    power, _ = q.checked_log2(cell_scale, "the cell state scale")
    clip = 0
    if cell_clip > 0:
        clip = int(min(max(q.div(cell_clip, cell_scale), -32768.0), 32767.0))
    return {
        "gate_multipliers": multipliers,
        "gate_shifts": shifts,
        "mul_multipliers": [m for m, _ in pairs],
        "mul_shifts": [s for _, s in pairs],
        "input_zero_point": x_q.zero_point,
        "hidden_zero_point": h_q.zero_point,
        "cell_scale_power": power,
        "quantized_cell_clip": clip,
    }


def convert_unidirectional_sequence_lstm(b: RelayBuilder) -> None:
    _check_inputs(b)
    options = b.operator.options
    x, out = b.required_input(0), b.output_tensor()
    weights = [b.required_input(p) for p in _WEIGHTS]
    biases = [b.required_input(p) for p in _BIASES]
    hidden, cell = b.required_input(_HIDDEN), b.required_input(_CELL)
    activation = q.Activation(options.FusedActivationFunction())
    if activation != q.Activation.TANH:
        raise b.error(
            f"cell activation {activation.name} is not supported (TFLite Micro's "
            "LSTM: TANH)"
        )
    cell_clip = float(options.CellClip())
    if not cell_clip >= 0:
        raise b.error(f"cell_clip {cell_clip} must be >= 0")
    types = (
        x.type_name,
        {w.type_name for w in weights},
        {t.type_name for t in biases},
        hidden.type_name,
        cell.type_name,
        out.type_name,
    )
    properties: dict[str, object] = {
        "time_major": bool(options.TimeMajor()),
        "cell_clip": cell_clip,
    }
    if types == ("FLOAT32", {"FLOAT32"}, {"FLOAT32"}, "FLOAT32", "FLOAT32", "FLOAT32"):
        pass
    elif types == ("INT8", {"INT8"}, {"INT32"}, "INT8", "INT16", "INT8"):
        properties.update(_integer_properties(b, x, weights, hidden, cell, cell_clip))
    elif types == ("INT16", {"INT8"}, {"INT64"}, "INT16", "INT16", "INT16"):
        for t, what in ((x, "input"), (hidden, "hidden state"), (out, "output")):
            zero = _per_tensor(b, t, what).zero_point
            if zero != 0:
                raise b.error(
                    f"{what} '{t.name}' has zero point {zero}; TFLite Micro's 16x8 "
                    "LSTM takes symmetric int16 activations (zero point 0)"
                )
        properties.update(_integer_properties(b, x, weights, hidden, cell, cell_clip))
    else:
        raise b.error(
            f"unsupported types: input {types[0]}, weights {sorted(types[1])}, "
            f"biases {sorted(types[2])}, hidden state {types[3]}, cell state "
            f"{types[4]}, output {types[5]} (supported: all FLOAT32; INT8 input, "
            "weights, hidden state and output with INT32 biases and an INT16 cell "
            "state; 16x8: INT16 input, hidden state, cell state and output with "
            "INT8 weights and INT64 biases)"
        )
    args = [
        b.value(x),
        *(b.value(w) for w in weights),
        *(b.value(t) for t in biases),
        _state(b, hidden, "hidden state (input 18)"),
        _state(b, cell, "cell state (input 19)"),
    ]
    b.bind(out, b.emit(LstmOp(args, **properties)))


register({"UNIDIRECTIONAL_SEQUENCE_LSTM": convert_unidirectional_sequence_lstm})
