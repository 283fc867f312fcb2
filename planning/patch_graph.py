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
workspace, and the concatenation of the stripes at the end. The tiles
read the input top down, so the rows above those a row of tiles reads are
consumed: its values and the outputs done may lie on them
(``usmp_overlap.dead_overlaps``, issue 31 item 2), and with the input in
the workspace a row of tiles costs the input plus what does not fit on its
consumed rows.

Candidates are ranked by the estimated peak of the model, then, with the
input in the workspace, by the stage's own peak: the rest of the model is
estimated without the planner's overlaps, which shrink it most (a
MobileNet's depthwise and 1x1 convolutions), so of two grids it ties the
one with the smaller stage is the better bet there (VWW int8: 31,328 B
instead of 33,024); then by the estimated Cortex-M instructions and the
extra MACs (within the budget either way). With the input outside, the
stage's peak does not decide the planned bytes (MobileNetV2: a 4x4 grid of
lower stage peak planned the same 251,184 B as 4x2, at +9.3% MACs instead
of +5.9%).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    out_cols: int = 1
    """Columns of its output (1: the node is only split into rows)."""
    col_extent: int = 1
    col_stride: int = 1
    pad_left: int = 0
    in_cols: int = 0
    """Columns of the window's input (0: columns map to themselves)."""
    col_local: bool = True
    """Whether output column ``c`` reads only column ``c`` (or, a window,
    its window) of its inputs (false: a concatenation along W, an operand
    varying along W; such a stage is split into rows only)."""
    channels: int = 0
    """Channels of its output (the elements of a pixel)."""
    kind: str = "elementwise"
    """Its kernel's kind in ``patch_speed``'s cost model."""

    @property
    def window(self) -> bool:
        return self.in_rows > 0

    def reads(self, lo: int, hi: int) -> tuple[int, int, int, int]:
        """Rows ``(first, end, pad_top, pad_bottom)`` of each input that
        output rows ``[lo, hi)`` read (clipped to the input; the padding
        rows above and below)."""
        if not self.window:
            return lo, hi, 0, 0
        return _window_reads(
            lo, hi, self.stride, self.pad_top, self.extent, self.in_rows
        )

    def reads_cols(self, lo: int, hi: int) -> tuple[int, int, int, int]:
        """``reads`` for columns: ``(first, end, pad_left, pad_right)``."""
        if not self.in_cols:
            return lo, hi, 0, 0
        return _window_reads(
            lo, hi, self.col_stride, self.pad_left, self.col_extent, self.in_cols
        )


def _window_reads(
    lo: int, hi: int, stride: int, pad: int, extent: int, size: int
) -> tuple[int, int, int, int]:
    """The input range ``[first, end)`` of a window over one dimension that
    output ``[lo, hi)`` reads, clipped to the input's ``size``, and the
    padding before and after it."""
    first = lo * stride - pad
    end = (hi - 1) * stride - pad + extent
    return max(first, 0), min(end, size), max(-first, 0), max(end - size, 0)


Rows = tuple[int, int]


def stripe_rows(nodes: Sequence[Node], out: int, lo: int, hi: int) -> list[Rows | None]:
    """The rows each node up to ``out`` computes when ``out``'s rows
    ``[lo, hi)`` are wanted (the hull of its consumers' reads; None for a
    node that does not feed ``out``); node 0's: the input rows read."""
    return _hulls(nodes, out, lo, hi, Node.reads)


def stripe_cols(nodes: Sequence[Node], out: int, lo: int, hi: int) -> list[Rows | None]:
    """``stripe_rows`` for columns: the columns each node computes when
    ``out``'s columns ``[lo, hi)`` are wanted (a tile of a 2-D grid is the
    rows of ``stripe_rows`` times these columns: the windows are separable)."""
    return _hulls(nodes, out, lo, hi, Node.reads_cols)


def _hulls(
    nodes: Sequence[Node],
    out: int,
    lo: int,
    hi: int,
    reads: Callable[[Node, int, int], tuple[int, int, int, int]],
) -> list[Rows | None]:
    rows: list[Rows | None] = [None] * (out + 1)
    rows[out] = (lo, hi)
    for i in range(out, 0, -1):
        mine = rows[i]
        if mine is None:
            continue
        first, end, _, _ = reads(nodes[i], *mine)
        for j in nodes[i].inputs:
            had = rows[j]
            rows[j] = (
                (first, end) if had is None else (min(had[0], first), max(had[1], end))
            )
    return rows


def plan_error(
    nodes: Sequence[Node], out: int, stripes: int, cols: int = 1
) -> str | None:
    """Why a grid of ``stripes`` x ``cols`` tiles of the stage ending at
    node ``out`` cannot be built (a window whose tile reads only padding,
    or whose padded rows or columns do not give its own, a node that is not
    column-local in a grid of several columns), or None."""
    return rows_error(nodes, out, stripes) or cols_error(nodes, out, cols)


def rows_error(nodes: Sequence[Node], out: int, stripes: int) -> str | None:
    """``plan_error``'s rows part."""
    for lo, hi in split_rows(nodes[out].out_rows, stripes):
        error = _window_error(nodes, stripe_rows(nodes, out, lo, hi), "rows", out)
        if error:
            return error
    return None


def cols_error(nodes: Sequence[Node], out: int, cols: int) -> str | None:
    """``plan_error``'s columns part."""
    if cols <= 1:
        return None
    for i in range(1, out + 1):
        if not nodes[i].col_local:
            return f"node {i} is not computable column by column"
    for lo, hi in split_rows(nodes[out].out_cols, cols):
        error = _window_error(nodes, stripe_cols(nodes, out, lo, hi), "cols", out)
        if error:
            return error
    return None


def _window_error(
    nodes: Sequence[Node], ranges: Sequence[Rows | None], what: str, out: int
) -> str | None:
    for i in range(1, out + 1):
        node, mine = nodes[i], ranges[i]
        if what == "rows":
            if mine is None or not node.window:
                continue
            first, end, top, bottom = node.reads(*mine)
            extent, stride = node.extent, node.stride
        else:
            if mine is None or not node.in_cols:
                continue
            first, end, top, bottom = node.reads_cols(*mine)
            extent, stride = node.col_extent, node.col_stride
        padded = end - first + top + bottom
        if end - first < 1 or padded < extent:
            return f"{what} {mine[0]}..{mine[1] - 1} of node {i} read only padding"
        if (padded - extent) // stride + 1 != mine[1] - mine[0]:
            return f"{what} {mine[0]}..{mine[1] - 1} of node {i} misalign"
    return None


def stage_macs(nodes: Sequence[Node], out: int) -> int:
    """MACs of the stage ending at ``out``, unpatched."""
    return sum(n.out_rows * n.macs_per_row for n in nodes[1 : out + 1])


def stage_cost(
    nodes: Sequence[Node],
    out: int,
    stripes: int,
    *,
    input_bytes: int = 0,
    cols: int = 1,
) -> tuple[int, int]:
    """(estimated peak, MACs) of the stage ending at node ``out`` computed
    in a grid of ``stripes`` x ``cols`` tiles, row by row of tiles;
    ``input_bytes``: the model input's bytes when it is in the workspace
    (live until the last tile has read it)."""
    cost = grid_cost(
        nodes, out, tile_plans(nodes, out, stripes), tile_plans(nodes, out, cols, True)
    )
    return cost.peak(input_bytes), cost.macs


@dataclass(frozen=True)
class Plan:
    """Rows (or columns) of tiles of a stage's output: each one's output
    range and each node's rows (columns) in it (0: a node that does not
    feed the output), and each node's total over them."""

    spans: list[tuple[int, int]]
    counts: list[tuple[int, ...]]
    sums: tuple[int, ...]
    firsts: tuple[int | None, ...]
    """Per range, the first row (column) of the stage input it reads (None:
    it reads none)."""

    def __len__(self) -> int:
        return len(self.spans)


def tile_plans(nodes: Sequence[Node], out: int, count: int, cols: bool = False) -> Plan:
    """The ranges of every node for ``count`` rows (``cols``: columns) of
    tiles of node ``out``'s output."""
    size = nodes[out].out_cols if cols else nodes[out].out_rows
    hulls = stripe_cols if cols else stripe_rows
    spans = split_rows(size, count)
    ranges = [hulls(nodes, out, lo, hi) for lo, hi in spans]
    counts = [_counts(r) for r in ranges]
    return Plan(
        spans,
        counts,
        tuple(map(sum, zip(*counts, strict=True))),
        tuple(None if r[0] is None else r[0][0] for r in ranges),
    )


@dataclass(frozen=True)
class GridCost:
    """What a grid of tiles of a stage computes and holds."""

    in_bands: tuple[tuple[int, int | None], ...]
    """Per row of tiles, the most bytes live while its tiles are computed
    (and, with several columns, while they are joined along W), the outputs
    done before it included (the input added by ``peak``), and the bytes of
    the stage input above the rows still to be read (consumed; None: no
    later tile reads it, all of it is)."""
    join_peak: int
    macs: int
    pixels: tuple[int, ...]
    """Per node, the pixels (rows x columns) it computes over all tiles."""
    tiles: int

    def peak(self, input_bytes: int = 0) -> int:
        """The estimated peak with the stage input's ``input_bytes`` in the
        workspace (0: outside): live until the last row of tiles has read
        it, the rest may lie on its consumed rows (``dead_overlaps``)."""
        levels = (
            live
            if not input_bytes
            else input_bytes + max(live - (input_bytes if gone is None else gone), 0)
            for live, gone in self.in_bands
        )
        return max(self.join_peak, *levels)


def grid_cost(
    nodes: Sequence[Node],
    out: int,
    row_plan: Plan,
    col_plan: Plan,
    bands: dict[tuple[tuple[int, ...], int], int] | None = None,
) -> GridCost:
    """The cost of the grid ``row_plan`` x ``col_plan`` (``tile_plans``):
    per tile, row by row of tiles, the values live at each kernel step and
    the stage's output done so far; the joins (each row of tiles along W
    when there are several columns, then the rows: two copies of the
    output at most); the MACs and pixels (separable: a node's rows over
    the rows of tiles times its columns over the columns of tiles). Tiles
    with the same rows and columns per node hold the same bytes: each such
    class is counted once (``bands``: those of earlier calls with the same
    ``col_plan``)."""
    last_step = [n.step for n in nodes[: out + 1]]
    for i in range(1, out + 1):
        for j in nodes[i].inputs:
            last_step[j] = max(last_step[j], nodes[i].step)
    first_step = nodes[1].step
    span = nodes[out].step - first_step + 1
    held = [
        i
        for i in range(out + 1)
        if not (i and last_step[i] == nodes[i].step and i != out)
    ]  # the others are used only inside their own kernel
    out_bytes = nodes[out].out_rows * nodes[out].row_bytes
    join_peak = 2 * out_bytes
    in_bands: list[tuple[int, int | None]] = []
    done = 0
    counts_r = row_plan.counts
    counts_c = col_plan.counts
    unit = nodes[out].row_bytes // max(nodes[out].out_cols, 1)
    widths = [chi - clo for clo, chi in col_plan.spans]

    def top(b: int, k: int) -> int:
        """The most bytes live at a step of tile (b, k), without the output
        done before it."""
        live = [0] * span
        for i in held:
            size = counts_r[b][i] * counts_c[k][i] * nodes[i].row_bytes
            size //= nodes[i].out_cols
            if not size:
                continue
            own = nodes[i].step if i else first_step - 1
            for st in range(max(own, first_step), last_step[i] + 1):
                live[st - first_step] += size
        return max(live)

    # a row of tiles with the same rows per node and height holds the same
    # bytes (with the same columns: ``bands``, kept across calls by choose)
    bands = {} if bands is None else bands
    for b, (lo, hi) in enumerate(row_plan.spans):
        key = (counts_r[b], hi - lo)
        if key not in bands:
            most = before = 0
            for k, width in enumerate(widths):
                most = max(most, before + top(b, k))
                before += (hi - lo) * width * unit
            bands[key] = most
        first = row_plan.firsts[b]
        if len(col_plan) > 1:
            # a tile's input is a copy of its rows and columns, from the
            # whole input (not a view of its rows): none of it is consumed
            # before the last tile (``usmp_overlap.dead_overlaps``)
            consumed: int | None = 0
        else:
            consumed = None if first is None else first * nodes[0].row_bytes
        in_bands.append((done + bands[key], consumed))
        done += (hi - lo) * nodes[out].row_bytes
        if len(col_plan) > 1:  # the row of tiles joined along W: a copy of it
            in_bands.append((done + (hi - lo) * nodes[out].row_bytes, consumed))
    pixels = tuple(r * c for r, c in zip(row_plan.sums, col_plan.sums, strict=True))
    macs = sum(
        pixels[i] * nodes[i].macs_per_row // nodes[i].out_cols
        for i in range(1, out + 1)
    )
    return GridCost(
        tuple(in_bands), join_peak, macs, pixels, len(row_plan) * len(col_plan)
    )


def _counts(ranges: Sequence[Rows | None]) -> tuple[int, ...]:
    return tuple(0 if r is None else r[1] - r[0] for r in ranges)


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
    cols: int = 0,
) -> tuple[PatchChoice, list[PatchChoice]]:
    """The unpatched figures (depth 0, one tile) and every candidate
    within ``budget_macs`` extra MACs, best first: lowest peak, then (the
    input in the workspace) lowest stage peak (module note), then fewest
    estimated Cortex-M instructions (``patch_speed``: the recomputed MACs
    and the per-tile overhead), then fewest extra MACs, fewer tiles,
    shallower. Depth ``d`` ends the stage at node ``cuts[d - 1]`` (a node
    whose output is the only stage value the rest of the model reads);
    ``rest_peak[d]`` is the model's estimated peak after it,
    ``unpatched_peak`` the model's. ``depth`` / ``stripes`` (rows of
    tiles) / ``cols`` (columns of tiles) > 0 fix that dimension of the
    search."""
    from usmp.planning.patch_speed import grid_instructions

    base = PatchChoice(0, 1, unpatched_peak, unpatched_peak, 0, 0)
    found: list[PatchChoice] = []
    depths = [depth] if depth else range(1, len(cuts) + 1)
    for d in depths:
        out = cuts[d - 1]
        plain = stage_macs(nodes, out)
        whole = tile_plans(nodes, out, 1)
        whole_cols = tile_plans(nodes, out, 1, True)
        plain_instructions = grid_instructions(
            nodes, out, grid_cost(nodes, out, whole, whole_cols), whole, whole_cols
        )
        rows = nodes[out].out_rows
        width = nodes[out].out_cols
        row_plans: dict[int, Plan | None] = {}
        empty = 0
        lowest = 2**63
        for c in [cols] if cols else range(1, width + 1):
            if c > width or cols_error(nodes, out, c) is not None:
                continue
            col_plan = tile_plans(nodes, out, c, True)
            bands: dict[tuple[tuple[int, ...], int], int] = {}
            counts = [stripes] if stripes else range(1 if c > 1 else 2, rows + 1)
            over = 0
            within = False  # a grid of c columns lowers this depth's best peak
            for n in counts:
                if n > rows or n * c < 2:
                    continue
                if n not in row_plans:
                    error = rows_error(nodes, out, n)
                    row_plans[n] = None if error else tile_plans(nodes, out, n)
                row_plan = row_plans[n]
                if row_plan is None:
                    continue
                cost = grid_cost(nodes, out, row_plan, col_plan, bands)
                if cost.macs - plain > budget_macs:
                    over += 1
                    if over >= 4:  # recomputation grows with the tiles
                        break
                    continue
                over = 0
                peak = cost.peak(input_bytes)
                within = within or peak < lowest
                lowest = min(lowest, peak)
                instructions = grid_instructions(nodes, out, cost, row_plan, col_plan)
                found.append(
                    PatchChoice(
                        d,
                        n,
                        max(cost.peak(input_bytes), rest_peak[d]),
                        cost.peak(input_bytes),
                        cost.macs,
                        cost.macs - plain,
                        cols=c,
                        instructions=instructions,
                        extra_instructions=instructions - plain_instructions,
                    )
                )
            empty = 0 if within else empty + 1
            if empty >= 2:  # more columns recompute more for no lower peak
                break
    found.sort(
        key=lambda c: (
            c.peak,
            c.stage_peak if input_bytes else 0,
            c.extra_instructions,
            c.extra_macs,
            c.stripes * c.cols,
            c.depth,
        )
    )
    return base, found
