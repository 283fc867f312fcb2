"""``aot-lower-main``: lower the relay ``main`` into a sequential tir main.

TVM's AOTLowerMain (seed 000) on MLIR. The storage assignment is an analysis
(``aot_storage``); this module turns its result into IR.

Requires
    ``func.func @main`` whose body is straight-line relay dataflow
    (``relay.call``/``constant``/``tuple``/``tuple_get_item``/``on_device``/
    ``device_copy``/``reshape``/contiguous ``strided_slice``, ``func.return``)
    on statically shaped
    tensors, each ``relay.call`` naming a tir prim func (``tir.prim_func``) or
    an external declaration whose memref signature is the call's flattened
    operands followed by its flattened results. Anything else in main
    (relay control flow, unlowered relay operators, dynamic shapes, calls to
    unknown or relay functions, signature mismatches) is a located error.

Produces
    ``main`` is replaced, at the same place, by::

        func.func @tvmgen_default___tvm_main__(%x: memref<..>, %output: memref<..>)
            attributes {tir.prim_func, tir.main, tir.input_names = ["x"],
                        tir.output_names = ["output"]} {
          %c0 = tir.allocate_const {name_hint = "constant_0", value = ..} : memref<..>
          %sid_0 = tir.allocate {name_hint = "sid_0"} : memref<..>
          tir.call @op0(%x, %c0, %sid_0) : (..) -> ()
          tir.call @op1(%sid_0, %output) : (..) -> ()
          memref.copy %x, %output1 : ..        // outputs that need a copy, last
          func.return
        }

    * arguments: the inputs, then one buffer per flattened output (names in
      ``tir.input_names``/``tir.output_names``, see ``aot_io_names``); main's
      ``relay.input_quantization``/``relay.output_quantization``, checked,
      become ``tir.input_quantization``/``tir.output_quantization`` (the
      interface header's scale, zero point and quantise/dequantise helpers);
    * one ``tir.allocate`` per internal storage id (``sid_N``, numbered in
      execution order, typed like its producer's result so its byte size is
      exact), one ``tir.allocate_const`` per constant (``constant_N``), one
      ``tir.allocate_state`` per ``relay.state`` (``state_N``, with its
      initial value), all before the first call; storages that are returned
      are never allocated: their producer writes straight into the output
      argument;
    * one ``tir.call`` per live operator call in execution order (dead relay
      ops are erased first, by xDSL's ``region_dce``), inputs then
      outputs, with ``call_type`` unless ``unpacked`` (TVM's ``CallType``:
      ``convert-to-emitc`` gives ``cpacked``/``packed`` calls TVM's packed
      arguments, see ``lowering/convert_to_emitc_packed.py``);
    * ``interface_api=packed`` marks the entry ``tir.interface_api = "packed"``:
      the library then also has TVM's packed entry point (``run_model``);
    * ``relay.device_copy`` becomes ``memref.copy`` into a new storage;
      ``relay.read_state`` too (from the state's ``tir.allocate_state``),
      ``relay.assign_state`` a ``memref.copy`` into the state;
    * an output that is an input, a constant, a storage already returned
      earlier or a view of part of a storage (a slice) is filled by a
      ``memref.copy`` at the end;
    * ``relay.reshape`` and a contiguous ``relay.strided_slice`` (a SLICE,
      SPLIT or UNPACK piece that is one block of its operand) alias their
      operand's storage: where a value is used with another type or at an
      offset, the pass emits ``memref.reinterpret_cast`` of the storage's SSA
      value just before the use, with row-major strides and the view's
      element offset (``memref<4x8xi8, strided<[8, 1], offset: 16>>``; offset
      0 gives the identity layout). It is a pure view: valid MLIR, still valid
      once ``usmp`` has turned the ``tir.allocate`` it reads into a
      ``memref.view``, a pointer cast in C, and ``&p[16]`` where a
      ``tir.call`` passes it (``tir.call`` accepts such a view for a
      parameter of the identity layout). The cast has the location of the
      reshape or slice that made the view (the TFLite tensor it is).
    * where an allocation sits says nothing about liveness: a storage lives
      from its first to its last use (through any ``reinterpret_cast``).
    * devices, when planned (see ``aot_storage``): the entry gets ``tir.devices``
      (distinct devices, first use first) and a ``tir.virtual_device`` argument
      attribute per argument; ``tir.call``/``tir.allocate``/``tir.allocate_const``
      carry ``tir.virtual_device``, each ``memref.copy`` carries
      ``tir.src_virtual_device``/``tir.dst_virtual_device``, and an allocation
      on a device whose memory scope is not ``global`` gets that scope.
      Without planned devices, no device attribute is written (default device).
    * device hooks (``aot_device_hooks``): for every device other than the
      host's that runs an operator, ``tir.device_hook`` calls of TVM's device
      API: ``activate`` first, ``open``/``close`` around each of its calls,
      ``deactivate`` last; the entry lists those devices in
      ``tir.device_contexts``.

How
    Unsupported ops are reported (``aot_main_checks``), xDSL's ``region_dce``
    erases dead relay ops, then three steps, TVM's analysis/transform split:
    ``assign_storage`` (the
    analysis, ``aot_storage``) decides storages, names, devices and what is
    copied; the entry's signature is rewritten (relay main -> tir main with
    output arguments); then one rewrite pattern per relay op kind, applied by
    xDSL's ``PatternRewriteWalker`` in execution order, turns each op into its
    tir form reading that plan: ``relay.constant`` -> ``tir.allocate_const``,
    ``relay.call`` -> ``tir.allocate`` of its outputs + ``tir.call``,
    ``relay.device_copy`` -> ``tir.allocate`` + ``memref.copy``, ``func.return``
    -> output copies + ``func.return``; ``tuple``/``tuple_get_item``/
    ``on_device``/``reshape``/``strided_slice`` move no data and only
    disappear. Allocations are
    hoisted to the top of the entry (constants first) in storage order. A
    lowered relay value is one or several buffers, so until its users are
    lowered it is bridged by a ``builtin.unrealized_conversion_cast`` of its
    storages (MLIR's source materialisation); the bridges are erased at the end.
    Errors are all found by the analysis, before any rewrite.

Idempotence
    Running it again finds no relay ``main`` but a ``tir.main`` function and
    changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    ShapedType,
    StridedLayoutAttr,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
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
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.dialects.relay_ops import ReshapeOp, StridedSliceOp
from usmp.dialects.relay_state import AssignStateOp, ReadStateOp, StateOp
from usmp.passes.aot_device_hooks import insert_device_hooks
from usmp.passes.aot_io_names import IONames, IOQuantization, io_names, io_quantization
from usmp.passes.aot_main_checks import check_main
from usmp.passes.aot_order import order_main
from usmp.passes.aot_storage import (
    CallStep,
    CopyStep,
    Storage,
    StorageKind,
    StoragePlan,
    View,
    assign_storage,
)
from usmp.planning.operator_order import OrderResult

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ORDERS = ("memory", "source")
"""Values of ``aot-lower-main{order=...}``."""


def _order_attr(chosen: OrderResult) -> DictionaryAttr:
    """``tir.call_order``: what the memory-aware order chose."""
    attrs: dict[str, Attribute] = {
        "peak": IntegerAttr(chosen.peak, 64),
        "source_peak": IntegerAttr(chosen.source_peak, 64),
    }
    if chosen.exact:
        attrs["exact"] = UnitAttr()
    return DictionaryAttr(attrs)


def main_symbol(module_name: str) -> str:
    """TVM's name of the AOT entry point: ``tvmgen_<module>___tvm_main__``."""
    return f"tvmgen_{module_name}___tvm_main__"


@dataclass(frozen=True)
class AOTLowerMainPass(ModulePass):
    """Replace the relay ``main`` by a tir main: one allocation per storage id,
    one ``tir.call`` per operator, in execution order."""

    name = "aot-lower-main"

    module_name: str = "default"
    """Model name in the entry symbol ``tvmgen_<module_name>___tvm_main__``
    (a C identifier)."""

    call_type: str = "unpacked"
    """How operators are called: ``unpacked`` (memrefs passed directly),
    ``packed`` or ``cpacked`` (TVM's packed conventions)."""

    order: str = "memory"
    """The order of main's calls: ``memory`` (the topological order of least
    peak live bytes, see ``aot_order``; the source order when none is
    smaller) or ``source`` (main's order as written)."""

    order_io: bool = False
    """Count main's inputs and outputs in the peak the order minimises (set
    it with ``usmp{use_workspace_io=true}``)."""

    interface_api: str = "c"
    """The library's entry point (TVM's executor option ``interface-api``):
    ``c`` (structs of pointers) or ``packed`` (also TVM's packed entry
    ``tvmgen_<module>_run_model``); recorded on the entry as
    ``tir.interface_api`` when ``packed``."""

    def __post_init__(self) -> None:
        if not _C_IDENTIFIER.fullmatch(self.module_name):
            raise ValueError(
                f"aot-lower-main: module_name '{self.module_name}' is not a C "
                "identifier (expected letters, digits and '_', not starting with a "
                "digit)"
            )
        if self.interface_api not in tir.INTERFACE_APIS:
            raise ValueError(
                f"aot-lower-main: interface_api '{self.interface_api}' is not one "
                f"of {', '.join(tir.INTERFACE_APIS)}"
            )
        if self.call_type not in tir.CALL_TYPES:
            raise ValueError(
                f"aot-lower-main: call_type '{self.call_type}' is not one of "
                f"{', '.join(tir.CALL_TYPES)}"
            )
        if self.order not in ORDERS:
            raise ValueError(
                f"aot-lower-main: order '{self.order}' is not one of "
                f"{', '.join(ORDERS)}"
            )

    @classmethod
    def option_choices(cls) -> dict[str, tuple[str, ...]]:
        """Accepted values of the options with a closed set (``--help``)."""
        return {
            "call_type": tir.CALL_TYPES,
            "interface_api": tir.INTERFACE_APIS,
            "order": ORDERS,
        }

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        main = functions.get("main")
        if main is None:
            if any(tir.MAIN_FUNC in f.attributes for f in functions.values()):
                return  # already lowered
            raise located_error(
                op,
                "no relay @main to lower: aot-lower-main expects func.func @main "
                "whose body is relay dataflow calling tir prim funcs",
            )
        symbol = main_symbol(self.module_name)
        if symbol in functions:
            raise located_error(
                functions[symbol],
                f"@{symbol} already exists, so the lowered main cannot take its "
                "name; remove it or pick another module_name",
            )
        check_main(main)
        region_dce(main.body)  # relay is pure: dead ops need no storage
        for state in [o for o in main.body.ops if isinstance(o, StateOp)]:
            if not state.result.uses:  # nothing reads or updates it any more
                Rewriter.erase_op(state)
        chosen = None
        plan = assign_storage(main, functions)
        if self.order == "memory":
            chosen = order_main(main, functions, io=self.order_io, plan=plan)
            if chosen.changed:  # the steps moved: storage follows the new order
                plan = assign_storage(main, functions)
        names = io_names(main, len(plan.inputs), len(plan.returns))
        quantization = io_quantization(
            main, [s.type for s in plan.inputs], [v.type for v in plan.returns]
        )
        lowering = _MainLowering(plan, self.call_type)
        entry = _lower_signature(main, symbol, names, lowering)
        if quantization is not None:
            _set_quantization(entry, quantization)
        if chosen is not None and chosen.changed:
            entry.attributes[tir.CALL_ORDER] = _order_attr(chosen)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    _LowerConstant(lowering),
                    _LowerState(lowering),
                    _LowerCall(lowering),
                    _LowerDeviceCopy(lowering),
                    _LowerStateCopy(lowering),
                    _ForwardView(lowering),
                    _LowerReturn(lowering),
                ],
                dce_enabled=False,
            ),
            apply_recursively=False,
        ).rewrite_region(entry.body)
        for bridge in reversed(lowering.bridges):
            Rewriter.erase_op(bridge)
        insert_device_hooks(entry)
        if self.interface_api != "c":
            entry.attributes[tir.INTERFACE_API] = StringAttr(self.interface_api)


@dataclass
class _MainLowering:
    """What the patterns share while lowering one main: the storage plan
    (read-only) and the SSA value of every storage materialised so far."""

    plan: StoragePlan
    call_type: str
    values: dict[Storage, SSAValue] = field(default_factory=dict[Storage, SSAValue])
    casts: dict[tuple[Storage, MemRefType, int], SSAValue] = field(
        default_factory=dict[tuple[Storage, MemRefType, int], SSAValue]
    )
    """``memref.reinterpret_cast`` of a storage to a reshaped type at an
    element offset, made at its first use and reused after."""
    last_constant: Operation | None = None
    last_allocation: Operation | None = None
    bridges: list[Operation] = field(default_factory=list[Operation])

    def allocate(self, storage: Storage, rewriter: PatternRewriter) -> None:
        """The storage's allocation, hoisted after the allocations made so far
        (constants before the others), unless it is an input or an output."""
        name = storage.name
        if name is None:
            return
        device = self.plan.device_of(storage)
        op: Operation
        if storage.kind is StorageKind.CONSTANT:
            assert isinstance(storage.producer, relay.ConstantOp)
            op = tir.AllocateConstOp(storage.type, name, storage.producer.value)
            anchor, self.last_constant = self.last_constant, op
        elif storage.kind is StorageKind.STATE:
            assert isinstance(storage.producer, StateOp)
            op = tir.AllocateStateOp(storage.type, name, storage.producer.value)
            anchor = self.last_allocation or self.last_constant
            self.last_allocation = op
        else:
            scope = device.memory_scope.data if device is not None else ""
            op = tir.AllocateOp(storage.type, name, scope=scope or "global")
            anchor = self.last_allocation or self.last_constant
            self.last_allocation = op
        assert storage.producer is not None and storage.producer.parent is not None
        point = (
            InsertPoint.after(anchor)
            if anchor is not None
            else InsertPoint.at_start(storage.producer.parent)
        )
        rewriter.insert(_located(op, storage.producer, _device(device)), point)
        op.results[0].name_hint = name
        self.values[storage] = op.results[0]

    def value(self, view: View, user: Operation, rewriter: PatternRewriter) -> SSAValue:
        """The storage's SSA value, reinterpreted with the view's type at its
        offset (just before ``user``, once per storage, type and offset) if
        needed."""
        base = self.values[view.storage]
        if base.type == view.type and view.offset == 0:
            return base
        key = (view.storage, view.type, view.offset)
        if key not in self.casts:
            shape = view.type.get_shape()
            strides = [s or 0 for s in ShapedType.strides_for_shape(shape)]
            type_ = view.type
            if view.offset:
                layout = StridedLayoutAttr(strides, view.offset)
                type_ = MemRefType(type_.element_type, shape, layout)
            cast = memref.ReinterpretCastOp(
                base, [], [], [], [view.offset], shape, strides, type_
            )
            rewriter.insert(_located(cast, view.origin or user, {}))
            self.casts[key] = cast.result
        return self.casts[key]

    def bridge(self, op: Operation, rewriter: PatternRewriter) -> None:
        """Erase the lowered ``op``; its relay users, lowered later, see its
        storages through a cast erased at the end of the pass."""
        storages = [self.values[v.storage] for v in self.plan.views[op.results[0]]]
        cast = UnrealizedConversionCastOp.create(
            operands=storages, result_types=[op.results[0].type]
        )
        self.bridges.append(cast)
        rewriter.replace(op, cast)


@dataclass(frozen=True)
class _LowerConstant(RewritePattern):
    """``relay.constant`` -> ``tir.allocate_const``."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.ConstantOp, rewriter: PatternRewriter):
        (view,) = self.lowering.plan.views[op.result]
        self.lowering.allocate(view.storage, rewriter)
        self.lowering.bridge(op, rewriter)


@dataclass(frozen=True)
class _LowerState(RewritePattern):
    """``relay.state`` -> ``tir.allocate_state`` (its initial value kept)."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StateOp, rewriter: PatternRewriter):
        (view,) = self.lowering.plan.views[op.result]
        self.lowering.allocate(view.storage, rewriter)
        self.lowering.bridge(op, rewriter)


@dataclass(frozen=True)
class _LowerCall(RewritePattern):
    """``relay.call`` -> ``tir.allocate`` of its outputs and ``tir.call`` with
    its flattened inputs then outputs."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.CallOp, rewriter: PatternRewriter):
        lowering = self.lowering
        (step,) = lowering.plan.steps_of[op]
        assert isinstance(step, CallStep)
        for view in step.outputs:
            lowering.allocate(view.storage, rewriter)
        args = [lowering.value(v, op, rewriter) for v in (*step.inputs, *step.outputs)]
        call = tir.CallOp(step.callee, args, lowering.call_type)
        device = (
            lowering.plan.device_of(step.outputs[0].storage) if step.outputs else None
        )
        rewriter.insert(_located(call, op, _device(device)))
        lowering.bridge(op, rewriter)


@dataclass(frozen=True)
class _LowerDeviceCopy(RewritePattern):
    """``relay.device_copy`` -> per flattened tensor, ``tir.allocate`` of the
    destination and ``memref.copy``."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.DeviceCopyOp, rewriter: PatternRewriter):
        lowering, plan = self.lowering, self.lowering.plan
        for step in plan.steps_of.get(op, ()):
            assert isinstance(step, CopyStep)
            lowering.allocate(step.destination.storage, rewriter)
            source = lowering.value(step.source, op, rewriter)
            destination = lowering.value(step.destination, op, rewriter)
            devices = _copy_devices(
                plan.device_of(step.source.storage),
                plan.device_of(step.destination.storage),
            )
            rewriter.insert(_located(memref.CopyOp(source, destination), op, devices))
        lowering.bridge(op, rewriter)


@dataclass(frozen=True)
class _LowerStateCopy(RewritePattern):
    """``relay.read_state`` -> ``tir.allocate`` of the copy and ``memref.copy``
    from the state; ``relay.assign_state`` -> ``memref.copy`` into the
    state."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ReadStateOp | AssignStateOp, rewriter: PatternRewriter
    ):
        lowering, plan = self.lowering, self.lowering.plan
        (step,) = plan.steps_of[op]
        assert isinstance(step, CopyStep)
        if isinstance(op, ReadStateOp):
            lowering.allocate(step.destination.storage, rewriter)
        source = lowering.value(step.source, op, rewriter)
        destination = lowering.value(step.destination, op, rewriter)
        device = plan.device_of(step.destination.storage)
        rewriter.insert(
            _located(memref.CopyOp(source, destination), op, _device(device))
        )
        if isinstance(op, ReadStateOp):
            lowering.bridge(op, rewriter)
        else:
            rewriter.erase(op)


@dataclass(frozen=True)
class _ForwardView(RewritePattern):
    """``relay.tuple``/``tuple_get_item``/``on_device``/``reshape`` and a
    contiguous ``strided_slice`` move no data: their result is a view of
    storages the analysis resolved (a reshaped or offset use gets its
    ``reinterpret_cast`` at the user)."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: relay.TupleOp
        | relay.TupleGetItemOp
        | relay.OnDeviceOp
        | ReshapeOp
        | StridedSliceOp,
        rewriter: PatternRewriter,
    ):
        self.lowering.bridge(op, rewriter)


@dataclass(frozen=True)
class _LowerReturn(RewritePattern):
    """``func.return`` of relay values -> the copies of outputs that are not
    written in place, then ``func.return``."""

    lowering: _MainLowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter):
        if not op.arguments:
            return
        lowering, plan = self.lowering, self.lowering.plan
        block = op.parent_block()
        assert block is not None
        outputs = block.args[len(plan.inputs) :]
        for view, i in plan.copied_outputs:
            device = plan.device_of(view.storage)
            copy = memref.CopyOp(lowering.value(view, op, rewriter), outputs[i])
            rewriter.insert(_located(copy, op, _copy_devices(device, device)))
        rewriter.replace(op, _located(func.ReturnOp(), op, {}))


def _lower_signature(
    main: func.FuncOp, symbol: str, names: IONames, lowering: _MainLowering
) -> func.FuncOp:
    """Replace ``main`` by the tir entry ``symbol`` on the same body: inputs
    retyped to memrefs, one output argument per flattened output, the entry
    attributes; outputs written in place get their output argument."""
    plan = lowering.plan
    block = main.body.block
    for storage, arg, name in zip(plan.inputs, block.args, names.inputs, strict=True):
        new = Rewriter.replace_value_with_new_type(arg, storage.type)
        new.name_hint = name
        lowering.values[storage] = new
    for view, name in zip(plan.returns, names.outputs, strict=True):
        arg = block.insert_arg(view.type, len(block.args))
        arg.name_hint = name
    outputs = block.args[len(plan.inputs) :]
    for storage, i in plan.in_place.items():
        lowering.values[storage] = outputs[i]

    devices = [
        plan.device_of(s) for s in (*plan.inputs, *(v.storage for v in plan.returns))
    ]
    arg_attrs = (
        ArrayAttr(
            DictionaryAttr({tir.VIRTUAL_DEVICE: d} if d is not None else {})
            for d in devices
        )
        if plan.devices_planned
        else None
    )
    entry = func.FuncOp(
        symbol,
        ([a.type for a in block.args], []),
        Rewriter.move_region_contents_to_new_regions(main.body),
        arg_attrs=arg_attrs,
    )
    entry.attributes[tir.PRIM_FUNC] = UnitAttr()
    entry.attributes[tir.MAIN_FUNC] = UnitAttr()
    entry.attributes[tir.INPUT_NAMES] = _strings(names.inputs)
    entry.attributes[tir.OUTPUT_NAMES] = _strings(names.outputs)
    if plan.devices_planned:
        all_devices = [plan.device_of(s) for s in plan.storages]
        entry.attributes[tir.DEVICES] = ArrayAttr(
            dict.fromkeys(d for d in all_devices if d is not None)
        )
    entry.location = main.location
    Rewriter.replace_op(main, entry)
    return entry


def _set_quantization(entry: func.FuncOp, quantization: IOQuantization) -> None:
    """The entry's ``tir.input_quantization``/``tir.output_quantization``
    (main's relay attributes, checked)."""
    entry.attributes[tir.INPUT_QUANTIZATION] = quantization.inputs
    entry.attributes[tir.OUTPUT_QUANTIZATION] = quantization.outputs


def _located(op: Operation, origin: Operation, attrs: dict[str, Attribute]):
    op.location = origin.location
    op.attributes.update(attrs)
    return op


def _device(device: relay.VirtualDeviceAttr | None) -> dict[str, Attribute]:
    return {tir.VIRTUAL_DEVICE: device} if device is not None else {}


def _copy_devices(
    src: relay.VirtualDeviceAttr | None, dst: relay.VirtualDeviceAttr | None
) -> dict[str, Attribute]:
    attrs: dict[str, Attribute] = {}
    if src is not None:
        attrs[tir.SRC_VIRTUAL_DEVICE] = src
    if dst is not None:
        attrs[tir.DST_VIRTUAL_DEVICE] = dst
    return attrs


def _strings(names: Sequence[str]) -> ArrayAttr[StringAttr]:
    return ArrayAttr(StringAttr(n) for n in names)
