"""``patch-stage``: patch-based execution of a CNN's first stage (MCUNetV2).

What it does
    Finds the *stage*: the chain of row-local relay operators starting at a
    model input (NHWC, batch 1): ``relay.conv2d`` (NHWC, any kernel, stride,
    dilation, groups), ``relay.max_pool2d`` / ``relay.avg_pool2d`` (NHWC), and
    elementwise / broadcasting operators whose other operands do not vary
    along H and whose ``axis`` (if any) is not H. Each intermediate value has
    one use. The chain is cut into layers (one kernel each after fusion: an
    anchor with its elementwise epilogue).

    Then it chooses the depth (how many layers) and the number of row stripes
    (a grid of ``n x 1`` tiles) with the lowest estimated peak memory whose
    recomputed halos cost at most ``budget`` x the model's MACs
    (``usmp.planning.patching``), and rewrites the stage: per stripe, the
    input rows it needs (``relay.strided_slice``; the receptive field of the
    stripe's output rows), each layer's operators cloned on the stripe's rows
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
    (output rows per stripe), ``layers`` (the stage's layers available),
    the estimated peak before and after, the stage's MACs and the extra
    MACs; or ``applied = false`` and a ``reason`` (no stage, or patching
    does not lower the peak within the budget). The model is then left as
    it was.

Options
    ``budget`` (default 0.10): extra MACs allowed, as a fraction of the
    model's MACs; ``depth`` / ``stripes`` (0 = choose) fix the stage depth
    or the number of stripes; ``io`` (default false): count the model input
    in the peak (``--use-workspace-io``).

Requires
    Relay before ``fuse-ops`` (``usmp-compile --patch auto`` runs it there).
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
from usmp.dialects.relay_nn_ops import (
    Conv2DOp,
    DataLayout,
    DenseOp,
    KernelLayout,
    Pool2DOp,
)
from usmp.dialects.relay_ops import (
    BroadcastToOp,
    ConcatenateOp,
    StridedSliceOp,
)
from usmp.dialects.relay_props import property_attrs
from usmp.lowering.op_patterns import OpPattern, op_pattern
from usmp.passes.options import TypedOptions
from usmp.planning.patching import (
    Layer,
    PatchChoice,
    choose,
    plan_error,
    split_rows,
    stripe_plan,
)

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
    io: bool = False
    """Count the model input in the peak (inputs in the workspace)."""

    def __post_init__(self) -> None:
        if not 0 <= self.budget < math.inf:
            raise ValueError(
                f"patch-stage: budget must be a finite fraction >= 0 of the model's "
                f"MACs (a budget above what any grid costs is no limit), got "
                f"{self.budget}"
            )
        for what, value in (("depth", self.depth), ("stripes", self.stripes)):
            if value < 0:
                raise ValueError(
                    f"patch-stage: {what} must be 0 (choose) or a positive count, "
                    f"got {value}"
                )
        if self.stripes == 1:
            raise ValueError(
                "patch-stage: stripes must be 0 (choose) or at least 2 (1 stripe "
                "is the unpatched model)"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.ops):
            if (
                isinstance(function, func.FuncOp)
                and relay.PRIMITIVE not in function.attributes
                and tir.PRIM_FUNC not in function.attributes
                and PATCH_ATTR not in function.attributes
                and function.body.blocks
            ):
                function.attributes[PATCH_ATTR] = patch_function(
                    function,
                    budget=self.budget,
                    depth=self.depth,
                    stripes=self.stripes,
                    io=self.io,
                )


# -- the stage -----------------------------------------------------------------


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _element_bytes(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    el: Attribute = t.element_type
    width = getattr(el, "width", None)
    bits = width.data if width is not None else 32
    return max(bits // 8, 1)


def _nbytes(value: SSAValue) -> int:
    size = _element_bytes(value)
    for d in _shape(value):
        size *= d
    return size


def _row_bytes(value: SSAValue) -> int:
    n, _, w, c = _shape(value)
    return n * w * c * _element_bytes(value)


def _is_anchor(op: Operation, cur: SSAValue) -> bool:
    """A windowed op over NHWC rows reading ``cur`` as its data."""
    if isinstance(op, Conv2DOp):
        return (
            op.data == cur
            and op.weight != cur
            and op.data_layout == DataLayout.NHWC
            and op.kernel_layout in (KernelLayout.HWIO, KernelLayout.OHWI)
        )
    if isinstance(op, Pool2DOp):
        return op.data == cur and op.layout == DataLayout.NHWC
    return False


def _is_row_elementwise(op: Operation, cur: SSAValue) -> bool:
    """An elementwise op on ``cur`` that treats every row alike."""
    if op_pattern(op.name) not in (OpPattern.ELEMWISE, OpPattern.BROADCAST):
        return False
    if isinstance(op, BroadcastToOp) or len(op.results) != 1:
        return False
    if [v for v in op.operands if v == cur] != [cur]:
        return False
    if _shape(op.results[0]) != _shape(cur):
        return False
    for other in op.operands:
        if other == cur:
            continue
        shape = _shape(other)
        if len(shape) > 4 or (len(shape) >= 3 and shape[len(shape) - 3] != 1):
            return False
    axis = getattr(op, "axis", None)
    if isinstance(axis, int) and axis % 4 == 1:
        return False
    return True


@dataclass
class Stage:
    """The chain from a model input, cut into layers."""

    start: SSAValue
    layers: list[list[Operation]]
    """Ops of each layer, in order; an anchor (if any) first."""
    params: list[Layer]
    stop: str
    """Why the chain ends where it does."""


def find_stage(block: Block) -> Stage | None:
    """The longest stage from one of the block's arguments (the first one
    that starts a stage with a windowed op), or None."""
    best: Stage | None = None
    for arg in block.args:
        if not isinstance(arg.type, TensorType) or len(_shape(arg)) != 4:
            continue
        if _shape(arg)[0] != 1:
            continue
        stage = _chain(arg)
        if stage is not None and (best is None or len(stage.layers) > len(best.layers)):
            best = stage
    return best


def _chain(start: SSAValue) -> Stage | None:
    layers: list[list[Operation]] = []
    cur = start
    stop = "the model ends"
    while True:
        uses = list(cur.uses)
        if len(uses) != 1:
            stop = f"a value is used {len(uses)} times" if uses else stop
            break
        user = uses[0].operation
        if _is_anchor(user, cur):
            layers.append([user])
        elif _is_row_elementwise(user, cur):
            if layers and not (
                len(layers[-1]) == 1 and not _is_anchor_op(layers[-1][0])
            ):
                layers[-1].append(user)
            else:
                layers.append([user])
        else:
            stop = f"'{user.name}' cannot be computed row by row"
            break
        cur = user.results[0]
    if not any(_is_anchor_op(layer[0]) for layer in layers):
        return None
    params = [_layer_params(layer) for layer in layers]
    return Stage(start, layers, params, stop)


def _is_anchor_op(op: Operation) -> bool:
    return isinstance(op, Conv2DOp | Pool2DOp)


def _layer_params(ops: Sequence[Operation]) -> Layer:
    first, last = ops[0], ops[-1]
    data = first.operands[0]
    out = last.results[0]
    _, h_in, _, _ = _shape(data)
    _, h_out, w_out, c_out = _shape(out)
    if isinstance(first, Conv2DOp):
        wshape = _shape(first.weight)
        if first.kernel_layout == KernelLayout.HWIO:
            kh, kw, cin = wshape[0], wshape[1], wshape[2]
        else:
            kh, kw, cin = wshape[1], wshape[2], wshape[3]
        extent = (kh - 1) * first.dilation[0] + 1
        stride = first.strides[0]
        top, bottom = first.padding[0], first.padding[2]
        macs = w_out * c_out * kh * kw * cin
    elif isinstance(first, Pool2DOp):
        kh, kw = first.pool_size
        extent, stride = kh, first.strides[0]
        top, bottom = first.padding[0], first.padding[2]
        macs = w_out * c_out * kh * kw
    else:
        extent, stride, top, bottom, macs = 1, 1, 0, 0, 0
    return Layer(
        extent,
        stride,
        top,
        bottom,
        h_in,
        h_out,
        _row_bytes(data),
        _row_bytes(out),
        macs,
    )


# -- peak memory of the unpatched graph ----------------------------------------


def _model_macs(block: Block) -> int:
    total = 0
    for op in block.ops:
        if isinstance(op, Conv2DOp):
            stage_layer = _layer_params([op])
            total += stage_layer.out_rows * stage_layer.macs_per_row
        elif isinstance(op, Pool2DOp) and len(_shape(op.data)) == 4:
            stage_layer = _layer_params([op])
            total += stage_layer.out_rows * stage_layer.macs_per_row
        elif isinstance(op, DenseOp):
            out = 1
            for d in _shape(op.result):
                out *= d
            total += out * _shape(op.data)[-1]
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
    main: func.FuncOp, *, budget: float, depth: int, stripes: int, io: bool
) -> DictionaryAttr:
    """Choose and apply the patching of ``main``'s first stage; the decision
    as ``relay.patch``'s value."""
    from usmp.diagnostics import located_error

    block = main.body.blocks[0]
    stage = find_stage(block)
    if stage is None:
        if depth or stripes:
            raise located_error(
                main,
                "patch-stage: no stage to patch: no model input (NHWC, batch 1) "
                "feeds a chain of convolutions/pooling computable row by row",
            )
        return _not_applied(
            "no stage: no model input (NHWC, batch 1) feeds a chain of "
            "convolutions/pooling computable row by row"
        )
    if depth > len(stage.layers):
        raise located_error(
            stage.layers[-1][-1],
            f"patch-stage: depth {depth} is more than the {len(stage.layers)} "
            f"layers of the stage (it ends here: {stage.stop})",
        )
    live, step_of = liveness_steps(block, io)
    unpatched = max(live, default=0)
    rest = [unpatched]
    for layer in stage.layers:
        after = step_of[layer[-1]]
        rest.append(max(live[after + 1 :], default=0))
    total_macs = _model_macs(block)
    input_bytes = _nbytes(stage.start) if io else 0
    most_rows = max(p.out_rows for p in stage.params)
    if stripes and not depth and stripes > most_rows:
        raise located_error(
            stage.layers[0][-1],
            f"patch-stage: {stripes} stripes for a stage whose layers have at most "
            f"{most_rows} output rows (at most one stripe a row)",
        )
    if stripes and depth and stripes > stage.params[depth - 1].out_rows:
        raise located_error(
            stage.layers[depth - 1][-1],
            f"patch-stage: {stripes} stripes for an output of "
            f"{stage.params[depth - 1].out_rows} rows (at most one stripe a row)",
        )
    if depth and stripes and (error := plan_error(stage.params[:depth], stripes)):
        raise located_error(
            stage.layers[depth - 1][-1],
            f"patch-stage: {stripes} stripes of the first {depth} layers cannot be "
            f"built: {error} (choose fewer stripes)",
        )
    # a budget above what any grid can cost is that cost (no 300-digit
    # budgets in the decision)
    no_limit = max(
        _stage_macs_bound(stage.params[:d]) for d in range(1, len(stage.params) + 1)
    )
    budget_macs = min(int(budget * total_macs), no_limit)
    if depth and stripes:  # the grid is given: no budget to respect
        budget_macs = max(budget_macs, _stage_macs_bound(stage.params[:depth]))
    base, found = choose(
        stage.params,
        rest,
        unpatched,
        budget_macs,
        input_bytes=input_bytes,
        depth=depth,
        stripes=stripes,
    )
    forced = bool(depth or stripes)
    if not found or (found[0].peak >= base.peak and not forced):
        return _not_applied(
            f"patching does not lower the estimated peak ({base.peak} B) within "
            f"a budget of {budget:g} x {total_macs} MACs (stage of "
            f"{len(stage.layers)} layer{'s' if len(stage.layers) != 1 else ''}; "
            f"it ends: {stage.stop})"
            if found
            else f"no grid within a budget of {budget:g} x {total_macs} MACs"
        )
    best = found[0]
    rows = _rewrite(stage, best)
    return _dict(
        applied=BoolAttr.from_bool(True),
        depth=_int(best.depth),
        layers=_int(len(stage.layers)),
        grid=ArrayAttr([_int(best.stripes), _int(1)]),
        stripe_rows=ArrayAttr([_int(r) for r in rows]),
        peak_before=_int(base.peak),
        peak_after=_int(best.peak),
        model_macs=_int(total_macs),
        stage_macs=_int(best.macs - best.extra_macs),
        extra_macs=_int(best.extra_macs),
        budget_macs=_int(budget_macs),
    )


def _stage_macs_bound(layers: Sequence[Layer]) -> int:
    """More MACs than any grid of ``layers`` can cost (each stripe at most
    recomputes every row of every layer)."""
    rows = layers[-1].out_rows
    return rows * sum(x.out_rows * x.macs_per_row for x in layers) + 1


def _rebuild(
    op: Operation, chain: SSAValue, operand: SSAValue, **props: object
) -> Operation:
    """``op`` with its operand ``chain`` replaced by the stripe value
    ``operand`` and ``props`` changed; result type inferred."""
    operands = [operand if v == chain else v for v in op.operands]
    properties = dict(op.properties)
    properties.update(property_attrs(type(op), props))
    result_type = op.results[0].type
    new = op.create(
        operands=operands,
        result_types=[result_type],
        properties=properties,
        attributes=dict(op.attributes),
    )
    if isinstance(new, Conv2DOp | Pool2DOp):
        inferred = new.infer_result_type()
    else:  # elementwise: the stripe's shape, the op's element type
        assert isinstance(result_type, TensorType)
        inferred = TensorType(result_type.element_type, _shape(operand))
    if inferred != result_type:
        new.drop_all_references()
        new = op.create(
            operands=operands,
            result_types=[inferred],
            properties=properties,
            attributes=dict(op.attributes),
        )
    new.location = op.location
    return new


def _like(new: Operation, old: Operation) -> None:
    """``new`` placed like ``old``: its location and virtual device."""
    new.location = old.location
    if relay.VIRTUAL_DEVICE in old.attributes:
        new.attributes[relay.VIRTUAL_DEVICE] = old.attributes[relay.VIRTUAL_DEVICE]


def _rewrite(stage: Stage, choice: PatchChoice) -> list[int]:
    layers = stage.layers[: choice.depth]
    params = stage.params[: choice.depth]
    output_op = layers[-1][-1]
    output = output_op.results[0]
    block = output_op.parent_block()
    assert block is not None
    new_ops: list[Operation] = []
    pieces: list[SSAValue] = []
    rows: list[int] = []
    start = stage.start
    n, h, w, c = _shape(start)
    for lo, hi in split_rows(params[-1].out_rows, choice.stripes):
        rows.append(hi - lo)
        plan = stripe_plan(params, lo, hi)
        first = plan[0]
        cur: SSAValue = start
        orig: SSAValue = start
        if (first.in_lo, first.in_hi) != (0, h):
            s = StridedSliceOp(
                start, [0, first.in_lo, 0, 0], [n, first.in_hi, w, c], [1, 1, 1, 1]
            )
            _like(s, layers[0][0])
            new_ops.append(s)
            cur = s.result
        for ops, part in zip(layers, plan, strict=True):
            for op in ops:
                if _is_anchor_op(op):
                    padding = list(op.padding)  # pyright: ignore[reportAttributeAccessIssue]
                    padding[0], padding[2] = part.pad_top, part.pad_bottom
                    new = _rebuild(op, orig, cur, padding=tuple(padding))
                else:
                    new = _rebuild(op, orig, cur)
                new_ops.append(new)
                cur, orig = new.results[0], op.results[0]
        pieces.append(cur)
    concat = ConcatenateOp(pieces, 1)
    _like(concat, output_op)
    new_ops.append(concat)
    block.insert_ops_after(new_ops, output_op)
    output.replace_all_uses_with(concat.result)
    for ops in reversed(layers):
        for op in reversed(ops):
            op.detach()
            op.erase()
    return rows


def dedupe_primitive_functions(module: ModuleOp) -> int:
    """Merge the ``relay.primitive`` functions that are equal but for their
    name (the stripes of a patched stage with equal rows and paddings) into
    the first of them, the calls redirected to it; how many were removed.
    One function is one operator function in the C: the interior stripes
    share their code and their constant tables."""
    from io import StringIO

    from xdsl.dialects.builtin import SymbolRefAttr
    from xdsl.printer import Printer

    first: dict[str, str] = {}
    merged: dict[str, str] = {}
    for f in list(module.ops):
        if not isinstance(f, func.FuncOp) or relay.PRIMITIVE not in f.attributes:
            continue
        name = f.sym_name.data
        stream = StringIO()
        Printer(stream=stream).print_op(f)
        key = stream.getvalue().replace(f"@{name}(", "@(", 1)
        if key in first:
            merged[name] = first[key]
            f.detach()
            f.erase()
        else:
            first[key] = name
    if merged:
        for op in module.walk():
            if isinstance(op, relay.CallOp) and op.callee.string_value() in merged:
                op.callee = SymbolRefAttr(merged[op.callee.string_value()])
    return len(merged)
