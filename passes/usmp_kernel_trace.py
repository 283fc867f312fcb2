"""Access order of an operator's loop nest, per byte of its buffer arguments.

Not a pass. ``trace_kernel(f, args)`` evaluates the index arithmetic of a
lowered prim func (``scf.for``/``scf.if`` loop nests over ``memref.load`` /
``memref.store``, as ``lower-ops`` writes them) for every iteration at once,
vectorised with numpy: each SSA index value is an array over the iteration
space of the loops around it, each loop adds one dimension, ``scf.if``
splits the iterations by its condition. Data (loaded values, floats,
``iter_args``) is not evaluated; an address that depends on data is
*unknown*.

Time is the position of an op in the sequential execution, numbered densely
as if every loop ran its largest trip count: an op's time is the sum, over
the blocks around it, of the spans of the ops before it in its block, plus
``k * span(body)`` for iteration ``k`` of each enclosing loop. Loads before a
store in one iteration are earlier than the store.

For each argument asked for, the result gives per *byte*: the time of its
last read (``-1`` if never read) and of its first write (``NEVER`` if never
written). Unknown addresses count conservatively: a read at an unknown
address reads every byte, a write writes every byte. ``scf.if`` with an
unknown condition runs both branches (again conservative for both).

An argument the tracer cannot follow (passed to a call, used by an op it
does not model, a view it cannot map, a non-identity layout) is left out of
the result; a kernel it cannot evaluate at all (an unknown region op, a loop
with unknown bounds around accesses, more than ``budget`` iterations) gives
``None``. Callers treat a missing argument as "no overlap allowed".

``trace_light`` (the replay's) scatters the accesses at known addresses in C
where a compiler is (``usmp_trace_native``: every iteration still visited,
the accesses of one loop nest in one call, no grid of times or addresses
built); the numpy path here (``_event_times``, ``_in_buffer``, ``ufunc.at``)
is its fallback and its reference (``light_result(native=False)``; tests
compare the two bit for bit). ``trace_all`` and ``trace_kernel`` use numpy.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FixedBitwidthType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Block, Operation, SSAValue

from usmp.dialects import tir
from usmp.dialects.tir_custom import CustomCallOp
from usmp.lowering.walk import block_ops, walk_ops
from usmp.passes.usmp_kernel_symbolic import (
    KernelSummary,
    mirrored,
    row_major,
    summarize,
)
from usmp.passes.usmp_trace_native import FIRST, LAST, MARK, Access, scatter
from usmp.passes.usmp_trace_native import load as _native

NEVER = np.iinfo(np.int64).max
"""First-write time of a byte that is never written."""

Array = npt.NDArray[np.int64]
Value = npt.NDArray[np.generic] | None


@dataclass(frozen=True)
class ByteTimes:
    """Per byte of one argument: last read time and first write time (and,
    from ``trace_all``, the first read and last write)."""

    last_read: Array
    first_write: Array
    first_read: Array | None = None
    """``NEVER`` if never read."""
    last_write: Array | None = None
    """``-1`` if never written."""


@dataclass(frozen=True)
class ByteSets:
    """``trace_light``: per byte of one buffer, which bytes the kernel reads
    and writes, with times only where the replay compares them.

    ``mode`` ``r``: only read; ``last_read`` per byte (-1: not read) if the
    buffer was asked for exactly, else ``read`` (which bytes). ``w``: only
    written; ``first_write`` (``never``: not written) if asked for, else
    ``written``. ``rw``: both; ``first_read`` and ``first_write`` (``never``:
    not read / not written). The times are ``np.int32`` where every time of
    the kernel fits (``_time_dtype``), ``never`` then that type's largest
    value, else ``np.int64`` and ``NEVER``."""

    mode: str
    last_read: Array | None = None
    first_read: Array | None = None
    first_write: Array | None = None
    read: npt.NDArray[np.bool_] | None = None
    written: npt.NDArray[np.bool_] | None = None
    never: int = NEVER
    _used: npt.NDArray[np.bool_] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def size(self) -> int:
        arrays = (self.last_read, self.first_read, self.first_write)
        return next(a.size for a in (*arrays, self.read, self.written) if a is not None)

    def used(self) -> npt.NDArray[np.bool_]:
        """The bytes read or written (computed once: ``trace_light`` and
        the replay's records both ask; not to be modified)."""
        if self._used is None:
            object.__setattr__(self, "_used", self._touched())
        assert self._used is not None
        return self._used

    def _touched(self) -> npt.NDArray[np.bool_]:
        if self.mode == "rw":
            assert self.first_read is not None and self.first_write is not None
            return (self.first_read != self.never) | (self.first_write != self.never)
        if self.read is not None:
            return self.read
        if self.written is not None:
            return self.written
        if self.last_read is not None:
            return self.last_read >= 0
        assert self.first_write is not None
        return self.first_write != self.never


@dataclass(frozen=True)
class PoolView:
    """A ``memref.view`` of a byte-array argument (a pool) inside a kernel:
    a buffer of its own at ``shift`` bytes into argument ``arg``."""

    op: Operation
    arg: int
    shift: int
    size: int


class _Unsupported(Exception):
    pass


@dataclass
class _View:
    arg: int
    offset: int
    strides: tuple[int, ...]
    element: int
    """Element bytes."""


@dataclass(frozen=True)
class _Address:
    """Element index ``offset + sum(index * stride)``, each index an array
    over the enclosing loops (broadcasting to the event's shape); summed
    only where the iterations that run are known (a chunk, a box, the
    border a condition selects)."""

    offset: int
    terms: tuple[tuple[Array, int], ...]

    def bounds(self, box: tuple[slice, ...] = ()) -> tuple[int, int]:
        """A lower and an upper bound of the indices in ``box`` (empty:
        everywhere), from each term's extremes there."""
        lo = hi = self.offset
        for t, s in self.terms:
            t = _in_box(t, box)
            a, b = int(t.min()) * s, int(t.max()) * s
            lo, hi = lo + min(a, b), hi + max(a, b)
        return lo, hi

    def varies(self, axis: int) -> bool:
        return any(t.shape[axis] > 1 for t, _ in self.terms)

    def rows(self, axis: int | None, lo: int, hi: int) -> _Address:
        """Restricted to ``lo:hi`` along ``axis`` (``_rows``)."""
        if axis is None:
            return self
        terms = tuple((cast(Array, _rows(t, axis, lo, hi)), s) for t, s in self.terms)
        return _Address(self.offset, terms)

    def within(self, box: tuple[slice, ...], order: tuple[int, ...]) -> Array:
        """The indices in ``box`` (empty: everywhere), broadcasting to it
        with its axes in ``order`` (``_inner_last``)."""
        out: Array = np.array(self.offset, np.int64)
        for t, s in self.terms:
            # laid out in C order: the transposed terms would otherwise give
            # their strides to the sum, which the caller's flattening then
            # copies (a pass and an allocation the size of the event)
            out = np.add(out, _in_box(t, box).transpose(order) * s, order="C")
        return out

    def at(self, index: Index, grid: tuple[int, ...]) -> Array:
        """The indices at ``index`` (``_running``), flat over ``grid``."""
        out: Array = np.array(self.offset, np.int64)
        for t, s in self.terms:
            at = tuple(i if n > 1 else 0 for i, n in zip(index, t.shape, strict=True))
            out = out + t[at] * s
        return np.broadcast_to(out, grid).reshape(-1)


@dataclass
class _Event:
    arg: int
    write: bool
    addresses: _Address | None
    """Element indices (None: unknown address)."""
    mask: npt.NDArray[np.bool_]
    """Which iterations run it, broadcasting to ``shape``."""
    shape: tuple[int, ...]
    """Per enclosing loop, its trip count if the address or the condition
    varies with it, else 1: a *free* loop runs every iteration for every
    address, so its first and last iterations give an address's first and
    last time (nothing is enumerated along it)."""
    chain: list[tuple[Operation, str, int | None]]
    """(op, "for"/"then"/"else"/"leaf", the loop's axis in ``shape``)."""
    repeats: int = 1
    """Product of the free loops' trip counts (accesses per address)."""


_CHUNK = 1 << 18
"""Iterations of one event handled at once (bounds the memory a trace takes
whatever the loop nest's size)."""


_CMP = {
    0: np.equal,
    1: np.not_equal,
    2: np.less,
    3: np.less_equal,
    4: np.greater,
    5: np.greater_equal,
    6: np.less,
    7: np.less_equal,
    8: np.greater,
    9: np.greater_equal,
}


_Group = tuple[tuple[int, ...], npt.NDArray[np.bool_], list[_Event], list[Access]]
"""``light_result``'s accesses scattered in one C call: the time step per
axis, the mask, the events, their accesses (``usmp_trace_native.scatter``)."""


class _Tracer:
    def __init__(
        self,
        f: func.FuncOp,
        interest: Collection[int],
        budget: int,
        reverse: bool = False,
        full: bool = False,
    ):
        self.budget = budget
        self.reverse = reverse
        self.full = full
        """Also first reads and last writes, and views of byte arguments
        (``PoolView``) traced as buffers of their own."""
        self.pool_views: dict[int, PoolView] = {}
        self.elements: dict[int, int] = {}
        """Element bytes of each traced buffer."""
        self.env: dict[SSAValue, Value] = {}
        self.views: dict[SSAValue, _View] = {}
        self.failed: set[int] = set()
        self.events: list[_Event] = []
        self.trips: dict[Operation, int] = {}
        self.shape: list[int] = []
        self.chain: list[tuple[Operation, str, Array | None]] = []
        self.sizes: dict[int, int] = {}
        self.write_counts: dict[int, Array] = {}
        for i, arg in enumerate(f.args):
            if i not in interest:
                continue
            t = arg.type
            if (
                not isinstance(t, MemRefType)
                or not isinstance(t.layout, NoneAttr)
                or not isinstance(t.get_element_type(), FixedBitwidthType)
            ):
                continue
            shape = tuple(t.get_shape())
            element = t.get_element_type()
            assert isinstance(element, FixedBitwidthType)
            self.views[arg] = _View(i, 0, row_major(shape), element.size)
            self.sizes[i] = int(np.prod(shape, dtype=np.int64)) * element.size
            self.elements[i] = element.size

    # -- values -------------------------------------------------------------

    def lift(self, v: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        depth = len(self.shape)
        if v.ndim < depth:
            return v.reshape(v.shape + (1,) * (depth - v.ndim))
        return v

    def get(self, v: SSAValue) -> Value:
        x = self.env.get(v)
        return None if x is None else self.lift(x)

    # -- blocks -------------------------------------------------------------

    def run_block(self, block: Block, mask: npt.NDArray[np.bool_]) -> None:
        for op in block_ops(block):
            self.run_op(op, mask)

    def run_op(self, op: Operation, mask: npt.NDArray[np.bool_]) -> None:
        kind = _kind(type(op))
        if kind == "other":  # most ops: index arithmetic
            if op.regions:
                raise _Unsupported(op.name)
            # (``_operands``: the tuple ``operands`` wraps, read without
            # building the wrapper, as ``lowering/create.py`` sets it)
            operands = op._operands  # pyright: ignore[reportPrivateUsage]
            views = self.views
            for o in operands:
                if o in views:
                    self.failed.add(views[o].arg)
            self.evaluate(op, operands)
        # (the modelled classes by ``kind``: the order of ``_MODELLED``)
        elif kind == "for":
            self.run_for(cast(scf.ForOp, op), mask)
        elif kind == "if":
            self.run_if(cast(scf.IfOp, op), mask)
        elif kind == "end":
            return
        elif kind == "load":
            op = cast(memref.LoadOp, op)
            self.access(op, op.memref, op.indices, False, mask)
        elif kind == "store":
            op = cast(memref.StoreOp, op)
            self.access(op, op.memref, op.indices, True, mask)
        elif kind == "extern":
            op = cast(tir.CallExternOp, op)
            # a library call: reads every byte of each buffer, and writes
            # every byte of those it writes, all at its one time (so none of
            # them may share bytes with another during the call)
            written = op.written_operands()
            for k, o in enumerate(op.args):
                self.access(op, o, None, False, mask)
                if k in written:
                    self.access(op, o, None, True, mask)
        elif kind == "custom":
            op = cast(CustomCallOp, op)
            # a user kernel: every byte of each input read and of each output
            # written, at one time (no order known: no overlap is safe)
            for k, arg in enumerate(op.args):
                self.access(op, arg, (None,), k >= op.n_inputs, mask)
        elif op.regions:
            raise _Unsupported(op.name)
        elif kind == "view":
            self.view(op)
        elif self.full and kind == "pool view" and self.pool_view(op):  # pyright: ignore[reportArgumentType]
            return
        else:
            for o in op.operands:
                if o in self.views:
                    self.failed.add(self.views[o].arg)
            self.evaluate(op)

    def view(self, op: Operation) -> None:
        source = self.views.get(op.operands[0])
        if source is None:
            return
        result = op.results[0]
        t = result.type
        ok = isinstance(t, MemRefType)
        if isinstance(op, memref.ReinterpretCastOp):
            offsets = op.static_offsets
            strides = op.static_strides
            if (
                not ok
                or op.offsets
                or op.strides
                or source.strides != row_major(tuple(op.operands[0].type.get_shape()))  # pyright: ignore
                or not isinstance(offsets, DenseArrayBase)
                or not isinstance(strides, DenseArrayBase)
            ):
                self.failed.add(source.arg)
                return
            off = tuple(offsets.get_values())
            st = tuple(strides.get_values())
            self.views[result] = _View(
                source.arg,
                source.offset + int(off[0]),  # pyright: ignore
                tuple(int(s) for s in st),  # pyright: ignore
                source.element,
            )
        else:  # collapse of a row-major memref: row-major again
            assert isinstance(t, MemRefType)
            if source.strides != row_major(
                tuple(op.operands[0].type.get_shape())  # pyright: ignore
            ):
                self.failed.add(source.arg)
                return
            self.views[result] = _View(
                source.arg,
                source.offset,
                row_major(tuple(t.get_shape())),  # pyright: ignore
                source.element,
            )

    def pool_view(self, op: memref.ViewOp) -> bool:
        """A static view of a whole byte argument: a new traced buffer."""
        source = self.views.get(op.source)
        shift = self.env.get(op.byte_shift)
        t = op.result.type
        if (
            source is None
            or source.element != 1
            or source.offset != 0
            or op.sizes
            or shift is None
            or shift.ndim != 0
            or not isinstance(t, MemRefType)
            or not isinstance(t.layout, NoneAttr)
            or not isinstance(t.get_element_type(), FixedBitwidthType)
        ):
            return False
        shape = tuple(t.get_shape())
        element = t.get_element_type()
        assert isinstance(element, FixedBitwidthType)
        index = -1 - len(self.pool_views)
        size = int(np.prod(shape, dtype=np.int64)) * element.size
        self.pool_views[index] = PoolView(op, source.arg, int(shift), size)
        self.views[op.result] = _View(index, 0, row_major(shape), element.size)
        self.sizes[index] = size
        self.elements[index] = element.size
        return True

    def evaluate(
        self, op: Operation, operands: Sequence[SSAValue] | None = None
    ) -> None:
        env = self.env
        results = op.results
        for r in results:
            env[r] = None
        if _compute_kind(type(op)) == "constant":
            op = cast(arith.ConstantOp, op)
            value = op.value
            if isinstance(value, IntegerAttr):
                v = value.value.data
                if isinstance(value.type, IntegerType) and value.type.width.data == 1:
                    env[op.result] = np.array(v != 0)
                else:
                    env[op.result] = np.array(v, dtype=np.int64)
            return
        if not results:
            return
        known: list[npt.NDArray[np.generic]] = []
        for o in op.operands if operands is None else operands:
            a = env.get(o)
            if a is None:  # data, or unknown: so is the result
                return
            known.append(a)
        args = [self.lift(a) for a in known]
        res = op.results[0]
        try:
            out = self.compute(op, args)  # pyright: ignore[reportArgumentType]
        except (FloatingPointError, OverflowError, ZeroDivisionError, ValueError):
            out = None
        self.env[res] = out

    def compute(
        self, op: Operation, a: list[npt.NDArray[np.generic]]
    ) -> npt.NDArray[np.generic] | None:
        x = a[0] if a else None
        y = a[1] if len(a) > 1 else None
        i64 = np.int64
        kind = _compute_kind(type(op))
        if kind == "addi":
            return np.add(x, y, dtype=i64)  # pyright: ignore
        if kind == "subi":
            return np.subtract(x, y, dtype=i64)  # pyright: ignore
        if kind == "muli":
            return np.multiply(x, y, dtype=i64)  # pyright: ignore
        if kind == "maxsi":
            return np.maximum(x, y)  # pyright: ignore
        if kind == "minsi":
            return np.minimum(x, y)  # pyright: ignore
        if kind == "bitwise":
            fn = {
                arith.AndIOp: np.bitwise_and,
                arith.OrIOp: np.bitwise_or,
                arith.XOrIOp: np.bitwise_xor,
            }[type(op)]
            return fn(x, y)  # pyright: ignore
        if kind == "cmpi":
            pred = cast(arith.CmpiOp, op).predicate.value.data
            if pred >= 6 and (np.any(x < 0) or np.any(y < 0)):  # pyright: ignore
                return None
            return _CMP[pred](x, y)  # pyright: ignore
        if kind == "select":
            return np.where(x, y, a[2])  # pyright: ignore
        if kind == "division":
            if np.any(y == 0):
                return None
            if isinstance(op, arith.FloorDivSIOp):
                return np.floor_divide(x, y)  # pyright: ignore
            q = np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))  # pyright: ignore
            return q if isinstance(op, arith.DivSIOp) else x - q * y  # pyright: ignore
        if kind == "shli":
            return np.left_shift(x, y)  # pyright: ignore
        if kind == "shrsi":
            return np.right_shift(x, y)  # pyright: ignore
        if kind == "extsi":
            return x
        if kind == "extui":
            t = op.results[0].type
            if not isinstance(t, IntegerType) or x is None:
                return x
            width = t.width.data
            if x.dtype == np.bool_:
                return x if width == 1 or isinstance(op, arith.ExtUIOp) else None
            lo, hi = (
                (0, (1 << width) - 1)
                if isinstance(op, arith.ExtUIOp)
                else (
                    -(1 << (width - 1)),
                    (1 << (width - 1)) - 1,
                )
            )
            if width >= 63 or (np.all(x >= lo) and np.all(x <= hi)):  # pyright: ignore
                return x
            return None
        return None

    # -- accesses -----------------------------------------------------------

    def access(
        self,
        op: Operation,
        ref: SSAValue,
        indices: tuple[SSAValue, ...] | list[SSAValue] | object,
        write: bool,
        mask: npt.NDArray[np.bool_],
    ) -> None:
        view = self.views.get(ref)
        if view is None:
            return
        idx = [] if indices is None else [self.get(i) for i in indices]  # pyright: ignore
        known = (
            indices is not None
            and not any(i is None for i in idx)
            and len(idx) == len(view.strides)
        )
        addr = (
            _Address(
                view.offset,
                tuple(
                    (cast(Array, self.lift(i.astype(np.int64, copy=False))), s)  # pyright: ignore
                    for i, s in zip(idx, view.strides, strict=True)
                ),
            )
            if known
            else None
        )
        lifted = self.lift(mask).astype(np.bool_, copy=False)
        # only the loops the address or the condition varies with are
        # enumerated (each loop is one axis; a free loop stays size 1)
        shape = tuple(
            n if (addr is not None and addr.varies(a)) or lifted.shape[a] > 1 else 1
            for a, n in enumerate(self.shape)
        )
        size = int(np.prod(shape, dtype=np.int64))
        if size > self.budget:
            raise _Unsupported(f"{size} iterations")
        chain: list[tuple[Operation, str, int | None]] = []
        repeats = 1
        for o, kind, k in self.chain:
            axis = None if k is None else k.ndim - 1
            if axis is not None and shape[axis] == 1:
                repeats *= self.trips[o]
            chain.append((o, kind, axis))
        chain.append((op, "leaf", None))
        self.events.append(
            _Event(
                view.arg,
                write,
                addr,
                lifted,
                shape,
                chain,
                repeats,
            )
        )

    # -- control flow -------------------------------------------------------

    def run_for(self, op: scf.ForOp, mask: npt.NDArray[np.bool_]) -> None:
        lb, ub, step = self.get(op.lb), self.get(op.ub), self.get(op.step)
        for r in op.results:
            self.env[r] = None
        if lb is None or ub is None or step is None or np.any(step <= 0):  # pyright: ignore
            if self._touches(op):
                raise _Unsupported("loop with unknown bounds")
            self.trips[op] = 0
            return
        trip = np.maximum(0, -(-(ub - lb) // step))  # pyright: ignore
        # the largest trip count where the loop runs (over the outer loops
        # the bounds or the condition vary with only)
        runs, trips = np.broadcast_arrays(
            self.lift(mask).astype(np.bool_, copy=False), self.lift(trip)
        )
        count = int(trips[runs].max()) if runs.any() else 0
        self.trips[op] = count
        if count == 0:
            return
        depth = len(self.shape)
        self.shape.append(count)
        k = np.arange(count, dtype=np.int64).reshape((1,) * depth + (count,))
        body = op.body.block
        if self.reverse and not op.iter_args:  # as reverse_loops rewrites it
            turn = self.lift(trip) - 1 - k  # pyright: ignore
            self.env[body.args[0]] = self.lift(lb) + turn * self.lift(step)  # pyright: ignore
        else:
            self.env[body.args[0]] = self.lift(lb) + k * self.lift(step)  # pyright: ignore
        for a in body.args[1:]:
            self.env[a] = None
        if trip.ndim == 0 or (trip == count).all():  # pyright: ignore
            inner = mask  # every iteration runs: the mask does not vary with k
        else:
            inner = self.lift(mask) & (k < self.lift(trip))  # pyright: ignore
        self.chain.append((op, "for", k))
        self.run_block(body, inner)
        self.chain.pop()
        self.shape.pop()

    def run_if(self, op: scf.IfOp, mask: npt.NDArray[np.bool_]) -> None:
        cond = self.get(op.cond)
        branches = [("then", op.true_region)]
        if op.false_region.blocks:
            branches.append(("else", op.false_region))
        yields: list[list[Value]] = []
        for kind, region in branches:
            if cond is None:
                sub = mask
            else:
                c = cond.astype(np.bool_, copy=False)
                sub = self.lift(mask).astype(np.bool_, copy=False) & (
                    c if kind == "then" else ~c
                )
            self.chain.append((op, kind, None))
            self.run_block(region.block, sub)  # pyright: ignore
            self.chain.pop()
            term = region.block.last_op
            yields.append(
                [self.get(o) for o in term.operands] if term is not None else []
            )
        for n, r in enumerate(op.results):
            self.env[r] = None
            if cond is not None and len(yields) == 2:
                a, b = yields[0][n], yields[1][n]
                if a is not None and b is not None:
                    self.env[r] = np.where(cond, a, b)

    def _touches(self, op: Operation) -> bool:
        return any(
            isinstance(o, (memref.LoadOp, memref.StoreOp))
            and o.operands[0 if isinstance(o, memref.LoadOp) else 1] in self.views
            for o in op.walk()
        )

    # -- times --------------------------------------------------------------

    def offsets(self, f: func.FuncOp) -> tuple[dict[Operation, int], dict[Block, int]]:
        """Each op's time offset in its block, and each block's span (of
        ``f``'s body and of every loop and branch): the ops in reverse
        pre-order, so the ops a loop holds are done before the loop (no
        recursion, and no closure cycle keeping the tracer alive)."""
        op_span: dict[Operation, int] = {}
        """Ops with regions (every other op spans 1)."""
        block_span: dict[Block, int] = {}
        offsets: dict[Operation, int] = {}

        def lay_out(b: Block) -> int:
            acc = 0
            for o in block_ops(b):
                offsets[o] = acc
                acc += op_span.get(o, 1) if o.regions else 1
            block_span[b] = acc
            return acc

        # the ops with regions only (most ops have none: no isinstance,
        # which is slow, and no span stored)
        for o in reversed([o for o in walk_ops(f) if o.regions]):
            if isinstance(o, scf.ForOp):
                op_span[o] = 1 + self.trips.get(o, 0) * lay_out(o.body.block)
            elif isinstance(o, scf.IfOp):
                op_span[o] = 1 + sum(lay_out(r.block) for r in o.regions if r.blocks)
        lay_out(f.body.block)
        return offsets, block_span

    def result(self, f: func.FuncOp) -> dict[int, ByteTimes]:
        offsets, block_span = self.offsets(f)
        elements = {i: n // self.elements[i] for i, n in self.sizes.items()}
        memo: _RunsMemo = {}  # (this call's: what it holds goes with it)
        counted = {} if self.full else elements  # trace_all needs no counts
        self.write_counts = {i: np.zeros(n, np.int64) for i, n in counted.items()}
        # filled on first use: most arguments are only read or only written
        last = _Filled(elements, -1)
        first = _Filled(elements, NEVER)
        full = elements if self.full else {}
        first_read = _Filled(full, NEVER)
        last_write = _Filled(full, -1)
        for e in self.events:
            if e.arg in self.failed:
                continue
            n = elements[e.arg]
            # without ``full``, a write's first times and a read's last
            # times only
            want = "both" if self.full else "first" if e.write else "last"
            for early, late, addr, bounds in _event_times(
                e, offsets, block_span, self.trips, want, memo
            ):
                if addr is None:
                    times = early if late is None else late
                    assert times is not None  # _event_times gives what is asked
                    if times.size == 0:
                        continue
                    if e.write:
                        assert early is not None
                        first[e.arg] = np.minimum(first[e.arg], early.min())
                        if not self.full:
                            self.write_counts[e.arg] += 2  # unknown: not "once"
                        if self.full:
                            assert late is not None
                            last_write[e.arg] = np.maximum(
                                last_write[e.arg], late.max()
                            )
                    else:
                        assert late is not None
                        last[e.arg] = np.maximum(last[e.arg], late.max())
                        if self.full:
                            assert early is not None
                            first_read[e.arg] = np.minimum(
                                first_read[e.arg], early.min()
                            )
                    continue
                if addr.size == 0:
                    continue
                assert bounds is not None
                addr, (early, late) = _in_buffer(addr, bounds, n, early, late)
                if addr.size == 0:
                    continue
                # ufunc.at: vectorised since numpy 1.25, where a sort by
                # address costs ~30 times as much
                if e.write:
                    assert early is not None
                    np.minimum.at(first[e.arg], addr, early)
                    if not self.full:
                        np.add.at(self.write_counts[e.arg], addr, e.repeats)
                    if self.full:
                        assert late is not None
                        np.maximum.at(last_write[e.arg], addr, late)
                else:
                    assert late is not None
                    np.maximum.at(last[e.arg], addr, late)
                    if self.full:
                        assert early is not None
                        np.minimum.at(first_read[e.arg], addr, early)
        out: dict[int, ByteTimes] = {}
        for i in elements:
            if i in self.failed:
                continue
            size = self.elements[i]
            arrays = (
                (last, first, first_read, last_write) if self.full else (last, first)
            )
            out[i] = ByteTimes(*(a.per_byte(i, size) for a in arrays))
        return out

    def light_result(
        self, f: func.FuncOp, exact: Collection[int], native: bool = True
    ) -> dict[int, ByteSets]:
        """``ByteSets`` of each followed buffer: the times ``trace_all``
        gives only where they decide something (see ``trace_light``). The
        accesses at known addresses are enumerated in C where it is built
        (``usmp_trace_native``; ``native=False``: numpy, the same values)."""
        offsets, block_span = self.offsets(f)
        elements = {i: n // self.elements[i] for i, n in self.sizes.items()}
        memo: _RunsMemo = {}  # (this call's: what it holds goes with it)
        events = [e for e in self.events if e.arg not in self.failed]
        reads = {e.arg for e in events if not e.write}
        writes = {e.arg for e in events if e.write}
        # the times in the narrowest type that holds them all and ``never``
        # (half the bytes to make, to scatter and to keep: ``ByteSets``)
        dtype = _time_dtype(block_span[f.body.block])
        never = int(np.iinfo(dtype).max)
        last_read = _Filled(elements, -1, dtype)
        first_read = _Filled(elements, never, dtype)
        first_write = _Filled(elements, never, dtype)
        read = _Filled(elements, False, np.bool_)  # where no time is asked for
        written = _Filled(elements, False, np.bool_)

        def kind(a: int) -> tuple[bool, bool]:
            """(buffer ``a`` is both read and written, its times are asked
            for)."""
            both = a in reads and a in writes
            return both, both or a in exact or a < 0

        def enumerate_numpy(e: _Event) -> None:
            """The accesses of ``e`` in numpy."""
            a, n = e.arg, elements[e.arg]
            both, timed = kind(a)
            # the one time each case below takes: first (writes, and reads
            # of a buffer also written) or last (other reads)
            chunks = (
                (
                    (t, a, b)
                    for _, t, a, b in _event_times(
                        e, offsets, block_span, self.trips, "last", memo, dtype
                    )
                )
                if timed and not e.write and not both
                else (
                    (t, a, b)
                    for t, _, a, b in _event_times(
                        e, offsets, block_span, self.trips, "first", memo, dtype
                    )
                )
                if timed
                else ((None, a, b) for a, b in _event_addresses(e, memo))
            )
            for time, addr, bounds in chunks:
                if addr is None:  # an unknown address: every byte
                    if not timed:
                        (written if e.write else read)[a][:] = True
                        continue
                    assert time is not None
                    if time.size == 0:
                        continue
                    elif e.write:
                        first_write[a] = np.minimum(first_write[a], time.min())
                    elif both:
                        first_read[a] = np.minimum(first_read[a], time.min())
                    else:
                        last_read[a] = np.maximum(last_read[a], time.max())
                    continue
                if addr.size == 0:
                    continue
                assert bounds is not None
                addr, (time,) = _in_buffer(addr, bounds, n, time)
                if addr.size == 0:
                    continue
                if not timed:
                    (written if e.write else read)[a][addr] = True
                    continue
                assert time is not None
                if e.write:
                    np.minimum.at(first_write[a], addr, time)
                elif both:
                    np.minimum.at(first_read[a], addr, time)
                else:
                    np.maximum.at(last_read[a], addr, time)

        # the C enumeration (usmp_trace_native; the same values): the
        # accesses of one loop nest, into one array, in one call
        lib = _native() if native else None
        groups: dict[tuple[object, ...], _Group] = {}
        for e in events:
            if lib is None or e.addresses is None:
                enumerate_numpy(e)
                continue
            a = e.arg
            both, timed = kind(a)
            mode = MARK if not timed else FIRST if e.write or both else LAST
            first0, spread, spans = _clock(e, offsets, block_span, self.trips)
            tstep = [0] * len(e.shape)
            for axis, span in spans:
                tstep[axis] = span
            t0 = first0 + spread if mode == LAST else first0
            mask = np.ascontiguousarray(e.mask)
            key = (
                a,
                e.write,
                mode,
                e.shape,
                tuple(tstep),
                mask.shape,
                mask.tobytes(),
                tuple((t.shape, s) for t, s in e.addresses.terms),
            )
            group = groups.get(key)
            if group is None:
                group = groups[key] = (tuple(tstep), mask, [], [])
            group[2].append(e)
            group[3].append((t0, e.addresses.offset, e.addresses.terms))
        for key, (steps, mask, members, accesses) in groups.items():
            a, write, mode = cast(tuple[int, bool, int], key[:3])
            if mode == MARK:
                target = (written if write else read)[a]
            elif mode == LAST:
                target = last_read[a]
            else:
                target = (first_write if write else first_read)[a]
            assert lib is not None  # (groups are made only with it)
            shape = members[0].shape
            if not scatter(lib, target, mode, shape, steps, mask, accesses):
                for e in members:
                    enumerate_numpy(e)
        out: dict[int, ByteSets] = {}
        for i in elements:
            if i in self.failed or (i not in reads and i not in writes):
                continue
            size = self.elements[i]
            timed = i in exact or i < 0
            if i in reads and i in writes:
                out[i] = ByteSets(
                    "rw",
                    first_read=first_read.per_byte(i, size),
                    first_write=first_write.per_byte(i, size),
                    never=never,
                )
            elif i in reads and timed:
                out[i] = ByteSets(
                    "r", last_read=last_read.per_byte(i, size), never=never
                )
            elif i in reads:
                out[i] = ByteSets("r", read=_bools(read.per_byte(i, size)), never=never)
            elif timed:
                out[i] = ByteSets(
                    "w", first_write=first_write.per_byte(i, size), never=never
                )
            else:
                out[i] = ByteSets(
                    "w", written=_bools(written.per_byte(i, size)), never=never
                )
        return out


_TIME32 = np.iinfo(np.int32).max
"""Times below this fit ``np.int32`` (it is that type's ``never``)."""


def _time_dtype(span: int) -> type:
    """``np.int32`` if every time of a kernel whose body spans ``span`` (its
    times are below it) fits in it with room for ``never``, else
    ``np.int64``."""
    return np.int32 if span < _TIME32 else np.int64


def _in_buffer(
    addr: npt.NDArray[np.int64],
    bounds: tuple[int, int],
    n: int,
    *times: npt.NDArray[np.int64] | None,
) -> tuple[npt.NDArray[np.int64], tuple[npt.NDArray[np.int64] | None, ...]]:
    """``addr`` (lowest and highest: ``bounds``) and the ``times`` beside it,
    without the addresses outside a buffer of ``n`` elements (those are no
    byte of it)."""
    if bounds[0] >= 0 and bounds[1] < n:
        return addr, times
    inside = (addr >= 0) & (addr < n)
    return addr[inside], tuple(None if t is None else t[inside] for t in times)


_MODELLED = (
    scf.ForOp,
    scf.IfOp,
    scf.YieldOp,
    func.ReturnOp,
    memref.LoadOp,
    memref.StoreOp,
    tir.CallExternOp,
    CustomCallOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ViewOp,
)
"""The op classes ``_Tracer.run_op`` treats apart from index arithmetic."""


@functools.cache
def _kind(cls: type[Operation]) -> str:
    """Which case of ``_Tracer.run_op`` an op of class ``cls`` takes: one
    per group of ``_MODELLED`` (the first its class is a subclass of), else
    ``other`` (once per class: ``isinstance`` on xDSL's op classes is
    slow)."""
    for classes, kind in (
        ((scf.ForOp,), "for"),
        ((scf.IfOp,), "if"),
        ((scf.YieldOp, func.ReturnOp), "end"),
        ((memref.LoadOp,), "load"),
        ((memref.StoreOp,), "store"),
        ((tir.CallExternOp,), "extern"),
        ((CustomCallOp,), "custom"),
        ((memref.ReinterpretCastOp, memref.CollapseShapeOp), "view"),
        ((memref.ViewOp,), "pool view"),
    ):
        if issubclass(cls, classes):
            return kind
    return "other"


@functools.cache
def _compute_kind(cls: type[Operation]) -> str:
    """Which case of ``_Tracer.compute`` an op of class ``cls`` takes (the
    first whose classes it is one of; once per class, like ``_kind``)."""
    for classes, kind in (
        ((arith.ConstantOp,), "constant"),  # (``evaluate``'s)
        ((arith.AddiOp,), "addi"),
        ((arith.SubiOp,), "subi"),
        ((arith.MuliOp,), "muli"),
        ((arith.MaxSIOp,), "maxsi"),
        ((arith.MinSIOp,), "minsi"),
        ((arith.AndIOp, arith.OrIOp, arith.XOrIOp), "bitwise"),
        ((arith.CmpiOp,), "cmpi"),
        ((arith.SelectOp,), "select"),
        ((arith.DivSIOp, arith.RemSIOp, arith.FloorDivSIOp), "division"),
        ((arith.ShLIOp,), "shli"),
        ((arith.ShRSIOp,), "shrsi"),
        ((arith.ExtSIOp, arith.IndexCastOp), "extsi"),
        ((arith.ExtUIOp, arith.TruncIOp), "extui"),
    ):
        if issubclass(cls, classes):
            return kind
    return ""


class _Filled:
    """Per argument, an array of ``sizes[arg]`` elements, all ``fill`` until
    it is first taken (``[arg]``) to be updated."""

    def __init__(
        self, sizes: dict[int, int], fill: int | bool, dtype: type = np.int64
    ) -> None:
        self.sizes = sizes
        self.fill = fill
        self.dtype = dtype
        self.arrays: dict[int, Array] = {}

    def __getitem__(self, arg: int) -> Array:
        a = self.arrays.get(arg)
        if a is None:
            a = self.arrays[arg] = np.full(self.sizes[arg], self.fill, self.dtype)
        return a

    def __setitem__(self, arg: int, a: Array) -> None:
        self.arrays[arg] = a

    def per_byte(self, arg: int, size: int) -> Array:
        """``_per_byte`` of the argument's array (one never taken: ``fill``
        everywhere, a read-only view)."""
        a = self.arrays.get(arg)
        if a is None:
            n = self.sizes[arg]
            if n:
                return np.broadcast_to(np.array([self.fill], self.dtype), (n * size,))
            a = np.full(0, self.fill, self.dtype)
        return _per_byte(a, size)


def _bools(a: npt.NDArray[np.generic]) -> npt.NDArray[np.bool_]:
    return cast(npt.NDArray[np.bool_], a)


def _per_byte(a: Array, size: int) -> Array:
    """``a`` per element as an array per byte; one value everywhere (never
    read, never written) is a read-only view that takes no memory."""
    # (ends that differ: not one value, without comparing every element)
    if a.size and a[0] == a[-1] and (a == a[0]).all():
        return np.broadcast_to(a[:1].copy(), (a.size * size,))
    return a if size == 1 else np.repeat(a, size)


def _outer_axis(shape: tuple[int, ...]) -> int | None:
    """The first enumerated loop of an event of ``shape`` (None: none)."""
    return next((a for a, n in enumerate(shape) if n > 1), None)


def _chunks(
    shape: tuple[int, ...], outer: int | None
) -> Iterator[tuple[int, int, tuple[int, ...]]]:
    """``(lo, hi, sub-shape)`` of the chunks of at most ``_CHUNK`` iterations
    along ``outer``, the first enumerated loop of an event of ``shape``."""
    inner = int(np.prod(shape, dtype=np.int64)) // (
        shape[outer] if outer is not None else 1
    )
    rows = max(1, _CHUNK // max(inner, 1))
    length = shape[outer] if outer is not None else 1
    for lo in range(0, length, rows):
        hi = min(length, lo + rows)
        yield lo, hi, tuple(hi - lo if a == outer else n for a, n in enumerate(shape))


def _rows(
    a: npt.NDArray[np.generic], axis: int | None, lo: int, hi: int
) -> npt.NDArray[np.generic]:
    """``a`` restricted to ``lo:hi`` along ``axis`` (if it varies along it)."""
    if axis is None or a.shape[axis] == 1:
        return a
    index: list[slice] = [slice(None)] * a.ndim
    index[axis] = slice(lo, hi)
    return a[tuple(index)]


def _clock(
    e: _Event,
    offsets: dict[Operation, int],
    block_span: dict[Block, int],
    trips: dict[Operation, int],
) -> tuple[int, int, list[tuple[int, int]]]:
    """The times of ``e``: its first time is ``first0`` plus, per enumerated
    loop, ``(axis, span)``, its iteration there times ``span``; its last time
    is ``spread`` later (the free loops' other iterations)."""
    # the times are a constant plus one term per enumerated loop; the
    # last time differs from the first by the free loops' spans only
    shape = e.shape
    first0 = 0
    spread = 0
    spans: list[tuple[int, int]] = []
    for o, kind, axis in e.chain:
        base = offsets[o]
        if kind == "for" and axis is not None and shape[axis] > 1:
            assert isinstance(o, scf.ForOp)
            first0 += base + 1
            spans.append((axis, block_span[o.body.block]))
        elif kind == "for":  # a free loop: its first and last iteration
            assert isinstance(o, scf.ForOp)
            first0 += base + 1
            spread += (trips[o] - 1) * block_span[o.body.block]
        elif kind == "then":
            first0 += base + 1
        elif kind == "else":
            assert isinstance(o, scf.IfOp)
            first0 += base + 1 + block_span[o.true_region.block]
        else:
            first0 += base
    return first0, spread, spans


def _event_times(
    e: _Event,
    offsets: dict[Operation, int],
    block_span: dict[Block, int],
    trips: dict[Operation, int],
    want: str = "both",
    memo: _RunsMemo | None = None,
    dtype: type = np.int64,
) -> Iterator[tuple[Array | None, Array | None, Array | None, tuple[int, int] | None]]:
    """The first and last time of ``e`` at each iteration of its enumerated
    loops that runs (a free loop's first and last iteration), with its
    address there, and bounds of the chunk's addresses (``_Address.bounds``:
    most need no check that they are inside the buffer); in
    chunks of at most ``_CHUNK`` iterations along its first enumerated
    loop. ``want``: ``both`` times, or only the ``first`` or the ``last``
    (the other one None: not computed). ``memo``: see ``_runs``. ``dtype``:
    of the times (``np.int32`` only where every time of the kernel fits,
    ``_time_dtype``)."""
    assert want in ("both", "first", "last")
    shape = e.shape
    outer = _outer_axis(shape)
    # (constants summed as integers, the terms' arrays broadcast once)
    first00, spread0, spans = _clock(e, offsets, block_span, trips)
    for lo, hi, sub in _chunks(shape, outer):
        first0, spread = first00, spread0
        terms: list[tuple[int, npt.NDArray[np.int64]]] = []
        """(axis, time of each of its iterations in the chunk)"""
        for axis, span in spans:
            k = np.arange(shape[axis], dtype=dtype)
            if axis == outer:
                k = k[lo:hi]
            terms.append((axis, k * span))
        if want == "last":  # the grid below holds the last times
            first0, spread = first0 + spread, 0
        chunk = None if e.addresses is None else e.addresses.rows(outer, lo, hi)
        mask = cast(npt.NDArray[np.bool_], _rows(e.mask, outer, lo, hi))
        box, running = _runs(mask, sub, memo)
        if running is None:  # the iterations that run are a box (often all)
            box = box or ()
            inside = _boxed(sub, box)
            # the iterations in the order of _inner_last (see there)
            order = _inner_last(inside)
            early: npt.NDArray[np.int64] | int = first0
            for axis, term in sorted(terms, key=lambda t: t[1].size):
                at = order.index(axis)
                early = early + term[box[axis] if box else slice(None)].reshape(
                    (1,) * at + (-1,) + (1,) * (len(shape) - at - 1)
                )
            grid = tuple(inside[a] for a in order)
            # flattened: a contiguous copy where ``early`` is broadcast
            # (ufunc.at is ~3x slower on broadcast views), a view of it
            # where it has the grid's shape already
            firsts = np.broadcast_to(np.asarray(early, dtype), grid).reshape(-1)
            part = None if chunk is None else chunk.within(box, order)
            addr = None if part is None else np.broadcast_to(part, grid).reshape(-1)
        else:  # only those that run (the order does not matter: see _running)
            index, grid = running
            early = first0
            for axis, term in terms:
                early = early + term[index[axis]]
            firsts = np.broadcast_to(np.asarray(early, dtype), grid).reshape(-1)
            addr = None if chunk is None else chunk.at(index, grid)
        # (read, never written)
        lasts = None if want == "first" else firsts + spread if spread else firsts
        bounds = (
            None
            if chunk is None or addr is None
            else chunk.bounds(box or ())
            if running is None
            else (int(addr.min()), int(addr.max()))
            if addr.size
            else (0, 0)
        )
        yield (None if want == "last" else firsts), lasts, addr, bounds


Index = tuple[npt.NDArray[np.intp] | int, ...]


def _inner_last(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of an event's iterations ``shape``, largest last: the order
    its times and addresses are laid out in (``_event_times``). Summing
    terms that each vary along a few axes broadcasts with the last axis as
    numpy's inner loop; a loop of 3 (a kernel's window) there costs ~10
    times a loop of 100. What the iterations feed (minima, maxima, sums,
    stores of one value, per address) does not depend on their order, only
    on each time staying paired with its address."""
    return tuple(sorted(range(len(shape)), key=lambda a: shape[a]))


def _in_box(t: Array, box: tuple[slice, ...]) -> Array:
    """``t`` (broadcasting to the box's shape) restricted to ``box``."""
    if not box:
        return t
    keep = zip(box, t.shape, strict=True)
    return t[tuple(b if n > 1 else slice(None) for b, n in keep)]


def _box(mask: npt.NDArray[np.bool_]) -> tuple[slice, ...] | None:
    """Where ``mask`` holds exactly on a box (a range per axis, e.g. the
    interior of a padded convolution), the box as slices (empty: it holds
    everywhere); else None."""
    if mask.all():
        return ()
    if mask.size < 2 or not mask.any():
        return None
    box: list[slice] = []
    count = 1
    for a in range(mask.ndim):
        if mask.shape[a] == 1:
            box.append(slice(None))
            continue
        others = tuple(b for b in range(mask.ndim) if b != a)
        held = np.nonzero(mask.any(axis=others))[0]
        first, last = int(held[0]), int(held[-1]) + 1
        box.append(slice(first, last))
        count *= last - first
    return tuple(box) if int(np.count_nonzero(mask)) == count else None


def _boxed(sub: tuple[int, ...], box: tuple[slice, ...]) -> tuple[int, ...]:
    """The shape of ``box`` (empty: all) in ``sub``."""
    if not box:
        return sub
    return tuple(len(range(*b.indices(n))) for b, n in zip(box, sub, strict=True))


_RunsMemo = dict[
    tuple[tuple[int, ...], tuple[int, ...], bytes],
    tuple[tuple[slice, ...] | None, tuple[Index, tuple[int, ...]] | None],
]


def _runs(
    mask: npt.NDArray[np.bool_],
    sub: tuple[int, ...],
    memo: _RunsMemo | None,
) -> tuple[tuple[slice, ...] | None, tuple[Index, tuple[int, ...]] | None]:
    """``_box(mask)`` and, where it is None, ``_running(mask, sub)``; once
    per mask (shape and content) and chunk shape in ``memo``: the events of
    a kernel's loop nest often share a condition (a padded window's border),
    each its own array. The results are only read (``_in_box``, indexing)."""
    if memo is None or mask.size <= 1:
        box = _box(mask)
        return box, None if box is not None else _running(mask, sub)
    key = (mask.shape, sub, np.ascontiguousarray(mask).tobytes())
    found = memo.get(key)
    if found is None:
        box = _box(mask)
        found = memo[key] = (box, None if box is not None else _running(mask, sub))
    return found


def _running(
    mask: npt.NDArray[np.bool_], sub: tuple[int, ...]
) -> tuple[Index, tuple[int, ...]] | None:
    """The iterations of a chunk ``sub`` that run, where ``mask`` (which
    broadcasts to ``sub``) holds: one index (array) per axis, the arrays
    broadcasting together; None if all run. In no particular order (what
    they feed, minima, maxima, sums and stores of one value, does not
    depend on it): the mask's own true positions, times every iteration of
    the loops it does not vary with. With the shape they broadcast to."""
    if mask.all():
        return None
    vary = [a for a in range(len(sub)) if mask.shape[a] > 1]
    free = [a for a in range(len(sub)) if mask.shape[a] == 1 and sub[a] > 1]
    tail = (1,) * len(free)
    index: list[npt.NDArray[np.intp] | int] = [0] * len(sub)
    if not vary:  # a mask that holds nowhere
        return tuple(index), (0,)
    found = np.nonzero(mask.reshape([mask.shape[a] for a in vary]))
    for k, a in enumerate(vary):
        index[a] = found[k].reshape((-1, *tail))
    for j, a in enumerate(free):
        shape = [1] * (len(free) + 1)
        shape[j + 1] = sub[a]
        index[a] = np.arange(sub[a]).reshape(shape)
    return tuple(index), (found[0].size, *(sub[a] for a in free))


def _event_addresses(
    e: _Event, memo: _RunsMemo | None = None
) -> Iterator[tuple[Array | None, tuple[int, int] | None]]:
    """``_event_times`` without the times: the addresses of the iterations
    of ``e`` that run (None: unknown, if any runs), with bounds of the
    addresses, in chunks."""
    shape = e.shape
    every = bool(e.mask.all())
    if e.addresses is None:
        if every or e.mask.any():
            yield None, None
        return
    part = e.addresses
    outer = _outer_axis(shape)
    for lo, hi, sub in _chunks(shape, outer):
        chunk = part.rows(outer, lo, hi)
        mask = cast(npt.NDArray[np.bool_], _rows(e.mask, outer, lo, hi))
        box, running = ((), None) if every else _runs(mask, sub, memo)
        if running is None:
            box = box or ()
            inside = _boxed(sub, box)
            order = _inner_last(inside)
            within = chunk.within(box, order)
            addr = np.broadcast_to(within, tuple(inside[a] for a in order)).reshape(-1)
            yield addr, chunk.bounds(box)
        else:
            addr = chunk.at(*running)
            yield addr, (int(addr.min()), int(addr.max())) if addr.size else (0, 0)


def trace_kernel(
    f: func.FuncOp, args: Collection[int], budget: int = 20_000_000
) -> dict[int, ByteTimes] | None:
    """Per byte of each argument in ``args`` (indices), when ``f`` last reads
    and first writes it (see module doc); None if ``f`` cannot be traced."""
    if not f.body.blocks:
        return None  # a declaration: nothing to trace
    tracer = _Tracer(f, args, budget)
    if not tracer.views:
        return {}
    try:
        tracer.run_block(f.body.block, np.array(True))
    except _Unsupported:
        return None
    return tracer.result(f)


@dataclass(frozen=True)
class KernelAccesses:
    """``trace_all``: the four byte times of every buffer a kernel touches.
    Keys are argument indices, and negative numbers for the views of byte
    arguments (``pool_views``)."""

    times: dict[int, ByteTimes]
    """Only the buffers the kernel reads or writes."""
    pool_views: dict[int, PoolView]
    unfollowed: frozenset[int]
    """Arguments and views the tracer could not follow (passed to a call,
    used by an op it does not model, a view it cannot map)."""


def _run_full(f: func.FuncOp, args: Collection[int], budget: int) -> _Tracer | None:
    """``f``'s body enumerated once with every time kept (None: a
    declaration, or a kernel the tracer cannot follow)."""
    if not f.body.blocks:
        return None
    tracer = _Tracer(f, args, budget, full=True)
    try:
        tracer.run_block(f.body.block, np.array(True))
    except _Unsupported:
        return None
    return tracer


def _unfollowed(
    tracer: _Tracer, f: func.FuncOp, args: Collection[int]
) -> frozenset[int]:
    """The arguments and views ``tracer`` could not follow in ``f``."""
    missing = (
        i
        for i in args
        if isinstance(f.args[i].type, MemRefType) and i not in tracer.sizes
    )
    return frozenset(tracer.failed).union(missing)


def trace_all(
    f: func.FuncOp, args: Collection[int], budget: int = 20_000_000
) -> KernelAccesses | None:
    """First and last read and write of every byte of the memref arguments
    ``args`` of ``f`` and of every static view inside it of a byte argument
    among them (a pool's scratch); None if ``f`` cannot be traced (or is
    only a declaration). Accesses to other arguments (constants) are not
    evaluated."""
    tracer = _run_full(f, args, budget)
    if tracer is None:
        return None
    times = {
        i: t
        for i, t in tracer.result(f).items()
        if (t.last_read >= 0).any() or (t.first_write != NEVER).any()
    }
    return KernelAccesses(times, dict(tracer.pool_views), _unfollowed(tracer, f, args))


@dataclass(frozen=True)
class LightAccesses:
    """``trace_light``: ``KernelAccesses`` with ``ByteSets``."""

    sets: dict[int, ByteSets]
    pool_views: dict[int, PoolView]
    unfollowed: frozenset[int]


def trace_light(
    f: func.FuncOp,
    args: Collection[int],
    exact: Collection[int],
    budget: int = 20_000_000,
    native: bool = True,
) -> LightAccesses | None:
    """``trace_all`` reduced to what a replay needs where buffers do not
    meet: per byte whether it is read and whether it is written; the last
    read of a buffer only read and the first write of a buffer only
    written are exact for the arguments in ``exact`` and for the views of
    byte arguments (negative keys); a buffer both read and written gets its
    exact first read and first write. The same enumeration as ``trace_all``
    (no times computed where only the bytes matter). ``native``: see
    ``_Tracer.light_result``."""
    tracer = _run_full(f, args, budget)
    if tracer is None:
        return None
    sets = {
        i: t
        for i, t in tracer.light_result(f, frozenset(exact), native).items()
        if t.used().any()
    }
    return LightAccesses(sets, dict(tracer.pool_views), _unfollowed(tracer, f, args))


def trace_kernel_with_counts(
    f: func.FuncOp,
    args: Collection[int],
    budget: int = 20_000_000,
    reverse: bool = False,
) -> tuple[dict[int, ByteTimes], dict[int, Array]] | None:
    """``trace_kernel`` and, per byte of each traced argument, how many times
    the kernel may write it (an unknown address counts as twice). With
    ``reverse``: as if every loop without ``iter_args`` ran backwards
    (``usmp_kernel_direction.reverse_loops``), without rewriting ``f``."""
    if not f.body.blocks:
        return None
    tracer = _Tracer(f, args, budget, reverse)
    if not tracer.views:
        return {}, {}
    try:
        tracer.run_block(f.body.block, np.array(True))
    except _Unsupported:
        return None
    times = tracer.result(f)
    counts = {
        i: _per_byte(tracer.write_counts[i], tracer.views[f.args[i]].element)
        for i in times
    }
    return times, counts


def max_shift(source: ByteTimes, target: ByteTimes) -> int:
    """The largest ``d`` such that every ``d' <= d`` is safe: placing the
    written buffer ``target`` at ``source``'s start + ``d'`` never writes a
    byte of ``source`` before its last read. ``d >= len(source)`` (disjoint
    above) is always safe too; ``len(source) - 1`` means any shift is safe."""
    last, first = source.last_read, target.first_write
    n = len(last)
    if n == 0 or len(first) == 0:
        return n - 1
    prefix = np.maximum.accumulate(last)
    # for each written byte o: the lowest source byte read at or after o's write
    r = np.searchsorted(prefix, first, side="left")
    o = np.arange(len(first), dtype=np.int64)
    bad = r < n
    if not bad.any():
        return n - 1
    return int((r[bad] - o[bad]).min()) - 1


def min_shift(source: ByteTimes, target: ByteTimes) -> int:
    """The smallest ``d`` such that every ``d' >= d`` is safe (the mirror of
    ``max_shift``: the target placed above); ``-len(target) + 1`` means any
    shift is safe."""
    last, first = source.last_read, target.first_write
    n, m = len(last), len(first)
    if n == 0 or m == 0:
        return -m + 1
    # suffix maxima, non-increasing: the highest source byte read at or
    # after a write is the last index whose suffix maximum reaches it
    suffix = np.maximum.accumulate(last[::-1])  # ascending
    count = n - np.searchsorted(suffix, first, side="left")  # bytes >= first
    o = np.arange(m, dtype=np.int64)
    bad = count > 0
    if not bad.any():
        return -m + 1
    return int((count[bad] - 1 - o[bad]).max()) + 1


def shift_is_safe(source: ByteTimes, target: ByteTimes, shift: int) -> list[int]:
    """Bytes of ``source`` (relative to its start) that ``target`` placed at
    ``shift`` overwrites before their last read (empty: safe). A direct,
    byte-by-byte replay of the two access orders: no prefix maxima, no
    assumption of monotone access."""
    last, first = source.last_read, target.first_write
    lo = max(0, shift)
    hi = min(len(last), shift + len(first))
    if lo >= hi:
        return []
    src = last[lo:hi]
    dst = first[lo - shift : hi - shift]
    bad = np.nonzero(dst <= src)[0]
    return [int(b) + lo for b in bad[:8]]


def written_arguments(f: func.FuncOp) -> frozenset[int]:
    """Indices of the memref arguments ``f`` may write: stored to (directly
    or through a view), or used by an op the tracer does not model."""
    if not f.body.blocks:
        return frozenset()
    out: set[int] = set()
    # the uses of each argument and of its views (their use lists, not a
    # walk of every op: a kernel's ops are mostly index arithmetic)
    stack: list[tuple[SSAValue, int]] = [(a, i) for i, a in enumerate(f.args)]
    while stack:
        value, i = stack.pop()
        use = value.first_use
        while use is not None:
            op, k = use._operation, use._index  # pyright: ignore[reportPrivateUsage]
            use = use._next_use  # pyright: ignore[reportPrivateUsage]
            kind = _write_kind(type(op))
            if kind == "alias":
                if k == 0:  # (a view of its source operand)
                    stack.append((op.results[0], i))
            elif kind == "store":
                if cast(memref.StoreOp, op).memref is value:
                    out.add(i)
            elif kind == "extern":
                op = cast(tir.CallExternOp, op)
                written = op.written_operands()
                if any(o is value for j, o in enumerate(op.args) if j in written):
                    out.add(i)
            elif kind == "custom":  # writes its outputs only
                op = cast(CustomCallOp, op)
                if any(o is value for o in op.args[op.n_inputs :]):
                    out.add(i)
            elif kind != "load":
                out.add(i)
    return frozenset(i for i in out if isinstance(f.args[i].type, MemRefType))


@functools.cache
def _write_kind(cls: type[Operation]) -> str:
    """How ``written_arguments`` treats an op of class ``cls`` (once per
    class, like ``_kind``)."""
    if issubclass(
        cls, (memref.ReinterpretCastOp, memref.CollapseShapeOp, memref.ViewOp)
    ):
        return "alias"
    if issubclass(cls, memref.StoreOp):
        return "store"
    if issubclass(cls, tir.CallExternOp):
        return "extern"
    if issubclass(cls, CustomCallOp):
        return "custom"
    if issubclass(cls, memref.LoadOp):
        return "load"
    return "other"


Traced = tuple[dict[int, ByteTimes], dict[int, Array]]


@dataclass(frozen=True)
class TracedFacts:
    """A kernel's overlap facts from its enumerated trace (the interface of
    ``usmp_kernel_symbolic.KernelSummary``)."""

    times: dict[int, ByteTimes]
    counts: dict[int, Array]

    @property
    def followed(self) -> frozenset[int]:
        return frozenset(self.times)

    def reads(self, arg: int) -> bool:
        return bool((self.times[arg].last_read >= 0).any())

    def writes(self, arg: int) -> bool:
        return bool((self.times[arg].first_write != NEVER).any())

    def covered(self, arg: int) -> bool:
        """Every byte of ``arg`` written."""
        return bool((self.times[arg].first_write != NEVER).all())

    def written_once(self, arg: int) -> bool:
        """Every element of ``arg`` written exactly once."""
        return bool((self.counts[arg] == 1).all())

    def independent(self) -> bool:
        """Every written element written exactly once, and never read."""
        for i, t in self.times.items():
            written = t.first_write != NEVER
            if written.any():
                if (t.last_read >= 0).any() or (self.counts[i][written] != 1).any():
                    return False
        return True

    def max_shift(self, source: int, target: int) -> int:
        return max_shift(self.times[source], self.times[target])

    def min_shift(self, source: int, target: int) -> int:
        return min_shift(self.times[source], self.times[target])


Facts = TracedFacts | KernelSummary


@dataclass
class KernelTraces:
    """Traces of kernels, each computed once per planning run (the kernels
    must not change meanwhile, except through ``replace``). A trace covers
    the arguments asked for and every argument the kernel may write.

    ``facts`` answers from the access functions (``usmp_kernel_symbolic``)
    where they decide, else from the trace; ``fallbacks`` names the kernels
    (and directions) that needed the trace. ``symbolic=False``: always the
    trace (the oracle)."""

    symbolic: bool = True
    cache: dict[tuple[str, frozenset[int]], Traced | None] = field(
        default_factory=dict[tuple[str, frozenset[int]], Traced | None]
    )
    written: dict[str, frozenset[int]] = field(
        default_factory=dict[str, frozenset[int]]
    )
    summaries: dict[tuple[str, frozenset[int], bool], Facts | None] = field(
        default_factory=dict[tuple[str, frozenset[int], bool], Facts | None]
    )
    fallbacks: list[str] = field(default_factory=list[str])

    def facts(
        self, f: func.FuncOp, args: Collection[int], reverse: bool = False
    ) -> Facts | None:
        """The overlap facts of ``f`` over ``args`` and every argument it may
        write (with ``reverse``: as if ``reverse_loops`` had run); None if
        it cannot be traced."""
        name, wanted = self.key(f, args)
        key = (name, wanted, reverse)
        if key in self.summaries:
            return self.summaries[key]
        found: Facts | None = None
        if self.symbolic:
            forward = self.summaries.get((name, wanted, False)) if reverse else None
            # the backward summary mirrors the forward one (``mirrored``)
            if isinstance(forward, KernelSummary):
                found = mirrored(forward)
            if found is None:
                found = summarize(f, wanted, reverse)
        if found is None or not decided(f, wanted, found):
            if self.symbolic:
                self.fallbacks.append(name + (" (backwards)" if reverse else ""))
            traced = (
                trace_kernel_with_counts(f, wanted, reverse=True)
                if reverse
                else self.of(f, args)
            )
            found = None if traced is None else TracedFacts(*traced)
        self.summaries[key] = found
        return found

    def key(self, f: func.FuncOp, args: Collection[int]) -> tuple[str, frozenset[int]]:
        name = f.sym_name.data
        if name not in self.written:
            self.written[name] = written_arguments(f)
        return (name, frozenset(args) | self.written[name])

    def of(self, f: func.FuncOp, args: Collection[int]) -> Traced | None:
        key = self.key(f, args)
        if key not in self.cache:
            self.cache[key] = trace_kernel_with_counts(f, key[1])
        return self.cache[key]

    def times(
        self, f: func.FuncOp, args: Collection[int]
    ) -> dict[int, ByteTimes] | None:
        traced = self.of(f, args)
        return None if traced is None else traced[0]

    def replace(
        self, f: func.FuncOp, args: Collection[int], traced: Traced | None
    ) -> None:
        """Record ``traced`` as the trace of ``f`` (rewritten since)."""
        self.cache = {k: v for k, v in self.cache.items() if k[0] != f.sym_name.data}
        self.summaries = {
            k: v for k, v in self.summaries.items() if k[0] != f.sym_name.data
        }
        self.written.pop(f.sym_name.data, None)
        self.cache[self.key(f, args)] = traced

    def replace_facts(
        self, f: func.FuncOp, args: Collection[int], facts: Facts | None
    ) -> None:
        """Record ``facts`` as those of ``f`` (rewritten since: its loops
        reversed; its trace is computed again when asked for)."""
        self.replace(f, args, None)
        key = self.key(f, args)
        del self.cache[key]
        self.summaries[(*key, False)] = facts


def decided(f: func.FuncOp, args: frozenset[int], summary: KernelSummary) -> bool:
    """Does ``summary`` answer all the trace would? Every argument the trace
    would follow is followed, and every written one is written exactly once
    (else whether each byte is written is left to the trace); and the
    kernel is one the tracer can trace (within its default budget: the
    replay re-traces it, and would count an untraceable kernel as touching
    every byte of its arguments)."""
    if summary.iterations > 20_000_000:
        return False
    for i in args:
        t = f.args[i].type
        if (
            isinstance(t, MemRefType)
            and isinstance(t.layout, NoneAttr)
            and isinstance(t.get_element_type(), FixedBitwidthType)
            and i not in summary.followed
        ):
            return False
    return all(summary.covered(i) for i in summary.followed if summary.writes(i))
