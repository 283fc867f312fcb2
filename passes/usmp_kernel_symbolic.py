"""Overlap facts of an operator's loop nest from its access functions.

Not a pass. ``summarize(f, args)`` gives what ``usmp_overlap`` and
``usmp_kernel_direction`` need of a kernel (which arguments it reads and
writes, whether it writes each element of an argument exactly once, and the
largest shift of a written argument below, or the smallest above, a read
one) without enumerating iterations, the way ``usmp_kernel_trace`` does: its
cost grows with the loop nest (loops, accesses, the pieces below), not with
the tensors.

Each ``scf.for`` with constant bounds gets a counter ``k`` from 0 to its trip
count - 1 (in execution order: a loop ``reverse_loops`` would reverse counts
down from its last ``iv``); index values are evaluated lazily as affine
functions of the counters. A ``max``/``min``, a comparison deciding an
``scf.if`` or a ``select`` that the counters' current box does not decide, and
that depends on one counter only, *splits* that counter's range at the
threshold and the loop body is walked again for each part (padding checks
make a few pieces: the interior and the borders). Every access to a followed
argument becomes a record: its affine byte address over its piece's box.

The conflict of a write ``W`` of the target and a read ``R`` of the source
happens when an iteration of ``W`` comes no later than one of ``R``: their
common loops equal down to some level ``p``, where ``W``'s counter is below
``R``'s, or all equal with ``W`` before ``R`` in the loop body. The address
difference ``R - W`` is linear, so its extremes over each such level are
those of independent terms: a counter over an interval (a corner), a pair
``i < j`` over two intervals (a vertex of that small polygon). The largest
safe shift below is one less than the smallest difference over all
conflicts; the smallest above, one more than the largest (as
``usmp_kernel_trace.max_shift`` / ``min_shift`` define them on the traced
bytes). Out-of-range addresses (which the tracer ignores) count: a smaller
shift, never a larger one.

Writing every element exactly once holds when the stores of an argument form
one mixed-radix numbering of its elements (strides 1, t0, t0*t1, ...,
starting at 0; unrolled stores at constant offsets count as one more
dimension).

Whatever it cannot decide (an address or a condition that depends on data or
on two counters at once, a non-constant loop bound, an op with a region it
does not know, a view of a followed argument, a written argument whose
stores do not form one numbering) gives ``None``: the caller falls back to
the enumerating tracer for that kernel.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from typing import cast

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    FixedBitwidthType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Block, Operation, SSAValue

from usmp.lowering.walk import block_ops, walk_ops

Affine = tuple[int, dict[int, int]]
"""``(constant, {counter: coefficient})``."""
Box = dict[int, tuple[int, int]]
"""Counter -> its inclusive range in one piece."""

_MAX_RECORDS = 20_000
"""Records (accesses x pieces) beyond which a kernel is not summarised."""


class Unsupported(Exception):
    """The kernel cannot be summarised (module doc): fall back."""


@dataclass
class _Split(Exception):
    var: int
    at: int
    """The counter's range splits into ``[lo, at - 1]`` and ``[at, hi]``."""


@dataclass
class _Record:
    arg: int
    write: bool
    op: Operation
    path: tuple[tuple[Operation, str], ...]
    """Enclosing ``scf.for`` (kind ``for``) and ``scf.if`` branches
    (``then``/``else``), outermost first."""
    address: Affine
    """In bytes from the argument's start."""
    box: Box


@dataclass
class _Group:
    """Records of one argument and kind with one path (but the access op),
    one linear part and one box: they differ by constant offsets."""

    arg: int
    write: bool
    path: tuple[tuple[Operation, str], ...]
    linear: dict[int, int]
    box: Box
    element: int
    """Element bytes of the argument."""
    members: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    """(position of the access op in its block, constant byte offset)."""


def _add(a: Affine, b: Affine, scale: int = 1) -> Affine:
    coeffs = dict(a[1])
    for v, c in b[1].items():
        coeffs[v] = coeffs.get(v, 0) + scale * c
    return a[0] + scale * b[0], {v: c for v, c in coeffs.items() if c}


def _scale(a: Affine, k: int) -> Affine:
    return a[0] * k, {v: c * k for v, c in a[1].items() if c * k}


def _bounds(a: Affine, box: Box) -> tuple[int, int]:
    lo = hi = a[0]
    for v, c in a[1].items():
        x, y = box[v]
        lo += min(c * x, c * y)
        hi += max(c * x, c * y)
    return lo, hi


def _free(a: Affine, box: Box) -> list[int]:
    return [v for v in a[1] if box[v][0] != box[v][1]]


def _nonnegative(a: Affine, box: Box) -> bool:
    """Is ``a >= 0`` over the box? Splits a counter's range when that
    depends on it alone."""
    lo, hi = _bounds(a, box)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    free = _free(a, box)
    if len(free) != 1:
        raise Unsupported("a condition on two loop counters at once")
    v = free[0]
    c = a[1][v]
    rest = a[0] + sum(
        cv * box[u][0] for u, cv in a[1].items() if u != v
    )  # the other counters are fixed
    if c > 0:  # c*k + rest >= 0  <=>  k >= ceil(-rest / c)
        at = -(rest // c)
    else:  # k <= floor(rest / -c)
        at = rest // -c + 1
    raise _Split(v, at)


_PREDICATES = {0: "eq", 1: "ne", 2: "lt", 3: "le", 4: "gt", 5: "ge"}


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a row-major (identity layout) array of ``shape``."""
    strides: list[int] = []
    acc = 1
    for dim in reversed(shape):
        strides.append(acc)
        acc *= dim
    return tuple(reversed(strides))


class _Summarizer:
    def __init__(self, f: func.FuncOp, interest: Collection[int], reverse: bool):
        self.f = f
        self.reverse = reverse
        self.args: dict[SSAValue, int] = {}
        self.shapes: dict[int, tuple[tuple[int, ...], int]] = {}
        """Followed argument -> (row-major element strides, element bytes)."""
        self.sizes: dict[int, int] = {}
        for i, arg in enumerate(f.args):
            t = arg.type
            if (
                i not in interest
                or not isinstance(t, MemRefType)
                or not isinstance(t.layout, NoneAttr)
                or not isinstance(t.get_element_type(), FixedBitwidthType)
            ):
                continue
            shape = tuple(t.get_shape())
            element = t.get_element_type()
            assert isinstance(element, FixedBitwidthType)
            self.args[arg] = i
            self.shapes[i] = (row_major(shape), element.size)
            self.sizes[i] = math.prod(shape) * element.size
        self.failed: set[int] = set()
        self.records: list[_Record] = []
        self.box: Box = {}
        self.env: dict[SSAValue, Affine] = {}
        self.memo: dict[SSAValue, Affine | bool] = {}
        self.constants: dict[SSAValue, Affine | bool] = {}
        """Values of ``arith.constant``: kept when ``memo`` is reset (they
        do not depend on the box)."""
        self.vars: dict[Operation, int] = {}
        self.full: dict[int, int] = {}
        """Counter -> its loop's trip count (the first piece's)."""
        self.varying: set[int] = set()
        """Counters whose trip count differs between pieces."""
        self.path: list[tuple[Operation, str]] = []
        self.relevant_ops: dict[Block, list[Operation]] = {}

    # -- values -------------------------------------------------------------

    def value(self, v: SSAValue) -> Affine:
        x = self.evaluate(v)
        if isinstance(x, bool):
            return int(x), {}
        return x

    def flag(self, v: SSAValue) -> bool:
        x = self.evaluate(v)
        if isinstance(x, bool):
            return x
        lo, hi = _bounds(x, self.box)
        if lo == hi:
            return lo != 0
        raise Unsupported("an integer used as a condition")

    def evaluate(self, v: SSAValue) -> Affine | bool:
        # (one lookup per map: a value is never None)
        x = self.env.get(v)
        if x is None:
            x = self.memo.get(v)
            if x is None:
                x = self.constants.get(v)
        if x is not None:
            return x
        op = v.owner
        if not isinstance(op, Operation):
            raise Unsupported("a value that depends on data")
        out = self.compute(op, v)
        if _compute_kind(type(op)) == "constant":
            self.constants[v] = out
        else:
            self.memo[v] = out
        return out

    def compute(self, op: Operation, v: SSAValue) -> Affine | bool:
        kind = _compute_kind(type(op))
        # lhs and rhs of the binary ops, without building ``operands``
        operands = op._operands  # pyright: ignore[reportPrivateUsage]
        if kind == "constant":
            op = cast(arith.ConstantOp, op)
            value = op.value
            if not isinstance(value, IntegerAttr):
                raise Unsupported("a non-integer constant")
            n = value.value.data
            if isinstance(value.type, IntegerType) and value.type.width.data == 1:
                return n != 0
            return n, {}
        if kind == "extsi":
            op = cast("arith.ExtSIOp | arith.IndexCastOp", op)
            return self.evaluate(operands[0])
        if kind == "extui":
            op = cast(arith.ExtUIOp, op)
            x = self.evaluate(operands[0])
            if isinstance(x, bool):
                return int(x), {}
            if _bounds(x, self.box)[0] < 0:
                raise Unsupported("extui of a negative value")
            return x
        if kind == "addi":
            op = cast(arith.AddiOp, op)
            return _add(self.value(operands[0]), self.value(operands[1]))
        if kind == "subi":
            op = cast(arith.SubiOp, op)
            return _add(self.value(operands[0]), self.value(operands[1]), -1)
        if kind == "muli":
            op = cast(arith.MuliOp, op)
            a, b = self.value(operands[0]), self.value(operands[1])
            if not a[1]:
                return _scale(b, a[0])
            if not b[1]:
                return _scale(a, b[0])
            raise Unsupported("a product of two loop counters")
        if kind == "minmax":
            op = cast("arith.MaxSIOp | arith.MinSIOp", op)
            a, b = self.value(operands[0]), self.value(operands[1])
            d = _add(a, b, -1)  # a - b; a tie takes b (the constant, as
            if isinstance(op, arith.MinSIOp):  # lower-ops writes the bounds)
                d = _scale(d, -1)
            return a if _nonnegative(_add(d, (-1, {})), self.box) else b
        if kind == "cmpi":
            op = cast(arith.CmpiOp, op)
            pred = op.predicate.value.data
            a, b = self.value(operands[0]), self.value(operands[1])
            if pred >= 6:  # unsigned: as signed when both are non-negative
                if _bounds(a, self.box)[0] < 0 or _bounds(b, self.box)[0] < 0:
                    raise Unsupported("an unsigned comparison of a negative value")
                pred -= 4
            d = _add(a, b, -1)  # a - b
            kind = _PREDICATES[pred]
            if kind in ("eq", "ne"):
                eq = _nonnegative(d, self.box) and _nonnegative(_scale(d, -1), self.box)
                return eq if kind == "eq" else not eq
            if kind == "ge":
                return _nonnegative(d, self.box)
            if kind == "gt":
                return _nonnegative(_add(d, (-1, {})), self.box)
            if kind == "le":
                return _nonnegative(_scale(d, -1), self.box)
            return _nonnegative(_add(_scale(d, -1), (-1, {})), self.box)  # lt
        if kind == "bitwise":
            op = cast("arith.AndIOp | arith.OrIOp | arith.XOrIOp", op)
            x = self.evaluate(operands[0])
            if isinstance(x, bool):
                if isinstance(op, arith.AndIOp) and not x:
                    return False
                if isinstance(op, arith.OrIOp) and x:
                    return True
                y = self.flag(operands[1])
                return x ^ y if isinstance(op, arith.XOrIOp) else y
            raise Unsupported("bitwise arithmetic on an index")
        if kind == "select":
            op = cast(arith.SelectOp, op)
            return self.evaluate(operands[1 if self.flag(operands[0]) else 2])
        if kind == "division":
            op = cast("arith.DivSIOp | arith.RemSIOp | arith.FloorDivSIOp", op)
            a, b = self.value(operands[0]), self.value(operands[1])
            if b[1] or b[0] <= 0:
                raise Unsupported("division by a variable or non-positive value")
            lo, hi = _bounds(a, self.box)
            if lo < 0 and not isinstance(op, arith.FloorDivSIOp):
                raise Unsupported("truncating division of a negative value")
            q = lo // b[0]
            if hi // b[0] != q:
                raise Unsupported("a quotient that varies with the loop counters")
            if isinstance(op, arith.RemSIOp):
                return _add(a, (q * b[0], {}), -1)
            return q, {}
        if kind == "if":
            op = cast(scf.IfOp, op)
            region = op.true_region if self.flag(op.cond) else op.false_region
            if not region.blocks or region.block.last_op is None:
                raise Unsupported("an scf.if result without an else")
            index = list(op.results).index(v)  # pyright: ignore[reportArgumentType]
            return self.evaluate(region.block.last_op.operands[index])
        raise Unsupported(f"'{op.name}' computes an index or a condition")

    # -- walk ---------------------------------------------------------------

    def relevant(self, block: Block) -> list[Operation]:
        """The ops of ``block`` that touch a followed argument (or hold
        one that does), computed once per block."""
        ops = self.relevant_ops.get(block)
        if ops is None:
            ops = []
            for op in block_ops(block):
                if not op.regions:  # (most ops: no isinstance, which is slow)
                    if any(o in self.args for o in op._operands):  # pyright: ignore[reportPrivateUsage]
                        ops.append(op)
                elif isinstance(op, scf.ForOp | scf.IfOp):
                    if any(self.relevant(b) for r in op.regions for b in r.blocks):
                        ops.append(op)
                else:
                    raise Unsupported(f"'{op.name}' has regions")
            self.relevant_ops[block] = ops
        return ops

    def run_block(self, block: Block) -> None:
        for op in self.relevant(block):
            if isinstance(op, scf.ForOp):
                self.run_for(op)
            elif isinstance(op, scf.IfOp):
                taken = self.flag(op.cond)
                region = op.true_region if taken else op.false_region
                if region.blocks:
                    self.path.append((op, "then" if taken else "else"))
                    try:
                        self.run_block(region.block)
                    finally:
                        self.path.pop()
            elif isinstance(op, memref.LoadOp):
                self.access(op, op.memref, op.indices, False)
            elif isinstance(op, memref.StoreOp):
                self.access(op, op.memref, op.indices, True)
            else:
                for o in op.operands:
                    if o in self.args:
                        self.failed.add(self.args[o])

    def run_for(self, op: scf.ForOp) -> None:
        lb, ub, step = (self.value(x) for x in (op.lb, op.ub, op.step))
        bounds = [_bounds(x, self.box) for x in (lb, ub, step)]
        if any(lo != hi for lo, hi in bounds) or bounds[2][0] <= 0:
            free = {v for x in (lb, ub, step) for v in _free(x, self.box)}
            if len(free) != 1 or bounds[2][0] <= 0:
                raise Unsupported("a loop whose bounds vary with several counters")
            v = free.pop()  # peel that counter's first iteration
            raise _Split(v, self.box[v][0] + 1)
        first, end, stride = (lo for lo, _ in bounds)
        trip = max(0, -(-(end - first) // stride))
        if trip == 0:
            return
        var = self.vars.setdefault(op, len(self.vars))
        if self.full.setdefault(var, trip) != trip:
            self.varying.add(var)  # (a count that depends on outer counters)
        body = op.body.block
        if self.reverse and not op.iter_args:  # as reverse_loops rewrites it
            iv: Affine = (first + stride * (trip - 1), {var: -stride})
        else:
            iv = (first, {var: stride})
        ranges = [(0, trip - 1)]
        self.path.append((op, "for"))
        try:
            while ranges:
                lo, hi = ranges.pop(0)
                mark = len(self.records)
                saved = self.memo
                self.memo = {}
                self.box[var] = (lo, hi)
                self.env[body.args[0]] = iv
                try:
                    self.run_block(body)
                except _Split as s:
                    if s.var != var:
                        raise
                    del self.records[mark:]
                    ranges[0:0] = [(lo, s.at - 1), (s.at, hi)]
                finally:
                    self.memo = saved
                    del self.box[var]
        finally:
            self.path.pop()

    def access(
        self, op: Operation, ref: SSAValue, indices: object, write: bool
    ) -> None:
        arg = self.args.get(ref)
        if arg is None:
            return
        strides, element = self.shapes[arg]
        idx = list(indices)  # pyright: ignore[reportArgumentType, reportUnknownArgumentType]
        if len(idx) != len(strides):  # pyright: ignore[reportUnknownArgumentType]
            raise Unsupported("an access with the wrong number of indices")
        address: Affine = (0, {})
        for i, s in zip(idx, strides, strict=True):  # pyright: ignore[reportUnknownArgumentType]
            address = _add(address, self.value(i), s * element)  # pyright: ignore[reportUnknownArgumentType]
        self.records.append(
            _Record(arg, write, op, tuple(self.path), address, dict(self.box))
        )
        if len(self.records) > _MAX_RECORDS:
            raise Unsupported("too many pieces")


def _box_size(box: Box) -> int:
    n = 1
    for lo, hi in box.values():
        n *= hi - lo + 1
    return n


def _merge(records: list[_Record]) -> list[_Record]:
    """Records of one access op with one address in pieces that make up a
    box together (pieces never share an iteration): one record."""
    by_op: dict[Operation, list[_Record]] = {}
    for r in records:
        by_op.setdefault(r.op, []).append(r)
    out: list[_Record] = []
    for same in by_op.values():
        first = same[0]
        if len(same) > 1 and all(
            r.address == first.address and r.path == first.path for r in same
        ):
            box = {
                v: (min(r.box[v][0] for r in same), max(r.box[v][1] for r in same))
                for v in first.box
            }
            if sum(_box_size(r.box) for r in same) == _box_size(box):
                out.append(replace(first, box=box))
                continue
        out.extend(same)
    return out


def _positions(f: func.FuncOp) -> dict[Operation, int]:
    out: dict[Operation, int] = {}
    for op in walk_ops(f):
        for region in op.regions:
            for block in region.blocks:
                for k, o in enumerate(block_ops(block)):
                    out[o] = k
    return out


def _exactly_once(groups: list[_Group], elements: int) -> bool:
    """Do the groups (the stores of one argument) write each of its
    ``elements`` exactly once? One group whose counters and constant
    offsets form a mixed-radix numbering from 0 (module doc)."""
    if len(groups) != 1:
        return False
    g = groups[0]
    element = g.element
    dims: list[tuple[int, int]] = []  # (stride in elements, count)
    start = 0
    for v, (lo, hi) in g.box.items():
        c = g.linear.get(v, 0)
        if c == 0 and hi > lo:
            return False  # every iteration of that loop writes the same
        if c % element:
            return False
        step = c // element
        dims.append((abs(step), hi - lo + 1))
        start += min(step * lo, step * hi)
    consts = sorted({c for _, c in g.members})
    if len(consts) != len(g.members) or any(c % element for c in consts):
        return False
    if len(consts) > 1:
        gap = (consts[1] - consts[0]) // element
        if any(b - a != gap * element for a, b in itertools.pairwise(consts)):
            return False
        dims.append((gap, len(consts)))
    start += consts[0] // element
    dims = sorted(d for d in dims if d[1] > 1)
    expected = 1
    for stride, count in dims:
        if stride != expected:
            return False
        expected *= count
    return start == 0 and expected == elements


@dataclass(frozen=True)
class KernelSummary:
    """What a kernel reads and writes, from its access functions (module
    doc). Keys are argument indices."""

    sizes: dict[int, int]
    """Bytes of each followed argument."""
    groups: tuple[_Group, ...]
    exactly_once: frozenset[int]
    """Written arguments whose every element is written exactly once."""
    positions: dict[Operation, int]
    """Each op's position in its block."""
    variables: dict[Operation, int]
    """Each loop's counter."""
    iterations: int
    """The most iterations around one access (the loops the tracer may have
    to enumerate for it, at most)."""
    trips: dict[int, int] = field(default_factory=dict[int, int])
    """Each counter's trip count (``mirrored``)."""
    found: dict[tuple[int, int], tuple[int, int] | None] = field(
        default_factory=dict[tuple[int, int], tuple[int, int] | None],
        compare=False,
        repr=False,
    )
    """``extremes`` of each pair asked for (``max_shift`` and ``min_shift``
    of one pair need the same)."""

    @property
    def followed(self) -> frozenset[int]:
        return frozenset(self.sizes)

    def reads(self, arg: int) -> bool:
        return any(g.arg == arg and not g.write for g in self.groups)

    def writes(self, arg: int) -> bool:
        return any(g.arg == arg and g.write for g in self.groups)

    def covered(self, arg: int) -> bool:
        """Every byte of ``arg`` written (exactly once)."""
        return arg in self.exactly_once

    def independent(self) -> bool:
        """Every element of every written argument written exactly once, and
        never read (``usmp_kernel_direction._independent``)."""
        return all(
            g.arg in self.exactly_once and not self.reads(g.arg)
            for g in self.groups
            if g.write
        )

    def extremes(self, source: int, target: int) -> tuple[int, int] | None:
        """Smallest and largest ``read byte - written byte`` over the
        conflicts (a write of ``target`` no later than a read of
        ``source``); None if there are none."""
        if (source, target) not in self.found:
            self.found[(source, target)] = self._extremes(source, target)
        return self.found[(source, target)]

    def _extremes(self, source: int, target: int) -> tuple[int, int] | None:
        lo: int | None = None
        hi: int | None = None
        for w in self.groups:
            if not (w.write and w.arg == target):
                continue
            for r in self.groups:
                if r.write or r.arg != source:
                    continue
                for a, b in self._pair(w, r):
                    a, b = a - (w.element - 1), b + (r.element - 1)
                    lo = a if lo is None else min(lo, a)
                    hi = b if hi is None else max(hi, b)
        if lo is None or hi is None:
            return None
        return lo, hi

    def max_shift(self, source: int, target: int) -> int:
        """``usmp_kernel_trace.max_shift`` of the two arguments."""
        n = self.sizes[source]
        if n == 0 or self.sizes[target] == 0:
            return n - 1
        e = self.extremes(source, target)
        return n - 1 if e is None else min(n - 1, e[0] - 1)

    def min_shift(self, source: int, target: int) -> int:
        """``usmp_kernel_trace.min_shift`` of the two arguments."""
        m = self.sizes[target]
        if self.sizes[source] == 0 or m == 0:
            return -m + 1
        e = self.extremes(source, target)
        return -m + 1 if e is None else max(-m + 1, e[1] + 1)

    def _keys(self, g: _Group, n: int) -> list[tuple[int, int]]:
        """Where each member of ``g`` sits in the block at depth ``n`` of
        its path: (position, 0 for then / 1 for else)."""
        if n < len(g.path):
            op, kind = g.path[n]
            key = (self.positions[op], int(kind == "else"))
            return [key] * len(g.members)
        return [(p, 0) for p, _ in g.members]

    def _pair(self, w: _Group, r: _Group) -> Iterator[tuple[int, int]]:
        """For each level at which an iteration of ``w`` is no later than
        one of ``r``: the extremes of ``r``'s address - ``w``'s."""
        common: list[int] = []
        n = 0
        while n < len(w.path) and n < len(r.path) and w.path[n] == r.path[n]:
            if w.path[n][1] == "for":
                common.append(self.variables[w.path[n][0]])
            n += 1
        w_consts = [c for _, c in w.members]
        r_consts = [c for _, c in r.members]
        w_keys, r_keys = self._keys(w, n), self._keys(r, n)
        same_iteration = [
            cr - cw
            for kw, (_, cw) in zip(w_keys, w.members, strict=True)
            for kr, (_, cr) in zip(r_keys, r.members, strict=True)
            if kw < kr
        ]
        spread = (min(r_consts) - max(w_consts), max(r_consts) - min(w_consts))
        for p in range(len(common) + 1):
            lo = hi = 0
            feasible = True
            for v in common[:p]:  # equal counters: both boxes at once
                a = max(w.box[v][0], r.box[v][0])
                b = min(w.box[v][1], r.box[v][1])
                if a > b:
                    feasible = False
                    break
                x, y = _extremes(r.linear.get(v, 0) - w.linear.get(v, 0), a, b)
                lo, hi = lo + x, hi + y
            if not feasible:
                continue
            shared = set(common[: p + 1])
            if p < len(common):  # w's counter below r's
                v = common[p]
                e = _triangle(
                    w.linear.get(v, 0), w.box[v], r.linear.get(v, 0), r.box[v]
                )
                if e is None:
                    continue
                lo, hi = lo + e[0], hi + e[1]
                d_lo, d_hi = spread
            else:  # one iteration of every common loop: w's op first
                if not same_iteration:
                    continue
                d_lo, d_hi = min(same_iteration), max(same_iteration)
            for v, c in w.linear.items():
                if v not in shared:
                    x, y = _extremes(-c, *w.box[v])
                    lo, hi = lo + x, hi + y
            for v, c in r.linear.items():
                if v not in shared:
                    x, y = _extremes(c, *r.box[v])
                    lo, hi = lo + x, hi + y
            yield lo + d_lo, hi + d_hi


def _extremes(c: int, lo: int, hi: int) -> tuple[int, int]:
    return min(c * lo, c * hi), max(c * lo, c * hi)


def _triangle(
    cw: int, wi: tuple[int, int], cr: int, rj: tuple[int, int]
) -> tuple[int, int] | None:
    """Extremes of ``cr*j - cw*i`` over ``i`` in ``wi``, ``j`` in ``rj``,
    ``i < j`` (at the vertices of that polygon); None if it is empty."""
    a1, b1 = wi
    a2, b2 = rj
    points = [(i, j) for i in (a1, b1) for j in (a2, b2, i + 1)]
    points += [(j - 1, j) for j in (a2, b2)]
    values = [
        cr * j - cw * i for i, j in points if a1 <= i <= b1 and a2 <= j <= b2 and i < j
    ]
    if not values:
        return None
    return min(values), max(values)


def summarize(
    f: func.FuncOp, args: Collection[int], reverse: bool = False
) -> KernelSummary | None:
    """The summary of ``f`` for the memref arguments ``args`` (with
    ``reverse``: as if ``reverse_loops`` had run); None when the access
    functions do not decide it (module doc)."""
    if not f.body.blocks:
        return None
    s = _Summarizer(f, args, reverse)
    try:
        s.run_block(f.body.block)
    except (Unsupported, _Split):
        return None
    records = _merge([r for r in s.records if r.arg not in s.failed])
    positions = _positions(f)
    groups: dict[tuple[object, ...], _Group] = {}
    for r in records:
        const, linear = r.address
        key = (
            r.arg,
            r.write,
            r.path,
            tuple(sorted(linear.items())),
            tuple(sorted(r.box.items())),
        )
        g = groups.get(key)
        if g is None:
            g = groups[key] = _Group(
                r.arg, r.write, r.path, linear, r.box, s.shapes[r.arg][1]
            )
        g.members.append((positions[r.op], const))
    written: dict[int, list[_Group]] = {}
    for g in groups.values():
        if g.write:
            written.setdefault(g.arg, []).append(g)
    once = frozenset(
        a
        for a, gs in written.items()
        if _exactly_once(gs, s.sizes[a] // s.shapes[a][1])
    )
    return KernelSummary(
        {i: n for i, n in s.sizes.items() if i not in s.failed},
        tuple(groups.values()),
        once,
        positions,
        dict(s.vars),
        max((_box_size(r.box) for r in records), default=0),
        {v: n for v, n in s.full.items() if v not in s.varying},
    )


def mirrored(summary: KernelSummary) -> KernelSummary | None:
    """``summarize(f, args, reverse=True)`` from ``summary``, the forward
    one of ``f`` and ``args``, without walking ``f`` again. Reversing a loop
    (one without ``iter_args``, as ``reverse_loops`` does) maps its counter
    ``k`` to ``trip - 1 - k``, a bijection of its range: each record's
    address ``c + a*k`` becomes ``c + a*(trip - 1) - a*k'`` over the
    mirrored piece ``[trip - 1 - hi, trip - 1 - lo]``; the conditions a walk
    decides hold on the mirrored pieces as on the pieces, so the backward
    walk finds the same pieces mirrored (the order of the groups aside,
    which no fact depends on). None if a loop to reverse has a trip count
    that varies with the pieces (a triangular nest: no one mirror)."""
    reversed_ = [
        v
        for op, v in summary.variables.items()
        if isinstance(op, scf.ForOp) and not op.iter_args
    ]
    if any(v not in summary.trips for v in reversed_):
        return None
    flip = {v: summary.trips[v] - 1 for v in reversed_}
    groups: list[_Group] = []
    for g in summary.groups:
        shift = sum(c * flip[v] for v, c in g.linear.items() if v in flip)
        box = {
            v: (flip[v] - hi, flip[v] - lo) if v in flip else (lo, hi)
            for v, (lo, hi) in g.box.items()
        }
        linear = {v: -c if v in flip else c for v, c in g.linear.items()}
        members = [(p, c + shift) for p, c in g.members]
        groups.append(_Group(g.arg, g.write, g.path, linear, box, g.element, members))
    written: dict[int, list[_Group]] = {}
    for g in groups:
        if g.write:
            written.setdefault(g.arg, []).append(g)
    once = frozenset(
        a
        for a, gs in written.items()
        if _exactly_once(gs, summary.sizes[a] // gs[0].element)
    )
    return KernelSummary(
        dict(summary.sizes),
        tuple(groups),
        once,
        summary.positions,
        summary.variables,
        summary.iterations,
        summary.trips,
    )


@functools.cache
def _compute_kind(cls: type[Operation]) -> str:
    """Which case of ``_Summarizer.compute`` an op of class ``cls`` takes
    (the first whose classes it is one of; once per class: ``isinstance`` on
    xDSL's op classes is slow)."""
    for classes, kind in (
        ((arith.ConstantOp,), "constant"),
        ((arith.ExtSIOp, arith.IndexCastOp), "extsi"),
        ((arith.ExtUIOp,), "extui"),
        ((arith.AddiOp,), "addi"),
        ((arith.SubiOp,), "subi"),
        ((arith.MuliOp,), "muli"),
        ((arith.MaxSIOp, arith.MinSIOp), "minmax"),
        ((arith.CmpiOp,), "cmpi"),
        ((arith.AndIOp, arith.OrIOp, arith.XOrIOp), "bitwise"),
        ((arith.SelectOp,), "select"),
        ((arith.DivSIOp, arith.RemSIOp, arith.FloorDivSIOp), "division"),
        ((scf.IfOp,), "if"),
    ):
        if issubclass(cls, classes):
            return kind
    return ""
