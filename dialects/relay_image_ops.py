"""relay operators that index by data: ``relay.gather`` and
``relay.resize_bilinear`` (registered through ``relay.py``'s dialect with
``IMAGE_OPS``).

* ``relay.gather``: TFLite's GATHER (TVM's ``take`` with ``batch_dims``):
  slices of the data along ``axis`` picked by an i32 index tensor, which may
  be a constant or a runtime value.
* ``relay.resize_bilinear``: TFLite's RESIZE_BILINEAR in NHWC, exactly TFLite
  Micro's reference kernels (``ResizeBilinear`` for f32,
  ``ResizeBilinearInteger`` for integers: 10-bit fixed point coordinates,
  int64 accumulation, rounding half away from zero). The result type gives
  the output height and width. RESIZE_NEAREST_NEIGHBOR needs no operator of
  its own: the importer computes its source rows and columns and emits two
  gathers with constant indices.

The coordinate arithmetic both share with ``lower-ops`` and the numpy oracle
is ``usmp.oracle.image_kernels``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, f32, i8, i16, i32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, operand_def, traits_def

from usmp.dialects.relay_base import (
    UNARY_FORMAT,
    RelayOperator,
    fail,
    infer_shape,
    shape_of,
    tensor_of,
)
from usmp.dialects.relay_fusion import Fusion, OpPattern
from usmp.dialects.relay_props import bool_prop, int_prop, relay_op_definition
from usmp.dialects.relay_shapes import ShapeError, normalize_axis


def gather_output_shape(
    data: Sequence[int], indices: Sequence[int], axis: int, batch_dims: int
) -> tuple[int, ...]:
    """TFLite's GATHER shape: ``data[:axis] + indices[batch_dims:] +
    data[axis + 1:]``; the first ``batch_dims`` dimensions of both agree."""
    axis = normalize_axis(axis, len(data))
    if batch_dims < 0:
        batch_dims += len(indices)
    if not 0 <= batch_dims <= min(axis, len(indices)):
        raise ShapeError(
            f"batch_dims {batch_dims} is out of range (expected 0..{axis}, at most "
            f"the axis {axis} and the indices' rank {len(indices)})"
        )
    if tuple(data[:batch_dims]) != tuple(indices[:batch_dims]):
        raise ShapeError(
            f"the first {batch_dims} dimensions of the data {list(data)} and the "
            f"indices {list(indices)} differ"
        )
    return (*data[:axis], *indices[batch_dims:], *data[axis + 1 :])


@relay_op_definition
class GatherOp(RelayOperator):
    """Slices of ``data`` along ``axis`` at the positions in ``indices``.

    Syntax::

        %r = relay.gather %x, %i {axis = 1 : i64, batch_dims = 0 : i64}
               : (tensor<2x5x3xi8>, tensor<4xi32>) -> tensor<2x4x3xi8>

    ``r[o..., c..., n...] = data[o..., indices[b..., c...], n...]`` where
    ``o`` are the ``axis`` leading dimensions, the first ``batch_dims`` of
    which (``b``) also index ``indices``. ``axis`` may be negative,
    ``batch_dims`` counts from the end of the indices' rank when negative.
    An index outside ``0..size-1`` of the axis reads the nearest end (TFLite
    Micro reports an error there; the generated C never reads out of bounds).
    """

    name = "relay.gather"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "take"))

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = int_prop(default=0)
    batch_dims = int_prop(default=0)

    assembly_format = (
        "$data `,` $indices attr-dict `:` `(` type($data) `,` type($indices) `)` "
        "`->` type($result)"
    )

    def __init__(
        self,
        data: SSAValue,
        indices: SSAValue,
        axis: int | None = None,
        batch_dims: int | None = None,
    ):
        self._build([data, indices], axis=axis, batch_dims=batch_dims)

    def normalized(self) -> tuple[int, int]:
        """(axis, batch_dims), both non-negative."""
        rank = len(shape_of(tensor_of(self.name, "data", self.data)))
        index_rank = len(shape_of(tensor_of(self.name, "indices", self.indices)))
        batch_dims = self.batch_dims
        if batch_dims < 0:
            batch_dims += index_rank
        return self.axis % rank, batch_dims

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "data", self.data)
        idx = tensor_of(self.name, "indices", self.indices)
        if idx.element_type != i32:
            fail(self.name, f"indices are {idx.element_type}, expected i32")
        shape = infer_shape(
            self.name,
            gather_output_shape,
            shape_of(t),
            shape_of(idx),
            self.axis,
            self.batch_dims,
        )
        return TensorType(t.element_type, shape)


@relay_op_definition
class ResizeBilinearOp(RelayOperator):
    """TFLite Micro's bilinear resize of an NHWC tensor (f32, i8, i16).

    Syntax::

        %r = relay.resize_bilinear %x {half_pixel_centers = true}
               : tensor<1x4x4x3xi8> -> tensor<1x8x6x3xi8>

    Source coordinate of output row ``y``: ``y * s`` (``(y + 0.5) * s - 0.5``
    with ``half_pixel_centers``), ``s = in / out`` (``(in - 1) / (out - 1)``
    with ``align_corners`` and ``out > 1``); the two neighbours are the
    floor (at least 0) and the ceiling (at most ``in - 1``). f32 computes in
    f32 as TFLite's ``ResizeBilinear``; integers in 10-bit fixed point as
    ``ResizeBilinearInteger``. ``align_corners`` and ``half_pixel_centers``
    exclude each other.
    """

    name = "relay.resize_bilinear"

    traits = traits_def(Fusion(OpPattern.INJECTIVE, "image.resize2d"))

    data = operand_def(TensorType)
    align_corners = bool_prop(default=False)
    half_pixel_centers = bool_prop(default=False)

    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        data: SSAValue,
        size: Sequence[int],
        align_corners: bool | None = None,
        half_pixel_centers: bool | None = None,
    ):
        t = tensor_of(self.name, "operand", data)
        n, _, _, c = (*shape_of(t), 0, 0, 0, 0)[:4]
        self._build(
            [data],
            TensorType(t.element_type, (n, *size, c)),
            align_corners=align_corners,
            half_pixel_centers=half_pixel_centers,
        )

    def infer_result_type(self) -> TensorType:
        t = tensor_of(self.name, "operand", self.data)
        if t.element_type not in (f32, i8, i16):
            fail(
                self.name,
                f"element type {t.element_type} is not supported, expected f32, "
                "i8 or i16",
            )
        r = tensor_of(self.name, "result", self.result.type)
        src, dst = shape_of(t), shape_of(r)
        if len(src) != 4 or len(dst) != 4:
            fail(self.name, f"operand and result must be 4-d NHWC, got {list(src)}")
        if (src[0], src[3]) != (dst[0], dst[3]):
            fail(
                self.name,
                f"result {list(dst)} must keep the batch and channels of {list(src)}",
            )
        if self.align_corners and self.half_pixel_centers:
            fail(self.name, "align_corners and half_pixel_centers exclude each other")
        return TensorType(t.element_type, dst)


IMAGE_OPS: list[type[IRDLOperation]] = [GatherOp, ResizeBilinearOp]
"""The operators of this module, for the ``relay`` dialect."""
