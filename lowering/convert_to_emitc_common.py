"""What every ``convert-to-emitc`` pattern shares: the type converter, the
attribute names of the converted module, and ``OpLowering``, the small
builder a pattern uses to replace one source op by emitc ops.

Types (``EmitcTypeConverter``; all valid MLIR 22 emitc):

* ``index`` is ``!emitc.ptrdiff_t`` (signed, pointer wide), so the signed
  index arithmetic of tensor code needs no casts; unsigned predicates cast to
  ``!emitc.size_t``. Index constants are ``emitc.constant`` of ``index``
  value and ``ptrdiff_t`` type.
* a memref is a pointer to its element type pointing at the memref's aligned
  base; an access ``m[i, j]`` is ``p[offset + i*s0 + j*s1]`` with the static
  strides and offset of the memref's layout, so subviews, reshapes and
  reinterpret casts are pointer aliases. ``memref.view`` of a pool is
  ``(T*)&pool[offset]``.
* workspace pool arguments are ``!emitc.ptr<ui8>`` (``uint8_t*``), constant
  pool arguments ``!emitc.ptr<!emitc.opaque<"const uint8_t">>``.

Values change type in place, as in MLIR's dialect conversion: a scalar
result is replaced by its emitc value directly; a memref value by its pointer
behind a ``builtin.unrealized_conversion_cast`` back to the memref type (the
source materialisation), so that the ops still to be converted keep reading
the memref's shape and layout from their operand's type while ``remap`` gives
them the pointer. The driver removes the casts once every op is converted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    UnrealizedConversionCastOp,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue, TypeAttribute
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.dialects.emitc_expressions import CMP_PREDICATES
from usmp.lowering.convert_to_emitc_ir import (
    insert_at,
    insert_before,
    remove_op,
    replace_uses,
    transplant,
)
from usmp.lowering.create import create

WORKSPACE_POOL_TYPE = emitc.PointerType(IntegerType(8, Signedness.UNSIGNED))
CONSTANT_POOL_TYPE = emitc.PointerType(emitc.OpaqueType(StringAttr("const uint8_t")))
INDEX_TYPE = emitc.PtrDiffT()
UNSIGNED_INDEX_TYPE = emitc.SizeT()

MEMREF_ARG_ATTR = "usmp.memref"
"""Argument attribute of a converted function: the memref type the pointer
argument had (the C printer and the metadata read shapes from it)."""
NAME_ATTR = "usmp.name"
"""Discardable attribute naming the C variable an op's result becomes (exact
names such as ``sid_1``, which SSA name hints cannot carry)."""
POOLS_ATTR = "usmp.pools"
"""Module attribute after conversion: one dictionary per pool (name, kind,
size, alignment; ``user = true`` for a pool the application provides,
``convert-to-emitc{user_pools}``) in builtin attributes only, so that MLIR
tools need no ``tir`` dialect to read the module."""
USER_POOL_KEY = "user"
"""Key of a ``usmp.pools`` entry: the application provides the pool (U2/U3)."""
POOL_ATTR = "usmp.pool"
"""Attribute of the ``emitc.global`` holding a constant pool's data: the pool."""
ALIGNMENT_ATTR = "usmp.alignment"
"""Attribute of an ``emitc.global``: the alignment its storage needs."""


@lru_cache(maxsize=256)
def pointer_to(pointee: TypeAttribute) -> emitc.PointerType:
    """``!emitc.ptr<pointee>``, built (and verified) once per pointee type:
    types are immutable values, and every memref operand, argument and
    view converts to one."""
    return emitc.PointerType(pointee)


@dataclass(frozen=True)
class EmitcTypeConverter:
    """Builtin types to emitc types, and back for memrefs (materialisation)."""

    def convert_scalar_type(self, type_: Attribute, op: Operation) -> TypeAttribute:
        """The emitc type of a scalar; a located error if C99 has none."""
        kind = type(type_)  # the usual ones by exact class: no ABC checks
        if kind is IntegerType and type_.width.data in (1, 8, 16, 32, 64):  # pyright: ignore[reportAttributeAccessIssue]
            return type_  # pyright: ignore[reportReturnType]
        if kind is IndexType:
            return INDEX_TYPE
        if isinstance(type_, IndexType):
            return INDEX_TYPE
        if isinstance(type_, IntegerType) and type_.width.data in (1, 8, 16, 32, 64):
            return type_
        if isinstance(type_, Float32Type | Float64Type):
            return type_
        raise located_error(
            op,
            f"type {type_} has no C99 equivalent; supported: i1, i8, i16, i32, i64 "
            "(signless, signed or unsigned), index, f32, f64",
        )

    def convert_type(self, type_: Attribute, op: Operation) -> TypeAttribute:
        """Scalars map to themselves (``index`` to ``ptrdiff_t``), memrefs to
        a pointer to their element type."""
        if type(type_) is MemRefType:  # a final class: no ABC check
            element = self.convert_scalar_type(type_.get_element_type(), op)  # pyright: ignore[reportAttributeAccessIssue]
            return pointer_to(element)
        return self.convert_scalar_type(type_, op)

    @staticmethod
    def unsigned_type(type_: Attribute) -> TypeAttribute:
        """The unsigned type of the same width (``ptrdiff_t`` -> ``size_t``)."""
        if isinstance(type_, emitc.PtrDiffT):
            return UNSIGNED_INDEX_TYPE
        assert isinstance(type_, IntegerType)
        if type_.width.data == 1:
            return type_
        return IntegerType(type_.width.data, Signedness.UNSIGNED)

    @staticmethod
    def materialize(pointer: SSAValue, type_: Attribute) -> UnrealizedConversionCastOp:
        """``pointer`` seen as the memref ``type_`` until the conversion ends."""
        return create(UnrealizedConversionCastOp, (pointer,), type_)

    @staticmethod
    def remap(value: SSAValue) -> SSAValue:
        """The converted value of an operand (the pointer of a memref)."""
        owner = value.owner
        if type(owner) is UnrealizedConversionCastOp:
            (pointer,) = owner._operands  # (``inputs``' field)  # pyright: ignore[reportPrivateUsage]
            return pointer
        return value


TYPES = EmitcTypeConverter()
convert_scalar_type = TYPES.convert_scalar_type
convert_type = TYPES.convert_type
unsigned_type = TYPES.unsigned_type


def static_layout(type_: MemRefType, op: Operation) -> tuple[int, list[int]]:
    """(offset, strides) in elements; a located error unless both are static."""
    strides = type_.get_strides()
    offset = type_.get_offset()
    if (
        strides is None
        or offset is None
        or any(s is None for s in strides)
        or any(d < 0 for d in type_.get_shape())
    ):
        raise located_error(
            op,
            f"memref type {type_} has a dynamic shape, offset or stride; the C "
            "emitter needs static ones (no heap, no VLAs)",
        )
    return offset, [s for s in strides if s is not None]


def float_suffix(type_: Attribute) -> str:
    """``f`` for ``float`` C math functions, ``""`` for ``double``."""
    assert isinstance(type_, AnyFloat)
    return "f" if isinstance(type_, Float32Type) else ""


def constant_value(value: SSAValue) -> int | None:
    """The integer an ``emitc.constant`` holds, else None."""
    owner = value.owner
    if type(owner) is emitc.ConstantOp and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


# The ops the patterns build most, built without the IRDL constructor
# (``lowering/create.py``'s ``create``: it costs five times the op).

PREDICATE_ATTRS = {p: IntegerAttr(k, i64) for k, p in enumerate(CMP_PREDICATES)}
"""``emitc.cmp``'s predicate property by name."""
_UNINITIALISED = emitc.OpaqueAttr(StringAttr(""))


def cmp_op(predicate: str, lhs: SSAValue, rhs: SSAValue) -> emitc.CmpOp:
    """``emitc.cmp predicate, lhs, rhs`` (``emitc.CmpOp(predicate, lhs, rhs)``)."""
    return create(emitc.CmpOp, (lhs, rhs), i1, predicate=PREDICATE_ATTRS[predicate])


def conditional_op(
    cond: SSAValue, true_value: SSAValue, false_value: SSAValue
) -> emitc.ConditionalOp:
    """``cond ? true_value : false_value``."""
    operands = (cond, true_value, false_value)
    return create(emitc.ConditionalOp, operands, true_value.type)


def load_op(lvalue: SSAValue) -> emitc.LoadOp:
    """``emitc.load`` of an lvalue."""
    type_ = lvalue.type
    assert isinstance(type_, emitc.LValueType)
    return create(emitc.LoadOp, (lvalue,), type_.value_type)


def assign_op(lvalue: SSAValue, value: SSAValue) -> emitc.AssignOp:
    """``lvalue = value;``."""
    return create(emitc.AssignOp, (lvalue, value))


def variable_op(type_: Attribute) -> emitc.VariableOp:
    """An uninitialised C variable of ``type_`` (an lvalue or array type)."""
    return create(emitc.VariableOp, (), type_, value=_UNINITIALISED)


@dataclass
class ConversionState:
    """What the patterns of one ``convert-to-emitc`` run share.

    The walker rewrites in pre-order, so a function's body is converted right
    after the ``func.func`` itself: ``start_function`` (called by the
    ``func.func`` pattern) opens the function whose constants are built next.
    Constants are defined once per function, in order of first use, at the
    top of its body (the C printer declares them there)."""

    includes: set[str] = field(default_factory=lambda: set[str]())
    """Headers the converted code needs beyond the base ones."""
    casts: list[UnrealizedConversionCastOp] = field(
        default_factory=lambda: list[UnrealizedConversionCastOp]()
    )
    """Materialisations to remove when the conversion ends."""
    functions: list[emitc.FuncOp] = field(default_factory=lambda: list[emitc.FuncOp]())
    """The functions this run converted, in order."""
    packed: dict[Operation, Operation] = field(
        default_factory=lambda: dict[Operation, Operation]()
    )
    """First load of a packed byte read (``dsp.packed_loads``) -> the op
    computing the word, which one ``usmp_read_s8x4`` replaces."""
    helpers: set[str] = field(default_factory=set[str])
    """The prelude helpers the converted code calls (``dsp.PRELUDES``)."""
    function: emitc.FuncOp | None = None
    """The function being converted."""
    status_functions: list[emitc.FuncOp] = field(
        default_factory=lambda: list[emitc.FuncOp]()
    )
    """Functions that return an ``int32_t`` status (0 where they returned
    nothing): an entry checking a device's hooks or operators, an operator
    of a device (``convert_to_emitc_devices``)."""
    _constants: dict[tuple[Attribute, Attribute], SSAValue] = field(
        default_factory=lambda: dict[tuple[Attribute, Attribute], SSAValue]()
    )
    _indices: dict[int, SSAValue] = field(default_factory=lambda: dict[int, SSAValue]())
    """``_constants``' index constants by value (most constants are indices;
    this spares building an ``IntegerAttr`` to look one up)."""
    _body: Block | None = None
    _last_constant: Operation | None = None
    _lvalues: dict[Attribute, emitc.LValueType] = field(
        default_factory=lambda: dict[Attribute, emitc.LValueType]()
    )
    _index_attrs: dict[int, IntegerAttr] = field(
        default_factory=lambda: dict[int, IntegerAttr]()
    )
    _layouts: dict[int, tuple[MemRefType, tuple[int, list[int]]]] = field(
        default_factory=lambda: dict[int, tuple[MemRefType, tuple[int, list[int]]]]()
    )

    _element_types: dict[
        int, tuple[MemRefType, emitc.PointerType, emitc.LValueType]
    ] = field(
        default_factory=lambda: dict[
            int, tuple[MemRefType, emitc.PointerType, emitc.LValueType]
        ]()
    )

    def layout(self, type_: MemRefType, op: Operation) -> tuple[int, list[int]]:
        """``static_layout(type_, op)``, computed once per type object of
        this run (every element access asks for its memref's; a memref
        type's hash costs about as much as its layout, so the key is the
        type's identity, the type kept with its layout so that it stays
        alive). The callers only read the strides."""
        known = self._layouts.get(id(type_))
        if known is None or known[0] is not type_:
            known = self._layouts[id(type_)] = (type_, static_layout(type_, op))
        return known[1]

    def element_types(
        self, type_: MemRefType, op: Operation
    ) -> tuple[emitc.PointerType, emitc.LValueType]:
        """The pointer to ``type_``'s element type and the lvalue of one
        element, found once per memref type object of this run (as
        ``layout``: every element access asks for its memref's)."""
        known = self._element_types.get(id(type_))
        if known is None or known[0] is not type_:
            element = convert_scalar_type(type_.get_element_type(), op)
            pointer = pointer_to(element)
            known = (type_, pointer, self.lvalue_type(element))
            self._element_types[id(type_)] = known
        return known[1], known[2]

    def lvalue_type(self, value_type: Attribute) -> emitc.LValueType:
        """``!emitc.lvalue<value_type>``, built (and verified) once per run
        and type: every load, store and loop variable has one."""
        if (known := self._lvalues.get(value_type)) is None:
            known = self._lvalues[value_type] = emitc.LValueType(value_type)
        return known

    def pointer_type(self, pointee: TypeAttribute) -> emitc.PointerType:
        """``!emitc.ptr<pointee>`` (``pointer_to``: built once per type for
        every run; every element access asks for its memref's)."""
        return pointer_to(pointee)

    def start_function(self, f: emitc.FuncOp) -> None:
        self.functions.append(f)
        self.function = f
        self._constants = {}
        self._indices = {}
        self._body = f.body.block if f.body.blocks else None
        self._last_constant = None

    def index(self, n: int, rewriter: PatternRewriter, at: Operation) -> SSAValue:
        """``constant`` of the index ``n``."""
        if (known := self._indices.get(n)) is None:
            if (attr := self._index_attrs.get(n)) is None:
                attr = self._index_attrs[n] = IntegerAttr(n, IndexType())
            known = self._indices[n] = self.constant(attr, INDEX_TYPE, rewriter, at)
        return known

    def constant(
        self,
        value: Attribute,
        type_: Attribute,
        rewriter: PatternRewriter,
        at: Operation,
    ) -> SSAValue:
        """The function's ``emitc.constant`` of ``value`` (created at the
        location of ``at`` when first asked for)."""
        key = (value, type_)
        if (known := self._constants.get(key)) is not None:
            return known
        assert self._body is not None, "a constant outside a converted function"
        op = create(emitc.ConstantOp, (), type_, value=value)
        op.location = at.location
        body, last = self._body, self._last_constant
        first = body.first_op if last is None else last.next_op
        if first is None:
            body.add_op(op)
        else:
            insert_before(body, (op,), first)
        rewriter.has_done_action = True
        self._last_constant = op
        (result,) = op.results
        self._constants[key] = result
        return result


class OpLowering:
    """Builds the emitc ops replacing one source op, at its location: before
    it (inserted together by ``replace``, which then binds its results), or
    at ``at`` when a pattern sets it (e.g. into a new loop body)."""

    def __init__(
        self, op: Operation, rewriter: PatternRewriter, state: ConversionState
    ):
        self.op = op
        self.rewriter = rewriter
        self.state = state
        self.at: InsertPoint | None = None
        self._before: list[Operation] = []

    def _insert(self, op: Operation) -> None:
        if self.at is None:
            self._before.append(op)
        else:  # (``rewriter.insert``'s work: no listener to tell)
            insert_at(self.at, op)
            self.rewriter.has_done_action = True

    def emit(self, op: Operation) -> Operation:
        op.location = self.op.location
        self._insert(op)
        return op

    def result(self, op: Operation) -> SSAValue:
        (value,) = self.emit(op).results
        return value

    def value(self, operand: SSAValue) -> SSAValue:
        """The converted value of ``operand`` (MLIR's adaptor)."""
        return TYPES.remap(operand)

    def constant(self, value: Attribute, type_: Attribute) -> SSAValue:
        return self.state.constant(value, type_, self.rewriter, self.op)

    def index(self, n: int) -> SSAValue:
        return self.state.index(n, self.rewriter, self.op)

    def include(self, header: str) -> None:
        self.state.includes.add(header)

    def bind(self, old: SSAValue, new: SSAValue) -> None:
        """Replace ``old`` by ``new`` (a memref by its pointer, materialised);
        ``new`` takes ``old``'s name unless it has one."""
        if new.name_hint is None and old.name_hint is not None:
            new.name_hint = old.name_hint
        if type(old.type) is MemRefType:  # a final class: no ABC check
            cast = TYPES.materialize(new, old.type)
            self._insert(cast)
            self.state.casts.append(cast)
            new = cast.results[0]
        replace_uses(old, new)  # not the rewriter's: no listener to tell

    def replace(self, *values: SSAValue) -> None:
        """Replace the source op's results by ``values`` and erase it. A
        ``name_hint`` attribute of the op names the first value's C variable."""
        op = self.op
        for old, new in zip(op.results, values, strict=True):
            self.bind(old, new)
        hint = op.attributes.get("name_hint")
        if values and hint is not None and isinstance(hint, StringAttr):
            owner = values[0].owner
            if isinstance(owner, Operation):
                owner.attributes[NAME_ATTR] = hint
        block = op.parent
        assert block is not None
        # the block's, not the rewriter's: no listener to tell of each op
        insert_before(block, self._before, op)
        if any(r.first_use is not None for r in op.results):
            raise ValueError(f"{op.name} replaced while its results have uses")
        remove_op(block, op)  # op.erase() but for its results' placeholders
        self.rewriter.has_done_action = True

    def replace_by(
        self,
        cls: type[IRDLOperation],
        operands: Sequence[SSAValue],
        type_: Attribute,
        **properties: Attribute,
    ) -> None:
        """``replace(result(create(cls, operands, type_, **properties)))``.
        When the source op has one result, of type ``type_``, the new op
        takes its place and result (``transplant``; its operands and uses
        too where ``operands`` are the source op's): no new result, none of
        its uses moved."""
        op = self.op
        results = op.results
        if (
            self.at is None
            and len(results) == 1
            and ((old := results[0].type) is type_ or old == type_)
            and not op.regions
            and not op._successors  # pyright: ignore[reportPrivateUsage]
        ):
            block = op.parent
            assert block is not None
            if self._before:
                insert_before(block, self._before, op)
            hint = op.attributes.get("name_hint")
            attributes: dict[str, Attribute] = (
                {NAME_ATTR: hint} if type(hint) is StringAttr else {}
            )
            same = _same_values(op._operands, operands)  # pyright: ignore[reportPrivateUsage]
            transplant(op, cls, attributes, None if same else operands, **properties)
            self.rewriter.has_done_action = True
            return
        self.replace(self.result(create(cls, operands, type_, **properties)))

    def replace_block_args(
        self, args: Sequence[SSAValue], values: Sequence[SSAValue]
    ) -> None:
        for old, new in zip(args, values, strict=True):
            self.bind(old, new)


def _same_values(a: Sequence[SSAValue], b: Sequence[SSAValue]) -> bool:
    """``a`` and ``b`` hold the same values (by identity), in order."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):  # noqa: B905 (the lengths are equal)
        if x is not y:
            return False
    return True


@dataclass(frozen=True)
class EmitcPattern(RewritePattern):
    """A pattern of the conversion, sharing the run's ``ConversionState``."""

    state: ConversionState

    def lowering(self, op: Operation, rewriter: PatternRewriter) -> OpLowering:
        return OpLowering(op, rewriter, self.state)
