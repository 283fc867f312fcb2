"""``usmp-buffer-info``: show what the buffer info analysis sees (a test pass).

Runs ``usmp_analysis.analyze`` and writes its result as discardable
attributes, so that FileCheck can check the analysis on its own:

* on every ``tir.allocate`` / ``tir.allocate_const`` (and, with
  ``use_workspace_io``, on each input/output argument of the entry function)::

      usmp.buffer = "op/scratch"          unique buffer name used below
      usmp.size = 64 : i64                bytes
      usmp.alignment = 16 : i64           largest alignment of its candidate pools
      usmp.live = array<i64: 2, 3, 7, 8>  half-open live intervals, flattened
                                          ([2, 3) and [7, 8)); absent for constants
      usmp.pools = ["sram", "dram"]       candidate pools, in order
      usmp.conflicts = ["sid_1", ...]     buffers it must not overlap (workspace)
      usmp.ticks = array<i64: 4, 9>       live intervals in statements, what the
                                          conflicts come from
                                          (``usmp_statement_liveness``)
      usmp.overlaps = {sid_0 = -384 : i64} with ``overlap``: sources it may
                                          overlap, each with the largest
                                          allowed shift of its start, or
                                          ``array<i64: max, min>`` when it may
                                          also start ``min`` bytes or more
                                          above (``usmp_overlap``)

* on the entry function ``usmp.steps = ["op0", "op1", ...]``: the label of each
  step of main's call order (the callee, or the op name), i.e. what the
  numbers in ``usmp.live`` count.

Options ``pools``, ``use_workspace_io`` and ``overlap`` mean what they mean
for ``usmp-plan-memory``. The pass changes nothing else; running it twice gives
the same attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, BlockArgument
from xdsl.passes import ModulePass

from usmp.dialects.tir import PoolKind
from usmp.passes.usmp_analysis import BufferInfo, analyze
from usmp.passes.usmp_ir import merge_arg_attrs
from usmp.passes.usmp_overlap import OVERLAPS_ATTR
from usmp.passes.usmp_pools import parse_pools_option, resolve_pools

STEPS_ATTR = "usmp.steps"


@dataclass(frozen=True)
class UsmpBufferInfoPass(ModulePass):
    """Annotate every buffer with its buffer info (see module doc)."""

    name = "usmp-buffer-info"

    use_workspace_io: bool = False
    """Also report the entry function's inputs and outputs as buffers."""
    pools: str = ""
    """Pools, ``NAME:KIND[:SIZE][:align=N][:access=T/rw+...]`` comma separated
    (see ``usmp_pools``); empty: ``tir.pools`` or defaults."""
    overlap: bool = False
    """Also show the allowed overlaps (``usmp.overlaps``)."""

    def __post_init__(self) -> None:
        if self.pools:
            parse_pools_option(self.pools)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        analysis = analyze(
            op, resolve_pools(op, self.pools), self.use_workspace_io, self.overlap
        )
        shifts: dict[str, dict[str, Attribute]] = {}
        for o in analysis.overlaps:
            shifts.setdefault(o.target, {})[o.source] = (
                IntegerAttr(o.max_shift, i64)
                if o.min_shift is None
                else DenseArrayBase.from_list(i64, [o.max_shift, o.min_shift])
            )
        main = analysis.main
        main.attributes[STEPS_ATTR] = ArrayAttr(StringAttr(s) for s in analysis.steps)
        io: dict[int, dict[str, Attribute]] = {}
        for b in (*analysis.buffers, *analysis.constants):
            attrs = info_attributes(b, analysis.conflicts.get(b.name))
            if b.name in shifts:
                attrs[OVERLAPS_ATTR] = DictionaryAttr(shifts[b.name])
            if isinstance(b.owner, BlockArgument):
                io[b.owner.index] = attrs
            else:
                b.owner.attributes.update(attrs)
        merge_arg_attrs(main, io)


def info_attributes(
    b: BufferInfo, conflicts: tuple[str, ...] | None
) -> dict[str, Attribute]:
    attrs: dict[str, Attribute] = {
        "usmp.buffer": StringAttr(b.name),
        "usmp.size": IntegerAttr(b.size, i64),
        "usmp.alignment": IntegerAttr(b.alignment, i64),
    }
    if b.kind == PoolKind.WORKSPACE:
        flat = [x for interval in b.live for x in interval]
        attrs["usmp.live"] = DenseArrayBase.from_list(i64, flat)
    attrs["usmp.pools"] = ArrayAttr(StringAttr(p) for p in b.pools)
    if b.kind == PoolKind.WORKSPACE:
        attrs["usmp.conflicts"] = ArrayAttr(StringAttr(c) for c in conflicts or ())
        flat = [x for interval in b.ticks for x in interval]
        attrs["usmp.ticks"] = DenseArrayBase.from_list(i64, flat)
    return attrs
