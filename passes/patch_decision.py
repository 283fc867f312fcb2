"""``patch-stage{evaluate=PIPELINE}``: keep the patch only if it plans smaller.

Not a pass: the decision ``patch-stage`` takes with its ``evaluate``
option, a nested pipeline (as MLIR's dynamic pipelines, e.g. the inliner's
``default-pipeline``) that plans a module, such as
``fuse-ops,dedupe-functions{patched_only=true},lower-ops,aot-lower-main,
usmp-plan-memory``.

``patch-stage`` chooses its grid on an estimate of the liveness peak that
knows neither the planner's overlaps nor its aliases, so a patched stage
can plan larger than the model did (VWW int8 with its I/O in the
workspace did, 39,168 B patched vs 37,280 B, before the stripes consumed
the input in place). When the stage was patched and
``evaluate`` is given, the pipeline runs on a clone of the patched module
and on a clone of the module as it was, and the patched function is kept
only if its planned workspace (the bytes of the workspace pools that hold
a buffer, I/O included when the pipeline places it there) is smaller; a tie
keeps the module unpatched. Both figures go into the decision
(``planned_patched``, ``planned_unpatched``); an unpatched winner's decision
reads ``applied = false``, the reason, and the estimate's peaks
(``estimated_peak_before``/``_after``). The pipeline's passes see the module
as the rest of the compile will, so the decision is the one the planner
makes; the module itself is left as the decision says (the rest of the
compile plans it again).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline

from usmp.dialects.tir import (
    POOL_ARGS,
    POOLS,
    PoolAllocationAttr,
    PoolInfoAttr,
    PoolKind,
)


def evaluation_passes(spec: str) -> tuple[ModulePass, ...]:
    """The passes of the ``evaluate`` option (a ``ValueError`` naming the
    problem if it is not a pipeline of the project's passes)."""
    from xdsl.utils.exceptions import ArgSpecParseError

    from usmp.passes import get_all_passes

    try:
        passes = PassPipeline.parse_spec(get_all_passes(), spec).passes
    except (ArgSpecParseError, ValueError) as e:
        raise ValueError(
            f"patch-stage: evaluate='{spec}' is not a pass pipeline: {e}"
        ) from None
    if any(p.name == "patch-stage" for p in passes):
        raise ValueError("patch-stage: the evaluate pipeline cannot patch again")
    return passes


def planned_workspace(module: ModuleOp) -> int | None:
    """Bytes of the workspace pools of planned ``module`` that hold a buffer
    (``usmp-plan-memory``'s placements or ``usmp``'s pool arguments); None
    if the module was not planned."""
    pools = module.attributes.get(POOLS)
    if not isinstance(pools, ArrayAttr):
        return None
    used: set[str] = set()
    for op in module.walk():
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, PoolAllocationAttr):
                used.add(attr.pool_name.data)
        args = op.attributes.get(POOL_ARGS)
        if isinstance(args, ArrayAttr):
            used.update(a.data for a in args.data if isinstance(a, StringAttr))
        if isinstance(op, func.FuncOp) and op.arg_attrs is not None:
            for arg in op.arg_attrs.data:
                for attr in arg.data.values():
                    if isinstance(attr, PoolAllocationAttr):
                        used.add(attr.pool_name.data)
    return sum(
        p.size.data
        for p in pools.data
        if isinstance(p, PoolInfoAttr)
        and p.kind.data is PoolKind.WORKSPACE
        and p.pool_name.data in used
    )


def _planned(ctx: Context, module: ModuleOp, passes: tuple[ModulePass, ...]) -> int:
    PassPipeline(passes).apply(ctx, module)
    planned = planned_workspace(module)
    if planned is None:
        names = ",".join(p.name for p in passes)
        raise ValueError(
            f"patch-stage: the evaluate pipeline ({names}) did not plan the module "
            "(no tir.pools); end it with usmp-plan-memory or usmp"
        )
    return planned


def _replace(module: ModuleOp, function: func.FuncOp, by: func.FuncOp) -> None:
    """Put ``by`` where the function named like ``function`` is in ``module``."""
    name = function.sym_name.data
    old = next(
        f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name
    )
    module.body.block.insert_op_before(by, old)
    old.detach()
    old.erase()


def _value(attr: Attribute, key: str) -> int:
    assert isinstance(attr, DictionaryAttr)
    value = attr.data[key]
    assert isinstance(value, IntegerAttr)
    return value.value.data


def decide(
    ctx: Context,
    module: ModuleOp,
    patched: func.FuncOp,
    original: func.FuncOp,
    decision: DictionaryAttr,
    passes: tuple[ModulePass, ...],
) -> tuple[func.FuncOp, DictionaryAttr]:
    """Plan ``module`` (whose ``patched`` function carries the applied
    ``decision``) and the module with ``original`` instead, each a clone,
    with ``passes``; keep the smaller (``original`` put back on a tie):
    the function ``module`` now holds and its decision (module note)."""
    with_patch = _planned(ctx, module.clone(), passes)
    unpatched = module.clone()
    _replace(unpatched, patched, original.clone())
    without = _planned(ctx, unpatched, passes)
    planned = {
        "planned_patched": IntegerAttr(with_patch, i64),
        "planned_unpatched": IntegerAttr(without, i64),
    }
    if with_patch < without:
        return patched, DictionaryAttr({**decision.data, **planned})
    _replace(module, patched, original)
    return original, DictionaryAttr(
        {
            "applied": BoolAttr.from_bool(False),
            "reason": StringAttr(
                f"no lower planned workspace ({with_patch:,} B patched vs "
                f"{without:,} B unpatched)"
            ),
            **planned,
            "estimated_peak_before": IntegerAttr(_value(decision, "peak_before"), i64),
            "estimated_peak_after": IntegerAttr(_value(decision, "peak_after"), i64),
        }
    )
