"""int8 convolutions, depthwise convolutions and dense layers with Arm's DSP
extension (``lower-ops{mcpu=cortex-m4}``; ``dsp.py`` for the helpers).

The loop nest over the output is the portable one (``prim_func.py``: one
element per iteration, ``ops_nn.JAM`` output channels or units per
reduction, the epilogue applied per element); only the reduction of the
jammed accumulators differs. Every byte is still read by a ``memref.load``
of the operator's buffers (the overlap analysis traces the same accesses),
from a flattened view (``memref.collapse_shape``), four consecutive bytes
packed into one word (``dsp.pack_s8x4``: one unaligned word read in C):

* **conv2d** (NHWC, OHWI, one group, int8 x int8 -> int32, weight zero point
  0, unit horizontal dilation): a window row's taps ``(kw, ic)`` are one
  contiguous run in the input and in each output channel's weights, read four
  at a time: the input word as two pairs with the input zero point
  subtracted lane by lane (``sxtab16`` of ``-zp``: bytes 0, 2 and 1, 3), each
  channel's weight word as the same two pairs (``sxtb16``), two ``smlad``
  per channel; the input pairs serve every jammed channel. When the weights
  are a constant (``FusedKernel.constant_value``) and the input channels a
  multiple of four, they are re-laid out at compile time (``interleave``:
  the jammed channels' words of one run position side by side, one pointer,
  no byte packing) and the parameter is dropped (``constant_args``);
  otherwise they are read in place and a run whose length is not a multiple
  of four ends with scalar taps. Outputs whose window lies inside the input
  get static tap bounds (short runs unrolled), the border keeps the clamped
  ones.
* **depthwise** conv2d (one channel per group, multiplier 1, four jammed
  channels): per tap, one word of four neighbouring channels of the input
  and of the weights; ``smlabb``/``smlatt`` multiply the lanes of each
  channel into its own accumulator (four per tap).
* **dense** (int8 x int8 -> int32, weight zero point 0): the depth run as in
  conv2d (weights re-laid out when constant and the depth a multiple of 4).

The reductions are loops (``_steps``: unrolled only up to ``UNROLL_TAPS``
steps): measured on the Cortex-M4 (``benchmarks/cortex_m.py``), gcc keeps a
rolled run's accumulators in registers, while unrolled runs spill them.
Input indices are the window's first element plus the tap's offset (one base
pointer in C), and each border column gets static tap bounds
(``_by_windows``).

Sums are of the same products as the portable kernels, in another order;
i32 addition wraps, so the results are the same bits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i8,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_ops import Conv2DOp, DenseOp
from usmp.dialects.relay_shapes import conv2d_weight_dims
from usmp.lowering import dsp
from usmp.lowering.kernel import FusedKernel, element_type, shape_of
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.windows import inside_tests, interior, window_bounds

QUAD = 4
"""Bytes per word: taps per pair of ``smlad``."""

UNROLL_TAPS = 4
"""A static reduction of at most this many (quad or scalar) steps is
unrolled; a longer one stays a loop (measured on the Cortex-M4: gcc keeps a
rolled run's accumulators in registers, an unrolled one spills them)."""


def _flat(k: FusedKernel, buffer: SSAValue) -> SSAValue:
    """A one-dimensional row-major view of an argument buffer (hoisted,
    shared)."""
    known = k.flat_views.get(buffer)
    if known is not None:
        return known
    t = buffer.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    size = 1
    for d in shape:
        size *= d
    if len(shape) == 1:
        return buffer
    reassociation = ArrayAttr(
        [ArrayAttr([IntegerAttr(i, i64) for i in range(len(shape))])]
    )
    op = memref.CollapseShapeOp.create(
        operands=[buffer],
        result_types=[MemRefType(t.get_element_type(), [size])],
        properties={"reassociation": reassociation},
    )
    view = k.b.hoist(op)
    k.flat_views[buffer] = view
    return view


def read_s8x4(b: KernelBuilder, flat: SSAValue, index: Ix) -> SSAValue:
    """The word of ``flat[index .. index + 3]`` (``dsp.pack_s8x4``)."""
    loads = [b.load(flat, [b.iadd(index, j)]) for j in range(QUAD)]
    return dsp.pack_s8x4(b, loads)


def _offset_pair(b: KernelBuilder, zero_point: int) -> SSAValue | None:
    """``-zero_point`` in both lanes of a pair (None for zero point 0)."""
    if zero_point == 0:
        return None
    lane = -zero_point & 0xFFFF
    return b.const(lane | lane << 16, i32)


def _pairs(
    b: KernelBuilder, word: SSAValue, offset: SSAValue | None
) -> tuple[SSAValue, SSAValue]:
    """Lanes (byte 0, byte 2) and (byte 1, byte 3) of ``word``, each plus
    ``offset`` (a pair) if given."""
    if offset is None:
        return dsp.call(b, "usmp_sxtb16", word), dsp.call(b, "usmp_sxtb16_ror8", word)
    return (
        dsp.call(b, "usmp_sxtab16", offset, word),
        dsp.call(b, "usmp_sxtab16_ror8", offset, word),
    )


def _steps(
    b: KernelBuilder,
    count: Ix,
    accs: Sequence[SSAValue],
    body: Callable[[Ix, Sequence[SSAValue]], Sequence[SSAValue]],
) -> list[SSAValue]:
    """``body(q, accs)`` for ``0 <= q < count``: unrolled when static and at
    most ``UNROLL_TAPS``, else an ``scf.for`` carrying the accumulators."""
    if isinstance(count, int) and count <= UNROLL_TAPS:
        for q in range(count):
            accs = body(q, accs)
        return list(accs)

    def step(iv: SSAValue, args: Sequence[SSAValue]) -> list[SSAValue]:
        return list(body(iv, args))

    return b.loop(0, count, step, accs)


class Rows:
    """The weights of the jammed outputs as rows of bytes: row ``j`` starts at
    ``starts[j]`` of a flat ``i8`` buffer (its run position ``r`` is at
    ``starts[j] + r``); a word is four loads packed (``read_s8x4``)."""

    def __init__(self, flat: SSAValue, starts: Sequence[Ix]):
        self.flat = flat
        self.starts = starts

    def word(self, b: KernelBuilder, j: int, r: Ix, q: Ix) -> SSAValue:
        del q
        return read_s8x4(b, self.flat, b.iadd(self.starts[j], r))

    def byte(self, b: KernelBuilder, j: int, r: Ix) -> SSAValue:
        return b.load(self.flat, [b.iadd(self.starts[j], r)])


class Interleaved:
    """The weights re-laid out at compile time as ``i32`` words, the jammed
    outputs' words of one run position next to each other: the word of
    output ``j`` at run word ``q`` is ``table[start + q * jam + j]`` (one
    pointer serves every output, no byte packing)."""

    def __init__(self, table: SSAValue, start: Ix, jam: int):
        self.table = table
        self.start = start
        self.jam = jam

    def word(self, b: KernelBuilder, j: int, r: Ix, q: Ix) -> SSAValue:
        del r
        return b.load(self.table, [b.iadd(self.start, b.iadd(b.imul(q, self.jam), j))])


def interleave(values: npt.NDArray[np.generic], jam: int) -> DenseIntOrFPElementsAttr:
    """``values[o, ..., d]`` (int8, the last axis a multiple of 4) as ``i32``
    words ``[o // jam, ..., d // 4, o % jam]`` (``Interleaved``), flat."""
    outputs, *middle, depth = values.shape
    words = np.ascontiguousarray(values, dtype=np.int8).view("<i4")
    words = words.reshape(outputs // jam, jam, *middle, depth // QUAD)
    words = np.moveaxis(words, 1, -1)
    flat = np.ascontiguousarray(words).reshape(-1)
    return DenseIntOrFPElementsAttr(
        TensorType(i32, [flat.size]), BytesAttr(flat.astype("<i4").tobytes())
    )


def widen_pairs(values: npt.NDArray[np.generic]) -> DenseIntOrFPElementsAttr:
    """``values[t, c]`` (int8, ``c`` a multiple of 4) as the 16-bit pairs
    ``sxtb16`` would make of each word of four channels: per tap and channel
    quad, the words (c, c + 2) and (c + 1, c + 3), flat ``i32``."""
    taps, channels = values.shape
    v = np.asarray(values, dtype=np.int64).reshape(taps, channels // QUAD, QUAD)
    low = (v[..., [0, 1]] & 0xFFFF) | ((v[..., [2, 3]] & 0xFFFF) << 16)
    words = low.astype(np.uint32).view("<i4").reshape(-1)
    return DenseIntOrFPElementsAttr(
        TensorType(i32, [words.size]), BytesAttr(words.astype("<i4").tobytes())
    )


def dot_run(
    b: KernelBuilder,
    x: SSAValue,
    x_at: Ix,
    weights: Rows | Interleaved,
    lo: Ix,
    hi: Ix,
    accs: Sequence[SSAValue],
    input_zero_point: int,
    lo_words: Ix | None = None,
) -> list[SSAValue]:
    """``accs[j] += sum((x[x_at + r] - zp) * weight_j(r))`` over ``lo <= r <
    hi``: four taps per step (the input pairs shared by every ``j``), then
    the ``< 4`` remaining taps one by one (``Rows`` only). ``lo_words`` is
    ``lo / 4`` when ``lo`` is a multiple of 4 given as a value."""
    offset = _offset_pair(b, input_zero_point)
    length = b.isub(hi, lo)
    quads = b.ishr(length, 2)  # / QUAD
    if lo_words is None:
        lo_words = lo // QUAD if isinstance(lo, int) else 0

    def quad(q: Ix, args: Sequence[SSAValue]) -> list[SSAValue]:
        r = b.iadd(lo, b.imul(q, QUAD))
        x_lo, x_hi = _pairs(b, read_s8x4(b, x, b.iadd(x_at, r)), offset)
        out = []
        for j, acc in enumerate(args):
            word = weights.word(b, j, r, b.iadd(lo_words, q))
            w_lo, w_hi = _pairs(b, word, None)
            acc = dsp.call(b, "usmp_smlad", x_lo, w_lo, acc)
            out.append(dsp.call(b, "usmp_smlad", x_hi, w_hi, acc))
        return out

    accs = _steps(b, quads, accs, quad)
    if isinstance(weights, Interleaved):  # whole words only
        return list(accs)
    rows = weights
    start = b.iadd(lo, b.imul(quads, QUAD))
    zp = b.const(input_zero_point, i32)

    def tap(t: Ix, args: Sequence[SSAValue]) -> list[SSAValue]:
        r = b.iadd(start, t)
        value = b.convert(b.load(x, [b.iadd(x_at, r)]), i32)
        if input_zero_point:
            value = b.sub(value, zp)
        out = []
        for j, acc in enumerate(args):
            w = b.convert(rows.byte(b, j, r), i32)
            out.append(b.add(acc, b.mul(value, w)))
        return out

    return _steps(b, b.isub(hi, start), accs, tap)


def _is_i8(value: SSAValue) -> bool:
    t = element_type(value)
    return isinstance(t, IntegerType) and t == i8


def _arguments(k: FusedKernel, *values: SSAValue) -> list[SSAValue] | None:
    """The buffers of ``values`` if all are function arguments (read by plain
    loads), else None."""
    buffers = [k.buffers.get(v) for v in values]
    if any(x is None for x in buffers):
        return None
    return [x for x in buffers if x is not None]


def conv2d_jammed(
    k: FusedKernel, op: Operation, indices: Sequence[Sequence[Ix]]
) -> list[SSAValue] | None:
    """The jammed conv2d elements at ``indices`` with DSP arithmetic, or None
    when this conv2d is not one the DSP kernels cover (module note)."""
    assert isinstance(op, Conv2DOp)
    if (
        op.data_layout != "NHWC"
        or not _is_i8(op.data)
        or not _is_i8(op.weight)
        or element_type(op.result) != i32
        or op.kernel_zero_point != 0
    ):
        return None
    buffers = _arguments(k, op.data, op.weight)
    if buffers is None:
        return None
    kh, kw, cg, cout = conv2d_weight_dims(shape_of(op.weight), op.kernel_layout)
    data = shape_of(op.data)
    if op.groups == 1 and op.kernel_layout == "OHWI" and op.dilation[1] == 1:
        if kw * cg < QUAD:
            return None
        return _conv2d(k, op, indices, buffers)
    if (
        op.groups == data[3] == cout
        and cg == 1
        and op.kernel_layout == "HWIO"
        and len(indices) == QUAD
    ):
        return _depthwise(k, op, indices, buffers)
    return None


MAX_BORDER_COLUMNS = 4
"""Output columns whose window crosses the left or right edge get their own
static tap bounds (unrolled runs) when there are at most this many."""

Bounds = tuple[Ix, Ix]
Reduction = Callable[[Bounds, Bounds], list[SSAValue]]


def _by_windows(
    k: FusedKernel, op: Conv2DOp, index: Sequence[Ix], count: int, reduction: Reduction
) -> list[SSAValue]:
    """``reduction(h_bounds, w_bounds)`` of the output at ``index``, with
    static bounds wherever they are known: the whole window inside the input
    (both static); the columns inside (W static, the rows clamped); each
    border column (``MAX_BORDER_COLUMNS`` at most: its own static W bounds);
    else both clamped. Chosen by ``scf.if`` on the output position (tests
    folded away where the shapes decide them)."""
    b = k.b
    data = shape_of(op.data)
    out = shape_of(op.result)
    kh, kw, _, _ = conv2d_weight_dims(shape_of(op.weight), op.kernel_layout)
    sh, sw = op.strides
    dh, dw = op.dilation
    top, left, _, _ = op.padding
    h_lo, h_hi, _ = window_bounds(b, index[1], out[1], sh, dh, top, data[1], kh)
    w_lo, w_hi, _ = window_bounds(b, index[2], out[2], sw, dw, left, data[2], kw)
    rows = interior(out[1], sh, dh, top, data[1], kh)
    columns = interior(out[2], sw, dw, left, data[2], kw)
    h_in = inside_tests(b, [(index[1], out[1], rows)])
    w_in = inside_tests(b, [(index[2], out[2], columns)])
    cases: list[tuple[list[SSAValue] | None, Callable[[], list[SSAValue]]]] = []
    if h_in is not None and w_in is not None:
        cases.append(([*h_in, *w_in], lambda: reduction((0, kh), (0, kw))))
    cases.append((w_in, lambda: reduction((h_lo, h_hi), (0, kw))))
    border = [c for c in range(out[2]) if c not in columns]
    if len(border) <= MAX_BORDER_COLUMNS:
        for c in border:
            lo, hi = _tap_range(c, sw, dw, left, data[2], kw)
            if isinstance(index[2], int):
                test = [] if index[2] == c else None
            else:
                test = [b.icmp("eq", index[2], c)]

            def column(lo: int = lo, hi: int = hi) -> list[SSAValue]:
                return reduction((h_lo, h_hi), (lo, hi))

            cases.append((test, column))

    def choose(
        rest: list[tuple[list[SSAValue] | None, Callable[[], list[SSAValue]]]],
    ) -> list[SSAValue]:
        for n, (tests, build) in enumerate(rest):
            if tests is None:
                continue
            if not tests:
                return build()
            return b.select_if_many(
                b.i1_and(tests),
                [i32] * count,
                build,
                lambda later=rest[n + 1 :]: choose(later),
            )
        return reduction((h_lo, h_hi), (w_lo, w_hi))

    return choose(cases)


def _tap_range(
    o: int, stride: int, dilation: int, before: int, size: int, window: int
) -> tuple[int, int]:
    """``window_bounds`` of output position ``o``, computed here."""
    base = o * stride - before
    lo = -(-max(before - o * stride, 0) // dilation)
    hi = min(window, -(-max(size - base, 0) // dilation))
    return lo, hi


def _corner(k: FusedKernel, op: Conv2DOp, index: Sequence[Ix]) -> Ix:
    """The flat index of the input element at the window's tap (0, 0) of the
    output at ``index``, channel 0 (possibly outside the input: only taps
    inside are read)."""
    b = k.b
    _, height, width, channels = shape_of(op.data)
    sh, sw = op.strides
    top, left, _, _ = op.padding
    row = b.iadd(b.imul(index[0], height), b.isub(b.imul(index[1], sh), top))
    column = b.isub(b.imul(index[2], sw), left)
    return b.imul(b.iadd(b.imul(row, width), column), channels)


def _conv2d(
    k: FusedKernel,
    op: Conv2DOp,
    indices: Sequence[Sequence[Ix]],
    buffers: Sequence[SSAValue],
) -> list[SSAValue]:
    b = k.b
    x = _flat(k, buffers[0])
    _, height, width, channels = shape_of(op.data)
    kh, kw, cg, _ = conv2d_weight_dims(shape_of(op.weight), op.kernel_layout)
    dh, _ = op.dilation
    index = indices[0]
    jam = len(indices)
    channels_out = [i[3] for i in indices]
    row = kw * cg
    window = _corner(k, op, index)
    values = k.constant_value(op.weight)
    table = w = None
    if values is not None and cg % QUAD == 0:
        table = k.table("weights_interleaved", interleave(values, jam))
    else:
        w = _flat(k, buffers[1])

    zero_point = op.input_zero_point
    inits = [b.const(0, i32)] * jam

    def reduction(bounds_h: Bounds, bounds_w: Bounds) -> list[SSAValue]:
        lo_r, hi_r = b.imul(bounds_w[0], cg), b.imul(bounds_w[1], cg)

        def window_row(th: Ix, accs: Sequence[SSAValue]) -> list[SSAValue]:
            x_at = b.iadd(window, b.imul(th, dh * width * channels))
            weights: Rows | Interleaved
            lo_words: Ix | None = None
            if table is not None:
                # word (oc0 / jam, th, q, j) of [O/jam][KH][KW*C/4][jam]
                words = row // QUAD
                start = b.iadd(
                    b.imul(channels_out[0], kh * words), b.imul(th, words * jam)
                )
                weights = Interleaved(table, start, jam)
                lo_words = b.imul(bounds_w[0], cg // QUAD)
            else:
                assert w is not None
                starts = [
                    b.imul(b.iadd(b.imul(oc, kh), th), row) for oc in channels_out
                ]
                weights = Rows(w, starts)
            return dot_run(b, x, x_at, weights, lo_r, hi_r, accs, zero_point, lo_words)

        lo, hi = bounds_h
        return _steps(
            b, b.isub(hi, lo), inits, lambda t, a: window_row(b.iadd(lo, t), a)
        )

    return _by_windows(k, op, index, jam, reduction)


def _depthwise(
    k: FusedKernel,
    op: Conv2DOp,
    indices: Sequence[Sequence[Ix]],
    buffers: Sequence[SSAValue],
) -> list[SSAValue]:
    b = k.b
    x = _flat(k, buffers[0])
    _, height, width, channels = shape_of(op.data)
    kh, kw, _, _ = conv2d_weight_dims(shape_of(op.weight), op.kernel_layout)
    dh, dw = op.dilation
    index = indices[0]
    channel = index[3]
    values = k.constant_value(op.weight)
    pairs = w = None
    if values is not None:
        pairs = k.table("weights_pairs", widen_pairs(values.reshape(kh * kw, -1)))
    else:
        w = _flat(k, buffers[1])
    offset = _offset_pair(b, op.input_zero_point)
    window = b.iadd(_corner(k, op, index), channel)

    def reduction(bounds_h: Bounds, bounds_w: Bounds) -> list[SSAValue]:
        inits = [b.const(0, i32)] * QUAD

        def tap(th: Ix, tw: Ix, accs: Sequence[SSAValue]) -> list[SSAValue]:
            # the window's first input element plus the tap's offset (a
            # constant when the taps are: one base pointer in C)
            x_at = b.iadd(
                window, b.imul(b.iadd(b.imul(th, dh * width), b.imul(tw, dw)), channels)
            )
            tap_index = b.iadd(b.imul(th, kw), tw)
            x_lo, x_hi = _pairs(b, read_s8x4(b, x, x_at), offset)
            if pairs is not None:  # channel / 4 * 2 words per channel quad
                at = b.iadd(b.imul(tap_index, channels // 2), b.ishr(channel, 1))
                w_lo = b.load(pairs, [at])
                w_hi = b.load(pairs, [b.iadd(at, 1)])
            else:
                assert w is not None
                w_at = b.iadd(b.imul(tap_index, channels), channel)
                w_lo, w_hi = _pairs(b, read_s8x4(b, w, w_at), None)
            a0, a1, a2, a3 = accs
            return [
                dsp.call(b, "usmp_smlabb", x_lo, w_lo, a0),
                dsp.call(b, "usmp_smlabb", x_hi, w_hi, a1),
                dsp.call(b, "usmp_smlatt", x_lo, w_lo, a2),
                dsp.call(b, "usmp_smlatt", x_hi, w_hi, a3),
            ]

        (hl, hh), (wl, wh) = bounds_h, bounds_w

        def window_row(t: Ix, accs: Sequence[SSAValue]) -> list[SSAValue]:
            th = b.iadd(hl, t)
            return _steps(
                b, b.isub(wh, wl), accs, lambda u, a: tap(th, b.iadd(wl, u), a)
            )

        return _steps(b, b.isub(hh, hl), inits, window_row)

    return _by_windows(k, op, index, QUAD, reduction)


def dense_jammed(
    k: FusedKernel, op: Operation, indices: Sequence[Sequence[Ix]]
) -> list[SSAValue] | None:
    """The jammed dense elements at ``indices`` with DSP arithmetic, or None
    (module note)."""
    assert isinstance(op, DenseOp)
    if (
        not _is_i8(op.data)
        or not _is_i8(op.weight)
        or element_type(op.result) != i32
        or op.kernel_zero_point != 0
    ):
        return None
    buffers = _arguments(k, op.data, op.weight)
    if buffers is None:
        return None
    b = k.b
    depth = shape_of(op.data)[1]
    if depth < QUAD:
        return None
    x = _flat(k, buffers[0])
    jam = len(indices)
    batch = indices[0][0]
    x_at = b.imul(batch, depth)
    values = k.constant_value(op.weight)
    weights: Rows | Interleaved
    if values is not None and depth % QUAD == 0:
        table = k.table("weights_interleaved", interleave(values, jam))
        weights = Interleaved(table, b.imul(indices[0][1], depth // QUAD), jam)
    else:
        w = _flat(k, buffers[1])
        weights = Rows(w, [b.imul(i[1], depth) for i in indices])
    inits = [b.const(0, i32)] * jam
    return dot_run(b, x, x_at, weights, 0, depth, inits, op.input_zero_point)
