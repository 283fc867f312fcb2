"""The stage ``patch-stage`` patches, as a graph, and its rewrite into stripes.

Not a pass: ``patch-stage``'s IR side. A *stage* is the set of relay ops
computed row by row from a model input (NHWC, batch 1), in block order:
convolutions and pooling over NHWC rows (the window), elementwise and
broadcasting ops whose operands from the stage all have the op's shape
(an ADD of a residual block's two branches included) and whose other
operands do not vary along H, and ``relay.concatenate`` of stage values
along W or C. It ends at the first op that reads a stage value and is none
of these. A *cut* is an op after which its result is the only stage value
the rest of the model still reads (and that is not fused into its
consumer's kernel): the stage can end there. A residual block's inner
values are no cuts (the skip is still to be read), its ADD is.

The rewrite computes the stage up to a cut in row stripes: per stripe the
rows of every op (``usmp.planning.patch_graph.stripe_rows``: the hull of
what its consumers read), each op cloned on them (a window pads only at
the true borders of its input), a consumer that reads fewer rows than a
value's stripe holds reads a ``relay.strided_slice`` of it (contiguous
rows: an alias, no copy), and the stripes joined by one
``relay.concatenate`` along H that replaces the cut's result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from usmp.dialects import relay
from usmp.dialects.relay_fusion import OpPattern, op_pattern
from usmp.dialects.relay_nn_ops import Conv2DOp, DataLayout, KernelLayout, Pool2DOp
from usmp.dialects.relay_ops import BroadcastToOp, ConcatenateOp, StridedSliceOp
from usmp.dialects.relay_props import property_attrs
from usmp.planning.patch_graph import Node, stripe_cols, stripe_rows
from usmp.planning.patching import PatchChoice, split_rows


def shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def element_bytes(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    width = getattr(t.element_type, "width", None)
    bits = width.data if width is not None else 32
    return max(bits // 8, 1)


def row_bytes(value: SSAValue) -> int:
    n, _, w, c = shape(value)
    return n * w * c * element_bytes(value)


def is_window(op: Operation) -> bool:
    return isinstance(op, Conv2DOp | Pool2DOp)


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


def _is_nhwc(value: SSAValue) -> bool:
    return (
        isinstance(value.type, TensorType)
        and len(shape(value)) == 4
        and shape(value)[0] == 1
    )


def _row_local(op: Operation, inside: Sequence[SSAValue]) -> bool:
    """Whether ``op``, reading the stage values ``inside``, computes each
    output row from the same rows of them (or, a window, from a window)."""
    if len(op.results) != 1 or not _is_nhwc(op.results[0]):
        return False
    if is_window(op):
        return len(set(inside)) == 1 and _is_anchor(op, inside[0])
    result = shape(op.results[0])
    if isinstance(op, ConcatenateOp):
        return (
            op.axis % 4 in (2, 3)
            and len(inside) == len(op.operands)
            and all(shape(v)[:2] == result[:2] for v in inside)
        )
    if op_pattern(op) not in (OpPattern.ELEMWISE, OpPattern.BROADCAST):
        return False
    if isinstance(op, BroadcastToOp):
        return False
    if any(shape(v) != result for v in inside):
        return False
    for other in op.operands:
        if other in inside:
            continue
        s = shape(other)
        if len(s) > 4 or (len(s) >= 3 and s[len(s) - 3] != 1):
            return False
    axis = getattr(op, "axis", None)
    return not (isinstance(axis, int) and axis % 4 == 1)


@dataclass
class Stage:
    """The ops computed row by row from a model input, as a graph."""

    start: SSAValue
    ops: list[Operation]
    """The stage's ops in block order (node ``i + 1`` is ``ops[i]``)."""
    nodes: list[Node]
    cuts: list[int]
    """Nodes the stage can end at, in order (depth ``d`` ends at ``cuts[d - 1]``)."""
    stop: str
    """Why the stage ends where it does."""


def find_stage(block: Block, step_of: dict[Operation, int]) -> Stage | None:
    """The stage with the most cuts from one of the block's arguments (the
    first such), or None if no argument starts one with a window."""
    best: Stage | None = None
    for arg in block.args:
        if not _is_nhwc(arg):
            continue
        stage = _graph(block, arg, step_of)
        if stage is not None and (best is None or len(stage.cuts) > len(best.cuts)):
            best = stage
    return best


def _graph(
    block: Block, start: SSAValue, step_of: dict[Operation, int]
) -> Stage | None:
    index: dict[SSAValue, int] = {start: 0}
    pending: dict[SSAValue, int] = {start: len(list(start.uses))}
    ops: list[Operation] = []
    cuts: list[int] = []
    stop = "the model ends"
    for op in block.ops:
        inside = [v for v in op.operands if v in index]
        if not inside:
            continue
        if not _row_local(op, inside):
            stop = f"'{op.name}' cannot be computed row by row"
            break
        result = op.results[0]
        ops.append(op)
        index[result] = len(ops)
        pending[result] = len(list(result.uses))
        for v in inside:
            pending[v] -= 1
        still = [v for v, n in pending.items() if n > 0]
        if still == [result] and all(
            step_of.get(u.operation) != step_of.get(op) for u in result.uses
        ):
            cuts.append(len(ops))
    if not cuts or not any(is_window(op) for op in ops[: cuts[-1]]):
        return None
    ops = ops[: cuts[-1]]
    first_step = step_of[ops[0]]
    nodes = [Node((), shape(start)[1], row_bytes(start), first_step - 1)]
    nodes[0] = _with_cols(nodes[0], start, None, index)
    for op in ops:
        result = op.results[0]
        internal = all(step_of.get(u.operation) == step_of[op] for u in result.uses)
        node = Node(
            tuple(index[v] for v in op.operands if v in index),
            shape(result)[1],
            0 if internal else row_bytes(result),
            step_of[op],
            **_window(op),
        )
        nodes.append(_with_cols(node, result, op, index))
    return Stage(start, ops, nodes, cuts, stop)


class _Window(TypedDict, total=False):
    """``Node``'s window fields."""

    extent: int
    stride: int
    pad_top: int
    in_rows: int
    macs_per_row: int


def _window(op: Operation) -> _Window:
    """The window of a convolution or pooling (``Node``'s fields)."""
    if isinstance(op, Conv2DOp):
        w = shape(op.weight)
        if op.kernel_layout == KernelLayout.HWIO:
            kh, kw, cin = w[0], w[1], w[2]
        else:
            kh, kw, cin = w[1], w[2], w[3]
        _, _, w_out, c_out = shape(op.results[0])
        return {
            "extent": (kh - 1) * op.dilation[0] + 1,
            "stride": op.strides[0],
            "pad_top": op.padding[0],
            "in_rows": shape(op.data)[1],
            "macs_per_row": w_out * c_out * kh * kw * cin,
        }
    if isinstance(op, Pool2DOp):
        kh, kw = op.pool_size
        _, _, w_out, c_out = shape(op.results[0])
        return {
            "extent": kh,
            "stride": op.strides[0],
            "pad_top": op.padding[0],
            "in_rows": shape(op.data)[1],
            "macs_per_row": w_out * c_out * kh * kw,
        }
    return {}


def _with_cols(
    node: Node, value: SSAValue, op: Operation | None, index: dict[SSAValue, int]
) -> Node:
    """``node`` with its columns: the window over them (a convolution or
    pooling), whether it is column-local, its channels and kernel kind."""
    from dataclasses import replace

    _, _, w, c = shape(value)
    fields: dict[str, Any] = {"out_cols": w, "channels": c}
    if op is None:
        return replace(node, **fields)
    if isinstance(op, Conv2DOp):
        wshape = shape(op.weight)
        kw = wshape[1] if op.kernel_layout == KernelLayout.HWIO else wshape[2]
        groups = op.groups  # pyright: ignore[reportAttributeAccessIssue]
        depthwise = groups > 1 and groups == shape(op.data)[3]
        fields |= {
            "col_extent": (kw - 1) * op.dilation[1] + 1,
            "col_stride": op.strides[1],
            "pad_left": op.padding[1],
            "in_cols": shape(op.data)[2],
            "kind": "depthwise" if depthwise else "conv",
        }
    elif isinstance(op, Pool2DOp):
        fields |= {
            "col_extent": op.pool_size[1],
            "col_stride": op.strides[1],
            "pad_left": op.padding[1],
            "in_cols": shape(op.data)[2],
            "kind": "pool",
        }
    elif isinstance(op, ConcatenateOp):
        fields |= {"kind": "copy", "col_local": op.axis % 4 != 2}
    else:
        varying = any(
            v not in index and len(shape(v)) >= 2 and shape(v)[-2] != 1
            for v in op.operands
        )
        axis = getattr(op, "axis", None)
        fields["col_local"] = not varying and not (
            isinstance(axis, int) and axis % 4 == 2
        )
    return replace(node, **fields)


def _like(new: Operation, old: Operation) -> None:
    """``new`` placed like ``old``: its location and virtual device."""
    new.location = old.location
    if relay.VIRTUAL_DEVICE in old.attributes:
        new.attributes[relay.VIRTUAL_DEVICE] = old.attributes[relay.VIRTUAL_DEVICE]


def _clone(
    op: Operation,
    operands: list[SSAValue],
    rows: int,
    pads: tuple[int, int],
    cols: tuple[int, int, int] | None = None,
) -> Operation:
    """``op`` on the tile ``operands``, computing ``rows`` rows (a window
    padded ``pads`` rows above and below); ``cols``: the tile's columns and
    the padding left and right of them (None: every column)."""
    properties = dict(op.properties)
    if is_window(op):
        padding = list(op.padding)  # pyright: ignore[reportAttributeAccessIssue]
        padding[0], padding[2] = pads
        if cols is not None:
            padding[1], padding[3] = cols[1:]
        properties.update(property_attrs(type(op), {"padding": tuple(padding)}))
    old = op.results[0].type
    assert isinstance(old, TensorType)
    dims = list(old.get_shape())
    dims[1] = rows
    if cols is not None:
        dims[2] = cols[0]
    new = op.create(
        operands=operands,
        result_types=[TensorType(old.element_type, dims)],
        properties=properties,
        attributes=dict(op.attributes),
    )
    if is_window(op):
        inferred = new.infer_result_type()  # pyright: ignore[reportAttributeAccessIssue]
        assert inferred == new.results[0].type, "patch-stage: a stripe misaligns"
    _like(new, op)
    return new


Span = tuple[int, int]


def _stripe(
    stage: Stage,
    out: int,
    lo: int,
    hi: int,
    new_ops: list[Operation],
    across: Span | None = None,
) -> SSAValue:
    """Append to ``new_ops`` the ops computing rows ``[lo, hi)`` (and
    columns ``across``, None: all) of node ``out``; their value."""
    nodes = stage.nodes
    index = {stage.start: 0} | {op.results[0]: i + 1 for i, op in enumerate(stage.ops)}
    rows = stripe_rows(nodes, out, lo, hi)
    whole = (0, nodes[0].out_cols)
    colses = (
        [(0, n.out_cols) for n in nodes[: out + 1]]
        if across is None
        else stripe_cols(nodes, out, *across)
    )
    held: dict[int, tuple[SSAValue, Span, Span]] = {
        0: (stage.start, (0, nodes[0].out_rows), whole)
    }
    sliced: dict[tuple[int, int, int, int, int], SSAValue] = {}

    def read(j: int, want: Span, cols: Span | None, by: Operation) -> SSAValue:
        value, have, have_cols = held[j]
        cols = have_cols if cols is None else cols  # None: every column
        if have == want and have_cols == cols:
            return value
        key = (j, *want, *cols)
        if key not in sliced:
            n, _, _, c = shape(value)
            s = StridedSliceOp(
                value,
                [0, want[0] - have[0], cols[0] - have_cols[0], 0],
                [n, want[1] - have[0], cols[1] - have_cols[0], c],
                [1, 1, 1, 1],
            )
            _like(s, stage.ops[0] if j == 0 else by)
            new_ops.append(s)
            sliced[key] = s.result
        return sliced[key]

    for i in range(1, out + 1):
        mine, mine_cols = rows[i], colses[i]
        op = stage.ops[i - 1]
        if mine is None or mine_cols is None:
            # feeds neither ``out`` nor the rest of the model (a cut is the
            # only stage value read after it): dead, erased with the stage
            continue
        first, end, top, bottom = nodes[i].reads(*mine)
        reads_cols: Span | None = None
        left = right = 0
        if across is not None:
            c0, c1, left, right = nodes[i].reads_cols(*mine_cols)
            reads_cols = (c0, c1)
        operands = [
            read(index[v], (first, end), reads_cols, op) if v in index else v
            for v in op.operands
        ]
        tile_cols = (
            None if across is None else (mine_cols[1] - mine_cols[0], left, right)
        )
        new = _clone(op, operands, mine[1] - mine[0], (top, bottom), tile_cols)
        new_ops.append(new)
        held[i] = (new.results[0], mine, mine_cols)
    return held[out][0]


def rewrite(stage: Stage, choice: PatchChoice) -> list[int]:
    """Compute ``stage`` up to its cut ``choice.depth`` in a grid of
    ``choice.stripes`` x ``choice.cols`` tiles (see the module note); the
    output rows of each row of tiles."""
    out = stage.cuts[choice.depth - 1]
    output_op = stage.ops[out - 1]
    block = output_op.parent_block()
    assert block is not None
    new_ops: list[Operation] = []
    pieces: list[SSAValue] = []
    counts: list[int] = []
    spans = (
        [None]
        if choice.cols == 1
        else split_rows(stage.nodes[out].out_cols, choice.cols)
    )
    for lo, hi in split_rows(stage.nodes[out].out_rows, choice.stripes):
        counts.append(hi - lo)
        tiles = [_stripe(stage, out, lo, hi, new_ops, span) for span in spans]
        if len(tiles) == 1:
            pieces.append(tiles[0])
            continue
        band = ConcatenateOp(tiles, 2)  # a row of tiles, joined along W
        _like(band, output_op)
        new_ops.append(band)
        pieces.append(band.result)
    if len(pieces) == 1:
        joined = pieces[0]
    else:
        concat = ConcatenateOp(pieces, 1)
        _like(concat, output_op)
        new_ops.append(concat)
        joined = concat.result
    block.insert_ops_after(new_ops, output_op)
    output_op.results[0].replace_all_uses_with(joined)
    for op in reversed(stage.ops[:out]):
        op.detach()
        op.erase()
    return counts
