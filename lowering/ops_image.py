"""``relay.gather`` and ``relay.resize_bilinear`` (``LowerImage``).

* gather: the index's coordinates along the gathered dimensions read a
  position from the index tensor (``arith.index_cast``), clamped into the
  axis unless the indices are a constant whose every value is in range
  (the importer refuses a constant out of range), then an element of the
  data.
* resize_bilinear: the per-row and per-column source positions and weights
  (``bilinear_axis``, TFLite's float32 or 10-bit
  fixed point arithmetic done at compile time) are small constant tables
  (``resize_{y,x}_{lower,upper,weight}``, planned by ``usmp`` like any
  constant); per element, four loads and TFLite's sum in its order: f32
  ``v00 (1-wy)(1-wx) + v10 wy (1-wx) + v01 (1-wy) wx + v11 wy wx``,
  integers the same in i64 with weights in units of 2^-10, then
  ``(sum ± 2^19) / 2^20`` (C division) as ``ResizeBilinearInteger``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue

from usmp.dialects import relay
from usmp.dialects.relay_image_ops import GatherOp, ResizeBilinearOp
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    Handler,
    element_type,
    shape_of,
)
from usmp.lowering.loops import Ix

FRACTION_BITS = 10
"""``ResizeBilinearInteger``'s fixed point: coordinates in units of 2^-10."""


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
    """TFLite's ``ComputeInterpolationValues`` (float32) or
    ``ComputeInterpolationValuesInteger`` (int32, 2^-10 units) for every
    output position at once (the oracle computes them one by one, as the
    C++ loop: ``usmp.oracle.image_kernels``)."""
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
    if align_corners and out_size > 1:
        scale_f = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale_f = np.float32(in_size) / np.float32(out_size)
    value = positions.astype(np.float32)
    if half_pixel_centers:
        source = (value + np.float32(0.5)) * scale_f - np.float32(0.5)
    else:
        source = value * scale_f
    lower = np.maximum(np.floor(source).astype(np.int64), 0)
    upper = np.minimum(np.ceil(source).astype(np.int64), in_size - 1)
    weight_f = (source - lower.astype(np.float32)).astype(np.float32)
    return BilinearAxis(lower.astype(np.int32), upper.astype(np.int32), weight_f)


def _constant_in_range(indices: SSAValue, size: int) -> bool:
    op = indices.owner
    if not isinstance(op, relay.ConstantOp):
        return False
    data = op.value
    if not isinstance(data, DenseIntOrFPElementsAttr):
        return False
    return all(isinstance(v, int) and 0 <= v < size for v in data.get_values())


def _read_invariant(k: FusedKernel, value: SSAValue, index: Sequence[Ix]) -> SSAValue:
    """An element of an argument or a constant table through
    ``load_invariant`` (out of the loops it does not depend on); of any other
    value through ``k.at``."""
    buffer = k.buffers.get(value)
    op = value.owner
    if buffer is None and isinstance(op, relay.ConstantOp):
        data = op.value
        if (
            isinstance(data, DenseIntOrFPElementsAttr)
            and len(set(data.get_values())) > 1
        ):
            buffer = k.table(value.name_hint or "constant", data, op)
    if buffer is None:
        return k.at(value, index)
    return k.b.load_invariant(buffer, index)


def gather(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, GatherOp)
    b = k.b
    axis, batch_dims = op.normalized()
    coords = len(shape_of(op.indices)) - batch_dims
    position = _read_invariant(
        k, op.indices, [*index[:batch_dims], *index[axis : axis + coords]]
    )
    p: Ix = b.emit(arith.IndexCastOp(position, IndexType()))
    size = shape_of(op.data)[axis]
    if not _constant_in_range(op.indices, size):
        p = b.imin(b.imax(p, 0), size - 1)
    return k.at(op.data, [*index[:axis], p, *index[axis + coords :]])


def _table(k: FusedKernel, name: str, values: np.ndarray) -> SSAValue:
    """A 1-d constant table of i32 or f32 ``values``."""
    el, dtype = (f32, "<f4") if values.dtype == np.float32 else (i32, "<i4")
    data = BytesAttr(values.astype(dtype).tobytes())
    return k.table(name, DenseIntOrFPElementsAttr(TensorType(el, [len(values)]), data))


def resize_bilinear(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, ResizeBilinearOp)
    b = k.b
    el = element_type(op.data)
    integer = el != f32
    (_, in_h, in_w, _), (_, out_h, out_w, _) = shape_of(op.data), shape_of(op.result)
    n, y, x, c = index
    taps: list[tuple[Ix, Ix, SSAValue]] = []
    for axis, position, in_size, out_size in (
        ("y", y, in_h, out_h),
        ("x", x, in_w, out_w),
    ):
        tables = bilinear_axis(
            in_size, out_size, op.align_corners, op.half_pixel_centers, integer
        )
        lower, upper, weight = (
            b.load_invariant(_table(k, f"resize_{axis}_{what}", values), [position])
            for what, values in zip(("lower", "upper", "weight"), tables, strict=True)
        )
        taps.append(
            (
                b.emit(arith.IndexCastOp(lower, IndexType())),
                b.emit(arith.IndexCastOp(upper, IndexType())),
                weight,
            )
        )
    (y0, y1, wy), (x0, x1, wx) = taps
    wide = i64 if integer else f32
    one = b.const((1 << FRACTION_BITS) if integer else 1.0, wide)
    wy1, wx1 = b.convert(wy, wide), b.convert(wx, wide)
    wy0, wx0 = b.sub(one, wy1), b.sub(one, wx1)
    total: SSAValue | None = None
    for row, col, w_row, w_col in (
        (y0, x0, wy0, wx0),
        (y1, x0, wy1, wx0),
        (y0, x1, wy0, wx1),
        (y1, x1, wy1, wx1),
    ):
        term = b.mul(
            b.mul(b.convert(k.at(op.data, [n, row, col, c]), wide), w_row), w_col
        )
        total = term if total is None else b.add(total, term)
    assert total is not None
    if not integer:
        return total
    half = 1 << (2 * FRACTION_BITS - 1)
    positive = b.emit(arith.CmpiOp(total, b.const(0, i64), "sgt"))
    rounding = b.emit(arith.SelectOp(positive, b.const(half, i64), b.const(-half, i64)))
    quotient = b.emit(
        arith.DivSIOp(b.add(total, rounding), b.const(1 << (2 * FRACTION_BITS), i64))
    )
    return b.convert(quotient, el)


class LowerImage(ElementPattern):
    """An element of a ``gather`` or ``resize_bilinear``."""

    handlers: ClassVar[Mapping[type[Operation], Handler]] = MappingProxyType(
        {GatherOp: gather, ResizeBilinearOp: resize_bilinear}
    )
