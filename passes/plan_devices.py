"""``plan-devices``: give every value of the relay ``main`` a virtual device.

TVM's device planner (PR #9038, seed 001) on MLIR, for the first-order,
straight-line relay this project compiles.

Analysis
    Unification over the whole of ``main``. Every tensor leaf of every value
    (tuples are flattened, so a tuple may hold values on several devices) is a
    node of a union-find. Constraints:

    * an operator or ``relay.call`` runs on one device: its operands' and
      results' leaves are unified;
    * ``relay.on_device %x {virtual_device = D}``: with ``constrain_body`` the
      operand is on ``D``; with ``constrain_result`` the result is on ``D``;
      with both (the default) operand and result are one node;
    * ``relay.device_copy``: operand on ``src``, result on ``dst``;
    * an existing ``relay.virtual_device`` attribute on an op, an argument or
      a result of ``main`` (left by a previous run or written by hand) binds
      that value;
    * constants are polymorphic: they take the device of their users and are
      duplicated when users on several devices share one.

    Two different devices forced onto one node are a located error naming
    both constraints.

Defaulting
    Nodes left free get ``default_device`` (options ``default_device``,
    ``default_device_id``; default ``cpu`` 0) with ``default_target`` (default
    ``c``), explicitly.

Rewrite
    Rewrite patterns over ``main``'s body, driven by xDSL's
    ``PatternRewriteWalker``, reading the finished analysis (the patterns never
    unify), then ``main``'s signature:

    * every relay op producing tensors (operators, ``relay.call``,
      ``relay.constant``) gets ``relay.virtual_device = #device.virtual_device<..>``;
      ``main``'s arguments and results get it as argument/result attributes;
    * an ``on_device`` whose operand and result ended on different devices
      becomes ``relay.device_copy`` (the value crosses devices there); any
      other ``on_device`` is dropped, its information being in the attributes.

Idempotence
    A second run reads the attributes the first wrote and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    TupleType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from usmp.diagnostics import located_error, location_of
from usmp.dialects import relay

_STRUCTURAL = (
    relay.TupleOp,
    relay.TupleGetItemOp,
    relay.OnDeviceOp,
    relay.DeviceCopyOp,
)


def _leaf_count(type_: Attribute) -> int:
    if isinstance(type_, TupleType):
        return sum(_leaf_count(t) for t in type_.types)
    return 1


@dataclass
class _Binding:
    device: relay.VirtualDeviceAttr
    origin: Operation | None


class _Unifier:
    """Union-find over tensor leaves, each root optionally bound to a device."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.binding: dict[int, _Binding] = {}

    def new(self, n: int) -> list[int]:
        start = len(self.parent)
        self.parent.extend(range(start, start + n))
        return list(range(start, start + n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def device(self, x: int) -> relay.VirtualDeviceAttr | None:
        b = self.binding.get(self.find(x))
        return None if b is None else b.device

    def bind(
        self, x: int, device: relay.VirtualDeviceAttr, origin: Operation | None
    ) -> None:
        root = self.find(x)
        old = self.binding.get(root)
        if old is None:
            self.binding[root] = _Binding(device, origin)
        elif old.device != device:
            raise located_error(
                origin,
                f"conflicting virtual devices: {device} here, but {old.device} at "
                f"{location_of(old.origin)}; separate them with relay.on_device "
                "{constrain_body = false} or a relay.device_copy",
            )

    def unify(self, a: int, b: int, origin: Operation) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        ba, bb = self.binding.pop(ra, None), self.binding.pop(rb, None)
        self.parent[rb] = ra
        for b_ in (ba, bb):
            if b_ is not None:
                self.bind(ra, b_.device, b_.origin if b_ is ba else origin)


def _default_device(kind: str, ident: int, target: str) -> relay.VirtualDeviceAttr:
    if not kind.isidentifier() or ident < 0:
        raise PassFailedException(
            f"plan-devices: default device '{kind}' id {ident} is invalid (expected "
            "a device type name such as cpu and an id >= 0)"
        )
    return relay.VirtualDeviceAttr(kind, ident, target, "global")


def _attr_device(attrs: DictionaryAttr | None) -> relay.VirtualDeviceAttr | None:
    if attrs is None:
        return None
    vd = attrs.data.get(relay.VIRTUAL_DEVICE)
    return vd if isinstance(vd, relay.VirtualDeviceAttr) else None


def _with_device(
    attrs: DictionaryAttr | None, device: relay.VirtualDeviceAttr
) -> DictionaryAttr:
    data = dict(attrs.data) if attrs is not None else {}
    data[relay.VIRTUAL_DEVICE] = device
    return DictionaryAttr(data)


class _Planner:
    def __init__(self, main: func.FuncOp, default: relay.VirtualDeviceAttr):
        self.main = main
        self.default = default
        self.uf = _Unifier()
        self.leaves: dict[SSAValue, list[int]] = {}
        # on_device ops whose operand and result were kept apart
        self.boundaries: list[relay.OnDeviceOp] = []
        self.order: dict[Operation, int] = {}
        """Position of each op of main (to visit a constant's users in order)."""

    def nodes(self, value: SSAValue) -> list[int]:
        if value not in self.leaves:
            self.leaves[value] = self.uf.new(_leaf_count(value.type))
        return self.leaves[value]

    def unify_all(self, values: Sequence[SSAValue], origin: Operation) -> None:
        nodes = [n for v in values for n in self.nodes(v)]
        for n in nodes[1:]:
            self.uf.unify(nodes[0], n, origin)

    def analyse(self) -> None:
        main = self.main
        block = main.body.block
        arg_attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
        for arg, attrs in zip(block.args, arg_attrs, strict=False):
            if (vd := _attr_device(attrs)) is not None:
                for n in self.nodes(arg):
                    self.uf.bind(n, vd, main)
        for i, op in enumerate(block.ops):
            self.order[op] = i
            self.visit(op)

    def visit(self, op: Operation) -> None:
        match op:
            case relay.ConstantOp():
                self.nodes(op.result)  # polymorphic: bound through its users
            case relay.TupleOp():
                self.leaves[op.result] = [n for f in op.fields for n in self.nodes(f)]
            case relay.TupleGetItemOp():
                assert isinstance(op.tuple.type, TupleType)
                fields = op.tuple.type.types.data
                index = op.get_index()
                start = sum(_leaf_count(f) for f in fields[:index])
                count = _leaf_count(fields[index])
                self.leaves[op.result] = self.nodes(op.tuple)[start : start + count]
            case relay.OnDeviceOp():
                body, result = self.nodes(op.data), self.nodes(op.result)
                vd = op.virtual_device
                constrain_body = op.get_constrain_body()
                constrain_result = op.get_constrain_result()
                if constrain_body == constrain_result:
                    for a, b in zip(body, result, strict=True):
                        self.uf.unify(a, b, op)
                else:
                    self.boundaries.append(op)
                for n in (body if constrain_body else []) + (
                    result if constrain_result else []
                ):
                    self.uf.bind(n, vd, op)
            case relay.DeviceCopyOp():
                for n in self.nodes(op.data):
                    self.uf.bind(n, op.src, op)
                for n in self.nodes(op.result):
                    self.uf.bind(n, op.dst, op)
            case func.ReturnOp():
                res_attrs = (
                    self.main.res_attrs.data if self.main.res_attrs is not None else ()
                )
                for value, attrs in zip(op.arguments, res_attrs, strict=False):
                    if (vd := _attr_device(attrs)) is not None:
                        for n in self.nodes(value):
                            self.uf.bind(n, vd, op)
                for value in op.arguments:
                    self.nodes(value)
            case _ if op.name.startswith("relay."):
                values = [
                    v
                    for v in (*op.operands, *op.results)
                    if not isinstance(v.owner, relay.ConstantOp)
                ]
                self.unify_all(values, op)
                if (vd := op.attributes.get(relay.VIRTUAL_DEVICE)) is not None:
                    if not isinstance(vd, relay.VirtualDeviceAttr):
                        raise located_error(
                            op,
                            f"'{relay.VIRTUAL_DEVICE}' must be a "
                            f"#device.virtual_device, got {vd}",
                        )
                    for v in values:
                        for n in self.nodes(v):
                            self.uf.bind(n, vd, op)
            case _:
                raise located_error(
                    op,
                    f"plan-devices: '{op.name}' is not supported in main (expected "
                    "relay ops and func.return: relay control flow is not supported)",
                )

    def device_of(self, value: SSAValue) -> relay.VirtualDeviceAttr:
        """The device of a single-leaf value (defaulted)."""
        return self.uf.device(self.nodes(value)[0]) or self.default

    def constant_users(
        self, op: relay.ConstantOp
    ) -> dict[relay.VirtualDeviceAttr, list[Operation]]:
        """The users of a constant by device, in IR order (first device first)."""
        by_device: dict[relay.VirtualDeviceAttr, list[Operation]] = {}
        uses = sorted(op.result.uses, key=lambda u: (self.order[u.operation], u.index))
        for use in uses:
            user = use.operation
            vd = _attr_device(DictionaryAttr(dict(user.attributes)))
            if vd is None:
                vd = self.user_device(user, use.index)
            by_device.setdefault(vd, []).append(user)
        return by_device

    def user_device(self, user: Operation, index: int) -> relay.VirtualDeviceAttr:
        if isinstance(user, relay.OnDeviceOp | relay.DeviceCopyOp | relay.TupleOp):
            leaves = self.nodes(user.operands[index])
            return self.uf.device(leaves[0]) or self.default
        if isinstance(user, func.ReturnOp):
            return self.uf.device(self.nodes(user.operands[index])[0]) or self.default
        return self.device_of(user.results[0] if user.results else user.operands[0])

    def annotate_signature(self) -> None:
        main = self.main
        block = main.body.block
        old_args = main.arg_attrs.data if main.arg_attrs is not None else ()
        main.arg_attrs = ArrayAttr(
            _with_device(
                old_args[i] if i < len(old_args) else None,
                self.uf.device(self.nodes(arg)[0]) or self.default,
            )
            for i, arg in enumerate(block.args)
        )
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        old_res = main.res_attrs.data if main.res_attrs is not None else ()
        main.res_attrs = ArrayAttr(
            _with_device(
                old_res[i] if i < len(old_res) else None,
                self.uf.device(self.nodes(value)[0]) or self.default,
            )
            for i, value in enumerate(ret.arguments)
        )


@dataclass(frozen=True)
class PlanDevicesPass(ModulePass):
    """Assign a virtual device to every value of the relay main."""

    name = "plan-devices"

    default_device: str = "cpu"
    """Device type of values no annotation constrains."""

    default_device_id: int = 0
    """Virtual device id of the default device."""

    default_target: str = "c"
    """Target of the default device."""

    entry: str = "main"
    """Symbol of the relay entry function."""

    def __post_init__(self) -> None:
        if not self.default_device.isidentifier() or self.default_device_id < 0:
            raise ValueError(
                f"plan-devices: default device '{self.default_device}' id "
                f"{self.default_device_id} is invalid (expected a device type name "
                "such as cpu and an id >= 0)"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        default = _default_device(
            self.default_device, self.default_device_id, self.default_target
        )
        main = next(
            (
                f
                for f in op.body.block.ops
                if isinstance(f, func.FuncOp) and f.sym_name.data == self.entry
            ),
            None,
        )
        if main is None or not main.body.blocks:
            return  # nothing relay-level to plan (e.g. already lowered)
        if any(isinstance(t, MemRefType) for t in main.function_type.inputs):
            return  # main is no longer relay (tir main): nothing to do
        if len(main.body.blocks) != 1:
            raise located_error(
                main,
                f"@{self.entry} has {len(main.body.blocks)} blocks; plan-devices "
                "expects relay dataflow in a single block (no control flow)",
            )
        planner = _Planner(main, default)
        planner.analyse()
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    _PlaceConstant(planner),
                    _LowerOnDevice(planner),
                    _AnnotateOperator(planner),
                ],
                dce_enabled=False,
            ),
            apply_recursively=False,
        ).rewrite_region(main.body)
        planner.annotate_signature()


@dataclass(frozen=True)
class _PlaceConstant(RewritePattern):
    """``relay.constant`` lives where its users run: it gets the first user's
    device and one copy per other user device (in IR order)."""

    planner: _Planner

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.ConstantOp, rewriter: PatternRewriter):
        by_device = self.planner.constant_users(op)
        devices = list(by_device) or [self.planner.default]
        op.attributes[relay.VIRTUAL_DEVICE] = devices[0]
        rewriter.notify_op_modified(op)
        for vd in devices[1:]:
            clone = relay.ConstantOp(op.value)
            clone.location = op.location
            clone.attributes[relay.VIRTUAL_DEVICE] = vd
            rewriter.insert(clone, InsertPoint.before(op))
            for user in by_device[vd]:
                for i, operand in enumerate(user.operands):
                    if operand is op.result:
                        user.operands[i] = clone.result
                rewriter.notify_op_modified(user)


@dataclass(frozen=True)
class _LowerOnDevice(RewritePattern):
    """``relay.on_device`` whose operand and result ended on different devices
    -> ``relay.device_copy``; any other is dropped (its information is in
    the attributes)."""

    planner: _Planner

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.OnDeviceOp, rewriter: PatternRewriter):
        uf, default = self.planner.uf, self.planner.default
        src = uf.device(self.planner.nodes(op.data)[0]) or default
        dst = uf.device(self.planner.nodes(op.result)[0]) or default
        if src == dst:
            rewriter.replace_all_uses_with(op.result, op.data)
            rewriter.erase(op)
            return
        copy = relay.DeviceCopyOp(op.data, src, dst)
        copy.location = op.location
        rewriter.insert(copy)
        copy.result.name_hint = op.result.name_hint
        rewriter.replace_all_uses_with(op.result, copy.result)
        rewriter.erase(op)


@dataclass(frozen=True)
class _AnnotateOperator(RewritePattern):
    """Every other relay op producing tensors (operators, ``relay.call``) gets
    its device as ``relay.virtual_device``."""

    planner: _Planner

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter):
        if not op.name.startswith("relay.") or isinstance(op, _STRUCTURAL):
            return
        device = self.planner.device_of(op.results[0] if op.results else op.operands[0])
        if op.attributes.get(relay.VIRTUAL_DEVICE) != device:
            op.attributes[relay.VIRTUAL_DEVICE] = device
            rewriter.notify_op_modified(op)
