"""``patch-stage``: patch-based execution of a CNN's first stage (MCUNetV2).

What it does
    Finds the *stage*: the graph of row-local relay operators starting at a
    model input (NHWC, batch 1): ``relay.conv2d`` (NHWC, any kernel, stride,
    dilation, groups), ``relay.max_pool2d`` / ``relay.avg_pool2d`` (NHWC),
    elementwise / broadcasting operators whose stage operands have the
    op's shape (the ADD of a residual block's two branches) and whose other
    operands do not vary along H and whose ``axis`` (if any) is not H, and
    ``relay.concatenate`` along W or C (``patch_stage_graph``). Its *layers*
    are the places it can end: an op whose result is the only stage value
    the rest of the model reads and is not fused into its consumer's kernel
    (a layer ends after a kernel, never inside a residual block).

    Then it chooses the depth (how many layers) and the grid (``n x m``
    tiles: ``n x 1`` are row stripes) with the lowest estimated peak memory
    whose recomputed halos cost at most ``budget`` x the model's MACs, ties
    going to the fewest estimated Cortex-M instructions
    (``usmp.planning.patch_graph``, ``usmp.planning.patch_speed``), and
    rewrites the stage. A tile is a stripe's rows times a range of columns
    (its input a ``relay.strided_slice`` of rows and columns, each window
    padded only at the true borders in both dimensions, the tiles of a row
    joined along W); for row stripes: per stripe, the
    input rows it needs (``relay.strided_slice``; the receptive field of the
    stripe's output rows), each operator cloned on the rows its consumers
    read (their hull; a branch reading fewer rows reads a row slice of it)
    (a convolution or pooling keeps its padding only at the true borders of
    its input: ``padding`` top/bottom become the rows outside the input),
    and the stripes joined by ``relay.concatenate`` along H, which replaces
    the stage's output. Every operator keeps its arithmetic, so the model
    computes the same values, bit for bit; the large early feature maps now
    exist one stripe at a time::

        %s0 = relay.strided_slice %input {begin = array<i64: 0, 0, 0, 0>,
                  end = array<i64: 1, 19, 96, 3>, strides = ...}
        %c0 = relay.conv2d %s0, %w {strides = array<i64: 2, 2>,
                  padding = array<i64: 0, 0, 0, 1>, ...}   // no bottom pad
        ...
        %out = relay.concatenate %y0, %y1, ... {axis = 1 : i64}

    The decision is recorded on the function as ``relay.patch``: ``depth``
    (layers patched), ``grid`` ([rows, columns] of tiles), ``stripe_rows``
    (output rows per row of tiles), ``tile_cols`` (output columns per column
    of tiles), ``layers`` (the stage's layers available),
    the estimated peak before and after, the stage's MACs and the extra
    MACs, ``instructions_before``/``_after`` (the stage's estimated Cortex-M
    instructions unpatched and patched); or ``applied = false`` and a
    ``reason`` (no stage, or patching does not lower the peak within the
    budget). The model is then left as
    it was.

Options
    ``budget`` (default 0.10): extra MACs allowed, as a fraction of the
    model's MACs; ``depth`` / ``stripes`` / ``cols`` (0 = choose) fix the
    stage depth, the rows or the columns of tiles (``stripes`` alone: row
    stripes, ``cols`` 1); ``io`` (default false): count the model input
    in the peak (``--use-workspace-io``); ``evaluate``: a pipeline that
    plans the module, to keep the patch only where the planner's workspace
    (not just the estimate) is smaller (``patch_decision``: then
    ``planned_patched``/``planned_unpatched`` are in the decision too).

Requires
    Relay before ``fuse-ops`` (``usmp-compile --patch auto`` runs it there,
    ``evaluate`` holding the rest of its pipeline up to the planning).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from usmp.dialects import relay, tir
from usmp.dialects.relay_nn_ops import Conv2DOp, DenseOp, KernelLayout, Pool2DOp
from usmp.passes.options import TypedOptions
from usmp.passes.patch_decision import decide, evaluation_passes
from usmp.passes.patch_stage_graph import element_bytes, find_stage, rewrite, shape
from usmp.planning.patch_graph import Node, choose, plan_error, stage_macs
from usmp.planning.patching import split_rows

PATCH_ATTR = "relay.patch"
"""The attribute of each graph-level function with its decision (a function
that has it is not patched again)."""


@dataclass(frozen=True)
class PatchStagePass(TypedOptions):
    """Compute the first stage of a CNN in row stripes (see the module note)."""

    name = "patch-stage"

    budget: float = 0.10
    """Extra MACs allowed for recomputed halos, as a fraction of the model's."""
    depth: int = 0
    """Layers in the stage (0: choose)."""
    stripes: int = 0
    """Row stripes (0: choose)."""
    cols: int = 0
    """Columns of tiles (0: choose; 1 when ``stripes`` is given alone: row
    stripes)."""
    io: bool = False
    """Count the model input in the peak (inputs in the workspace)."""
    evaluate: str = ""
    """A pipeline that plans the module (e.g. ``fuse-ops,lower-ops,
    aot-lower-main,usmp-plan-memory``): the patch is kept only if it plans a
    smaller workspace than the module unpatched (``patch_decision``)."""

    def __post_init__(self) -> None:
        if not 0 <= self.budget < math.inf:
            raise ValueError(
                f"patch-stage: budget must be a finite fraction >= 0 of the model's "
                f"MACs (a budget above what any grid costs is no limit), got "
                f"{self.budget}"
            )
        for what, value in (
            ("depth", self.depth),
            ("stripes", self.stripes),
            ("cols", self.cols),
        ):
            if value < 0:
                raise ValueError(
                    f"patch-stage: {what} must be 0 (choose) or a positive count, "
                    f"got {value}"
                )
        if self.stripes == 1 and self.cols <= 1:
            raise ValueError(
                "patch-stage: stripes must be 0 (choose) or at least 2 (1 stripe "
                "is the unpatched model)"
            )
        if self.evaluate:
            evaluation_passes(self.evaluate)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        evaluate = evaluation_passes(self.evaluate) if self.evaluate else ()
        for function in list(op.ops):
            if (
                isinstance(function, func.FuncOp)
                and relay.PRIMITIVE not in function.attributes
                and tir.PRIM_FUNC not in function.attributes
                and PATCH_ATTR not in function.attributes
                and function.body.blocks
            ):
                original = function.clone() if evaluate else None
                decision = patch_function(
                    function,
                    budget=self.budget,
                    depth=self.depth,
                    stripes=self.stripes,
                    cols=self.cols,
                    io=self.io,
                )
                function.attributes[PATCH_ATTR] = decision
                if original is not None and _applied(decision):
                    kept, decision = decide(
                        ctx, op, function, original, decision, evaluate
                    )
                    kept.attributes[PATCH_ATTR] = decision


def parse_grid(text: str) -> tuple[int, int]:
    """``RxC`` (``--patch-grid``) as (rows, columns) of tiles, each at least
    1 and not 1x1 (a ``ValueError`` saying what is wrong)."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(
            "patch-stage: a grid is ROWSxCOLUMNS of tiles, e.g. 4x1 or 3x2"
        )
    rows, cols = (int(p) for p in parts)
    if rows < 1 or cols < 1 or rows * cols < 2:
        raise ValueError(
            f"patch-stage: a grid needs at least 1 row and 1 column of tiles and "
            f"2 tiles, got {rows}x{cols}"
        )
    return rows, cols


def _applied(decision: DictionaryAttr) -> bool:
    applied = decision.data.get("applied")
    return isinstance(applied, IntegerAttr) and bool(applied.value.data)


# -- the stage -----------------------------------------------------------------


def _nbytes(value: SSAValue) -> int:
    size = element_bytes(value)
    for d in shape(value):
        size *= d
    return size


def _macs(op: Operation) -> int:
    """Multiply-accumulates of a convolution or pooling (window reads)."""
    _, h_out, w_out, c_out = shape(op.results[0])
    if isinstance(op, Conv2DOp):
        w = shape(op.weight)
        taps = (
            w[0] * w[1] * w[2]
            if op.kernel_layout == KernelLayout.HWIO
            else (w[1] * w[2] * w[3])
        )
        return h_out * w_out * c_out * taps
    assert isinstance(op, Pool2DOp)
    kh, kw = op.pool_size
    return h_out * w_out * c_out * kh * kw


# -- peak memory of the unpatched graph ----------------------------------------


def _model_macs(block: Block) -> int:
    total = 0
    for op in block.ops:
        if isinstance(op, Conv2DOp) or (
            isinstance(op, Pool2DOp) and len(shape(op.data)) == 4
        ):
            total += _macs(op)
        elif isinstance(op, DenseOp):
            out = 1
            for d in shape(op.result):
                out *= d
            total += out * shape(op.data)[-1]
    return total


def liveness_steps(block: Block, io: bool) -> tuple[list[int], dict[Operation, int]]:
    """Bytes live at each kernel of the block (the groups ``fuse-ops``
    would make; an estimate of what the planner sees: no aliases, no
    scratch), and the step of every op."""
    from usmp.passes.fuse_ops import fusion_groups

    step_of: dict[Operation, int] = {}
    ops = [
        op
        for op in block.ops
        if not isinstance(op, relay.ConstantOp | func.ReturnOp) and op.results
    ]
    reps = fusion_groups(ops)
    index_of: dict[int, int] = {}
    group_end: list[Operation] = []
    group: dict[Operation, int] = {}
    for op, rep in zip(ops, reps, strict=True):
        if rep not in index_of:
            index_of[rep] = len(group_end)
            group_end.append(op)
        group_end[index_of[rep]] = op
        group[op] = index_of[rep]
    # steps in the order of each group's last op
    order = {id(op): i for i, op in enumerate(ops)}
    ends = sorted(range(len(group_end)), key=lambda g: order[id(group_end[g])])
    step_of_group = {g: s for s, g in enumerate(ends)}
    for op in ops:
        step_of[op] = step_of_group[group[op]]
    live = [0] * len(ends)
    values: list[tuple[SSAValue, int]] = []
    if io:
        values += [(a, 0) for a in block.args if isinstance(a.type, TensorType)]
    for op in ops:
        for r in op.results:
            values.append((r, step_of[op]))
    last_step = len(ends) - 1
    for value, first in values:
        if not isinstance(value.type, TensorType):
            continue
        users = [u.operation for u in value.uses]
        returned = any(isinstance(u, func.ReturnOp) for u in users)
        if returned and not io:
            continue  # written into the application's output buffer
        steps = [step_of[u] for u in users if u in step_of]
        if returned:
            steps.append(last_step)
        owner = value.owner
        if not steps or (isinstance(owner, Operation) and set(steps) == {first}):
            continue  # unused, or used only inside its own kernel
        size = _nbytes(value)
        for s in range(first, max(steps) + 1):
            live[s] += size
    return live, step_of


# -- the decision and the rewrite ----------------------------------------------


def _dict(**entries: Attribute) -> DictionaryAttr:
    return DictionaryAttr(dict(entries))


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _not_applied(reason: str) -> DictionaryAttr:
    return _dict(applied=BoolAttr.from_bool(False), reason=StringAttr(reason))


def patch_function(
    main: func.FuncOp,
    *,
    budget: float,
    depth: int,
    stripes: int,
    io: bool,
    cols: int = 0,
) -> DictionaryAttr:
    """Choose and apply the patching of ``main``'s first stage; the decision
    as ``relay.patch``'s value."""
    if stripes and not cols:
        cols = 1  # --patch-stripes alone: row stripes
    from usmp.diagnostics import located_error

    block = main.body.blocks[0]
    live, step_of = liveness_steps(block, io)
    stage = find_stage(block, step_of)
    if stage is None:
        if depth or stripes or cols > 1:
            raise located_error(
                main,
                "patch-stage: no stage to patch: no model input (NHWC, batch 1) "
                "feeds a chain of convolutions/pooling computable row by row",
            )
        return _not_applied(
            "no stage: no model input (NHWC, batch 1) feeds a chain of "
            "convolutions/pooling computable row by row"
        )
    cuts = stage.cuts
    nodes = stage.nodes
    layers = len(cuts)
    if depth > layers:
        raise located_error(
            stage.ops[-1],
            f"patch-stage: depth {depth} is more than the {layers} "
            f"layers of the stage (it ends here: {stage.stop})",
        )
    unpatched = max(live, default=0)
    rest = [unpatched]
    for cut in cuts:
        after = step_of[stage.ops[cut - 1]]
        rest.append(max(live[after + 1 :], default=0))
    total_macs = _model_macs(block)
    input_bytes = _nbytes(stage.start) if io else 0
    most_rows = max(nodes[c].out_rows for c in cuts)
    if stripes and not depth and stripes > most_rows:
        raise located_error(
            stage.ops[cuts[0] - 1],
            f"patch-stage: {stripes} stripes for a stage whose layers have at most "
            f"{most_rows} output rows (at most one stripe a row)",
        )
    if stripes and depth and stripes > nodes[cuts[depth - 1]].out_rows:
        raise located_error(
            stage.ops[cuts[depth - 1] - 1],
            f"patch-stage: {stripes} stripes for an output of "
            f"{nodes[cuts[depth - 1]].out_rows} rows (at most one stripe a row)",
        )
    most_cols = max(nodes[c].out_cols for c in (cuts[depth - 1 : depth] or cuts))
    if cols > most_cols:
        at = cuts[depth - 1] if depth else cuts[0]
        raise located_error(
            stage.ops[at - 1],
            f"patch-stage: {cols} columns of tiles for a stage whose "
            f"{'output has' if depth else 'layers have at most'} {most_cols} "
            f"columns (at most one tile a column)",
        )
    if (
        depth
        and stripes
        and (error := plan_error(nodes, cuts[depth - 1], stripes, cols))
    ):
        grid = f"{stripes} stripes" if cols == 1 else f"a {stripes}x{cols} grid"
        raise located_error(
            stage.ops[cuts[depth - 1] - 1],
            f"patch-stage: {grid} of the first {depth} layers cannot be "
            f"built: {error} (choose fewer {'stripes' if cols == 1 else 'tiles'})",
        )
    # a budget above what any grid can cost is that cost (no 300-digit
    # budgets in the decision)
    no_limit = max(_stage_macs_bound(nodes, c) for c in cuts)
    budget_macs = min(int(budget * total_macs), no_limit)
    if depth and stripes:  # the grid is given: no budget to respect
        budget_macs = max(budget_macs, _stage_macs_bound(nodes, cuts[depth - 1]))
    base, found = choose(
        nodes,
        cuts,
        rest,
        unpatched,
        budget_macs,
        input_bytes=input_bytes,
        depth=depth,
        stripes=stripes,
        cols=cols,
    )
    forced = bool(depth or stripes or cols > 1)
    if not found or (found[0].peak >= base.peak and not forced):
        return _not_applied(
            f"patching does not lower the estimated peak ({base.peak} B) within "
            f"a budget of {budget:g} x {total_macs} MACs (stage of "
            f"{layers} layer{'s' if layers != 1 else ''}; "
            f"it ends: {stage.stop})"
            if found
            else f"no grid within a budget of {budget:g} x {total_macs} MACs"
        )
    best = found[0]
    rows = rewrite(stage, best)
    return _dict(
        applied=BoolAttr.from_bool(True),
        depth=_int(best.depth),
        layers=_int(layers),
        grid=ArrayAttr([_int(best.stripes), _int(best.cols)]),
        stripe_rows=ArrayAttr([_int(r) for r in rows]),
        tile_cols=ArrayAttr(
            [
                _int(hi - lo)
                for lo, hi in split_rows(
                    nodes[cuts[best.depth - 1]].out_cols, best.cols
                )
            ]
        ),
        peak_before=_int(base.peak),
        peak_after=_int(best.peak),
        model_macs=_int(total_macs),
        stage_macs=_int(best.macs - best.extra_macs),
        extra_macs=_int(best.extra_macs),
        budget_macs=_int(budget_macs),
        instructions_before=_int(best.instructions - best.extra_instructions),
        instructions_after=_int(best.instructions),
    )


def _stage_macs_bound(nodes: Sequence[Node], out: int) -> int:
    """More MACs than any grid of the stage ending at ``out`` can cost
    (each stripe at most recomputes every row of every node)."""
    return nodes[out].out_rows * stage_macs(nodes, out) + 1
