"""TFLite Micro's UNIDIRECTIONAL_SEQUENCE_LSTM, numpy (the oracle of ``relay.lstm``).

TFLM's kernel (``kernels/lstm_eval.h``, ``LstmStep``), one time step for every
batch row (rows are independent, so batch-major and time-major inputs give
the same arithmetic per row)::

    gate_g = act_g(FC(x_t, W_g, bias_g) + FC(h, R_g))   (input, forget, cell, output)
    c      = forget * c + input * cell      (clipped to +-cell_clip when > 0)
    h      = tanh(c) * output
    out_t  = h

``act`` is sigmoid, and the cell gate's is the op's ``cell_activation``
(TFLite's fused activation: tanh or sigmoid).

Float: float32 arithmetic, TFLite's logistic cut-offs (``kernels.sigmoid``).
Integer (int8 activations and weights, int32 biases, int16 cell state; or
16x8: int16 activations, int8 weights, int64 biases), bit for bit: each FC
accumulates ``(x - x_zp) * w`` in int32 (16x8: int64, requantised with the
64-bit ``MultiplyByQuantizedMultiplier``), adds the bias,
requantises with ``MultiplyByQuantizedMultiplier`` to the gate scale 2^-12
and clamps to int16; the two FCs are added with int16 saturation; sigmoid
and tanh are TFLM's int16 kernels (``logistic_int16`` on Q3.12, the cell's
tanh ``tanh_int16`` with shift ``12 + cell_scale_power``); products of two
int16 values are requantised the same way (to the cell scale, saturated to
int16; the hidden one to the hidden state's scale plus its zero point,
saturated to the hidden state's type).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from usmp.oracle.kernels import sigmoid as float_sigmoid
from usmp.oracle.quantization import (
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
)
from usmp.oracle.tflite_activations import logistic_int16, tanh_int16

Array = npt.NDArray[np.generic]
GATES = ("input", "forget", "cell", "output")
"""Gate order of the weights, biases and per-gate parameters (TFLite's)."""


@dataclass(frozen=True)
class LstmQuantization:
    """The integer kernel's parameters (TFLM's ``Prepare``), per gate in
    ``GATES`` order where a list."""

    input_zero_point: int
    hidden_zero_point: int
    gate_multipliers: Sequence[int]
    """Input FC of each gate, then recurrent FC of each gate (to 2^-12)."""
    gate_shifts: Sequence[int]
    mul_multipliers: Sequence[int]
    """forget * cell, input * cell gate (to the cell scale), tanh(cell) *
    output (to the hidden scale)."""
    mul_shifts: Sequence[int]
    cell_scale_power: int
    cell_clip: int
    """Quantised cell clip (0: none)."""


def _saturate(
    x: npt.NDArray[np.int64], dtype: type[np.integer]
) -> npt.NDArray[np.int64]:
    info = np.iinfo(dtype)
    return np.clip(x, info.min, info.max)


def _fc16(
    x: Array,
    zero_point: int,
    w: Array,
    bias: Array | None,
    m: int,
    s: int,
    wide: bool,
) -> npt.NDArray[np.int64]:
    """One gate FC to int16: int32 sums for int8 data, int64 sums (and the
    64-bit ``MultiplyByQuantizedMultiplier``) for int16 data (``wide``,
    16x8)."""
    acc = (x.astype(np.int64) - zero_point) @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    if wide:
        scaled = multiply_by_quantized_multiplier_int64(acc, m, s)
    else:
        scaled = multiply_by_quantized_multiplier(acc, m, s)
    return _saturate(scaled.astype(np.int64), np.int16)


def _mul(
    a: npt.NDArray[np.int64],
    b: npt.NDArray[np.int64],
    m: int,
    s: int,
    zp: int,
    dtype: type[np.integer],
) -> npt.NDArray[np.int64]:
    product = multiply_by_quantized_multiplier(a * b, m, s).astype(np.int64)
    return _saturate(product + zp, dtype)


def _step_int(
    x: Array,
    weights: Sequence[Array],
    biases: Sequence[Array],
    h: npt.NDArray[np.int64],
    c: npt.NDArray[np.int64],
    q: LstmQuantization,
    cell_activation: str,
    hidden_type: type[np.integer],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    gates: list[npt.NDArray[np.int64]] = []
    wide = hidden_type is np.int16
    for g in range(4):
        pre = _fc16(
            x,
            q.input_zero_point,
            weights[g],
            biases[g],
            q.gate_multipliers[g],
            q.gate_shifts[g],
            wide,
        ) + _fc16(
            h,
            q.hidden_zero_point,
            weights[4 + g],
            None,
            q.gate_multipliers[4 + g],
            q.gate_shifts[4 + g],
            wide,
        )
        pre = _saturate(pre, np.int16)
        if GATES[g] == "cell" and cell_activation == "tanh":
            gates.append(tanh_int16(pre, 0, 0).astype(np.int64))
        else:
            gates.append(logistic_int16(pre, 0, 0).astype(np.int64))
    i, f, g_, o = gates
    m, s = q.mul_multipliers, q.mul_shifts
    c = _mul(f, c, m[0], s[0], 0, np.int16)
    c = _saturate(
        c + _mul(i, g_, m[1], s[1], 0, np.int16),
        np.int16,
    )
    if q.cell_clip > 0:
        c = np.clip(c, -q.cell_clip, q.cell_clip)
    shift = 12 + q.cell_scale_power
    multiplier = 0
    if shift < 0:
        shift, multiplier = -shift, 3
    t = tanh_int16(c, multiplier, shift).astype(np.int64)
    h = _mul(t, o, m[2], s[2], q.hidden_zero_point, hidden_type)
    return h, c


def _step_float(
    x: Array,
    weights: Sequence[Array],
    biases: Sequence[Array],
    h: npt.NDArray[np.float32],
    c: npt.NDArray[np.float32],
    cell_clip: float,
    cell_activation: str,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    gates: list[npt.NDArray[np.float32]] = []
    for g in range(4):
        xf = np.asarray(x, np.float32)
        w, r = (
            np.asarray(weights[g], np.float32),
            np.asarray(weights[4 + g], np.float32),
        )
        pre = ((xf @ w.T + np.asarray(biases[g], np.float32)) + h @ r.T).astype(
            np.float32
        )
        if GATES[g] == "cell" and cell_activation == "tanh":
            gates.append(np.tanh(pre).astype(np.float32))
        else:
            gates.append(np.asarray(float_sigmoid(pre), dtype=np.float32))
    i, f, g_, o = gates
    c = (f * c + i * g_).astype(np.float32)
    if cell_clip > 0:
        c = np.clip(c, np.float32(-cell_clip), np.float32(cell_clip))
    h = (np.tanh(c) * o).astype(np.float32)
    return h, c


def lstm(
    x: Array,
    weights: Sequence[Array],
    biases: Sequence[Array],
    hidden: Array,
    cell: Array,
    *,
    time_major: bool,
    cell_activation: str,
    cell_clip: float = 0.0,
    quantization: LstmQuantization | None = None,
) -> tuple[Array, Array, Array]:
    """(output sequence, final hidden state, final cell state).

    ``x``: (B, T, I), or (T, B, I) when ``time_major``; ``weights``: the four
    input weights (S, I) then the four recurrent ones (S, S); ``biases``: four
    (S,); ``hidden``, ``cell``: the states, any shape of B*S elements. Float
    when ``quantization`` is None, else TFLM's integer kernel (``cell_clip``
    is then ``quantization.cell_clip``)."""
    if time_major:
        steps, batch = x.shape[0], x.shape[1]
    else:
        batch, steps = x.shape[0], x.shape[1]
    units = weights[0].shape[0]
    out_dtype = hidden.dtype
    h: Any = hidden.reshape(batch, units)
    c: Any = cell.reshape(batch, units)
    if quantization is not None:
        h, c = h.astype(np.int64), c.astype(np.int64)
    outputs: list[npt.NDArray[np.generic]] = []
    for t in range(steps):
        x_t = x[t] if time_major else x[:, t]
        if quantization is None:
            h, c = _step_float(
                x_t,
                weights,
                biases,
                h,
                c,
                cell_clip,
                cell_activation,
            )
        else:
            h, c = _step_int(
                x_t,
                weights,
                biases,
                h,
                c,
                quantization,
                cell_activation,
                np.int16 if out_dtype == np.int16 else np.int8,
            )
        outputs.append(h.astype(out_dtype))
    out = np.stack(outputs, axis=0 if time_major else 1)
    return (
        out.astype(out_dtype),
        h.astype(out_dtype).reshape(hidden.shape),
        c.astype(cell.dtype).reshape(cell.shape),
    )
