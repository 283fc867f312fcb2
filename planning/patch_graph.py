"""Patch-based execution of a stage that is a graph: residual blocks and
concatenations (MCUNetV2 through inverted bottlenecks).

Plain Python, no IR. ``patching.py`` models a stage as a chain of layers;
here a stage is a DAG of *nodes* in topological order, node 0 the stage
input. A node maps its output rows to the rows of each of its inputs: a
window (a convolution or pooling: output row ``r`` reads input rows
``r * stride - pad_top`` ... ``+ extent - 1``) or the identity (elementwise
ops, an ADD of two branches, a CONCATENATION along channels). A residual
block is the graph ``x -> expand -> depthwise -> project -> add(x, .)``.

For a stripe of the stage output's rows the rows each node computes are
found backwards: a node computes the hull of the rows its consumers read
(the skip branch of a residual block reads rows ``[lo, hi)`` of ``x``, the
conv branch ``[lo - halo, hi + halo)``; ``x``'s stripe holds the hull and the
skip branch reads a slice of it). A window pads only at the true borders of
its input. So halos are per branch: each consumer reads exactly its own
receptive field.

The estimate of the peak counts, per kernel step (``step``: the kernel a
node is fused into, as ``fuse-ops`` will group them), the stripe values
live at that step (a value fused into its only kernel counts nothing), the
stripes of the output done so far, the model input when it is in the
workspace, and the concatenation of the stripes at the end. The stripes
read the input top down, so the rows above those a stripe reads are
consumed: the stripe's values and the outputs done may lie on them
(``usmp_overlap.dead_overlaps``, issue 31 item 2), and with the input in
the workspace a stripe costs the input plus what does not fit on its
consumed rows.

Candidates are ranked by the estimated peak of the model, then by the
stage's own peak: the rest of the model is estimated without the
planner's overlaps, which shrink it most (a MobileNet's depthwise and 1x1
convolutions), so of two grids it ties the one with the smaller stage is
the better bet; then by fewer extra MACs (within the budget either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from usmp.planning.patching import PatchChoice, split_rows


@dataclass(frozen=True)
class Node:
    """One op of a stage graph (node 0: the stage input, no inputs)."""

    inputs: tuple[int, ...]
    """Indices of the nodes it reads (all before it)."""
    out_rows: int
    row_bytes: int
    """Bytes of one output row (0 if fused into its only consumers' kernel)."""
    step: int
    """The kernel it is fused into (increasing along the stage)."""
    extent: int = 1
    stride: int = 1
    pad_top: int = 0
    in_rows: int = 0
    """Rows of the window's input (0: the identity, not a window)."""
    macs_per_row: int = 0

    @property
    def window(self) -> bool:
        return self.in_rows > 0

    def reads(self, lo: int, hi: int) -> tuple[int, int, int, int]:
        """Rows ``(first, end, pad_top, pad_bottom)`` of each input that
        output rows ``[lo, hi)`` read (clipped to the input; the padding
        rows above and below)."""
        if not self.window:
            return lo, hi, 0, 0
        first = lo * self.stride - self.pad_top
        end = (hi - 1) * self.stride - self.pad_top + self.extent
        return (
            max(first, 0),
            min(end, self.in_rows),
            max(-first, 0),
            max(end - self.in_rows, 0),
        )


Rows = tuple[int, int]


def stripe_rows(nodes: Sequence[Node], out: int, lo: int, hi: int) -> list[Rows | None]:
    """The rows each node up to ``out`` computes when ``out``'s rows
    ``[lo, hi)`` are wanted (the hull of its consumers' reads; None for a
    node that does not feed ``out``); node 0's: the input rows read."""
    rows: list[Rows | None] = [None] * (out + 1)
    rows[out] = (lo, hi)
    for i in range(out, 0, -1):
        mine = rows[i]
        if mine is None:
            continue
        first, end, _, _ = nodes[i].reads(*mine)
        for j in nodes[i].inputs:
            had = rows[j]
            rows[j] = (
                (first, end) if had is None else (min(had[0], first), max(had[1], end))
            )
    return rows


def plan_error(nodes: Sequence[Node], out: int, stripes: int) -> str | None:
    """Why ``stripes`` stripes of the stage ending at node ``out`` cannot be
    built (a window whose stripe reads only padding, or whose padded rows do
    not give its rows), or None."""
    for lo, hi in split_rows(nodes[out].out_rows, stripes):
        rows = stripe_rows(nodes, out, lo, hi)
        for i in range(1, out + 1):
            node, mine = nodes[i], rows[i]
            if mine is None or not node.window:
                continue
            first, end, top, bottom = node.reads(*mine)
            padded = end - first + top + bottom
            if end - first < 1 or padded < node.extent:
                return f"rows {mine[0]}..{mine[1] - 1} of node {i} read only padding"
            if (padded - node.extent) // node.stride + 1 != mine[1] - mine[0]:
                return f"rows {mine[0]}..{mine[1] - 1} of node {i} misalign"
    return None


def stage_macs(nodes: Sequence[Node], out: int) -> int:
    """MACs of the stage ending at ``out``, unpatched."""
    return sum(n.out_rows * n.macs_per_row for n in nodes[1 : out + 1])


def stage_cost(
    nodes: Sequence[Node], out: int, stripes: int, *, input_bytes: int = 0
) -> tuple[int, int]:
    """(estimated peak, MACs) of the stage ending at node ``out`` computed
    in ``stripes`` stripes; ``input_bytes``: the model input's bytes when it
    is in the workspace (live until the last stripe has read it; the rows
    above those stripe ``j`` reads are consumed, and stripe ``j``'s values
    and the outputs done may go over them: ``_with_input``)."""
    last_step = [n.step for n in nodes[: out + 1]]
    for i in range(1, out + 1):
        for j in nodes[i].inputs:
            last_step[j] = max(last_step[j], nodes[i].step)
    first_step = nodes[1].step
    span = nodes[out].step - first_step + 1
    out_bytes = nodes[out].out_rows * nodes[out].row_bytes
    peak = 2 * out_bytes
    macs = 0
    done = 0
    for lo, hi in split_rows(nodes[out].out_rows, stripes):
        rows = stripe_rows(nodes, out, lo, hi)
        live = [0] * span
        for i in range(out + 1):
            mine = rows[i]
            if mine is None:
                continue
            count = mine[1] - mine[0]
            if i:
                macs += count * nodes[i].macs_per_row
            own = nodes[i].step if i else first_step - 1
            if i and last_step[i] == own and i != out:
                continue  # used only inside its own kernel
            size = count * nodes[i].row_bytes
            for s in range(max(own, first_step), last_step[i] + 1):
                live[s - first_step] += size
        peak = max(peak, _with_input(input_bytes, done + max(live), rows, nodes))
        done += (hi - lo) * nodes[out].row_bytes
    return peak, macs


def _with_input(
    input_bytes: int, others: int, rows: Sequence[Rows | None], nodes: Sequence[Node]
) -> int:
    """Bytes of the model input (``input_bytes``, 0 if outside the
    workspace) and ``others`` live beside it while a stripe reading the
    input ``rows[0]`` runs: the rows above the first it reads are consumed
    (stripes run top down), and the planner may put other values there
    (``usmp_overlap.dead_overlaps``)."""
    if not input_bytes:
        return others
    read = rows[0]
    consumed = read[0] * nodes[0].row_bytes if read is not None else input_bytes
    return input_bytes + max(others - consumed, 0)


def choose(
    nodes: Sequence[Node],
    cuts: Sequence[int],
    rest_peak: Sequence[int],
    unpatched_peak: int,
    budget_macs: int,
    *,
    input_bytes: int = 0,
    depth: int = 0,
    stripes: int = 0,
) -> tuple[PatchChoice, list[PatchChoice]]:
    """The unpatched figures (depth 0, one stripe) and every candidate
    within ``budget_macs`` extra MACs, best first: lowest peak, then lowest
    stage peak (module note), fewest extra MACs, fewer stripes, shallower.
    Depth ``d`` ends the stage at node ``cuts[d - 1]`` (a node whose output
    is the only stage value the rest of the model reads); ``rest_peak[d]``
    is the model's estimated peak after it, ``unpatched_peak`` the model's.
    ``depth`` / ``stripes`` > 0 fix that dimension of the search."""
    base = PatchChoice(0, 1, unpatched_peak, unpatched_peak, 0, 0)
    found: list[PatchChoice] = []
    depths = [depth] if depth else range(1, len(cuts) + 1)
    for d in depths:
        out = cuts[d - 1]
        plain = stage_macs(nodes, out)
        rows = nodes[out].out_rows
        counts = [stripes] if stripes else range(2, rows + 1)
        over = 0
        for n in counts:
            if n > rows:
                continue
            if plan_error(nodes, out, n) is not None:
                continue
            peak, macs = stage_cost(nodes, out, n, input_bytes=input_bytes)
            if macs - plain > budget_macs:
                over += 1
                if over >= 4:  # recomputation grows with the stripes
                    break
                continue
            over = 0
            found.append(
                PatchChoice(d, n, max(peak, rest_peak[d]), peak, macs, macs - plain)
            )
    found.sort(key=lambda c: (c.peak, c.stage_peak, c.extra_macs, c.stripes, c.depth))
    return base, found
