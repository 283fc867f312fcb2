"""An independent model of a kernel's access order, from its access
functions: the overlap shifts as small integer programs, not by enumerating
iterations. The test oracle of the enumerating tracer
(``usmp.passes.usmp_kernel_trace``), on which the overlap analysis and the
whole-plan replay rest: ``tests/test_access_model.py`` checks the two agree.

``SymbolicKernel(f)`` reads a lowered prim func (``scf.for`` / ``scf.if``
nests over ``memref.load`` / ``memref.store``, as ``lower-ops`` writes them)
and models every access as a point of a small integer program per access
*instance*:

* a variable per enclosing loop's induction value, ``lb <= iv < ub`` and
  ``iv = lb + step * k`` (bounds may be affine in outer loops, or their
  ``maxsi``/``minsi``, as padding makes them);
* index arithmetic as linear expressions, exactly: ``addi``/``subi``,
  ``muli`` by a constant, ``divsi``/``floordivsi``/``remsi`` by a positive
  constant (a quotient variable), ``maxsi``/``minsi``/``select`` and the
  comparisons and boolean logic of ``scf.if`` conditions (binary variables
  with bounds from interval arithmetic); a value the kernel loads (data)
  is unknown: an address that depends on it is any element of the buffer,
  a condition that does is not modelled (both branches may run), as the
  tracer does;
* its time: the position of the op in the sequential execution, numbered
  as the tracer numbers it (the ops before it in each enclosing block, plus
  the loop's iterations before it), here with each loop's iterations
  counted over its induction range (``iv - min lb``, or ``max ub - 1 - iv``
  for a loop run backwards), which orders every pair of instances as the
  tracer's numbering does.

``shifts(source, target)`` gives the largest shift of ``target`` below
``source`` and the smallest above it such that the target never overwrites
a source byte before its last read: the unsafe shifts are ``b - o`` for a
source byte ``b`` read at or after a write of target byte ``o``; their
minimum and maximum are two integer programs per pair of (read of the
source, write of the target) accesses, over two instances and the order
constraint ``time(write) <= time(read)``. Its cost depends on the loop nest
(its variables and accesses), not on the tensors' sizes or iteration counts;
at the sizes of microcontroller models the tracer, which enumerates only
the loops an address varies with, is faster (about 5 ms per program with
HiGHS, tens of programs per kernel with unrolled accesses), so the compiler
uses the tracer and the tests use this model to check it.
``written_once(args)`` decides, with one program per pair of writes,
whether every element of ``args`` the kernel writes is written exactly once
and never read (what ``usmp-kernel-direction`` needs to reverse a kernel).

Anything the model cannot express (a loop with a non-constant step, an
index from an op it does not know, an argument passed on to another call)
raises ``Unsupported`` or marks the buffer unsupported.

The programs are solved by HiGHS (``highspy``, a dev dependency) with an
absolute gap below 1 on an integer objective: its optimum is exact.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FixedBitwidthType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

Interval = tuple[int, int]


class Unsupported(Exception):
    """The kernel (or this access) is beyond the model."""


@dataclass
class _Lin:
    """A linear expression over program variables, with its value range."""

    terms: dict[int, int]
    const: int
    lo: int
    hi: int

    @staticmethod
    def constant(c: int) -> _Lin:
        return _Lin({}, c, c, c)

    def scaled(self, k: int) -> _Lin:
        lo, hi = sorted((self.lo * k, self.hi * k))
        return _Lin({v: c * k for v, c in self.terms.items()}, self.const * k, lo, hi)

    def plus(self, other: _Lin, sign: int = 1) -> _Lin:
        terms = dict(self.terms)
        for v, c in other.terms.items():
            terms[v] = terms.get(v, 0) + sign * c
            if terms[v] == 0:
                del terms[v]
        lo = self.lo + (other.lo if sign > 0 else -other.hi)
        hi = self.hi + (other.hi if sign > 0 else -other.lo)
        return _Lin(terms, self.const + sign * other.const, lo, hi)


@dataclass
class _Program:
    """A mixed integer program under construction."""

    lower: list[float] = field(default_factory=list[float])
    upper: list[float] = field(default_factory=list[float])
    rows: list[tuple[dict[int, int], float, float]] = field(
        default_factory=list[tuple[dict[int, int], float, float]]
    )

    def var(self, lo: int, hi: int) -> _Lin:
        self.lower.append(lo)
        self.upper.append(hi)
        return _Lin({len(self.lower) - 1: 1}, 0, lo, hi)

    def at_least(self, e: _Lin, bound: int) -> None:
        """``e >= bound``."""
        if e.terms:
            self.rows.append((e.terms, bound - e.const, np.inf))
        elif e.const < bound:
            self.rows.append(({}, 1.0, np.inf))  # infeasible

    def at_most(self, e: _Lin, bound: int) -> None:
        """``e <= bound``."""
        if e.terms:
            self.rows.append((e.terms, -np.inf, bound - e.const))
        elif e.const > bound:
            self.rows.append(({}, 1.0, np.inf))

    def equal(self, e: _Lin, value: int) -> None:
        self.at_least(e, value)
        self.at_most(e, value)

    def solve(self, objective: _Lin, maximize: bool) -> int | None:
        """The optimum of ``objective`` (None: infeasible)."""
        if any(not t and lo > 0 for t, lo, _ in self.rows):
            return None
        if not self.lower:  # no variable: every row was a constant (feasible)
            return objective.const
        return _solve(self, objective, maximize)


@cache
def _highs() -> Any:
    """One HiGHS instance per process, made silently (its banner goes to
    the process's stdout at construction, which may be the IR)."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    for name, value in (
        ("output_flag", False),
        ("threads", 1),
        ("mip_rel_gap", 0.0),
        ("mip_abs_gap", 0.5),
        ("presolve", "on"),
    ):
        h.setOptionValue(name, value)
    return h


def _solve(p: _Program, objective: _Lin, maximize: bool) -> int | None:
    import highspy

    h = _highs()
    n = len(p.lower)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(p.rows)
    cost = np.zeros(n)
    for v, c in objective.terms.items():
        cost[v] = -c if maximize else c
    lp.col_cost_ = cost
    lp.col_lower_ = np.array(p.lower, dtype=float)
    lp.col_upper_ = np.array(p.upper, dtype=float)
    lp.row_lower_ = np.array([lo for _, lo, _ in p.rows], dtype=float)
    lp.row_upper_ = np.array([hi for _, _, hi in p.rows], dtype=float)
    starts, index, value = [0], [], []
    for terms, _, _ in p.rows:
        index.extend(terms.keys())
        value.extend(terms.values())
        starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=float)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h.clearModel()
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    if status != highspy.HighsModelStatus.kOptimal:
        raise Unsupported(f"integer program: {h.modelStatusToString(status)}")
    best = h.getInfo().objective_function_value
    best = -best if maximize else best
    return int(round(best)) + objective.const


# -- the kernel model ----------------------------------------------------------


@dataclass(frozen=True)
class _Access:
    """One memref.load or memref.store of a traced buffer."""

    op: Operation
    buffer: int
    """Argument index, or a negative key for a view of a byte argument."""
    write: bool
    indices: tuple[SSAValue, ...]
    offset: int
    """Element offset of the view the op accesses (in its buffer)."""
    strides: tuple[int, ...]
    elements: int
    """The buffer's element count (addresses outside are ignored)."""
    size: int
    """Element bytes."""


@dataclass
class _View:
    buffer: int
    offset: int
    strides: tuple[int, ...]
    size: int


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides: list[int] = []
    acc = 1
    for dim in reversed(shape):
        strides.append(acc)
        acc *= dim
    return tuple(reversed(strides))


def _const_int(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


class SymbolicKernel:
    """The access model of ``f`` (see module doc); ``reverse``: as if every
    loop without ``iter_args`` ran backwards (``usmp-kernel-direction``)."""

    def __init__(self, f: func.FuncOp, reverse: bool = False):
        self.f = f
        self.reverse = reverse
        self.accesses: dict[int, list[_Access]] = {}
        self.unsupported: set[int] = set()
        """Buffers some access of which (or an op on which) is not modelled."""
        self.views: dict[SSAValue, _View] = {}
        self.span: dict[Operation | Block, int] = {}
        self.offset: dict[Operation, int] = {}
        self.loop_range: dict[scf.ForOp, Interval] = {}
        if not f.body.blocks:
            raise Unsupported("a declaration")
        for i, arg in enumerate(f.args):
            t = arg.type
            if (
                isinstance(t, MemRefType)
                and isinstance(t.layout, NoneAttr)
                and isinstance(t.get_element_type(), FixedBitwidthType)
            ):
                element = t.get_element_type()
                assert isinstance(element, FixedBitwidthType)
                shape = tuple(t.get_shape())
                self.views[arg] = _View(i, 0, _row_major(shape), element.size)
                self.elements_of(i, shape)
        self._collect(f.body.block)
        self._spans(f.body.block)

    # -- structure ----------------------------------------------------------

    _elements: dict[int, int]

    def elements_of(self, buffer: int, shape: tuple[int, ...]) -> None:
        if not hasattr(self, "_elements"):
            self._elements = {}
        self._elements[buffer] = int(np.prod(shape, dtype=np.int64))

    def _collect(self, block: Block) -> None:
        """Accesses and views, in program order (iteratively)."""
        for op in block.walk():
            if isinstance(op, memref.LoadOp | memref.StoreOp):
                ref = op.memref
                view = self.views.get(ref)
                if view is None:
                    continue
                indices = tuple(op.indices)
                self.accesses.setdefault(view.buffer, []).append(
                    _Access(
                        op,
                        view.buffer,
                        isinstance(op, memref.StoreOp),
                        indices,
                        view.offset,
                        view.strides,
                        self._elements[view.buffer],
                        view.size,
                    )
                )
            elif isinstance(op, memref.ReinterpretCastOp | memref.CollapseShapeOp):
                self._view(op)
            elif isinstance(op, memref.ViewOp):
                self._pool_view(op)
            elif isinstance(op, scf.ForOp | scf.IfOp | scf.YieldOp | func.ReturnOp):
                continue
            elif op.regions:
                raise Unsupported(f"region op {op.name}")
            else:
                for o in op.operands:
                    if o in self.views:
                        self.unsupported.add(self.views[o].buffer)

    def _view(self, op: Operation) -> None:
        source = self.views.get(op.operands[0])
        if source is None:
            return
        t = op.results[0].type
        src_type = op.operands[0].type
        assert isinstance(src_type, MemRefType)
        row_major = source.strides == _row_major(tuple(src_type.get_shape()))
        if isinstance(op, memref.ReinterpretCastOp):
            offsets, strides = op.static_offsets, op.static_strides
            if (
                op.offsets
                or op.strides
                or not row_major
                or not isinstance(offsets, DenseArrayBase)
                or not isinstance(strides, DenseArrayBase)
            ):
                self.unsupported.add(source.buffer)
                return
            off = int(offsets.get_values()[0])  # pyright: ignore
            st = tuple(int(s) for s in strides.get_values())  # pyright: ignore
            self.views[op.results[0]] = _View(
                source.buffer, source.offset + off, st, source.size
            )
        else:
            assert isinstance(t, MemRefType)
            if not row_major:
                self.unsupported.add(source.buffer)
                return
            self.views[op.results[0]] = _View(
                source.buffer,
                source.offset,
                _row_major(tuple(t.get_shape())),  # pyright: ignore
                source.size,
            )

    def _pool_view(self, op: memref.ViewOp) -> None:
        source = self.views.get(op.source)
        shift = _const_int(op.byte_shift)
        t = op.result.type
        if source is None:
            return
        if (
            source.size != 1
            or source.offset != 0
            or op.sizes
            or shift is None
            or not isinstance(t, MemRefType)
            or not isinstance(t.layout, NoneAttr)
            or not isinstance(t.get_element_type(), FixedBitwidthType)
        ):
            self.unsupported.add(source.buffer)
            return
        element = t.get_element_type()
        assert isinstance(element, FixedBitwidthType)
        key = -1 - sum(1 for k in self._elements if k < 0)
        shape = tuple(t.get_shape())
        self.views[op.result] = _View(key, 0, _row_major(shape), element.size)
        self.elements_of(key, shape)

    def _spans(self, top: Block) -> None:
        """Each op's and block's span and each op's offset in its block,
        innermost first (no recursion)."""
        for op in top.walk(region_first=True):
            if isinstance(op, scf.ForOp):
                lo, hi = self._range(op)
                self.loop_range[op] = (lo, hi)
                self.span[op] = 1 + max(0, hi - lo) * self._block_span(op.body.block)
            elif isinstance(op, scf.IfOp):
                self.span[op] = 1 + sum(
                    self._block_span(r.block) for r in op.regions if r.blocks
                )
            else:
                self.span[op] = 1
        self._block_span(top)

    def _block_span(self, b: Block) -> int:
        if b not in self.span:
            acc = 0
            for o in b.ops:
                self.offset[o] = acc
                acc += self.span[o]
            self.span[b] = acc
        return self.span[b]  # pyright: ignore[reportReturnType]

    def _range(self, loop: scf.ForOp) -> Interval:
        """[min lb, max ub) of the loop's induction value, over every outer
        iteration (interval arithmetic)."""
        step = _const_int(loop.step)
        if step is None or step <= 0:
            raise Unsupported("a loop with a non-constant step")
        lb, ub = self._interval(loop.lb), self._interval(loop.ub)
        return lb[0], max(lb[0], ub[1])

    def _interval(self, v: SSAValue) -> Interval:
        """Value range of an index value (a fresh program: intervals only)."""
        e = _Instance(self, _Program(), intervals_only=True).value(v)
        if e is None:
            raise Unsupported("a loop bound from data")
        return e.lo, e.hi

    # -- queries ------------------------------------------------------------

    def shifts(self, source: int, target: int) -> tuple[int, int] | None:
        """(max_shift, min_shift) of ``target`` written over ``source`` (as
        ``usmp_kernel_trace.max_shift`` / ``min_shift`` give them from
        traces), or None if either buffer is not modelled."""
        if source in self.unsupported or target in self.unsupported:
            return None
        reads = [a for a in self.accesses.get(source, []) if not a.write]
        writes = [a for a in self.accesses.get(target, []) if a.write]
        n = self._elements[source] * self._size(source)
        m = self._elements[target] * self._size(target)
        low: int | None = None
        high: int | None = None
        for r in reads:
            for w in writes:
                for maximize in (False, True):
                    p = _Program()
                    ri = _Instance(self, p).access(r)
                    wi = _Instance(self, p).access(w)
                    if ri is None or wi is None:
                        continue
                    (tr, ar), (tw, aw) = ri, wi
                    p.at_most(tw.plus(tr, -1), 0)  # write at or before read
                    diff = ar.scaled(r.size).plus(aw.scaled(w.size), -1)
                    best = p.solve(diff, maximize)
                    if best is None:
                        continue
                    if maximize:
                        best += r.size - 1
                        high = best if high is None else max(high, best)
                    else:
                        best -= w.size - 1
                        low = best if low is None else min(low, best)
        below = n - 1 if low is None or low >= n else low - 1
        above = -m + 1 if high is None or high < -m + 1 else high + 1
        return below, above

    def written_once(self, buffers: Collection[int]) -> bool | None:
        """Is every element of ``buffers`` the kernel writes written exactly
        once, and none of them read? None if not modelled."""
        for b in buffers:
            if b in self.unsupported:
                return None
            accesses = self.accesses.get(b, [])
            writes = [a for a in accesses if a.write]
            if writes and any(not a.write for a in accesses):
                return False
            for i, w1 in enumerate(writes):
                for w2 in writes[i:]:
                    p = _Program()
                    first, second = _Instance(self, p), _Instance(self, p)
                    one, two = first.access(w1), second.access(w2)
                    if one is None or two is None:
                        continue
                    (t1, a1), (t2, a2) = one, two
                    if first.unknown or second.unknown:
                        return False  # a store at an address from data
                    p.equal(a1.plus(a2, -1), 0)
                    if w1 is w2:  # two distinct instances of one store
                        p.at_most(t1.plus(t2, -1), -1)
                    if p.solve(_Lin.constant(0), False) is not None:
                        return False
        return True

    def _size(self, buffer: int) -> int:
        for a in self.accesses.get(buffer, []):
            return a.size
        return 1


class _Instance:
    """One instance of an access: its variables in a program."""

    def __init__(self, k: SymbolicKernel, p: _Program, intervals_only: bool = False):
        self.k = k
        self.p = p
        self.intervals_only = intervals_only
        self.env: dict[SSAValue, _Lin | None] = {}
        self.bools: dict[SSAValue, _Lin | None] = {}
        self.placeholders = 0
        self.unknown = False
        """The access's address depends on data."""

    # -- the access ---------------------------------------------------------

    def access(self, a: _Access) -> tuple[_Lin, _Lin] | None:
        """(time, element address) of an instance of ``a``, its guards and
        loop bounds added to the program; None if it never runs."""
        time = _Lin.constant(0)
        op: Operation = a.op
        chain: list[Operation] = []
        while op is not self.k.f:
            chain.append(op)
            parent = op.parent_op()
            assert parent is not None
            op = parent
        for o in reversed(chain):
            time = time.plus(_Lin.constant(self.k.offset[o]))
            if isinstance(o, scf.ForOp) and o is not a.op:
                iv = self.value(o.body.block.args[0])
                assert iv is not None
                lo, hi = self.k.loop_range[o]
                body = self.k.span[o.body.block]
                if self.k.reverse and not o.iter_args:
                    counted = _Lin.constant(hi - 1).plus(iv, -1)
                else:
                    counted = iv.plus(_Lin.constant(lo), -1)
                time = time.plus(_Lin.constant(1)).plus(counted.scaled(body))
            elif isinstance(o, scf.IfOp):
                inside = next(c for c in chain if c.parent_op() is o)
                then = inside.parent_region() is o.true_region
                time = time.plus(_Lin.constant(1))
                if not then:
                    time = time.plus(_Lin.constant(self.k.span[o.true_region.block]))
                cond = self.boolean(o.cond)
                if cond is not None:  # unknown: both branches may run
                    self.p.equal(cond, 1 if then else 0)
        address = self.address(a)
        return time, address

    def address(self, a: _Access) -> _Lin:
        if len(a.indices) != len(a.strides):
            raise Unsupported("an access with the wrong rank")
        e = _Lin.constant(a.offset)
        for i, s in zip(a.indices, a.strides, strict=True):
            v = self.value(i)
            if v is None:  # from data: any element
                e = self.p.var(0, a.elements - 1)
                self.unknown = True
                break
            e = e.plus(v.scaled(s))
        else:
            # addresses outside the buffer are not this buffer's (the tracer
            # ignores them)
            self.p.at_least(e, 0)
            self.p.at_most(e, a.elements - 1)
        return e

    # -- values -------------------------------------------------------------

    def value(self, v: SSAValue) -> _Lin | None:
        """The linear expression of an integer/index value (None: data)."""
        if v in self.env:
            return self.env[v]
        # iteratively: operands first (index expressions can be deep)
        stack = [v]
        while stack:
            x = stack[-1]
            if x in self.env:
                stack.pop()
                continue
            pending = [o for o in self._inputs(x) if o not in self.env]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self.env[x] = self._compute(x)
        return self.env[v]

    def _inputs(self, v: SSAValue) -> list[SSAValue]:
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            if isinstance(owner, scf.ForOp) and v.index == 0:
                return [owner.lb, owner.ub, owner.step]
            return []
        op = v.owner
        if isinstance(op, memref.LoadOp) or not isinstance(op, Operation):
            return []
        if isinstance(op, scf.ForOp | scf.IfOp):
            return []
        return [
            o
            for o in op.operands
            if isinstance(o.type, IntegerType) or o.type.name == "index"
        ]  # pyright: ignore

    def _compute(self, v: SSAValue) -> _Lin | None:
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            if isinstance(owner, scf.ForOp) and v.index == 0:
                return self._induction(owner)
            return None
        op = v.owner
        assert isinstance(op, Operation)
        c = _const_int(v)
        if c is not None:
            return _Lin.constant(c)
        ops = [self.env.get(o) for o in op.operands]
        if isinstance(op, arith.AddiOp | arith.SubiOp):
            a, b = ops
            if a is None or b is None:
                return None
            return a.plus(b, 1 if isinstance(op, arith.AddiOp) else -1)
        if isinstance(op, arith.MuliOp):
            a, b = ops
            if a is None or b is None:
                return None
            if not a.terms:
                return b.scaled(a.const)
            if not b.terms:
                return a.scaled(b.const)
            raise Unsupported("a product of two variables")
        if isinstance(
            op, arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp
        ):
            return ops[0]
        if isinstance(op, arith.DivSIOp | arith.FloorDivSIOp | arith.RemSIOp):
            a, b = ops
            if a is None or b is None:
                return None
            if b.terms or b.const <= 0:
                raise Unsupported("a division by a non-constant")
            if a.lo < 0 and not isinstance(op, arith.FloorDivSIOp):
                raise Unsupported("a truncating division of a negative value")
            d = b.const
            q = self._fresh(a.lo // d, a.hi // d)
            self.p.at_least(a.plus(q.scaled(d), -1), 0)  # d*q <= a
            self.p.at_most(a.plus(q.scaled(d), -1), d - 1)  # a < d*q + d
            if isinstance(op, arith.RemSIOp):
                r = a.plus(q.scaled(d), -1)
                return _Lin(r.terms, r.const, 0, d - 1)
            return q
        if isinstance(op, arith.MaxSIOp | arith.MinSIOp):
            a, b = ops
            if a is None or b is None:
                return None
            big = isinstance(op, arith.MaxSIOp)
            if a.hi <= b.lo:
                return b if big else a
            if b.hi <= a.lo:
                return a if big else b
            lo = max(a.lo, b.lo) if big else min(a.lo, b.lo)
            hi = max(a.hi, b.hi) if big else min(a.hi, b.hi)
            m = self._fresh(lo, hi)
            z = self._fresh(0, 1)
            span = max(a.hi, b.hi) - min(a.lo, b.lo)
            # max: m >= a, m >= b, m <= a + span*(1-z), m <= b + span*z
            sign = 1 if big else -1
            for e, picked in ((a, z.scaled(-1).plus(_Lin.constant(1))), (b, z)):
                gap = m.plus(e, -1).scaled(sign)  # >= 0
                self.p.at_least(gap, 0)
                self.p.at_most(gap.plus(picked.scaled(span), -1), 0)
            return m
        if isinstance(op, arith.SelectOp):
            cond = self.boolean(op.cond)
            a, b = ops[1], ops[2]
            if cond is None or a is None or b is None:
                return None
            lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
            m = self._fresh(lo, hi)
            span = hi - lo
            for e, on in ((a, cond), (b, cond.scaled(-1).plus(_Lin.constant(1)))):
                off = on.scaled(-1).plus(_Lin.constant(1)).scaled(span)
                self.p.at_most(m.plus(e, -1).plus(off, -1), 0)
                self.p.at_least(m.plus(e, -1).plus(off), 0)
            return m
        if isinstance(op, arith.CmpiOp | arith.AndIOp | arith.OrIOp | arith.XOrIOp):
            return self.boolean(v)
        if isinstance(op, memref.LoadOp):
            return None
        return None

    def _fresh(self, lo: int, hi: int) -> _Lin:
        if lo == hi:
            return _Lin.constant(lo)
        if self.intervals_only:  # a placeholder variable: only its range counts
            self.placeholders -= 1
            return _Lin({self.placeholders: 1}, 0, lo, hi)
        return self.p.var(lo, hi)

    def _induction(self, loop: scf.ForOp) -> _Lin:
        lb, ub = self.env.get(loop.lb), self.env.get(loop.ub)
        step = _const_int(loop.step)
        if lb is None or ub is None or step is None or step <= 0:
            raise Unsupported("a loop with unknown bounds")
        lo = lb.lo
        hi = max(lb.lo, ub.hi - 1)
        iv = self._fresh(lo, hi)
        if self.intervals_only:
            return iv
        self.p.at_least(iv.plus(lb, -1), 0)
        self.p.at_most(iv.plus(ub, -1), -1)
        if step != 1:
            k = self.p.var(0, max(0, (hi - lo) // step))
            self.p.equal(iv.plus(lb, -1).plus(k.scaled(step), -1), 0)
        return iv

    def boolean(self, v: SSAValue) -> _Lin | None:
        """A 0/1 variable equal to the condition ``v`` (None: data)."""
        if v in self.bools:
            return self.bools[v]
        result = self._boolean(v)
        self.bools[v] = result
        return result

    def _boolean(self, v: SSAValue) -> _Lin | None:
        op = v.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return _Lin.constant(1 if op.value.value.data else 0)
        if isinstance(op, arith.CmpiOp):
            a, b = self.value(op.lhs), self.value(op.rhs)
            if a is None or b is None:
                return None
            pred = op.predicate.value.data
            if pred >= 6 and (a.lo < 0 or b.lo < 0):
                return None  # unsigned comparison of possibly negative values
            d = a.plus(b, -1)  # a - b
            # relation as d in [lo, hi] (on integers)
            rel = {
                0: (0, 0),
                1: None,
                2: (None, -1),
                3: (None, 0),
                4: (1, None),
                5: (0, None),
                6: (None, -1),
                7: (None, 0),
                8: (1, None),
                9: (0, None),
            }[pred]
            if rel is None:  # ne: not eq
                eq = self._relation(d, 0, 0)
                return None if eq is None else eq.scaled(-1).plus(_Lin.constant(1))
            return self._relation(d, rel[0], rel[1])
        if isinstance(op, arith.AndIOp | arith.OrIOp | arith.XOrIOp):
            a, b = self.boolean(op.lhs), self.boolean(op.rhs)
            if a is None or b is None:
                return None
            y = self._fresh(0, 1)
            if isinstance(op, arith.AndIOp):
                self.p.at_most(y.plus(a, -1), 0)
                self.p.at_most(y.plus(b, -1), 0)
                self.p.at_least(y.plus(a, -1).plus(b, -1), -1)
            elif isinstance(op, arith.OrIOp):
                self.p.at_least(y.plus(a, -1), 0)
                self.p.at_least(y.plus(b, -1), 0)
                self.p.at_most(y.plus(a, -1).plus(b, -1), 0)
            else:  # xor
                self.p.at_most(y.plus(a, -1).plus(b, -1), 0)
                self.p.at_most(y.plus(a).plus(b), 2)
                self.p.at_least(y.plus(a, -1).plus(b), 0)
                self.p.at_least(y.plus(b, -1).plus(a), 0)
            return y
        return None

    def _relation(self, d: _Lin, lo: int | None, hi: int | None) -> _Lin | None:
        """A 0/1 variable y with y = 1 iff lo <= d <= hi (None bounds open)."""
        true = (lo is None or d.lo >= lo) and (hi is None or d.hi <= hi)
        false = (lo is not None and d.hi < lo) or (hi is not None and d.lo > hi)
        if true:
            return _Lin.constant(1)
        if false:
            return _Lin.constant(0)
        if self.intervals_only:
            return self._fresh(0, 1)
        if lo is not None and hi is not None:  # an equality: two sides
            below = self._relation(d, None, hi)
            above = self._relation(d, lo, None)
            if below is None or above is None:
                return None
            y = self._fresh(0, 1)
            self.p.at_most(y.plus(below, -1), 0)
            self.p.at_most(y.plus(above, -1), 0)
            self.p.at_least(y.plus(below, -1).plus(above, -1), -1)
            return y
        y = self._fresh(0, 1)
        span = d.hi - d.lo + 1
        if hi is not None:  # y = [d <= hi]
            # y = 1 -> d <= hi ;  y = 0 -> d >= hi + 1
            self.p.at_most(d.plus(y.scaled(span)), hi + span)
            self.p.at_least(d.plus(y.scaled(span)), hi + 1)
        else:  # y = [d >= lo]
            assert lo is not None
            self.p.at_least(d.plus(y.scaled(span), -1), lo - span)
            self.p.at_most(d.plus(y.scaled(span), -1), lo - 1)
        return y
