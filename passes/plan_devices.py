"""``plan-devices``: give every value of every relay function a virtual device.

TVM's device planner (PR #9038, seed 001; ``device_planner.cc``) on MLIR, for
first-order relay: ``main`` and every non-primitive relay function it calls
(``relay.call @f`` between relay functions). Primitive (fused) functions are
device-polymorphic and are not entered, as in TVM.

Phase 0 (rewrite)
    ``relay.tuple_get_item`` of a body-only ``relay.on_device`` projects first,
    then annotates (``on_device(%t)[i]`` -> ``on_device(%t[i])``), so only
    the fields actually read cross devices, never a whole tuple.

Phases 1 and 2 (analysis, ``device_domains.py``)
    Unification of partially known ``#device.virtual_device``s over every
    value, TVM's ``on_device`` semantics (body only by default; fixed; result
    only; free), ``device_copy`` src/dst, function domains shared by all call
    sites, and TVM's defaulting (function results take the default device,
    free parameters the result's device, leftovers the default). Located
    errors only when two fixed constraints disagree, naming both.

Phase 3 (rewrite, patterns reading the finished analysis)
    * every relay op producing tensors (operators, ``relay.call``,
      ``relay.constant``) gets ``relay.virtual_device = #device.virtual_device<..>``;
      every relay function's arguments and results get it as argument/result
      attributes; all devices are written in full (defaulted);
    * a constant used on several devices is duplicated, one per device;
    * an ``on_device`` whose two sides ended on different devices becomes
      ``relay.device_copy``; any other ``on_device`` is dropped;
    * a copy-permitting edge of an already placed op whose two sides differ
      gets a ``relay.device_copy`` right after the producer, one per (value,
      device): a value used on several devices is copied once per device;
    * an existing ``device_copy`` gets its solved src/dst; one with src == dst
      is removed.

Option ``targets`` (``usmp-compile --target``): every device must be on
one of them, else a located error names the others.

Idempotence
    A second run reads the attributes the first wrote (every op is then
    placed and every edge consistent) and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from usmp.diagnostics import located_error
from usmp.dialects import relay
from usmp.dialects.device import MAX_DEVICE_ID
from usmp.passes.device_domains import (
    STRUCTURAL,
    DevicePlan,
    Edge,
    is_relay_function,
    plan,
)
from usmp.passes.options import TypedOptions


def _with_device(
    attrs: DictionaryAttr | None, device: relay.VirtualDeviceAttr
) -> DictionaryAttr:
    data = dict(attrs.data) if attrs is not None else {}
    data[relay.VIRTUAL_DEVICE] = device
    return DictionaryAttr(data)


def _walk(patterns: list[RewritePattern], f: func.FuncOp) -> None:
    PatternRewriteWalker(
        GreedyRewritePatternApplier(patterns, dce_enabled=False),
        apply_recursively=False,
    ).rewrite_region(f.body)


@dataclass(frozen=True)
class PlanDevicesPass(TypedOptions):
    """Assign a virtual device to every value of every relay function."""

    name = "plan-devices"

    default_device: str = "cpu"
    """Device type of values no annotation constrains."""

    default_device_id: int = 0
    """Virtual device id of the default device."""

    default_target: str = "c"
    """Target of the default device."""

    entry: str = "main"
    """Symbol of the relay entry function (its result is defaulted first)."""

    targets: tuple[str, ...] = ()
    """The targets the module may run on (``usmp-compile --target``); a device
    on any other target is an error. Empty: any target."""

    def __post_init__(self) -> None:
        if (
            not self.default_device.isidentifier()
            or not 0 <= self.default_device_id <= MAX_DEVICE_ID
        ):
            raise ValueError(
                f"plan-devices: default device '{self.default_device}' id "
                f"{self.default_device_id} is invalid (expected a device type name "
                f"such as cpu and an id from 0 to {MAX_DEVICE_ID})"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if (
            not self.default_device.isidentifier()
            or not 0 <= self.default_device_id <= MAX_DEVICE_ID
        ):
            raise PassFailedException(
                f"plan-devices: default device '{self.default_device}' id "
                f"{self.default_device_id} is invalid (expected a device type name "
                f"such as cpu and an id from 0 to {MAX_DEVICE_ID})"
            )
        default = relay.VirtualDeviceAttr(
            self.default_device, self.default_device_id, self.default_target, "global"
        )
        functions = [f for f in op.body.block.ops if is_relay_function(f)]
        for f in functions:
            assert isinstance(f, func.FuncOp)
            if len(f.body.blocks) != 1:
                raise located_error(
                    f,
                    f"@{f.sym_name.data} has {len(f.body.blocks)} blocks; "
                    "plan-devices expects relay dataflow in a single block (no "
                    "control flow)",
                )
            if any(isinstance(o, relay.OnDeviceOp) for o in f.walk()):
                _walk([_ProjectThenCopy()], f)  # it rewrites only on_device's users
        solved = plan(op, self.entry, default)
        edges: dict[Operation, list[Edge]] = {}
        for edge in solved.edges:
            edges.setdefault(edge.user, []).append(edge)
        copy_edges = _CopyEdges(solved, edges)
        # _CopyEdges rewrites only edges whose two sides differ: no walk without
        copies = any(
            solved.domains.get(e.value_node) != solved.domains.get(e.use_node)
            for e in solved.edges
        )
        for f in solved.functions:
            if copies:
                _walk([copy_edges], f)
            _walk(
                [
                    _PlaceConstant(solved),
                    _LowerOnDevice(solved),
                    _ResolveDeviceCopy(solved),
                    _AnnotateOperator(solved),
                ],
                f,
            )
            _annotate_signature(solved, f)
        if self.targets:
            _check_targets(solved.functions, self.targets)


def _check_targets(functions: list[func.FuncOp], targets: tuple[str, ...]) -> None:
    """Every device's target is one of ``targets`` (a located error at the
    first op placed elsewhere, naming every target missing)."""
    unknown: list[str] = []
    first: Operation | None = None
    for f in functions:
        for op in f.walk():
            device = op.attributes.get(relay.VIRTUAL_DEVICE)
            if not isinstance(device, relay.VirtualDeviceAttr):
                continue
            target = device.target.data
            if target and target not in targets and target not in unknown:
                unknown.append(target)
                first = first or op
    if unknown:
        raise located_error(
            first,
            f"plan-devices: the module places operators on target(s) "
            f"{', '.join(unknown)}, which targets={','.join(targets)} does not "
            f"name (usmp-compile: --target {','.join([*unknown, *targets])})",
        )


def _annotate_signature(solved: DevicePlan, f: func.FuncOp) -> None:
    block = f.body.block
    old_args = f.arg_attrs.data if f.arg_attrs is not None else ()
    f.arg_attrs = ArrayAttr(
        _with_device(old_args[i] if i < len(old_args) else None, solved.device(arg))
        for i, arg in enumerate(block.args)
    )
    result = solved.domains.get(solved.results[f])
    old_res = f.res_attrs.data if f.res_attrs is not None else ()
    f.res_attrs = ArrayAttr(
        _with_device(old_res[i] if i < len(old_res) else None, result)
        for i in range(len(f.function_type.outputs))
    )


class _ProjectThenCopy(RewritePattern):
    """TVM phase 0: ``on_device(%t)[i]`` -> ``on_device(%t[i])`` for a
    body-only ``on_device``, so a copy moves the field, not the tuple."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.TupleGetItemOp, rewriter: PatternRewriter):
        on_device = op.tuple.owner
        if not (
            isinstance(on_device, relay.OnDeviceOp)
            and on_device.get_constrain_body()
            and not on_device.get_constrain_result()
        ):
            return
        get = relay.TupleGetItemOp(on_device.data, op.get_index())
        annotate = relay.OnDeviceOp(
            get.result, on_device.virtual_device, constrain_result=False
        )
        get.location = annotate.location = op.location
        rewriter.replace(op, [get, annotate], [annotate.result])
        if not on_device.result.uses:
            rewriter.erase(on_device)


@dataclass(frozen=True)
class _CopyEdges(RewritePattern):
    """A copy-permitting edge whose two sides ended on different devices
    reads a ``relay.device_copy`` of the value, placed right after its
    producer and shared by every user on that device."""

    solved: DevicePlan
    edges: dict[Operation, list[Edge]]
    copies: dict[tuple[SSAValue, Attribute], SSAValue] = field(
        default_factory=dict[tuple[SSAValue, Attribute], SSAValue]
    )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        for edge in self.edges.get(op, ()):
            src = self.solved.domains.get(edge.value_node)
            dst = self.solved.domains.get(edge.use_node)
            if src == dst:
                continue
            value = op.operands[edge.index]
            key = (value, dst)
            if key not in self.copies:
                copy = relay.DeviceCopyOp(value, src, dst)
                copy.location = op.location
                owner = value.owner
                point = (
                    InsertPoint.at_start(owner)
                    if isinstance(owner, Block)
                    else InsertPoint.after(owner)
                )
                rewriter.insert(copy, point)
                self.copies[key] = copy.result
            op.operands[edge.index] = self.copies[key]
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class _PlaceConstant(RewritePattern):
    """``relay.constant`` lives where its users read it: the first user's
    device, and one copy of the constant per other device (in IR order)."""

    solved: DevicePlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.ConstantOp, rewriter: PatternRewriter):
        by_device: dict[relay.VirtualDeviceAttr, list[tuple[Operation, int]]] = {}
        order = self.solved.order
        uses = sorted(op.result.uses, key=lambda u: (order[u.operation], u.index))
        for use in uses:
            device = self.solved.use_device(use.operation, use.index)
            by_device.setdefault(device, []).append((use.operation, use.index))
        devices = list(by_device) or [self.solved.default]
        if op.attributes.get(relay.VIRTUAL_DEVICE) != devices[0]:
            op.attributes[relay.VIRTUAL_DEVICE] = devices[0]
            rewriter.notify_op_modified(op)
        for device in devices[1:]:
            clone = relay.ConstantOp(op.value)
            clone.location = op.location
            clone.attributes[relay.VIRTUAL_DEVICE] = device
            rewriter.insert(clone, InsertPoint.before(op))
            for user, index in by_device[device]:
                user.operands[index] = clone.result
                rewriter.notify_op_modified(user)


@dataclass(frozen=True)
class _LowerOnDevice(RewritePattern):
    """``relay.on_device`` whose two sides ended on different devices ->
    ``relay.device_copy``; any other is dropped (its information is in the
    attributes)."""

    solved: DevicePlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.OnDeviceOp, rewriter: PatternRewriter):
        record = self.solved.on_devices[op]
        src = self.solved.domains.get(record.body)
        dst = self.solved.domains.get(record.result)
        if src == dst:
            rewriter.replace_all_uses_with(op.result, op.data)
            rewriter.erase(op)
            return
        copy = relay.DeviceCopyOp(op.data, src, dst)
        copy.location = op.location
        rewriter.replace(op, copy)


@dataclass(frozen=True)
class _ResolveDeviceCopy(RewritePattern):
    """An existing ``relay.device_copy`` gets its solved (complete) src and
    dst; a copy to the device it comes from is removed."""

    solved: DevicePlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.DeviceCopyOp, rewriter: PatternRewriter):
        if op.result not in self.solved.nodes:
            return  # made by this run
        src = self.solved.use_device(op, 0)
        dst = self.solved.device(op.result)
        if src == dst:
            rewriter.replace_all_uses_with(op.result, op.data)
            rewriter.erase(op)
        elif (op.src, op.dst) != (src, dst):
            op.src, op.dst = src, dst
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class _AnnotateOperator(RewritePattern):
    """Every other relay op producing tensors (operators, ``relay.call``) gets
    its device as ``relay.virtual_device``."""

    solved: DevicePlan

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if (
            not op.name.startswith("relay.")
            or isinstance(op, STRUCTURAL)
            or not op.results
        ):
            return
        device = self.solved.device(op.results[0])
        if op.attributes.get(relay.VIRTUAL_DEVICE) != device:
            op.attributes[relay.VIRTUAL_DEVICE] = device
            rewriter.notify_op_modified(op)
