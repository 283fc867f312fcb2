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
* ``#tir.pool_allocation``the planner's decision for one buffer: pool + offset.

Attribute names used on functions and modules (see ``PRIM_FUNC`` etc. below)
are defined once here so that passes never spell them by hand.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FlatSymbolRefAttrConstr,
    IntAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.limits import (
    MAX_BUFFER_BYTES,
    alignment_error,
    check_buffer_size,
    check_nonempty,
)
from usmp.dialects.symbols import lookup_function, type_list

# Attribute names shared by passes (one spelling, here).
PRIM_FUNC = "tir.prim_func"
"""Unit attribute on a ``func.func`` that is a tir prim func."""
MAIN_FUNC = "tir.main"
"""Unit attribute on the AOT entry point produced by ``aot-lower-main``."""
INPUT_NAMES = "tir.input_names"
OUTPUT_NAMES = "tir.output_names"
POOLS = "tir.pools"
"""Module attribute: ``ArrayAttr`` of ``#tir.pool_info`` (ordered)."""
POOL_ARGS = "tir.pool_args"
"""Function attribute: names of the pools passed as trailing arguments."""
VIRTUAL_DEVICE = "tir.virtual_device"
"""Device of a ``tir.call``, allocation or entry argument (planned devices)."""
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
"""... and the memref type of each."""

CALL_TYPES = ("unpacked", "packed", "cpacked")
POOL_KINDS = ("workspace", "constant")
ACCESS_KINDS = ("rw", "ro")


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


@irdl_attr_definition
class PoolInfoAttr(ParametrizedAttribute):
    """A memory pool the planner may place buffers in (USMP RFC ``PoolInfo``).

    Syntax::

        #tir.pool_info<"sram", workspace, size = 65536, alignment = 16,
                       access = {c = "rw", ethos-u = "ro"}>

    ``size = 0`` means unbounded (the planner sizes the pool). ``access`` maps
    target names to ``"rw"`` or ``"ro"``; a buffer used by a target may only
    be placed in a pool that target can access. Without ``access`` the host
    target ``c`` gets ``rw`` (workspace) or ``ro`` (constant) access.
    """

    name = "tir.pool_info"

    pool_name: StringAttr
    kind: StringAttr
    size: IntAttr
    alignment: IntAttr
    targets: ArrayAttr[StringAttr]
    access: ArrayAttr[StringAttr]

    def __init__(
        self,
        pool_name: str,
        kind: str = "workspace",
        size: int = 0,
        alignment: int = 16,
        access: Sequence[tuple[str, str]] = (("c", "rw"),),
    ):
        super().__init__(
            StringAttr(pool_name),
            StringAttr(kind),
            IntAttr(size),
            IntAttr(alignment),
            ArrayAttr(StringAttr(t) for t, _ in access),
            ArrayAttr(StringAttr(a) for _, a in access),
        )

    @property
    def size_limit(self) -> int | None:
        return self.size.data or None

    def access_map(self) -> dict[str, str]:
        return {t.data: a.data for t, a in zip(self.targets, self.access, strict=True)}

    def verify(self) -> None:
        if self.kind.data not in POOL_KINDS:
            raise VerifyException(
                f"pool '{self.pool_name.data}': kind '{self.kind.data}' is not one "
                f"of {', '.join(POOL_KINDS)}"
            )
        if self.size.data < 0:
            raise VerifyException(
                f"pool '{self.pool_name.data}': size must be >= 0 (0 = unbounded)"
            )
        if self.size.data > MAX_BUFFER_BYTES:
            raise VerifyException(
                f"pool '{self.pool_name.data}': size {self.size.data} is larger than "
                f"the generated C can index; expected at most {MAX_BUFFER_BYTES} "
                "bytes (0 = unbounded)"
            )
        if (error := alignment_error(self.alignment.data)) is not None:
            raise VerifyException(f"pool '{self.pool_name.data}': {error}")
        if len(self.targets) != len(self.access):
            raise VerifyException("pool_info: targets and access differ in length")
        for a in self.access:
            if a.data not in ACCESS_KINDS:
                raise VerifyException(
                    f"pool '{self.pool_name.data}': access '{a.data}' is not one of "
                    f"{', '.join(ACCESS_KINDS)}"
                )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pool_name = parser.parse_str_literal("pool name")
            parser.parse_punctuation(",")
            kind = parser.parse_identifier("pool kind (workspace or constant)")
            size, alignment = 0, 16
            access: list[tuple[str, str]] = []
            while parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_identifier("size, alignment or access")
                parser.parse_punctuation("=")
                if key == "size":
                    size = parser.parse_integer(allow_boolean=False)
                elif key == "alignment":
                    alignment = parser.parse_integer(allow_boolean=False)
                elif key == "access":

                    def parse_entry() -> tuple[str, str]:
                        target = parser.parse_optional_str_literal()
                        if target is None:
                            target = parser.parse_identifier("target name")
                        parser.parse_punctuation("=")
                        return target, parser.parse_str_literal("rw or ro")

                    access = parser.parse_comma_separated_list(
                        parser.Delimiter.BRACES, parse_entry
                    )
                else:
                    parser.raise_error(
                        f"unknown pool_info key '{key}' "
                        "(expected size, alignment or access)"
                    )
        if not access:  # default: the host target "c" may use the pool
            access = [("c", "ro" if kind == "constant" else "rw")]
        return (
            StringAttr(pool_name),
            StringAttr(kind),
            IntAttr(size),
            IntAttr(alignment),
            ArrayAttr(StringAttr(t) for t, _ in access),
            ArrayAttr(StringAttr(a) for _, a in access),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.pool_name.data)
            printer.print_string(f", {self.kind.data}")
            printer.print_string(f", size = {self.size.data}")
            printer.print_string(f", alignment = {self.alignment.data}")
            entries = ", ".join(f'"{t}" = "{a}"' for t, a in self.access_map().items())
            printer.print_string(f", access = {{{entries}}}")


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


@irdl_op_definition
class AllocateOp(IRDLOperation):
    """A statically sized buffer (TVM's ``tir.allocate``).

    Syntax::

        %sid_1 = tir.allocate {name_hint = "sid_1", scope = "global",
                               candidate_pools = ["sram", "dram"]} : memref<1x16xi8>

    Inside main it is one storage id; inside an operator it is scratch that
    lives only during the call. ``usmp`` replaces every ``tir.allocate`` with a
    ``memref.view`` into a pool argument.
    """

    name = "tir.allocate"

    name_hint = prop_def(StringAttr)
    scope = opt_prop_def(StringAttr, default_value=StringAttr("global"))
    candidate_pools = opt_prop_def(ArrayAttr[StringAttr])
    pool_allocation = opt_prop_def(PoolAllocationAttr)
    result = result_def(MemRefType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

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


@irdl_op_definition
class AllocateConstOp(IRDLOperation):
    """A buffer holding constant data (TVM's ``tir.allocate_const``).

    Syntax::

        %w = tir.allocate_const {name_hint = "constant_0",
                                 value = dense<[1, 2]> : tensor<2xi8>} : memref<2xi8>

    ``value`` is a dense elements attribute or a ``dense_resource`` blob whose
    shape and element type match the result memref.
    """

    name = "tir.allocate_const"

    name_hint = prop_def(StringAttr)
    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    candidate_pools = opt_prop_def(ArrayAttr[StringAttr])
    pool_allocation = opt_prop_def(PoolAllocationAttr)
    result = result_def(MemRefType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

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
        mtype = _check_static_memref(self.result.type, "tir.allocate_const")
        vtype = self.value.type
        assert isinstance(vtype, TensorType)
        if (
            tuple(vtype.get_shape()) != tuple(mtype.get_shape())
            or vtype.get_element_type() != mtype.get_element_type()
        ):
            raise VerifyException(
                f"tir.allocate_const: value of type {vtype} does not match the "
                f"result {mtype} (same shape and element type expected)"
            )


class CallSymbolUser(SymbolUserOpInterface):
    """``tir.call`` verifies its callee (see ``CallOp.verify_callee``)."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        op.verify_callee()


@irdl_op_definition
class CallOp(IRDLOperation):
    """Call an operator function, passing buffers (TVM's ``call_extern`` family).

    Syntax::

        tir.call @tvmgen_default_fused_add(%a, %b, %out) : (memref<4xi8>, ...) -> ()
        tir.call @op(%a, %out) {call_type = "cpacked"} : (...) -> ()

    The arguments are the operator's inputs, then its outputs, then (after
    ``usmp``) the pools it uses. ``call_type`` is ``unpacked`` (default: memrefs
    passed directly), ``packed`` or ``cpacked`` (TVM's packed calling
    conventions; the C emitter wraps the arguments accordingly).

    The callee must be a ``func.func`` of the enclosing symbol table that is a
    prim func (``tir.prim_func``) or an external declaration, return nothing,
    and take exactly the argument types passed (after ``usmp``, its trailing
    parameters are the pools named in its ``tir.pool_args``, and every call
    passes them).
    """

    name = "tir.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    call_type = opt_prop_def(StringAttr, default_value=StringAttr("unpacked"))
    args = var_operand_def()

    traits = traits_def(CallSymbolUser())

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$callee `(` $args `)` attr-dict `:` `(` type($args) `)` `->` `(` `)`"
    )

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue],
        call_type: str = "unpacked",
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        props: dict[str, Attribute] = {"callee": callee}
        if call_type != "unpacked":
            props["call_type"] = StringAttr(call_type)
        super().__init__(operands=[args], properties=props)

    def verify_(self) -> None:
        if self.call_type.data not in CALL_TYPES:
            raise VerifyException(
                f"tir.call: call_type '{self.call_type.data}' is not one of "
                f"{', '.join(CALL_TYPES)}"
            )

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
            if g != e:
                raise VerifyException(
                    f"tir.call: argument {i} is {g}, but @{name} takes {e}"
                )


TIR = Dialect(
    "tir",
    [AllocateOp, AllocateConstOp, CallOp],
    [PoolInfoAttr, PoolAllocationAttr],
)
