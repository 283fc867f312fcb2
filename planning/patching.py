"""Patch-based execution of a CNN's first stage: stripes and their rows.

This module keeps the row arithmetic (``split_rows``, a chain's
``Layer.input_rows`` / ``stripe_plan``) and the candidate record
``PatchChoice``; the stage graph, its cost and the choice of depth and
stripes are ``patch_graph``'s, which generalises the chain below.

Plain Python, no IR (``patch-stage`` extracts the stage and rewrites it). A
*stage* is a chain of layers from a model input; a layer is one kernel
after fusion (a convolution or pooling with its elementwise epilogue, or a
run of elementwise ops) and maps output rows to input rows as a window:
output row ``r`` reads input rows ``r * stride - pad_top`` ...
``+ extent - 1`` (``extent`` = the dilated kernel height; 1, 1, 0 for an
elementwise layer).

Patching computes the stage's output in ``n`` horizontal stripes (a grid of
``n x 1`` tiles: for NHWC with batch 1 a stripe of rows is contiguous). For
each stripe the rows every layer needs are found backwards from the
stripe's output rows (the receptive field); rows two stripes both need are
computed twice (the recomputed halo), and a layer pads only at the true
borders of its input. MCUNetV2 (Lin et al., 2021) chooses the same way:
the stage depth and tile count with the lowest peak memory whose extra
compute stays within a budget.

The peak is estimated from the layer sizes (the planner later reaches the
liveness bound of the real graph; the pass reports the planned figure):
while stripe ``j`` runs, its input rows (a copy: ``relay.strided_slice``),
one layer's input and output stripe, and the outputs of stripes ``< j`` are
live; then the ``relay.concatenate`` of the stripes (inputs and output);
then the rest of the model as before (``rest_peak``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    """One kernel of a stage, as a window over rows."""

    extent: int
    """Rows of input one output row reads ((kernel - 1) * dilation + 1)."""
    stride: int
    pad_top: int
    pad_bottom: int
    in_rows: int
    out_rows: int
    in_row_bytes: int
    """Bytes of one input row (W * C * element size)."""
    out_row_bytes: int
    macs_per_row: int
    """Multiply-accumulates (window reads for pooling) per output row."""

    def input_rows(self, lo: int, hi: int) -> tuple[int, int, int, int]:
        """The input rows output rows ``[lo, hi)`` read, clipped to the
        input, and the padding rows above and below them:
        ``(first, end, pad_top, pad_bottom)``."""
        first = lo * self.stride - self.pad_top
        end = (hi - 1) * self.stride - self.pad_top + self.extent
        return (
            max(first, 0),
            min(end, self.in_rows),
            max(-first, 0),
            max(end - self.in_rows, 0),
        )


@dataclass(frozen=True)
class StripeLayer:
    """What one layer computes for one stripe."""

    out_lo: int
    out_hi: int
    in_lo: int
    in_hi: int
    pad_top: int
    pad_bottom: int


def split_rows(rows: int, stripes: int) -> list[tuple[int, int]]:
    """``rows`` cut into ``stripes`` runs differing by at most one row, the
    longer ones first."""
    base, extra = divmod(rows, stripes)
    bounds: list[tuple[int, int]] = []
    lo = 0
    for j in range(stripes):
        hi = lo + base + (1 if j < extra else 0)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def stripe_plan(layers: Sequence[Layer], lo: int, hi: int) -> list[StripeLayer]:
    """Per layer (first to last) the rows it computes and reads when the
    stage's output rows ``[lo, hi)`` are wanted."""
    plan: list[StripeLayer] = []
    for layer in reversed(layers):
        first, end, top, bottom = layer.input_rows(lo, hi)
        plan.append(StripeLayer(lo, hi, first, end, top, bottom))
        lo, hi = first, end
    plan.reverse()
    return plan


@dataclass(frozen=True)
class PatchChoice:
    """A candidate: the first ``depth`` layers in ``stripes`` row stripes."""

    depth: int
    stripes: int
    peak: int
    """Estimated peak of the whole model, patched."""
    stage_peak: int
    macs: int
    """Multiply-accumulates of the patched stage."""
    extra_macs: int
    """``macs`` minus the stage's unpatched MACs (the recomputed halos)."""
    cols: int = 1
    """Columns of tiles (a grid of ``stripes`` x ``cols``; 1: row stripes)."""
    instructions: int = 0
    """Estimated Cortex-M instructions of the stage so computed
    (``patch_speed``)."""
    extra_instructions: int = 0
    """``instructions`` minus the stage's unpatched estimate (the halos'
    MACs and elements, the calls per tile, the copies)."""
