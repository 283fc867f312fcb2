"""The analysis of ``plan-devices``: a device domain for every value of every
relay function of a module (TVM's ``device_domains`` + ``DeviceAnalyzer`` +
``DeviceDefaulter``, seed 001). It never changes the IR; ``plan_devices.py``
reads the result to rewrite.

Domains
    A union-find over nodes; each root holds a partially known
    ``#device.virtual_device`` (unset fields are wildcards) and the op that
    constrained it, for diagnostics. Unifying joins the two devices field by
    field; two known, different values of one field are a located error
    naming both constraints. Every SSA value has one node (a tuple and its
    fields share one, as in TVM); a function's domain is its parameters'
    nodes and one result node (all its returned values).

Constraints (phase 1, TVM's ``DomainForCallee``)
    * operators and calls of primitive functions: operands and results are
      one node (device-polymorphic: each call site has its own);
    * ``relay.call`` of a relay function: its arguments and result are
      unified with the callee's parameters and result (no polymorphism);
    * ``relay.tuple`` / ``relay.tuple_get_item``: one node with the fields;
    * ``relay.on_device D``: ``constrain_body`` binds the operand to D,
      ``constrain_result`` the result; both ("fixed") make them one node;
      neither ("free") imposes nothing and permits a copy. A body-only
      ``on_device`` returned by its function is fixed (TVM phase 0);
    * ``relay.device_copy``: operand on ``src``, result on ``dst``;
    * function argument / result attributes (a previous run, or by hand)
      bind them;
    * an operator or primitive call already carrying ``relay.virtual_device``
      is pinned there, and each of its operand and result edges permits a
      copy (TVM's ``copy_ok`` around already-placed calls), so a value used on
      several devices gets one copy per device;
    * a constant has a node per use: it is placed where each user needs it;
    * an operator reading a value that another use already put on another
      device reads a copy instead, unless the value itself is fixed (TVM's
      phase 1 conflict resolution, ``DevicePlan.unify_operand``).

Defaulting (phase 2, TVM's ``FreeOnDeviceDefaulter`` + ``DeviceDefaulter``)
    Free ``on_device``s and copy-permitting edges first try to unify their
    two sides (no copy if nothing prevents it). Then for each function, the
    entry first: the result takes the default device's unset fields, free
    parameters the result's device; then each op, users before producers: a
    free result takes the default, a free operand side of an ``on_device``
    or edge takes its result side. Leftover nodes take the default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from usmp.diagnostics import LocatedError, located_error, location_of
from usmp.dialects import relay
from usmp.dialects.tir import PRIM_FUNC

VirtualDevice = relay.VirtualDeviceAttr
_ANY = relay.VirtualDeviceAttr.unconstrained()

STRUCTURAL = (
    relay.ConstantOp,
    relay.TupleOp,
    relay.TupleGetItemOp,
    relay.OnDeviceOp,
    relay.DeviceCopyOp,
)


class Domains:
    """Union-find over device nodes; a root holds its (partial) device."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.device: dict[int, VirtualDevice] = {}
        self.origin: dict[int, Operation | None] = {}
        self.what: dict[int, str] = {}
        """What constrained a root, when its op is not enough (an argument)."""

    def new(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def get(self, x: int) -> VirtualDevice:
        return self.device.get(self.find(x), _ANY)

    def _conflict(
        self, here: Operation | None, mine: VirtualDevice, what: str, root: int
    ) -> LocatedError:
        theirs = self.what.get(root, "")
        return located_error(
            here,
            f"conflicting virtual devices: {mine} here{what}, but "
            f"{self.device[root]} at {location_of(self.origin[root])}{theirs}; "
            "separate them with relay.on_device (constrain_result = false permits "
            "a copy) or a relay.device_copy",
        )

    def bind(
        self, x: int, device: VirtualDevice, origin: Operation | None, what: str = ""
    ) -> None:
        """Constrain ``x`` to ``device`` (``what``: " (argument 0 of @f)")."""
        root = self.find(x)
        old = self.device.get(root)
        if old is None:
            self.device[root], self.origin[root] = device, origin
            if what:
                self.what[root] = what
            return
        joined = old.join(device)
        if joined is None:
            raise self._conflict(origin, device, what, root)
        self.device[root] = joined

    def unify(self, a: int, b: int, origin: Operation) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        da, db = self.device.get(ra), self.device.get(rb)
        if da is not None and db is not None and da.join(db) is None:
            raise located_error(
                origin,
                f"conflicting virtual devices meet here: {db} from "
                f"{location_of(self.origin[rb])}{self.what.get(rb, '')} and {da} "
                f"from {location_of(self.origin[ra])}{self.what.get(ra, '')}; "
                "separate them with relay.on_device (constrain_result = false "
                "permits a copy) or a relay.device_copy",
            )
        self.parent[rb] = ra
        if db is not None:
            self.device.pop(rb)
            origin_b = self.origin.pop(rb)
            what_b = self.what.pop(rb, None)
            if da is None:
                self.device[ra], self.origin[ra] = db, origin_b
                if what_b is not None:
                    self.what[ra] = what_b
            else:
                joined = da.join(db)
                assert joined is not None
                self.device[ra] = joined

    def try_unify(self, a: int, b: int, origin: Operation) -> None:
        """Unify unless their devices conflict (a copy is permitted)."""
        if self.get(a).join(self.get(b)) is not None:
            self.unify(a, b, origin)

    def set_default(self, x: int, default: VirtualDevice) -> None:
        root = self.find(x)
        device = self.device.get(root, _ANY).default_from(default)
        if device != self.device.get(root):
            self.origin.setdefault(root, None)
            self.device[root] = device


def attr_device(attrs: DictionaryAttr | None) -> VirtualDevice | None:
    if attrs is None:
        return None
    vd = attrs.data.get(relay.VIRTUAL_DEVICE)
    return vd if isinstance(vd, VirtualDevice) else None


def op_device(op: Operation) -> VirtualDevice | None:
    """The ``relay.virtual_device`` an op carries (a located error if it is
    not a ``#device.virtual_device``)."""
    vd = op.attributes.get(relay.VIRTUAL_DEVICE)
    if vd is not None and not isinstance(vd, VirtualDevice):
        raise located_error(
            op, f"'{relay.VIRTUAL_DEVICE}' must be a #device.virtual_device, got {vd}"
        )
    return vd


def is_relay_function(op: Operation) -> bool:
    """A ``func.func`` plan-devices plans: a relay function with a body that
    is neither a primitive (fused) function nor a tir prim func."""
    return (
        isinstance(op, func.FuncOp)
        and bool(op.body.blocks)
        and relay.PRIMITIVE not in op.attributes
        and PRIM_FUNC not in op.attributes
        and not any(
            isinstance(t, MemRefType)
            for t in (*op.function_type.inputs, *op.function_type.outputs)
        )
    )


@dataclass
class Edge:
    """A use whose two sides may end on different devices (a copy then)."""

    user: Operation
    index: int
    value_node: int
    use_node: int


@dataclass
class OnDevice:
    op: relay.OnDeviceOp
    body: int
    result: int


@dataclass
class DevicePlan:
    """The solved domains of a module's relay functions."""

    default: VirtualDevice
    functions: list[func.FuncOp]
    domains: Domains = field(default_factory=Domains)
    nodes: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    use_nodes: dict[tuple[Operation, int], int] = field(
        default_factory=dict[tuple[Operation, int], int]
    )
    """Nodes of uses seen apart from their value (constants, edges)."""
    results: dict[func.FuncOp, int] = field(default_factory=dict[func.FuncOp, int])
    edges: list[Edge] = field(default_factory=list[Edge])
    on_devices: dict[relay.OnDeviceOp, OnDevice] = field(
        default_factory=dict[relay.OnDeviceOp, OnDevice]
    )
    free: list[tuple[int, int, Operation]] = field(
        default_factory=list[tuple[int, int, Operation]]
    )
    pinned: set[Operation] = field(default_factory=set[Operation])
    order: dict[Operation, int] = field(default_factory=dict[Operation, int])
    """Position of each op in its function (to visit a constant's users in
    order without a quadratic search)."""

    def node(self, value: SSAValue) -> int:
        if value not in self.nodes:
            self.nodes[value] = self.domains.new()
        return self.nodes[value]

    def device(self, value: SSAValue) -> VirtualDevice:
        return self.domains.get(self.node(value))

    def use_device(self, user: Operation, index: int) -> VirtualDevice:
        """Where ``user`` reads its operand ``index``."""
        node = self.use_nodes.get((user, index))
        if node is None:
            node = self.node(user.operands[index])
        return self.domains.get(node)

    # ---- phase 1 -------------------------------------------------------

    def operand(self, user: Operation, index: int) -> int:
        """The node ``user`` sees for its operand ``index``."""
        value = user.operands[index]
        owner = value.owner
        if isinstance(owner, relay.ConstantOp):
            node = self.domains.new()
        elif user in self.pinned or owner in self.pinned:
            node = self.domains.new()
            edge = Edge(user, index, self.node(value), node)
            self.edges.append(edge)
            self.free.append((edge.value_node, node, user))
        else:
            return self.node(value)
        self.use_nodes[(user, index)] = node
        return node

    def callee(self, call: relay.CallOp) -> func.FuncOp | None:
        name = call.callee.string_value()
        return next((f for f in self.functions if f.sym_name.data == name), None)

    def analyse(self) -> None:
        for f in self.functions:
            self.results[f] = self.domains.new()
            for arg in f.body.block.args:
                self.node(arg)
            for i, op in enumerate(f.body.block.ops):
                self.order[op] = i
                if (
                    op.name.startswith("relay.")
                    and not isinstance(op, STRUCTURAL)
                    and not (isinstance(op, relay.CallOp) and self.callee(op))
                    and op_device(op) is not None
                ):
                    self.pinned.add(op)
        for f in self.functions:
            self.visit_function(f)
        for value_node, use_node, op in self.free:
            self.domains.try_unify(value_node, use_node, op)

    def visit_function(self, f: func.FuncOp) -> None:
        block = f.body.block
        arg_attrs = f.arg_attrs.data if f.arg_attrs is not None else ()
        name = f.sym_name.data
        for i, (arg, attrs) in enumerate(zip(block.args, arg_attrs, strict=False)):
            if (vd := attr_device(attrs)) is not None:
                what = f" (argument {i} of @{name})"
                self.domains.bind(self.node(arg), vd, f, what)
        res_attrs = f.res_attrs.data if f.res_attrs is not None else ()
        for i, attrs in enumerate(res_attrs):
            if (vd := attr_device(attrs)) is not None:
                what = f" (result {i} of @{name})"
                self.domains.bind(self.results[f], vd, f, what)
        # the bodies of on_devices first, so that an operator meets the
        # devices of its uses when it is visited (unify_operand)
        for op in block.ops:
            if isinstance(op, relay.OnDeviceOp) and op.get_constrain_body():
                owner = op.operands[0].owner
                if not isinstance(owner, relay.ConstantOp) and owner not in self.pinned:
                    self.domains.bind(self.node(op.operands[0]), op.virtual_device, op)
        for op in block.ops:
            self.visit(f, op)

    def visit(self, f: func.FuncOp, op: Operation) -> None:
        unify = self.domains.unify
        match op:
            case relay.ConstantOp():
                pass  # placed per use
            case relay.TupleOp() | relay.TupleGetItemOp():
                result = self.node(op.results[0])
                for i in range(len(op.operands)):
                    unify(result, self.operand(op, i), op)
            case relay.OnDeviceOp():
                self.visit_on_device(op)
            case relay.DeviceCopyOp():
                self.domains.bind(self.operand(op, 0), op.src, op)
                self.domains.bind(self.node(op.result), op.dst, op)
            case func.ReturnOp():
                for i in range(len(op.operands)):
                    unify(self.results[f], self.operand(op, i), op)
            case relay.CallOp() if (callee := self.callee(op)) is not None:
                params = callee.body.block.args
                for i, param in enumerate(params):
                    unify(self.node(param), self.operand(op, i), op)
                unify(self.results[callee], self.node(op.result), op)
                if (vd := op_device(op)) is not None:
                    self.domains.bind(self.node(op.result), vd, op)
            case _ if op.name.startswith("relay."):
                node = self.node(op.results[0]) if op.results else self.domains.new()
                if op in self.pinned:
                    vd = op_device(op)
                    assert vd is not None
                    self.domains.bind(node, vd, op)
                for result in op.results[1:]:
                    unify(node, self.node(result), op)
                for i in range(len(op.operands)):
                    self.unify_operand(node, op, i)
            case _:
                raise located_error(
                    op,
                    f"plan-devices: '{op.name}' is not supported in a relay function "
                    "(expected relay ops and func.return: relay control flow is not "
                    "supported)",
                )

    def unify_operand(self, node: int, op: Operation, index: int) -> None:
        """An operator reads its operand ``index`` on its own device. Where
        the operand's value already sits on another device through a
        different use, and nothing fixes the value itself there, the use
        gets a copy instead of an error (TVM's phase 1 conflict resolution,
        ``test_conflicated_inputs``): the value stays where its first use put
        it, this use reads a ``relay.device_copy``."""
        use = self.operand(op, index)
        if self.domains.get(node).join(self.domains.get(use)) is not None:
            self.domains.unify(node, use, op)
            return
        value = op.operands[index]
        if (op, index) in self.use_nodes or self.fixed(value):
            self.domains.unify(node, use, op)  # the located error
            return
        copy = self.domains.new()
        self.domains.unify(node, copy, op)
        self.use_nodes[(op, index)] = copy
        self.edges.append(Edge(op, index, use, copy))

    def fixed(self, value: SSAValue) -> bool:
        """Is ``value`` itself pinned to a device (an argument attribute, a
        fixed ``on_device``, a ``device_copy``'s result, a pinned op)?"""
        owner = value.owner
        if isinstance(owner, Operation):
            if isinstance(owner, relay.OnDeviceOp):
                return owner.get_constrain_result()
            return isinstance(owner, relay.DeviceCopyOp) or owner in self.pinned
        f = owner.parent_op()
        if not isinstance(f, func.FuncOp) or f.arg_attrs is None:
            return False
        attrs = f.arg_attrs.data
        index = value.index if isinstance(value, BlockArgument) else -1
        return 0 <= index < len(attrs) and attr_device(attrs[index]) is not None

    def visit_on_device(self, op: relay.OnDeviceOp) -> None:
        body, result = self.operand(op, 0), self.node(op.result)
        constrain_body = op.get_constrain_body()
        constrain_result = op.get_constrain_result()
        if constrain_body and not constrain_result:
            # TVM phase 0: the whole result of a function may not stay free
            constrain_result = any(
                isinstance(use.operation, func.ReturnOp)
                and len(use.operation.operands) == 1
                for use in op.result.uses
            )
        vd = op.virtual_device
        if constrain_body:
            self.domains.bind(body, vd, op)
        if constrain_result:
            self.domains.bind(result, vd, op)
        if constrain_body and constrain_result:
            self.domains.unify(body, result, op)
        if not constrain_body and not constrain_result:
            self.free.append((body, result, op))
        self.on_devices[op] = OnDevice(op, body, result)

    # ---- phase 2 -------------------------------------------------------

    def default_all(self) -> None:
        domains, default = self.domains, self.default
        for f in self.functions:
            self.default_function(f)
            for op in reversed(f.body.block.ops):
                if isinstance(op, relay.CallOp) and (c := self.callee(op)) is not None:
                    self.default_function(c)
                elif isinstance(op, relay.OnDeviceOp):
                    on_device = self.on_devices[op]
                    domains.set_default(on_device.result, default)
                    domains.set_default(on_device.body, domains.get(on_device.result))
                elif not isinstance(op, (*STRUCTURAL, func.ReturnOp)) and op.results:
                    domains.set_default(self.node(op.results[0]), default)
                for i in range(len(op.operands)):
                    use = self.use_nodes.get((op, i))
                    if use is not None and not isinstance(
                        op.operands[i].owner, relay.ConstantOp
                    ):
                        domains.set_default(use, default)
                        domains.set_default(self.node(op.operands[i]), domains.get(use))
        for node in range(len(domains.parent)):
            domains.set_default(node, default)

    def default_function(self, f: func.FuncOp) -> None:
        result = self.results[f]
        self.domains.set_default(result, self.default)
        for arg in f.body.block.args:
            self.domains.set_default(self.node(arg), self.domains.get(result))


def plan(module: ModuleOp, entry: str, default: VirtualDevice) -> DevicePlan:
    """Solve the devices of every relay function of ``module`` (``entry``
    first: its result is defaulted before the others')."""
    functions = [f for f in module.body.block.ops if is_relay_function(f)]
    functions.sort(key=lambda f: f.sym_name.data != entry)  # type: ignore[union-attr]
    result = DevicePlan(default, functions)  # pyright: ignore[reportArgumentType]
    result.analyse()
    result.default_all()
    return result
