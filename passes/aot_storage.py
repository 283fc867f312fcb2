"""Storage assignment for ``aot-lower-main`` (analysis only: it never mutates IR).

TVM's ``ExprAllocator`` in IR form. Every value of the relay main is mapped to
one :class:`View` per tensor it holds (tuples are flattened, nested tuples
too), each view being a :class:`Storage` seen with a type:

* a main argument is one ``INPUT`` storage;
* ``relay.constant`` is one ``CONSTANT`` storage (becomes ``tir.allocate_const``);
* ``relay.state`` is one ``STATE`` storage (becomes ``tir.allocate_state``,
  ``state_N``): live for the whole program; a call passing it to an operator
  that updates it in place only reads it in this analysis (the operator
  writes it, no new storage); ``relay.read_state`` is a copy of it into a
  new ``INTERNAL`` storage, ``relay.assign_state`` a copy into it (a
  ``CopyStep`` each);
* ``relay.call`` and ``relay.device_copy`` create one ``INTERNAL`` storage per
  flattened result (becomes ``tir.allocate`` or, when returned, an output);
* ``relay.tuple`` concatenates its fields' views, ``relay.tuple_get_item``
  selects the field's slice of the flattened views, ``relay.on_device`` is
  transparent (it only constrains the device), ``relay.reshape`` aliases its
  operand's storage with the new type (contiguous data: no call, no copy), and
  a contiguous ``relay.strided_slice`` (``relay_ops.is_view``) aliases it at
  the slice's element offset (offsets add up along a chain of views).

A value used many times keeps its storages. Every op is taken to be live:
dead relay ops (relay is pure) are erased by xDSL's dead code elimination
before the analysis runs (``aot_main_checks.check_main`` first reports
unsupported ops, dead or not). The result is a
:class:`StoragePlan`: storages in creation order with their allocation names,
the views of every value, the call and copy steps of each op, the flattened
returned views (which are written in place, which copied: an internal storage
returned first-hand and whole is written in place; a view at an offset or of
part of a storage, an input, a constant or a storage returned before is
copied), and the devices.
The rewrite patterns of ``aot_lower_main`` read it.

Devices are "planned" when the main carries any virtual device: an
``on_device``/``device_copy`` op, a ``relay.virtual_device`` attribute on a
``relay.call``/``relay.constant``/``relay.reshape`` or on an argument or result
of main (what ``plan-devices`` writes). Each
storage then gets the device its producer or annotations give it (conflicting
annotations are an error: plan-devices must insert a ``relay.device_copy``);
unconstrained storages live on the default device.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DictionaryAttr,
    MemRefType,
    TensorType,
    TupleType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from usmp.diagnostics import located_error, location_of, tensor_location
from usmp.dialects import relay
from usmp.dialects.relay_ops import ReshapeOp, StridedSliceOp
from usmp.dialects.relay_state import AssignStateOp, ReadStateOp, StateOp
from usmp.passes.aot_main_checks import check_callee, check_main

DEFAULT_DEVICE = relay.VirtualDeviceAttr()
"""Where unconstrained storages live once devices are planned."""


class StorageKind(Enum):
    INPUT = "input"
    CONSTANT = "constant"
    STATE = "state"
    INTERNAL = "internal"


@dataclass(eq=False)
class Storage:
    """One storage id: a buffer written once, by its producer, and then only read."""

    index: int
    """Creation order: inputs first, then producers in execution order."""
    kind: StorageKind
    type: MemRefType
    """The type the producer writes (views may see it reshaped)."""
    producer: Operation | None
    """The relay op writing it (``None`` for inputs)."""
    device: relay.VirtualDeviceAttr | None = None
    device_origin: Operation | None = None
    name: str | None = None
    """The allocation's name (``constant_N``, ``sid_N``); ``None`` for inputs and
    storages written in place into an output."""


@dataclass(frozen=True)
class View:
    """A storage seen with the type of one relay value, from element
    ``offset`` on (a reshape sees all of it, a slice one contiguous block)."""

    storage: Storage
    type: MemRefType
    offset: int = 0
    """Elements of the storage before the view's first element."""
    origin: Operation | None = field(default=None, compare=False)
    """The ``relay.reshape``/``strided_slice`` that made this view (its
    location names the TFLite tensor it is, see ``_origin``), ``None`` for a
    storage's own."""

    @property
    def is_whole(self) -> bool:
        """Whether the view covers its storage exactly (a reshape at most)."""
        return self.offset == 0 and math.prod(self.type.get_shape()) == math.prod(
            self.storage.type.get_shape()
        )


@dataclass(frozen=True)
class CallStep:
    """``relay.call``: the operator reads ``inputs`` and writes ``outputs``."""

    op: relay.CallOp
    callee: str
    inputs: tuple[View, ...]
    outputs: tuple[View, ...]


@dataclass(frozen=True)
class CopyStep:
    """``relay.device_copy`` of one flattened tensor, or the copy of
    ``relay.read_state`` (from the state) or ``relay.assign_state`` (into
    it)."""

    op: relay.DeviceCopyOp | ReadStateOp | AssignStateOp
    source: View
    destination: View


Step = CallStep | CopyStep


@dataclass
class StoragePlan:
    """What the relay main needs: storages, the steps of each op, and the
    flattened returned views (one per output, in order)."""

    storages: list[Storage] = field(default_factory=list[Storage])
    """Every storage, in creation order (``Storage.index``)."""
    inputs: list[Storage] = field(default_factory=list[Storage])
    returns: list[View] = field(default_factory=list[View])
    devices_planned: bool = False
    terminator: func.ReturnOp | None = None
    views: dict[SSAValue, tuple[View, ...]] = field(
        default_factory=dict[SSAValue, tuple[View, ...]]
    )
    """The flattened views of every value of main."""
    steps_of: dict[Operation, list[Step]] = field(
        default_factory=dict[Operation, list[Step]]
    )
    """The steps of each ``relay.call``/``relay.device_copy``, in order."""
    in_place: dict[Storage, int] = field(default_factory=dict[Storage, int])
    """Internal storages returned first-hand: written straight into that output."""
    copied_outputs: list[tuple[View, int]] = field(
        default_factory=list[tuple[View, int]]
    )
    """Outputs filled by a copy at the end (inputs, constants, storages already
    returned), with their output index."""

    def device_of(self, storage: Storage) -> relay.VirtualDeviceAttr | None:
        """The storage's device, ``None`` when devices are not planned."""
        if not self.devices_planned:
            return None
        return storage.device or DEFAULT_DEVICE


def flatten_tensor_types(type_: Attribute) -> list[TensorType]:
    """The tensors a value of ``type_`` holds, tuples flattened depth first.
    Raises ``TypeError`` for anything that is neither a tensor nor a tuple."""
    if isinstance(type_, TupleType):
        return [t for field_ in type_.types for t in flatten_tensor_types(field_)]
    if isinstance(type_, TensorType):
        return [type_]
    raise TypeError(type_)


def memref_of(tensor: TensorType) -> MemRefType:
    """The identity-layout memref holding ``tensor``'s data."""
    return MemRefType(tensor.element_type, tensor.get_shape())


def _static_memrefs(type_: Attribute, op: Operation, what: str) -> list[MemRefType]:
    """Flatten ``type_`` to memrefs, rejecting non-tensors and dynamic shapes."""
    if isinstance(type_, UnrankedTensorType):
        raise located_error(
            op,
            f"{what} has unranked type {type_}; aot-lower-main needs static shapes "
            "to size storage (dynamic shapes are not supported)",
        )
    try:
        tensors = flatten_tensor_types(type_)
    except TypeError:
        raise located_error(
            op, f"{what} has type {type_}; expected a tensor or a tuple of tensors"
        ) from None
    for t in tensors:
        if any(d < 0 for d in t.get_shape()):
            raise located_error(
                op,
                f"{what} has dynamic shape {t}; aot-lower-main needs static shapes "
                "to size storage (dynamic shapes are not supported)",
            )
    return [memref_of(t) for t in tensors]


def _device_attr(
    attrs: Mapping[str, Attribute] | None, where: Operation, what: str | None = None
) -> relay.VirtualDeviceAttr | None:
    """The ``relay.virtual_device`` in ``attrs`` (an op's attributes or an
    argument/result dictionary), ``None`` if absent; a located error naming
    ``what`` carries it if it is something else."""
    vd = attrs.get(relay.VIRTUAL_DEVICE) if attrs is not None else None
    if vd is None or isinstance(vd, relay.VirtualDeviceAttr):
        return vd
    prefix = f"{what}: " if what else ""
    raise located_error(
        where,
        f"{prefix}'{relay.VIRTUAL_DEVICE}' must be a #device.virtual_device, got {vd}",
    )


class _Assigner:
    def __init__(self, main: func.FuncOp, functions: Mapping[str, func.FuncOp]):
        self.main = main
        self.functions = functions
        self.plan = StoragePlan()
        self.views: dict[SSAValue, tuple[View, ...]] = {}
        self.flat: dict[Attribute, list[MemRefType]] = {}

    def new_storage(
        self, kind: StorageKind, type_: MemRefType, producer: Operation | None
    ) -> Storage:
        storage = Storage(len(self.plan.storages), kind, type_, producer)
        self.plan.storages.append(storage)
        return storage

    def constrain(
        self, views: Sequence[View], device: relay.VirtualDeviceAttr, origin: Operation
    ) -> None:
        self.plan.devices_planned = True
        for view in views:
            storage = view.storage
            if storage.device is None:
                storage.device, storage.device_origin = device, origin
            elif storage.device != device:
                raise located_error(
                    origin,
                    f"conflicting virtual devices for one value: {device} here, but "
                    f"{storage.device} at {location_of(storage.device_origin)}; "
                    "plan-devices must insert a relay.device_copy between them",
                )

    def run(self) -> StoragePlan:
        main = self.main
        check_main(main)
        block = main.body.block
        arg_attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
        for i, arg in enumerate(block.args):
            self.visit_argument(i, arg, arg_attrs[i] if i < len(arg_attrs) else None)
        for op in block.ops:
            self.visit(op)
        self.plan.views = self.views
        self.name_allocations()
        return self.plan

    def name_allocations(self) -> None:
        """Which outputs are written in place, and the allocations' names."""
        plan = self.plan
        for i, view in enumerate(plan.returns):
            storage = view.storage
            if (
                storage.kind is StorageKind.INTERNAL
                and storage not in plan.in_place
                and view.is_whole
            ):
                plan.in_place[storage] = i
            else:
                plan.copied_outputs.append((view, i))
        constants = sids = states = 0
        for storage in plan.storages:
            if storage.kind is StorageKind.CONSTANT:
                storage.name = f"constant_{constants}"
                constants += 1
            elif storage.kind is StorageKind.STATE:
                storage.name = f"state_{states}"
                states += 1
            elif storage.kind is StorageKind.INTERNAL and storage not in plan.in_place:
                storage.name = f"sid_{sids}"
                sids += 1

    def visit_argument(
        self, i: int, arg: BlockArgument, attrs: DictionaryAttr | None
    ) -> None:
        what = f"argument {i}{_name(arg)} of @main"
        types = self.memrefs(arg.type, self.main, what)
        if len(types) != 1 or not isinstance(arg.type, TensorType):
            raise located_error(
                self.main,
                f"{what} has type {arg.type}; model inputs must be tensors "
                "(pass each tensor of a tuple as its own argument)",
            )
        storage = self.new_storage(StorageKind.INPUT, types[0], None)
        self.plan.inputs.append(storage)
        view = View(storage, types[0])
        self.views[arg] = (view,)
        device = _device_attr(attrs.data if attrs else None, self.main, what)
        if device is not None:
            self.constrain((view,), device, self.main)

    def memrefs(self, type_: Attribute, op: Operation, what: str) -> list[MemRefType]:
        """``_static_memrefs``, computed once per type (building types is slow)."""
        found = self.flat.get(type_)
        if found is None:
            found = self.flat[type_] = _static_memrefs(type_, op, what)
        return found

    def visit(self, op: Operation) -> None:
        results = [
            self.memrefs(r.type, op, f"result {i} of '{op.name}'")
            for i, r in enumerate(op.results)
        ]
        if isinstance(op, relay.CallOp):
            inputs = [
                m
                for i, arg in enumerate(op.args)
                for m in self.memrefs(arg.type, op, f"operand {i} of '{op.name}'")
            ]
            callee = check_callee(op, self.functions, inputs, results[0])
            self.visit_call(op, callee, results[0])
            return
        match op:
            case relay.ConstantOp():
                storage = self.new_storage(StorageKind.CONSTANT, results[0][0], op)
                self.views[op.result] = (View(storage, results[0][0]),)
                self.constrain_from_attribute(op)
            case StateOp():
                storage = self.new_storage(StorageKind.STATE, results[0][0], op)
                self.views[op.result] = (View(storage, results[0][0]),)
                self.constrain_from_attribute(op)
            case ReadStateOp():
                (source,) = self.views[op.state]
                storage = self.new_storage(StorageKind.INTERNAL, results[0][0], op)
                view = View(storage, results[0][0])
                self.views[op.result] = (view,)
                self.constrain_from_attribute(op)
                self.add_step(CopyStep(op, source, view))
            case AssignStateOp():
                (source,) = self.views[op.value]
                (state,) = self.views[op.state]
                self.add_step(CopyStep(op, source, state))
            case relay.TupleOp():
                self.views[op.result] = tuple(
                    v for f in op.fields for v in self.views[f]
                )
            case relay.TupleGetItemOp():
                assert isinstance(op.tuple.type, TupleType)
                fields = op.tuple.type.types.data
                index = op.get_index()
                start = sum(len(flatten_tensor_types(f)) for f in fields[:index])
                count = len(flatten_tensor_types(fields[index]))
                self.views[op.result] = self.views[op.tuple][start : start + count]
            case relay.OnDeviceOp():
                views = self.views[op.data]
                self.views[op.result] = views
                self.constrain(views, op.virtual_device, op)
            case relay.DeviceCopyOp():
                sources = self.views[op.data]
                destinations = tuple(
                    View(self.new_storage(StorageKind.INTERNAL, t, op), t)
                    for t in results[0]
                )
                self.constrain(sources, op.src, op)
                self.constrain(destinations, op.dst, op)
                self.views[op.result] = destinations
                for src, dst in zip(sources, destinations, strict=True):
                    self.add_step(CopyStep(op, src, dst))
            case ReshapeOp():
                (source,) = self.views[op.data]
                view = View(
                    source.storage, results[0][0], source.offset, _origin(op, source)
                )
                self.views[op.result] = (view,)
                self.constrain_from_attribute(op)
            case StridedSliceOp():  # contiguous: check_main refused the others
                (source,) = self.views[op.data]
                offset = op.contiguous_offset()
                assert offset is not None
                view = View(
                    source.storage,
                    results[0][0],
                    source.offset + offset,
                    _origin(op, source),
                )
                self.views[op.result] = (view,)
                self.constrain_from_attribute(op)
            case func.ReturnOp():
                self.visit_return(op)
            case _:  # pragma: no cover - _check_op_kind rejected it
                raise located_error(op, f"'{op.name}' is not supported in main")

    def visit_call(
        self, op: relay.CallOp, callee: str, result_types: Sequence[MemRefType]
    ) -> None:
        inputs = tuple(v for arg in op.args for v in self.views[arg])
        outputs = tuple(
            View(self.new_storage(StorageKind.INTERNAL, t, op), t) for t in result_types
        )
        self.views[op.result] = outputs
        self.constrain_from_attribute(op)
        self.add_step(CallStep(op, callee, inputs, outputs))

    def add_step(self, step: Step) -> None:
        self.plan.steps_of.setdefault(step.op, []).append(step)

    def constrain_from_attribute(self, op: Operation) -> None:
        if (vd := _device_attr(op.attributes, op)) is not None:
            self.constrain(self.views[op.results[0]], vd, op)

    def visit_return(self, op: func.ReturnOp) -> None:
        self.plan.terminator = op
        res_attrs = self.main.res_attrs.data if self.main.res_attrs is not None else ()
        for i, value in enumerate(op.arguments):
            views = self.views[value]
            attrs = res_attrs[i].data if i < len(res_attrs) else None
            what = f"result {i} of @main"
            if (vd := _device_attr(attrs, self.main, what)) is not None:
                self.constrain(views, vd, self.main)
            self.plan.returns.extend(views)


def _origin(op: Operation, source: View) -> Operation:
    """The op a view made by ``op`` is named after: ``op`` if the importer
    names a TFLite tensor after it, else the view it reshapes if that one is
    named (an operator's own reshape of its input is no tensor)."""
    if tensor_location(op.location) is None and source.origin is not None:
        return source.origin
    return op


def _name(value: SSAValue) -> str:
    return f" (%{value.name_hint})" if value.name_hint else ""


def assign_storage(
    main: func.FuncOp, functions: Mapping[str, func.FuncOp]
) -> StoragePlan:
    """Storage ids, calls and copies of the relay ``main`` (see the module doc).

    ``functions`` maps every ``func.func`` of the module by symbol name.
    Raises a located error for anything aot-lower-main cannot lower."""
    return _Assigner(main, functions).run()


__all__ = [
    "CallStep",
    "CopyStep",
    "DEFAULT_DEVICE",
    "Storage",
    "StorageKind",
    "StoragePlan",
    "Step",
    "View",
    "assign_storage",
    "flatten_tensor_types",
    "memref_of",
]
