"""Shape inference for the relay operators, in plain Python (no xDSL).

Every function takes static shapes (tuples of ``int``) and attribute values as
Python values, returns the result shape and raises ``ShapeError`` with a
message saying what was expected when the input is invalid. The verifiers of
``relay_ops*.py`` use them to compute the expected result type; the numpy
oracle and ``lower-ops`` reuse them so that every part of usmp-opt agrees on
the semantics of ``docs/relay-ops.md``.

Conventions: ``padding`` of a 2-d window op is ``(top, left, bottom, right)``;
``pad_width`` of ``relay.pad`` is ``(before0, after0, before1, after1, ...)``;
axes may be negative (numpy style) wherever the contract allows it.
"""

from __future__ import annotations

from collections.abc import Sequence

Shape = tuple[int, ...]

CONV2D_LAYOUTS: tuple[tuple[str, str], ...] = (
    ("NHWC", "HWIO"),
    ("NHWC", "OHWI"),
    ("NCHW", "OIHW"),
)
"""The (data_layout, kernel_layout) pairs ``relay.conv2d`` accepts."""

POOL_LAYOUTS: tuple[str, ...] = ("NHWC", "NCHW")
"""The layouts of the pooling operators."""


class ShapeError(ValueError):
    """Invalid operand shapes or attributes; the message says what is expected."""


def normalize_axis(axis: int, rank: int) -> int:
    """``axis`` in ``[-rank, rank)`` mapped to ``[0, rank)``."""
    if not -rank <= axis < rank:
        raise ShapeError(
            f"axis {axis} is out of range for rank {rank} "
            f"(expected {-rank}..{rank - 1})"
        )
    return axis % rank


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> Shape | None:
    """numpy broadcasting of two static shapes; ``None`` if incompatible."""
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out: list[int] = []
    for x, y in zip(pa, pb, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def _check_len(what: str, values: Sequence[int], n: int) -> None:
    if len(values) != n:
        raise ShapeError(f"{what} must have {n} values, got {len(values)}")


def _check_min(what: str, values: Sequence[int], least: int) -> None:
    if any(v < least for v in values):
        raise ShapeError(f"{what} must be >= {least}, got {list(values)}")


def _check_rank(what: str, shape: Sequence[int], rank: int) -> None:
    if len(shape) != rank:
        raise ShapeError(f"{what} must have rank {rank}, got shape {list(shape)}")


def window_output_size(
    size: int, window: int, stride: int, dilation: int, before: int, after: int
) -> int:
    """Output extent of a sliding window over ``size`` padded by before/after."""
    effective = (window - 1) * dilation + 1
    padded = size + before + after
    if padded < effective:
        raise ShapeError(
            f"window of extent {effective} does not fit in the padded input "
            f"extent {padded} ({size} + {before} + {after})"
        )
    return (padded - effective) // stride + 1


def _check_window_attrs(
    strides: Sequence[int], padding: Sequence[int], dilation: Sequence[int]
) -> None:
    _check_len("strides", strides, 2)
    _check_min("strides", strides, 1)
    _check_len("padding (top, left, bottom, right)", padding, 4)
    _check_min("padding", padding, 0)
    _check_len("dilation", dilation, 2)
    _check_min("dilation", dilation, 1)


def spatial_axes(layout: str) -> tuple[int, int, int]:
    """Positions of (H, W, C) in a 4-d activation layout (NHWC or NCHW)."""
    if layout not in POOL_LAYOUTS:
        raise ShapeError(f"layout '{layout}' is not one of {', '.join(POOL_LAYOUTS)}")
    return (1, 2, 3) if layout == "NHWC" else (2, 3, 1)


def conv2d_weight_dims(
    weight: Sequence[int], kernel_layout: str
) -> tuple[int, int, int, int]:
    """(KH, KW, Cin/groups, Cout) of a conv2d weight in HWIO, OHWI or OIHW."""
    positions = {"H": 0, "W": 0, "I": 0, "O": 0}
    for i, d in enumerate(kernel_layout):
        positions[d] = i
    return (
        weight[positions["H"]],
        weight[positions["W"]],
        weight[positions["I"]],
        weight[positions["O"]],
    )


def conv2d_output_shape(
    data: Sequence[int],
    weight: Sequence[int],
    *,
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
    data_layout: str = "NHWC",
    kernel_layout: str = "HWIO",
) -> Shape:
    """Result shape of ``relay.conv2d`` (grouped and depthwise included)."""
    if (data_layout, kernel_layout) not in CONV2D_LAYOUTS:
        pairs = ", ".join(f"{d}+{k}" for d, k in CONV2D_LAYOUTS)
        raise ShapeError(
            f"layouts {data_layout}+{kernel_layout} are not supported "
            f"(expected one of {pairs})"
        )
    _check_rank("data", data, 4)
    _check_rank("weight", weight, 4)
    _check_window_attrs(strides, padding, dilation)
    if groups < 1:
        raise ShapeError(f"groups must be >= 1, got {groups}")
    h_axis, w_axis, c_axis = spatial_axes(data_layout)
    n, h, w, c_in = data[0], data[h_axis], data[w_axis], data[c_axis]
    kh, kw, k_in, c_out = conv2d_weight_dims(weight, kernel_layout)
    if c_in % groups != 0:
        raise ShapeError(f"input channels {c_in} are not divisible by groups {groups}")
    if c_out % groups != 0:
        raise ShapeError(
            f"output channels {c_out} are not divisible by groups {groups}"
        )
    if k_in != c_in // groups:
        raise ShapeError(
            f"weight {list(weight)} ({kernel_layout}) has {k_in} input channels per "
            f"group, expected {c_in // groups} "
            f"(input channels {c_in} / groups {groups})"
        )
    oh = window_output_size(h, kh, strides[0], dilation[0], padding[0], padding[2])
    ow = window_output_size(w, kw, strides[1], dilation[1], padding[1], padding[3])
    return (n, oh, ow, c_out) if data_layout == "NHWC" else (n, c_out, oh, ow)


def conv2d_transpose_output_shape(
    data: Sequence[int],
    weight: Sequence[int],
    *,
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    output_padding: Sequence[int] = (0, 0),
) -> Shape:
    """Result shape of ``relay.conv2d_transpose`` (NHWC data, OHWI weight):
    ``(in - 1) * stride + K - before - after + output_padding`` per spatial
    axis, the weight's O output channels."""
    _check_rank("data", data, 4)
    _check_rank("weight", weight, 4)
    _check_window_attrs(strides, padding, (1, 1))
    _check_len("output_padding", output_padding, 2)
    _check_min("output_padding", output_padding, 0)
    n, h, w, c_in = data
    c_out, kh, kw, k_in = weight
    if k_in != c_in:
        raise ShapeError(
            f"weight {list(weight)} (OHWI) has {k_in} input channels, expected {c_in}"
        )
    sizes = []
    for axis, (size, k) in enumerate(((h, kh), (w, kw))):
        extent = (size - 1) * strides[axis] + k + output_padding[axis]
        extent -= padding[axis] + padding[axis + 2]
        if extent < 1:
            raise ShapeError(
                f"padding {list(padding)} leaves no output along spatial axis {axis}"
            )
        sizes.append(extent)
    return (n, sizes[0], sizes[1], c_out)


def dense_output_shape(data: Sequence[int], weight: Sequence[int]) -> Shape:
    """Result shape of ``relay.dense``: (B, K) x (N, K) -> (B, N)."""
    _check_rank("data", data, 2)
    _check_rank("weight", weight, 2)
    if data[1] != weight[1]:
        raise ShapeError(
            f"data {list(data)} and weight {list(weight)} disagree on the reduction "
            f"dimension (expected weight [N, {data[1]}])"
        )
    return (data[0], weight[0])


def pool2d_output_shape(
    data: Sequence[int],
    pool_size: Sequence[int],
    *,
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    layout: str = "NHWC",
) -> Shape:
    """Result shape of ``relay.max_pool2d`` / ``relay.avg_pool2d``.

    Every window must overlap the input (padding < pool size), so that a
    maximum or a mean over the non-padded positions is always defined.
    """
    h_axis, w_axis, _ = spatial_axes(layout)
    _check_rank("data", data, 4)
    _check_len("pool_size", pool_size, 2)
    _check_min("pool_size", pool_size, 1)
    _check_window_attrs(strides, padding, (1, 1))
    for side, pad, k in zip(
        ("top", "left", "bottom", "right"),
        padding,
        (*pool_size, *pool_size),
        strict=True,
    ):
        if pad >= k:
            raise ShapeError(
                f"{side} padding {pad} must be smaller than the pool size {k} "
                "(a window would see only padding)"
            )
    out = list(data)
    out[h_axis] = window_output_size(
        data[h_axis], pool_size[0], strides[0], 1, padding[0], padding[2]
    )
    out[w_axis] = window_output_size(
        data[w_axis], pool_size[1], strides[1], 1, padding[1], padding[3]
    )
    return tuple(out)


def global_pool2d_output_shape(data: Sequence[int], layout: str = "NHWC") -> Shape:
    """Result shape of ``relay.global_avg_pool2d``: H and W become 1."""
    h_axis, w_axis, _ = spatial_axes(layout)
    _check_rank("data", data, 4)
    out = list(data)
    out[h_axis] = out[w_axis] = 1
    return tuple(out)


def reduce_axes(rank: int, axis: Sequence[int]) -> tuple[int, ...]:
    """Normalised, sorted reduction axes; duplicates are an error."""
    axes = [normalize_axis(a, rank) for a in axis]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"axis {list(axis)} names an axis twice")
    return tuple(sorted(axes))


def reduce_output_shape(
    data: Sequence[int], axis: Sequence[int], keepdims: bool
) -> Shape:
    """Result shape of ``relay.mean``."""
    axes = set(reduce_axes(len(data), axis))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(data))
    return tuple(d for i, d in enumerate(data) if i not in axes)


def transpose_output_shape(data: Sequence[int], axes: Sequence[int]) -> Shape:
    """Result shape of ``relay.transpose`` (``axes`` is a permutation)."""
    rank = len(data)
    perm = [normalize_axis(a, rank) for a in axes]
    if sorted(perm) != list(range(rank)):
        raise ShapeError(f"axes {list(axes)} is not a permutation of 0..{rank - 1}")
    return tuple(data[p] for p in perm)


def strided_slice_output_shape(
    data: Sequence[int],
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int],
) -> Shape:
    """Result shape of ``relay.strided_slice``: per axis ``ceil((end - begin)
    / stride)`` elements ``begin, begin + stride, ...``, all inside the axis
    (positions are absolute: no negative wrapping, no clamping)."""
    rank = len(data)
    for what, values in (("begin", begin), ("end", end), ("strides", strides)):
        _check_len(what, values, rank)
    shape: list[int] = []
    for d, (size, b, e, s) in enumerate(zip(data, begin, end, strides, strict=True)):
        if s == 0:
            raise ShapeError(f"stride of axis {d} is 0")
        count = -((b - e) // s)  # ceil((e - b) / s)
        if count < 1:
            raise ShapeError(
                f"axis {d}: begin {b}, end {e}, stride {s} select no element "
                "(empty results are not supported)"
            )
        last = b + (count - 1) * s
        if not (0 <= b < size and 0 <= last < size):
            raise ShapeError(
                f"axis {d}: elements {b}..{last} (stride {s}) are outside 0..{size - 1}"
            )
        shape.append(count)
    return tuple(shape)


def contiguous_slice_offset(
    data: Sequence[int],
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int],
) -> int | None:
    """The row-major element offset of a valid ``relay.strided_slice`` whose
    elements are one contiguous block of ``data``, kept in order (a view of
    its operand at that offset); ``None`` when the slice must copy.

    Contiguous: every axis before the first one with more than one selected
    element selects one element, that axis steps by 1, and every axis after
    it is whole (in order)."""
    counts = strided_slice_output_shape(data, begin, end, strides)
    offset, stride = 0, 1
    split = next((d for d, c in enumerate(counts) if c > 1), len(data))
    for d in reversed(range(len(data))):
        if d > split and counts[d] != data[d]:
            return None  # an inner axis is cut
        if counts[d] > 1 and strides[d] != 1:
            return None  # elements skipped or reversed
        offset += begin[d] * stride
        stride *= data[d]
    return offset


def pad_output_shape(data: Sequence[int], pad_width: Sequence[int]) -> Shape:
    """Result shape of ``relay.pad`` (``pad_width`` = before0, after0, ...)."""
    _check_len("pad_width (before, after per axis)", pad_width, 2 * len(data))
    _check_min("pad_width", pad_width, 0)
    return tuple(
        d + pad_width[2 * i] + pad_width[2 * i + 1] for i, d in enumerate(data)
    )


def concatenate_output_shape(shapes: Sequence[Sequence[int]], axis: int) -> Shape:
    """Result shape of ``relay.concatenate`` (numpy rules)."""
    if not shapes:
        raise ShapeError("needs at least one input")
    first = shapes[0]
    rank = len(first)
    ax = normalize_axis(axis, rank)
    total = 0
    for i, s in enumerate(shapes):
        if len(s) != rank or any(
            a != b for j, (a, b) in enumerate(zip(s, first, strict=True)) if j != ax
        ):
            raise ShapeError(
                f"input {i} has shape {list(s)}, expected {list(first)} except along "
                f"axis {ax}"
            )
        total += s[ax]
    return tuple(total if j == ax else d for j, d in enumerate(first))


def per_axis_length(data: Sequence[int], axis: int, what: str, length: int) -> None:
    """Check a per-tensor (length 1) or per-axis (length = dim of ``axis``) array."""
    if length == 1:
        return
    dim = data[normalize_axis(axis, len(data))]
    if length != dim:
        raise ShapeError(
            f"{what} has {length} values, expected 1 (per tensor) or {dim} "
            f"(the size of axis {axis})"
        )
