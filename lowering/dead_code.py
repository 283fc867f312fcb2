"""Erase the values a lowered kernel computes and never uses.

A fused group can leave work nobody reads: an accumulator whose epilogue
folded to a constant (a clip to one value), with its loads and loops. C
compilers warn about such variables ("set but not used"), and the usmp
analyses would trace their loads. ``erase_dead_code`` removes every op whose
results are unused and that has no effect but its results: arithmetic,
``math``, loads, ``Pure`` ops, the DSP helpers' calls (``dsp.ARITHMETIC``),
and ``scf.for``/``scf.if`` whose bodies have
no other ops. It does not rely on xDSL's ``dce``: in xDSL 0.74
``arith.extsi`` and ``arith.remui`` carry no ``Pure`` trait, so its DCE
keeps them and everything they use.
"""

from __future__ import annotations

from xdsl.dialects import memref, scf
from xdsl.ir import Operation, Region
from xdsl.traits import IsTerminator, Pure

from usmp.lowering.dsp import is_arithmetic_call
from usmp.lowering.walk import walk_ops


def _effect_free(op: Operation) -> bool:
    """``op`` (and every op nested in it) does nothing but compute values."""
    for o in walk_ops(op):
        if o.has_trait(IsTerminator) and o is not op:
            continue
        if isinstance(o, (scf.ForOp, scf.IfOp, memref.LoadOp)):
            continue
        if o.has_trait(Pure) or o.dialect_name() in ("arith", "math"):
            continue
        if is_arithmetic_call(o):  # a DSP helper (lower-ops{mcpu=...})
            continue
        return False
    return True


def erase_dead_code(region: Region) -> int:
    """Erase the dead values of ``region`` (see module doc), users first, until
    none is left; how many ops were erased (nested ones included)."""
    erased = 0
    changed = True
    while changed:
        changed = False
        for op in reversed(list(walk_ops(region))):
            # an op with results, none used (read from the use links: an
            # ``r.uses`` view per result was most of the walk's time; and
            # inline, not a call per op of the kernels)
            results = op.results
            if not results:
                continue
            for r in results:
                if r.first_use is not None:
                    break
            else:  # results, none of them used
                if op.parent is None or op.has_trait(IsTerminator):
                    continue
                if not _effect_free(op):
                    continue
                erased += sum(1 for _ in walk_ops(op))
                op.detach()
                op.erase()
                changed = True
    return erased
