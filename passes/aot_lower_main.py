"""``aot-lower-main``: lower the relay ``main`` into a sequential tir main.

TVM's AOTLowerMain (seed 000) on MLIR. The storage assignment is an analysis
(``aot_storage``); this module turns its result into IR.

Requires
    ``func.func @main`` whose body is straight-line relay dataflow
    (``relay.call``/``constant``/``tuple``/``tuple_get_item``/``on_device``/
    ``device_copy``/``reshape``, ``func.return``) on statically shaped
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
      ``tir.input_names``/``tir.output_names``, see ``aot_io_names``);
    * one ``tir.allocate`` per internal storage id (``sid_N``, numbered in
      execution order, typed like its producer's result so its byte size is
      exact), one ``tir.allocate_const`` per constant (``constant_N``), all
      before the first call; storages that are returned are never allocated:
      their producer writes straight into the output argument;
    * one ``tir.call`` per live operator call in execution order, inputs then
      outputs, with ``call_type`` unless ``unpacked``;
    * ``relay.device_copy`` becomes ``memref.copy`` into a new storage;
    * an output that is an input, a constant or a storage already returned
      earlier is filled by a ``memref.copy`` at the end;
    * ``relay.reshape`` aliases its operand's storage: where a value is used
      with another shape than its storage's SSA value has, the pass emits
      ``memref.reinterpret_cast`` (offset 0, row-major strides) of that value
      just before the use. It is a pure view: valid MLIR, still valid once
      ``usmp`` has turned the ``tir.allocate`` it reads into a
      ``memref.view``, and a pointer cast in C.
    * where an allocation sits says nothing about liveness: a storage lives
      from its first to its last use (through any ``reinterpret_cast``).
    * devices, when planned (see ``aot_storage``): the entry gets ``tir.devices``
      (distinct devices, first use first) and a ``tir.virtual_device`` argument
      attribute per argument; ``tir.call``/``tir.allocate``/``tir.allocate_const``
      carry ``tir.virtual_device``, each ``memref.copy`` carries
      ``tir.src_virtual_device``/``tir.dst_virtual_device``, and an allocation
      on a device whose memory scope is not ``global`` gets that scope.
      Without planned devices, no device attribute is written (default device).

Idempotence
    Running it again finds no relay ``main`` but a ``tir.main`` function and
    changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    ShapedType,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.passes.aot_io_names import IONames, io_names
from usmp.passes.aot_storage import (
    CallStep,
    CopyStep,
    Storage,
    StorageKind,
    StoragePlan,
    View,
    assign_storage,
)

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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

    def __post_init__(self) -> None:
        if not _C_IDENTIFIER.fullmatch(self.module_name):
            raise ValueError(
                f"aot-lower-main: module_name '{self.module_name}' is not a C "
                "identifier (expected letters, digits and '_', not starting with a "
                "digit)"
            )
        if self.call_type not in tir.CALL_TYPES:
            raise ValueError(
                f"aot-lower-main: call_type '{self.call_type}' is not one of "
                f"{', '.join(tir.CALL_TYPES)}"
            )

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
        plan = assign_storage(main, functions)
        names = io_names(main, len(plan.inputs), len(plan.returns))
        entry = _EntryBuilder(plan, names, self.call_type).build(symbol)
        entry.location = main.location
        Rewriter.replace_op(main, entry)


class _EntryBuilder:
    """Builds the tir entry function from a storage plan."""

    def __init__(self, plan: StoragePlan, names: IONames, call_type: str):
        self.plan = plan
        self.names = names
        self.call_type = call_type
        self.block = Block()
        self.values: dict[Storage, SSAValue] = {}
        self.views: dict[tuple[Storage, MemRefType], SSAValue] = {}

    def build(self, symbol: str) -> func.FuncOp:
        plan, block = self.plan, self.block
        for storage, name in zip(plan.inputs, self.names.inputs, strict=True):
            arg = block.insert_arg(storage.type, len(block.args))
            arg.name_hint = name
            self.values[storage] = arg
        outputs: list[SSAValue] = []
        for view, name in zip(plan.returns, self.names.outputs, strict=True):
            arg = block.insert_arg(view.type, len(block.args))
            arg.name_hint = name
            outputs.append(arg)

        # Storages returned first-hand are written in place into their output.
        copies: list[tuple[View, int]] = []
        output_devices: list[relay.VirtualDeviceAttr | None] = []
        for i, view in enumerate(plan.returns):
            storage = view.storage
            if storage.kind is StorageKind.INTERNAL and storage not in self.values:
                self.values[storage] = outputs[i]
            else:
                copies.append((view, i))
            output_devices.append(plan.device_of(storage))

        self.allocate()
        for step in plan.steps:
            if isinstance(step, CallStep):
                self.call(step)
            else:
                self.device_copy(step)
        for view, i in copies:
            device = plan.device_of(view.storage)
            copy = memref.CopyOp(self.view(view, plan.terminator), outputs[i])
            self.add(copy, plan.terminator, _copy_devices(device, device))
        self.add(func.ReturnOp(), plan.terminator, {})

        input_devices = [plan.device_of(s) for s in plan.inputs]
        entry = func.FuncOp(
            symbol,
            ([a.type for a in block.args], []),
            Region(block),
            arg_attrs=self.arg_attrs([*input_devices, *output_devices]),
        )
        entry.attributes[tir.PRIM_FUNC] = UnitAttr()
        entry.attributes[tir.MAIN_FUNC] = UnitAttr()
        entry.attributes[tir.INPUT_NAMES] = _strings(self.names.inputs)
        entry.attributes[tir.OUTPUT_NAMES] = _strings(self.names.outputs)
        if plan.devices_planned:
            devices = [plan.device_of(s) for s in plan.storages]
            entry.attributes[tir.DEVICES] = ArrayAttr(
                dict.fromkeys(d for d in devices if d is not None)
            )
        return entry

    def arg_attrs(
        self, devices: Sequence[relay.VirtualDeviceAttr | None]
    ) -> ArrayAttr[DictionaryAttr] | None:
        if not self.plan.devices_planned:
            return None
        return ArrayAttr(
            DictionaryAttr({tir.VIRTUAL_DEVICE: d} if d is not None else {})
            for d in devices
        )

    def allocate(self) -> None:
        """Constants, then internal storages, in storage order, before any call."""
        constants = [s for s in self.plan.storages if s.kind is StorageKind.CONSTANT]
        for n, storage in enumerate(constants):
            producer = storage.producer
            assert isinstance(producer, relay.ConstantOp)
            op = tir.AllocateConstOp(storage.type, f"constant_{n}", producer.value)
            self.bind(storage, op, f"constant_{n}")
        sid = 0
        for storage in self.plan.storages:
            if storage.kind is not StorageKind.INTERNAL or storage in self.values:
                continue
            device = self.plan.device_of(storage)
            scope = device.memory_scope.data if device is not None else ""
            op = tir.AllocateOp(storage.type, f"sid_{sid}", scope=scope or "global")
            self.bind(storage, op, f"sid_{sid}")
            sid += 1

    def bind(self, storage: Storage, op: Operation, name: str) -> None:
        self.add(op, storage.producer, _device(self.plan.device_of(storage)))
        op.results[0].name_hint = name
        self.values[storage] = op.results[0]

    def call(self, step: CallStep) -> None:
        args = [self.view(v, step.op) for v in (*step.inputs, *step.outputs)]
        op = tir.CallOp(step.callee, args, self.call_type)
        device = self.plan.device_of(step.outputs[0].storage) if step.outputs else None
        self.add(op, step.op, _device(device))

    def device_copy(self, step: CopyStep) -> None:
        source = self.view(step.source, step.op)
        destination = self.view(step.destination, step.op)
        devices = _copy_devices(
            self.plan.device_of(step.source.storage),
            self.plan.device_of(step.destination.storage),
        )
        self.add(memref.CopyOp(source, destination), step.op, devices)

    def view(self, view: View, user: Operation | None) -> SSAValue:
        """The storage's SSA value, reinterpreted with the view's type if needed."""
        base = self.values[view.storage]
        if base.type == view.type:
            return base
        key = (view.storage, view.type)
        if key not in self.views:
            shape = view.type.get_shape()
            strides = [s or 0 for s in ShapedType.strides_for_shape(shape)]
            cast = memref.ReinterpretCastOp(
                base, [], [], [], [0], shape, strides, view.type
            )
            self.add(cast, user, {})
            self.views[key] = cast.result
        return self.views[key]

    def add(
        self, op: Operation, origin: Operation | None, attrs: dict[str, Attribute]
    ) -> None:
        if origin is not None:
            op.location = origin.location
        op.attributes.update(attrs)
        self.block.add_op(op)


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
