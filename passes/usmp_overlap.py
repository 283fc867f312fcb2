"""Allowed overlaps between an operator's dying input and its output.

Not a pass. Two analyses over the output of ``usmp_analysis.analyze``:

* ``find_overlaps``: for every step of main that is one ``tir.call``, every
  workspace buffer read there for the last time (*source*) and every buffer
  first written there (*target*), both passed whole to the call: from the
  kernel's access functions (``usmp_kernel_symbolic``; its enumerated trace,
  ``usmp_kernel_trace``, where they do not decide) the largest shift
  ``d`` is computed such that placing the target at ``source + d'`` for any
  ``d' <= d`` never writes a byte of the source before the kernel's last read
  of it. A useful shift (above ``-target.size``) becomes a
  ``planning.model.Overlap`` the planners may use, when the two element
  types may alias in C (one type, or a one-byte type: ``_may_alias``; an
  optimising compiler may reorder an ``int32_t`` read and an ``int16_t``
  write of the same bytes). Elementwise kernels get
  ``0`` (in place), a depthwise convolution minus one output row, a 1x1
  convolution expanding C to 2C channels over N pixels about ``-C*N``.
* ``overlap_violations``: the independent check of a finished plan. For every
  pair of conflicting workspace buffers that share bytes in the plan, the pair
  must be a source and a target of one call (the source's last use, the
  target's first), and the kernel's facts must prove the planned shift safe
  (``_proven``), else a byte-by-byte replay of its traced access order at
  the planned addresses must find no byte written before its last read. The
  independent proof of the whole plan is ``usmp-replay``, which shares
  nothing with this analysis.

A third kind is between *different* calls (issue 31, patching that
consumes its input in place): a buffer (*source*, main's, or the model's
input in the workspace) whose later calls read only some of its bytes, and
a buffer first written after it was created (*target*). From main's views
(``memref.reinterpret_cast`` with a static offset, reshapes; any other view
counts as the whole buffer) ``_accessed`` finds the bytes of the source
each step passes to a call; the target may sit on the source's bytes that
no step from the target's first step on accesses: below the lowest such
byte (``max_shift``) or above the highest (``min_shift``). A patched stage's
stripes read the model input top down, so a later stripe's values and the
stripes' outputs may go over the input rows the earlier stripes consumed
(``dead_overlaps``). The step that first writes the target counts as
accessing every byte it passes, so the kernel's own order never matters;
the source may not be an output (the caller reads it after the run) nor a
state, the target not an input. ``overlap_violations`` accepts a shared
pair when the planned bytes meet no such later access (``_dead_check``);
``usmp-replay`` proves the whole plan independently.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseArrayBase, MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from usmp.dialects.tir import CallOp, PoolKind
from usmp.passes.progress import report
from usmp.passes.usmp_kernel_trace import (
    NEVER,
    KernelTraces,
    shift_is_safe,
)
from usmp.passes.usmp_liveness import is_view_like
from usmp.planning.model import Overlap, Placement

if TYPE_CHECKING:  # usmp_analysis imports this module
    from usmp.passes.usmp_analysis import BufferInfo, BufferInfoAnalysis

OVERLAPS_ATTR = "usmp.overlaps"
"""On a target buffer's allocation (``usmp-buffer-info``): source buffer name
-> max shift in bytes."""


@dataclass
class _Call:
    step: int
    callee: func.FuncOp
    args: dict[str, int]
    """Buffer name -> the one argument index it is passed whole as."""


def _root_value(v: SSAValue) -> SSAValue | None:
    """The buffer value ``v`` is a whole view of (same bytes), else None."""
    while isinstance(v.owner, Operation) and is_view_like(v.owner):
        op = v.owner
        if isinstance(op, memref.ViewOp):
            break
        if not op.operands or isinstance(op, memref.SubviewOp):
            return None
        v = op.operands[0]
    return v


def _buffer_values(analysis: BufferInfoAnalysis) -> dict[SSAValue, BufferInfo]:
    out: dict[SSAValue, BufferInfo] = {}
    for b in analysis.buffers:
        if isinstance(b.owner, BlockArgument):
            out[b.owner] = b
        elif b.owner.results:
            out[b.owner.results[0]] = b
    return out


def _calls(
    analysis: BufferInfoAnalysis, functions: Mapping[str, func.FuncOp]
) -> list[_Call]:
    """Steps that are one ``tir.call`` of a prim func, with the workspace
    buffers passed whole, each exactly once."""
    values = _buffer_values(analysis)
    calls: list[_Call] = []
    for step, op in enumerate(analysis.step_ops):
        if not isinstance(op, CallOp):
            continue
        callee = functions.get(op.callee.string_value())
        if callee is None or not callee.body.blocks:
            continue
        seen: dict[str, list[int]] = {}
        for i, arg in enumerate(op.operands):
            t = arg.type
            if not isinstance(t, MemRefType):
                continue
            root = _root_value(arg)
            b = values.get(root) if root is not None else None
            if b is None:
                continue
            if b.kind != PoolKind.WORKSPACE or _bytes(t) != b.size:
                seen.setdefault(b.name, []).extend([i, -1])  # partial: no overlap
                continue
            seen.setdefault(b.name, []).append(i)
        calls.append(
            _Call(step, callee, {n: ix[0] for n, ix in seen.items() if len(ix) == 1})
        )
    return calls


def _may_alias(f: func.FuncOp, a: int, b: int) -> bool:
    """May C code read argument ``a`` and write ``b`` of ``f`` through
    overlapping memory without breaking C's aliasing rules? Yes when both
    have one element type, or either is a one-byte type (``char`` may alias
    anything); an ``int32_t`` read and an ``int16_t`` write of the same bytes
    may be reordered by an optimising compiler (strict aliasing)."""
    types = [f.args[i].type for i in (a, b)]
    elements = [t.get_element_type() for t in types if isinstance(t, MemRefType)]
    if len(elements) != 2:
        return False
    x, y = elements
    return x == y or any(getattr(e, "size", 0) == 1 for e in elements)


def _bytes(t: MemRefType) -> int:
    element = t.get_element_type()
    count = 1
    for d in t.get_shape():
        count *= d
    return count * getattr(element, "size", 0)


def find_overlaps(
    analysis: BufferInfoAnalysis,
    functions: Mapping[str, func.FuncOp],
    traces: KernelTraces | None = None,
    *,
    consumed: bool = True,
) -> tuple[Overlap, ...]:
    """The allowed overlaps of the analysed module (see module doc), in step
    order; with ``consumed``, also those over bytes of a buffer that no later
    step accesses (``dead_overlaps``)."""
    traces = traces or KernelTraces()
    by_name = {b.name: b for b in analysis.buffers}
    found: list[Overlap] = []
    steps = len(analysis.step_ops)
    for call in _calls(analysis, functions):
        t = call.step
        report("overlaps", t + 1, steps, call.callee.sym_name.data)
        once = [n for n in call.args if len(by_name[n].live) == 1]
        sources = [n for n in once if by_name[n].last_step == t]
        targets = [n for n in once if by_name[n].first_step == t]
        if not sources or not targets:
            continue
        facts = traces.facts(call.callee, call.args.values())
        if facts is None:
            continue
        for s in sources:
            sa = call.args[s]
            if sa not in facts.followed or facts.writes(sa):
                continue  # not followed, or the kernel writes it
            for tg in targets:
                ta = call.args[tg]
                if tg == s or ta not in facts.followed or by_name[tg].role == "input":
                    continue
                if not facts.covered(ta):
                    continue  # a byte it does not write holds an older value
                if not _may_alias(call.callee, sa, ta):
                    continue
                below = facts.max_shift(sa, ta)
                above: int | None = facts.min_shift(sa, ta)
                if above >= by_name[s].size:
                    above = None
                if below > -by_name[tg].size or above is not None:
                    found.append(Overlap(s, tg, below, above))
    return _merged(found, dead_overlaps(analysis) if consumed else [])


def _merged(first: list[Overlap], more: list[Overlap]) -> tuple[Overlap, ...]:
    """One overlap per (source, target): each allows a set of safe shifts,
    so their union is safe (the largest ``max_shift``, the smallest
    ``min_shift``)."""
    out: dict[tuple[str, str], Overlap] = {}
    for o in (*first, *more):
        had = out.get((o.source, o.target))
        if had is not None:
            above = [x for x in (had.min_shift, o.min_shift) if x is not None]
            o = Overlap(
                o.source,
                o.target,
                max(had.max_shift, o.max_shift),
                min(above) if above else None,
            )
        out[(o.source, o.target)] = o
    return tuple(out.values())


_END = 1 << 62
"""The step of an access after the run (main's return)."""

Access = tuple[int, int, int]
"""(step, first byte, end byte) of a buffer a step of main passes on."""


def _span_bytes(t: MemRefType) -> int | None:
    """Bytes from a view's first element to one past its last, or None if
    its shape, strides or element size are not static."""
    width = getattr(t.get_element_type(), "size", 0)
    dims = t.get_shape()
    strides = t.get_strides()
    if not width or any(d < 0 for d in dims) or strides is None:
        return None
    if any(d == 0 for d in dims):
        return 0
    if any(x is None or x < 0 for x in strides):
        return None
    return (1 + sum((d - 1) * x for d, x in zip(dims, strides, strict=True))) * width  # pyright: ignore[reportOperatorIssue]


def _accesses(
    value: SSAValue, size: int, main: func.FuncOp, step_of: dict[Operation, int]
) -> list[Access] | None:
    """Every access of the buffer ``value`` by main's steps, through its
    views (module note); None if an op using it is no step of main."""
    out: list[Access] = []
    todo: list[tuple[SSAValue, int, int]] = [(value, 0, size)]
    while todo:
        v, lo, hi = todo.pop()
        for use in v.uses:
            op = use.operation
            if is_view_like(op):
                t = op.results[0].type
                part: tuple[int, int] = (lo, hi)
                if isinstance(op, memref.ReinterpretCastOp):
                    offsets = op.static_offsets
                    span = _span_bytes(t) if isinstance(t, MemRefType) else None
                    if op.offsets or not isinstance(offsets, DenseArrayBase):
                        span = None
                    if span is not None and isinstance(t, MemRefType):
                        width = getattr(t.get_element_type(), "size", 0)
                        first = int(offsets.get_values()[0]) * width  # pyright: ignore
                        part = max(first, 0), min(first + span, size)
                    else:
                        part = 0, size
                elif not isinstance(op, memref.CollapseShapeOp | memref.ExpandShapeOp):
                    part = 0, size  # another view: all of it
                todo.extend((r, part[0], part[1]) for r in op.results)
                continue
            top: Operation | None = op
            while top is not None and top.parent_op() is not main:
                top = top.parent_op()
            if top is None:
                return None
            if isinstance(top, func.ReturnOp):
                out.append((_END, 0, size))
            elif top in step_of:
                out.append((step_of[top], lo, hi))
            else:
                return None
    return out


def _accessed(analysis: BufferInfoAnalysis) -> dict[str, list[Access]]:
    """The accesses of every workspace buffer whose accesses are all known
    (``_accesses``), by name."""
    step_of = {op: i for i, op in enumerate(analysis.step_ops)}
    out: dict[str, list[Access]] = {}
    for value, b in _buffer_values(analysis).items():
        if b.kind != PoolKind.WORKSPACE or not b.size:
            continue
        found = _accesses(value, b.size, analysis.main, step_of)
        if found is not None:
            out[b.name] = found
    return out


def _types_may_alias(a: MemRefType, b: MemRefType) -> bool:
    """``_may_alias`` for two buffers' element types."""
    x, y = a.get_element_type(), b.get_element_type()
    return x == y or any(getattr(e, "size", 0) == 1 for e in (x, y))


def _may_share_dead(source: BufferInfo, target: BufferInfo) -> bool:
    """May ``target`` go over bytes of ``source`` no later step accesses
    (module note): a source that dies inside the run, a target the run
    writes, one live interval each, element types that may alias."""
    return (
        source.role in ("input", "allocate")
        and target.role != "input"
        and source.kind == target.kind == PoolKind.WORKSPACE
        and len(source.live) == 1
        and len(target.live) == 1
        and source.size > 0
        and target.size > 0
        and _types_may_alias(source.type, target.type)
    )


def dead_overlaps(analysis: BufferInfoAnalysis) -> list[Overlap]:
    """Overlaps of a target over the bytes of a source that no step from the
    target's first step on accesses (module note), for every conflicting
    pair where those bytes exist."""
    accessed = _accessed(analysis)
    by_name = {b.name: b for b in analysis.buffers}
    found: list[Overlap] = []
    for source in analysis.buffers:
        accesses = accessed.get(source.name)
        if not accesses:
            continue
        # the hull of the accesses from each step on (suffix minima/maxima)
        accesses = sorted(accesses)
        steps = [a[0] for a in accesses]
        low = [a[1] for a in accesses]
        high = [a[2] for a in accesses]
        for k in range(len(accesses) - 2, -1, -1):
            low[k] = min(low[k], low[k + 1])
            high[k] = max(high[k], high[k + 1])
        for name in analysis.conflicts.get(source.name, ()):
            target = by_name.get(name)
            if target is None or not _may_share_dead(source, target):
                continue
            first = target.first_step
            k = bisect_left(steps, first if first is not None else _END)
            if k == len(steps):
                continue
            lo, hi = low[k], high[k]
            if lo <= 0 and hi >= source.size:
                continue
            found.append(
                Overlap(
                    source.name,
                    target.name,
                    lo - target.size,
                    hi if hi < source.size else None,
                )
            )
    return found


def _dead_verdict(
    accessed: dict[str, list[Access]], source: BufferInfo, target: BufferInfo, d: int
) -> str | None:
    """With ``target`` at ``source + d``: None if the pair is not of the
    kind ``dead_overlaps`` allows, '' if no step from the target's first
    on accesses a shared byte of the source, else which step does."""
    accesses = accessed.get(source.name)
    first = target.first_step
    if accesses is None or first is None or not _may_share_dead(source, target):
        return None
    lo, hi = max(d, 0), min(d + target.size, source.size)
    for step, a, b in sorted(accesses):
        if step >= first and max(a, lo) < min(b, hi):
            when = "after the run" if step == _END else f"at step {step}"
            return (
                f"'{target.name}' (first written at step {first}) is placed over "
                f"byte(s) {max(a, lo)}..{min(b, hi) - 1} of '{source.name}', which "
                f"are still accessed {when}"
            )
    return ""


def overlap_violations(
    analysis: BufferInfoAnalysis,
    functions: Mapping[str, func.FuncOp],
    placements: Mapping[str, Placement],
    traces: KernelTraces | None = None,
) -> list[str]:
    """Every conflicting pair of workspace buffers that shares a byte in
    ``placements`` without a kernel replay proving it safe (see module doc)."""
    buffers = {b.name: b for b in analysis.buffers if b.size and b.name in placements}
    shared: list[tuple[BufferInfo, BufferInfo, int]] = []
    for a in buffers.values():  # each conflicting pair once (an edge list)
        pa = placements[a.name]
        for name in analysis.conflicts.get(a.name, ()):
            b = buffers.get(name)
            if b is None or name <= a.name:
                continue
            pb = placements[name]
            if pa.pool != pb.pool:
                continue
            if max(pa.offset, pb.offset) < min(pa.offset + a.size, pb.offset + b.size):
                shared.append((a, b, pb.offset - pa.offset))
    if not shared:
        return []
    traces = traces or KernelTraces()
    calls = {c.step: c for c in _calls(analysis, functions)}
    accessed = _accessed(analysis)
    violations: list[str] = []
    for k, (a, b, shift) in enumerate(shared):
        report("plan check", k + 1, len(shared), f"{a.name} and {b.name}")
        dead = [
            _dead_verdict(accessed, a, b, shift),
            _dead_verdict(accessed, b, a, -shift),
        ]
        if "" in dead:
            continue  # on bytes of the other that no later step accesses
        verdict = _replay(a, b, shift, calls, traces)
        if verdict == _UNRELATED:
            verdict = next((v for v in dead if v), verdict)
        if verdict:
            violations.append(
                f"buffers '{a.name}' and '{b.name}' share bytes "
                f"(offsets {placements[a.name].offset} and "
                f"{placements[b.name].offset} in pool '{placements[a.name].pool}'): "
                + verdict
            )
    return violations


_UNRELATED = (
    "they are live together, and neither is read for the last time by the "
    "call that first writes the other"
)


def _replay(
    a: BufferInfo,
    b: BufferInfo,
    shift: int,
    calls: dict[int, _Call],
    traces: KernelTraces,
) -> str:
    """'' if ``b`` at ``a + shift`` is safe, else why not."""
    why = _UNRELATED
    for source, target, d in ((a, b, shift), (b, a, -shift)):
        step = source.last_step
        if len(source.live) != 1 or len(target.live) != 1:
            continue
        if step is None or target.first_step != step:
            continue
        call = calls.get(step)
        if call is None or source.name not in call.args or target.name not in call.args:
            continue
        if _proven(call, source, target, d, traces):
            return ""
        trace = traces.times(call.callee, call.args.values())
        if trace is None:
            return f"the kernel of step {step} cannot be traced"
        src = trace.get(call.args[source.name])
        dst = trace.get(call.args[target.name])
        if src is None or dst is None:
            return f"the kernel of step {step} cannot be traced for these arguments"
        if (src.first_write != NEVER).any():
            # the kernel writes it: not the source (a one-step program's
            # input and output both start and end at that step)
            why = f"'{call.callee.sym_name.data}' writes '{source.name}'"
            continue
        lo, hi = max(0, d), min(len(src.last_read), d + len(dst.first_write))
        kept = dst.first_write[max(lo - d, 0) : max(hi - d, 0)] == NEVER
        if target.role == "input" or kept.any():
            return (
                f"'{call.callee.sym_name.data}' (step {step}) does not write every "
                f"shared byte of '{target.name}': they hold a value from before"
            )
        bad = shift_is_safe(src, dst, d)
        if bad:
            return (
                f"'{call.callee.sym_name.data}' (step {step}) writes '{target.name}' "
                f"over byte(s) {', '.join(map(str, bad))} of '{source.name}' before "
                "reading them for the last time"
            )
        return ""
    return why


def _proven(
    call: _Call, source: BufferInfo, target: BufferInfo, d: int, traces: KernelTraces
) -> bool:
    """Do the kernel's facts prove ``target`` at ``source + d`` safe (the
    kernel never writes the source, writes every byte of the target, and
    ``d`` is at most the largest shift below or at least the smallest
    above)? If not, the byte-by-byte replay of its trace decides."""
    facts = traces.facts(call.callee, call.args.values())
    if facts is None or target.role == "input":
        return False
    s, t = call.args[source.name], call.args[target.name]
    if s not in facts.followed or t not in facts.followed:
        return False
    if facts.writes(s) or not facts.covered(t):
        return False
    return d <= facts.max_shift(s, t) or d >= facts.min_shift(s, t)
