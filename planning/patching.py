"""Patch-based execution of a CNN's first stage: the choice of depth and grid.

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


def plan_error(layers: Sequence[Layer], stripes: int) -> str | None:
    """Why ``stripes`` stripes of ``layers`` cannot be built (a stripe whose
    rows of some layer read only padding, or whose padded rows do not give
    its rows), or None."""
    for lo, hi in split_rows(layers[-1].out_rows, stripes):
        for i, (layer, part) in enumerate(
            zip(layers, stripe_plan(layers, lo, hi), strict=True)
        ):
            rows = part.in_hi - part.in_lo
            padded = rows + part.pad_top + part.pad_bottom
            if rows < 1 or padded < layer.extent:
                return (
                    f"rows {part.out_lo}..{part.out_hi - 1} of layer {i + 1} read "
                    "only padding"
                )
            if (padded - layer.extent) // layer.stride + 1 != part.out_hi - part.out_lo:
                return (
                    f"rows {part.out_lo}..{part.out_hi - 1} of layer {i + 1} misalign"
                )
    return None


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


def stage_cost(
    layers: Sequence[Layer], stripes: int, *, input_bytes: int = 0
) -> tuple[int, int]:
    """(estimated peak, MACs) of the stage computed in ``stripes`` stripes;
    ``input_bytes``: the model input's bytes when it is in the workspace
    (live until the last stripe has read it)."""
    last = layers[-1]
    out_bytes = last.out_rows * last.out_row_bytes
    peak = 2 * out_bytes if stripes > 1 else 0
    macs = 0
    done = 0
    for lo, hi in split_rows(last.out_rows, stripes):
        plan = stripe_plan(layers, lo, hi)
        first = plan[0]
        copied = (first.in_hi - first.in_lo) * layers[0].in_row_bytes
        if stripes > 1:
            peak = max(peak, input_bytes + copied + done)
            reading = copied
        else:
            reading = input_bytes
        for layer, part in zip(layers, plan, strict=True):
            rows = part.out_hi - part.out_lo
            written = rows * layer.out_row_bytes
            live = reading + written + done + (input_bytes if stripes > 1 else 0)
            peak = max(peak, live)
            macs += rows * layer.macs_per_row
            reading = written
        done += (hi - lo) * last.out_row_bytes
    return peak, macs


def choose(
    layers: Sequence[Layer],
    rest_peak: Sequence[int],
    unpatched_peak: int,
    budget_macs: int,
    *,
    input_bytes: int = 0,
    depth: int = 0,
    stripes: int = 0,
) -> tuple[PatchChoice, list[PatchChoice]]:
    """The unpatched figures (depth 0, one stripe) and every candidate
    within ``budget_macs`` extra MACs, best first: lowest peak, then fewest
    extra MACs, fewer stripes, shallower.

    ``rest_peak[d]``: the model's estimated peak over the kernels after the
    first ``d`` layers (unchanged by patching them); ``unpatched_peak``: the
    model's. ``depth`` / ``stripes`` > 0 fix that dimension of the search."""
    base = PatchChoice(0, 1, unpatched_peak, unpatched_peak, 0, 0)
    found: list[PatchChoice] = []
    depths = [depth] if depth else range(1, len(layers) + 1)
    for d in depths:
        stage = layers[:d]
        plain = sum(x.out_rows * x.macs_per_row for x in stage)
        rows = stage[-1].out_rows
        counts = [stripes] if stripes else range(2, rows + 1)
        for n in counts:
            if n > rows:
                continue
            if plan_error(stage, n) is not None:
                continue
            peak, macs = stage_cost(stage, n, input_bytes=input_bytes)
            if macs - plain > budget_macs:
                continue
            found.append(
                PatchChoice(d, n, max(peak, rest_peak[d]), peak, macs, macs - plain)
            )
    found.sort(key=lambda c: (c.peak, c.extra_macs, c.stripes, c.depth))
    return base, found
