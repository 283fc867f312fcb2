"""``usmp-convert-pool-allocations``: turn planned buffers into pool views.

The rewrite step of TVM's USMP (``convert_pool_allocations_to_offsets``). It
only acts on placements already recorded in the IR by ``usmp-plan-memory``:

* every ``tir.allocate`` / ``tir.allocate_const`` / ``tir.allocate_state``
  carrying
  ``pool_allocation = #tir.pool_allocation<"P", N>`` becomes::

      %off = arith.constant N : index
      %v = memref.view %P[%off][] : memref<Sxi8> to memref<...>

  where ``%P`` is the function's argument for pool ``P`` and ``S`` the pool's
  planned size (``size`` in the module's ``tir.pools``); a state is also
  recorded on its function (the entry) in ``tir.states``: one dictionary
  ``{name, pool, offset, value}`` per state, in IR order, from which the
  library's ``tvmgen_<model>_init`` writes the initial values;
* every function that uses a pool, directly or through a function it calls,
  gets one trailing ``memref<Sxi8>`` argument per pool -- workspace pools
  first, then persistent pools, then constant pools, each in ``tir.pools``
  order -- named in its
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

How: the analysis ``usmp_pool_uses`` finds every function's pools (and
raises every input error); then one ``PatternRewriteWalker`` over the module
applies one pattern per source op kind: ``func.func`` gains its pool arguments
(and, on the entry with workspace I/O, loses its I/O arguments to views),
``tir.allocate``/``tir.allocate_const`` become views of the enclosing
function's pool argument, ``tir.call``/``func.call`` pass the pools; the
constant pools' globals are added last.

Idempotence: after the rewrite no planned allocation remains and functions
already carry their pool arguments, so a second run changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i8,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.dialects.tir import (
    INPUT_ALLOCATIONS,
    INPUT_NAMES,
    INPUT_TYPES,
    OUTPUT_ALLOCATIONS,
    OUTPUT_TYPES,
    POOL_ARGS,
    STATES,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    CallOp,
    PoolAllocationAttr,
)
from usmp.lowering.create import create
from usmp.passes.usmp_ir import ModuleOps, string_list
from usmp.passes.usmp_liveness import callee_of
from usmp.passes.usmp_pool_uses import PoolUses, analyze_pool_uses
from usmp.passes.usmp_statement_liveness import in_parallel_loop

__all__ = ["UsmpConvertPoolAllocationsPass", "convert_pool_allocations"]


@dataclass(frozen=True)
class UsmpConvertPoolAllocationsPass(ModulePass):
    """Replace planned allocations with views into pool arguments."""

    name = "usmp-convert-pool-allocations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_pool_allocations(ctx, op)


def convert_pool_allocations(
    ctx: Context, op: ModuleOp, ops: ModuleOps | None = None
) -> None:
    """The pass on ``op``; ``ops``: ``ModuleOps.of(op)`` if the caller has
    it (``usmp``: the one planning used)."""
    ops = ops or ModuleOps.of(op)
    state = _PoolArguments(analyze_pool_uses(ctx, op, ops))
    applier = GreedyRewritePatternApplier(
        [
            _AddPoolArguments(state),
            _ConvertAllocation(state),
            _PassPoolsAtCall(state),
        ],
        dce_enabled=False,
    )
    # the patterns, applied to the ops they can match only (a walker
    # would visit every op of every loop nest); each function before
    # its body, as a walker would (its pool arguments come first)
    for f in list(op.ops):
        if not isinstance(f, func.FuncOp):
            continue
        name = f.sym_name.data
        for target in (f, *ops.definers[name], *ops.calls[name]):
            applier.match_and_rewrite(target, PatternRewriter(target))
    _add_constant_globals(op, state.uses)


def pool_memref(size: int) -> MemRefType:
    return MemRefType(i8, [size])


@dataclass
class _PoolArguments:
    """What the patterns share: the analysis (read-only) and the pool
    arguments of each function, known once its ``func.func`` is rewritten
    (the walker visits a function before its body)."""

    uses: PoolUses
    args: dict[str, dict[str, SSAValue]] = field(
        default_factory=dict[str, dict[str, SSAValue]]
    )

    def of(self, op: Operation) -> dict[str, SSAValue]:
        """The pool arguments of the function enclosing ``op``."""
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, func.FuncOp):
            parent = parent.parent_op()
        assert parent is not None
        return self.args.get(parent.sym_name.data, {})


def view_ops(
    pool_arg: SSAValue, offset: int, type_: MemRefType
) -> tuple[arith.ConstantOp, memref.ViewOp]:
    """The ``arith.constant`` of ``offset`` and the ``memref.view`` of the
    pool at it, detached: the ops ``arith.ConstantOp(IntegerAttr(offset,
    index))`` and ``memref.ViewOp(pool_arg, off, [], type_)`` build, built
    unchecked (``lowering/create``: the IRDL constructors cost ~4 times
    more, one pair per allocation of every function)."""
    index = IndexType()
    off = create(arith.ConstantOp, [], index, value=IntegerAttr(offset, index))
    return off, create(memref.ViewOp, [pool_arg, off.result], type_)


def _view(
    rewriter: PatternRewriter,
    anchor: Operation,
    pool_arg: SSAValue,
    where: PoolAllocationAttr,
    type_: MemRefType,
    point: InsertPoint,
) -> memref.ViewOp:
    """``memref.view`` of the pool at the placement's offset, at ``point``."""
    off, view = view_ops(pool_arg, where.offset.data, type_)
    off.location = view.location = anchor.location
    rewriter.insert(off, point)
    rewriter.insert(view, InsertPoint.after(off))
    return view


@dataclass(frozen=True)
class _AddPoolArguments(RewritePattern):
    """``func.func`` gains one trailing ``memref<Sxi8>`` argument per pool it
    needs; with workspace I/O, the entry's I/O arguments become views."""

    state: _PoolArguments

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter):
        name = op.sym_name.data
        needs = self.state.uses.functions[name]
        if not needs.pools:
            return
        args: dict[str, SSAValue]
        if needs.adds:
            args = _append_pool_arguments(op, needs.pools, self.state.uses, rewriter)
        else:
            first = len(op.args) - len(needs.pools)
            args = {p: op.args[first + k] for k, p in enumerate(needs.pools)}
        self.state.args[name] = args
        if needs.io:
            _io_to_views(op, needs.io, args, rewriter)
        rewriter.notify_op_modified(op)


def _append_pool_arguments(
    f: func.FuncOp, pools: list[str], uses: PoolUses, rewriter: PatternRewriter
) -> dict[str, SSAValue]:
    block = f.body.block
    args: dict[str, SSAValue] = {}
    for pool in pools:
        size = uses.pool(pool).size.data
        arg = rewriter.insert_block_argument(block, len(block.args), pool_memref(size))
        arg.name_hint = pool
        args[pool] = arg
    f.function_type = FunctionType.from_lists(
        [a.type for a in block.args], list(f.function_type.outputs.data)
    )
    if f.arg_attrs is not None:
        f.arg_attrs = ArrayAttr(
            [*f.arg_attrs.data, *(DictionaryAttr({}) for _ in pools)]
        )
    f.attributes[POOL_ARGS] = ArrayAttr(StringAttr(p) for p in pools)
    return args


def _io_to_views(
    f: func.FuncOp,
    io: dict[int, PoolAllocationAttr],
    pool_args: dict[str, SSAValue],
    rewriter: PatternRewriter,
) -> None:
    """Workspace I/O: the entry's input/output arguments become views of
    their pools (at the top of the body), recorded in its attributes."""
    n_inputs = len(string_list(f.attributes.get(INPUT_NAMES)))
    n_io = len(io)
    block = f.body.block
    point = InsertPoint.at_start(block)
    io_args = list(f.args[:n_io])
    for i, arg in enumerate(io_args):
        type_ = arg.type
        assert isinstance(type_, MemRefType)
        view = _view(rewriter, f, pool_args[io[i].pool_name.data], io[i], type_, point)  # pyright: ignore
        view.result.name_hint = arg.name_hint
        rewriter.replace_all_uses_with(arg, view.result)
        point = InsertPoint.after(view)
    io_types = [a.type for a in io_args]
    for arg in io_args:
        rewriter.erase_block_argument(arg)
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


@dataclass(frozen=True)
class _ConvertAllocation(RewritePattern):
    """``tir.allocate``/``tir.allocate_const`` -> ``memref.view`` of the pool
    argument at the planned offset (the constant's bytes are in the pool's
    global)."""

    state: _PoolArguments

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: AllocateOp | AllocateConstOp | AllocateStateOp,
        rewriter: PatternRewriter,
    ):
        where = op.pool_allocation
        if where is None and isinstance(op, AllocateOp) and in_parallel_loop(op):
            return  # per-thread (inside a parallel loop): not planned
        assert where is not None
        type_ = op.result.type
        assert isinstance(type_, MemRefType)
        pool_arg = self.state.of(op)[where.pool_name.data]
        view = _view(rewriter, op, pool_arg, where, type_, InsertPoint.before(op))  # pyright: ignore
        view.result.name_hint = op.name_hint.data
        if isinstance(op, AllocateStateOp):
            _record_state(op, where)  # pyright: ignore[reportArgumentType]
        rewriter.replace_all_uses_with(op.result, view.result)
        rewriter.erase(op)


def _record_state(op: AllocateStateOp, where: PoolAllocationAttr) -> None:
    """Append the state's placement and initial value to its function's
    ``tir.states``."""
    f = op.parent_op()
    while f is not None and not isinstance(f, func.FuncOp):
        f = f.parent_op()
    assert f is not None
    entry = DictionaryAttr(
        {
            "name": op.name_hint,
            "pool": where.pool_name,
            "offset": IntegerAttr(where.offset.data, IndexType()),
            "value": op.value,
        }
    )
    old = f.attributes.get(STATES)
    states = list(old.data) if isinstance(old, ArrayAttr) else []  # pyright: ignore
    f.attributes[STATES] = ArrayAttr([*states, entry])


@dataclass(frozen=True)
class _PassPoolsAtCall(RewritePattern):
    """``tir.call``/``func.call`` of a function taking pools passes the
    caller's pool arguments (unless it already does)."""

    state: _PoolArguments

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CallOp | func.CallOp, rewriter: PatternRewriter):
        callee = self.state.uses.functions.get(callee_of(op) or "")
        if callee is None or not callee.pools or len(op.operands) == callee.params:
            return
        mine = self.state.of(op)
        op.operands = [*op.operands, *(mine[p] for p in callee.pools)]
        rewriter.notify_op_modified(op)


def _add_constant_globals(module: ModuleOp, uses: PoolUses) -> None:
    """One ``memref.global constant`` per constant pool, with its bytes, at
    the top of the module."""
    first = module.body.block.first_op
    for pool in uses.pools:
        name = pool.pool_name.data
        if name not in uses.constant_data:
            continue
        data = bytes(uses.constant_data[name])
        glob = memref.GlobalOp.get(
            StringAttr(name),
            pool_memref(len(data)),
            DenseIntOrFPElementsAttr(TensorType(i8, [len(data)]), BytesAttr(data)),
            constant=UnitAttr(),
            alignment=pool.alignment.data,
        )
        if first is None:
            module.body.block.add_op(glob)
        else:
            Rewriter.insert_op(glob, InsertPoint.before(first))
