"""``usmp-validate``: check a memory plan with the independent validator.

Recovers the plan from the IR -- the ``pool_allocation`` placements recorded
by ``usmp-plan-memory``, or, after ``usmp-convert-pool-allocations``, the
``memref.view``s into pool arguments (offset, type, function) -- recomputes
every buffer's liveness with the buffer info analysis, and runs
``usmp.planning.validate`` (code shared with no planner): conflicting buffers
never share a byte, every offset is aligned for its pool and element type,
every buffer lies inside its pool (the sizes in ``tir.pools``) and in a pool
its targets may access, and the constants never overlap.

Requires a planned or rewritten module (a static allocation without a
placement is an error). Changes nothing; running it twice changes nothing.
A violation is reported at the entry function, listing every violation.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from usmp.diagnostics import located_error
from usmp.passes.usmp_analysis import analyze
from usmp.passes.usmp_plan_memory import PlannedModule, recorded_plan
from usmp.passes.usmp_pools import resolve_pools


@dataclass(frozen=True)
class UsmpValidatePass(ModulePass):
    """Validate the memory plan recorded in the IR (see module doc)."""

    name = "usmp-validate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        read_plan(op)


def read_plan(module: ModuleOp) -> PlannedModule:
    """The plan recorded in ``module`` (placements or pool views), validated."""
    # with the allowed overlaps: the plan may use them, the report shows
    # the finer bound
    analysis = analyze(module, resolve_pools(module, ""), overlap=True)
    missing = next(
        (b for b in (*analysis.buffers, *analysis.constants) if b.placement is None),
        None,
    )
    if missing is not None:
        raise located_error(
            missing.anchor,
            f"{missing.describe()} has no pool_allocation: the module is not planned "
            "(run usmp-plan-memory or usmp first)",
        )
    planned = recorded_plan(analysis)
    if planned is None:
        raise located_error(
            analysis.main, "usmp: the module has no buffers, there is no plan to check"
        )
    return planned
