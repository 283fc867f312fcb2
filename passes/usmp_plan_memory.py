"""``usmp-plan-memory``: choose a pool and an offset for every static buffer.

The *transform* step of TVM's USMP between the analysis and the rewrite: it
runs the buffer info analysis (``usmp_analysis``), hands the workspace buffers
to a planning algorithm (``usmp.planning.algorithms``, chosen by the
``algorithm`` option), checks the plan with the independent validator
(``usmp.planning.validate``), lays the constants out back to back in their
constant pools and the states (``tir.allocate_state``) back to back in their
persistent pools (all live at once, for the whole program), and records
everything in the IR:

* every ``tir.allocate`` / ``tir.allocate_const`` / ``tir.allocate_state`` gets
  ``pool_allocation = #tir.pool_allocation<"pool", offset>``;
* with ``use_workspace_io``, every input/output argument of the entry function
  gets the argument attribute ``tir.pool_allocation`` likewise;
* with ``overlap`` (the default), an operator's output may share bytes
  with an input it reads for the last time where its traced loop nest makes
  that safe (``usmp_overlap``), after ``usmp-kernel-direction`` has chosen
  which kernels run backwards; every pair that shares bytes is replayed on
  its kernel's access order by the validation; a buffer may also lie on
  bytes of another that no step from its first step on accesses (a patched
  stage consuming its input: ``usmp_overlap.dead_overlaps``), where that
  plans smaller than without them (the plan without is kept otherwise);
* liveness is per statement inside the operators (``usmp_analysis``); where
  that frees bytes (fewer conflicts than liveness per call) the workspace is
  planned both ways and the finer plan is kept only if it is smaller, so a
  model it does not shrink keeps its layout;
* the module attribute ``tir.pools`` lists the pools in order; each pool that
  holds a buffer gets its planned size as ``size`` (the highest end of a
  buffer in it: exactly the bytes the pool array must have; a size limit
  given before is thereby replaced by what the plan needs), the others keep
  theirs.

Requires
    the output of ``aot-lower-main`` (a ``tir.main`` entry function calling
    operator prim funcs). Pools come from the ``pools`` option, else the
    module's ``tir.pools``, else the defaults (see ``usmp_pools``).

Errors (located)
    a buffer that fits none of its candidate pools is reported at its
    ``tir.allocate`` (for an imported model: ``model.tflite:<operator index>
    (<OPCODE>)`` of the operator that produces it), naming the buffer, its
    bytes, for each pool its limit and how far the buffers already placed
    there reach, and the buffers live together with it at its fullest step
    (only those that may share one of its pools); a constant
    likewise with the bytes already in each constant pool; unknown or
    inaccessible candidate pools (see ``usmp_analysis``).

Idempotence
    A module whose buffers all carry a placement keeps them (they are checked
    with the validator against the pools' limits, and the pool sizes are set
    to what they need), so running the pass twice changes nothing; if only
    some buffers carry one, all are planned afresh. A module already rewritten
    by ``usmp-convert-pool-allocations`` is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, BlockArgument

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    INTERFACE_API,
    IO_POOL_ALLOCATION,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    PoolAllocationAttr,
    PoolKind,
)
from usmp.passes.options import TypedOptions
from usmp.passes.progress import report
from usmp.passes.usmp_analysis import (
    BufferInfo,
    BufferInfoAnalysis,
    analyze,
    with_overlaps,
)
from usmp.passes.usmp_ir import ModuleOps, find_main, is_rewritten, merge_arg_attrs
from usmp.passes.usmp_kernel_direction import choose_directions
from usmp.passes.usmp_kernel_trace import KernelTraces
from usmp.passes.usmp_overlap import find_overlaps, overlap_violations
from usmp.passes.usmp_pools import (
    parse_pools_option,
    resolve_pools,
    set_module_pools,
    with_size,
)
from usmp.planning.algorithms import ALGORITHMS, DEFAULT_ALGORITHM, get_algorithm
from usmp.planning.model import (
    Buffer,
    Placement,
    Plan,
    PlanningError,
    Pool,
    Problem,
)
from usmp.planning.validate import validate_plan


def check_algorithm(name: str, time_limit: float = 0.0) -> None:
    if name not in ALGORITHMS:
        valid = ", ".join(ALGORITHMS)
        raise ValueError(f"unknown memory planning algorithm '{name}'; valid: {valid}")
    get_algorithm(name, time_limit=time_limit or None)


@dataclass(frozen=True)
class UsmpPlanMemoryPass(TypedOptions):
    """Plan every static buffer of the module into its pools (see module doc)."""

    name = "usmp-plan-memory"

    algorithm: str = DEFAULT_ALGORITHM
    """Planning algorithm (``usmp.planning.algorithms``)."""
    use_workspace_io: bool = False
    """Also place the entry function's inputs and outputs in the workspace."""
    pools: str = ""
    """Pools in fallback order, ``NAME:KIND[:SIZE][:align=N][:access=T/rw+...]``
    comma separated (see ``usmp_pools``); empty: ``tir.pools`` or defaults."""
    time_limit: int | float = 0
    """CPU seconds for ``algorithm=optimal`` (0: its default)."""
    overlap: bool = True
    """Let an operator's output overlap an input it reads for the last time,
    where the kernel's access order makes it safe (``usmp_overlap``)."""

    def __post_init__(self) -> None:
        check_algorithm(self.algorithm, self.time_limit)
        if self.pools:
            parse_pools_option(self.pools)

    @classmethod
    def option_choices(cls) -> dict[str, tuple[str, ...]]:
        """Accepted values of the options with a closed set (``--help``)."""
        return {"algorithm": tuple(ALGORITHMS)}

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan_memory(
            op,
            self.algorithm,
            self.use_workspace_io,
            self.pools,
            self.time_limit,
            self.overlap,
        )


@dataclass(frozen=True)
class PlannedModule:
    """What ``plan_memory`` decided, for reports."""

    analysis: BufferInfoAnalysis
    placements: dict[str, Placement]
    """Buffer name (workspace and constants) -> pool and offset."""
    sizes: dict[str, int]
    """Planned bytes of each pool that holds a buffer."""
    algorithm: str
    """The algorithm that made the plan ('' if it was read from the IR)."""


def check_workspace_io_interface(module: ModuleOp) -> None:
    """Inputs and outputs in the workspace need the C interface, as in TVM:
    the packed entry (``tir.interface_api = "packed"``) receives them as
    DLTensors the caller owns."""
    main = find_main(module)
    api = main.attributes.get(INTERFACE_API)
    if isinstance(api, StringAttr) and api.data != "c":
        raise located_error(
            main,
            f"use_workspace_io (TVM's tir.usmp.use_workspace_io) is only "
            f"compatible with interface_api c, not {api.data}: the {api.data} "
            "entry takes its inputs and outputs as DLTensors the caller owns "
            "(use interface_api c to place them in the workspace)",
        )


def plan_memory(
    module: ModuleOp,
    algorithm: str,
    use_workspace_io: bool,
    pools_option: str,
    time_limit: int | float = 0,
    overlap: bool = True,
    ops: ModuleOps | None = None,
) -> PlannedModule | None:
    """Annotate ``module`` with a plan and return it (None when the module was
    already rewritten and there is nothing to do). ``ops``:
    ``ModuleOps.of(module)`` if the caller has it (planning leaves it valid:
    it sets attributes and reverses loop nests, adding index arithmetic)."""
    if is_rewritten(module):
        leftover = next(
            (
                o
                for o in module.walk()
                if isinstance(o, (AllocateOp, AllocateConstOp, AllocateStateOp))
            ),
            None,
        )
        if leftover is not None:
            raise located_error(
                leftover,
                f"buffer '{leftover.name_hint.data}': the module was already rewritten "
                "by usmp-convert-pool-allocations; allocations added afterwards "
                "cannot be planned into its pools (plan before the rewrite)",
            )
        return None
    if use_workspace_io:
        check_workspace_io_interface(module)
    # one walk for the analyses before any IR changes (ModuleOps)
    ops = ops or ModuleOps.of(module)
    pools = resolve_pools(module, pools_option, ops)
    traces = KernelTraces()  # one trace per kernel for the whole run
    # analysed once: reversing loop nests leaves the buffers and their
    # liveness as they were (usmp_analysis.with_overlaps)
    analysis = analyze(module, pools, use_workspace_io, traces=traces, ops=ops)
    if overlap and not any(
        isinstance(o, AllocateOp) and o.pool_allocation is not None
        for o in ops.allocations
    ):
        choose_directions(module, pools, use_workspace_io, traces, analysis, ops)
    if overlap:
        analysis = with_overlaps(analysis)
    planned = recorded_plan(analysis)
    if planned is None:
        run = get_algorithm(algorithm, time_limit=time_limit or None)
        problem = analysis.workspace_problem()
        n = len(problem.buffers)
        report("planning", 1, 1, f"{n:,} buffer{'s' * (n != 1)}, {algorithm}")
        try:
            plan = run(problem)
            if analysis.refined:
                plan = _smaller(analysis, plan, run)
            if overlap:
                plan = _without_consumed(analysis, plan, run)
        except PlanningError as e:
            raise _planning_error(analysis, e) from None
        placements = {
            **plan.placements,
            **_layout_back_to_back(analysis, analysis.constants, PoolKind.CONSTANT),
            **_layout_back_to_back(analysis, analysis.states, PoolKind.PERSISTENT),
        }
        _check(analysis, Plan(placements, algorithm=algorithm))
        _annotate(analysis, placements)
        planned = PlannedModule(
            analysis, placements, _pool_sizes(analysis, placements), algorithm
        )
    set_module_pools(
        module,
        [
            with_size(p, planned.sizes[p.pool_name.data])
            if p.pool_name.data in planned.sizes
            else p
            for p in analysis.pools
        ],
    )
    return planned


def _smaller(
    analysis: BufferInfoAnalysis, refined: Plan, run: Callable[[Problem], Plan]
) -> Plan:
    """Liveness per statement frees bytes only where it changes the plan's
    size: the plan of the problem in main's steps (valid for the finer one,
    whose conflicts are a subset) is kept unless the finer plan is smaller,
    so a model whose sizes it does not change keeps its layout."""
    coarse = replace(analysis, refined=False).workspace_problem()
    try:
        plan = run(coarse)
    except PlanningError:
        return refined  # the finer problem fits where the coarse one does not
    total = sum(plan.pool_sizes(coarse).values())
    finer = sum(refined.pool_sizes(analysis.workspace_problem()).values())
    return refined if finer < total else plan


def _without_consumed(
    analysis: BufferInfoAnalysis, plan: Plan, run: Callable[[Problem], Plan]
) -> Plan:
    """The overlaps over bytes no later step accesses (``usmp_overlap``'s
    ``dead_overlaps``: a stage consuming its input) free bytes only where
    they change the plan's size: the plan without them (valid with them:
    it shares fewer bytes) is kept unless the plan with them is smaller, as
    the planners' heuristics can place worse with more freedom, and a model
    they do not help keeps its layout."""
    if analysis.functions is None:
        return plan
    kernels = find_overlaps(
        analysis, analysis.functions, analysis.traces, consumed=False
    )
    if kernels == analysis.overlaps:
        return plan
    fewer = replace(analysis, overlaps=kernels)
    try:
        other = run(fewer.workspace_problem())
        if analysis.refined:
            other = _smaller(fewer, other, run)
    except PlanningError:
        return plan
    problem = analysis.workspace_problem()
    with_them = sum(plan.pool_sizes(problem).values())
    without = sum(other.pool_sizes(problem).values())
    return plan if with_them < without else other


def recorded_plan(analysis: BufferInfoAnalysis) -> PlannedModule | None:
    """The plan recorded in the IR, checked by the validator, if every buffer
    has a placement (None if some buffer has none, or there are no buffers)."""
    everything = analysis.everything
    if not everything or any(b.placement is None for b in everything):
        return None
    placements = {
        b.name: Placement(b.placement.pool_name.data, b.placement.offset.data)  # pyright: ignore
        for b in everything
    }
    _check(analysis, Plan(placements), recorded=True)
    return PlannedModule(analysis, placements, _pool_sizes(analysis, placements), "")


def _check(analysis: BufferInfoAnalysis, plan: Plan, recorded: bool = False) -> None:
    """Run the independent validator on the workspace, on the constants and
    on the states; every pair of workspace buffers sharing bytes must also
    pass the replay of its kernel (``usmp_overlap.overlap_violations``)."""
    workspace = analysis.workspace_problem()
    if recorded and not workspace.overlaps and analysis.functions is not None:
        # a recorded plan may use overlaps the analysis was not asked for
        sub = Plan({b.name: plan.placements[b.name] for b in workspace.buffers})
        if validate_plan(workspace, sub):
            overlaps = find_overlaps(analysis, analysis.functions, analysis.traces)
            workspace = Problem(workspace.buffers, workspace.pools, overlaps)
    for problem in (
        workspace,
        constant_problem(analysis),
        constant_problem(analysis, PoolKind.PERSISTENT),
    ):
        sub = Plan({b.name: plan.placements[b.name] for b in problem.buffers})
        errors = validate_plan(problem, sub)
        if not errors and problem is workspace and analysis.functions is not None:
            # every pair sharing bytes, replayed on its kernel's access order
            errors = overlap_violations(
                analysis, analysis.functions, sub.placements, analysis.traces
            )
        if errors:
            what = (
                "the placements recorded in the IR are invalid"
                if recorded
                else f"algorithm '{plan.algorithm}' produced an invalid plan "
                "(a planner bug, please report it)"
            )
            raise located_error(analysis.main, f"usmp: {what}: " + "; ".join(errors))


def constant_problem(
    analysis: BufferInfoAnalysis, kind: PoolKind = PoolKind.CONSTANT
) -> Problem:
    """The constants (or, for ``PERSISTENT``, the states) as a planning
    problem: all live at once (one step), so the validator checks they never
    overlap."""
    buffers = analysis.constants if kind == PoolKind.CONSTANT else analysis.states
    return Problem(
        tuple(
            Buffer(c.name, c.size, 0, 1, c.element_alignment, c.pools) for c in buffers
        ),
        tuple(
            Pool(p.pool_name.data, p.size_limit, p.alignment.data)
            for p in analysis.pools
            if p.kind.data == kind
        ),
    )


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _layout_back_to_back(
    analysis: BufferInfoAnalysis, buffers: tuple[BufferInfo, ...], kind: PoolKind
) -> dict[str, Placement]:
    """Constants (or states: all live for the whole program, so nothing can
    share their bytes) back to back in IR order, each in its first candidate
    pool of ``kind`` with room left, at an offset aligned to the pool's and
    its element type's alignment."""
    used = {p.pool_name.data: 0 for p in analysis.pools if p.kind.data == kind}
    what = "constants" if kind == PoolKind.CONSTANT else "states"
    placements: dict[str, Placement] = {}
    for c in buffers:
        for name in c.pools:
            pool = analysis.pool(name)
            offset = _align_up(
                used[name], max(pool.alignment.data, c.element_alignment)
            )
            limit = pool.size_limit
            if limit is None or offset + c.size <= limit:
                placements[c.name] = Placement(name, offset)
                used[name] = offset + c.size
                break
        else:
            detail = "; ".join(
                f"pool '{name}' limit {analysis.pool(name).size_limit} B, "
                f"{used[name]} B already used by {what}"
                for name in c.pools
            )
            raise located_error(
                c.anchor,
                f"{c.describe()} ({c.size} B) fits in no candidate {kind} "
                f"pool: {detail}",
            )
    return placements


def _planning_error(analysis: BufferInfoAnalysis, e: PlanningError) -> Exception:
    info = analysis.by_name()[e.buffer]

    def why(name: str, limit: int | None, needed: int) -> str:
        where = (
            f"pool '{name}' (limit {'unbounded' if limit is None else f'{limit} B'})"
        )
        if limit is not None and e.size > limit:
            return f"{where} is smaller than the buffer"
        return (
            f"{where} already holds {needed - e.size} B of buffers live at the "
            f"same time, so it would need {needed} B"
        )

    detail = "; ".join(why(*pool) for pool in e.pools)
    return located_error(
        info.anchor,
        f"{info.describe()} ({e.size} B) fits in no candidate pool: {detail}"
        + _live_together(analysis, info),
    )


def _live_together(analysis: BufferInfoAnalysis, info: BufferInfo) -> str:
    """The buffers live together with ``info`` at the step of its live range
    where they take the most bytes (only those that may share one of its
    pools), as `` (live together with it at step S, label: a (N B), ...;
    T B in all)``; empty if none."""
    by_name = {b.name: b for b in analysis.buffers}
    pools = set(info.pools)
    others = [
        by_name[n]
        for n in analysis.conflicts.get(info.name, ())
        if pools & set(by_name[n].pools)
    ]
    best: tuple[int, int, list[BufferInfo]] | None = None
    for start, end in info.live:
        for step in range(start, end):
            here = [b for b in others if any(s <= step < e for s, e in b.live)]
            total = sum(b.size for b in here)
            if here and (best is None or total > best[0]):
                best = (total, step, here)
    if best is None:
        return ""
    total, step, here = best
    shown = sorted(here, key=lambda b: (-b.size, b.name))[:5]
    names = ", ".join(f"{b.name} ({b.size} B)" for b in shown)
    if len(here) > len(shown):
        names += f", and {len(here) - len(shown)} more"
    return (
        f" (live together with it at step {step}, {analysis.steps[step]}: {names}; "
        f"{total + info.size} B in all)"
    )


def _annotate(analysis: BufferInfoAnalysis, placements: dict[str, Placement]) -> None:
    io: dict[int, dict[str, Attribute]] = {}
    for b in analysis.everything:
        where = placements[b.name]
        attr = PoolAllocationAttr(where.pool, where.offset)
        if isinstance(b.owner, BlockArgument):
            io[b.owner.index] = {IO_POOL_ALLOCATION: attr}
        else:
            b.owner.properties["pool_allocation"] = attr
    merge_arg_attrs(analysis.main, io)


def _pool_sizes(
    analysis: BufferInfoAnalysis, placements: dict[str, Placement]
) -> dict[str, int]:
    """Bytes each pool holding a buffer needs: the highest buffer end."""
    sizes: dict[str, int] = {}
    for b in analysis.everything:
        where = placements[b.name]
        sizes[where.pool] = max(sizes.get(where.pool, 0), where.offset + b.size)
    return sizes
