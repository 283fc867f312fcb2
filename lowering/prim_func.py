"""A primitive function -> a tir prim func computing it in one loop nest.

``LowerPrimitiveFunction`` is the rewrite pattern of ``lower-ops``: on a
``func.func`` marked ``relay.primitive`` it checks the function, gives it
memref arguments (one per input, then one per output), sets up a
``FusedKernel`` with the element patterns of every operator family
(``ELEMENT_PATTERNS``) and emits::

    func.func @name(%in0: memref<..>, ..., %out: memref<..>)
        attributes {tir.prim_func} {
      <hoisted arith.constant / tir.allocate_const>
      scf.for ... {            // one loop per result dimension of extent > 1
        %v = <the element of the result, see kernel.py>
        memref.store %v, %out[...]
      }
      func.return
    }

The loop nest over the result is this pattern's; each element stored is an
element request that the family patterns rewrite (``kernel.py``), so a whole
fused group is one loop nest whose epilogue stays in registers.

When the result is a softmax reached through shape-preserving elementwise
ops, the softmax axis becomes the innermost loop and the row's max and sum
are computed right before it (two scalar reductions per row). When the result
is a conv2d (NHWC) / dense reached the same way, the innermost loop advances
by ``ops_nn.JAM`` elements whose reductions run as one loop nest with one
accumulator each (each sum in its own order: bit for bit the same). When the
result is a concatenate, each operand gets its own loop nest writing its
slice. When a result is a gather, its loops that only copy a loaded element
are marked ``COPY_RUN``: the C emitter makes each contiguous run a
``memmove`` (``convert_to_emitc_memref.copy_run``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import TensorType, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.dialects.relay_custom import CustomCallOp
from usmp.dialects.relay_fusion import OpPattern, op_pattern
from usmp.dialects.relay_image_ops import GatherOp
from usmp.dialects.relay_lstm import LstmOp
from usmp.dialects.relay_ops import ConcatenateOp
from usmp.dialects.relay_svdf import SvdfOp
from usmp.dialects.tir_custom import CUSTOM_HEADER, RETURNS_STATUS
from usmp.lowering import cmsis_nn, ops_nn, ops_softmax
from usmp.lowering.convert_to_emitc_memref import COPY_RUN
from usmp.lowering.create import create
from usmp.lowering.dead_code import erase_dead_code
from usmp.lowering.fold_offsets import fold_input_offsets
from usmp.lowering.kernel import (
    ElementPattern,
    FusedKernel,
    LowerConstantElement,
    memref_of,
    shape_of,
)
from usmp.lowering.loops import Ix, KernelBuilder
from usmp.lowering.ops_custom import lower_custom
from usmp.lowering.ops_elementwise import LowerElementwise
from usmp.lowering.ops_image import LowerImage
from usmp.lowering.ops_layout import LowerDataMovement
from usmp.lowering.ops_lookup import LowerTableLookup
from usmp.lowering.ops_lstm import lower_lstm
from usmp.lowering.ops_nn import LowerNN
from usmp.lowering.ops_quant import LowerQuantization
from usmp.lowering.ops_softmax import LowerSoftmax
from usmp.lowering.ops_svdf import lower_svdf
from usmp.lowering.target import PORTABLE, TargetFeatures
from usmp.lowering.walk import walk_ops

ELEMENT_PATTERNS: tuple[type[ElementPattern], ...] = (
    LowerConstantElement,
    LowerElementwise,
    LowerQuantization,
    LowerDataMovement,
    LowerNN,
    LowerSoftmax,
    LowerImage,
    LowerTableLookup,
)
"""The element patterns, one per operator family (every operator of the
contract, and the TFLite-specific ones of ``relay_tflite_ops``)."""

WHOLE_OPERATORS: Mapping[
    type[Operation], Callable[[FusedKernel, Any, SSAValue], None]
] = MappingProxyType(
    {LstmOp: lower_lstm, SvdfOp: lower_svdf, CustomCallOp: lower_custom}
)
"""Operators lowered whole, not element by element (stateful or recurrent
ones, and user kernels: ``fuse-ops`` outlines each alone): op class ->
``lower(kernel, op, out)``, which emits the loops storing the result into
``out`` (and updating state operands in place)."""

OPERATORS: frozenset[type[Operation]] = frozenset(
    kind for pattern in ELEMENT_PATTERNS for kind in pattern.handlers
) | frozenset(WHOLE_OPERATORS)
"""The relay operators ``lower-ops`` lowers, by op class."""
_OPERATOR_NAMES = sorted(o.name for o in OPERATORS)


def _whole_operator(primitive: func.FuncOp) -> Operation | None:
    """The operator of ``WHOLE_OPERATORS`` a primitive function returns, if
    any (its other ops may only be constants)."""
    if len(primitive.body.blocks) != 1:
        return None
    block = primitive.body.blocks[0]
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or len(ret.arguments) != 1:
        return None
    owner = ret.arguments[0].owner
    if not isinstance(owner, Operation) or type(owner) not in WHOLE_OPERATORS:
        return None
    for op in block.ops:
        if op is not owner and op is not ret and not isinstance(op, relay.ConstantOp):
            raise located_error(
                op,
                f"'{op.name}' cannot be lowered with a {owner.name} in one primitive "
                f"function (fuse-ops outlines a {owner.name} alone)",
            )
    return owner


def _check_type(op: Operation, t: object, what: str) -> None:
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise located_error(
            op, f"{what} has type {t}; lower-ops needs statically shaped tensors"
        )


def check_primitive(primitive: func.FuncOp) -> list[SSAValue]:
    """Reject what lower-ops cannot lower; return the function's results
    (the fields of a returned ``relay.tuple``, else the returned tensor)."""
    name = primitive.sym_name.data
    if len(primitive.body.blocks) != 1:
        raise located_error(
            primitive,
            f"primitive function @{name} must be a single block of relay operators",
        )
    block = primitive.body.blocks[0]
    for arg in block.args:
        _check_type(primitive, arg.type, f"argument {arg.index} of @{name}")
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or len(ret.arguments) != 1:
        raise located_error(
            ret or primitive,
            f"primitive function @{name} must return one tensor or one relay.tuple "
            "of tensors",
        )
    returned = ret.arguments[0]
    results = [returned]
    if isinstance(returned.owner, relay.TupleOp):
        results = list(returned.owner.fields)
    for op in block.ops:
        if op is ret or op is returned.owner and isinstance(op, relay.TupleOp):
            continue
        if not isinstance(op, relay.ConstantOp) and type(op) not in OPERATORS:
            raise located_error(
                op,
                f"'{op.name}' cannot be lowered inside a primitive function; "
                f"expected relay operators ({', '.join(_OPERATOR_NAMES)}) and "
                "relay.constant",
            )
        if op.regions:
            raise located_error(op, f"'{op.name}' has regions; expected dataflow")
        for result in op.results:
            _check_type(op, result.type, f"the result of '{op.name}'")
    for result in results:
        _check_type(ret, result.type, "a returned value")
    return results


def _same_index_producer(
    result: SSAValue, kinds: Collection[type[Operation]]
) -> Operation | None:
    """An operator named in ``names`` whose elements reach ``result`` at the
    same index, i.e. through shape-preserving elementwise/broadcast ops
    only."""
    shape = shape_of(result)
    stack = [result]
    seen: set[SSAValue] = set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        op = value.owner
        if not isinstance(op, Operation):
            continue
        if type(op) in kinds:
            return op
        if _class_pattern(type(op)) > OpPattern.BROADCAST:
            continue
        stack.extend(v for v in op.operands if shape_of(v) == shape)
    return None


@cache
def _class_pattern(kind: type[Operation]) -> OpPattern:
    """``op_pattern`` of the ops of class ``kind`` (a trait of the class:
    read once per class, not per op reached)."""
    return op_pattern(kind)


def emit_result(kernel: FusedKernel, result: SSAValue, out: SSAValue) -> None:
    """The loop nest storing every element of ``result`` into ``out``."""
    b = kernel.b
    shape = list(shape_of(result))
    if isinstance(result.owner, ConcatenateOp):
        # one loop nest per operand, each writing its slice: no per-element
        # choice of the operand
        concatenate = result.owner
        axis = concatenate.axis % len(shape)
        offset = 0
        for part in concatenate.inputs:
            start = offset

            def store(ivs: list[Ix], part: SSAValue = part, start: int = start) -> None:
                index = list(ivs)
                index[axis] = b.iadd(ivs[axis], start)
                b.store(kernel.at(part, ivs), out, index)

            b.loop_nest(shape_of(part), store)
            offset += shape_of(part)[axis]
        return
    row_op = _same_index_producer(result, ops_softmax.ROW_STATISTICS)
    if row_op is None or not shape:
        _emit_elements(kernel, result, out)
        return
    axis = row_op.axis % len(shape)  # type: ignore[attr-defined]
    extent, shape[axis] = shape[axis], 1
    statistics = ops_softmax.ROW_STATISTICS[type(row_op)]

    def row(ivs: list[Ix]) -> None:
        outer = (*ivs[:axis], *ivs[axis + 1 :])
        kernel.rows[row_op] = (outer, statistics(kernel, row_op, ivs))

        def element(taps: list[Ix]) -> None:
            index = list(ivs)
            index[axis] = taps[0]
            b.store(kernel.at(result, index), out, index)

        b.loop_nest([extent], element)
        del kernel.rows[row_op]

    b.loop_nest(shape, row)


def _emit_elements(kernel: FusedKernel, result: SSAValue, out: SSAValue) -> None:
    """The loop nest storing ``result`` element by element, ``jam`` elements
    per iteration of the innermost loop when an anchor reached at the same
    index computes that many in one reduction (``ops_nn.jam_factor``)."""
    b = kernel.b
    shape = shape_of(result)
    anchor = _same_index_producer(result, ops_nn.JAMMED) if shape else None
    jam = 1 if anchor is None else ops_nn.jam_factor(anchor, shape[-1])
    if anchor is None or jam == 1:
        b.loop_nest(shape, lambda ivs: b.store(kernel.at(result, ivs), out, ivs))
        return

    def elements(ivs: list[Ix]) -> None:
        indices = [[*ivs[:-1], b.iadd(ivs[-1], q)] for q in range(jam)]
        kernel.jam(anchor, indices, ops_nn.JAMMED[type(anchor)])
        for index in indices:
            b.store(kernel.at(result, index), out, index)

    b.loop_nest(shape, elements, step=jam)


def lower_primitive(
    primitive: func.FuncOp,
    features: TargetFeatures = PORTABLE,
    constants: Mapping[int, relay.ConstantOp] | None = None,
) -> func.FuncOp:
    """The tir prim func computing ``primitive``: same name, visibility and
    attributes (``relay.primitive`` becomes ``tir.prim_func``), arguments =
    one memref per input, then one per output (the fields of a returned
    tuple, each computed by its own loop nest)."""
    whole = _whole_operator(primitive)
    results = check_primitive(primitive) if whole is None else []
    block = primitive.body.blocks[0]
    in_types = [memref_of(a.type) for a in block.args]
    out_types = [memref_of(r.type) for r in results]
    if whole is not None:
        out_types = [memref_of(whole.results[0].type)]
    entry = Block(arg_types=[*in_types, *out_types])
    builder = KernelBuilder(entry)
    inputs, outputs = entry.args[: len(in_types)], entry.args[len(in_types) :]
    buffers: dict[SSAValue, SSAValue] = dict(zip(block.args, inputs, strict=True))
    bound: dict[SSAValue, relay.ConstantOp] = {
        block.args[i]: c for i, c in (constants or {}).items()
    }
    kernel = FusedKernel(builder, buffers, ELEMENT_PATTERNS, features, bound)
    if whole is None:
        for result, out in zip(results, outputs, strict=True):
            emit_result(kernel, result, out)
    else:
        builder.location = whole.location
        WHOLE_OPERATORS[type(whole)](kernel, whole, outputs[0])
        builder.location = None
    ret = create(func.ReturnOp, ())
    ret.location = block.last_op.location  # type: ignore[union-attr]
    builder.emit(ret)
    builder.finish()
    pairs = zip(results, outputs[: len(results)], strict=True)
    _mark_copy_runs(entry, [out for result, out in pairs if _is_gather(result)])
    lowered = func.FuncOp(
        primitive.sym_name.data,
        ([*in_types, *out_types], []),
        Region(entry),
        visibility=primitive.sym_visibility,
    )
    lowered.attributes.update(
        (name, attr)
        for name, attr in primitive.attributes.items()
        if name != relay.PRIMITIVE
    )
    lowered.attributes[tir.PRIM_FUNC] = UnitAttr()
    if isinstance(whole, CustomCallOp):  # a user kernel: it may fail
        lowered.attributes[RETURNS_STATUS] = UnitAttr()
        lowered.attributes[CUSTOM_HEADER] = whole.header
    lowered.location = primitive.location
    if whole is not None or builder.has_unused_values():
        # what the group computes for nothing (a whole operator's lowering
        # may place ops of its own: always looked for)
        erase_dead_code(lowered.body)
    return lowered


def _is_gather(result: SSAValue) -> bool:
    owner = result.owner
    return isinstance(owner, GatherOp)


def _mark_copy_runs(entry: Block, outputs: Collection[SSAValue]) -> None:
    """Mark ``COPY_RUN`` the loops that only copy a loaded element into one
    of ``outputs`` (a gather's rows: the C emitter makes each a
    ``memmove`` when the run is contiguous on both sides)."""
    if not outputs:  # no gather: nothing to look for in the loop nests
        return
    for op in walk_ops(entry):
        if not isinstance(op, scf.ForOp):
            continue
        body = list(op.body.block.ops)
        if (
            len(body) == 3
            and isinstance(load := body[0], memref.LoadOp)
            and isinstance(store := body[1], memref.StoreOp)
            and store.value is load.res
            and store.memref in outputs
        ):
            op.attributes[COPY_RUN] = UnitAttr()


class LowerPrimitiveFunction(RewritePattern):
    """A ``func.func`` marked ``relay.primitive`` -> its tir prim func
    (``lower_primitive``) for a CPU with ``features``."""

    def __init__(
        self,
        features: TargetFeatures = PORTABLE,
        constants: Mapping[str, Mapping[int, relay.ConstantOp]] | None = None,
    ):
        self.features = features
        self.constants = constants or {}
        """Per function, its parameters bound to constants
        (``constant_args.constant_arguments``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if relay.PRIMITIVE in op.attributes and cmsis_nn.CORE in op.attributes:
            lowered = cmsis_nn.lower_partitioned(op)
            erase_dead_code(lowered.body)
            rewriter.replace(op, lowered)
            return
        if relay.PRIMITIVE in op.attributes:
            bound = self.constants.get(op.sym_name.data, {})
            # the CPU's kernels are the host's: a group fuse-ops offloaded to
            # another target (tir.target) gets the portable ones
            features = PORTABLE if tir.TARGET in op.attributes else self.features
            if features.dsp:
                fold_input_offsets(op, bound)
            rewriter.replace(op, lower_primitive(op, features, bound))
