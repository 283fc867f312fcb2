"""The speed term of patching's cost model: Cortex-M instructions per kernel.

Plain Python, no IR. A kernel call costs about ::

    instructions = a * MACs + b * output elements + c

per kind of kernel (a convolution, a depthwise convolution, pooling, an
elementwise kernel such as a residual ADD, a copy such as a
``relay.strided_slice`` of a tile or the ``relay.concatenate`` that joins
the tiles): ``a`` the inner loop, ``b`` the per-output epilogue (bias,
requantisation, clamp, the store) and loop nests, ``c`` the call and its
loop prologues. A grid of tiles pays ``c`` once per tile and kernel, the
recomputed halos' MACs and elements, and the copies; ``choose`` ranks
candidates of equal peak by these estimates (``patch_graph``).

The coefficients were fitted by least squares to single-operator int8
models compiled by ``usmp-compile --use-workspace-io --target "c
-mcpu=cortex-m4"``, built with ``arm-none-eabi-gcc -O2`` and run under
``qemu-system-arm -M mps2-an386 -icount shift=0`` (QEMU counts
instructions, not cycles); regenerate them (and see the fit's residuals)
with::

    python benchmarks/patch_speed_fit.py

They are int8 kernels' figures: a float model's kernels are ranked with
them too (the relative cost of MACs, elements and calls, not its absolute
speed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from usmp.planning.patch_graph import GridCost, Node, Plan

COEFFICIENTS: dict[str, tuple[float, float, float]] = {
    # kind: (per MAC, per output element, per call), from
    # python benchmarks/patch_speed_fit.py (residuals: conv within 17%,
    # depthwise 2%, pool 42% (average and max pooling differ), ADD 0%,
    # copies 11%)
    "conv": (1.555, 25.97, 84.0),
    "depthwise": (5.41, 0.601, 171.1),
    "pool": (5.417, 0.0, 0.0),
    "elementwise": (0.0, 24.453, 75.0),
    "copy": (0.0, 4.43, 189.4),
}


def kernel_instructions(kind: str, macs: int, elements: int, calls: int = 1) -> int:
    """Estimated instructions of ``calls`` calls of a ``kind`` kernel
    computing ``elements`` output elements in ``macs`` MACs in all."""
    a, b, c = COEFFICIENTS[kind]
    return round(a * macs + b * elements + c * calls)


def stage_instructions(nodes: Sequence[Node], out: int, stripes: int, cols: int) -> int:
    """Estimated instructions of the stage ending at node ``out`` computed in
    a grid of ``stripes`` x ``cols`` tiles (1 x 1: unpatched)."""
    from usmp.planning.patch_graph import grid_cost, tile_plans

    row_plan = tile_plans(nodes, out, stripes)
    col_plan = tile_plans(nodes, out, cols, True)
    cost = grid_cost(nodes, out, row_plan, col_plan)
    return grid_instructions(nodes, out, cost, row_plan, col_plan)


def grid_instructions(
    nodes: Sequence[Node], out: int, cost: GridCost, row_plan: Plan, col_plan: Plan
) -> int:
    """Estimated instructions of the grid ``cost`` was found for: per tile
    each kernel on its rows and columns (a kernel is the node of its fusion
    step that has a window, or else the step's last node), the tile's input
    copied when it is not a stripe of whole rows (several columns), and the
    join of the tiles (one kernel after ``fuse-ops``)."""
    total = 0
    for i, kind in _payers(nodes, out).items():
        total += kernel_instructions(
            kind,
            cost.pixels[i] * nodes[i].macs_per_row // nodes[i].out_cols,
            cost.pixels[i] * _channels(nodes[i]),
            cost.tiles,
        )
    if cost.tiles == 1:
        return total
    # the joins: fuse-ops makes the concatenations one kernel, a copy of
    # the output
    out_elements = nodes[out].out_rows * nodes[out].out_cols * _channels(nodes[out])
    total += kernel_instructions("copy", 0, out_elements)
    if len(col_plan) > 1:  # the input tiles (a stripe of rows is a view)
        total += kernel_instructions(
            "copy", 0, cost.pixels[0] * _channels(nodes[0]), cost.tiles
        )
    return total


def _channels(node: Node) -> int:
    return max(node.channels, 1)


def _payers(nodes: Sequence[Node], out: int) -> dict[int, str]:
    """The node that stands for each fusion step's kernel, and its kind."""
    by_step: dict[int, list[int]] = {}
    for i in range(1, out + 1):
        by_step.setdefault(nodes[i].step, []).append(i)
    payers: dict[int, str] = {}
    for members in by_step.values():
        windows = [i for i in members if nodes[i].window]
        if windows:
            payers[windows[0]] = nodes[windows[0]].kind
        else:
            last = members[-1]
            payers[last] = "copy" if nodes[last].kind == "copy" else "elementwise"
    return payers
