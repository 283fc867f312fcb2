"""``usmp``: Unified Static Memory Planning, the whole of it.

The composite of TVM's USMP: buffer info analysis -> planning algorithm ->
validation -> (report) -> rewrite. It is

    usmp-plan-memory{algorithm pools use_workspace_io time_limit overlap}
    [usmp-report{json svg}]          when ``report`` is given
    usmp-convert-pool-allocations
    [usmp-replay]                    unless ``replay=false``

on one module, sharing the analysis between the first two. See those passes
for what each step writes.

Requires
    the output of ``aot-lower-main`` (``usmp-opt in.mlir -p aot-lower-main,usmp``).

Produces
    no static ``tir.allocate``/``tir.allocate_const`` anywhere: each became a
    ``memref.view`` into a pool argument; every function touching a pool takes
    it as a trailing ``memref<Nxi8>`` argument listed in ``tir.pool_args``;
    ``tir.pools`` holds the planned pool sizes; each constant pool's data is a
    ``memref.global`` named after the pool.

Idempotence
    On its own output the pass changes nothing (there is nothing left to plan;
    a report asked for then describes the plan the pool views record).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from usmp.passes.options import TypedOptions
from usmp.passes.usmp_convert_pool_allocations import convert_pool_allocations
from usmp.passes.usmp_ir import ModuleOps
from usmp.passes.usmp_plan_memory import (
    UsmpPlanMemoryPass,
    check_algorithm,
    plan_memory,
)
from usmp.passes.usmp_pools import parse_pools_option
from usmp.passes.usmp_replay import UsmpReplayPass
from usmp.passes.usmp_report import report_paths, write_report
from usmp.passes.usmp_validate import read_plan
from usmp.planning.algorithms import DEFAULT_ALGORITHM


@dataclass(frozen=True)
class UsmpPass(TypedOptions):
    """Plan every static buffer into pools and rewrite the module to use them."""

    name = "usmp"

    algorithm: str = DEFAULT_ALGORITHM
    """Planning algorithm (``usmp.planning.algorithms``)."""
    use_workspace_io: bool = False
    """Also place the entry function's inputs and outputs in the workspace
    (TVM's use-workspace-io): main then takes only pools."""
    pools: str = ""
    """Pools in fallback order, ``NAME:KIND[:SIZE][:align=N][:access=T/rw+...]``
    comma separated (see ``usmp_pools``); empty: ``tir.pools`` or defaults."""
    time_limit: int | float = 0
    """CPU seconds for ``algorithm=optimal`` (0: its default)."""
    report: str = ""
    """If set, a path: the JSON report goes there (``.json``), one SVG per
    pool next to it (``<stem>.<pool>.svg``) and the text and CSV summaries
    (``summary.txt``/``.csv`` beside ``plan.json``, else
    ``<stem>.summary.*``); an existing directory (or a path ending in ``/``):
    ``DIR/plan.json``, ``DIR/plan.<pool>.svg``, ``DIR/summary.*``."""
    overlap: bool = True
    """Let an operator's output overlap an input it reads for the last time,
    where the kernel's access order makes it safe (``usmp_overlap``);
    ``false``: every conflicting pair disjoint."""
    replay: bool = True
    """Replay the rewritten program byte by byte (``usmp-replay``): every
    value read, every model output at the end and every state for the next
    run must be the one written for it; a violation is an error."""

    def __post_init__(self) -> None:
        check_algorithm(self.algorithm, self.time_limit)
        if self.pools:
            parse_pools_option(self.pools)

    @classmethod
    def option_choices(cls) -> dict[str, tuple[str, ...]]:
        """Accepted values of the options with a closed set (``--help``)."""
        return UsmpPlanMemoryPass.option_choices()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # one index of the ops both steps look for (planning leaves it valid)
        ops = ModuleOps.of(op)
        planned = plan_memory(
            op,
            self.algorithm,
            self.use_workspace_io,
            self.pools,
            self.time_limit,
            self.overlap,
            ops,
        )
        if self.report:
            # already rewritten: report the plan the pool views record
            json_path, svg_path = report_paths(self.report)
            write_report(planned or read_plan(op), json_path, svg_path, summary=True)
        if planned is not None and planned.analysis.traces is not None:
            # the kernels' traces (bytes x times) are not needed any more;
            # freed now, whatever holds the analysis
            planned.analysis.traces.cache.clear()
        del planned
        convert_pool_allocations(ctx, op, ops)
        del ops  # (it holds the rewritten allocations, constants' data included)
        if self.replay:
            UsmpReplayPass().apply(ctx, op)
