"""TFLite Micro's SVDF (``kernels/svdf_common.cc``) in numpy: one step.

``svdf(x, weights_feature, weights_time, bias, state, **properties)``
updates ``state`` in place (as the kernel does: shift the history left, write
this step's feature projection in the last column) and returns the output;
the properties are ``relay.svdf``'s (``dialects/relay_svdf.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from usmp.oracle.quantization import multiply_by_quantized_multiplier

_F32 = np.float32


def _activation(y: npt.NDArray[np.float32], name: str) -> npt.NDArray[np.float32]:
    """TFLite Micro's ``ActivationValFloat``."""
    if name == "NONE":
        return y
    if name == "RELU":
        return np.maximum(y, _F32(0))
    if name == "RELU_N1_TO_1":
        return np.minimum(np.maximum(y, _F32(-1)), _F32(1))
    if name == "RELU6":
        return np.minimum(np.maximum(y, _F32(0)), _F32(6))
    if name == "TANH":
        return np.tanh(y).astype(_F32)
    raise ValueError(f"svdf: unknown activation '{name}'")


def svdf(
    x: np.ndarray,
    weights_feature: np.ndarray,
    weights_time: np.ndarray,
    bias: np.ndarray,
    state: np.ndarray,
    *,
    rank: int = 1,
    activation: str = "NONE",
    input_zero_point: int = 0,
    state_zero_point: int = 0,
    output_zero_point: int = 0,
    multiplier_1: int = 0,
    shift_1: int = 0,
    multiplier_2: int = 0,
    shift_2: int = 0,
) -> np.ndarray:
    """One SVDF step; ``state`` (B, M·F) is updated in place."""
    batch = x.shape[0]
    n_filter, n_memory = weights_time.shape
    n_unit = n_filter // rank
    history = state.reshape(batch, n_filter, n_memory)  # a view: written in place
    flat = state.reshape(-1)
    flat[:-1] = flat[1:].copy()  # TFLM shifts the whole buffer left by one
    if x.dtype == np.float32:
        for b in range(batch):
            for f in range(n_filter):
                acc = _F32(0)
                for k in range(x.shape[1]):
                    acc = _F32(acc + weights_feature[f, k] * x[b, k])
                history[b, f, n_memory - 1] = acc
        out = np.zeros((batch, n_unit), _F32)
        for b in range(batch):
            scratch = np.zeros(n_filter, _F32)
            for f in range(n_filter):
                acc = _F32(0)
                for m in range(n_memory):
                    acc = _F32(acc + weights_time[f, m] * history[b, f, m])
                scratch[f] = acc
            for u in range(n_unit):
                acc = _F32(bias[u])
                for r in range(rank):
                    acc = _F32(acc + scratch[u * rank + r])
                out[b, u] = acc
        return _activation(out, activation)
    info = np.iinfo(state.dtype)
    dot = (
        weights_feature.astype(np.int64) @ (x.astype(np.int64) - input_zero_point).T
    ).T
    proj = multiply_by_quantized_multiplier(
        dot.astype(np.int32), multiplier_1, shift_1
    ).astype(np.int64)
    # as the tflite-micro release the tests run: clamp, then add the zero
    # point, and the store narrows (wraps) into the state type (newer TFLM
    # adds the zero point before the clamp)
    proj = np.clip(proj, info.min, info.max) + state_zero_point
    history[:, :, n_memory - 1] = proj.astype(state.dtype)
    centred = history.astype(np.int64) - state_zero_point
    scratch = np.einsum("fm,bfm->bf", weights_time.astype(np.int64), centred)
    scratch = ((scratch + (1 << 31)) % (1 << 32)) - (1 << 31)  # int32 wraps
    summed = bias.astype(np.int64)[None, :] + scratch.reshape(batch, n_unit, rank).sum(
        2
    )
    summed = ((summed + (1 << 31)) % (1 << 32)) - (1 << 31)
    y = multiply_by_quantized_multiplier(summed.astype(np.int32), multiplier_2, shift_2)
    return np.clip(y.astype(np.int64) + output_zero_point, -128, 127).astype(np.int8)
