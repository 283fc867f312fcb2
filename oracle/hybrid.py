"""LiteRT's reference hybrid kernels in numpy (float32 activations, int8 weights).

A hybrid ("dynamic-range") operator quantises its float input at run time.
TFLite Micro refuses such models; LiteRT runs them. This is what LiteRT's
``EvalHybrid`` (``kernels/fully_connected.cc``, ``kernels/conv.cc``) with the
portable ``tensor_utils`` does, bit for bit equal to ``ai-edge-litert``'s
``BUILTIN_REF`` op resolver (``tests/test_oracle_hybrid.py``,
``tests/test_import_tflite_hybrid.py``):

* each batch row is quantised to int8 on its own, symmetric
  (``SymmetricQuantizeFloats``) or asymmetric (``AsymmetricQuantizeFloats``,
  FULLY_CONNECTED's ``asymmetric_quantize_inputs``), see
  ``dialects/relay_hybrid_ops.py`` for every float step;
* ``scale = row scale * weight scale`` (per tensor or per output channel),
  in float32, then ``out = bias + float(int32 dot(w_row, q) - row_sum(w) *
  zero_point) * scale`` in float32, then the fused activation.

``dynamic_quantize_rows`` is the oracle of the three ``relay.dynamic_quantize*``
operators; ``hybrid_fully_connected`` the whole FULLY_CONNECTED.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

_F32 = np.float32


_FUSED_ACTIVATION_RANGES: dict[int, tuple[float, float] | None] = {
    0: None,  # NONE
    1: (0.0, math.inf),  # RELU
    2: (-1.0, 1.0),  # RELU_N1_TO_1
    3: (0.0, 6.0),  # RELU6
}
"""TFLite's ``ActivationFunctionType`` codes -> the float clamp of
``CalculateActivationRange`` (``None``: no clamp); TANH and SIGN_BIT are
not clamps."""


def _round_half_away(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return (np.sign(x) * np.floor(np.abs(x) + _F32(0.5))).astype(_F32)


def symmetric_quantize_row(
    x: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], np.float32]:
    """LiteRT's ``PortableSymmetricQuantizeFloats``: int8 values and scale."""
    x = np.asarray(x, _F32)
    value_range = _F32(max(abs(x.min()), abs(x.max()))) if x.size else _F32(0)
    if value_range == 0:
        return np.zeros(x.shape, np.int8), _F32(1)
    scaling_factor = _F32(value_range / _F32(127))
    scaled = (x * _F32(_F32(127) / value_range)).astype(_F32)
    return np.clip(_round_half_away(scaled), -127, 127).astype(np.int8), scaling_factor


def asymmetric_quantize_row(
    x: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], np.float32, int]:
    """LiteRT's ``PortableAsymmetricQuantizeFloats``: int8 values, scale and
    zero point. ``rmax - rmin`` is a float32 difference, the rest double;
    the zero point is added to the rounded values."""
    x = np.asarray(x, _F32)
    rmin = min(_F32(0), x.min()) if x.size else _F32(0)
    rmax = max(_F32(0), x.max()) if x.size else _F32(0)
    if rmin == rmax:
        return np.zeros(x.shape, np.int8), _F32(1), 0
    scale = float(_F32(rmax - rmin)) / 255.0
    lo, hi = float(rmin), float(rmax)
    from_min, from_max = -128.0 - lo / scale, 127.0 - hi / scale
    error_min, error_max = 128.0 + abs(lo / scale), 127.0 + abs(hi / scale)
    zero_point_double = from_min if error_min < error_max else from_max
    if zero_point_double <= -128.0:
        zero_point = -128
    elif zero_point_double >= 127.0:
        zero_point = 127
    else:  # std::round: half away from zero
        zero_point = int(
            math.copysign(math.floor(abs(zero_point_double) + 0.5), zero_point_double)
        )
    scaling_factor = _F32(scale)
    inverse = _F32(1.0 / float(scaling_factor))
    # the zero point after the rounding (LiteRT's optimised kernel, the one
    # its x86 build runs: see dialects/relay_hybrid_ops.py)
    rounded = _round_half_away((x * inverse).astype(_F32))
    q = np.clip(rounded + _F32(zero_point), -128, 127).astype(np.int8)
    return q, scaling_factor, zero_point


def dynamic_quantize_rows(
    x: npt.NDArray[np.float32], asymmetric: bool = False
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.int32]]:
    """Each row of the 2-d ``x`` quantised on its own: (q, scales (rows, 1),
    zero points (rows, 1))."""
    rows = np.asarray(x, _F32)
    q = np.zeros(rows.shape, np.int8)
    scales = np.ones((rows.shape[0], 1), _F32)
    zero_points = np.zeros((rows.shape[0], 1), np.int32)
    for r, row in enumerate(rows):
        if asymmetric:
            q[r], scales[r, 0], zero_points[r, 0] = asymmetric_quantize_row(row)
        else:
            q[r], scales[r, 0] = symmetric_quantize_row(row)
    return q, scales, zero_points


def dynamic_quantize(x: np.ndarray, asymmetric: bool = False) -> np.ndarray:
    return dynamic_quantize_rows(x, asymmetric)[0]


def dynamic_quantize_scale(x: np.ndarray, asymmetric: bool = False) -> np.ndarray:
    return dynamic_quantize_rows(x, asymmetric)[1]


def dynamic_quantize_zero_point(x: np.ndarray, asymmetric: bool = True) -> np.ndarray:
    return dynamic_quantize_rows(x, asymmetric)[2]


def hybrid_fully_connected(
    x: npt.NDArray[np.float32],
    weights: npt.NDArray[np.int8],
    weight_scale: float | npt.ArrayLike,
    bias: npt.NDArray[np.float32] | None,
    activation: int,
    asymmetric: bool = False,
) -> npt.NDArray[np.float32]:
    """``x`` (any shape, ``weights.shape[1]`` values per batch row) times the
    int8 ``weights`` (units, depth) as LiteRT's reference hybrid kernel;
    returns (batch, units) float32. ``weight_scale``: one or one per unit;
    ``activation``: TFLite's fused code."""
    if activation not in _FUSED_ACTIVATION_RANGES:
        raise ValueError(f"fused activation {activation} is not a clamp")
    bounds = _FUSED_ACTIVATION_RANGES[activation]
    units, depth = weights.shape
    q, scales, zero_points = dynamic_quantize_rows(
        np.asarray(x, _F32).reshape(-1, depth), asymmetric
    )
    w32 = weights.astype(np.int32)
    dot = q.astype(np.int32) @ w32.T - zero_points * w32.sum(axis=1)
    scale = (scales * np.asarray(weight_scale, _F32)).astype(_F32)
    out = (dot.astype(_F32) * scale).astype(_F32)
    if bias is not None:
        out = (out + np.asarray(bias, _F32)).astype(_F32)
    if bounds is not None:
        out = np.minimum(np.maximum(out, _F32(bounds[0])), _F32(bounds[1]))
    return out
