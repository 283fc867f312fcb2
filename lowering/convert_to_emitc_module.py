"""Module-level parts of ``convert-to-emitc``: pools, globals, includes.

Everything that reads ``#tir.pool_info`` / ``#tir.pool_allocation`` is here:
``ModuleInfo`` (the read-only facts patterns look up), the C type of a pool
argument, the ``memref.global`` pattern (a constant pool's bytes), the
builtin form of ``tir.*`` attributes and of the module's ``tir.pools``.
``finish_module`` is the driver's last step: includes first (sorted), the
pool summary attribute.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.dialects.float_bits import c_nan_error, exponent_mask
from usmp.dialects.tir import POOLS, PoolAllocationAttr, PoolInfoAttr
from usmp.dialects.tir_custom import RETURNS_STATUS
from usmp.lowering.convert_to_emitc_common import (
    ALIGNMENT_ATTR,
    CONSTANT_POOL_TYPE,
    POOL_ATTR,
    POOLS_ATTR,
    WORKSPACE_POOL_TYPE,
    ConversionState,
    convert_scalar_type,
)
from usmp.lowering.dsp import HELPERS, preludes

BASE_INCLUDES = ("stdbool.h", "stddef.h", "stdint.h")
"""Headers every converted module includes (``bool``, ``ptrdiff_t``,
``intN_t``); ``string.h`` and ``math.h`` are added when used."""


@dataclass(frozen=True)
class ModuleInfo:
    """What the patterns may look up (read once from the module, never
    changed): its pools and its functions."""

    pools: dict[str, PoolInfoAttr]
    functions: frozenset[str]
    status_functions: frozenset[str] = frozenset()
    """Functions that return a status their callers check (``tir.returns_status``:
    operators calling a user kernel)."""

    @staticmethod
    def of(module: ModuleOp) -> ModuleInfo:
        pools_attr = module.attributes.get(POOLS)
        pools = {
            p.pool_name.data: p
            for p in (pools_attr.data if isinstance(pools_attr, ArrayAttr) else ())
            if isinstance(p, PoolInfoAttr)
        }
        functions = frozenset(
            op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)
        )
        status = frozenset(
            op.sym_name.data
            for op in module.ops
            if isinstance(op, func.FuncOp) and RETURNS_STATUS in op.attributes
        )
        return ModuleInfo(pools, functions, status)


def pool_arg_type(
    info: ModuleInfo, f: func.FuncOp, pool: str, type_: Attribute
) -> Attribute:
    """The C type of a function's argument holding ``pool``."""
    pool_info = info.pools.get(pool)
    if pool_info is None:
        raise located_error(
            f,
            f"pool argument '{pool}' is not described in the module's {POOLS} "
            f"(known pools: {', '.join(sorted(info.pools)) or 'none'})",
        )
    if not (
        isinstance(type_, MemRefType)
        and type_.get_element_type() == IntegerType(8)
        and len(type_.get_shape()) == 1
    ):
        raise located_error(
            f, f"pool argument '{pool}' must be a memref<Nxi8>, got {type_}"
        )
    if pool_info.kind.data == "constant":
        return CONSTANT_POOL_TYPE
    return WORKSPACE_POOL_TYPE


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


def _c_identifier(name: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return ident if ident and not ident[0].isdigit() else f"_{ident}"


@dataclass(frozen=True)
class GlobalOpLowering(RewritePattern):
    """A constant pool's bytes become ``static const uint8_t pool[N]``; any
    other global a ``static`` C array of its element type."""

    info: ModuleInfo
    state: ConversionState

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GlobalOp, rewriter: PatternRewriter) -> None:
        type_ = op.type
        name = op.sym_name.data
        pool = self.info.pools.get(name)
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
            if initial is not None:
                self._check_float_elements(op, initial)
            alignment = op.alignment.value.data if op.alignment is not None else 0
        const = op.constant is not None
        new = emitc.GlobalOp(
            _c_identifier(name), array, initial, static=True, const=const
        )
        if alignment:
            new.attributes[ALIGNMENT_ATTR] = IntegerAttr(alignment, 64)
        if pool is not None:
            new.attributes[POOL_ATTR] = StringAttr(name)
        new.location = op.location
        rewriter.replace(op, new)

    def _check_float_elements(
        self, op: memref.GlobalOp, value: DenseIntOrFPElementsAttr
    ) -> None:
        """A float array initializer spells infinities and NaNs with
        ``<math.h>``'s ``INFINITY``/``NAN``; a NaN C cannot spell is a
        located error (``usmp.dialects.float_bits``)."""
        element = value.get_element_type()
        if not isinstance(element, AnyFloat):
            return
        size = element.bitwidth // 8
        data = value.data.data
        exponent = exponent_mask(element)
        for start in range(0, len(data), size):
            bits = int.from_bytes(data[start : start + size], "little")
            if bits & exponent != exponent:
                continue
            if (error := c_nan_error(bits, element)) is not None:
                raise located_error(op, error)
            self.state.includes.add("math.h")


def finish_module(
    module: ModuleOp,
    info: ModuleInfo,
    includes: set[str],
    helpers: Collection[str] = (),
) -> None:
    """The includes (the base ones, ``includes`` and those the module had)
    first, sorted, then the definitions of the prelude ``helpers`` the code
    calls (``dsp.preludes``: the DSP helpers after ``<string.h>``, the
    requantisation helpers), each an ``emitc.verbatim``; ``tir.pools``
    replaced by its builtin summary."""
    if not HELPERS.isdisjoint(helpers):
        includes.add("string.h")
    block = module.body.block
    for op in list(block.ops):
        if isinstance(op, emitc.IncludeOp):
            includes.add(op.include.data)
            op.detach()
            op.erase()
    headers: list[Operation] = [
        emitc.IncludeOp(header) for header in sorted({*BASE_INCLUDES, *includes})
    ]
    headers += [emitc.VerbatimOp(text.rstrip("\n")) for text in preludes(helpers)]
    if block.first_op is not None:
        block.insert_ops_before(headers, block.first_op)
    else:
        block.add_ops(headers)
    if POOLS in module.attributes:
        module.attributes[POOLS_ATTR] = pools_summary(info.pools)
        del module.attributes[POOLS]
