"""``dedupe-functions``: one primitive function for equal operators.

What it does
    Finds the ``relay.primitive`` functions that are equal but for their
    name (xDSL's structural equivalence: the same ops, attributes,
    properties, types and uses, whatever the SSA names and locations) and
    keeps the first of each class: the others are erased and every
    ``relay.call`` of them calls the first. One function is one operator
    function in the C, so equal kernels share their code and their constant
    tables (the interior stripes of a patched stage: 10 of VWW int8's 36
    stripe kernels)::

        func.func @fused_conv_1(...) {relay.primitive} { A }
        func.func @fused_conv_2(...) {relay.primitive} { A }
        %y = relay.call @fused_conv_2(%x)
      ->
        func.func @fused_conv_1(...) {relay.primitive} { A }
        %y = relay.call @fused_conv_1(%x)

Options
    ``patched_only`` (default false): only in a module ``patch-stage``
    patched (a function whose ``relay.patch`` decision has ``applied =
    true``). ``usmp-compile --patch auto`` runs it so: merging the equal
    functions of any other model (e.g. the float KWS's equal activation
    kernels) would change the C of compiles that do not patch.

Requires
    The output of ``fuse-ops`` (primitive functions called by
    ``relay.call``); before ``lower-ops``.

Idempotence
    After a run no two primitive functions are equal: a second run changes
    nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from usmp.dialects import relay
from usmp.passes.patch_stage import PATCH_ATTR


@dataclass(frozen=True)
class DedupeFunctionsPass(ModulePass):
    """Merge the primitive functions that are equal but for their name."""

    name = "dedupe-functions"

    patched_only: bool = False
    """Only in a module whose stage ``patch-stage`` patched."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.patched_only or is_patched(op):
            dedupe_functions(op)


def is_patched(module: ModuleOp) -> bool:
    """Whether ``patch-stage`` patched a function of ``module``."""
    for f in module.ops:
        decision = f.attributes.get(PATCH_ATTR)
        if isinstance(decision, DictionaryAttr):
            applied = decision.data.get("applied")
            if isinstance(applied, IntegerAttr) and applied.value.data:
                return True
    return False


def _signature(f: func.FuncOp) -> tuple[Attribute, tuple[str, ...]]:
    """A cheap key equal functions share: their type and their op names."""
    return f.function_type, tuple(o.name for o in f.walk())


def equal_but_name(a: func.FuncOp, b: func.FuncOp) -> bool:
    """``a`` and ``b`` are structurally equivalent but for ``sym_name``."""
    props = {k: v for k, v in a.properties.items() if k != "sym_name"}
    other = {k: v for k, v in b.properties.items() if k != "sym_name"}
    return (
        props == other
        and a.attributes == b.attributes
        and a.body.is_structurally_equivalent(b.body)
    )


def dedupe_functions(module: ModuleOp) -> int:
    """Merge the equal primitive functions of ``module`` (module note); how
    many were erased."""
    kept: dict[tuple[Attribute, tuple[str, ...]], list[func.FuncOp]] = {}
    merged: dict[str, str] = {}
    for f in list(module.ops):
        if not isinstance(f, func.FuncOp) or relay.PRIMITIVE not in f.attributes:
            continue
        candidates = kept.setdefault(_signature(f), [])
        first = next((g for g in candidates if equal_but_name(f, g)), None)
        if first is None:
            candidates.append(f)
            continue
        merged[f.sym_name.data] = first.sym_name.data
        f.detach()
        f.erase()
    if merged:
        for op in module.walk():
            if isinstance(op, relay.CallOp) and op.callee.string_value() in merged:
                op.callee = SymbolRefAttr(merged[op.callee.string_value()])
    return len(merged)
