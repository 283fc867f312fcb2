"""``fuse-ops``: group relay operators into primitive functions (TVM FuseOps).

What it does
    Partitions the relay operators of every graph-level function (``@main``;
    any ``func.func`` that is neither ``relay.primitive`` nor a tir prim func)
    with TVM's post-dominator algorithm (``usmp.lowering.fusion``; each
    operator's pattern is its ``Fusion`` trait, ``usmp.dialects.relay_fusion``):
    an anchor (conv2d, dense, pooling, mean, softmax) absorbs its elementwise
    epilogue (bias add, the requantisation chain, clip/relu, cast),
    elementwise producers fuse into injective and reduction consumers,
    injective ops fuse together. Each group becomes a
    primitive function, called from where its last op was::

        %r = relay.call
            @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
                %x, %w, %b) : (tensor<..>, tensor<..>, tensor<..>) -> tensor<..>

        func.func @tvmgen_default_fused_nn_conv2d_add_...(%x, %w, %b) -> tensor<..>
            attributes {relay.primitive} { <the group's relay ops> }

    One deviation from TVM, for memory: at a join of two anchor chains (an
    int8 residual add), the chain that cannot enter the join's group hands
    its trailing widening ops (``cast`` to i32 and the input rescale) to
    that group, so the tensor between the groups is its i8 value and not
    the i32 one (``usmp.lowering.fusion.narrow_outputs``).

    Names follow TVM: ``tvmgen_<module_name>_fused_`` + the TVM names of the
    group's ops in execution order (a name part longer than 80 characters is
    cut and given a CRC-32 of the whole), made unique with ``_1``, ``_2``...
    Primitive functions are inserted before the function they come from, in
    execution order.

    Constants: a ``dense<...>`` constant whose elements are all equal (a
    scalar such as a zero point, or a splat) is copied into every group that
    uses it (it becomes an immediate in the lowered code and needs no buffer;
    TVM does this for rank-0 constants); any other constant stays in main
    and is passed as a call argument, so ``aot-lower-main`` turns it into a
    ``tir.allocate_const`` the planner sees. Arguments are ordered by first
    use in the group.

    Devices (after ``plan-devices``): an operator and its producer on two
    devices (their ``relay.virtual_device`` differs) are never fused, so every
    group runs on one device; its ``relay.call`` and its primitive function
    keep that ``relay.virtual_device``. A group whose device's target is not
    the host's (``c``) is named ``tvmgen_<module_name>_<target>_fused_...``
    and its function gets ``tir.target = "<target>"`` (the C library puts
    it in that target's own source file; USMP lets it touch only pools that
    target can access).

    A group made of views only (``relay.reshape``, and ``relay.strided_slice``
    selecting one contiguous block in order: a SLICE, STRIDED_SLICE, SPLIT or
    UNPACK piece along the outermost axis that is not 1) is left in main as
    is: ``aot-lower-main`` aliases a view to its operand's storage at an
    element offset (no copy, no call). TVM keeps them as primitive functions
    (copies). A view fused with compute stays in its group: the kernel reads
    its operand at the offset.

    Dead code: relay ops whose results are unused are erased first, and
    uniform constants copied into every group that used them last, by xDSL's
    ``region_dce`` (relay ops are ``Pure``; TVM's relay expressions cannot
    hold dead code).

How
    Per graph-level function, the partition (``partition``) is the analysis:
    it gives the groups to outline, each with its one output, before any
    rewrite. Then ``_OutlineGroup``, a rewrite pattern applied by xDSL's
    ``PatternRewriteWalker`` in execution order, matches each group's root
    (its last op) and replaces the group by the primitive function and the
    ``relay.call``.

Requires
    Relay dataflow in a single block with static shapes. Structural ops
    (``call``, ``tuple``, ``tuple_get_item``, ``on_device``, ``device_copy``)
    and unknown ops are opaque: never fused, they bound the groups. Relay
    operators nested in regions are rejected with a located error.

Afterwards
    main holds ``relay.call``/``relay.constant``/structural ops and standalone
    views (``relay.reshape``, contiguous ``relay.strided_slice``); every other
    operator lives in a primitive function.

Idempotence
    A second run finds only opaque calls and standalone views: no change.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FixedBitwidthType,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolOpInterface
from xdsl.transforms.dead_code_elimination import region_dce

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.dialects.device import VirtualDeviceAttr
from usmp.dialects.relay_fusion import OpPattern, is_operator, op_pattern, tvm_name
from usmp.dialects.relay_ops import is_view
from usmp.lowering.c_names import c_identifier
from usmp.lowering.constant_args import is_uniform
from usmp.lowering.fusion import GraphNode, partition
from usmp.passes.options import TypedOptions

HOST_TARGET = "c"
"""The host's target: its groups keep TVM's ``tvmgen_<module>_fused_`` names."""

_MAX_NAME_LENGTH = 80
"""TVM's ``kMaxFuncNameLength`` for the ``fused_...`` part of a name."""


@dataclass(frozen=True)
class FuseOpsPass(TypedOptions):
    """Group relay operators into ``relay.primitive`` functions called with
    ``relay.call``, following TVM's FuseOps rules."""

    name = "fuse-ops"

    max_depth: int = 256
    """Largest number of operators in one group (TVM's
    ``relay.FuseOps.max_depth``); 1 puts every operator in its own group."""

    module_name: str = "default"
    """Model name in the function prefix ``tvmgen_<module_name>_``."""

    def __post_init__(self) -> None:
        if self.max_depth < 1:
            raise ValueError(
                f"fuse-ops: max_depth must be a positive number of operators, got "
                f"{self.max_depth}"
            )
        if not self.module_name.isidentifier() or not self.module_name.isascii():
            raise ValueError(
                f"fuse-ops: module_name '{self.module_name}' is not a C identifier "
                "(expected letters, digits and '_', not starting with a digit)"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = _SymbolNames(op)
        for function in list(op.ops):
            if (
                isinstance(function, func.FuncOp)
                and relay.PRIMITIVE not in function.attributes
                and tir.PRIM_FUNC not in function.attributes
                and function.body.blocks
            ):
                _fuse_function(function, self.max_depth, self.module_name, names)


class _SymbolNames:
    """Names taken in the module, for TVM-style unique ``_N`` suffixes."""

    def __init__(self, module: ModuleOp):
        self.taken: set[str] = set()
        for op in module.ops:
            sym = op.get_trait(SymbolOpInterface)
            name = sym.get_sym_attr_name(op) if sym is not None else None
            if name is not None:
                self.taken.add(name.data)

    def unique(self, base: str) -> str:
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


def fused_name(ops: Sequence[Operation], module_name: str, target: str = "") -> str:
    """TVM's readable name of a fused function (before uniquing); a group
    offloaded to another ``target`` than the host's is prefixed
    ``tvmgen_<module>_<target>_``."""
    candidate = "fused_" + "_".join(tvm_name(op) for op in ops)
    if len(candidate) > _MAX_NAME_LENGTH:
        digest = zlib.crc32(candidate.encode())
        candidate = f"{candidate[:_MAX_NAME_LENGTH]}_{digest:08x}_"
    prefix = f"tvmgen_{module_name}_" + (f"{c_identifier(target)}_" if target else "")
    return prefix + candidate


def _offload_target(device: Attribute | None) -> str:
    """The target of a group on ``device`` when it is not the host's (``c``),
    else ``""``."""
    if not isinstance(device, VirtualDeviceAttr):
        return ""
    target = device.target.data
    return "" if target in ("", HOST_TARGET) else target


def _uniform_constant(value: SSAValue) -> relay.ConstantOp | None:
    """The producer of ``value`` if it is a dense constant whose elements are
    all equal (a scalar or a splat): an immediate once lowered."""
    owner = value.owner
    if isinstance(owner, relay.ConstantOp) and is_uniform(owner.value):
        return owner
    return None


def _check_function(function: func.FuncOp) -> Block:
    if len(function.body.blocks) != 1:
        raise located_error(
            function,
            f"@{function.sym_name.data} has {len(function.body.blocks)} blocks; "
            "fuse-ops expects straight-line relay dataflow in a single block",
        )
    block = function.body.blocks[0]
    for op in block.ops:
        for nested in op.walk():
            if nested is not op and is_operator(nested):
                raise located_error(
                    nested,
                    f"'{nested.name}' is nested in '{op.name}'; fuse-ops only fuses "
                    "relay operators at the top level of a function (control flow "
                    "is not supported)",
                )
        if is_operator(op):
            for result in op.results:
                t = result.type
                if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
                    raise located_error(
                        op,
                        f"'{op.name}' produces {t}; fuse-ops needs statically "
                        "shaped tensors",
                    )
    return block


def device_of(op: Operation) -> Attribute | None:
    """The ``relay.virtual_device`` plan-devices put on ``op`` (``None``:
    devices not planned)."""
    return op.attributes.get(relay.VIRTUAL_DEVICE)


def _build_graph(nodes: Sequence[Operation]) -> list[GraphNode]:
    """The dataflow graph of ``nodes``; an edge between two operators on
    different devices is left out (its value leaves the producer's group, as
    a use outside ``nodes`` does), so no group spans two devices."""
    index = {op: i for i, op in enumerate(nodes)}
    graph = [GraphNode(op_pattern(op)) for op in nodes]
    crossing: set[int] = set()
    for i, op in enumerate(nodes):
        pattern = graph[i].pattern
        result_type = op.results[0].type if len(op.results) == 1 else None
        graph[i].nbytes = sum(_nbytes(r.type) for r in op.results)
        for operand in op.operands:
            producer = index.get(operand.owner)  # type: ignore[arg-type]
            if producer is None:
                continue
            if device_of(nodes[producer]) != device_of(op):
                crossing.add(producer)
                continue
            edge = pattern
            if edge == OpPattern.BROADCAST and operand.type == result_type:
                edge = OpPattern.ELEMWISE
            graph[producer].outputs.append((i, edge))
            graph[i].inputs.append(producer)
    for i, op in enumerate(nodes):
        graph[i].extern_ref = i in crossing or any(
            use.operation not in index for r in op.results for use in r.uses
        )
    return graph


def _nbytes(t: object) -> int:
    """Bytes of a tensor value (0 for anything else, e.g. a tuple)."""
    if isinstance(t, TensorType):
        el = t.get_element_type()
        width = el.bitwidth if isinstance(el, FixedBitwidthType) else 32
        return t.element_count() * max(width // 8, 1)
    return 0


@dataclass(frozen=True)
class _Group:
    """A group to outline: its ops in execution order (the root last) and the
    one value used outside it."""

    members: list[Operation]
    output: SSAValue


def _groups_to_outline(block: Block, max_depth: int) -> dict[Operation, _Group]:
    """The partition's groups that become primitive functions, by root."""
    nodes = [
        op
        for op in block.ops
        if not isinstance(op, relay.ConstantOp) and op is not block.last_op
    ]
    groups: dict[int, list[Operation]] = {}
    for op, rep in zip(nodes, partition(_build_graph(nodes), max_depth), strict=True):
        groups.setdefault(rep, []).append(op)
    outlined: dict[Operation, _Group] = {}
    for members in groups.values():
        if not is_operator(members[0]):
            continue  # structural or unknown: stays in main
        if all(is_view(m) for m in members):
            continue  # aliased by aot-lower-main
        member_set = set(members)
        outputs = [
            r
            for op in members
            for r in op.results
            if any(use.operation not in member_set for use in r.uses)
        ]
        if not outputs and members[-1].results:
            # an operator updating state whose result is unused: still a call
            # (dead, with its state, once nothing reads that state)
            outputs = [members[-1].results[0]]
        if len(outputs) != 1:  # TVM's post-dominator rule gives one root
            raise located_error(
                members[-1],
                f"internal error: fused group has {len(outputs)} outputs, expected 1",
            )
        # (each device printed once: ``str`` of an attribute runs a printer)
        devices = {str(d) for d in {device_of(m) for m in members}}
        if len(devices) > 1:
            raise located_error(
                members[-1],
                "internal error: fused group spans devices "
                + ", ".join(sorted(devices)),
            )
        outlined[members[-1]] = _Group(members, outputs[0])
    return outlined


def _fuse_function(
    function: func.FuncOp, max_depth: int, module_name: str, names: _SymbolNames
) -> None:
    block = _check_function(function)
    region_dce(function.body)  # relay ops are pure: dead ones are not fused
    groups = _groups_to_outline(block, max_depth)
    outline = _OutlineGroup(function, groups, module_name, names)
    # a root at a time, in block order (what a non-recursive rewrite walk
    # does): only roots are rewritten, and one rewrite touches no other root
    for op in list(block.ops):
        if op in groups:
            outline.match_and_rewrite(op, PatternRewriter(op))
    region_dce(function.body)  # uniform constants now only used in groups


@dataclass(frozen=True)
class _OutlineGroup(RewritePattern):
    """The root of a group -> a ``relay.primitive`` function (inserted before
    ``function``) holding the group's ops and the uniform constants they
    use, and a ``relay.call`` of it in place of the root."""

    function: func.FuncOp
    groups: dict[Operation, _Group]
    module_name: str
    names: _SymbolNames

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        group = self.groups.get(op)
        if group is None:
            return
        members, output = group.members, group.output
        member_set = set(members)
        arguments: list[SSAValue] = []
        constants: list[relay.ConstantOp] = []
        for member in members:
            for operand in member.operands:
                if operand.owner in member_set:
                    continue
                constant = _uniform_constant(operand)
                if constant is not None:
                    if constant not in constants:
                        constants.append(constant)
                elif operand not in arguments:
                    arguments.append(operand)

        device = device_of(members[-1])
        target = _offload_target(device)
        name = fused_name(members, self.module_name, target)
        symbol = self.names.unique(name)
        call = relay.CallOp(symbol, arguments, output.type)
        call.location = output.owner.location  # type: ignore[union-attr]
        if device is not None:
            call.attributes[relay.VIRTUAL_DEVICE] = device
        rewriter.insert(call, InsertPoint.after(op))  # before op moves
        primitive = _primitive_function(symbol, members, output, arguments, constants)
        if device is not None:
            primitive.attributes[relay.VIRTUAL_DEVICE] = device
        if target:
            primitive.attributes[tir.TARGET] = StringAttr(target)
        rewriter.insert(primitive, InsertPoint.before(self.function))
        # the members moved into the primitive function: the uses left here
        # read the call
        for use in list(output.uses):
            if use.operation.parent is not primitive.body.block:
                use.operation.operands[use.index] = call.result
                rewriter.notify_op_modified(use.operation)


def _primitive_function(
    symbol: str,
    members: list[Operation],
    output: SSAValue,
    arguments: list[SSAValue],
    constants: list[relay.ConstantOp],
) -> func.FuncOp:
    """The function of a group: its ``members`` are moved into it (not
    cloned: the group's ops leave the caller), reading its ``arguments`` as
    block arguments and clones of the uniform ``constants``."""
    body = Block(arg_types=[a.type for a in arguments])
    mapping: dict[SSAValue, SSAValue] = dict(zip(arguments, body.args, strict=True))
    for constant in constants:
        clone = constant.clone()
        body.add_op(clone)
        mapping[constant.result] = clone.result
    for op in members:
        op.detach()
        body.add_op(op)
        for index, operand in enumerate(op.operands):
            new = mapping.get(operand)
            if new is not None:
                op.operands[index] = new
    ret = func.ReturnOp(output)
    ret.location = members[-1].location
    body.add_op(ret)
    primitive = func.FuncOp(
        symbol,
        FunctionType.from_lists([a.type for a in arguments], [output.type]),
        Region(body),
    )
    primitive.attributes[relay.PRIMITIVE] = UnitAttr()
    primitive.location = members[-1].location
    return primitive


def fusion_groups(nodes: Sequence[Operation], max_depth: int = 256) -> list[int]:
    """The group (a representative index) of each of ``nodes`` (a block's
    relay ops in order, constants and the terminator left out) as
    ``fuse-ops`` partitions them; for analyses that predict the kernels
    (``patch-stage``'s peak estimate)."""
    return partition(_build_graph(nodes), max_depth)
