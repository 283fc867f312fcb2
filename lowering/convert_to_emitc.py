"""Lowering of a post-``usmp`` module to the ``emitc`` dialect (the engine of
the ``convert-to-emitc`` pass; see ``passes/convert_to_emitc.py`` for the
contract).

Each ``func.func`` is rebuilt op by op into an ``emitc.func`` with a value map
(old value -> new value): types change (memrefs become pointers), so this is
a translation rather than in-place rewriting. One small handler per source op
lives in ``convert_to_emitc_{arith,memref,scf}.py``; this module holds the
type mapping, the per-function state the handlers use, and the module-level
steps (pools, globals, includes).

Representation choices (all valid MLIR 22 emitc):

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue, TypeAttribute

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.dialects.tir import POOL_ARGS, POOLS, PoolAllocationAttr, PoolInfoAttr

Handler = Callable[["FunctionLowering", Any], None]
"""Lowers one op (typed by each handler as the op class it is registered for)."""

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
size, alignment) in builtin attributes only, so that MLIR tools need no
``tir`` dialect to read the module."""
POOL_ATTR = "usmp.pool"
"""Attribute of the ``emitc.global`` holding a constant pool's data: the pool."""
ALIGNMENT_ATTR = "usmp.alignment"
"""Attribute of an ``emitc.global``: the alignment its storage needs."""


def convert_scalar_type(type_: Attribute, op: Operation) -> TypeAttribute:
    """The emitc type of a scalar; a located error if C99 has none."""
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


def convert_type(type_: Attribute, op: Operation) -> TypeAttribute:
    """Scalars map to themselves (``index`` to ``ptrdiff_t``), memrefs to a
    pointer to their element type."""
    if isinstance(type_, MemRefType):
        return emitc.PointerType(convert_scalar_type(type_.get_element_type(), op))
    return convert_scalar_type(type_, op)


def unsigned_type(type_: Attribute) -> TypeAttribute:
    """The unsigned type of the same width (``ptrdiff_t`` -> ``size_t``)."""
    if isinstance(type_, emitc.PtrDiffT):
        return UNSIGNED_INDEX_TYPE
    assert isinstance(type_, IntegerType)
    if type_.width.data == 1:
        return type_
    return IntegerType(type_.width.data, Signedness.UNSIGNED)


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


@dataclass
class ModuleInfo:
    """What every function's lowering may look up (built once per module)."""

    pools: dict[str, PoolInfoAttr]
    functions: dict[str, func.FuncOp]
    includes: set[str] = field(default_factory=lambda: set[str]())

    @staticmethod
    def of(module: ModuleOp) -> ModuleInfo:
        pools_attr = module.attributes.get(POOLS)
        pools = {
            p.pool_name.data: p
            for p in (pools_attr.data if isinstance(pools_attr, ArrayAttr) else ())
            if isinstance(p, PoolInfoAttr)
        }
        functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }
        return ModuleInfo(pools, functions)


class FunctionLowering:
    """The state of rebuilding one ``func.func`` as an ``emitc.func``."""

    def __init__(self, info: ModuleInfo, handlers: Mapping[type[Operation], Handler]):
        self.info = info
        self.handlers = handlers
        self.values: dict[SSAValue, SSAValue] = {}
        self.constant_of: dict[SSAValue, int] = {}
        self._constants: dict[tuple[Attribute, Attribute], SSAValue] = {}
        self._constant_ops: list[Operation] = []
        self.block = Block()
        self.current: Operation | None = None

    # -- values -------------------------------------------------------------
    def value(self, old: SSAValue) -> SSAValue:
        return self.values[old]

    def bind(self, old: SSAValue, new: SSAValue) -> None:
        self.values[old] = new
        if new.name_hint is None and old.name_hint is not None:
            new.name_hint = old.name_hint

    def emit(self, op: Operation) -> Operation:
        """Append ``op`` to the current block, at the location of the source op."""
        if self.current is not None:
            op.location = self.current.location
        self.block.add_op(op)
        return op

    def result(self, op: Operation) -> SSAValue:
        return self.emit(op).results[0]

    def constant(self, value: Attribute, type_: Attribute) -> SSAValue:
        """A constant defined once at the top of the function."""
        key = (value, type_)
        if key not in self._constants:
            op = emitc.ConstantOp(value, type_)
            if self.current is not None:
                op.location = self.current.location
            self._constant_ops.append(op)
            self._constants[key] = op.result
            if isinstance(value, IntegerAttr):
                self.constant_of[op.result] = value.value.data
        return self._constants[key]

    def index(self, n: int) -> SSAValue:
        return self.constant(IntegerAttr(n, IndexType()), INDEX_TYPE)

    def include(self, header: str) -> None:
        self.info.includes.add(header)

    # -- ops ----------------------------------------------------------------
    def lower_ops(self, ops: Sequence[Operation], into: Block) -> None:
        """Lower ``ops`` (in order) appending the results to ``into``."""
        saved, self.block = self.block, into
        try:
            for op in ops:
                handler = self.handlers.get(type(op))
                if handler is None:
                    raise located_error(
                        op,
                        f"'{op.name}' has no lowering to emitc (supported: func, "
                        "scf.for/if, arith, math, memref load/store/view/copy/"
                        "subview/reshapes, tir.call)",
                    )
                self.current = op
                handler(self, op)
                if (hint := op.attributes.get("name_hint")) is not None:
                    if isinstance(hint, StringAttr) and op.results:
                        owner = self.values[op.results[0]].owner
                        if isinstance(owner, Operation):
                            owner.attributes[NAME_ATTR] = hint
        finally:
            self.block = saved

    def lower_function(self, f: func.FuncOp) -> emitc.FuncOp:
        pool_names = _strings(f.attributes.get(POOL_ARGS))
        inputs = list(f.function_type.inputs.data)
        arg_types: list[Attribute] = []
        for i, t in enumerate(inputs):
            pool_index = i - (len(inputs) - len(pool_names))
            if pool_index >= 0:
                arg_types.append(self._pool_arg_type(f, pool_names[pool_index], t))
            else:
                arg_types.append(convert_type(t, f))
        outputs = [convert_type(t, f) for t in f.function_type.outputs.data]
        if len(outputs) > 1:
            raise located_error(f, "a C function returns at most one value")
        ftype = FunctionType.from_lists(arg_types, outputs)
        arg_attrs = ArrayAttr(
            DictionaryAttr({MEMREF_ARG_ATTR: t} if isinstance(t, MemRefType) else {})
            for t in inputs
        )
        if f.body.blocks:
            if len(f.body.blocks) > 1:
                raise located_error(
                    f, "functions with several blocks are not supported"
                )
            old_block = f.body.block
            body = Block(arg_types=arg_types)
            for old, new in zip(old_block.args, body.args, strict=True):
                self.bind(old, new)
            self.lower_ops(list(old_block.ops), body)
            if self._constant_ops:
                first = body.first_op
                for op in self._constant_ops:
                    body.insert_op_before(op, first) if first else body.add_op(op)
            erase_dead_values(body)
            new = emitc.FuncOp(f.sym_name.data, ftype, Region(body))
        else:
            new = emitc.FuncOp(f.sym_name.data, ftype, Region(), ["extern"])
            new.attributes["sym_visibility"] = StringAttr("private")
        new.arg_attrs = arg_attrs  # pyright: ignore[reportAttributeAccessIssue]
        for name, attr in f.attributes.items():
            if name.startswith("tir.") and (value := builtin_only(attr)) is not None:
                new.attributes[name] = value
        new.location = f.location
        return new

    def _pool_arg_type(self, f: func.FuncOp, pool: str, type_: Attribute) -> Attribute:
        info = self.info.pools.get(pool)
        if info is None:
            raise located_error(
                f,
                f"pool argument '{pool}' is not described in the module's {POOLS} "
                f"(known pools: {', '.join(sorted(self.info.pools)) or 'none'})",
            )
        if not (
            isinstance(type_, MemRefType)
            and type_.get_element_type() == IntegerType(8)
            and len(type_.get_shape()) == 1
        ):
            raise located_error(
                f, f"pool argument '{pool}' must be a memref<Nxi8>, got {type_}"
            )
        return (
            CONSTANT_POOL_TYPE if info.kind.data == "constant" else WORKSPACE_POOL_TYPE
        )


_VALUE_OPS = (
    emitc.ConstantOp,
    emitc.LiteralOp,
    emitc.VariableOp,
    emitc.LoadOp,
    emitc.SubscriptOp,
    emitc.GetGlobalOp,
    emitc.AddOp,
)


def _dead(op: Operation) -> bool:
    """Is ``op`` a value nobody uses, whose computation does nothing else
    (constants whose uses were folded into an index, unread loads...)?"""
    if len(op.results) != 1 or op.results[0].uses:
        return False
    if isinstance(op, emitc.ApplyOp):
        return op.applicableOperator.data == "&"
    return isinstance(op, _VALUE_OPS) or type(op).__module__ == _EXPRESSIONS


_EXPRESSIONS = emitc.CastOp.__module__  # arithmetic, comparisons, casts: pure


def erase_dead_values(block: Block) -> None:
    """Erase unused side-effect-free ops in ``block`` and nested blocks."""
    for op in reversed(list(block.walk())):
        if _dead(op):
            op.detach()
            op.erase()


def builtin_only(attr: Attribute) -> Attribute | None:
    """``attr`` with ``#tir.pool_allocation``s as ``{pool, offset}`` dictionaries,
    or None if it holds another dialect's attribute (e.g. a relay device),
    which MLIR tools could not parse without that dialect."""
    if isinstance(attr, PoolAllocationAttr):
        return DictionaryAttr(
            {"pool": attr.pool_name, "offset": IntegerAttr(attr.offset.data, 64)}
        )
    if isinstance(attr, ArrayAttr):
        items = [builtin_only(a) for a in attr.data]
        return None if any(i is None for i in items) else ArrayAttr(items)  # pyright: ignore
    if isinstance(attr, DictionaryAttr):
        entries = {k: builtin_only(v) for k, v in attr.data.items()}
        if any(v is None for v in entries.values()):
            return None
        return DictionaryAttr(entries)  # pyright: ignore[reportArgumentType]
    return attr if type(attr).__module__ == "xdsl.dialects.builtin" else None


def _strings(attr: Attribute | None) -> list[str]:
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return []


def float_suffix(type_: Attribute) -> str:
    """``f`` for ``float`` C math functions, ``""`` for ``double``."""
    assert isinstance(type_, AnyFloat)
    return "f" if isinstance(type_, Float32Type) else ""


def pools_summary(pools: dict[str, PoolInfoAttr]) -> ArrayAttr:
    """``tir.pools`` in builtin attributes only (see ``POOLS_ATTR``)."""
    return ArrayAttr(
        DictionaryAttr(
            {
                "name": StringAttr(name),
                "kind": StringAttr(p.kind.data),
                "size": IntegerAttr(p.size.data, 64),
                "alignment": IntegerAttr(p.alignment.data, 64),
            }
        )
        for name, p in pools.items()
    )


BASE_INCLUDES = ("stdbool.h", "stddef.h", "stdint.h")
"""Headers every converted module includes (``bool``, ``ptrdiff_t``,
``intN_t``); ``string.h`` and ``math.h`` are added when used."""


def _c_identifier(name: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return ident if ident and not ident[0].isdigit() else f"_{ident}"


def _lower_global(op: memref.GlobalOp, info: ModuleInfo) -> emitc.GlobalOp:
    """A constant pool's bytes become ``static const uint8_t pool[N]``; any
    other global a ``static`` C array of its element type."""
    type_ = op.type
    name = op.sym_name.data
    pool = info.pools.get(name)
    value = op.initial_value
    if pool is not None:
        if not isinstance(value, DenseIntOrFPElementsAttr) or op.constant is None:
            raise located_error(
                op, f"constant pool @{name} must be a constant with data"
            )
        data = value.data.data
        array = emitc.ArrayType([len(data)], IntegerType(8, Signedness.UNSIGNED))
        initial: Attribute | None = DenseIntOrFPElementsAttr(
            TensorType(array.element_type, [len(data)]),  # pyright: ignore
            BytesAttr(data),
        )
        alignment = pool.alignment.data
    else:
        elem = convert_scalar_type(type_.get_element_type(), op)
        shape = list(type_.get_shape()) or [1]
        array = emitc.ArrayType(shape, elem)  # pyright: ignore[reportArgumentType]
        initial = value if isinstance(value, DenseIntOrFPElementsAttr) else None
        alignment = op.alignment.value.data if op.alignment is not None else 0
    new = emitc.GlobalOp(
        _c_identifier(name), array, initial, static=True, const=op.constant is not None
    )
    if alignment:
        new.attributes[ALIGNMENT_ATTR] = IntegerAttr(alignment, 64)
    if pool is not None:
        new.attributes[POOL_ATTR] = StringAttr(name)
    new.location = op.location
    return new


def convert_module(module: ModuleOp) -> None:
    """Replace every function and global of ``module`` by its emitc form."""
    from usmp.lowering import (
        convert_to_emitc_arith,
        convert_to_emitc_memref,
        convert_to_emitc_scf,
    )

    handlers = {
        **convert_to_emitc_arith.HANDLERS,
        **convert_to_emitc_memref.HANDLERS,
        **convert_to_emitc_scf.HANDLERS,
    }
    info = ModuleInfo.of(module)
    converted: list[Operation] = []
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            # (pyright sees this file as both lowering.* and usmp.lowering.*)
            lowering = FunctionLowering(info, handlers)  # pyright: ignore[reportArgumentType]
            converted.append(lowering.lower_function(op))
        elif isinstance(op, memref.GlobalOp):
            converted.append(_lower_global(op, info))
        elif op.dialect_name() == "emitc":
            if isinstance(op, emitc.IncludeOp):
                info.includes.add(op.include.data)
                continue
            converted.append(op.clone())
        else:
            raise located_error(
                op,
                f"'{op.name}' at module level cannot be emitted as C (expected "
                "func.func, memref.global or emitc ops)",
            )
    block = module.body.block
    for op in list(block.ops):
        op.detach()
        op.erase()
    for header in sorted({*BASE_INCLUDES, *info.includes}):
        block.add_op(emitc.IncludeOp(header))
    for op in converted:
        block.add_op(op)
    if POOLS in module.attributes:
        module.attributes[POOLS_ATTR] = pools_summary(info.pools)
        del module.attributes[POOLS]
