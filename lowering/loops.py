"""Builder for operator loop nests in ``scf``/``arith``/``memref``/``math``.

``KernelBuilder`` appends ops to a current block and knows how to open
``scf.for`` loops (with scalar accumulators as ``iter_args``) and value-
yielding ``scf.if``s. Constants (and constant tables) are hoisted to the top
of the function and shared, and every other pure scalar op is placed in the
outermost enclosing block where its operands exist (loop-invariant code
motion as the nest is built), so loop bodies hold only the work that
depends on their induction variables.

Index arithmetic takes ``Ix`` = ``int | SSAValue`` (an ``index`` value):
operations on two Python ints fold, ``x + 0``/``x * 1`` are free, so loop
nests over static shapes carry no dead index code.

Scalar arithmetic by element type (``add``, ``max``, ``convert``, ...) is
``ScalarArithmetic`` (``scalar.py``), emitted through ``emit``.

Why not build plainly and run xDSL's ``licm`` / ``cse`` / ``canonicalize``
afterwards? Measured (lower-ops on each lowered prim func, vww_96_int8 /
kws_ref_model, process CPU s of ``usmp-compile``, fastest of 3, on the
shared 2-core machine):

    ==========================  ==============  ==============
    variant                     vww compile     kws compile
                                (lower-ops)     (lower-ops)
    ==========================  ==============  ==============
    this builder                1.99 (0.28)     0.78 (0.11)
    plain + licm + cse          2.26 (0.58)     0.88 (0.22)
    + canonicalize first        3.06 (1.33)     1.15 (0.57)
    ==========================  ==============  ==============

The generated C ran no faster (``benchmarks/models.py``, gcc -O2, us per
inference, builder vs plain + licm + cse: kws 435 / 436, vww 1265 / 1280,
ResNet-8 int8 1476 / 1473, ad01 int8 24.5 / 24.8, kws f32 584 / 590):
gcc does its own LICM and CSE, so what the builder buys is compile time
(lower-ops 2x faster, 4.7x with canonicalize: a plain build creates every
op, and the passes then walk and hash all of them) and control. xDSL's
``licm`` hoists out of ``scf.for`` only, not out of ``scf.if`` branches,
and treats ``arith.shli``/``shrsi``/``remsi``/``fptosi`` as speculatable,
so it would hoist a variable shift or a float to int conversion out of a
loop that may run zero times, where C leaves it undefined; the builder
keeps such ops in place (``_may_trap``). So the builder stays.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache, lru_cache

import numpy as np
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from usmp.lowering.convert_to_emitc_ir import append_op
from usmp.lowering.create import create, create_with_regions
from usmp.lowering.dsp import is_arithmetic_call
from usmp.lowering.scalar import Ix, ScalarArithmetic, is_float, is_unsigned

INDEX = IndexType()
I1 = IntegerType(1)
_PURE_DIALECTS = ("arith.", "math.")


_DIVISIONS = (
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
    arith.FloorDivSIOp,
)
_SHIFTS = (arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp)


def _constant_int(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _may_trap(op: Operation) -> bool:
    """Whether ``op`` is undefined in C for some operands, so it must stay
    where control flow guards it: an integer division by anything but a
    constant other than 0 and -1, a shift by anything but a constant below
    the width, a float to integer conversion (undefined out of range)."""
    kind = _trap_kind(type(op))
    if kind is None:
        return False
    if kind == "convert":
        return True
    if kind == "division":
        return _constant_int(op.operands[1]) in (None, 0, -1)
    amount = _constant_int(op.operands[1])
    width = op.operands[0].type
    assert isinstance(width, IntegerType | IndexType)
    bits = width.width.data if isinstance(width, IntegerType) else 32
    return amount is None or not 0 <= amount < bits


@cache
def _trap_kind(cls: type[Operation]) -> str | None:
    """``_may_trap``'s case for an op class, decided once per class (the
    ``isinstance`` checks against the op classes, each through
    ``ABCMeta.__instancecheck__``, ran for every op the builder emits)."""
    if issubclass(cls, arith.FPToSIOp | arith.FPToUIOp):
        return "convert"
    if issubclass(cls, _DIVISIONS):
        return "division"
    if issubclass(cls, _SHIFTS):
        return "shift"
    return None


_SAFE, _CALL = "safe", "call"


@cache
def _kind(cls: type[Operation]) -> str | None:
    """What ``emit`` needs of an op class, decided once per class: None
    for an op it places where it is (not ``arith``/``math``), ``_CALL``
    for ``emitc.call_opaque`` (shared when it calls an arithmetic helper:
    ``dsp.is_arithmetic_call``), ``_SAFE`` for a pure op defined for all
    operands, else the op's ``_trap_kind`` (``_may_trap`` decides per op)."""
    if cls.name == "emitc.call_opaque":
        return _CALL
    if not cls.name.startswith(_PURE_DIALECTS):
        return None
    return _trap_kind(cls) or _SAFE


_CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
"""``arith.cmpi``'s predicates, by their number."""


@cache
def _cmpi_predicate(predicate: str) -> IntegerAttr:
    return IntegerAttr(_CMPI_PREDICATES.index(predicate), 64)


def cmpi(predicate: str, lhs: SSAValue, rhs: SSAValue) -> arith.CmpiOp:
    """``arith.CmpiOp(lhs, rhs, predicate)``, built with ``create``."""
    return create(arith.CmpiOp, (lhs, rhs), I1, predicate=_cmpi_predicate(predicate))


@lru_cache(maxsize=4096)
def integer_attr(value: int, type_: Attribute) -> IntegerAttr:
    """``IntegerAttr(value, type_)``, built (and verified: a range check
    and a constraint walk per attribute) once per value and type for all the
    kernels, not once per kernel that hoists the constant."""
    return IntegerAttr(value, type_)  # pyright: ignore[reportCallIssue, reportArgumentType]


class _OpKey:
    """What makes two pure ops the same (``emit``): the name and operands,
    and the properties, attributes and result types. Hashed on the name and
    operands alone (SSA values hash by identity), compared on everything:
    hashing the attributes goes through a Python ``__hash__`` per attribute
    and parameter, for every op the builder emits, while ops with the same
    name and operands that differ in the rest (a ``cmpi`` predicate) are
    few. The rest is read from the ops only when two heads are equal (a
    reuse, mostly): most emitted ops are new, and the builder changes no
    op it has emitted while its memo holds it."""

    __slots__ = ("head", "op", "hash")

    def __init__(self, head: tuple[str, tuple[SSAValue, ...]], op: Operation):
        self.head = head
        self.op = op
        # (the operands' ids are their hashes, read without a Python
        # ``__hash__`` call each; ``op`` keeps them alive)
        self.hash = hash((head[0], tuple(map(id, head[1]))))

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is _OpKey
            and self.head == other.head
            and _rest(self.op) == _rest(other.op)
        )


def _rest(op: Operation) -> tuple[tuple[object, ...], ...]:
    """What ``_OpKey`` compares besides the name and operands: the
    properties (by name), the attributes, the result types."""
    properties = op.properties
    return (
        tuple(sorted(properties.items())) if properties else (),
        tuple(op.attributes.items()),
        tuple([r.type for r in op.results]),
    )


class _Constants:
    """The constants of one scalar type a builder has hoisted, by value
    (``KernelBuilder.const``), and what ``const`` reads of the type."""

    __slots__ = ("by_value", "f32", "floating", "unsigned", "width")

    def __init__(self, type_: Attribute):
        self.by_value: dict[int | str, SSAValue] = {}
        """Integer value, or ``repr`` of a float value -> its constant."""
        self.floating = is_float(type_)
        self.f32 = isinstance(type_, Float32Type)
        self.width = type_.width.data if isinstance(type_, IntegerType) else None
        """The integer type's width (None: ``index``, no wrap-around)."""
        self.unsigned = is_unsigned(type_)


class _Scope:
    """A block under construction and what to undo in the builder's memo
    when it closes."""

    def __init__(self, block: Block, guarded: bool = False):
        self.block = block
        self.remembered: list[tuple[Hashable, SSAValue | None]] = []
        """The keys remembered in this block, each with the value it had
        before (``None``: none), in order."""
        self.guarded = guarded
        """A branch of an ``scf.if``: what it reads may be valid only here."""


class KernelBuilder(ScalarArithmetic):
    """Appends ops to a block of a function under construction.

    Blocks nest (loop bodies, branches); the builder keeps the stack of open
    ones. A pure ``arith``/``math`` op is placed in the outermost open block
    where all its operands are defined, i.e. right before the loop (or
    ``scf.if``) that the current block belongs to is emitted: loop-invariant
    code (window bounds of an output row, reshape div/rem of an outer index,
    ...) lands outside the loops it does not depend on, as it is built. Ops
    that C leaves undefined for some operands (``_may_trap``: divisions by a
    possibly zero value, variable shifts, float to int conversions) stay in
    place, so nothing is speculated out of the ``scf.if`` guarding it."""

    def __init__(self, entry: Block):
        self.entry = entry
        self._hoisted: list[Operation] = []
        self._indices: dict[int, SSAValue] = {}
        """``index``'s constants by value (``const``'s, without its
        normalisation: every load and store asks for its static indices)."""
        self._conversions = {}
        self._valued: list[Operation] = []
        """Every op placed (``emit``, ``hoist``, ``load_invariant``) that
        has results (``has_unused_values``)."""
        self._constants: dict[Attribute, _Constants] = {}
        """The hoisted constants, by type (equal types share a table)."""
        self._constants_of: dict[int, tuple[Attribute, _Constants]] = {}
        """``_constants``' tables by the ``id`` of each type object ``const``
        was given (kept alive by the entry, so an id is never reused)."""
        self._scopes: list[_Scope] = [_Scope(entry)]
        self._memo: dict[Hashable, SSAValue] = {}
        """The values remembered in the open blocks (one dict for all, each
        key hashed once per lookup, not once per enclosing block): a block
        that closes takes its own out again (``_Scope.remembered``). A key
        is remembered in an enclosing block only where no open block has it
        (``emit`` looks it up first), and in the current block over any
        enclosing one's, so the value found is the innermost's, as when each
        block had its own memo searched from the current one outwards."""
        self.lookup: Callable[[Hashable], SSAValue | None] = self._memo.get
        """A value remembered in the current block or an enclosing one (the
        memo's ``get``: a lookup per element request, no Python call)."""
        self._depth: dict[SSAValue, int] = dict.fromkeys(entry.args, 0)
        """Index in ``_scopes`` of the block defining a value (values not
        created through the builder: the current block)."""
        self.location: LocationAttr | None = None
        """Given to every op emitted (the location of the relay operator
        being lowered), unless ``None``."""

    @property
    def block(self) -> Block:
        """The block ops are appended to."""
        return self._scopes[-1].block

    # -- insertion ---------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        """Append ``op``; return its (first) result if it has one.

        A pure ``arith``/``math`` op goes to the outermost open block where
        its operands are available (see the class), and one equal to an op
        already available there (same name, operands, properties and result
        types) is not emitted twice: its earlier result is reused (local
        CSE, so the per-element code computes each index once)."""
        if self.location is not None:
            op.location = self.location
        depth = len(self._scopes) - 1
        key: Hashable | None = None
        name = op.name
        kind = _kind(type(op))
        if (kind is _CALL and is_arithmetic_call(op)) or (
            kind is not _CALL and kind is not None and not op.regions
        ):
            # (``op.operands`` is a new view at each access, read element by
            # element through ``__getitem__``)
            operands = tuple(op._operands)  # pyright: ignore[reportPrivateUsage]
            key = _OpKey((name, operands), op)
            known = self.lookup(key)
            if known is not None:
                op.erase()
                return known
            if kind is _SAFE or not _may_trap(op):
                known_depth = self._depth.get  # (_depth_of, inlined)
                deepest = 0  # (max over the operands, as a loop: no generator)
                for v in operands:
                    if (d := known_depth(v, depth)) > deepest:
                        deepest = d
                depth = deepest
        scope = self._scopes[depth]
        append_op(scope.block, op)
        result = None
        depths = self._depth
        for r in op.results:  # (iterated: indexing ``SSAValues`` is a Python call)
            depths[r] = depth
            if result is None:
                result = r
        if result is not None:
            self._valued.append(op)
            if key is not None:
                # (``_store``, inlined: ``lookup`` found no value for ``key``)
                scope.remembered.append((key, None))
                self._memo[key] = result
        return result  # type: ignore[return-value]

    def _depth_of(self, value: SSAValue) -> int:
        return self._depth.get(value, len(self._scopes) - 1)

    def hoist(self, op: Operation) -> SSAValue:
        """Place ``op`` at the top of the function (constants, tables)."""
        self._hoisted.append(op)
        self._valued.append(op)
        for r in op.results:
            self._depth[r] = 0
        return op.results[0]

    def has_unused_values(self) -> bool:
        """Whether an op this builder placed has results and none of them
        is used (dead code: ``dead_code.erase_dead_code`` has work only
        then, if every op of the function was placed by the builder)."""
        for op in self._valued:
            for r in op.results:
                if r.first_use is not None:
                    break
            else:
                return True
        return False

    def finish(self) -> None:
        """Move hoisted ops to the start of the entry block, in order."""
        first = self.entry.first_op
        for op in self._hoisted:
            if first is None:
                self.entry.add_op(op)
            else:
                self.entry.insert_op_before(op, first)
        self._hoisted.clear()

    @contextmanager
    def at(self, block: Block, guarded: bool = False) -> Iterator[None]:
        """Emit into ``block`` (a loop body, or with ``guarded`` a branch,
        under construction, nested in the current block)."""
        self._scopes.append(_Scope(block, guarded))
        for arg in block.args:
            self._depth[arg] = len(self._scopes) - 1
        try:
            yield
        finally:
            memo = self._memo
            for key, before in reversed(self._scopes.pop().remembered):
                if before is None:
                    del memo[key]
                else:
                    memo[key] = before

    def remember(self, key: Hashable, value: SSAValue) -> None:
        """Remember ``value`` for the rest of the current block."""
        memo = self._memo  # (``_store``, inlined)
        self._scopes[-1].remembered.append((key, memo.get(key)))
        memo[key] = value

    def remember_new(self, key: Hashable, value: SSAValue) -> None:
        """``remember`` for a key no open block has (``lookup`` finds no
        value): nothing to restore when the block closes."""
        self._scopes[-1].remembered.append((key, None))
        self._memo[key] = value

    def _store(self, scope: _Scope, key: Hashable, value: SSAValue) -> None:
        memo = self._memo
        scope.remembered.append((key, memo.get(key)))
        memo[key] = value

    # -- constants ---------------------------------------------------------

    def const(self, value: float, type_: Attribute) -> SSAValue:
        """A hoisted, shared ``arith.constant`` of a scalar type (integers
        are taken modulo 2**width, as two's complement bit patterns)."""
        found = self._constants_of.get(id(type_))
        of_type = self._of_type(type_) if found is None else found[1]
        if of_type.floating:
            value = float(value)
            if of_type.f32:  # the value the constant will hold
                value = float(np.float32(value))
            key: int | str = repr(value)
        else:
            number = int(value)
            width = of_type.width
            if width is not None:
                number &= (1 << width) - 1
                if not of_type.unsigned and number >= 1 << (width - 1):
                    number -= 1 << width
            key = value = number
        by_value = of_type.by_value
        cached = by_value.get(key)
        if cached is None:
            attr: Attribute
            if of_type.floating:
                attr = FloatAttr(value, type_)  # type: ignore[arg-type]
            else:
                attr = integer_attr(value, type_)
            cached = self.hoist(create(arith.ConstantOp, (), type_, value=attr))
            by_value[key] = cached
        return cached

    def _of_type(self, type_: Attribute) -> _Constants:
        """``type_``'s constants (one table per equal type), remembered for
        this type object (``const`` finds it by identity: a type's hash is a
        Python ``__hash__`` per parameter)."""
        of_type = self._constants.get(type_)
        if of_type is None:
            of_type = self._constants[type_] = _Constants(type_)
        self._constants_of[id(type_)] = (type_, of_type)
        return of_type

    def index(self, v: Ix) -> SSAValue:
        """``v`` as an SSA ``index`` value."""
        if not isinstance(v, int):
            return v
        known = self._indices.get(v)
        if known is None:
            known = self._indices[v] = self.const(v, INDEX)
        return known

    # -- index arithmetic (folding) ----------------------------------------

    def iadd(self, a: Ix, b: Ix) -> Ix:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        return self.emit(create(arith.AddiOp, (self.index(a), self.index(b)), INDEX))

    def isub(self, a: Ix, b: Ix) -> Ix:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if isinstance(b, int) and b == 0:
            return a
        return self.emit(create(arith.SubiOp, (self.index(a), self.index(b)), INDEX))

    def imul(self, a: Ix, b: Ix) -> Ix:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if isinstance(b, int) and b in (0, 1):
            return a if b == 1 else 0
        if isinstance(a, int) and a in (0, 1):
            return b if a == 1 else 0
        return self.emit(create(arith.MuliOp, (self.index(a), self.index(b)), INDEX))

    def idiv(self, a: Ix, b: int) -> Ix:
        """``a / b`` for ``a >= 0`` (truncating = floor)."""
        if isinstance(a, int):
            return a // b
        if b == 1:
            return a
        return self.emit(create(arith.DivSIOp, (a, self.index(b)), INDEX))

    def ishr(self, a: Ix, bits: int) -> Ix:
        """``a >> bits``: ``a / 2**bits`` for ``a >= 0``, one shift in C
        (a signed division needs a rounding step unless the C compiler
        proves ``a >= 0``)."""
        if isinstance(a, int):
            return a >> bits
        if bits == 0:
            return a
        return self.emit(create(arith.ShRSIOp, (a, self.index(bits)), INDEX))

    def irem(self, a: Ix, b: int) -> Ix:
        """``a % b`` for ``a >= 0``."""
        if isinstance(a, int):
            return a % b
        if b == 1:
            return 0
        return self.emit(create(arith.RemSIOp, (a, self.index(b)), INDEX))

    def imax(self, a: Ix, b: Ix) -> Ix:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        return self.emit(create(arith.MaxSIOp, (self.index(a), self.index(b)), INDEX))

    def imin(self, a: Ix, b: Ix) -> Ix:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self.emit(create(arith.MinSIOp, (self.index(a), self.index(b)), INDEX))

    def icmp(self, predicate: str, a: Ix, b: Ix) -> SSAValue:
        return self.emit(cmpi(predicate, self.index(a), self.index(b)))

    def i1_and(self, conditions: Sequence[SSAValue]) -> SSAValue:
        result = conditions[0]
        for c in conditions[1:]:
            result = self.emit(create(arith.AndIOp, (result, c), result.type))
        return result

    # -- memory ------------------------------------------------------------

    def load(self, buffer: SSAValue, indices: Sequence[Ix]) -> SSAValue:
        type_ = buffer.type
        assert isinstance(type_, MemRefType)
        index = self.index
        operands = (buffer, *[index(i) for i in indices])
        return self.emit(create(memref.LoadOp, operands, type_.element_type))

    def load_invariant(self, buffer: SSAValue, indices: Sequence[Ix]) -> SSAValue:
        """A load from a buffer the kernel never writes (a constant table, an
        input) at indices that are in bounds wherever they are defined, placed
        like a pure op: in the outermost open block where the indices exist,
        but never outside the innermost ``scf.if`` branch (whose condition may
        be what keeps the indices in bounds), and shared."""
        operands = (buffer, *(self.index(i) for i in indices))
        key = ("load_invariant", operands)
        known = self.lookup(key)
        if known is not None:
            return known
        guard = max(
            (d for d, scope in enumerate(self._scopes) if scope.guarded), default=0
        )
        depth = max(guard, *(self._depth_of(v) for v in operands))
        type_ = buffer.type
        assert isinstance(type_, MemRefType)
        op = create(memref.LoadOp, operands, type_.element_type)
        if self.location is not None:
            op.location = self.location
        scope = self._scopes[depth]
        append_op(scope.block, op)
        self._valued.append(op)
        result = op.results[0]
        self._depth[result] = depth
        self._store(scope, key, result)
        return result

    def store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[Ix]) -> None:
        operands = (value, buffer, *(self.index(i) for i in indices))
        self.emit(create(memref.StoreOp, operands))

    # -- control flow ------------------------------------------------------

    def loop(
        self,
        lower: Ix,
        upper: Ix,
        body: Callable[[SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
        inits: Sequence[SSAValue] = (),
        step: int = 1,
    ) -> list[SSAValue]:
        """``scf.for %iv = lower to upper step step iter_args(inits)``;
        ``body`` gets the induction variable and the iteration values and
        returns the values to yield. Returns the loop's results."""
        block = Block(arg_types=[INDEX, *(v.type for v in inits)])
        with self.at(block):
            yielded = body(block.args[0], block.args[1:])
            self.emit(create(scf.YieldOp, yielded))
        op = create_with_regions(
            scf.ForOp,
            (self.index(lower), self.index(upper), self.index(step), *inits),
            [v.type for v in inits],
            [Region(block)],
        )
        self.emit(op)
        return list(op.results)

    def loop_nest(
        self,
        extents: Sequence[int],
        body: Callable[[list[Ix]], None],
        step: int = 1,
    ) -> None:
        """Loops over ``0 <= i_k < extents[k]`` (no loop for a single
        iteration). The innermost dimension advances by ``step`` (a divisor
        of its extent): ``body`` gets the first index of each run of
        ``step`` consecutive ones."""

        def nest(k: int, ivs: list[Ix]) -> None:
            if k == len(extents):
                body(ivs)
                return
            stride = step if k == len(extents) - 1 else 1
            if extents[k] == stride:
                nest(k + 1, [*ivs, 0])
                return

            def inner(iv: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
                nest(k + 1, [*ivs, iv])
                return []

            self.loop(0, extents[k], inner, step=stride)

        nest(0, [])

    def reduce(
        self,
        bounds: Sequence[tuple[Ix, Ix]],
        inits: Sequence[SSAValue],
        body: Callable[[list[Ix], Sequence[SSAValue]], Sequence[SSAValue]],
        unroll: int = 1,
    ) -> list[SSAValue]:
        """A loop nest over ``lo_k <= i_k < hi_k`` threading the accumulators
        ``inits`` through ``iter_args``; a static single-trip dimension
        gets no loop.

        ``unroll`` > 1 unrolls the innermost dimension with more than one
        tap, when it is static: one of at most ``unroll`` taps gets no loop
        (the body is emitted once per tap, with constant indices), a longer
        one runs ``u`` taps per iteration (step ``u``, the body emitted for
        ``iv``, ``iv + 1``, ...), ``u`` the largest divisor of its trip
        count up to ``unroll``. Taps are accumulated in their original order
        either way (float sums are unchanged)."""

        def single(lo: Ix, hi: Ix) -> bool:
            return isinstance(lo, int) and isinstance(hi, int) and hi - lo == 1

        # the innermost dimension that gets a loop
        last = max((k for k, b in enumerate(bounds) if not single(*b)), default=-1)

        def nest(k: int, ivs: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
            if k == len(bounds):
                return list(body(ivs, accs))
            lo, hi = bounds[k]
            if isinstance(lo, int) and isinstance(hi, int):
                taps = hi - lo
                if taps == 1 or (k == last and taps <= unroll):
                    for tap in range(lo, hi):
                        accs = nest(k + 1, [*ivs, tap], accs)
                    return list(accs)
                if k == last and unroll > 1:
                    step = max(u for u in range(1, unroll + 1) if taps % u == 0)
                    if step > 1:

                        def unrolled(
                            iv: SSAValue, args: Sequence[SSAValue]
                        ) -> list[SSAValue]:
                            for q in range(step):
                                args = nest(k + 1, [*ivs, self.iadd(iv, q)], args)
                            return list(args)

                        return self.loop(lo, hi, unrolled, accs, step)

            def inner(iv: SSAValue, args: Sequence[SSAValue]) -> list[SSAValue]:
                return nest(k + 1, [*ivs, iv], args)

            return self.loop(lo, hi, inner, accs)

        return nest(0, [], inits)

    def select_if(
        self,
        condition: SSAValue,
        result_type: Attribute,
        then: Callable[[], SSAValue],
        otherwise: Callable[[], SSAValue],
    ) -> SSAValue:
        """``scf.if`` yielding one value computed only on the taken branch."""
        return self.select_if_many(
            condition, [result_type], lambda: [then()], lambda: [otherwise()]
        )[0]

    def select_if_many(
        self,
        condition: SSAValue,
        result_types: Sequence[Attribute],
        then: Callable[[], Sequence[SSAValue]],
        otherwise: Callable[[], Sequence[SSAValue]],
    ) -> list[SSAValue]:
        """``scf.if`` yielding values computed only on the taken branch."""
        blocks = []
        for branch in (then, otherwise):
            block = Block()
            with self.at(block, guarded=True):
                self.emit(create(scf.YieldOp, branch()))
            blocks.append(block)
        op = create_with_regions(
            scf.IfOp, (condition,), result_types, [Region(b) for b in blocks]
        )
        self.emit(op)
        return list(op.results)
