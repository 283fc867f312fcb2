"""LiteRT's reference hybrid FULLY_CONNECTED in numpy (groundwork, issue 13).

A hybrid ("dynamic-range") operator has float32 activations and int8
weights. TFLite Micro refuses such models; LiteRT runs them. This is what
LiteRT's ``EvalHybrid`` (``kernels/fully_connected.cc``) with the portable
``tensor_utils`` does, bit for bit equal to ``ai-edge-litert``'s
``BUILTIN_REF`` op resolver (``tests/test_oracle_hybrid.py``):

* each batch row is quantised to int8 on its own (``SymmetricQuantizeFloats``):
  ``range = max(|min|, |max|)``, ``scaling_factor = range / 127``,
  ``q = clamp(round_half_away(x * (127 / range)), -127, 127)`` in float32
  (a multiplication by the inverse, not a division); an all-zero row gives
  ``q = 0``, scaling factor 1;
* ``scaling_factor *= weight scale`` (per tensor), then
  ``out = bias + float(int32 dot(w_row, q)) * scaling_factor`` in float32,
  then the fused activation.

The compiler does not use it yet (import still refuses hybrid operators);
asymmetric input quantisation and per-channel weight scales are not covered.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from usmp.frontend.quantization import Activation, activation_range_float

_F32 = np.float32


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
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + _F32(0.5))
    return np.clip(rounded, -127, 127).astype(np.int8), scaling_factor


def hybrid_fully_connected(
    x: npt.NDArray[np.float32],
    weights: npt.NDArray[np.int8],
    weight_scale: float,
    bias: npt.NDArray[np.float32] | None,
    activation: int,
) -> npt.NDArray[np.float32]:
    """``x`` (any shape, ``weights.shape[1]`` values per batch row) times the
    int8 ``weights`` (units, depth) as LiteRT's reference hybrid kernel;
    returns (batch, units) float32. ``activation``: TFLite's fused code."""
    bounds = activation_range_float(Activation(activation))
    units, depth = weights.shape
    rows = np.asarray(x, _F32).reshape(-1, depth)
    out = np.zeros((rows.shape[0], units), _F32)
    if bias is not None:
        out += np.asarray(bias, _F32)
    w32 = weights.astype(np.int32)
    for b, row in enumerate(rows):
        q, scaling_factor = symmetric_quantize_row(row)
        scaling_factor = _F32(scaling_factor * _F32(weight_scale))
        dot = w32 @ q.astype(np.int32)
        out[b] = out[b] + (dot.astype(_F32) * scaling_factor).astype(_F32)
    if bounds is not None:
        out = np.minimum(np.maximum(out, _F32(bounds[0])), _F32(bounds[1]))
    return out
