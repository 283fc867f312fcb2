"""The ``relay`` dialect: graph-level IR of usmp-opt (TVM Relay, in MLIR form).

Values are builtin ``tensor<...>`` (tuples: builtin ``tuple<...>``). The model
is ``func.func @main`` whose body is relay ops ending in ``func.return``.
Primitive functions (what ``fuse-ops`` produces) are ``func.func`` carrying the
unit attribute ``relay.primitive``; ``relay.call`` calls them, or, after
``lower-ops``, tir prim funcs on memrefs (inputs first, then outputs).

Structural ops are defined in this file; the operators of real TinyML models
(conv2d, dense, elementwise, requantization pieces, ...) live in
``relay_ops.py`` and are registered in the same dialect.

Integer element types are signless (``i8`` is TFLite's int8), as in MLIR's
TOSA dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FlatSymbolRefAttrConstr,
    IntegerAttr,
    MemRefType,
    SymbolRefAttr,
    TensorType,
    TupleType,
    i64,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.device import VirtualDeviceAttr
from usmp.dialects.limits import check_buffer_size, check_nonempty
from usmp.dialects.op_definition import op_definition
from usmp.dialects.relay_fusion import Structural
from usmp.dialects.symbols import lookup_function, type_list
from usmp.dialects.tir import PRIM_FUNC

PRIMITIVE = "relay.primitive"
"""Unit attribute marking a ``func.func`` as a primitive (fused) function."""
OUTPUT_TENSOR_NAMES = "relay.output_tensor_names"
"""Optional ``ArrayAttr`` of strings on main naming its outputs."""
INPUT_TENSOR_NAMES = "relay.input_tensor_names"
"""Optional ``ArrayAttr`` of strings on main naming its inputs (else arg names)."""
INPUT_QUANTIZATION = "relay.input_quantization"
"""Optional ``ArrayAttr`` on main, one entry per input (as
``relay.input_tensor_names``): ``{scale = <f32>, zero_point = <i64>}`` for an
input quantised per tensor (``real = scale * (q - zero_point)``, TFLite's
affine quantisation), ``{}`` for one that is not. ``aot-lower-main`` carries
it to the entry (``tir.input_quantization``); the interface header gives
``TVMGEN_<M>_<TENSOR>_SCALE``/``_ZERO_POINT`` and quantise/dequantise helpers
from it."""
OUTPUT_QUANTIZATION = "relay.output_quantization"
"""The same for main's outputs (one entry per flattened output tensor)."""
VIRTUAL_DEVICE = "relay.virtual_device"
"""Discardable attribute (on relay operators, ``relay.call`` and
``relay.constant``, and as an argument/result attribute of every relay
function, written by ``plan-devices``) giving the device of the value, a
``#device.virtual_device`` (``usmp.dialects.device``; ``VirtualDeviceAttr`` is
re-exported here for the graph-level passes)."""


@op_definition
class ConstantOp(IRDLOperation):
    """A constant tensor (weights, biases, requantization parameters).

    Syntax::

        %w = relay.constant dense<[1, 2]> : tensor<2xi8>
        %w = relay.constant dense_resource<conv_w> : tensor<8x3x3x1xi8>

    The result type is the value's type. ``Pure`` and ``ConstantLike``: an
    unused constant is dead code, two equal ones are one value.
    """

    name = "relay.constant"

    traits = traits_def(Pure(), ConstantLike(), Structural())

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    result = result_def(TensorType)

    def __init__(self, value: DenseIntOrFPElementsAttr | DenseResourceAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"relay.constant: result type {self.result.type} differs from the "
                f"value's type {self.value.type}"
            )
        check_nonempty(self.result.type, "relay.constant")
        check_buffer_size(self.result.type, "relay.constant")

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error(
                "relay.constant expects a dense<...> or dense_resource<...> "
                "attribute with a tensor type",
                pos,
                parser.pos,
            )
        attrs = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)


def _flat_tensors(type_: Attribute) -> list[TensorType] | None:
    """The tensors a value of ``type_`` holds, tuples flattened depth first
    (None if it holds anything else)."""
    if isinstance(type_, TensorType):
        return [type_]
    if isinstance(type_, TupleType):
        found: list[TensorType] = []
        for field in type_.types:
            inner = _flat_tensors(field)
            if inner is None:
                return None
            found += inner
        return found
    return None


class CallSymbolUser(SymbolUserOpInterface):
    """``relay.call`` verifies its callee (see ``CallOp.verify_callee``)."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        op.verify_callee()


@op_definition
class CallOp(IRDLOperation):
    """Call a primitive function (or, after ``lower-ops``, a tir prim func).

    Syntax::

        %r = relay.call @fused_conv2d_add(%x, %w)
               : (tensor<..>, tensor<..>) -> tensor<..>

    The callee is a ``func.func`` of the enclosing symbol table:

    * a relay primitive function (``relay.primitive``) or an external
      declaration on tensors: its signature is the call's (a callee returning
      several results is called with the tuple of them as result type);
    * another relay function on tensors (a first-order call between relay
      functions, as TVM's ``@f(%x)``; ``plan-devices`` unifies the callee's
      parameter and result devices with the call's), same typing;
    * a tir prim func (``tir.prim_func``) or an external declaration on
      memrefs: its arguments are one identity-layout memref per (flattened)
      operand, then one per (flattened) result, and it returns nothing.

    ``Pure``: relay is functional and its callees are primitive functions,
    whose bodies are pure relay operators; after ``lower-ops`` the callee
    writes only the result buffers the call's lowering allocates, so the call
    still has value semantics. An unused call is dead, two identical calls are
    one value.
    """

    name = "relay.call"

    traits = traits_def(Pure(), CallSymbolUser(), Structural())

    callee = prop_def(FlatSymbolRefAttrConstr)
    args = var_operand_def()
    result = result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"
    )

    def __init__(
        self, callee: str | SymbolRefAttr, args: Sequence[SSAValue], result: Attribute
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(
            operands=[args], properties={"callee": callee}, result_types=[result]
        )

    def verify_callee(self) -> None:
        name = self.callee.string_value()
        callee = lookup_function(self, self.callee)
        ftype = callee.function_type
        declared = (*ftype.inputs.data, *ftype.outputs.data)
        if PRIM_FUNC in callee.attributes or (
            not callee.body.blocks
            and PRIMITIVE not in callee.attributes
            and any(isinstance(t, MemRefType) for t in declared)
        ):
            self._verify_memref_callee(name, ftype.inputs.data, ftype.outputs.data)
            return
        if (
            callee.body.blocks
            and PRIMITIVE not in callee.attributes
            and any(isinstance(t, MemRefType) for t in declared)
        ):
            raise VerifyException(
                f"relay.call to @{name}, which has a body but is neither a relay "
                f"primitive function ('{PRIMITIVE}') nor a tir prim func "
                f"('{PRIM_FUNC}')"
            )
        got = tuple(a.type for a in self.args)
        if got != ftype.inputs.data:
            raise VerifyException(
                f"relay.call passes {type_list(got)}, but @{name} takes "
                f"{type_list(ftype.inputs.data)}"
            )
        rtype = self.result.type
        unpacked = rtype.types.data if isinstance(rtype, TupleType) else None
        if ftype.outputs.data not in ((rtype,), unpacked):
            raise VerifyException(
                f"relay.call returns {self.result.type}, but @{name} returns "
                f"{type_list(ftype.outputs.data)}"
            )

    def _verify_memref_callee(
        self, name: str, params: Sequence[Attribute], returns: Sequence[Attribute]
    ) -> None:
        if returns:
            raise VerifyException(
                f"relay.call to @{name}, which returns {len(returns)} value(s); an "
                "operator function returns nothing and writes its outputs into its "
                "trailing memref arguments"
            )
        inputs: list[Attribute] = []
        for i, arg in enumerate(self.args):
            tensors = _flat_tensors(arg.type)
            if tensors is None:
                raise VerifyException(
                    f"relay.call: operand {i} has type {arg.type}; a call of a tir "
                    "prim func passes tensors (or tuples of tensors)"
                )
            inputs += [MemRefType(t.element_type, t.get_shape()) for t in tensors]
        outputs = _flat_tensors(self.result.type)
        if outputs is None:
            raise VerifyException(
                f"relay.call: result has type {self.result.type}; a call of a tir "
                "prim func returns a tensor (or a tuple of tensors)"
            )
        expected = [
            *inputs,
            *(MemRefType(t.element_type, t.get_shape()) for t in outputs),
        ]
        if len(params) != len(expected):
            raise VerifyException(
                f"relay.call @{name} passes {len(inputs)} input and {len(outputs)} "
                f"output buffer(s) ({len(expected)} in all), but @{name} takes "
                f"{len(params)} argument(s) {type_list(params)}; expected "
                f"{type_list(expected)}"
            )
        for i, (g, e) in enumerate(zip(params, expected, strict=True)):
            if g != e:
                role = "input" if i < len(inputs) else "output"
                raise VerifyException(
                    f"relay.call @{name}: argument {i} ({role}) of @{name} is {g}, "
                    f"but the call passes {e}"
                )


@op_definition
class TupleOp(IRDLOperation):
    """Build a tuple.

    Syntax::

        %t = relay.tuple(%a, %b) : (tensor<..>, tensor<..>) -> tuple<..>

    ``Pure``, as ``relay.tuple_get_item``: they only group and select values.
    """

    name = "relay.tuple"

    traits = traits_def(Pure(), Structural())

    fields = var_operand_def()
    result = result_def(TupleType)

    assembly_format = "`(` $fields `)` attr-dict `:` functional-type($fields, $result)"

    def __init__(self, fields: Sequence[SSAValue]):
        types = [f.type for f in fields]
        assert all(isinstance(t, TypeAttribute) for t in types)
        super().__init__(
            operands=[fields],
            result_types=[TupleType(tuple(cast(list[TypeAttribute], types)))],
        )

    def verify_(self) -> None:
        expected = [f.type for f in self.fields]
        got = list(self.result.type.types)
        if expected != got:
            raise VerifyException(
                f"relay.tuple: result {self.result.type} does not match the field "
                f"types ({', '.join(map(str, expected))})"
            )


@op_definition
class TupleGetItemOp(IRDLOperation):
    """Select a tuple field.

    Syntax::

        %x = relay.tuple_get_item %t[1] : tuple<..> -> tensor<..>
    """

    name = "relay.tuple_get_item"

    traits = traits_def(Pure(), Structural())

    tuple = operand_def(TupleType)
    index = prop_def(IntegerAttr[I64])
    result = result_def()

    def __init__(self, tuple_: SSAValue, index: int):
        assert isinstance(tuple_.type, TupleType)
        super().__init__(
            operands=[tuple_],
            properties={"index": IntegerAttr(index, i64)},
            result_types=[tuple_.type.types.data[index]],
        )

    def get_index(self) -> int:
        return self.index.value.data

    def verify_(self) -> None:
        ttype = self.tuple.type
        assert isinstance(ttype, TupleType)
        n = len(ttype.types)
        i = self.get_index()
        if not 0 <= i < n:
            raise VerifyException(
                f"relay.tuple_get_item: index {i} is out of range for a tuple of "
                f"{n} fields (expected 0..{n - 1})"
            )
        if ttype.types.data[i] != self.result.type:
            raise VerifyException(
                f"relay.tuple_get_item: field {i} has type {ttype.types.data[i]}, "
                f"but the result is {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TupleGetItemOp:
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ttype = parser.parse_type()
        parser.parse_punctuation("->")
        rtype = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(operand, ttype)],
            properties={"index": IntegerAttr(index, i64)},
            result_types=[rtype],
            attributes=attrs,
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.tuple)
        printer.print_string(f"[{self.get_index()}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tuple.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@op_definition
class OnDeviceOp(IRDLOperation):
    """Constrain where a value lives (TVM ``on_device``).

    Syntax::

        %y = relay.on_device %x {virtual_device = #device.virtual_device<"cpu", 0>}
               : tensor<..>

    TVM's semantics and defaults: ``constrain_body`` (default true) puts the
    operand on the device, ``constrain_result`` (default false) puts the
    result on it. Body only (the default): the value is computed on the
    device and ``plan-devices`` may copy it to its users' device. Both
    ("fixed"): operand and result are one value on the device. Result only:
    the result is on the device, the operand anywhere (copy permitted).
    Neither ("free"): no device imposed, a copy is permitted.

    ``Pure``: an annotation on a value; as in TVM, where an unused ``on_device``
    is not part of the expression, erasing an unused one changes nothing.
    """

    name = "relay.on_device"

    traits = traits_def(Pure(), Structural())

    T: ClassVar = VarConstraint("T", AnyAttr())
    data = operand_def(T)
    virtual_device = prop_def(VirtualDeviceAttr)
    constrain_result = prop_def(BoolAttr, default_value=IntegerAttr.from_bool(False))
    constrain_body = prop_def(BoolAttr, default_value=IntegerAttr.from_bool(True))
    result = result_def(T)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$data attr-dict `:` type($data)"

    def __init__(
        self,
        data: SSAValue,
        virtual_device: VirtualDeviceAttr,
        *,
        constrain_result: bool = False,
        constrain_body: bool = True,
    ):
        super().__init__(
            operands=[data],
            properties={
                "virtual_device": virtual_device,
                "constrain_result": IntegerAttr.from_bool(constrain_result),
                "constrain_body": IntegerAttr.from_bool(constrain_body),
            },
            result_types=[data.type],
        )

    def get_constrain_result(self) -> bool:
        return bool(self.constrain_result.value.data)

    def get_constrain_body(self) -> bool:
        return bool(self.constrain_body.value.data)


@op_definition
class DeviceCopyOp(IRDLOperation):
    """Copy a value between devices (TVM ``device_copy``).

    Syntax::

        %y = relay.device_copy %x {src = #device.virtual_device<"cpu", 0>,
                                   dst = #device.virtual_device<"npu", 0>} : tensor<..>

    ``Pure``: the result is a new value (the operand on another device); the
    operand is not changed.
    """

    name = "relay.device_copy"

    traits = traits_def(Pure(), Structural())

    T: ClassVar = VarConstraint("T", AnyAttr())
    data = operand_def(T)
    src = prop_def(VirtualDeviceAttr)
    dst = prop_def(VirtualDeviceAttr)
    result = result_def(T)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$data attr-dict `:` type($data)"

    def __init__(self, data: SSAValue, src: VirtualDeviceAttr, dst: VirtualDeviceAttr):
        super().__init__(
            operands=[data],
            properties={"src": src, "dst": dst},
            result_types=[data.type],
        )


STRUCTURAL_OPS: list[type[IRDLOperation]] = [
    ConstantOp,
    CallOp,
    TupleOp,
    TupleGetItemOp,
    OnDeviceOp,
    DeviceCopyOp,
]


def _relay_dialect() -> Dialect:
    from usmp.dialects import (
        relay_custom,
        relay_hybrid_ops,
        relay_image_ops,
        relay_lstm,
        relay_nn_ops,
        relay_ops,
        relay_state,
        relay_svdf,
        relay_tflite_ops,
    )

    return Dialect(
        "relay",
        [
            *STRUCTURAL_OPS,
            *relay_state.STATE_OPS,
            *relay_ops.OPERATOR_OPS,
            *relay_tflite_ops.EXTRA_OPS,
            *relay_image_ops.IMAGE_OPS,
            relay_lstm.LstmOp,
            *relay_svdf.SVDF_OPS,
            *relay_hybrid_ops.HYBRID_OPS,
            *relay_custom.CUSTOM_OPS,
        ],
        [
            *relay_nn_ops.LAYOUT_ATTRS,
            relay_lstm.CellActivationAttr,
            relay_svdf.FusedActivationAttr,
        ],
    )


Relay = _relay_dialect()
