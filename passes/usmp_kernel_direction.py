"""``usmp-kernel-direction``: run some operators' loop nests backwards, so
that chains of overlapping buffers do not drift.

An operator whose loop nest writes its output in ascending address order can
put its output at most ``max_shift`` bytes above its dying input
(``usmp_overlap``); usually ``max_shift < 0``: the output starts *below* the
input. Along a chain of such operators (a depthwise, a pointwise, a
depthwise, ... convolution) each output sits lower than the one before, and
the drift adds up to the workspace. The same nest run backwards writes in
descending order and puts its output *above* its input (``min_shift``), so
alternating directions keeps the chain in place.

The pass follows main's calls in order. For each operator with one dying
input and one new output, it analyses both directions (``KernelTraces.facts``:
the access functions, else the trace)
and keeps the one that grows the chain's extent least (from the lowest start
to the highest end of the chain's buffers so far, each placed at its input's
position plus the direction's tightest shift); ties keep the nest as
``lower-ops`` wrote it.

Only a kernel called once, with no scratch, whose facts show every element
of every argument it may write (stored to, or used by an op the trace does
not model) written exactly once and never read, is reversed: its iterations are then
independent, so any order computes the same values. Reversing rewrites each
``scf.for`` without ``iter_args`` (the reductions, which carry values, keep
their order) to visit ``lb + last - iv``; the function gets the unit
attribute ``usmp.reversed``.

Requires the output of ``aot-lower-main``. Running it twice changes nothing
(the second run finds reversed kernels and leaves them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.dialects.tir import AllocateOp, CallOp, PoolInfoAttr
from usmp.lowering.walk import walk_ops
from usmp.passes.progress import report
from usmp.passes.usmp_ir import ModuleOps
from usmp.passes.usmp_kernel_trace import KernelTraces
from usmp.passes.usmp_pools import resolve_pools

if TYPE_CHECKING:
    from usmp.passes.usmp_analysis import BufferInfoAnalysis

REVERSED = "usmp.reversed"


@dataclass(frozen=True)
class UsmpKernelDirectionPass(ModulePass):
    """Reverse kernels where that keeps overlap chains in place (module doc)."""

    name = "usmp-kernel-direction"

    use_workspace_io: bool = False
    """Count main's inputs and outputs as buffers (as ``usmp`` will)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        choose_directions(op, resolve_pools(op, ""), self.use_workspace_io)


def choose_directions(
    module: ModuleOp,
    pools: Sequence[PoolInfoAttr],
    use_workspace_io: bool,
    traces: KernelTraces | None = None,
    analysis: BufferInfoAnalysis | None = None,
    ops: ModuleOps | None = None,
) -> list[str]:
    """Reverse the kernels worth it (module doc); their names, in call order.
    ``traces``: a cache the planning run shares (a reversed kernel's entry
    is its new trace); ``analysis``: ``analyze(module, pools,
    use_workspace_io)`` if the caller has it (reversing leaves it valid:
    ``usmp_analysis.with_overlaps``); ``ops``: ``ModuleOps.of(module)`` if
    the caller has it (reversing adds no op it lists)."""
    from usmp.passes.usmp_analysis import analyze

    traces = traces or KernelTraces()
    if analysis is None:
        analysis = analyze(module, pools, use_workspace_io)
    functions = analysis.functions or {}
    calls: dict[str, int] = {}
    for op in analysis.step_ops:
        if isinstance(op, CallOp):
            name = op.callee.string_value()
            calls[name] = calls.get(name, 0) + 1
    by_value = {}
    for b in analysis.buffers:
        owner = b.owner
        by_value[owner if not isinstance(owner, Operation) else owner.results[0]] = b
    position: dict[str, int] = {}
    """Buffer -> its start relative to its chain's first buffer."""
    chains: dict[str, str] = {}
    """Buffer -> the first buffer of its chain."""
    extent: dict[str, tuple[int, int]] = {}
    """Chain -> lowest start and highest end of its buffers so far."""
    reversed_names: list[str] = []
    for step, op in enumerate(analysis.step_ops):
        if not isinstance(op, CallOp):
            continue
        name = op.callee.string_value()
        report("kernel directions", step + 1, len(analysis.step_ops), name)
        f = functions.get(name)
        if f is None or calls.get(name) != 1 or REVERSED in f.attributes:
            continue
        args = {
            i: by_value[a]
            for i, a in enumerate(op.operands)
            if a in by_value and by_value[a].size
        }
        sources = [i for i, b in args.items() if b.last_step == step]
        targets = [i for i, b in args.items() if b.first_step == step]
        pairs = [(s, t) for s in sources for t in targets if s != t]
        for b in args.values():  # first sight of a buffer: its own chain
            position.setdefault(b.name, 0)
        if len(pairs) != 1:
            continue
        candidates = walk_ops(f) if ops is None else ops.definers.get(name, ())
        if any(isinstance(o, AllocateOp) for o in candidates):  # scratch
            continue
        s, t = pairs[0]
        src, dst = args[s], args[t]
        # every argument it may write is followed too (KernelTraces)
        forward = traces.facts(f, args.keys())
        written = traces.key(f, args.keys())[1]
        if (
            forward is None
            or not written <= forward.followed  # one it could not follow
            or not forward.independent()
        ):
            continue
        if s not in forward.followed or t not in forward.followed:
            continue
        base = position[src.name]
        chain = chains.setdefault(src.name, src.name)
        lo, hi = extent.setdefault(chain, (base, base + src.size))
        down = base + forward.max_shift(s, t)
        grown_down = (min(lo, down), max(hi, down + dst.size))
        if grown_down[1] - grown_down[0] <= max(hi - lo, dst.size):
            # no direction grows the chain less: skip the backward analysis
            position[dst.name], extent[chain] = down, grown_down
            chains[dst.name] = chain
            continue
        backward = traces.facts(f, args.keys(), reverse=True)
        if backward is None:
            continue
        up_shift = backward.min_shift(s, t)
        up = base + up_shift
        grown_up = (min(lo, up), max(hi, up + dst.size))
        if up_shift < src.size and (
            grown_up[1] - grown_up[0] < grown_down[1] - grown_down[0]
        ):
            reverse_loops(f)
            f.attributes[REVERSED] = UnitAttr()
            traces.replace_facts(f, args.keys(), backward)
            reversed_names.append(name)
            position[dst.name], extent[chain] = up, grown_up
        else:
            position[dst.name], extent[chain] = down, grown_down
        chains[dst.name] = chain
    return reversed_names


def reverse_loops(f: func.FuncOp) -> None:
    """Visit every ``scf.for`` of ``f`` without ``iter_args`` backwards."""
    loops = [op for op in f.walk() if isinstance(op, scf.ForOp) and not op.iter_args]
    for loop in loops:
        body = loop.body.block
        iv = body.args[0]
        lb, ub, step = loop.lb, loop.ub, loop.step
        one = arith.ConstantOp.from_int_and_width(1, iv.type)  # pyright: ignore
        span = arith.SubiOp(ub, lb)
        less = arith.SubiOp(span, one)
        count = arith.DivSIOp(less, step)
        offset = arith.MuliOp(count, step)
        last = arith.AddiOp(lb, offset)
        mirror = arith.AddiOp(lb, last)
        new_iv = arith.SubiOp(mirror, iv)
        ops: list[Operation] = [one, span, less, count, offset, last, mirror, new_iv]
        Rewriter.insert_op(ops, InsertPoint.at_start(body))
        mirrored = new_iv
        iv.replace_uses_with_if(
            mirrored.result, lambda u, keep=mirrored: u.operation is not keep
        )
