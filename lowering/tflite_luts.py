"""The int16 SOFTMAX lookup tables of TFLite Micro, computed as its
``Prepare`` computes them (``gen_lut<float, int16_t, int16_t>``).

``lower-ops`` hoists them as i16 constants (``ops_tflite``). The oracle
derives the same tables with its own code (``usmp.oracle.
tflite_activations``, vectorised); ``tests/test_independent_tables.py`` checks
that the two agree. Computed on first use (a model without an int16 softmax
does not pay for them).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
import numpy.typing as npt


@cache
def _libm_expf() -> Callable[[float], float] | None:
    """The C library's ``expf`` (what TFLite Micro's ``std::exp(float)``
    calls), or ``None`` where it cannot be loaded."""
    import ctypes.util  # imports subprocess: only for a model that needs it

    name = ctypes.util.find_library("m")
    if name is None:
        return None
    try:
        expf = ctypes.CDLL(name).expf
    except (OSError, AttributeError):
        return None
    expf.restype, expf.argtypes = ctypes.c_float, [ctypes.c_float]
    return expf


def _expf(x: np.float32) -> np.float32:
    expf = _libm_expf()
    if expf is not None:
        return np.float32(expf(float(x)))
    return np.float32(np.exp(x))


def _one_over_one_plus_x(x: np.float32) -> np.float32:
    return np.float32(np.float32(1.0) / np.float32(np.float32(1.0) + x))


def _roundf(x: np.float32) -> np.float32:
    """``TfLiteRound`` on a float: nearest, ties away from zero (exact)."""
    t = np.float32(np.trunc(x))
    return np.float32(t + np.sign(x)) if abs(float(x) - float(t)) >= 0.5 else t


def gen_lut_int16(
    func: Callable[[np.float32], np.float32], input_min: float, input_max: float
) -> npt.NDArray[np.int16]:
    """TFLite's ``gen_lut<float, int16_t, int16_t>`` with the output range
    [-1, 1]: 512 samples of ``func`` over [input_min, input_max), each
    corrected by half its midpoint interpolation error, and the value at
    ``input_max``; every step in float32 as the C++."""
    f32 = np.float32
    lo, hi = f32(input_min), f32(input_max)
    step = f32(f32(hi - lo) / f32(512))
    half_step = f32(step / f32(2))
    scale = f32(f32(65536) / f32(2))  # (max - min + 1) / (output_max - output_min)
    lut = np.zeros(513, dtype=np.int16)
    for i in range(512):
        x = f32(lo + f32(f32(i) * step))
        val = func(x)
        val_midpoint = func(f32(x + half_step))
        val_next = func(f32(lo + f32(f32(i + 1) * step)))
        sample = _roundf(f32(val * scale))
        interpolated = _roundf(f32(f32(f32(val_next * scale) + sample) / f32(2)))
        midpoint = _roundf(f32(val_midpoint * scale))
        bias = _roundf(f32(f32(interpolated - midpoint) / f32(2)))
        lut[i] = int(np.clip(f32(sample - bias), -32768, 32767))
    lut[512] = int(np.clip(_roundf(f32(func(hi) * scale)), -32768, 32767))
    return lut


def _with_small_slopes(lut: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """``lut``, after checking that its slopes fit int16 (the lowering's
    interpolation computes them in i32 without wrapping)."""
    assert np.abs(np.diff(lut.astype(np.int64))).max() < 1 << 15
    return lut


@cache
def softmax_exp_lut() -> npt.NDArray[np.int16]:
    """TFLite Micro's int16 SOFTMAX ``exp_lut``: exp over [-10, 0]."""
    return _with_small_slopes(gen_lut_int16(_expf, -10.0, 0.0))


@cache
def softmax_one_over_one_plus_x_lut() -> npt.NDArray[np.int16]:
    """TFLite Micro's int16 SOFTMAX ``one_over_one_plus_x_lut``: 1/(1+x)
    over [0, 1]."""
    return _with_small_slopes(gen_lut_int16(_one_over_one_plus_x, 0.0, 1.0))
