"""Liveness over main's call order, for ``usmp``'s buffer info analysis.

Not a pass. Main's *steps* are its top-level ops that touch memory (a
``tir.call``, a ``memref.copy``, any op using a buffer or holding a region),
numbered ``0..T-1`` in order; views, casts and reshapes of a buffer are not
steps but make their result an alias of it. From main's body this module
derives, in one walk:

* the steps at which each buffer (an allocation or an argument of main) is
  used, directly or through an alias;
* the steps at which each function runs: called by main at that step, or
  called (transitively) by a function running then;
* the targets that touch each buffer and run each function: a call's planned
  virtual device target, else the callee's ``tir.target`` (default ``c``).

``compute_conflicts`` turns live intervals into the conflict sets.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from usmp.dialects.device import VirtualDeviceAttr
from usmp.dialects.tir import (
    VIRTUAL_DEVICE,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    CallOp,
)
from usmp.passes.usmp_pools import DEFAULT_TARGET, function_target

Interval = tuple[int, int]
"""Half-open ``[start, end)`` in main's steps."""


def intervals(steps: Iterable[int]) -> tuple[Interval, ...]:
    """Sorted steps -> maximal runs as half-open intervals."""
    runs: list[list[int]] = []
    for s in sorted(set(steps)):
        if runs and runs[-1][1] == s:
            runs[-1][1] = s + 1
        else:
            runs.append([s, s + 1])
    return tuple((a, b) for a, b in runs)


@functools.cache
def _class_kind(cls: type[Operation]) -> str:
    """``call``, ``allocation`` (a static one), ``alloc`` (``memref.alloc``),
    ``view`` (``memref.view``) or empty, for ops of class ``cls`` (once per
    class: ``isinstance`` on xDSL's op classes is slow, and these run on
    every op of every loop nest)."""
    if issubclass(cls, (CallOp, func.CallOp)):
        return "call"
    if issubclass(cls, (AllocateOp, AllocateConstOp, AllocateStateOp)):
        return "allocation"
    if issubclass(cls, memref.AllocOp):
        return "alloc"
    if issubclass(cls, memref.ViewOp):
        return "view"
    return ""


def callee_of(op: Operation) -> str | None:
    if _class_kind(type(op)) == "call":
        return op.callee.string_value()  # pyright: ignore[reportAttributeAccessIssue]
    return None


def is_view_like(op: Operation) -> bool:
    """An op that only makes another memref of its operand (no memory access)."""
    # (the result types first: they rule out nearly every op of a loop nest,
    # which the liveness walks ask about one by one)
    results = op.results
    if not results:
        return False
    for r in results:
        if not isinstance(r.type, MemRefType):
            return False
    return not op.regions and _class_kind(type(op)) not in ("allocation", "alloc")


def call_graph(
    functions: dict[str, func.FuncOp],
    calls: Mapping[str, Sequence[Operation]] | None = None,
) -> dict[str, list[str]]:
    """Per function, the functions of ``functions`` it calls, in walk order
    (``calls``: each function's call ops, ``ModuleOps.calls``, if the caller
    has them; else each function is walked)."""
    graph: dict[str, list[str]] = {}
    for name, f in functions.items():
        callees: list[str] = []
        for op in f.walk() if calls is None else calls[name]:
            if (callee := callee_of(op)) is not None and callee in functions:
                callees.append(callee)
        graph[name] = callees
    return graph


def device_target(op: Operation | None) -> str | None:
    """The target of ``op``'s planned virtual device, if it names one."""
    if op is None:
        return None
    device = op.attributes.get(VIRTUAL_DEVICE)
    if isinstance(device, VirtualDeviceAttr) and device.target.data:
        return device.target.data
    return None


@dataclass
class MainTimeline:
    steps: list[str]
    uses: dict[SSAValue, set[int]]
    """Root buffer value (allocate result or main argument) -> steps using it."""
    value_targets: dict[SSAValue, set[str]]
    """Root buffer value -> targets of the calls it is passed to."""
    active: dict[str, set[int]]
    """Function name -> steps during which main calls it directly."""
    call_targets: dict[str, set[str]]
    """Function name -> targets main calls it on."""
    step_ops: list[Operation] = field(default_factory=list[Operation])
    """The top-level op of main at each step (its location names the step)."""


def defines_buffer(op: Operation, pool_args: Collection[SSAValue]) -> bool:
    """Does ``op`` create a buffer: a static allocation, or (after the
    rewrite) a view into a pool argument?"""
    kind = _class_kind(type(op))
    if kind == "allocation":
        return True
    return kind == "view" and op.source in pool_args  # pyright: ignore[reportAttributeAccessIssue]


def main_timeline(
    main: func.FuncOp,
    functions: dict[str, func.FuncOp],
    pool_args: Collection[SSAValue] = (),
) -> MainTimeline:
    """Steps, buffer uses and running functions of ``main`` (see module doc).
    ``pool_args``: main's pool arguments (views of them are buffers)."""
    roots: dict[SSAValue, SSAValue] = {arg: arg for arg in main.args}
    timeline = MainTimeline([], {}, {}, {}, {})

    def track(op: Operation) -> bool:
        """Record ``op`` if it makes a buffer or an alias; True if it did."""
        if defines_buffer(op, pool_args):
            roots[op.results[0]] = op.results[0]
            return True
        if is_view_like(op):
            base = next((roots[o] for o in op.operands if o in roots), None)
            if base is not None:
                for res in op.results:
                    roots[res] = base
            return True
        return False

    for top in main.body.block.ops:
        if isinstance(top, func.ReturnOp) or track(top):
            continue
        touched: set[SSAValue] = set()
        callees: list[tuple[str, str, list[SSAValue]]] = []
        for op in top.walk():
            if op is not top:
                track(op)
            touched.update(roots[o] for o in op.operands if o in roots)
            if (callee := callee_of(op)) is not None:
                target = device_target(op)
                if target is None:
                    f = functions.get(callee)
                    target = function_target(f) if f is not None else DEFAULT_TARGET
                args = [roots[o] for o in op.operands if o in roots]
                callees.append((callee, target, args))
        if not touched and not callees and not top.regions:
            continue
        step = len(timeline.steps)
        timeline.steps.append(callees[0][0] if len(callees) == 1 else top.name)
        timeline.step_ops.append(top)
        for r in touched:
            timeline.uses.setdefault(r, set()).add(step)
        for callee, target, args in callees:
            timeline.active.setdefault(callee, set()).add(step)
            timeline.call_targets.setdefault(callee, set()).add(target)
            for r in args:
                timeline.value_targets.setdefault(r, set()).add(target)
    return timeline


def function_steps(
    timeline: MainTimeline, graph: dict[str, list[str]]
) -> dict[str, set[int]]:
    """Steps during which each function runs (called from main, or transitively
    from a function that runs)."""
    active = {name: set(steps) for name, steps in timeline.active.items()}
    worklist = list(active)
    while worklist:
        caller = worklist.pop()
        for callee in graph.get(caller, ()):
            known = active.setdefault(callee, set())
            if not active[caller] <= known:
                known |= active[caller]
                worklist.append(callee)
    return active


def compute_conflicts(
    buffers: Iterable[tuple[str, int, tuple[Interval, ...]]],
) -> dict[str, tuple[str, ...]]:
    """``(name, size, live intervals)`` -> for each name, the sorted names of
    the buffers whose live intervals overlap one of its own (empty buffers
    conflict with nothing). A sweep over interval starts: O(n log n + pairs)."""
    buffers = list(buffers)
    pieces = sorted(
        (start, end, name)
        for name, size, live in buffers
        if size > 0
        for start, end in live
        if start < end
    )
    found: dict[str, set[str]] = {name: set() for name, _, _ in buffers}
    active: list[tuple[int, str]] = []
    for start, end, name in pieces:
        active = [(e, n) for e, n in active if e > start]
        for _, other in active:
            if other != name:
                found[name].add(other)
                found[other].add(name)
        active.append((end, name))
    return {name: tuple(sorted(others)) for name, others in found.items()}
