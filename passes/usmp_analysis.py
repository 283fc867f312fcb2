"""Buffer info analysis of ``usmp`` (TVM's ``extract_buffer_info``).

Not a pass: ``analyze(module, pools, use_workspace_io)`` reads a module in the
form ``aot-lower-main`` produces and returns every statically sized buffer the
planner must place, with what the planner needs to know about it. It never
mutates the IR; ``usmp-buffer-info`` prints its result, ``usmp-plan-memory``
feeds it to an algorithm, ``usmp-report`` draws it.

Time is main's call order. Every top-level op of the entry function (the
``func.func`` carrying ``tir.main``) that touches memory -- a ``tir.call``, a
``memref.copy``, anything using a buffer or holding a region -- is one *step*
``0..T-1``. Buffers and their live ranges (half-open, in steps):

* a ``tir.allocate`` of main (a storage id) lives from the first step that
  touches it (directly or through a view/cast/reshape of it) to the last;
* a ``tir.allocate`` inside an operator function (scratch) lives exactly during
  the steps at which that function runs: the steps where main calls it, or
  calls a function that calls it. An operator called at steps 2 and 7 has
  scratch live over ``[2, 3)`` and ``[7, 8)`` -- it conflicts with that call's
  arguments and with everything live at those steps, and with nothing in
  between;
* with ``use_workspace_io`` (or when main's arguments already carry a
  ``tir.pool_allocation``) main's inputs are buffers live from step 0 (the
  caller fills them before main runs) to their last use, and outputs from
  their first use to ``T`` (the caller reads them after main returns);
* a ``tir.allocate_const`` is a constant: no live range, it goes to a constant
  pool;
* a ``tir.allocate_state`` is state kept across invocations: it goes to a
  persistent pool, where every state conflicts with every other (they are all
  live for the whole program), and it never shares a pool with workspace
  buffers;
* after ``usmp-convert-pool-allocations``, a ``memref.view`` into a pool
  argument (``tir.pool_args``) is a buffer already placed there (a constant
  if the pool is a constant pool; an input/output if it is the view
  ``tir.input_allocations``/``tir.output_allocations`` describe), so the
  same analysis recovers the plan from rewritten IR (``usmp-validate``,
  ``usmp-report``).

Liveness is finer than the steps inside the operators (TVM's per-statement
liveness, ``usmp_statement_liveness``): ``BufferInfo.ticks`` are the live
intervals over the statements of the called functions -- a scratch lives
only over the statements of its call that touch it, a buffer of main only
from the first to the last statement touching it -- and an allocation
inside a parallel loop (per thread) is not a buffer at all. Two workspace
buffers *conflict* when both are non-empty and one of their ticks intervals
overlap (never more often than with the steps). When that gives the same
conflicts as the steps, ``workspace_problem`` states the problem in steps.

Candidate pools: the op's ``candidate_pools`` (in its order) or every
workspace/constant pool (in pool order), keeping only pools that every
target touching the buffer may access (see ``usmp_pools``).
Alignment: a buffer's offset is aligned to its pool's alignment and to its
element type's natural alignment; ``BufferInfo.alignment`` reports the largest
over its candidate pools.

With ``overlap``, the analysis also lists the *allowed overlaps*
(``usmp_overlap.find_overlaps``): a buffer a call reads for the last time
and one it writes first may share bytes in the direction the kernel's traced
loop nest makes safe (``planning.model.Overlap``); ``workspace_problem``
passes them to the planner.

Errors caused by the input (no entry function, a buffer type with no fixed
byte size, an unknown or inaccessible candidate pool) are located diagnostics
at the offending op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import cast

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    FixedBitwidthType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import BlockArgument, Operation, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    INPUT_ALLOCATIONS,
    INPUT_NAMES,
    INPUT_TYPES,
    IO_POOL_ALLOCATION,
    OUTPUT_ALLOCATIONS,
    OUTPUT_NAMES,
    OUTPUT_TYPES,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    PoolAllocationAttr,
    PoolInfoAttr,
    PoolKind,
)
from usmp.passes.usmp_ir import (
    ModuleOps,
    attr_list,
    byte_size,
    find_main,
    pool_arguments,
    string_list,
)
from usmp.passes.usmp_kernel_trace import KernelTraces
from usmp.passes.usmp_liveness import (
    Interval,
    call_graph,
    compute_conflicts,
    defines_buffer,
    device_target,
    function_steps,
    intervals,
    main_timeline,
)
from usmp.passes.usmp_overlap import find_overlaps
from usmp.passes.usmp_pools import can_hold, describe_pool, function_target
from usmp.passes.usmp_statement_liveness import in_parallel_loop, statement_timeline
from usmp.planning.model import Buffer, Overlap, Pool, Problem


@dataclass(eq=False)
class BufferInfo:
    """One buffer to place (TVM's ``BufferInfo``)."""

    name: str
    """Unique in the module: the name hint for main's buffers and I/O,
    ``function/hint`` for an operator's scratch or constants."""
    name_hint: str
    function: str
    kind: PoolKind
    """The kind of pool it goes to."""
    role: str
    """``allocate``, ``constant``, ``input`` or ``output``."""
    owner: Operation | BlockArgument
    """What defines it: the allocation, main's argument (workspace I/O), or
    after the rewrite the ``memref.view`` into its pool."""
    anchor: Operation
    """Where diagnostics about this buffer point (the op, or main for I/O)."""
    type: MemRefType
    size: int
    alignment: int
    live: tuple[Interval, ...]
    targets: tuple[str, ...]
    pools: tuple[str, ...]
    """Candidate pools in order of preference (already access-filtered)."""
    placement: PoolAllocationAttr | None = None
    """The placement already recorded in the IR (after ``usmp-plan-memory``)."""
    read_at: tuple[int, ...] = ()
    """Constants: the steps of main that read it (for the memory report)."""
    ticks: tuple[Interval, ...] = ()
    """Live intervals in statements (``usmp_statement_liveness``): finer than
    ``live``; conflicts and the planning problem use these."""

    @property
    def last_step(self) -> int | None:
        """The step of main that uses it for the last time, if it dies inside
        the run. A model output never does: the caller reads it after the
        run, whatever main's last use of it."""
        if self.role == "output" or not self.live:
            return None
        return self.live[-1][1] - 1

    @property
    def first_step(self) -> int | None:
        """The step that first uses it."""
        return self.live[0][0] if self.live else None

    def describe(self) -> str:
        """How diagnostics name it: ``buffer 'acc' of 'op'``, ``input 'x'``..."""
        what = {"allocate": "buffer"}.get(self.role, self.role)
        where = f" of '{self.function}'" if "/" in self.name else ""
        return f"{what} '{self.name_hint}'{where}"

    @property
    def element_alignment(self) -> int:
        """Natural alignment of the element type (the largest power of two
        dividing its byte size, at most 16): what any pool must respect."""
        element = self.type.get_element_type()
        size = element.size if isinstance(element, FixedBitwidthType) else 1
        return min(size & -size, 16) if size else 1


@dataclass(frozen=True)
class BufferInfoAnalysis:
    """Everything ``analyze`` found (TVM's ``BufferInfoAnalysis``)."""

    main: func.FuncOp
    steps: tuple[str, ...]
    """A label per step: the callee of a call, else the op name."""
    pools: tuple[PoolInfoAttr, ...]
    buffers: tuple[BufferInfo, ...]
    """Workspace buffers (main's, operators' scratch, I/O), in IR order."""
    constants: tuple[BufferInfo, ...]
    states: tuple[BufferInfo, ...]
    """Persistent buffers (``tir.allocate_state``), in IR order."""
    conflicts: dict[str, tuple[str, ...]]
    """Workspace buffer name -> sorted names of the buffers it conflicts with."""
    step_ops: tuple[Operation, ...] = ()
    """main's top-level op at each step (its location names the operator)."""
    overlaps: tuple[Overlap, ...] = ()
    """Allowed overlaps between a call's dying input and its output
    (``usmp_overlap``), when asked for."""
    functions: dict[str, func.FuncOp] | None = None
    """The module's functions by name (for the kernel replays)."""
    traces: KernelTraces | None = None
    """The kernel traces computed for ``overlaps`` (reused by the replays)."""
    refined: bool = True
    """Do the statements' liveness (``BufferInfo.ticks``) give other
    conflicts than main's steps (``BufferInfo.live``)? If not, the planning
    problem is stated in steps, so that a plan is what it was before
    liveness per statement (the algorithms order buffers by their
    intervals)."""

    def pool(self, name: str) -> PoolInfoAttr:
        for p in self.pools:
            if p.pool_name.data == name:
                return p
        raise KeyError(name)

    def by_name(self) -> dict[str, BufferInfo]:
        return {b.name: b for b in (*self.buffers, *self.constants, *self.states)}

    @property
    def everything(self) -> tuple[BufferInfo, ...]:
        """Workspace buffers, constants and states."""
        return (*self.buffers, *self.constants, *self.states)

    def workspace_problem(self) -> Problem:
        """The planning problem of the workspace buffers (``planning.model``)."""
        live = {b.name: b.ticks if self.refined else b.live for b in self.buffers}
        return Problem(
            tuple(
                _to_buffer(b, self.conflicts, live[b.name], live) for b in self.buffers
            ),
            tuple(_to_pool(p) for p in self.pools if p.kind.data == PoolKind.WORKSPACE),
            self.overlaps,
        )


def _to_pool(pool: PoolInfoAttr) -> Pool:
    return Pool(pool.pool_name.data, pool.size_limit, pool.alignment.data)


def _to_buffer(
    b: BufferInfo,
    conflicts: dict[str, tuple[str, ...]],
    own: tuple[Interval, ...],
    live: dict[str, tuple[Interval, ...]],
) -> Buffer:
    """An interval buffer (``own``: its intervals). With several live
    intervals the first one is the interval; the buffers met only in the
    others are listed as explicit conflicts, so the conflict graph the model
    derives is exact."""
    align = b.element_alignment  # the pool's own alignment applies on top
    if not own:
        return Buffer(b.name, b.size, 0, 0, align, b.pools)
    start, end = own[0]
    extra = frozenset(
        other
        for other in conflicts.get(b.name, ())
        if not any(s < end and start < e for s, e in live[other])
    )
    return Buffer(b.name, b.size, start, end, align, b.pools, extra)


class _Namer:
    """Unique buffer names: the base, else the base with ``_1``, ``_2``, ..."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name


def analyze(
    module: ModuleOp,
    pools: Sequence[PoolInfoAttr],
    use_workspace_io: bool = False,
    overlap: bool = False,
    traces: KernelTraces | None = None,
    ops: ModuleOps | None = None,
) -> BufferInfoAnalysis:
    """Buffer info of every static allocation of ``module`` (never mutates it);
    with ``overlap``, also the allowed overlaps (``usmp_overlap``), tracing
    kernels into ``traces`` (a fresh cache if None). ``ops``:
    ``ModuleOps.of(module)`` if the caller has it."""
    analyzer = _Analyzer(module, pools, ops or ModuleOps.of(module))
    analysis = analyzer.run(use_workspace_io)
    traces = traces or KernelTraces()
    analysis = replace(analysis, functions=analyzer.functions, traces=traces)
    return with_overlaps(analysis) if overlap else analysis


def with_overlaps(analysis: BufferInfoAnalysis) -> BufferInfoAnalysis:
    """``analysis`` (made by ``analyze``) with its allowed overlaps, tracing
    kernels into its ``traces``.

    ``usmp``'s planning analyses the module once, lets
    ``usmp_kernel_direction`` reverse loop nests, then adds the overlaps of
    the nests as they now run: the rest of the analysis does not depend on
    the order inside a loop nest (the nest is one statement of its function,
    ``usmp_statement_liveness``; reversing adds only index arithmetic inside
    its loops)."""
    assert analysis.functions is not None and analysis.traces is not None
    # (pyright sees this module as passes.usmp_analysis here, and as
    # usmp.passes.usmp_analysis where usmp_overlap imports it)
    found = find_overlaps(analysis, analysis.functions, analysis.traces)  # pyright: ignore[reportArgumentType]
    return replace(analysis, overlaps=found)


class _Analyzer:
    def __init__(self, module: ModuleOp, pools: Sequence[PoolInfoAttr], ops: ModuleOps):
        self.main = find_main(module)
        self.ops = ops
        self.functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }
        self.pools = tuple(pools)
        self.pool_by_name = {p.pool_name.data: p for p in pools}
        self.pool_args = {name: pool_arguments(f) for name, f in self.functions.items()}
        main_pools = self.pool_args[self.main.sym_name.data]
        self.timeline = main_timeline(self.main, self.functions, main_pools)
        self.statements = statement_timeline(
            self.main, self.functions, self.pool_args, self.timeline.step_ops
        )
        self.namer = _Namer()
        self.buffers: list[BufferInfo] = []
        self.constants: list[BufferInfo] = []
        self.states: list[BufferInfo] = []

    def run(self, use_workspace_io: bool) -> BufferInfoAnalysis:
        main, timeline = self.main, self.timeline
        main_name = main.sym_name.data
        # main's I/O, main's own buffers, then each operator's, in module order
        attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
        io_views: set[Operation] = set()
        if INPUT_ALLOCATIONS in main.attributes:  # rewritten with workspace I/O
            io_views = self.add_io_views()
        elif use_workspace_io or any(IO_POOL_ALLOCATION in d.data for d in attrs):
            self.add_io()
        main_targets = {function_target(main)}
        for op in main.walk():
            if defines_buffer(op, self.pool_args[main_name]) and op not in io_views:
                value = op.results[0]
                used = timeline.uses.get(value, set())
                live = ((min(used), max(used) + 1),) if used else ()
                # the targets of the operators using it; main itself only
                # passes it (a cross-device memref.copy is the device_copy
                # moving data between the two sides' pools)
                # (a buffer only copies touch: its own device's target, else
                # main's)
                targets = timeline.value_targets.get(value) or (
                    set() if device_target(op) else main_targets
                )
                ticks = self.statements.live(value)
                self.add_allocation(
                    op,
                    main_name,
                    live,
                    targets,
                    tuple(sorted(used)),
                    (ticks,) if ticks is not None else (),
                )
        running = function_steps(timeline, call_graph(self.functions, self.ops.calls))
        for name, f in self.functions.items():
            if f is main:
                continue
            live = intervals(running.get(name, ()))
            targets = timeline.call_targets.get(name, {function_target(f)})
            steps = tuple(sorted(running.get(name, ())))
            for op in self.ops.definers[name]:
                # an allocation inside a parallel loop is per-iteration,
                # thread-local: TVM leaves it to the code generator
                if defines_buffer(op, self.pool_args[name]) and not in_parallel_loop(
                    op
                ):
                    ticks = self.statements.scratch(op)
                    self.add_allocation(op, name, live, targets, steps, ticks)
        conflicts = compute_conflicts((b.name, b.size, b.ticks) for b in self.buffers)
        per_step = compute_conflicts((b.name, b.size, b.live) for b in self.buffers)
        return BufferInfoAnalysis(
            main,
            tuple(timeline.steps),
            self.pools,
            tuple(self.buffers),
            tuple(self.constants),
            tuple(self.states),
            conflicts,
            tuple(timeline.step_ops),
            refined=conflicts != per_step,
        )

    def candidates(
        self,
        kind: PoolKind,
        requested: list[str] | None,
        targets: tuple[str, ...],
        anchor: Operation,
        what: str,
    ) -> tuple[tuple[str, ...], int]:
        """Candidate pools (access-filtered) and the largest of their alignments."""
        if requested is not None:
            for name in requested:
                pool = self.pool_by_name.get(name)
                if pool is None:
                    raise located_error(
                        anchor,
                        f"{what}: candidate pool '{name}' is not a pool of this "
                        f"module; pools: {', '.join(self.pool_by_name) or 'none'}",
                    )
                if pool.kind.data != kind:
                    needs = {
                        PoolKind.CONSTANT: "constant",
                        PoolKind.PERSISTENT: "state",
                    }.get(kind, "workspace buffer")
                    raise located_error(
                        anchor,
                        f"{what}: candidate pool '{name}' is a {pool.kind.data} pool; "
                        f"a {needs} needs a {kind} pool",
                    )
            base = [self.pool_by_name[n] for n in requested]
        else:
            base = [p for p in self.pools if p.kind.data == kind]
        chosen = [p for p in base if can_hold(p, kind, targets)]
        if not chosen:
            mode = "read" if kind == PoolKind.CONSTANT else "read-write"
            listed = "candidate" if requested is not None else kind
            raise located_error(
                anchor,
                f"{what}: no {kind} pool gives target(s) {', '.join(targets)} "
                f"{mode} access; {listed} pools: "
                + ("; ".join(describe_pool(p) for p in base) or "none"),
            )
        return (
            tuple(p.pool_name.data for p in chosen),
            max(p.alignment.data for p in chosen),
        )

    def view_placement(self, view: memref.ViewOp, function: str) -> PoolAllocationAttr:
        """Where a view into a pool argument points (after the rewrite)."""
        pool = self.pool_args[function][view.source]
        shift = view.byte_shift.owner
        if not (
            isinstance(shift, arith.ConstantOp)
            and isinstance(shift.value, IntegerAttr)
            and not view.sizes
        ):
            raise located_error(
                view,
                f"a view into pool '{pool}' at a dynamic offset or with dynamic sizes "
                "cannot be checked; usmp writes constant offsets and static shapes",
            )
        return PoolAllocationAttr(pool, shift.value.value.data)

    def add_allocation(
        self,
        op: Operation,
        function: str,
        live: tuple[Interval, ...],
        targets: set[str],
        used: tuple[int, ...] = (),
        ticks: tuple[Interval, ...] = (),
    ) -> None:
        """Add the buffer ``op`` defines: a ``tir.allocate``/``allocate_const``,
        or a view into a pool argument (then already placed); ``used``: the
        steps that touch it."""
        if (own := device_target(op)) is not None:
            targets = targets | {own}
        if isinstance(op, memref.ViewOp):
            placement = self.view_placement(op, function)
            pool = self.pool_by_name.get(placement.pool_name.data)
            kind = pool.kind.data if pool is not None else PoolKind.WORKSPACE
            hint = op.result.name_hint or "view"
            requested = None
        else:
            assert isinstance(op, (AllocateOp, AllocateConstOp, AllocateStateOp))
            placement = op.pool_allocation
            kind = {
                AllocateConstOp: PoolKind.CONSTANT,
                AllocateStateOp: PoolKind.PERSISTENT,
            }.get(type(op), PoolKind.WORKSPACE)
            hint = op.name_hint.data
            requested = (
                None
                if op.candidate_pools is None
                else [a.data for a in op.candidate_pools]
            )
        in_main = function == self.main.sym_name.data
        name = self.namer(hint if in_main else f"{function}/{hint}")
        is_const = kind == PoolKind.CONSTANT
        is_state = kind == PoolKind.PERSISTENT
        role = "constant" if is_const else "state" if is_state else "allocate"
        what = f"{'buffer' if role == 'allocate' else role} '{hint}'"
        type_ = cast(MemRefType, op.results[0].type)
        ordered = tuple(sorted(targets))
        pools, align = self.candidates(kind, requested, ordered, op, what)
        info = BufferInfo(
            name=name,
            name_hint=hint,
            function=function,
            kind=kind,
            role=role,
            owner=op,
            anchor=op,
            type=type_,
            size=byte_size(type_, op, what),
            alignment=align,
            live=() if is_const else self.whole_program() if is_state else live,
            targets=ordered,
            pools=pools,
            placement=placement,
            read_at=used if is_const or is_state else (),
            ticks=() if is_const else self.whole_run() if is_state else ticks,
        )
        if is_const:
            self.constants.append(info)
        elif is_state:
            self.states.append(info)
        else:
            self.buffers.append(info)

    def whole_program(self) -> tuple[Interval, ...]:
        """A state's live range: every step (at least one), and beyond."""
        return ((0, max(len(self.timeline.steps), 1)),)

    def whole_run(self) -> tuple[Interval, ...]:
        """A state's live range in ticks (at least one)."""
        return ((0, max(self.statements.total, 1)),)

    def io_ticks(self, value: SSAValue, is_input: bool) -> tuple[Interval, ...]:
        """``io_live`` in ticks."""
        hull = self.statements.live(value)
        total = self.statements.total
        if is_input:
            end = hull[1] if hull is not None else min(1, total)
            return ((0, end),) if end > 0 else ()
        start = hull[0] if hull is not None else max(total - 1, 0)
        return ((start, total),) if total > start else ()

    def io_live(self, value: SSAValue, is_input: bool) -> tuple[Interval, ...]:
        """Live range of an input (written by the caller before main runs) or
        an output (read by the caller after main returns)."""
        used = self.timeline.uses.get(value, set())
        n_steps = len(self.timeline.steps)
        if is_input:
            end = max(used) + 1 if used else min(1, n_steps)
            return ((0, end),) if end > 0 else ()
        start = min(used) if used else max(n_steps - 1, 0)
        return ((start, n_steps),) if n_steps > start else ()

    def add_io_views(self) -> set[Operation]:
        """After a rewrite with workspace I/O: the views of main's inputs and
        outputs (the first views matching ``tir.input_allocations`` and
        ``tir.output_allocations``, in order, as the rewrite emits them)."""
        main = self.main
        main_name = main.sym_name.data
        expected = [
            (is_input, hint, where, type_)
            for is_input, names, wheres, types in (
                (True, INPUT_NAMES, INPUT_ALLOCATIONS, INPUT_TYPES),
                (False, OUTPUT_NAMES, OUTPUT_ALLOCATIONS, OUTPUT_TYPES),
            )
            for hint, where, type_ in zip(
                string_list(main.attributes.get(names)),
                attr_list(main.attributes.get(wheres)),
                attr_list(main.attributes.get(types)),
                strict=False,
            )
        ]
        found: set[Operation] = set()
        views = (
            op
            for op in main.body.block.ops
            if defines_buffer(op, self.pool_args[main_name])
        )
        for is_input, hint, where, type_ in expected:
            if not isinstance(where, PoolAllocationAttr):
                raise located_error(
                    main, f"'{hint}': {where} is not a #tir.pool_allocation"
                )
            view = next(
                (
                    v
                    for v in views
                    if isinstance(v, memref.ViewOp)
                    and self.view_placement(v, main_name) == where
                    and v.result.type == type_
                ),
                None,
            )
            what = f"{'input' if is_input else 'output'} '{hint}'"
            if view is None:
                raise located_error(
                    main,
                    f"{what}: no view of {type_} at {where} in the entry function, "
                    "as its tir.input/output_allocations say",
                )
            assert isinstance(view, memref.ViewOp)
            found.add(view)
            targets = tuple(
                sorted(
                    {
                        function_target(main),
                        *self.timeline.value_targets.get(view.result, ()),
                    }
                )
            )
            pools, align = self.candidates(
                PoolKind.WORKSPACE, None, targets, view, what
            )
            self.buffers.append(
                BufferInfo(
                    name=self.namer(hint),
                    name_hint=hint,
                    function=main_name,
                    kind=PoolKind.WORKSPACE,
                    role="input" if is_input else "output",
                    owner=view,
                    anchor=view,
                    type=cast(MemRefType, type_),
                    size=byte_size(cast(MemRefType, type_), view, what),
                    alignment=align,
                    live=self.io_live(view.result, is_input),
                    ticks=self.io_ticks(view.result, is_input),
                    targets=targets,
                    pools=pools,
                    placement=where,
                )
            )
        return found

    def add_io(self) -> None:
        """Main's inputs and outputs as workspace buffers (use_workspace_io)."""
        main, timeline = self.main, self.timeline
        in_names = string_list(main.attributes.get(INPUT_NAMES))
        out_names = string_list(main.attributes.get(OUTPUT_NAMES))
        n_in = len(in_names)
        if n_in + len(out_names) != len(main.args):
            raise located_error(
                main,
                f"use_workspace_io: the entry function has {len(main.args)} arguments "
                f"but names {n_in} inputs ({INPUT_NAMES}) and {len(out_names)} "
                f"outputs ({OUTPUT_NAMES}); aot-lower-main writes both",
            )
        attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
        for i, arg in enumerate(main.args):
            if not isinstance(arg.type, MemRefType):
                raise located_error(
                    main,
                    f"use_workspace_io: argument #{i} of the entry function is "
                    f"{arg.type}, not a memref; only buffers can live in a pool",
                )
            is_input = i < n_in
            hint = in_names[i] if is_input else out_names[i - n_in]
            what = f"{'input' if is_input else 'output'} '{hint}'"
            live = self.io_live(arg, is_input)
            targets = tuple(
                sorted({function_target(main), *timeline.value_targets.get(arg, ())})
            )
            pools, align = self.candidates(
                PoolKind.WORKSPACE, None, targets, main, what
            )
            placement = attrs[i].data.get(IO_POOL_ALLOCATION) if attrs else None
            self.buffers.append(
                BufferInfo(
                    name=self.namer(hint),
                    name_hint=hint,
                    function=main.sym_name.data,
                    kind=PoolKind.WORKSPACE,
                    role="input" if is_input else "output",
                    owner=arg,
                    anchor=main,
                    type=arg.type,  # pyright: ignore[reportUnknownArgumentType]
                    size=byte_size(arg.type, main, what),  # pyright: ignore
                    alignment=align,
                    live=live,
                    ticks=self.io_ticks(arg, is_input),
                    targets=targets,
                    pools=pools,
                    placement=(
                        placement if isinstance(placement, PoolAllocationAttr) else None
                    ),
                )
            )
