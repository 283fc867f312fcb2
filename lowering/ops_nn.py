"""Reductions: conv2d, conv2d_transpose, dense, pooling, mean, sum, max, min,
argmax, argmin (``LowerNN``).

Each output element is a reduction in an ``scf.for`` nest whose accumulator
is an ``iter_args`` scalar: no accumulator tensor, no im2col, no padded copy
and no widened copy of activations or weights (an i8 element is sign-
extended in a register right before its multiply).

Padding is folded into the loop bounds: for output position ``o`` the window
rows that fall inside the input are ``lo <= k < hi`` with
``lo = ceil(max(pad - o*stride, 0) / dilation)`` and
``hi = min(K, ceil(max(size + pad - o*stride, 0) / dilation))``. Padded
positions contribute 0 to a convolution (input zero point minus itself) and
are ignored by pooling, so skipping them is exact. When the shapes prove a
bound is never hit (no padding on that side) it is the constant ``0``/``K``
and costs nothing. When a window loop is the innermost loop of a conv2d
reduction (one input channel per group: depthwise, single-channel input),
an output whose window lies inside the input runs a second copy of the
reduction with static bounds (``scf.if`` on the output position, whose test
is hoisted to the row / column loops), so that short loop is unrolled; the
border keeps the clamped bounds.

The innermost reduction loop (input channels of a conv2d, depth of a dense)
is unrolled when that pays (``reduction_unroll``): by 4 when it reads a
strided operand (HWIO weights along I), completely when it has at most 4
taps; a loop whose operands are all contiguous stays rolled for the C
compiler's vectoriser. Taps keep their order, so float sums are unchanged.

Integer semantics follow the oracle: conv2d/dense accumulate
``(x - input_zp) * (w - kernel_zp)`` in i32 (wrapping), i16 x i8 (16x8) in
i64 (each product in i32, sign-extended); max_pool2d works in
the element type; average pooling and mean sum in i32 and divide with
TFLite's rounding (``acc > 0 ? (acc + n/2)/n : (acc - n/2)/n``, truncating).
Floats accumulate in f32.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.dialects.relay_nn_ops import ArgReduceOp, ReduceOp
from usmp.dialects.relay_ops import (
    AvgPool2DOp,
    Conv2DOp,
    Conv2DTransposeOp,
    DenseOp,
    GlobalAvgPool2DOp,
    MaxOp,
    MaxPool2DOp,
    MeanOp,
    MinOp,
    SumOp,
)
from usmp.dialects.relay_shapes import conv2d_weight_dims, spatial_axes
from usmp.lowering import ops_nn_dsp
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    Handler,
    JammedHandler,
    element_type,
    shape_of,
)
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.scalar import int_bounds, is_float
from usmp.lowering.windows import inside_tests, interior, window_bounds

UNROLL = 4
"""Taps per iteration of the innermost loop of a conv2d / dense reduction."""


def reduction_unroll(extent: int, contiguous: bool) -> int:
    """The ``unroll`` of a reduction's innermost loop over ``extent`` taps
    (``KernelBuilder.reduce``): a loop whose operands are all contiguous
    along it stays rolled (C compilers vectorise it), unless it is so short
    (``<= UNROLL`` taps) that it is better unrolled completely; a strided one
    (e.g. HWIO weights along I) runs ``UNROLL`` taps per iteration: it cannot
    be vectorised, and unrolling removes most of its per-tap loop overhead."""
    return 1 if contiguous and extent > UNROLL else UNROLL


def _stride(shape: Sequence[int], axis: int) -> int:
    """Elements between neighbours along ``axis`` of a row-major ``shape``."""
    return math.prod(shape[axis + 1 :])


def _centred(
    b: KernelBuilder, x: SSAValue, acc: Attribute, zero_point: int
) -> SSAValue:
    x = b.convert(x, acc)
    return b.sub(x, b.const(zero_point, acc)) if zero_point else x


def _product_type(acc: Attribute) -> Attribute:
    """The type of the products summed into an ``acc`` accumulator: its own,
    except for i64 (i16 x i8, 16x8), whose products fit in i32 and are
    computed there, then sign-extended, as TFLite's 16x8 kernels do."""
    return i32 if acc == i64 else acc


def conv2d(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    return conv2d_jammed(k, op, [index])[0]


def conv2d_jammed(
    k: FusedKernel, op: Operation, indices: Sequence[Sequence[Ix]]
) -> list[SSAValue]:
    """Elements of a conv2d at ``indices``, which differ in the output
    channel only, computed by one reduction with one accumulator each."""
    assert isinstance(op, Conv2DOp)
    if k.features.dsp and (dsp := ops_nn_dsp.conv2d_jammed(k, op, indices)):
        return dsp
    b = k.b
    layout = op.data_layout
    kernel_layout = op.kernel_layout
    h_axis, w_axis, c_axis = spatial_axes(layout)
    data = shape_of(op.data)
    out = shape_of(op.result)
    kh, kw, cg, cout = conv2d_weight_dims(shape_of(op.weight), kernel_layout)
    sh, sw = op.strides
    dh, dw = op.dilation
    top, left, _, _ = op.padding
    groups = op.groups
    izp, kzp = op.input_zero_point, op.kernel_zero_point
    acc_t = element_type(op.result)
    product_t = _product_type(acc_t)

    index = indices[0]
    channels = [i[c_axis] for i in indices]
    channel_bases = [
        b.imul(b.idiv(oc, cout // groups) if groups > 1 else 0, cg) for oc in channels
    ]
    h_lo, h_hi, h_base = window_bounds(
        b, index[h_axis], out[h_axis], sh, dh, top, data[h_axis], kh
    )
    w_lo, w_hi, w_base = window_bounds(
        b, index[w_axis], out[w_axis], sw, dw, left, data[w_axis], kw
    )

    def body(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        th, tw, ic = taps
        x_index: list[Ix] = [index[0], 0, 0, 0]
        x_index[h_axis] = b.iadd(h_base, b.imul(th, dh))
        x_index[w_axis] = b.iadd(w_base, b.imul(tw, dw))
        sums = []
        for oc, channel_base, acc in zip(channels, channel_bases, accs, strict=True):
            x_index[c_axis] = b.iadd(channel_base, ic)
            position = {"H": th, "W": tw, "I": ic, "O": oc}
            w_index = [position[d] for d in kernel_layout]
            x = _centred(b, k.at(op.data, x_index), product_t, izp)
            w = _centred(b, k.at(op.weight, w_index), product_t, kzp)
            sums.append(b.add(acc, b.convert(b.mul(x, w), acc_t)))
        return sums

    innermost, unroll = _conv_innermost_taps(op)

    def reduction(bounds: Sequence[tuple[Ix, Ix]]) -> list[SSAValue]:
        return b.reduce(bounds, [b.const(0, acc_t)] * len(indices), body, unroll)

    bounds = [(h_lo, h_hi), (w_lo, w_hi), (0, cg)]
    if innermost != "I":
        # a window loop is innermost (one channel per group): a window inside
        # the input gets static tap bounds (the short loop is unrolled, no
        # clamping); the border keeps the clamped ones
        inside = inside_tests(
            b,
            [
                (index[a], out[a], interior(out[a], s, d, p, data[a], n))
                for a, s, d, p, n in (
                    (h_axis, sh, dh, top, kh),
                    (w_axis, sw, dw, left, kw),
                )
            ],
        )
        if inside:
            return b.select_if_many(
                b.i1_and(inside),
                [acc_t] * len(indices),
                lambda: reduction([(0, kh), (0, kw), (0, cg)]),
                lambda: reduction(bounds),
            )
    return reduction(bounds)


def _conv_innermost_taps(op: Conv2DOp) -> tuple[str, int]:
    """The innermost loop of a conv2d reduction (``"I"`` input channels,
    else ``"W"`` window columns, else ``"H"`` rows: the innermost with more
    than one tap) and its ``unroll`` (``reduction_unroll``: contiguous when
    both the input and the weight advance by one element per tap)."""
    layout, kernel_layout = op.data_layout, op.kernel_layout
    h_axis, w_axis, c_axis = spatial_axes(layout)
    kh, kw, cg, _ = conv2d_weight_dims(shape_of(op.weight), kernel_layout)
    dh, dw = op.dilation
    taps = (("I", c_axis, cg, 1), ("W", w_axis, kw, dw), ("H", h_axis, kh, dh))
    tap, x_axis, extent, dilation = next((t for t in taps if t[2] > 1), taps[0])
    contiguous = (
        _stride(shape_of(op.data), x_axis) * dilation == 1
        and _stride(shape_of(op.weight), kernel_layout.index(tap)) == 1
    )
    return tap, reduction_unroll(extent, contiguous)


def conv2d_transpose(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    return conv2d_transpose_jammed(k, op, [index])[0]


def transposed_window(
    b: KernelBuilder, o: Ix, stride: int, before: int, size: int, window: int
) -> tuple[Ix, Ix, Ix]:
    """``(lo, hi, base)``: the input positions ``lo <= i < hi`` whose window
    (``i * stride - before + k``, ``0 <= k < window``) covers output position
    ``o``, the tap of ``i`` being ``base - i * stride`` (``base = o +
    before``): ``lo = ceil(max(base - window + 1, 0) / stride)``, ``hi =
    min(size, base // stride + 1)``."""
    base = b.iadd(o, before)
    lo = b.imax(b.isub(base, window - 1), 0)
    if stride > 1:
        lo = b.idiv(b.iadd(lo, stride - 1), stride)
    hi = b.imin(b.iadd(b.idiv(base, stride), 1), size)
    return lo, hi, base


def conv2d_transpose_jammed(
    k: FusedKernel, op: Operation, indices: Sequence[Sequence[Ix]]
) -> list[SSAValue]:
    """Elements of a conv2d_transpose (NHWC, OHWI) at ``indices``, which
    differ in the output channel only: a gather over the input positions
    ``(iy, ix)`` whose windows cover the output position (ascending, the
    order TFLite's scatter adds them, so float sums are bit for bit the
    same) and the input channels, one accumulator per output channel; no
    scratch."""
    assert isinstance(op, Conv2DTransposeOp)
    b = k.b
    _, in_h, in_w, channels = shape_of(op.data)
    _, kh, kw, _ = shape_of(op.weight)
    sh, sw = op.strides
    top, left, _, _ = op.padding
    izp, kzp = op.input_zero_point, op.kernel_zero_point
    acc_t = element_type(op.result)
    product_t = _product_type(acc_t)
    batch, oy, ox, _ = indices[0]
    out_channels = [i[3] for i in indices]
    h_lo, h_hi, h_base = transposed_window(b, oy, sh, top, in_h, kh)
    w_lo, w_hi, w_base = transposed_window(b, ox, sw, left, in_w, kw)

    def body(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        iy, ix, ic = taps
        fy = b.isub(h_base, b.imul(iy, sh))
        fx = b.isub(w_base, b.imul(ix, sw))
        x = _centred(b, k.at(op.data, [batch, iy, ix, ic]), product_t, izp)
        sums = []
        for oc, acc in zip(out_channels, accs, strict=True):
            w = _centred(b, k.at(op.weight, [oc, fy, fx, ic]), product_t, kzp)
            sums.append(b.add(acc, b.convert(b.mul(x, w), acc_t)))
        return sums

    unroll = reduction_unroll(channels, contiguous=True)
    inits = [b.const(0, acc_t)] * len(indices)
    bounds = [(h_lo, h_hi), (w_lo, w_hi), (0, channels)]
    return b.reduce(bounds, inits, body, unroll)


def dense(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    return dense_jammed(k, op, [index])[0]


def dense_jammed(
    k: FusedKernel, op: Operation, indices: Sequence[Sequence[Ix]]
) -> list[SSAValue]:
    """Elements of a dense at ``indices``, which differ in the unit only,
    computed by one reduction with one accumulator each."""
    assert isinstance(op, DenseOp)
    if k.features.dsp and (dsp := ops_nn_dsp.dense_jammed(k, op, indices)):
        return dsp
    b = k.b
    acc_t = element_type(op.result)
    product_t = _product_type(acc_t)
    izp, kzp = op.input_zero_point, op.kernel_zero_point
    batch = indices[0][0]
    units = [i[1] for i in indices]
    depth = shape_of(op.data)[1]

    def body(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        (d,) = taps
        sums = []
        for unit, acc in zip(units, accs, strict=True):
            x = _centred(b, k.at(op.data, [batch, d]), product_t, izp)
            w = _centred(b, k.at(op.weight, [unit, d]), product_t, kzp)
            sums.append(b.add(acc, b.convert(b.mul(x, w), acc_t)))
        return sums

    unroll = reduction_unroll(depth, contiguous=True)
    inits = [b.const(0, acc_t)] * len(indices)
    return b.reduce([(0, depth)], inits, body, unroll)


JAM = 4
"""Output elements per conv2d / dense reduction (``jam_factor``)."""


def jam_factor(op: Operation, extent: int) -> int:
    """How many consecutive output elements along the innermost axis one
    reduction of ``op`` computes (``JAMMED``), the innermost axis having
    ``extent`` elements: for a conv2d whose output channel is innermost
    (NHWC) and a dense (units), the largest divisor of ``extent`` up to
    ``JAM``, else 1. The neighbours share each input element (loaded and
    centred once for all of them) and their independent accumulations
    overlap (a float sum is a chain of dependent additions whose latency
    would bound the loop); every sum keeps its order, bit for bit."""
    if isinstance(op, Conv2DOp):
        _, _, c_axis = spatial_axes(op.data_layout)
        if c_axis != len(shape_of(op.result)) - 1:
            return 1
    elif not isinstance(op, (DenseOp, Conv2DTransposeOp)):
        return 1
    return max(j for j in range(1, JAM + 1) if extent % j == 0)


def rounding_divide(b: KernelBuilder, acc: SSAValue, count: Ix) -> SSAValue:
    """TFLite's integer average: ``acc > 0 ? (acc + n/2)/n : (acc - n/2)/n``
    with truncating division, on i32."""
    t = acc.type
    if isinstance(count, int):
        n, half = b.const(count, t), b.const(count // 2, t)
    else:
        n = b.index_to(count, t)
        half = b.emit(arith.DivSIOp(n, b.const(2, t)))
    positive = b.emit(arith.CmpiOp(acc, b.const(0, t), "sgt"))
    numerator = b.emit(arith.SelectOp(positive, b.add(acc, half), b.sub(acc, half)))
    return b.emit(arith.DivSIOp(numerator, n))


def average(
    b: KernelBuilder, total: SSAValue, count: Ix, result: Attribute
) -> SSAValue:
    """``total / count`` in the result type (f32 mean or TFLite rounding)."""
    if is_float(result):
        return b.emit(arith.DivfOp(total, b.index_to(count, total.type)))
    return b.convert(rounding_divide(b, total, count), result)


_F32_MAX = 3.4028234663852886e38
"""``FLT_MAX``: the bound TFLite's float max/min reductions start from."""


def _sum_type(t: Attribute) -> Attribute:
    return t if is_float(t) else i32


def _lowest(t: Attribute) -> float | int:
    if isinstance(t, IntegerType):
        return int_bounds(t)[0]
    return -math.inf


def _pool(
    k: FusedKernel, op: MaxPool2DOp | AvgPool2DOp, index: Sequence[Ix]
) -> SSAValue:
    b = k.b
    h_axis, w_axis, _ = spatial_axes(op.layout)
    data = shape_of(op.data)
    out = shape_of(op.result)
    ph, pw = op.pool_size
    sh, sw = op.strides
    top, left, _, _ = op.padding
    el = element_type(op.result)
    h_lo, h_hi, h_base = window_bounds(
        b, index[h_axis], out[h_axis], sh, 1, top, data[h_axis], ph
    )
    w_lo, w_hi, w_base = window_bounds(
        b, index[w_axis], out[w_axis], sw, 1, left, data[w_axis], pw
    )
    is_max = isinstance(op, MaxPool2DOp)
    acc_t = el if is_max else _sum_type(el)

    def body(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        th, tw = taps
        x_index = list(index)
        x_index[h_axis] = b.iadd(h_base, th)
        x_index[w_axis] = b.iadd(w_base, tw)
        x = k.at(op.data, x_index)
        if is_max:
            return [b.max(accs[0], x)]
        return [b.add(accs[0], b.convert(x, acc_t))]

    init = b.const(_lowest(el) if is_max else 0, acc_t)
    (acc,) = b.reduce([(h_lo, h_hi), (w_lo, w_hi)], [init], body)
    if is_max:
        return acc
    assert isinstance(op, AvgPool2DOp)
    if op.count_include_pad:
        count: Ix = ph * pw
    else:
        count = b.imul(b.isub(h_hi, h_lo), b.isub(w_hi, w_lo))
    return average(b, acc, count, el)


def max_pool2d(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, MaxPool2DOp)
    return _pool(k, op, index)


def avg_pool2d(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, AvgPool2DOp)
    return _pool(k, op, index)


def _reduce_over(
    k: FusedKernel,
    value: SSAValue,
    axes: Sequence[int],
    index: Sequence[Ix],
    acc_t: Attribute,
    kind: str = "sum",
) -> SSAValue:
    """Sum (or ``"max"``/``"min"``) of ``value`` over ``axes`` in ``acc_t``;
    ``index`` gives the other dimensions (its entries on ``axes`` are
    ignored). max/min start from the type's lowest/highest value (f32: the
    finite extremes, as TFLite's ``numeric_limits<float>::lowest()``)."""
    b = k.b
    shape = shape_of(value)
    combine = {"sum": b.add, "max": b.max, "min": b.min}[kind]
    if kind == "sum":
        init: float | int = 0
    elif isinstance(acc_t, IntegerType):
        init = int_bounds(acc_t)[0 if kind == "max" else 1]
    else:
        init = -_F32_MAX if kind == "max" else _F32_MAX

    def body(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        full = list(index)
        for axis, tap in zip(axes, taps, strict=True):
            full[axis] = tap
        return [combine(accs[0], b.convert(k.at(value, full), acc_t))]

    (total,) = b.reduce([(0, shape[a]) for a in axes], [b.const(init, acc_t)], body)
    return total


def _mean_over(
    k: FusedKernel,
    value: SSAValue,
    axes: Sequence[int],
    index: Sequence[Ix],
    result: Attribute,
) -> SSAValue:
    """Mean of ``value`` over ``axes``; ``index`` as ``_sum_over``."""
    total = _reduce_over(k, value, axes, index, _sum_type(element_type(value)))
    shape = shape_of(value)
    return average(k.b, total, math.prod(shape[a] for a in axes), result)


def global_avg_pool2d(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, GlobalAvgPool2DOp)
    h_axis, w_axis, _ = spatial_axes(op.layout)
    return _mean_over(k, op.data, (h_axis, w_axis), index, element_type(op.result))


def _reduced_index(op: ReduceOp, index: Sequence[Ix]) -> tuple[list[int], list[Ix]]:
    """The sorted reduction axes of a reduction and the operand index
    of a result element (entries on the axes to be filled by the loop)."""
    rank = len(shape_of(op.data))
    axes = sorted({a % rank for a in op.axis})
    if op.keepdims:
        return axes, list(index)
    rest = iter(index)
    return axes, [0 if d in axes else next(rest) for d in range(rank)]


def mean(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, MeanOp)
    axes, full = _reduced_index(op, index)
    return _mean_over(k, op.data, axes, full, element_type(op.result))


def sum_(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, SumOp)
    axes, full = _reduced_index(op, index)
    return _reduce_over(k, op.data, axes, full, element_type(op.result))


def max_(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, MaxOp)
    axes, full = _reduced_index(op, index)
    return _reduce_over(k, op.data, axes, full, element_type(op.result), "max")


def min_(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, MinOp)
    axes, full = _reduced_index(op, index)
    return _reduce_over(k, op.data, axes, full, element_type(op.result), "min")


def _arg_extremum(
    k: FusedKernel, op: Operation, index: Sequence[Ix], largest: bool
) -> SSAValue:
    """TFLite's ``ArgMinMax``: start from element 0, take an element when it
    compares strictly greater (smaller), so the first extreme wins."""
    assert isinstance(op, ArgReduceOp)
    b = k.b
    shape = shape_of(op.data)
    axis = op.axis % len(shape)
    full = list(index)
    full.insert(axis, 0)
    result_t = element_type(op.result)
    best = k.at(op.data, full)
    el = best.type

    def body(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
        at = list(full)
        at[axis] = taps[0]
        x = k.at(op.data, at)
        if is_float(el):
            better = b.emit(arith.CmpfOp(x, accs[0], "ogt" if largest else "olt"))
        else:
            better = b.emit(arith.CmpiOp(x, accs[0], "sgt" if largest else "slt"))
        position = b.index_to(taps[0], result_t)
        return [
            b.emit(arith.SelectOp(better, x, accs[0])),
            b.emit(arith.SelectOp(better, position, accs[1])),
        ]

    if shape[axis] == 1:
        return b.const(0, result_t)
    _, position = b.reduce([(1, shape[axis])], [best, b.const(0, result_t)], body)
    return position


def argmax(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    return _arg_extremum(k, op, index, largest=True)


def argmin(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    return _arg_extremum(k, op, index, largest=False)


class LowerNN(ElementPattern):
    """An element of a ``conv2d``, ``dense``, pooling or ``mean``: a
    reduction over its window in an ``scf.for`` nest with a scalar
    accumulator."""

    handlers: ClassVar[Mapping[str, Handler]] = MappingProxyType(
        {
            "relay.conv2d": conv2d,
            "relay.conv2d_transpose": conv2d_transpose,
            "relay.dense": dense,
            "relay.max_pool2d": max_pool2d,
            "relay.avg_pool2d": avg_pool2d,
            "relay.global_avg_pool2d": global_avg_pool2d,
            "relay.mean": mean,
            "relay.sum": sum_,
            "relay.max": max_,
            "relay.min": min_,
            "relay.argmax": argmax,
            "relay.argmin": argmin,
        }
    )


JAMMED: Mapping[str, JammedHandler] = MappingProxyType(
    {
        "relay.conv2d": conv2d_jammed,
        "relay.conv2d_transpose": conv2d_transpose_jammed,
        "relay.dense": dense_jammed,
    }
)
"""Anchors that compute several output elements in one reduction."""
