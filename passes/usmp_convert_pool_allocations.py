"""``usmp-convert-pool-allocations``: turn planned buffers into pool views.

The rewrite step of TVM's USMP (``convert_pool_allocations_to_offsets``). It
only acts on placements already recorded in the IR by ``usmp-plan-memory``:

* every ``tir.allocate`` / ``tir.allocate_const`` carrying
  ``pool_allocation = #tir.pool_allocation<"P", N>`` becomes::

      %off = arith.constant N : index
      %v = memref.view %P[%off][] : memref<Sxi8> to memref<...>

  where ``%P`` is the function's argument for pool ``P`` and ``S`` the pool's
  planned size (``size`` in the module's ``tir.pools``);
* every function that uses a pool, directly or through a function it calls,
  gets one trailing ``memref<Sxi8>`` argument per pool -- workspace pools
  first, then constant pools, each in ``tir.pools`` order -- named in its
  ``tir.pool_args`` attribute, and every ``tir.call``/``func.call`` of such a
  function passes the caller's pool arguments through;
* the bytes of the constants of each constant pool are packed (little endian,
  at their offsets, zero padding between) into
  ``memref.global "private" constant @P : memref<Sxi8> = dense<...>`` with the
  pool's alignment; the entry function receives the pool as an argument like
  any other pool, the C emitter defines the global as its const data;
* with workspace I/O (inputs/outputs of the entry function carrying the
  argument attribute ``tir.pool_allocation``), those arguments are removed and
  replaced by views; the entry function records where they are in
  ``tir.input_allocations``/``tir.output_allocations`` (``#tir.pool_allocation``
  per input/output, in ``tir.input_names``/``tir.output_names`` order) and
  their types in ``tir.input_types``/``tir.output_types``.

Dynamically sized buffers (``memref.alloc``) are not touched. A static
allocation without a placement is a located error (run ``usmp-plan-memory``).

Idempotence: after the rewrite no planned allocation remains and functions
already carry their pool arguments, so a second run changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i8,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    INPUT_ALLOCATIONS,
    INPUT_NAMES,
    INPUT_TYPES,
    IO_POOL_ALLOCATION,
    MAIN_FUNC,
    OUTPUT_ALLOCATIONS,
    OUTPUT_TYPES,
    POOL_ARGS,
    AllocateConstOp,
    AllocateOp,
    PoolAllocationAttr,
    PoolInfoAttr,
)
from usmp.passes.usmp_ir import (
    byte_size,
    string_list,
)
from usmp.passes.usmp_liveness import callee_of
from usmp.passes.usmp_pools import module_pools, ordered_for_arguments

__all__ = ["UsmpConvertPoolAllocationsPass"]


@dataclass(frozen=True)
class UsmpConvertPoolAllocationsPass(ModulePass):
    """Replace planned allocations with views into pool arguments."""

    name = "usmp-convert-pool-allocations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _Converter(ctx, op).run()


def pool_memref(size: int) -> MemRefType:
    return MemRefType(i8, [size])


class _Converter:
    def __init__(self, ctx: Context, module: ModuleOp):
        self.ctx = ctx
        self.module = module
        self.pools = module_pools(module)
        self.pool_by_name = {p.pool_name.data: p for p in self.pools}
        self.functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }
        self.constant_data: dict[str, bytearray] = {}

    # -- what each function needs ------------------------------------------------

    def planned(self, f: func.FuncOp) -> list[AllocateOp | AllocateConstOp]:
        found: list[AllocateOp | AllocateConstOp] = []
        for op in f.walk():
            if isinstance(op, (AllocateOp, AllocateConstOp)):
                if op.pool_allocation is None:
                    what = "constant" if isinstance(op, AllocateConstOp) else "buffer"
                    raise located_error(
                        op,
                        f"{what} '{op.name_hint.data}' has no pool_allocation; run "
                        "usmp-plan-memory (or the usmp pipeline) first",
                    )
                found.append(op)
        return found

    def io_allocations(self, f: func.FuncOp) -> dict[int, PoolAllocationAttr]:
        if MAIN_FUNC not in f.attributes or f.arg_attrs is None:
            return {}
        return {
            i: a
            for i, d in enumerate(f.arg_attrs.data)
            if isinstance(a := d.data.get(IO_POOL_ALLOCATION), PoolAllocationAttr)
        }

    def pool(
        self, anchor: Operation, where: PoolAllocationAttr, what: str
    ) -> PoolInfoAttr:
        pool = self.pool_by_name.get(where.pool_name.data)
        if pool is None:
            raise located_error(
                anchor,
                f"{what} is placed in pool '{where.pool_name.data}', which is not in "
                f"the module's tir.pools ({', '.join(self.pool_by_name) or 'none'})",
            )
        return pool

    def check_fits(
        self, anchor: Operation, where: PoolAllocationAttr, type_: MemRefType, what: str
    ) -> PoolInfoAttr:
        pool = self.pool(anchor, where, what)
        end = where.offset.data + byte_size(type_, anchor, what)
        if end > pool.size.data:
            raise located_error(
                anchor,
                f"{what} at offset {where.offset.data} ends at {end} B, past the end "
                f"of pool '{pool.pool_name.data}' ({pool.size.data} B); the pool sizes "
                "in tir.pools must be the planned ones (run usmp-plan-memory)",
            )
        return pool

    def run(self) -> None:
        direct: dict[str, set[str]] = {}
        allocations: dict[str, list[AllocateOp | AllocateConstOp]] = {}
        io: dict[str, dict[int, PoolAllocationAttr]] = {}
        for name, f in self.functions.items():
            ops = self.planned(f)
            io_f = self.io_allocations(f)
            used: set[str] = set()
            for op in ops:
                what = f"buffer '{op.name_hint.data}'"
                assert op.pool_allocation is not None
                pool = self.check_fits(op, op.pool_allocation, op.result.type, what)  # pyright: ignore
                used.add(pool.pool_name.data)
            for i, where in io_f.items():
                arg_type = f.args[i].type
                assert isinstance(arg_type, MemRefType)
                pool = self.check_fits(f, where, arg_type, f"argument #{i}")  # pyright: ignore
                used.add(pool.pool_name.data)
            direct[name], allocations[name], io[name] = used, ops, io_f
        needs = self.propagate(direct)
        pool_args: dict[str, dict[str, BlockArgument]] = {}
        for name, f in self.functions.items():
            if needs[name]:
                pool_args[name] = self.add_pool_args(f, needs[name])
        for name, f in self.functions.items():
            self.pass_pools_at_calls(f, pool_args)
            for op in allocations[name]:
                self.replace_allocation(op, pool_args[name])
            if io[name]:
                self.replace_io(f, io[name], pool_args[name])
        self.emit_constant_globals()

    def propagate(self, direct: dict[str, set[str]]) -> dict[str, set[str]]:
        """Pools each function needs: its own and those of every function it
        (transitively) calls."""
        callers: dict[str, set[str]] = {n: set() for n in self.functions}
        for name, f in self.functions.items():
            for op in f.walk():
                callee = callee_of(op)
                if callee is not None and callee in callers:
                    callers[callee].add(name)
        needs = {n: set(d) for n, d in direct.items()}
        worklist = [n for n, d in needs.items() if d]
        while worklist:
            callee = worklist.pop()
            for caller in callers[callee]:
                if not needs[callee] <= needs[caller]:
                    needs[caller] |= needs[callee]
                    worklist.append(caller)
        return needs

    # -- rewriting ---------------------------------------------------------------

    def add_pool_args(
        self, f: func.FuncOp, needed: set[str]
    ) -> dict[str, BlockArgument]:
        order = ordered_for_arguments(self.pools, needed)
        existing = f.attributes.get(POOL_ARGS)
        if isinstance(existing, ArrayAttr):
            names = [a.data for a in existing if isinstance(a, StringAttr)]  # pyright: ignore
            missing = [p for p in order if p not in names]
            if missing:
                raise located_error(
                    f,
                    f"function '{f.sym_name.data}' already takes pools "
                    f"{', '.join(names)} but now also needs {', '.join(missing)}; "
                    "plan all allocations before usmp-convert-pool-allocations",
                )
            first = len(f.args) - len(names)
            return {n: f.args[first + k] for k, n in enumerate(names)}
        if not f.body.blocks:
            raise located_error(
                f, f"external function '{f.sym_name.data}' cannot receive pools"
            )
        block = f.body.block
        args: dict[str, BlockArgument] = {}
        for pool in order:
            size = self.pool_by_name[pool].size.data
            args[pool] = block.insert_arg(
                pool_memref(size), len(block.args), f.location
            )
            args[pool].name_hint = pool
        f.function_type = FunctionType.from_lists(
            [a.type for a in block.args], list(f.function_type.outputs.data)
        )
        if f.arg_attrs is not None:
            f.arg_attrs = ArrayAttr(
                [*f.arg_attrs.data, *(DictionaryAttr({}) for _ in order)]
            )
        f.attributes[POOL_ARGS] = ArrayAttr(StringAttr(p) for p in order)
        return args

    def pass_pools_at_calls(
        self, f: func.FuncOp, pool_args: dict[str, dict[str, BlockArgument]]
    ) -> None:
        for op in list(f.walk()):
            callee = callee_of(op)
            if callee is None or callee not in pool_args:
                continue
            wanted = list(pool_args[callee])
            callee_f = self.functions[callee]
            n_params = len(callee_f.function_type.inputs.data)
            if len(op.operands) == n_params:
                continue  # already passes the pools
            mine = pool_args.get(f.sym_name.data, {})
            op.operands = [*op.operands, *(mine[p] for p in wanted)]

    def view(
        self,
        anchor: Operation,
        pool_arg: SSAValue,
        offset: int,
        type_: MemRefType,
        point: InsertPoint,
        name: str | None,
    ) -> SSAValue:
        off = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        view = memref.ViewOp(pool_arg, off, [], type_)
        off.location = view.location = anchor.location
        view.result.name_hint = name
        Rewriter.insert_op([off, view], point)
        return view.result

    def replace_allocation(
        self, op: AllocateOp | AllocateConstOp, pool_args: dict[str, BlockArgument]
    ) -> None:
        where = op.pool_allocation
        assert where is not None
        pool = where.pool_name.data
        type_ = op.result.type
        assert isinstance(type_, MemRefType)
        if isinstance(op, AllocateConstOp):
            data = constant_bytes(self.ctx, op)
            blob = self.constant_data.setdefault(
                pool, bytearray(self.pool_by_name[pool].size.data)
            )
            blob[where.offset.data : where.offset.data + len(data)] = data
        new = self.view(
            op,
            pool_args[pool],
            where.offset.data,
            type_,  # pyright: ignore
            InsertPoint.before(op),
            op.name_hint.data,
        )
        op.result.replace_all_uses_with(new)
        Rewriter.erase_op(op)

    def replace_io(
        self,
        f: func.FuncOp,
        io: dict[int, PoolAllocationAttr],
        pool_args: dict[str, BlockArgument],
    ) -> None:
        n_inputs = len(string_list(f.attributes.get(INPUT_NAMES)))
        n_io = len(f.args) - len(pool_args)
        if sorted(io) != list(range(n_io)):
            raise located_error(
                f,
                "entry function: either every input/output argument or none carries "
                f"{IO_POOL_ALLOCATION}; found it on arguments "
                f"{', '.join(map(str, sorted(io)))} of {n_io}",
            )
        block = f.body.block
        point = InsertPoint.at_start(block)
        kept = list(f.args)
        for i in range(n_io):
            arg = f.args[i]
            type_ = arg.type
            assert isinstance(type_, MemRefType)
            new = self.view(
                f,
                pool_args[io[i].pool_name.data],
                io[i].offset.data,
                type_,
                point,
                arg.name_hint,  # pyright: ignore
            )
            arg.replace_all_uses_with(new)
            point = InsertPoint.after(new.owner)  # pyright: ignore
        io_types = [a.type for a in kept[:n_io]]
        for arg in kept[:n_io]:
            block.erase_arg(arg)
        f.function_type = FunctionType.from_lists(
            [a.type for a in block.args], list(f.function_type.outputs.data)
        )
        if f.arg_attrs is not None:
            f.arg_attrs = ArrayAttr(f.arg_attrs.data[n_io:])
        allocations = [io[i] for i in range(n_io)]
        f.attributes[INPUT_ALLOCATIONS] = ArrayAttr(allocations[:n_inputs])
        f.attributes[OUTPUT_ALLOCATIONS] = ArrayAttr(allocations[n_inputs:])
        f.attributes[INPUT_TYPES] = ArrayAttr(io_types[:n_inputs])
        f.attributes[OUTPUT_TYPES] = ArrayAttr(io_types[n_inputs:])

    def emit_constant_globals(self) -> None:
        if not self.constant_data:
            return
        taken = {
            sym.data: op
            for op in self.module.ops
            if isinstance(sym := op.properties.get("sym_name"), StringAttr)
        }
        first = self.module.body.block.first_op
        for pool in self.pools:
            name = pool.pool_name.data
            if name not in self.constant_data:
                continue
            if name in taken:
                raise located_error(
                    taken[name],
                    f"constant pool '{name}': the module already defines a symbol "
                    f"@{name}; rename the pool",
                )
            data = bytes(self.constant_data[name])
            glob = memref.GlobalOp.get(
                StringAttr(name),
                pool_memref(len(data)),
                DenseIntOrFPElementsAttr(TensorType(i8, [len(data)]), BytesAttr(data)),
                constant=UnitAttr(),
                alignment=pool.alignment.data,
            )
            if first is None:
                self.module.body.block.add_op(glob)
            else:
                Rewriter.insert_op(glob, InsertPoint.before(first))


def constant_bytes(ctx: Context, op: AllocateConstOp) -> bytes:
    """The bytes of ``op``'s value as they lie in memory (little endian,
    row-major; ``i1`` as one byte 0/1)."""
    value = op.value
    type_ = op.result.type
    assert isinstance(type_, MemRefType)
    size = byte_size(type_, op, f"constant '{op.name_hint.data}'")  # pyright: ignore
    element = type_.get_element_type()  # pyright: ignore
    if isinstance(value, DenseResourceAttr):
        data = _resource_bytes(ctx, op, value)
    elif isinstance(element, IntegerType):
        width = element.size
        mask = (1 << (8 * width)) - 1
        values: Sequence[int] = value.get_values()  # pyright: ignore
        if element.width.data == 1:
            data = bytes(1 if v else 0 for v in values)
        else:
            data = b"".join((v & mask).to_bytes(width, "little") for v in values)
    else:
        if sys.byteorder != "little":
            raise located_error(
                op, "usmp packs floating-point constants on little-endian hosts only"
            )
        data = value.data.data
    count = 1
    for d in type_.get_shape():  # pyright: ignore
        count *= d
    if len(data) * count == size and count > 1:  # a splat stored once
        data = data * count
    if len(data) != size:
        raise located_error(
            op,
            f"constant '{op.name_hint.data}': its value has {len(data)} bytes, "
            f"its type {type_} needs {size}",
        )
    return data


def _resource_bytes(
    ctx: Context, op: AllocateConstOp, value: DenseResourceAttr
) -> bytes:
    key = value.resource_handle.data
    builtin = ctx.get_optional_dialect("builtin")
    interface = builtin.get_interface(OpAsmDialectInterface) if builtin else None
    blob = interface.lookup(key) if interface else None
    if not blob:
        raise located_error(
            op,
            f"constant '{op.name_hint.data}': dense_resource '{key}' has no data in "
            "the module's dialect_resources",
        )
    raw = bytes.fromhex(blob[2:])
    return raw[4:]  # MLIR blobs start with their alignment (4 bytes)
