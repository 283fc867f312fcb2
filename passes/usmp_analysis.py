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
  pool.

Two workspace buffers *conflict* when both are non-empty and one of their live
intervals overlap. Candidate pools: the op's ``candidate_pools`` (in its
order) or every workspace/constant pool (in pool order), keeping only pools
that every target touching the buffer may access (see ``usmp_pools``).
Alignment: a buffer's offset is aligned to its pool's alignment and to its
element type's natural alignment; ``BufferInfo.alignment`` reports the largest
over its candidate pools.

Errors caused by the input (no entry function, a buffer type with no fixed
byte size, an unknown or inaccessible candidate pool) are located diagnostics
at the offending op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FixedBitwidthType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, BlockArgument, Operation

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    INPUT_NAMES,
    MAIN_FUNC,
    OUTPUT_NAMES,
    POOL_ARGS,
    AllocateConstOp,
    AllocateOp,
    PoolAllocationAttr,
    PoolInfoAttr,
)
from usmp.passes.usmp_liveness import (
    Interval,
    call_graph,
    compute_conflicts,
    device_target,
    function_steps,
    intervals,
    main_timeline,
)
from usmp.passes.usmp_pools import can_hold, describe_pool, function_target
from usmp.planning.model import Buffer, Pool, Problem

IO_ALLOCATION_ATTR = "tir.pool_allocation"
"""Argument attribute of main's inputs/outputs placed in the workspace by
``usmp-plan-memory{use_workspace_io=true}``."""


@dataclass(eq=False)
class BufferInfo:
    """One buffer to place (TVM's ``BufferInfo``)."""

    name: str
    """Unique in the module: the name hint for main's buffers and I/O,
    ``function/hint`` for an operator's scratch or constants."""
    name_hint: str
    function: str
    kind: str
    """``workspace`` or ``constant`` (the kind of pool it goes to)."""
    role: str
    """``allocate``, ``constant``, ``input`` or ``output``."""
    owner: AllocateOp | AllocateConstOp | BlockArgument
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
    conflicts: dict[str, tuple[str, ...]]
    """Workspace buffer name -> sorted names of the buffers it conflicts with."""

    def pool(self, name: str) -> PoolInfoAttr:
        for p in self.pools:
            if p.pool_name.data == name:
                return p
        raise KeyError(name)

    def by_name(self) -> dict[str, BufferInfo]:
        return {b.name: b for b in (*self.buffers, *self.constants)}

    def workspace_problem(self) -> Problem:
        """The planning problem of the workspace buffers (``planning.model``)."""
        live = {b.name: b.live for b in self.buffers}
        return Problem(
            tuple(_to_buffer(b, self.conflicts, live) for b in self.buffers),
            tuple(_to_pool(p) for p in self.pools if p.kind.data == "workspace"),
        )


def _to_pool(pool: PoolInfoAttr) -> Pool:
    return Pool(pool.pool_name.data, pool.size_limit, pool.alignment.data)


def _to_buffer(
    b: BufferInfo,
    conflicts: dict[str, tuple[str, ...]],
    live: dict[str, tuple[Interval, ...]],
) -> Buffer:
    """An interval buffer. With several live intervals the first one is the
    interval; the buffers met only in the others are listed as explicit
    conflicts, so the conflict graph the model derives is exact."""
    align = b.element_alignment  # the pool's own alignment applies on top
    if not b.live:
        return Buffer(b.name, b.size, 0, 0, align, b.pools)
    start, end = b.live[0]
    extra = frozenset(
        other
        for other in conflicts.get(b.name, ())
        if not any(s < end and start < e for s, e in live[other])
    )
    return Buffer(b.name, b.size, start, end, align, b.pools, extra)


def byte_size(type_: MemRefType, anchor: Operation, what: str) -> int:
    """Bytes of a statically shaped, contiguous memref in the default memory space."""
    if not isinstance(type_.layout, NoneAttr):
        raise located_error(
            anchor,
            f"{what}: {type_} has a layout map; usmp places only contiguous "
            "memrefs with the identity layout",
        )
    if not isinstance(type_.memory_space, NoneAttr):
        raise located_error(
            anchor,
            f"{what}: {type_} is in memory space {type_.memory_space}; usmp places "
            "buffers of the default memory space (choose pools to pin memory)",
        )
    element = type_.get_element_type()
    if not isinstance(element, FixedBitwidthType):
        raise located_error(
            anchor,
            f"{what}: element type {element} has no fixed size in bytes; "
            "expected an integer, float or complex element type",
        )
    count = 1
    for dim in type_.get_shape():
        count *= dim
    return count * element.size


def string_list(attr: Attribute | None) -> list[str]:
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr if isinstance(a, StringAttr)]  # pyright: ignore
    return []


def find_main(module: ModuleOp) -> func.FuncOp:
    mains = [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and MAIN_FUNC in op.attributes
    ]
    if len(mains) != 1:
        raise located_error(
            mains[1] if mains else (module.body.block.first_op or module),
            f"usmp needs exactly one entry function (a func.func with '{MAIN_FUNC}', "
            f"as aot-lower-main produces); found {len(mains)}",
        )
    if not mains[0].body.blocks:
        raise located_error(mains[0], "usmp: the entry function has no body")
    return mains[0]


def is_rewritten(module: ModuleOp) -> bool:
    """Has ``usmp-convert-pool-allocations`` already run on ``module``?"""
    return any(
        isinstance(op, func.FuncOp) and POOL_ARGS in op.attributes for op in module.ops
    )


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
) -> BufferInfoAnalysis:
    """Buffer info of every static allocation of ``module`` (never mutates it)."""
    return _Analyzer(module, pools).run(use_workspace_io)


class _Analyzer:
    def __init__(self, module: ModuleOp, pools: Sequence[PoolInfoAttr]):
        self.main = find_main(module)
        self.functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }
        self.pools = tuple(pools)
        self.pool_by_name = {p.pool_name.data: p for p in pools}
        self.timeline = main_timeline(self.main, self.functions)
        self.namer = _Namer()
        self.buffers: list[BufferInfo] = []
        self.constants: list[BufferInfo] = []

    def run(self, use_workspace_io: bool) -> BufferInfoAnalysis:
        main, timeline = self.main, self.timeline
        # main's I/O, main's own buffers, then each operator's, in module order
        attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
        if use_workspace_io or any(IO_ALLOCATION_ATTR in d.data for d in attrs):
            self.add_io()
        main_targets = {function_target(main)}
        for op in main.walk():
            if isinstance(op, (AllocateOp, AllocateConstOp)):
                used = timeline.uses.get(op.result, set())
                live = ((min(used), max(used) + 1),) if used else ()
                targets = main_targets | timeline.value_targets.get(op.result, set())
                self.add_allocation(op, self.main.sym_name.data, live, targets)
        running = function_steps(timeline, call_graph(self.functions))
        for name, f in self.functions.items():
            if f is main:
                continue
            live = intervals(running.get(name, ()))
            targets = timeline.call_targets.get(name, {function_target(f)})
            for op in f.walk():
                if isinstance(op, (AllocateOp, AllocateConstOp)):
                    self.add_allocation(op, name, live, targets)
        return BufferInfoAnalysis(
            main,
            tuple(timeline.steps),
            self.pools,
            tuple(self.buffers),
            tuple(self.constants),
            compute_conflicts((b.name, b.size, b.live) for b in self.buffers),
        )

    def candidates(
        self,
        kind: str,
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
                    needs = "constant" if kind == "constant" else "workspace buffer"
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
            mode = "read-write" if kind == "workspace" else "read"
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

    def add_allocation(
        self,
        op: AllocateOp | AllocateConstOp,
        function: str,
        live: tuple[Interval, ...],
        targets: set[str],
    ) -> None:
        if (own := device_target(op)) is not None:
            targets = targets | {own}
        hint = op.name_hint.data
        in_main = function == self.main.sym_name.data
        name = self.namer(hint if in_main else f"{function}/{hint}")
        is_const = isinstance(op, AllocateConstOp)
        kind = "constant" if is_const else "workspace"
        what = f"{'constant' if is_const else 'buffer'} '{hint}'"
        type_ = cast(MemRefType, op.result.type)
        requested = (
            None if op.candidate_pools is None else [a.data for a in op.candidate_pools]
        )
        ordered = tuple(sorted(targets))
        pools, align = self.candidates(kind, requested, ordered, op, what)
        info = BufferInfo(
            name=name,
            name_hint=hint,
            function=function,
            kind=kind,
            role="constant" if is_const else "allocate",
            owner=op,
            anchor=op,
            type=type_,
            size=byte_size(type_, op, what),
            alignment=align,
            live=() if is_const else live,
            targets=ordered,
            pools=pools,
            placement=op.pool_allocation,
        )
        (self.constants if is_const else self.buffers).append(info)

    def add_io(self) -> None:
        """Main's inputs and outputs as workspace buffers (use_workspace_io)."""
        main, timeline = self.main, self.timeline
        in_names = string_list(main.attributes.get(INPUT_NAMES))
        out_names = string_list(main.attributes.get(OUTPUT_NAMES))
        n_in, n_steps = len(in_names), len(timeline.steps)
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
            used = timeline.uses.get(arg, set())
            if is_input:  # written by the caller before main runs
                end = max(used) + 1 if used else min(1, n_steps)
                live = ((0, end),) if end > 0 else ()
            else:  # read by the caller after main returns
                start = min(used) if used else max(n_steps - 1, 0)
                live = ((start, n_steps),) if n_steps > start else ()
            targets = tuple(
                sorted({function_target(main), *timeline.value_targets.get(arg, ())})
            )
            pools, align = self.candidates("workspace", None, targets, main, what)
            placement = attrs[i].data.get(IO_ALLOCATION_ATTR) if attrs else None
            self.buffers.append(
                BufferInfo(
                    name=self.namer(hint),
                    name_hint=hint,
                    function=main.sym_name.data,
                    kind="workspace",
                    role="input" if is_input else "output",
                    owner=arg,
                    anchor=main,
                    type=arg.type,  # pyright: ignore[reportUnknownArgumentType]
                    size=byte_size(arg.type, main, what),  # pyright: ignore
                    alignment=align,
                    live=live,
                    targets=targets,
                    pools=pools,
                    placement=(
                        placement if isinstance(placement, PoolAllocationAttr) else None
                    ),
                )
            )


def merge_arg_attrs(f: func.FuncOp, updates: dict[int, dict[str, Attribute]]) -> None:
    """Add attributes to some arguments of ``f`` (for the passes that record
    buffer info or placements of main's inputs/outputs)."""
    if not updates:
        return
    attrs = (
        [dict(d.data) for d in f.arg_attrs.data]
        if f.arg_attrs is not None
        else [{} for _ in f.args]
    )
    for index, new in updates.items():
        attrs[index].update(new)
    f.arg_attrs = ArrayAttr(DictionaryAttr(d) for d in attrs)
