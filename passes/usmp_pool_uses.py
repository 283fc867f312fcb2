"""Which pools each function takes, for ``usmp-convert-pool-allocations``.

The analysis of that pass (it never mutates IR): for every function, the
pools its planned allocations (and, on the entry, its workspace I/O) are
placed in, closed over calls (a function takes the pools of every function it
calls), in argument order (workspace pools, then constant pools, each in
``tir.pools`` order); whether the pass adds them or the function already
takes them (``tir.pool_args``); and the bytes of each constant pool. Every
input error of the pass (a buffer without placement, past its pool's end, in
an unknown pool, a constant whose bytes do not match its type, partial
workspace I/O, a symbol clash with a constant pool) is raised here, as a
located diagnostic, before anything is rewritten.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Operation

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    IO_POOL_ALLOCATION,
    MAIN_FUNC,
    POOL_ARGS,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    PoolAllocationAttr,
    PoolInfoAttr,
)
from usmp.passes.usmp_ir import ModuleOps, byte_size
from usmp.passes.usmp_liveness import callee_of
from usmp.passes.usmp_pools import module_pools, ordered_for_arguments
from usmp.passes.usmp_statement_liveness import in_parallel_loop


@dataclass
class FunctionPools:
    """The pool arguments of one function once the pass has run."""

    pools: list[str] = field(default_factory=list[str])
    """Pool names, in argument order (the trailing arguments)."""
    adds: bool = False
    """Whether the pass appends them (else the function already takes them)."""
    params: int = 0
    """The function's parameter count with its pool arguments."""
    io: dict[int, PoolAllocationAttr] = field(
        default_factory=dict[int, PoolAllocationAttr]
    )
    """Entry arguments placed in a workspace pool (workspace I/O), by index."""


@dataclass
class PoolUses:
    pools: list[PoolInfoAttr]
    """The module's pools (``tir.pools``), in order."""
    functions: dict[str, FunctionPools]
    """Every ``func.func`` by symbol."""
    constant_data: dict[str, bytearray]
    """The packed bytes of each constant pool holding constants."""

    def pool(self, name: str) -> PoolInfoAttr:
        return next(p for p in self.pools if p.pool_name.data == name)


def analyze_pool_uses(
    ctx: Context, module: ModuleOp, ops: ModuleOps | None = None
) -> PoolUses:
    """The pools of every function of ``module`` (see the module doc;
    ``ops``: ``ModuleOps.of(module)`` if the caller has it)."""
    return _Analysis(ctx, module, ops or ModuleOps.of(module)).run()


class _Analysis:
    def __init__(self, ctx: Context, module: ModuleOp, ops: ModuleOps):
        self.ctx = ctx
        self.module = module
        self.ops = ops
        self.pools = module_pools(module)
        self.pool_by_name = {p.pool_name.data: p for p in self.pools}
        self.functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }
        self.constant_data: dict[str, bytearray] = {}

    def run(self) -> PoolUses:
        direct: dict[str, set[str]] = {}
        callers: dict[str, set[str]] = {n: set() for n in self.functions}
        constants: list[AllocateConstOp] = []
        result: dict[str, FunctionPools] = {}
        for name, f in self.functions.items():
            used: set[str] = set()
            for op in self.ops.definers[name]:
                if isinstance(op, AllocateOp) and in_parallel_loop(op):
                    continue  # per-thread, left to the code generator
                if isinstance(op, AllocateOp | AllocateConstOp | AllocateStateOp):
                    used.add(self.check_allocation(op))
                    if isinstance(op, AllocateConstOp):
                        constants.append(op)
            for op in self.ops.calls[name]:
                if (callee := callee_of(op)) is not None and callee in callers:
                    callers[callee].add(name)
            io = _io_allocations(f)
            for i, where in io.items():
                arg_type = f.args[i].type
                assert isinstance(arg_type, MemRefType)
                used.add(self.check_fits(f, where, arg_type, f"argument #{i}"))
            direct[name] = used
            result[name] = FunctionPools(io=io)
        needs = _close_over_calls(direct, callers)
        for name, f in self.functions.items():
            self.argument_order(f, needs[name], result[name])
        for op in constants:
            self.pack(op)
        for name, f in self.functions.items():
            if result[name].io:
                _check_io(f, result[name])
        self.check_globals()
        return PoolUses(self.pools, result, self.constant_data)

    def check_allocation(
        self, op: AllocateOp | AllocateConstOp | AllocateStateOp
    ) -> str:
        if op.pool_allocation is None:
            what = {AllocateConstOp: "constant", AllocateStateOp: "state"}.get(
                type(op), "buffer"
            )
            raise located_error(
                op,
                f"{what} '{op.name_hint.data}' has no pool_allocation; run "
                "usmp-plan-memory (or the usmp pipeline) first",
            )
        type_ = op.result.type
        assert isinstance(type_, MemRefType)
        what = f"buffer '{op.name_hint.data}'"
        return self.check_fits(op, op.pool_allocation, type_, what)  # pyright: ignore

    def check_fits(
        self,
        anchor: Operation,
        where: PoolAllocationAttr,
        type_: MemRefType,
        what: str,
    ) -> str:
        """The pool's name, once the buffer is known to fit in it."""
        pool = self.pool_by_name.get(where.pool_name.data)
        if pool is None:
            raise located_error(
                anchor,
                f"{what} is placed in pool '{where.pool_name.data}', which is not in "
                f"the module's tir.pools ({', '.join(self.pool_by_name) or 'none'})",
            )
        end = where.offset.data + byte_size(type_, anchor, what)
        if end > pool.size.data:
            raise located_error(
                anchor,
                f"{what} at offset {where.offset.data} ends at {end} B, past the end "
                f"of pool '{pool.pool_name.data}' ({pool.size.data} B); the pool sizes "
                "in tir.pools must be the planned ones (run usmp-plan-memory)",
            )
        return pool.pool_name.data

    def argument_order(
        self, f: func.FuncOp, needed: set[str], result: FunctionPools
    ) -> None:
        result.params = len(f.function_type.inputs.data)
        if not needed:
            return
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
            result.pools = names
            return
        if not f.body.blocks:
            raise located_error(
                f, f"external function '{f.sym_name.data}' cannot receive pools"
            )
        result.pools, result.adds = order, True
        result.params += len(order)

    def pack(self, op: AllocateConstOp) -> None:
        where = op.pool_allocation
        assert where is not None
        pool = where.pool_name.data
        data = constant_bytes(self.ctx, op)
        blob = self.constant_data.get(pool)
        if blob is None:  # (not ``setdefault``: a pool-sized zeroed default per call)
            blob = self.constant_data[pool] = bytearray(
                self.pool_by_name[pool].size.data
            )
        blob[where.offset.data : where.offset.data + len(data)] = data

    def check_globals(self) -> None:
        taken = {
            sym.data: op
            for op in self.module.ops
            if isinstance(sym := op.properties.get("sym_name"), StringAttr)
        }
        for pool in self.pools:
            name = pool.pool_name.data
            if name in self.constant_data and name in taken:
                raise located_error(
                    taken[name],
                    f"constant pool '{name}': the module already defines a symbol "
                    f"@{name}; rename the pool",
                )


def _io_allocations(f: func.FuncOp) -> dict[int, PoolAllocationAttr]:
    if MAIN_FUNC not in f.attributes or f.arg_attrs is None:
        return {}
    return {
        i: a
        for i, d in enumerate(f.arg_attrs.data)
        if isinstance(a := d.data.get(IO_POOL_ALLOCATION), PoolAllocationAttr)
    }


def _check_io(f: func.FuncOp, result: FunctionPools) -> None:
    n_io = len(f.args) - (0 if result.adds else len(result.pools))
    if sorted(result.io) != list(range(n_io)):
        raise located_error(
            f,
            "entry function: either every input/output argument or none carries "
            f"{IO_POOL_ALLOCATION}; found it on arguments "
            f"{', '.join(map(str, sorted(result.io)))} of {n_io}",
        )


def _close_over_calls(
    direct: dict[str, set[str]], callers: dict[str, set[str]]
) -> dict[str, set[str]]:
    """Pools each function needs: its own and those of every function it
    (transitively) calls."""
    needs = {n: set(d) for n, d in direct.items()}
    worklist = [n for n, d in needs.items() if d]
    while worklist:
        callee = worklist.pop()
        for caller in callers[callee]:
            if not needs[callee] <= needs[caller]:
                needs[caller] |= needs[callee]
                worklist.append(caller)
    return needs


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
    else:
        if sys.byteorder != "little":
            raise located_error(op, "usmp packs constants on little-endian hosts only")
        data = value.data.data  # the attribute's packed, host-order bytes
        if isinstance(element, IntegerType) and element.width.data == 1:
            data = (np.frombuffer(data, np.uint8) != 0).astype(np.uint8).tobytes()
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
