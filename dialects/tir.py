"""The ``tir`` dialect: operator-level IR of usmp-opt.

After ``lower-ops`` every operator is a *prim func*: a ``func.func`` carrying the
unit attribute ``tir.prim_func`` whose arguments are memrefs (inputs first, then
outputs) and whose body is upstream ``scf``/``arith``/``memref``/``math``.
After ``aot-lower-main`` the model's entry point is a prim func too (it also
carries ``tir.main``): a straight-line sequence of ``tir.call`` ops on buffers
created by ``tir.allocate`` / ``tir.allocate_const``.

Only what upstream MLIR does not already have is defined here:

* ``tir.allocate``        a statically sized buffer with a storage scope and the
                          ordered candidate pools the planner may place it in;
* ``tir.allocate_const``  a buffer holding constant data (weights);
* ``tir.call``            a call to an operator function with TVM's call types;
* ``#tir.pool_info``      a memory pool (workspace or constant) with its limit,
                          alignment and per-target access;
* ``#tir.pool_allocation``the planner's decision for one buffer: pool + offset;
* ``CallType``, ``PoolKind``, ``AccessMode``, ``DeviceHook``: closed sets of names, as
                          enum attributes (printed as bare keywords).

Attribute names used on functions and modules (see ``PRIM_FUNC`` etc. below)
are defined once here so that passes never spell them by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FlatSymbolRefAttrConstr,
    IntAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasAncestor, HasParent, MemoryAllocEffect, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from usmp.dialects.device import storage_scope_error
from usmp.dialects.limits import (
    MAX_BUFFER_BYTES,
    alignment_error,
    check_buffer_size,
    check_nonempty,
)
from usmp.dialects.op_definition import op_definition
from usmp.dialects.symbols import lookup_function, type_list

# Attribute names shared by passes (one spelling, here).
PRIM_FUNC = "tir.prim_func"
"""Unit attribute on a ``func.func`` that is a tir prim func."""
MAIN_FUNC = "tir.main"
"""Unit attribute on the AOT entry point produced by ``aot-lower-main``."""
INPUT_NAMES = "tir.input_names"
OUTPUT_NAMES = "tir.output_names"
INPUT_QUANTIZATION = "tir.input_quantization"
"""Entry attribute: the inputs' quantisation (``relay.input_quantization``,
one ``{scale, zero_point}`` or ``{}`` per input, in ``tir.input_names``
order); absent when no input or output is quantised."""
OUTPUT_QUANTIZATION = "tir.output_quantization"
"""The same for the outputs (``relay.output_quantization``)."""
INTERFACE_API = "tir.interface_api"
"""Entry attribute: ``"packed"`` when the library's entry point takes TVM's
packed arguments (TVM's executor option ``interface-api``); absent: ``c``."""
INTERFACE_APIS = ("c", "packed")
POOLS = "tir.pools"
"""Module attribute: ``ArrayAttr`` of ``#tir.pool_info`` (ordered)."""
POOL_ARGS = "tir.pool_args"
"""Function attribute: names of the pools passed as trailing arguments."""
VIRTUAL_DEVICE = "tir.virtual_device"
"""Device (``#device.virtual_device``, ``usmp.dialects.device``) of a
``tir.call``, allocation or entry argument (planned devices)."""
SRC_VIRTUAL_DEVICE = "tir.src_virtual_device"
"""Source device of a cross-device ``memref.copy`` (planned devices)."""
DST_VIRTUAL_DEVICE = "tir.dst_virtual_device"
"""Destination device of a cross-device ``memref.copy`` (planned devices)."""
DEVICES = "tir.devices"
"""Entry attribute: the distinct devices the model uses (planned devices)."""
TARGET = "tir.target"
"""Function attribute naming the target a prim func runs on (default ``c``)."""
IO_POOL_ALLOCATION = "tir.pool_allocation"
"""Argument attribute of main's inputs/outputs placed in the workspace by
``usmp-plan-memory{use_workspace_io=true}``."""
INPUT_ALLOCATIONS = "tir.input_allocations"
OUTPUT_ALLOCATIONS = "tir.output_allocations"
"""Entry function attributes after a rewrite with workspace I/O: where each
input/output lives (``#tir.pool_allocation``, in ``tir.input_names`` /
``tir.output_names`` order)."""
INPUT_TYPES = "tir.input_types"
OUTPUT_TYPES = "tir.output_types"
CALL_ORDER = "tir.call_order"
"""Entry attribute written by ``aot-lower-main{order=memory}`` when it moved
main's calls into an order of smaller peak: ``{exact, peak, source_peak}``
(live bytes of the order chosen and of the source order; ``exact``: no
order has a smaller peak)."""
STATES = "tir.states"
"""On the entry function after ``usmp``: one dictionary per state buffer
(``name``, ``pool``, ``offset``, ``value`` = its initial value), read by the
generated ``tvmgen_<model>_init``."""
"""... and the memref type of each."""


class CallType(StrEnum):
    """How a ``tir.call`` passes its arguments (TVM's calling conventions)."""

    UNPACKED = "unpacked"
    """memrefs passed directly (what the generated C does)."""
    PACKED = "packed"
    CPACKED = "cpacked"


class PoolKind(StrEnum):
    """What a pool holds (USMP RFC)."""

    WORKSPACE = "workspace"
    """Buffers live within one ``run`` (shareable between models)."""
    CONSTANT = "constant"
    """Read-only data (weights), packed into the pool at compile time."""
    PERSISTENT = "persistent"
    """State that lives across ``run`` calls (``tir.allocate_state``): never
    shared with anything, initialised by ``tvmgen_<model>_init``."""


class AccessMode(StrEnum):
    """How a target may access a pool."""

    RW = "rw"
    RO = "ro"


CALL_TYPES = tuple(c.value for c in CallType)
POOL_KINDS = tuple(k.value for k in PoolKind)
ACCESS_KINDS = tuple(a.value for a in AccessMode)


@irdl_attr_definition
class CallTypeAttr(EnumAttribute[CallType], SpacedOpaqueSyntaxAttribute):
    """``#tir<call_type cpacked>``; ``tir.call`` prints it as a bare keyword."""

    name = "tir.call_type"


@irdl_attr_definition
class PoolKindAttr(EnumAttribute[PoolKind], SpacedOpaqueSyntaxAttribute):
    """``#tir<pool_kind workspace>``; ``#tir.pool_info`` prints it bare."""

    name = "tir.pool_kind"


@irdl_attr_definition
class AccessModeAttr(EnumAttribute[AccessMode], SpacedOpaqueSyntaxAttribute):
    """``#tir<access rw>``; ``#tir.pool_info`` prints it bare."""

    name = "tir.access"


_E = TypeVar("_E", bound=StrEnum)


def _parse_enum(parser: AttrParser, enum: type[_E], what: str) -> _E:
    """A bare keyword (``rw``) or, as older IR spells it, a string (``"rw"``);
    errors read ``{what} 'x' is not one of ...``."""
    pos = parser.pos
    text = parser.parse_optional_identifier_or_str_literal()
    if text is None:
        parser.raise_error(f"expected {what} ({', '.join(e.value for e in enum)})")
    try:
        return enum(text)
    except ValueError:
        parser.raise_error(
            f"{what} '{text}' is not one of {', '.join(e.value for e in enum)}",
            pos,
            parser.pos,
        )


def _parse_identifier_or_str(parser: AttrParser, what: str) -> str:
    text = parser.parse_optional_identifier_or_str_literal()
    if text is None:
        parser.raise_error(f"expected {what}")
    return text


def _access_dict(access: Iterable[tuple[str, str]]) -> DictionaryAttr:
    return DictionaryAttr({t: AccessModeAttr(AccessMode(m)) for t, m in access})


@irdl_attr_definition
class PoolInfoAttr(ParametrizedAttribute):
    """A memory pool the planner may place buffers in (USMP RFC ``PoolInfo``).

    Syntax::

        #tir.pool_info<"sram", workspace, size = 65536, alignment = 16,
                       access = {c = rw, "ethos-u" = ro}>

    ``kind`` is a ``PoolKind``; ``size = 0`` means unbounded (the planner
    sizes the pool). ``access`` maps target names to an ``AccessMode``; a
    buffer used by a target may only be placed in a pool that target can
    access. Without ``access`` the host target ``c`` gets ``rw`` (workspace)
    or ``ro`` (constant) access. The parser also accepts the older spelling
    with quoted modes (``access = {"c" = "rw"}``).
    """

    name = "tir.pool_info"

    pool_name: StringAttr
    kind: PoolKindAttr
    size: IntAttr
    alignment: IntAttr
    access: DictionaryAttr
    """Target name -> ``AccessModeAttr``, in the order given."""

    def __init__(
        self,
        pool_name: str,
        kind: str = PoolKind.WORKSPACE,
        size: int = 0,
        alignment: int = 16,
        access: Iterable[tuple[str, str]] = (("c", AccessMode.RW),),
    ):
        super().__init__(
            StringAttr(pool_name),
            PoolKindAttr(PoolKind(kind)),
            IntAttr(size),
            IntAttr(alignment),
            _access_dict(access),
        )

    @property
    def size_limit(self) -> int | None:
        return self.size.data or None

    def access_map(self) -> dict[str, AccessMode]:
        """Target name -> access mode, in the order given."""
        return {
            t: a.data
            for t, a in self.access.data.items()
            if isinstance(a, AccessModeAttr)
        }

    def verify(self) -> None:
        name = self.pool_name.data
        if self.size.data < 0:
            raise VerifyException(f"pool '{name}': size must be >= 0 (0 = unbounded)")
        if self.size.data > MAX_BUFFER_BYTES:
            raise VerifyException(
                f"pool '{name}': size {self.size.data} is larger than "
                f"the generated C can index; expected at most {MAX_BUFFER_BYTES} "
                "bytes (0 = unbounded)"
            )
        if (error := alignment_error(self.alignment.data)) is not None:
            raise VerifyException(f"pool '{name}': {error}")
        for target, mode in self.access.data.items():
            if not isinstance(mode, AccessModeAttr):
                raise VerifyException(
                    f"pool '{name}': access of target '{target}' is {mode}; "
                    f"expected one of {', '.join(ACCESS_KINDS)}"
                )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pool_name = parser.parse_str_literal("pool name")
            parser.parse_punctuation(",")
            kind = _parse_enum(parser, PoolKind, f"pool '{pool_name}': kind")
            size, alignment = 0, 16
            access: list[tuple[str, AccessMode]] = []
            while parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_identifier("size, alignment or access")
                parser.parse_punctuation("=")
                if key == "size":
                    size = parser.parse_integer(allow_boolean=False)
                elif key == "alignment":
                    alignment = parser.parse_integer(allow_boolean=False)
                elif key == "access":

                    def parse_entry() -> tuple[str, AccessMode]:
                        target = _parse_identifier_or_str(parser, "target name")
                        parser.parse_punctuation("=")
                        return target, _parse_enum(
                            parser, AccessMode, f"pool '{pool_name}': access"
                        )

                    access = parser.parse_comma_separated_list(
                        parser.Delimiter.BRACES, parse_entry
                    )
                else:
                    parser.raise_error(
                        f"unknown pool_info key '{key}' "
                        "(expected size, alignment or access)"
                    )
        if not access:  # default: the host target "c" may use the pool
            default = AccessMode.RO if kind is PoolKind.CONSTANT else AccessMode.RW
            access = [("c", default)]
        return (
            StringAttr(pool_name),
            PoolKindAttr(kind),
            IntAttr(size),
            IntAttr(alignment),
            _access_dict(access),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.pool_name.data)
            printer.print_string(f", {self.kind.data}")
            printer.print_string(f", size = {self.size.data}")
            printer.print_string(f", alignment = {self.alignment.data}")
            printer.print_string(", access = {")
            for i, (target, mode) in enumerate(self.access_map().items()):
                if i:
                    printer.print_string(", ")
                printer.print_identifier_or_string_literal(target)
                printer.print_string(f" = {mode}")
            printer.print_string("}")


def _check_static_memref(type_: Attribute, what: str) -> MemRefType:
    if not isinstance(type_, MemRefType):
        raise VerifyException(f"{what} must produce a memref, got {type_}")
    if any(dim < 0 for dim in type_.get_shape()):
        raise VerifyException(
            f"{what} must have a static shape, got {type_} "
            "(dynamically sized buffers are not planned; use memref.alloc)"
        )
    check_nonempty(type_, what)
    check_buffer_size(type_, what)
    return type_


def _check_initial_value(
    result: Attribute,
    value: DenseIntOrFPElementsAttr | DenseResourceAttr,
    what: str,
) -> None:
    """``value``'s shape and element type are the static result memref's."""
    mtype = _check_static_memref(result, what)
    vtype = value.type
    assert isinstance(vtype, TensorType)
    if (
        tuple(vtype.get_shape()) != tuple(mtype.get_shape())
        or vtype.get_element_type() != mtype.get_element_type()
    ):
        raise VerifyException(
            f"{what}: value of type {vtype} does not match the "
            f"result {mtype} (same shape and element type expected)"
        )


@irdl_attr_definition
class PoolAllocationAttr(ParametrizedAttribute):
    """Where the planner put one buffer: ``#tir.pool_allocation<"sram", 128>``."""

    name = "tir.pool_allocation"

    pool_name: StringAttr
    offset: IntAttr

    def __init__(self, pool_name: str, offset: int):
        super().__init__(StringAttr(pool_name), IntAttr(offset))

    def verify(self) -> None:
        if self.offset.data < 0:
            raise VerifyException("pool_allocation offset must be >= 0")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pool_name = parser.parse_str_literal("pool name")
            parser.parse_punctuation(",")
            offset = parser.parse_integer(allow_boolean=False)
        return StringAttr(pool_name), IntAttr(offset)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.pool_name.data)
            printer.print_string(f", {self.offset.data}")


class _InFunctionOrParallelLoop(HasParent):
    """``HasParent(func.FuncOp)``, or an ``scf.parallel`` among the op's
    ancestors (TVM's thread-local allocation in a parallel loop)."""

    def __init__(self):
        super().__init__(func.FuncOp)

    def verify(self, op: Operation) -> None:
        if HasAncestor(scf.ParallelOp).get_ancestor(op) is None:
            super().verify(op)


class AllocationOp(IRDLOperation):
    """What the three allocations share: a statically sized buffer of the
    function it is in (its result memref), named by ``name_hint``, with the
    ordered ``candidate_pools`` the planner may use and, once planned, its
    ``pool_allocation``. An allocation is a memory effect (not ``Pure``: DCE
    keeps it) directly in a ``func.func``: the prim func it belongs to
    (``tir.allocate`` may also be in an ``scf.parallel``; xDSL adds a base
    class's traits to its subclasses', so each sets its ``HasParent``)."""

    name_hint = prop_def(StringAttr)
    candidate_pools = opt_prop_def(ArrayAttr[StringAttr])
    pool_allocation = opt_prop_def(PoolAllocationAttr)
    result = result_def(MemRefType)

    traits = traits_def(MemoryAllocEffect())

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"


@op_definition
class AllocateOp(AllocationOp):
    """A statically sized buffer (TVM's ``tir.allocate``).

    Syntax::

        %sid_1 = tir.allocate {name_hint = "sid_1", scope = "global",
                               candidate_pools = ["sram", "dram"]} : memref<1x16xi8>

    Inside main it is one storage id; inside an operator it is scratch that
    lives only during the call. ``usmp`` replaces every ``tir.allocate`` with a
    ``memref.view`` into a pool argument. ``scope`` is a storage scope
    (``global``, ``local``, a memory's name; dot-separated identifiers).
    """

    name = "tir.allocate"

    traits = traits_def(_InFunctionOrParallelLoop())
    """Directly in its function, or anywhere inside an ``scf.parallel``: a
    buffer of each iteration (thread-local, as TVM's allocation in a parallel
    loop), which ``usmp`` leaves to the code generator."""

    scope = opt_prop_def(StringAttr, default_value=StringAttr("global"))

    def __init__(
        self,
        result_type: MemRefType,
        name_hint: str,
        scope: str = "global",
        candidate_pools: Sequence[str] | None = None,
    ):
        props: dict[str, Attribute] = {"name_hint": StringAttr(name_hint)}
        if scope != "global":
            props["scope"] = StringAttr(scope)
        if candidate_pools is not None:
            props["candidate_pools"] = ArrayAttr(StringAttr(p) for p in candidate_pools)
        super().__init__(properties=props, result_types=[result_type])

    def verify_(self) -> None:
        _check_static_memref(self.result.type, "tir.allocate")
        if (error := storage_scope_error(self.scope.data)) is not None:
            raise VerifyException(f"tir.allocate: {error}")


class _InitializedAllocationOp(AllocationOp):
    """An allocation holding ``value`` from the start (a constant's data, a
    state's initial value): its shape and element type are the result's."""

    traits = traits_def(HasParent(func.FuncOp))

    def __init__(
        self,
        result_type: MemRefType,
        name_hint: str,
        value: DenseIntOrFPElementsAttr | DenseResourceAttr,
    ):
        super().__init__(
            properties={"name_hint": StringAttr(name_hint), "value": value},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        value = self.properties["value"]
        assert isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr)
        _check_initial_value(self.result.type, value, self.name)


@op_definition
class AllocateConstOp(_InitializedAllocationOp):
    """A buffer holding constant data (TVM's ``tir.allocate_const``).

    Syntax::

        %w = tir.allocate_const {name_hint = "constant_0",
                                 value = dense<[1, 2]> : tensor<2xi8>} : memref<2xi8>

    ``value`` is a dense elements attribute or a ``dense_resource`` blob whose
    shape and element type match the result memref.
    """

    name = "tir.allocate_const"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)


@op_definition
class AllocateStateOp(_InitializedAllocationOp):
    """A buffer whose contents live across invocations of the model (a TFLite
    variable tensor: an SVDF or LSTM state), allocated in the entry function.

    Syntax::

        %s = tir.allocate_state {name_hint = "state_0",
                                 value = dense<0> : tensor<1x8xi16>} : memref<1x8xi16>

    ``value`` is the state's initial value (what ``tvmgen_<model>_init``
    writes). Operators read it and update it in place. ``usmp`` plans it into
    a ``persistent`` pool, live for the whole program: it never shares bytes
    with another buffer.
    """

    name = "tir.allocate_state"

    value = prop_def(DenseIntOrFPElementsAttr)

    def __init__(
        self, result_type: MemRefType, name_hint: str, value: DenseIntOrFPElementsAttr
    ):
        super().__init__(result_type, name_hint, value)


class CallSymbolUser(SymbolUserOpInterface):
    """``tir.call`` verifies its callee (see ``CallOp.verify_callee``)."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        op.verify_callee()


@op_definition
class CallOp(IRDLOperation):
    """Call an operator function, passing buffers (TVM's ``call_extern`` family).

    Syntax::

        tir.call @tvmgen_default_fused_add(%a, %b, %out) : (memref<4xi8>, ...) -> ()
        tir.call cpacked @op(%a, %out) : (...) -> ()

    The arguments are the operator's inputs, then its outputs, then (after
    ``usmp``) the pools it uses. ``call_type`` (a ``CallType``, written before
    the callee) is ``unpacked`` (the default, not printed: memrefs passed
    directly), ``packed`` or ``cpacked`` (TVM's packed calling conventions).

    The callee must be a ``func.func`` of the enclosing symbol table that is a
    prim func (``tir.prim_func``) or an external declaration, return nothing,
    and take exactly the argument types passed (after ``usmp``, its trailing
    parameters are the pools named in its ``tir.pool_args``, and every call
    passes them).
    """

    name = "tir.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    call_type = opt_prop_def(
        CallTypeAttr, default_value=CallTypeAttr(CallType.UNPACKED)
    )
    args = var_operand_def()

    traits = traits_def(CallSymbolUser())

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue],
        call_type: str = CallType.UNPACKED,
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        props: dict[str, Attribute] = {"callee": callee}
        if call_type != CallType.UNPACKED:
            props["call_type"] = CallTypeAttr(CallType(call_type))
        super().__init__(operands=[args], properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_optional_symbol_name()
        call_type = CallType.UNPACKED
        if callee is None:
            call_type = _parse_enum(parser, CallType, "tir.call: call type")
            callee = parser.parse_symbol_name()
        pos = parser.pos
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attrs_pos = parser.pos
        attrs = parser.parse_optional_attr_dict()
        if "call_type" in attrs or "callee" in attrs:
            parser.raise_error(
                "tir.call: the call type is a keyword before the callee "
                "(tir.call cpacked @f(...)), not an attribute",
                attrs_pos,
                parser.pos,
            )
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        parser.parse_punctuation("->")
        parser.parse_punctuation("(")
        parser.parse_punctuation(")")
        if len(types) != len(args):
            parser.raise_error(
                f"tir.call has {len(args)} argument(s) but {len(types)} type(s)", pos
            )
        operands = [
            parser.resolve_operand(a, t) for a, t in zip(args, types, strict=True)
        ]
        op = cls(callee.data, operands, call_type)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if self.call_type.data != CallType.UNPACKED:
            printer.print_string(f"{self.call_type.data} ")
        printer.print_symbol_name(self.callee.root_reference.data)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list((a.type for a in self.args), printer.print_attribute)
        printer.print_string(") -> ()")

    def verify_callee(self) -> None:
        name = self.callee.string_value()
        callee = lookup_function(self, self.callee)
        if PRIM_FUNC not in callee.attributes and callee.body.blocks:
            raise VerifyException(
                f"tir.call to @{name}, which has a body but no '{PRIM_FUNC}' "
                "attribute; tir.call calls tir prim funcs or external declarations"
            )
        ftype = callee.function_type
        if ftype.outputs.data:
            raise VerifyException(
                f"tir.call to @{name}, which returns {len(ftype.outputs)} value(s); "
                "an operator function returns nothing and writes its outputs into "
                "its trailing memref arguments"
            )
        expected = ftype.inputs.data
        got = tuple(a.type for a in self.args)
        if len(got) != len(expected):
            pools = callee.attributes.get(POOL_ARGS)
            note = (
                f" (its last {len(pools)} are the pools {pools}, which every call "
                "passes after usmp)"
                if isinstance(pools, ArrayAttr) and pools.data
                else ""
            )
            raise VerifyException(
                f"tir.call passes {len(got)} argument(s) {type_list(got)}, but @{name} "
                f"takes {len(expected)} {type_list(expected)}{note}"
            )
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            if g != e and not is_offset_view(g, e):
                raise VerifyException(
                    f"tir.call: argument {i} is {g}, but @{name} takes {e}"
                )


@op_definition
class CallExternOp(IRDLOperation):
    """Call an external C library function (TVM's ``tir.call_extern``), as
    the ``cmsis-nn`` target's operators do (``usmp.lowering.cmsis_nn``)::

        tir.call_extern "arm_softmax_s8"(%x, %out) {scalars = array<i64: 0, 1, 12,
            1242899200, 24, -124>} : memref<1x12xi8>, memref<1x12xi8>

    ``args`` are the buffers the function reads and writes (by pointer),
    ``scalars`` its integer parameters, flattened as TVM's
    ``relay_to_tir.cc`` does; ``convert-to-emitc`` packs them into the C
    library's structs. The call writes its last buffer (the output) and,
    when the first scalar (a scratch size) is not 0, its first (the
    scratch); it reads every buffer. The analyses count every byte of each
    as accessed at the call's one time."""

    name = "tir.call_extern"

    callee = prop_def(StringAttr)
    scalars = prop_def(DenseArrayBase.constr(i64))
    args = var_operand_def(MemRefType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$callee `(` $args `)` attr-dict `:` type($args)"

    def __init__(self, callee: str, args: Sequence[SSAValue], scalars: Sequence[int]):
        super().__init__(
            operands=[args],
            properties={
                "callee": StringAttr(callee),
                "scalars": DenseArrayBase.from_list(i64, scalars),
            },
        )

    def written_operands(self) -> frozenset[int]:
        """Indices (in ``args``) of the buffers the call writes."""
        last = len(self.args) - 1
        scratch = self.scalars.get_values()[:1] != (0,)
        return frozenset({last, 0} if scratch and last > 0 else {last})


class DeviceHook(StrEnum):
    """TVM's device API hooks (``TVMDevice<Device>Activate`` ...), in call
    order."""

    ACTIVATE = "activate"
    OPEN = "open"
    CLOSE = "close"
    DEACTIVATE = "deactivate"


DEVICE_HOOKS = tuple(h.value for h in DeviceHook)


@irdl_attr_definition
class DeviceHookAttr(EnumAttribute[DeviceHook], SpacedOpaqueSyntaxAttribute):
    """``#tir<hook open>``; ``tir.device_hook`` prints it as a bare keyword."""

    name = "tir.hook"


def device_camel(device: str) -> str:
    """TVM's spelling of a device in its hook names: ``ethos_u`` -> ``EthosU``."""
    return "".join(part[:1].upper() + part[1:] for part in device.split("_") if part)


@op_definition
class DeviceHookOp(IRDLOperation):
    """A call of one of TVM's device API hooks, which the application
    implements (seed 000, ``test_c_device_api.py``)::

        tir.device_hook activate "accel"
        // C: TVMDeviceAccelActivate(device_context_accel)

    ``hook`` is a ``DeviceHook``: ``activate``, ``open``, ``close`` or
    ``deactivate`` (the parser also takes it quoted, as older IR spells it);
    ``device`` names the device as a C identifier (the target of its virtual
    device, ``ethos-u`` -> ``ethos_u``). In C each becomes
    ``int32_t TVMDevice<Device><Hook>(void* device_context_<device>)``, the
    context being an argument of the entry function (``device_context``)."""

    name = "tir.device_hook"

    hook = prop_def(DeviceHookAttr)
    device = prop_def(StringAttr)

    assembly_format = "$hook $device attr-dict"

    def __init__(self, hook: str, device: str):
        super().__init__(
            properties={
                "hook": DeviceHookAttr(DeviceHook(hook)),
                "device": StringAttr(device),
            }
        )

    @property
    def c_function(self) -> str:
        """TVM's hook name: ``TVMDevice<Device><Hook>``."""
        return (
            f"TVMDevice{device_camel(self.device.data)}{device_camel(self.hook.data)}"
        )

    @staticmethod
    def device_context(device: str) -> str:
        """The C name of ``device``'s context: ``device_context_<device>``."""
        return f"device_context_{device}"

    def verify_(self) -> None:
        if not self.device.data.isidentifier() or not self.device.data.isascii():
            raise VerifyException(
                f"tir.device_hook: device '{self.device.data}' is not a C identifier"
            )


def is_offset_view(arg: Attribute, param: Attribute) -> bool:
    """Whether a ``tir.call`` may pass a buffer of type ``arg`` for a parameter
    of type ``param``: ``param`` has the identity layout and ``arg`` is the
    same shape and element type, row-major at a static element offset (a
    view into a larger buffer, as ``aot-lower-main`` makes for a slice). The
    callee gets the address of its first element."""
    if not (
        isinstance(arg, MemRefType)
        and isinstance(param, MemRefType)
        and isinstance(param.layout, NoneAttr)
        and isinstance(arg.layout, StridedLayoutAttr)
        and arg.element_type == param.element_type
        and arg.get_shape() == param.get_shape()
        and arg.memory_space == param.memory_space
    ):
        return False
    offset = arg.get_offset()
    strides = arg.get_strides()
    return (
        offset is not None
        and offset >= 0
        and strides is not None
        and tuple(strides) == MemRefType.strides_for_shape(param.get_shape())
    )


_TIR_ATTRS = [
    CallTypeAttr,
    PoolKindAttr,
    AccessModeAttr,
    DeviceHookAttr,
    PoolInfoAttr,
    PoolAllocationAttr,
]


def _tir_dialect() -> Dialect:
    from usmp.dialects.tir_custom import CustomCallOp

    ops = [
        AllocateOp,
        AllocateConstOp,
        AllocateStateOp,
        CallOp,
        CallExternOp,
        DeviceHookOp,
    ]
    return Dialect("tir", [*ops, CustomCallOp], _TIR_ATTRS)


TIR = _tir_dialect()
