"""Convolution and pooling windows: which taps of a window lie inside the
input (``window_bounds``) and which outputs have their whole window inside
(``interior``, ``inside_tests``), shared by the portable kernels
(``ops_nn.py``) and the DSP ones (``ops_nn_dsp.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from usmp.lowering.loops import Ix, KernelBuilder


def window_bounds(
    b: KernelBuilder,
    o: Ix,
    extent: int,
    stride: int,
    dilation: int,
    before: int,
    size: int,
    window: int,
) -> tuple[Ix, Ix, Ix]:
    """``(lo, hi, base)``: window taps ``lo <= k < hi`` read input position
    ``base + k * dilation``, which lies in ``[0, size)``; ``o`` is the output
    position (``0 <= o < extent``)."""
    base = b.isub(b.imul(o, stride), before)
    lo: Ix = 0
    hi: Ix = window
    if before > 0:
        lo = b.imax(b.isub(before, b.imul(o, stride)), 0)
        if dilation > 1:
            lo = b.idiv(b.iadd(lo, dilation - 1), dilation)
    if (extent - 1) * stride - before + (window - 1) * dilation >= size:
        room = b.imax(b.isub(size, base), 0)
        if dilation > 1:
            room = b.idiv(b.iadd(room, dilation - 1), dilation)
        hi = b.imin(room, window)
    return lo, hi, base


def interior(
    extent: int, stride: int, dilation: int, before: int, size: int, window: int
) -> range:
    """The output positions whose whole window lies inside the input (where
    ``window_bounds`` is ``0, window``): an interval of ``range(extent)``."""
    first = max(-(-before // stride), 0)
    end = min((size - 1 + before - (window - 1) * dilation) // stride + 1, extent)
    return range(first, max(first, end))


def inside_tests(
    b: KernelBuilder, positions: Sequence[tuple[Ix, int, range]]
) -> list[SSAValue] | None:
    """Comparisons that hold exactly when every ``(o, extent, inner)`` has
    ``o`` in ``inner``: ``None`` when that is never the case, ``[]`` when
    always (no test needed)."""
    tests: list[SSAValue] = []
    for o, extent, inner in positions:
        if not inner:
            return None
        if isinstance(o, int):
            if o not in inner:
                return None
            continue
        if inner.start > 0:
            tests.append(b.icmp("sge", o, inner.start))
        if inner.stop < extent:
            tests.append(b.icmp("slt", o, inner.stop))
    return tests
