"""Converters of the TFLite shape and reduction builtins.

``tflite_ops`` imports this module, which registers its converters in
``tflite_ops.CONVERTERS``. Every converter emits existing relay ops; int8
follows TFLite Micro's reference kernels bit for bit:

* TRANSPOSE (any permutation, rank <= 6 as TFLite; TFLM stops at 5):
  ``relay.transpose``, or a ``relay.reshape`` when the permutation keeps
  the memory order (it only moves size-1 axes), so that ``aot-lower-main``
  makes it an alias of its input's storage (no copy);
* SQUEEZE, EXPAND_DIMS: ``relay.reshape`` (an alias, like RESHAPE);
* BROADCAST_TO: ``relay.broadcast_to`` (constant shape);
* STRIDED_SLICE (begin/end/shrink-axis masks, negative indices and strides,
  resolved as TFLite's ``StridedSliceStartForAxis``/``EndForAxis``) and
  SLICE (``size`` -1 = to the end): ``relay.strided_slice`` with absolute
  positions, then a reshape dropping the shrunk axes; a slice that selects
  everything is only the reshape. TFLM ignores ``ellipsis_mask``,
  ``new_axis_mask`` and ``offset``, so they are refused;
* SPLIT, SPLIT_V (one size may be -1), UNPACK: one such slice per output
  (UNPACK drops the axis); PACK: each input reshaped with the new axis, then
  ``relay.concatenate``;
* SPACE_TO_DEPTH, DEPTH_TO_SPACE (NHWC, TFLite's DCR order): reshape to
  6-d blocks -> ``relay.transpose`` -> reshape, one fused loop nest;
* MEAN, SUM (axes a constant tensor, ``keep_dims``): float ``relay.mean`` /
  ``relay.sum``; int8 and int16 (``reduce_common.cc``: always
  ``QuantizedMeanOrSum``, even when input and output share their
  quantisation) ``cast(i32) -> sum -> add(-zp_in * n) ->
  fixed_point_multiply -> add(zp_out) -> clip -> cast``, where the
  multiplier is ``QuantizeMultiplier(s_in / s_out)`` and, for MEAN, TFLM's
  folding of ``1 / n`` into it: ``shift' = min(floor(log2 n), 32, 31 +
  shift)``, ``multiplier' = (multiplier << shift') / n`` (int64, truncating),
  ``shift - shift'``;
* ARG_MAX, ARG_MIN (float32, int8 in; int32 out, int64 refused): ``relay.argmax`` /
  ``relay.argmin``, TFLM's strict comparison from element 0;
* REDUCE_MAX, REDUCE_MIN (float32, int8): ``relay.max`` / ``relay.min`` on
  the raw values (int8 input and output must share their quantisation, as
  TFLM checks).

Data-movement operators copy raw values: an int8 input and output must share
their quantisation (TFLM does not rescale).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from usmp.dialects.relay_ops import (
    AddOp,
    ArgMaxOp,
    ArgMinOp,
    BroadcastToOp,
    CastOp,
    ConcatenateOp,
    MaxOp,
    MeanOp,
    MinOp,
    ReshapeOp,
    StridedSliceOp,
    SumOp,
    TransposeOp,
)
from usmp.dialects.relay_shapes import broadcast_shapes
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder, element_type, int_range
from usmp.frontend.tflite_ops import _check_shape, _per_tensor, _type, register
from usmp.frontend.tflite_reader import Tensor

_MAX_TRANSPOSE_RANK = 6
"""TFLite's limit (TFLite Micro's kernel stops at 5)."""

_DATA_TYPES = ("FLOAT32", "INT8", "INT16")


def _bind(b: RelayBuilder, out: Tensor, result: SSAValue) -> None:
    _check_shape(b, result, out)
    b.bind(out, result)


def _same_type_and_quantization(b: RelayBuilder, x: Tensor, out: Tensor) -> None:
    """A data-movement operator: output type and quantisation are the input's."""
    if _type(x) not in _DATA_TYPES:
        raise b.error(
            f"input '{x.name}' is {_type(x)}; supported: {', '.join(_DATA_TYPES)}"
        )
    if _type(out) != _type(x):
        raise b.error(
            f"output '{out.name}' is {_type(out)}, expected the input's {_type(x)}"
        )
    if x.quantization != out.quantization:
        raise b.error(
            f"{b.operator.opcode} copies raw values: the output '{out.name}' must be "
            f"quantised like the input '{x.name}'"
        )


def _constant_ints(b: RelayBuilder, position: int, what: str) -> list[int]:
    """The values of a constant INT32/INT64 input (scalar or 1-D)."""
    t = b.required_input(position)
    if t.data is None:
        raise b.error(f"{what} '{t.name}' must be a constant tensor")
    if _type(t) not in ("INT32", "INT64"):
        raise b.error(f"{what} '{t.name}' is {_type(t)}, expected INT32 or INT64")
    if len(t.shape) > 1:
        raise b.error(
            f"{what} '{t.name}' has shape {list(t.shape)}, expected a scalar or 1-D"
        )
    return [int(v) for v in t.data.reshape(-1)]


def _reshape(b: RelayBuilder, x: Tensor, out: Tensor) -> SSAValue:
    if int(np.prod(x.shape)) != int(np.prod(out.shape)):
        raise b.error(
            f"output shape {list(out.shape)} does not hold the input's "
            f"{list(x.shape)} elements"
        )
    return b.emit(ReshapeOp(b.value(x), out.shape))


def keeps_memory_order(shape: tuple[int, ...], perm: list[int]) -> bool:
    """Whether transposing ``shape`` by ``perm`` only moves size-1 axes (the
    elements stay in the same row-major order: a reshape)."""
    moved = [a for a in perm if shape[a] != 1]
    return moved == sorted(moved)


# -- layout --------------------------------------------------------------------


def convert_broadcast_to(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    shape = tuple(_constant_ints(b, 1, "shape"))
    if shape != out.shape:
        raise b.error(
            f"shape {list(shape)} differs from the output's {list(out.shape)}"
        )
    if broadcast_shapes(x.shape, shape) != shape:
        raise b.error(f"{list(x.shape)} does not broadcast to {list(shape)}")
    value = b.value(x)
    if x.shape != shape:
        value = b.emit(BroadcastToOp(value, shape))
    _bind(b, out, value)


def convert_transpose(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    rank = len(x.shape)
    if rank > _MAX_TRANSPOSE_RANK:
        raise b.error(
            f"input rank {rank} is not supported (at most {_MAX_TRANSPOSE_RANK}, "
            "as TFLite)"
        )
    perm = _constant_ints(b, 1, "permutation")
    if sorted(perm) != list(range(rank)):
        raise b.error(
            f"permutation {perm} is not a permutation of 0..{rank - 1} "
            f"(the input has rank {rank})"
        )
    if keeps_memory_order(x.shape, perm):
        _bind(b, out, _reshape(b, x, out))
        return
    _bind(b, out, b.emit(TransposeOp(b.value(x), perm)))


def convert_squeeze(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    rank = len(x.shape)
    opts = b.operator.options
    dims = [int(opts.SqueezeDims(i)) for i in range(opts.SqueezeDimsLength())]
    for d in dims:
        if not -rank <= d < rank:
            raise b.error(f"squeeze dimension {d} is out of range for rank {rank}")
        if x.shape[d] != 1:
            raise b.error(
                f"squeeze dimension {d} has size {x.shape[d]} in "
                f"{list(x.shape)}, expected 1"
            )
    squeezed = {d % rank for d in dims} or {i for i, s in enumerate(x.shape) if s == 1}
    expected = tuple(s for i, s in enumerate(x.shape) if i not in squeezed)
    if out.shape != expected:
        raise b.error(
            f"output shape {list(out.shape)} differs from {list(expected)}, the "
            f"input {list(x.shape)} without dimensions {sorted(squeezed)}"
        )
    _bind(b, out, _reshape(b, x, out))


def convert_expand_dims(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    axis = _constant_ints(b, 1, "axis")
    if len(axis) != 1:
        raise b.error(f"axis {axis} must hold exactly one value")
    rank = len(x.shape) + 1
    (a,) = axis
    if not -rank <= a < rank:
        raise b.error(f"axis {a} is out of range for output rank {rank}")
    a %= rank
    expected = (*x.shape[:a], 1, *x.shape[a:])
    if out.shape != expected:
        raise b.error(
            f"output shape {list(out.shape)} differs from {list(expected)}, the "
            f"input {list(x.shape)} with a new axis {a}"
        )
    _bind(b, out, _reshape(b, x, out))


# -- slices --------------------------------------------------------------------


def _clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(value, hi))


def slice_start(begin: int, stride: int, size: int, masked: bool) -> int:
    """TFLite's ``StridedSliceStartForAxis``."""
    start = begin + size if begin < 0 else begin
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
    if masked:
        start = 0 if stride > 0 else size - 1
    return start


def slice_end(
    end: int, stride: int, size: int, start: int, masked: bool, shrink: bool
) -> int:
    """TFLite's ``StridedSliceEndForAxis`` (without ``offset``)."""
    if shrink:
        return start if start >= size else start + 1
    stop = end + size if end < 0 else end
    stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
    if masked:
        stop = size if stride > 0 else -1
    return stop


def _emit_slice(
    b: RelayBuilder,
    x: Tensor,
    out: Tensor,
    starts: list[int],
    stops: list[int],
    strides: list[int],
    shrunk: set[int],
) -> None:
    """``relay.strided_slice`` (or nothing when it selects everything in
    order), then a reshape dropping the ``shrunk`` axes."""
    counts = [
        max(0, -((s - e) // st))  # ceil((e - s) / st)
        for s, e, st in zip(starts, stops, strides, strict=True)
    ]
    if 0 in counts:
        raise b.error(
            f"the slice of {list(x.shape)} is empty (begin {starts}, end {stops}, "
            f"strides {strides}); empty tensors are not supported"
        )
    value = b.value(x)
    if counts != list(x.shape) or any(s != 1 for s in strides):
        value = b.emit(StridedSliceOp(value, starts, stops, strides))
    expected = tuple(c for d, c in enumerate(counts) if d not in shrunk)
    if expected != out.shape:
        raise b.error(
            f"the slice has shape {list(expected)}, the output "
            f"'{out.name}' {list(out.shape)}"
        )
    if tuple(counts) != out.shape:
        value = b.emit(ReshapeOp(value, out.shape))
    _bind(b, out, value)


def convert_strided_slice(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    opts = b.operator.options
    if opts.EllipsisMask() or opts.NewAxisMask():
        raise b.error(
            f"ellipsis_mask {opts.EllipsisMask()} and new_axis_mask "
            f"{opts.NewAxisMask()} must be 0 (TFLite Micro ignores them; the "
            "converter folds them into begin/end/strides)"
        )
    if opts.Offset():
        raise b.error("offset = true is not supported (TFLite Micro ignores it)")
    rank = len(x.shape)
    begin = _constant_ints(b, 1, "begin")
    end = _constant_ints(b, 2, "end")
    strides = _constant_ints(b, 3, "strides")
    for what, values in (("begin", begin), ("end", end), ("strides", strides)):
        if len(values) != rank:
            raise b.error(
                f"{what} has {len(values)} values, expected {rank} (the input rank)"
            )
    if 0 in strides:
        raise b.error(f"strides {strides} must not contain 0")
    starts, stops = [], []
    for d in range(rank):
        bit = 1 << d
        start = slice_start(
            begin[d], strides[d], x.shape[d], bool(opts.BeginMask() & bit)
        )
        starts.append(start)
        stops.append(
            slice_end(
                end[d],
                strides[d],
                x.shape[d],
                start,
                bool(opts.EndMask() & bit),
                bool(opts.ShrinkAxisMask() & bit),
            )
        )
    shrunk = {d for d in range(rank) if opts.ShrinkAxisMask() & (1 << d)}
    _emit_slice(b, x, out, starts, stops, strides, shrunk)


def convert_slice(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    rank = len(x.shape)
    begin = _constant_ints(b, 1, "begin")
    size = _constant_ints(b, 2, "size")
    for what, values in (("begin", begin), ("size", size)):
        if len(values) != rank:
            raise b.error(
                f"{what} has {len(values)} values, expected {rank} (the input rank)"
            )
    stops = []
    for d in range(rank):
        stop = x.shape[d] if size[d] == -1 else begin[d] + size[d]
        if not 0 <= begin[d] < stop <= x.shape[d]:
            raise b.error(
                f"axis {d}: begin {begin[d]} and size {size[d]} are outside "
                f"0..{x.shape[d]} or empty"
            )
        stops.append(stop)
    _emit_slice(b, x, out, begin, stops, [1] * rank, set())


# -- split, pack ---------------------------------------------------------------


def _scalar_axis(b: RelayBuilder, position: int, rank: int) -> int:
    values = _constant_ints(b, position, "axis")
    if len(values) != 1:
        raise b.error(f"axis {values} must hold exactly one value")
    (axis,) = values
    if not -rank <= axis < rank:
        raise b.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def _split_outputs(
    b: RelayBuilder, x: Tensor, axis: int, sizes: list[int], squeeze: bool
) -> None:
    """Output ``i``: the ``sizes[i]`` elements after the first ``i`` along
    ``axis`` (a strided slice, an alias when it is all of ``x``), without
    ``axis`` when ``squeeze`` (UNPACK)."""
    outputs = [b.output_tensor(i) for i in range(len(b.operator.outputs))]
    if len(outputs) != len(sizes):
        raise b.error(f"the operator has {len(outputs)} outputs, expected {len(sizes)}")
    rank = len(x.shape)
    start = 0
    for out, size in zip(outputs, sizes, strict=True):
        _same_type_and_quantization(b, x, out)
        starts = [start if d == axis else 0 for d in range(rank)]
        stops = [start + size if d == axis else x.shape[d] for d in range(rank)]
        _emit_slice(b, x, out, starts, stops, [1] * rank, {axis} if squeeze else set())
        start += size


def convert_split(b: RelayBuilder) -> None:
    x = b.required_input(1)
    axis = _scalar_axis(b, 0, len(x.shape))
    count = b.operator.options.NumSplits()
    if count < 1 or x.shape[axis] % count:
        raise b.error(
            f"num_splits {count} does not divide dimension {axis} of {list(x.shape)}"
        )
    _split_outputs(b, x, axis, [x.shape[axis] // count] * count, squeeze=False)


def convert_split_v(b: RelayBuilder) -> None:
    x = b.required_input(0)
    axis = _scalar_axis(b, 2, len(x.shape))
    sizes = _constant_ints(b, 1, "size_splits")
    total = x.shape[axis]
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) == 1:
        sizes[unknown[0]] = total - (sum(sizes) + 1)
    if any(s < 1 for s in sizes) or sum(sizes) != total:
        raise b.error(
            f"size_splits {_constant_ints(b, 1, 'size_splits')} do not split "
            f"dimension {axis} ({total} elements) into non-empty parts"
        )
    _split_outputs(b, x, axis, sizes, squeeze=False)


def convert_unpack(b: RelayBuilder) -> None:
    x = b.required_input(0)
    rank = len(x.shape)
    axis = b.operator.options.Axis()
    if not -rank <= axis < rank:
        raise b.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    _split_outputs(b, x, axis, [1] * x.shape[axis], squeeze=True)


def convert_pack(b: RelayBuilder) -> None:
    inputs = [b.required_input(i) for i in range(len(b.operator.inputs))]
    out = b.output_tensor()
    first = inputs[0]
    rank = len(first.shape) + 1
    axis = b.operator.options.Axis()
    if not -rank <= axis < rank:
        raise b.error(f"axis {axis} is out of range for output rank {rank}")
    axis %= rank
    expanded = (*first.shape[:axis], 1, *first.shape[axis:])
    parts = []
    for t in inputs:
        _same_type_and_quantization(b, t, out)
        if t.shape != first.shape:
            raise b.error(
                f"input '{t.name}' has shape {list(t.shape)}, expected "
                f"{list(first.shape)} (every input alike)"
            )
        parts.append(b.emit(ReshapeOp(b.value(t), expanded)))
    value = parts[0] if len(parts) == 1 else b.emit(ConcatenateOp(parts, axis))
    _bind(b, out, value)


# -- space and depth -----------------------------------------------------------


def _block_size(b: RelayBuilder, x: Tensor) -> int:
    kernel = b.operator.opcode.lower() + ".cc"
    if _type(x) not in ("FLOAT32", "INT8"):
        raise b.error(
            f"input '{x.name}' is {_type(x)}; supported: FLOAT32, INT8 (TFLite "
            f"Micro's {kernel} accepts no other type)"
        )
    if len(x.shape) != 4:
        raise b.error(f"input must be 4-d (NHWC), got {list(x.shape)}")
    block = b.operator.options.BlockSize()
    if block < 1:
        raise b.error(f"block size {block} must be at least 1")
    return block


def convert_space_to_depth(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    block = _block_size(b, x)
    n, h, w, c = x.shape
    if h % block or w % block:
        raise b.error(f"height {h} and width {w} must be multiples of {block}")
    blocks = b.emit(ReshapeOp(b.value(x), (n, h // block, block, w // block, block, c)))
    moved = b.emit(TransposeOp(blocks, (0, 1, 3, 2, 4, 5)))
    _bind(
        b, out, b.emit(ReshapeOp(moved, (n, h // block, w // block, block * block * c)))
    )


def convert_depth_to_space(b: RelayBuilder) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    block = _block_size(b, x)
    n, h, w, c = x.shape
    if c % (block * block):
        raise b.error(f"depth {c} must be a multiple of {block * block}")
    depth = c // (block * block)
    blocks = b.emit(ReshapeOp(b.value(x), (n, h, w, block, block, depth)))
    moved = b.emit(TransposeOp(blocks, (0, 1, 3, 2, 4, 5)))
    _bind(b, out, b.emit(ReshapeOp(moved, (n, h * block, w * block, depth))))


# -- reductions ----------------------------------------------------------------


def _reduction_axes(b: RelayBuilder, x: Tensor) -> list[int]:
    """The constant axes, normalised and without duplicates (TFLite's
    ``ResolveAxis``), in increasing order."""
    rank = len(x.shape)
    axes = _constant_ints(b, 1, "axis")
    for a in axes:
        if not -rank <= a < rank:
            raise b.error(f"axis {a} is out of range for rank {rank}")
    return sorted({a % rank for a in axes})


def mean_multiplier(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """TFLM's ``QuantizedMeanOrSum`` folding of ``1 / count`` into the
    output multiplier (``reduce.h``): ``(int64(multiplier) << folded) /
    count``. It shifts the multiplier left, undefined in C++17 for a negative
    one (a negative input or output scale): ``ScaleError``."""
    if multiplier < 0:
        raise q.ScaleError(
            f"input scale / output scale gives the multiplier {multiplier}; TFLite "
            "Micro's MEAN shifts it left, undefined for a negative one"
        )
    folded = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << folded) // count, shift - folded


def _reduce(b: RelayBuilder, is_mean: bool) -> None:
    x, out = b.required_input(0), b.output_tensor()
    axes = _reduction_axes(b, x)
    keepdims = bool(b.operator.options.KeepDims())
    types = (_type(x), _type(out))
    if types == ("FLOAT32", "FLOAT32"):
        op_class = MeanOp if is_mean else SumOp
        _bind(b, out, b.emit(op_class(b.value(x), axes, keepdims)))
        return
    if types not in (("INT8", "INT8"), ("INT16", "INT16")):
        raise b.error(
            f"unsupported types {' -> '.join(types)} "
            "(supported: FLOAT32 -> FLOAT32, INT8 -> INT8, INT16 -> INT16)"
        )
    in_q, out_q = _per_tensor(b, x, "input"), _per_tensor(b, out, "output")
    count = int(np.prod([x.shape[a] for a in axes]))
    if count == 0:
        raise b.error(f"reducing over an empty dimension of {list(x.shape)}")
    multiplier, shift = q.requantize_multiplier(in_q.scale, out_q.scale)
    if is_mean:
        multiplier, shift = mean_multiplier(multiplier, shift, count)
    if not -31 <= shift <= 30:
        raise b.error(
            f"the rescaling from scale {in_q.scale} to {out_q.scale} over {count} "
            f"elements needs a shift of {shift}, outside TFLite's -31..30"
        )
    total = b.emit(SumOp(b.emit(CastOp(b.value(x), i32)), axes, keepdims))
    if in_q.zero_point:
        total = b.emit(AddOp(total, b.scalar(-in_q.zero_point * count, "int32")))
    dtype = np.dtype(out.dtype)
    lo, hi = int_range(dtype)
    result = b.requantize_i32(
        total, [multiplier], [shift], -1, out_q.zero_point, lo, hi, dtype
    )
    _bind(b, out, result)


def _extremum(b: RelayBuilder, op_class: type[MaxOp] | type[MinOp]) -> None:
    x, out = b.required_input(0), b.output_tensor()
    _same_type_and_quantization(b, x, out)
    if _type(x) not in ("FLOAT32", "INT8"):
        raise b.error(
            f"unsupported type {_type(x)} (FLOAT32 or INT8, as TFLite Micro's kernel)"
        )
    axes = _reduction_axes(b, x)
    keepdims = bool(b.operator.options.KeepDims())
    _bind(b, out, b.emit(op_class(b.value(x), axes, keepdims)))


def convert_reduce_max(b: RelayBuilder) -> None:
    _extremum(b, MaxOp)


def convert_reduce_min(b: RelayBuilder) -> None:
    _extremum(b, MinOp)


def _arg_extremum(b: RelayBuilder, op_class: type[ArgMaxOp] | type[ArgMinOp]) -> None:
    x, out = b.required_input(0), b.output_tensor()
    if _type(x) not in ("FLOAT32", "INT8"):
        raise b.error(
            f"unsupported input type {_type(x)} (FLOAT32 or INT8, as TFLite "
            "Micro's kernel)"
        )
    if _type(out) != "INT32":
        raise b.error(
            f"output '{out.name}' is {_type(out)}; only INT32 indices are supported"
        )
    axis = _scalar_axis(b, 1, len(x.shape))
    el = element_type(np.dtype(out.dtype))
    _bind(b, out, b.emit(op_class(b.value(x), axis, el)))


def convert_arg_max(b: RelayBuilder) -> None:
    _arg_extremum(b, ArgMaxOp)


def convert_arg_min(b: RelayBuilder) -> None:
    _arg_extremum(b, ArgMinOp)


def convert_mean(b: RelayBuilder) -> None:
    _reduce(b, is_mean=True)


def convert_sum(b: RelayBuilder) -> None:
    _reduce(b, is_mean=False)


register(
    {
        "ARG_MAX": convert_arg_max,
        "ARG_MIN": convert_arg_min,
        "BROADCAST_TO": convert_broadcast_to,
        "DEPTH_TO_SPACE": convert_depth_to_space,
        "EXPAND_DIMS": convert_expand_dims,
        "PACK": convert_pack,
        "MEAN": convert_mean,
        "REDUCE_MAX": convert_reduce_max,
        "REDUCE_MIN": convert_reduce_min,
        "SLICE": convert_slice,
        "SPACE_TO_DEPTH": convert_space_to_depth,
        "SPLIT": convert_split,
        "SPLIT_V": convert_split_v,
        "SQUEEZE": convert_squeeze,
        "STRIDED_SLICE": convert_strided_slice,
        "SUM": convert_sum,
        "TRANSPOSE": convert_transpose,
        "UNPACK": convert_unpack,
    }
)
