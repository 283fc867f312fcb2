"""numpy kernels of ``relay.gather`` and ``relay.resize_bilinear``
(``dialects/relay_image_ops.py``) and the per-axis coordinate tables of
TFLite Micro's resize kernels, which ``lower-ops`` and the TFLite importer
use too.

The coordinates are computed as TFLite's C++ does: in float32 where it uses
``float`` (``ComputeInterpolationValues``, ``GetNearestNeighbor``), in int32
where it uses 10-bit fixed point (``ComputeInterpolationValuesInteger``).

Interpreter hooks: ``"relay.gather"`` -> ``gather(x, indices, axis=,
batch_dims=)``; ``"relay.resize_bilinear"`` -> ``resize_bilinear(x, size,
align_corners=, half_pixel_centers=)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

FRACTION_BITS = 10
"""``ResizeBilinearInteger``'s fixed point: coordinates in units of 2^-10."""


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def nearest_indices(
    in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool
) -> npt.NDArray[np.int32]:
    """TFLite's ``GetNearestNeighbor`` for every output position."""
    scale = _scale(in_size, out_size, align_corners)
    offset = np.float32(0.5 if half_pixel_centers else 0.0)
    scaled = (np.arange(out_size, dtype=np.float32) + offset) * scale
    # TfLiteRound = std::round (half away from zero); std::floor
    exact = scaled.astype(np.float64)  # + 0.5 is exact in float64
    picked = (
        np.sign(exact) * np.floor(np.abs(exact) + 0.5)
        if align_corners
        else np.floor(exact)
    )
    result = np.minimum(picked.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        result = np.maximum(result, 0)
    return result.astype(np.int32)


class BilinearAxis(NamedTuple):
    """One axis of a bilinear resize: for every output position the lower
    and upper source positions and the weight of the upper one (f32 in
    ``[0, 1)``, or i32 in units of 2^-10; the lower one weighs ``1 - w``)."""

    lower: npt.NDArray[np.int32]
    upper: npt.NDArray[np.int32]
    weight: npt.NDArray[np.float32] | npt.NDArray[np.int32]


def bilinear_axis(
    in_size: int,
    out_size: int,
    align_corners: bool,
    half_pixel_centers: bool,
    integer: bool,
) -> BilinearAxis:
    """``ComputeInterpolationValues`` (float) or ``...Integer``."""
    positions = np.arange(out_size, dtype=np.int64)
    if integer:
        one = 1 << FRACTION_BITS
        numerator, denominator = in_size, out_size
        if align_corners and out_size > 1:
            numerator, denominator = in_size - 1, out_size - 1
        scale = (one * numerator + denominator // 2) // denominator
        scaled = positions * scale
        if half_pixel_centers:
            scaled = scaled + scale // 2 - (1 << (FRACTION_BITS - 1))
        truncated = np.where(scaled < 0, -(-scaled // one), scaled // one)
        lower = np.maximum(truncated, 0)
        upper = np.minimum((scaled + one - 1) // one, in_size - 1)
        weight = (scaled - one * lower).astype(np.int32)
        return BilinearAxis(lower.astype(np.int32), upper.astype(np.int32), weight)
    scale = _scale(in_size, out_size, align_corners)
    value = positions.astype(np.float32)
    if half_pixel_centers:
        source = (value + np.float32(0.5)) * scale - np.float32(0.5)
    else:
        source = value * scale
    lower = np.maximum(np.floor(source).astype(np.int64), 0)
    upper = np.minimum(np.ceil(source).astype(np.int64), in_size - 1)
    weight = (source - lower.astype(np.float32)).astype(np.float32)
    return BilinearAxis(lower.astype(np.int32), upper.astype(np.int32), weight)


def gather(
    x: np.ndarray, indices: np.ndarray, axis: int = 0, batch_dims: int = 0
) -> np.ndarray:
    """``relay.gather``: indices clamped into the axis."""
    axis %= x.ndim
    if batch_dims < 0:
        batch_dims += indices.ndim
    clamped = np.clip(indices.astype(np.int64), 0, x.shape[axis] - 1)
    batch = x.shape[:batch_dims]
    outer = x.shape[batch_dims:axis]
    inner = x.shape[axis + 1 :]
    coords = indices.shape[batch_dims:]
    xb = x.reshape(
        (int(np.prod(batch)), int(np.prod(outer)), x.shape[axis], int(np.prod(inner)))
    )
    ib = clamped.reshape((int(np.prod(batch)), int(np.prod(coords))))
    picked = np.stack([xb[b][:, ib[b], :] for b in range(xb.shape[0])])
    return picked.reshape((*batch, *outer, *coords, *inner))


def resize_bilinear(
    x: np.ndarray,
    size: tuple[int, int],
    align_corners: bool = False,
    half_pixel_centers: bool = False,
) -> np.ndarray:
    """TFLite Micro's ``ResizeBilinear`` (f32) / ``ResizeBilinearInteger``."""
    integer = x.dtype.kind in "iu"
    (out_h, out_w), (_, in_h, in_w, _) = size, x.shape
    ys = bilinear_axis(in_h, out_h, align_corners, half_pixel_centers, integer)
    xs = bilinear_axis(in_w, out_w, align_corners, half_pixel_centers, integer)

    def tap(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return x[:, rows][:, :, cols]

    wy = ys.weight[None, :, None, None]
    wx = xs.weight[None, None, :, None]
    if not integer:
        one = np.float32(1)
        total = tap(ys.lower, xs.lower) * (one - wy) * (one - wx)
        total = total + tap(ys.upper, xs.lower) * wy * (one - wx)
        total = total + tap(ys.lower, xs.upper) * (one - wy) * wx
        total = total + tap(ys.upper, xs.upper) * wy * wx
        return total.astype(np.float32)
    one = 1 << FRACTION_BITS
    wy64, wx64 = wy.astype(np.int64), wx.astype(np.int64)
    total = tap(ys.lower, xs.lower).astype(np.int64) * (one - wy64) * (one - wx64)
    total += tap(ys.upper, xs.lower).astype(np.int64) * wy64 * (one - wx64)
    total += tap(ys.lower, xs.upper).astype(np.int64) * (one - wy64) * wx64
    total += tap(ys.upper, xs.upper).astype(np.int64) * wy64 * wx64
    half = 1 << (2 * FRACTION_BITS - 1)
    rounded = total + np.where(total > 0, half, -half)
    quotient = np.abs(rounded) >> (2 * FRACTION_BITS)
    return np.where(rounded < 0, -quotient, quotient).astype(x.dtype)
