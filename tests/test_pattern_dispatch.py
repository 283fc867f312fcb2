"""``usmp.lowering.pattern_dispatch``: the applier that tries on an op only
the patterns of its class picks, on every op, the pattern xDSL's greedy
applier picks, and ``convert-to-emitc``'s patterns all declare their
classes; its conversion state builds each lvalue type once."""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, ModuleOp, i32
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.test_value import create_ssa_value

from usmp.lowering.pattern_dispatch import TypeDispatchApplier, matched_classes


class _Erase(RewritePattern):
    """Base of the test patterns: records the ops it is called on; erases
    the op (an action) when ``acts`` says so."""

    def __init__(self, log: list[str], name: str):
        self.log, self.name = log, name

    def act(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.log.append(self.name)
        rewriter.erase(op)


class _Addi(_Erase):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp, rewriter: PatternRewriter) -> None:
        self.act(op, rewriter)


class _AddOrMul(_Erase):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.AddiOp | arith.MuliOp, rewriter: PatternRewriter
    ) -> None:
        self.act(op, rewriter)


class _Table(_Erase):
    op_classes = (arith.SubiOp,)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) in self.op_classes:
            self.act(op, rewriter)


class _Signless(_Erase):
    """Matches by a base class: every signless integer binary op."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.SignlessIntegerBinaryOperation, rewriter: PatternRewriter
    ) -> None:
        self.act(op, rewriter)


class _Any(_Erase):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, arith.ConstantOp | arith.MuliOp | arith.SubiOp):
            self.act(op, rewriter)


def _ops() -> list[Operation]:
    a, b = create_ssa_value(i32), create_ssa_value(i32)
    return [
        arith.AddiOp(a, b),
        arith.MuliOp(a, b),
        arith.SubiOp(a, b),
        arith.AndIOp(a, b),
        arith.ConstantOp.from_int_and_width(3, i32),
        arith.ConstantOp.from_int_and_width(3, IndexType()),
    ]


def _picks(applier_of: type) -> list[str]:
    log: list[str] = []
    patterns: list[RewritePattern] = [
        cls(log, cls.__name__) for cls in (_Table, _Addi, _Signless, _AddOrMul, _Any)
    ]
    applier = (
        GreedyRewritePatternApplier(patterns, dce_enabled=False)
        if applier_of is GreedyRewritePatternApplier
        else TypeDispatchApplier(patterns)
    )
    for op in _ops():
        module = ModuleOp([op])
        applier.match_and_rewrite(op, PatternRewriter(op))
        log.append(f"{op.name}: {len(module.body.block.ops)} left")
    return log


def test_the_same_pattern_rewrites_every_op() -> None:
    expected = _picks(GreedyRewritePatternApplier)
    assert _picks(TypeDispatchApplier) == expected
    assert expected[:4] == [
        "_Addi",
        "arith.addi: 0 left",
        "_Signless",
        "arith.muli: 0 left",
    ]


def test_classes_of_patterns() -> None:
    log: list[str] = []
    assert matched_classes(_Addi(log, "")) == (arith.AddiOp,)
    assert matched_classes(_AddOrMul(log, "")) == (arith.AddiOp, arith.MuliOp)
    assert matched_classes(_Table(log, "")) == (arith.SubiOp,)
    assert matched_classes(_Any(log, "")) is None
    applier = TypeDispatchApplier(
        [_Addi(log, "a"), _Any(log, "any"), _Signless(log, "s")]
    )
    names = [p.name for p in applier.candidates(arith.AddiOp)]  # pyright: ignore
    assert names == ["a", "any", "s"]
    assert [p.name for p in applier.candidates(scf.ForOp)] == ["any"]  # pyright: ignore


def test_convert_to_emitc_patterns_declare_their_classes() -> None:
    """Every pattern of ``convert-to-emitc`` but the two that report
    unsupported ops is tried only on its own classes, so a load meets two
    patterns (its own and the reporter's), not forty."""
    from usmp.lowering.convert_to_emitc import conversion_patterns
    from usmp.lowering.convert_to_emitc_common import ConversionState
    from usmp.lowering.convert_to_emitc_module import ModuleInfo

    patterns = conversion_patterns(ConversionState(), ModuleInfo.of(ModuleOp([])))
    generic = [type(p).__name__ for p in patterns if matched_classes(p) is None]
    assert generic == ["UnsupportedScfOpLowering", "UnsupportedOpLowering"]
    applier = TypeDispatchApplier(patterns)
    load = [type(p).__name__ for p in applier.candidates(memref.LoadOp)]
    assert load == ["LoadOpLowering", *generic]


def test_conversion_builds_each_lvalue_type_once() -> None:
    """``ConversionState.lvalue_type``: the type ``emitc.LValueType`` builds,
    one object per value type for the whole run."""
    from xdsl.dialects.builtin import f32

    from usmp.dialects import emitc
    from usmp.lowering.convert_to_emitc_common import ConversionState

    state = ConversionState()
    for value_type in (i32, f32, emitc.PointerType(i32)):
        built = state.lvalue_type(value_type)
        assert built == emitc.LValueType(value_type)
        assert state.lvalue_type(value_type) is built
    assert state.lvalue_type(i32) != state.lvalue_type(f32)


_ORDER_IR = """
func.func @f(%n: index, %c: i1) {
  %a = arith.constant 1 : i32
  scf.for %i = %n to %n step %n {
    %b = arith.addi %a, %a : i32
    scf.if %c {
      %d = arith.subi %a, %a : i32
    } {drop}
    %e = arith.muli %a, %a : i32
  }
  %f = arith.subi %a, %a : i32
  func.return
}
"""


class _Visits(RewritePattern):
    """Logs every op it is called on; erases an ``scf.if`` marked ``drop``
    (and the ops in it), puts a new ``arith.andi`` before every ``addi``,
    and moves an ``arith.muli`` to the end of the function's block."""

    def __init__(self, log: list[str]):
        self.log = log

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.log.append(op.name)
        if isinstance(op, scf.IfOp) and "drop" in op.attributes:
            rewriter.erase(op)
        elif isinstance(op, arith.AddiOp):
            rewriter.insert(arith.AndIOp(op.lhs, op.rhs), InsertPoint.before(op))
        elif isinstance(op, arith.MuliOp):
            block = op.parent_op().parent_block()  # pyright: ignore
            op.detach()
            rewriter.insert(op, InsertPoint.before(block.last_op))  # pyright: ignore


def _visits(drive: str) -> tuple[list[str], str]:
    from xdsl.context import Context
    from xdsl.dialects import func
    from xdsl.parser import Parser
    from xdsl.pattern_rewriter import PatternRewriteWalker

    from usmp.lowering.pattern_dispatch import rewrite_in_order

    ctx = Context()
    for dialect in (arith.Arith, scf.Scf, func.Func):
        ctx.load_dialect(dialect)
    module = Parser(ctx, _ORDER_IR).parse_module()
    log: list[str] = []
    if drive == "walker":
        walker = PatternRewriteWalker(_Visits(log), apply_recursively=False)
        walker.rewrite_module(module)
    else:
        rewrite_in_order(module.body, _Visits(log))
    return log, str(module)


def test_rewrite_in_order_visits_as_the_walker() -> None:
    """``rewrite_in_order`` calls the pattern on the ops the walker calls it
    on, in its order: pre-order, not the ops a rewrite builds, not the ops
    of an erased op, a moved op once; the IR afterwards is the same."""
    log, ir = _visits("in-order")
    assert (log, ir) == _visits("walker")
    assert log == [
        "func.func",
        "arith.constant",
        "scf.for",
        "arith.addi",
        "scf.if",
        "arith.muli",
        "scf.yield",
        "arith.subi",
        "func.return",
    ]


def test_insert_point_before_is_the_constructor() -> None:
    """``insert_point_before`` builds the ``InsertPoint`` xDSL's constructor
    builds (equal, the same fields, still frozen): the dataclass has only
    the two fields it writes."""
    import dataclasses

    import pytest

    from usmp.lowering.pattern_dispatch import insert_point_before

    assert [f.name for f in dataclasses.fields(InsertPoint)] == [
        "block",
        "insert_before",
    ]
    assert not hasattr(InsertPoint, "__slots__")
    ops = [arith.ConstantOp.from_int_and_width(k, 32) for k in range(3)]
    block = Block(ops)
    for op in ops:
        ours, theirs = insert_point_before(block, op), InsertPoint(block, op)
        assert type(ours) is InsertPoint
        assert ours == theirs and vars(ours) == vars(theirs)
        assert ours.block is block and ours.insert_before is op
        with pytest.raises(dataclasses.FrozenInstanceError):
            ours.block = Block()  # pyright: ignore[reportAttributeAccessIssue]


class _Points(RewritePattern):
    """Reads the rewriter's insertion point: before erasing an ``scf.if``
    and after, and around moving a ``muli`` to the end of the function's
    block with an insertion point of its own; inserts an ``andi`` at the
    implicit point before every ``addi``."""

    def __init__(self, seen: list[tuple[Block, Operation | None]]):
        self.seen = seen

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        before = rewriter.insertion_point
        assert (before.block, before.insert_before) == (op.parent, op)
        if isinstance(op, scf.IfOp):
            block = op.parent
            rewriter.erase(op)
            point = rewriter.insertion_point  # the place the op had
            assert (point.block, point.insert_before) == (block, op)
        elif isinstance(op, arith.AddiOp):
            rewriter.insert(arith.AndIOp(op.lhs, op.rhs))
        elif isinstance(op, arith.MuliOp):
            end = InsertPoint.at_end(op.parent_op().parent_block())  # pyright: ignore
            rewriter.insertion_point = end
            assert rewriter.insertion_point is end
        point = rewriter.insertion_point
        self.seen.append((point.block, point.insert_before))


def test_the_insertion_point_is_before_the_op_until_a_pattern_sets_it() -> None:
    """``rewrite_in_order``'s rewriter has the walker's insertion point at
    every op (built when read), the one a pattern sets after that, and the
    implicit insertions land where the walker's do."""
    from xdsl.context import Context
    from xdsl.dialects import func
    from xdsl.parser import Parser
    from xdsl.pattern_rewriter import PatternRewriteWalker

    from usmp.lowering.pattern_dispatch import rewrite_in_order

    results: list[tuple[list[tuple[int, int]], str]] = []
    for drive in ("walker", "in-order"):
        ctx = Context()
        for dialect in (arith.Arith, scf.Scf, func.Func):
            ctx.load_dialect(dialect)
        module = Parser(ctx, _ORDER_IR).parse_module()
        seen: list[tuple[Block, Operation | None]] = []
        if drive == "walker":
            walker = PatternRewriteWalker(_Points(seen), apply_recursively=False)
            walker.rewrite_module(module)
        else:
            rewrite_in_order(module.body, _Points(seen))
        ops = {id(o): k for k, o in enumerate(module.walk())}
        blocks = {id(b): k for k, b in enumerate(module.walk_blocks())}
        placed = [
            (blocks.get(id(b), -1), -1 if o is None else ops.get(id(o), -2))
            for b, o in seen
        ]
        results.append((placed, str(module)))
    assert results[0] == results[1]
    assert len(results[0][0]) == 9  # every op but the one in the erased scf.if
