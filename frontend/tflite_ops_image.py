"""Converters of TFLite's GATHER, RESIZE_NEAREST_NEIGHBOR and
RESIZE_BILINEAR (registered in ``tflite_ops.CONVERTERS`` like
``tflite_ops_layout``). What TFLite Micro's kernels accept, and nothing else:

* GATHER (``gather.cc``): FLOAT32 or INT8 data, INT32 positions (INT64 is
  refused, as TFLM does), ``axis`` and ``batch_dims`` (negative: counted
  from the end), ``batch_dims <= axis``: ``relay.gather``. Positions may be
  a model input or computed; a constant position outside its axis is an
  error here (TFLM fails at run time), a computed one reads the nearest end.
* RESIZE_NEAREST_NEIGHBOR (FLOAT32, INT8, INT16; 4-d NHWC, constant INT32
  size): TFLite's ``GetNearestNeighbor`` (``align_corners``,
  ``half_pixel_centers``) evaluated here for every output row and column, so
  the operator is two ``relay.gather`` with constant positions (none for an
  axis that keeps its size and order; fused into one loop nest).
* RESIZE_BILINEAR (FLOAT32, INT8; 4-d NHWC, constant INT32 size;
  ``align_corners`` and ``half_pixel_centers`` not both, as TFLM checks):
  ``relay.resize_bilinear``.

They copy or interpolate raw values, so input and output share their type
and quantisation (TFLM does not rescale).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from usmp.dialects.relay_image_ops import GatherOp, ResizeBilinearOp
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_ops import _type, register
from usmp.frontend.tflite_ops_layout import (
    _bind,
    _constant_ints,
    _same_type_and_quantization,
)
from usmp.frontend.tflite_reader import Tensor


def _check_types(
    b: RelayBuilder, x: Tensor, out: Tensor, types: tuple[str, ...]
) -> None:
    _same_type_and_quantization(b, x, out)
    if _type(x) not in types:
        raise b.error(
            f"input '{x.name}' is {_type(x)}; TFLite Micro's kernel takes "
            f"{', '.join(types)}"
        )


def convert_gather(b: RelayBuilder) -> None:
    x, positions, out = b.required_input(0), b.required_input(1), b.output_tensor()
    _check_types(b, x, out, ("FLOAT32", "INT8"))
    if _type(positions) != "INT32":
        raise b.error(
            f"positions '{positions.name}' are {_type(positions)}; TFLite Micro's "
            "GATHER takes INT32 positions only"
        )
    opts = b.operator.options
    rank, index_rank = len(x.shape), len(positions.shape)
    axis, batch_dims = opts.Axis(), opts.BatchDims()
    if not -rank <= axis < rank:
        raise b.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    resolved = batch_dims + index_rank if batch_dims < 0 else batch_dims
    if not 0 <= resolved <= min(axis, index_rank) or resolved >= rank:
        raise b.error(
            f"batch_dims {batch_dims} is out of range: it must resolve to "
            f"0..{min(axis, index_rank)} (at most the axis {axis} and the "
            f"positions' rank {index_rank})"
        )
    if x.shape[:resolved] != positions.shape[:resolved]:
        raise b.error(
            f"the first {resolved} (batch) dimensions of '{x.name}' "
            f"{list(x.shape)} and of the positions {list(positions.shape)} differ"
        )
    if positions.data is not None:
        bad = [int(v) for v in positions.data.reshape(-1) if not 0 <= v < x.shape[axis]]
        if bad:
            raise b.error(
                f"positions {bad[:4]} are outside 0..{x.shape[axis] - 1}, the "
                f"dimension {axis} of '{x.name}' {list(x.shape)}"
            )
    gathered = GatherOp(b.value(x), b.value(positions), axis, resolved)
    _bind(b, out, b.emit(gathered))


def _resize_size(b: RelayBuilder, x: Tensor, out: Tensor) -> tuple[int, int]:
    if len(x.shape) != 4:
        raise b.error(f"input must be 4-d (NHWC), got {list(x.shape)}")
    size = b.required_input(1)
    if _type(size) != "INT32" or size.data is None:
        raise b.error(
            f"size '{size.name}' must be a constant INT32 tensor (TFLite Micro "
            "supports no other)"
        )
    values = _constant_ints(b, 1, "size")
    if len(values) != 2 or min(values) < 1:
        raise b.error(f"size {values} must be two positive values (height, width)")
    height, width = values
    expected = (x.shape[0], height, width, x.shape[3])
    if out.shape != expected:
        raise b.error(
            f"output shape {list(out.shape)} differs from {list(expected)} "
            f"(the input {list(x.shape)} resized to {values})"
        )
    return height, width


def nearest_indices(
    in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool
) -> npt.NDArray[np.int32]:
    """TFLite's ``GetNearestNeighbor`` for every output position: the
    scale and the scaled position in float32, as the C++."""
    if align_corners and out_size > 1:
        scale = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale = np.float32(in_size) / np.float32(out_size)
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


def convert_resize_nearest_neighbor(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _check_types(b, x, out, ("FLOAT32", "INT8", "INT16"))
    size = _resize_size(b, x, out)
    opts = b.operator.options
    value = b.value(x)
    for axis in (1, 2):
        picked = nearest_indices(
            x.shape[axis],
            size[axis - 1],
            bool(opts.AlignCorners()),
            bool(opts.HalfPixelCenters()),
        )
        if np.array_equal(picked, np.arange(x.shape[axis])):
            continue
        positions = b.constant(picked, f"resize_{'yx'[axis - 1]}")
        value = b.emit(GatherOp(value, positions, axis))
    _bind(b, out, value)


def convert_resize_bilinear(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _check_types(b, x, out, ("FLOAT32", "INT8"))
    size = _resize_size(b, x, out)
    opts = b.operator.options
    align, half = bool(opts.AlignCorners()), bool(opts.HalfPixelCenters())
    if align and half:
        raise b.error(
            "align_corners and half_pixel_centers are both set; TFLite Micro "
            "requires align_corners = false when half_pixel_centers = true"
        )
    _bind(b, out, b.emit(ResizeBilinearOp(b.value(x), size, align, half)))


register(
    {
        "GATHER": convert_gather,
        "RESIZE_BILINEAR": convert_resize_bilinear,
        "RESIZE_NEAREST_NEIGHBOR": convert_resize_nearest_neighbor,
    }
)
