"""numpy kernels of ``relay.gather`` and ``relay.resize_bilinear``
(``dialects/relay_image_ops.py``).

The bilinear coordinates are computed as TFLite Micro's C++ loop does, one
output row and column at a time: in float32 where it uses ``float``
(``ComputeInterpolationValues``), in int32 where it uses 10-bit fixed point
(``ComputeInterpolationValuesInteger``). ``lower-ops`` tabulates the same
coordinates with its own code (``usmp.lowering.ops_image``); the reference
stays independent of it.

Interpreter hooks (keyed by op class in ``relay_interpreter``): ``GatherOp``
-> ``gather(x, indices, axis=, batch_dims=)``; ``ResizeBilinearOp`` ->
``resize_bilinear(x, size, align_corners=, half_pixel_centers=)``.
"""

from __future__ import annotations

import math

import numpy as np

_ONE = 1 << 10
"""``ResizeBilinearInteger``'s fixed point: coordinates in units of 2^-10."""


def _float_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """The float32 ``height_scale`` / ``width_scale`` of ``ResizeBilinear``."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _integer_scale(in_size: int, out_size: int, align_corners: bool) -> int:
    """The ``height_scale_10`` / ``width_scale_10`` of ``ResizeBilinearInteger``."""
    if align_corners and out_size > 1:
        in_size, out_size = in_size - 1, out_size - 1
    return (_ONE * in_size + out_size // 2) // out_size


def _c_div(n: int, d: int) -> int:
    """C integer division (truncation toward zero), ``d > 0``."""
    return abs(n) // d if n >= 0 else -(abs(n) // d)


def _axis(
    in_size: int,
    out_size: int,
    align_corners: bool,
    half_pixel_centers: bool,
    integer: bool,
) -> tuple[list[int], list[int], np.ndarray]:
    """For every output position along one axis, TFLite's
    ``ComputeInterpolationValues`` (float32) or
    ``ComputeInterpolationValuesInteger`` (2^-10 units), one value at a time
    as the C++ loop: the lower and upper source positions and the distance
    of the scaled position from the lower one."""
    lower: list[int] = []
    upper: list[int] = []
    weight: list[int | np.float32] = []
    if integer:
        scale = _integer_scale(in_size, out_size, align_corners)
        for value in range(out_size):
            scaled = value * scale
            if half_pixel_centers:
                scaled = scaled + scale // 2 - (1 << 9)
            lo = max(_c_div(scaled, _ONE), 0)
            lower.append(lo)
            upper.append(min(_c_div(scaled + _ONE - 1, _ONE), in_size - 1))
            weight.append(scaled - _ONE * lo)
        return lower, upper, np.array(weight, np.int64)
    scale_f = _float_scale(in_size, out_size, align_corners)
    half = np.float32(0.5)
    for value in range(out_size):
        v = np.float32(value)
        if half_pixel_centers:
            scaled_f = np.float32(np.float32(v + half) * scale_f) - half
        else:
            scaled_f = np.float32(v * scale_f)
        lo = max(int(math.floor(scaled_f)), 0)
        lower.append(lo)
        upper.append(min(int(math.ceil(scaled_f)), in_size - 1))
        weight.append(np.float32(scaled_f - np.float32(lo)))
    return lower, upper, np.array(weight, np.float32)


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
    y0, y1, dy = _axis(in_h, out_h, align_corners, half_pixel_centers, integer)
    x0, x1, dx = _axis(in_w, out_w, align_corners, half_pixel_centers, integer)

    def tap(rows: list[int], cols: list[int]) -> np.ndarray:
        return x[:, rows][:, :, cols]

    wy = dy[None, :, None, None]
    wx = dx[None, None, :, None]
    if not integer:
        one = np.float32(1)
        total = tap(y0, x0) * (one - wy) * (one - wx)
        total = total + tap(y1, x0) * wy * (one - wx)
        total = total + tap(y0, x1) * (one - wy) * wx
        total = total + tap(y1, x1) * wy * wx
        return total.astype(np.float32)
    total = tap(y0, x0).astype(np.int64) * (_ONE - wy) * (_ONE - wx)
    total += tap(y1, x0).astype(np.int64) * wy * (_ONE - wx)
    total += tap(y0, x1).astype(np.int64) * (_ONE - wy) * wx
    total += tap(y1, x1).astype(np.int64) * wy * wx
    rounded = total + np.where(total > 0, 1 << 19, -(1 << 19))
    quotient = np.abs(rounded) >> 20
    return np.where(rounded < 0, -quotient, quotient).astype(x.dtype)
