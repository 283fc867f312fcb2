"""Liveness per statement, inside the operators main calls (TVM's
``extract_buffer_info`` stmt indices), for ``usmp``'s buffer info analysis.

Not a pass. Main's steps (``usmp_liveness``) are refined into *ticks*: a step
whose op calls a function with a body becomes the ticks of that function's
statements -- each top-level op of its body that touches memory or holds a
region (a whole loop nest is one statement, as TVM extends a liveness inside
nested loops to the outermost loop) -- and a call among them is refined the
same way, recursively. Any other step is one tick. A function whose body has
no statement (only allocations) counts as one tick, like a declaration.

A buffer is live from the first to the last tick that touches it, directly or
through an alias (a view of it, or the parameter it is passed as):

* a buffer of main (a storage id, an input or output): one interval over the
  whole run, so it does not conflict with a scratch of an operator, or another
  of main's buffers, used only in statements where it is dead -- e.g. an
  input the kernel reads in its first loop and a scratch used in its second;
* an operator's scratch: one interval per invocation of its function (a
  function called twice has two); a scratch no statement touches is never
  live;
* a ``tir.allocate`` inside a parallel loop (``scf.parallel``)
  is per-iteration thread-local in TVM, not a buffer for the planner
  (``in_parallel_loop``).

A statement that runs a call it does not refine (a call inside a loop, or a
call in main's own loops) makes everything the callee (transitively) touches
live at that tick. Ticks are numbered ``0..N-1`` in execution order;
``step_ticks[s]`` is the half-open range step ``s`` covers.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.ir import Operation, SSAValue

from usmp.lowering.walk import walk_ops
from usmp.passes.progress import report
from usmp.passes.usmp_liveness import Interval, callee_of, defines_buffer, is_view_like

Root = SSAValue | tuple[Operation, int]
"""A buffer: main's allocation/view or argument, or an operator's allocation
at one invocation."""


def in_parallel_loop(op: Operation) -> bool:
    """Is ``op`` inside a parallel loop (per-iteration, thread-local)?"""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ParallelOp):
            return True
        parent = parent.parent_op()
    return False


def _has_body(f: func.FuncOp | None) -> bool:
    return (
        f is not None
        and bool(f.body.blocks)
        and any(_is_statement(op) for op in f.body.block.ops)
    )


def _is_statement(op: Operation) -> bool:
    """Does ``op`` count as a statement of its block (not a definition)?"""
    if isinstance(op, (func.ReturnOp, arith.ConstantOp)) or is_view_like(op):
        return False
    if defines_buffer(op, ()):
        return False
    return bool(op.regions) or bool(op.operands) or callee_of(op) is not None


@dataclass
class StatementTimeline:
    """What ``statement_timeline`` finds (see module doc)."""

    step_ticks: list[Interval] = field(default_factory=list[Interval])
    """Per main step, its half-open range of ticks."""
    hulls: dict[Root, list[int]] = field(default_factory=dict[Root, list[int]])
    """Root -> [first tick, last tick] touching it."""

    @property
    def total(self) -> int:
        return self.step_ticks[-1][1] if self.step_ticks else 0

    def live(self, root: Root) -> Interval | None:
        """Half-open ticks of ``root``, None if nothing touches it."""
        hull = self.hulls.get(root)
        return (hull[0], hull[1] + 1) if hull is not None else None

    def scratch(self, op: Operation) -> tuple[Interval, ...]:
        """Per invocation of its function, the ticks of a scratch allocation
        (merged where they touch)."""
        pieces = sorted(
            (h[0], h[1] + 1)
            for k, h in self.hulls.items()
            if isinstance(k, tuple) and k[0] is op
        )
        merged: list[list[int]] = []
        for s, e in pieces:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        return tuple((s, e) for s, e in merged)


class _Walker:
    def __init__(
        self,
        functions: Mapping[str, func.FuncOp],
        pool_args: Mapping[str, Collection[SSAValue]],
    ):
        self.functions = functions
        self.pool_args = pool_args
        self.result = StatementTimeline()
        self.ticks = 0
        self.invocations = 0
        self.active: list[str] = []

    def use(self, root: Root, tick: int) -> None:
        hull = self.result.hulls.get(root)
        if hull is None:
            self.result.hulls[root] = [tick, tick]
        else:
            hull[0] = min(hull[0], tick)
            hull[1] = max(hull[1], tick)

    def track(
        self, op: Operation, env: dict[SSAValue, Root], function: str, inv: int
    ) -> bool:
        """Record a buffer ``op`` defines or an alias it makes."""
        if defines_buffer(op, self.pool_args.get(function, ())):
            if not in_parallel_loop(op):
                env[op.results[0]] = (op, inv)
            return True
        if is_view_like(op):
            base = next((env[o] for o in op.operands if o in env), None)
            if base is not None:
                for r in op.results:
                    env[r] = base
            return True
        return False

    def bind(
        self, callee: func.FuncOp, call: Operation, env: dict[SSAValue, Root]
    ) -> dict[SSAValue, Root]:
        """The callee's parameters as the caller's buffers."""
        pairs = zip(callee.args, call.operands, strict=False)
        return {p: env[a] for p, a in pairs if a in env}

    def run(self, f: func.FuncOp, env: dict[SSAValue, Root]) -> None:
        """One invocation of ``f``, statement by statement."""
        name = f.sym_name.data
        inv = self.invocations
        self.invocations += 1
        self.active.append(name)
        for op in f.body.block.ops:
            if self.track(op, env, name, inv) or not _is_statement(op):
                continue
            callee = self.refinable(op)
            if callee is not None:
                self.run(callee, self.bind(callee, op, env))
            else:
                self.statement(op, env, name, inv)
        self.active.pop()

    def refinable(self, op: Operation) -> func.FuncOp | None:
        name = callee_of(op)
        f = self.functions.get(name) if name is not None else None
        if f is None or not _has_body(f) or name in self.active:
            return None
        return f

    def statement(
        self, top: Operation, env: dict[SSAValue, Root], function: str, inv: int
    ) -> None:
        """One tick: everything ``top`` touches (calls inside it entirely)."""
        tick = self.ticks
        self.ticks += 1
        self.touch(top, env, function, inv, tick)

    def touch(
        self,
        top: Operation,
        env: dict[SSAValue, Root],
        function: str,
        inv: int,
        tick: int,
        whole: bool = False,
    ) -> None:
        """Record what ``top`` touches at ``tick``; ``whole``: it is part of
        a call not refined, where even an allocation nothing touches counts."""
        for op in walk_ops(top):
            if self.track(op, env, function, inv):
                if whole and op.results and op.results[0] in env:
                    self.use(env[op.results[0]], tick)
                continue
            for o in op._operands:  # pyright: ignore[reportPrivateUsage]
                if o in env:
                    self.use(env[o], tick)
            name = callee_of(op)
            callee = self.functions.get(name) if name is not None else None
            if callee is not None and callee.body.blocks and name not in self.active:
                inner = self.invocations
                self.invocations += 1
                self.active.append(callee.sym_name.data)
                inner_env = self.bind(callee, op, env)
                # a call not refined: all of the callee, even a scratch no
                # statement touches, is live at this tick
                for child in callee.body.block.ops:
                    self.touch(
                        child, inner_env, callee.sym_name.data, inner, tick, True
                    )
                self.active.pop()


def statement_timeline(
    main: func.FuncOp,
    functions: Mapping[str, func.FuncOp],
    pool_args: Mapping[str, Collection[SSAValue]],
    step_ops: Sequence[Operation],
) -> StatementTimeline:
    """Ticks of ``main``'s steps (``step_ops``, as ``main_timeline`` found
    them) and the ticks touching every buffer (see module doc)."""
    walker = _Walker(functions, pool_args)
    main_name = main.sym_name.data
    env: dict[SSAValue, Root] = {arg: arg for arg in main.args}
    steps = set(step_ops)
    walker.active.append(main_name)
    for top in main.body.block.ops:
        if top not in steps:
            if defines_buffer(top, pool_args.get(main_name, ())):
                env[top.results[0]] = top.results[0]
            elif is_view_like(top):
                base = next((env[o] for o in top.operands if o in env), None)
                if base is not None:
                    for r in top.results:
                        env[r] = base
            continue
        start = walker.ticks
        done = len(walker.result.step_ticks) + 1
        report("liveness", done, len(step_ops), _step_name(top))
        callee = walker.refinable(top)
        if callee is not None:
            walker.run(callee, walker.bind(callee, top, env))
        if callee is None or walker.ticks == start:
            walker.statement(top, env, main_name, 0)
        walker.result.step_ticks.append((start, walker.ticks))
    return walker.result


def _step_name(op: Operation) -> str:
    callee = callee_of(op)
    return op.name if callee is None else callee
