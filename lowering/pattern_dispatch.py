"""``TypeDispatchApplier``: xDSL's ``GreedyRewritePatternApplier`` (no
folding, no dead-code erasure) that tries on an op only the patterns that
can match its class.

xDSL's applier calls every pattern on every op until one rewrites it; a
pattern declared with ``@op_type_rewrite_pattern`` returns at once unless
the op is an instance of the class its signature names. With the dozens of
patterns of ``convert-to-emitc`` that was about five calls and
``isinstance`` tests per op (54,000 for MobileNetV2's 11,600 ops). This
applier reads each pattern's class once and keeps, per op class met, the
patterns whose class it is a subclass of, in their order, with every
pattern it cannot read (a plain ``match_and_rewrite``) kept for every op
class: the first pattern that rewrites an op is the one xDSL's applier
would have picked.

``rewrite_in_order`` is the driver for a conversion that rewrites every op
once (``convert-to-emitc``): xDSL's ``PatternRewriteWalker`` with
``apply_recursively=False`` on a list instead of a worklist, and a rewriter
with no listener. The walker pushes every op on its worklist, takes the
ops a rewrite erases off it, and tells its listener of every op a rewrite
inserts, modifies or erases (each use a ``replace_all_uses_with`` changes
is one call); a conversion that never revisits an op needs none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from types import UnionType
from typing import Union, cast, get_args, get_origin

from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from usmp.lowering.walk import walk_ops


def _wrapper_cell(method: Callable[..., None], name: str) -> object | None:
    """The closure variable ``name`` of ``method`` when it is xDSL's
    ``op_type_rewrite_pattern`` wrapper (None when it is no such wrapper)."""
    code = getattr(method, "__code__", None)
    closure = getattr(method, "__closure__", None)
    if (
        code is None
        or closure is None
        or not method.__qualname__.startswith("op_type_rewrite_pattern.")
        or name not in code.co_freevars
    ):
        return None
    return closure[code.co_freevars.index(name)].cell_contents


def _wrapped(method: Callable[..., None]) -> Callable[..., None] | None:
    """The function ``op_type_rewrite_pattern`` wrapped into ``method``
    (None when ``method`` is no such wrapper)."""
    return cast("Callable[..., None] | None", _wrapper_cell(method, "func"))


def matched_classes(pattern: RewritePattern) -> tuple[type, ...] | None:
    """The op classes ``pattern`` can rewrite: its ``op_classes`` (a pattern
    over a table of op classes declares them so), or when its
    ``match_and_rewrite`` is xDSL's ``op_type_rewrite_pattern`` wrapper the
    class (or the members of the union) its signature names; None when it
    may rewrite any op."""
    declared = declared_classes(pattern)
    if declared is not None:
        return declared
    expected = _wrapper_cell(type(pattern).match_and_rewrite, "expected_type")
    if expected is None:
        return None
    if get_origin(expected) in (Union, UnionType):
        return tuple(get_args(expected))
    return (cast(type, expected),)


_Apply = Callable[[Operation, PatternRewriter], None]


def declared_classes(pattern: RewritePattern) -> tuple[type, ...] | None:
    """The ``op_classes`` a pattern over a table declares, else None."""
    declared = getattr(pattern, "op_classes", None)
    return None if declared is None else tuple(declared)


class TypeDispatchApplier(RewritePattern):
    """Applies the first of ``patterns`` that rewrites an op, trying only
    those that can match its class (see the module note)."""

    def __init__(self, patterns: Sequence[RewritePattern]):
        self.patterns = tuple(patterns)
        self._classes = tuple(matched_classes(p) for p in self.patterns)
        self._by_class: dict[type[Operation], tuple[RewritePattern, ...]] = {}
        self._calls: dict[type[Operation], tuple[_Apply, ...]] = {}

    def candidates(self, kind: type[Operation]) -> tuple[RewritePattern, ...]:
        """The patterns tried on an op of class ``kind``, in order."""
        found = self._by_class.get(kind)
        if found is None:
            found = tuple(
                p
                for p, classes in zip(self.patterns, self._classes, strict=True)
                if classes is None or issubclass(kind, classes)
            )
            self._by_class[kind] = found
        return found

    def _calls_for(self, kind: type[Operation]) -> tuple[_Apply, ...]:
        """``candidates(kind)``' rewrites, each the function under its
        ``op_type_rewrite_pattern`` wrapper where it has one: the wrapper's
        ``isinstance`` holds for every op of ``kind`` (an ABC check per op)."""
        calls: list[_Apply] = []
        for pattern in self.candidates(kind):
            method = type(pattern).match_and_rewrite
            func = _wrapped(method) if declared_classes(pattern) is None else None
            calls.append(
                pattern.match_and_rewrite if func is None else partial(func, pattern)
            )
        found = self._calls[kind] = tuple(calls)
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        kind = type(op)
        calls = self._calls.get(kind) or self._calls_for(kind)
        for call in calls:
            call(op, rewriter)
            if rewriter.has_done_action:
                return


def insert_point_before(block: Block, op: Operation) -> InsertPoint:
    """``InsertPoint(block, op)`` for ``op`` of ``block`` (what its check
    verifies), its two fields written as the frozen dataclass's ``__init__``
    writes them, without the call of that ``__init__`` (an
    ``object.__setattr__`` per field) and of ``__post_init__``: half the
    cost, once per op the conversion visits. tests/test_pattern_dispatch.py
    checks the fields are xDSL's."""
    point = _new_point(InsertPoint)
    fields = point.__dict__
    fields["block"] = block
    fields["insert_before"] = op
    return point


_new_point = object.__new__


class _InOrderRewriter(PatternRewriter):
    """The rewriter of ``rewrite_in_order``: its insertion point (before the
    op being rewritten, in the block it was in) is built when a pattern
    reads it, not for every op (the conversion's patterns insert where
    they say, or before the op by the block's links)."""

    _block: Block | None = None
    _point: InsertPoint | None = None

    @property
    def insertion_point(self) -> InsertPoint:  # pyright: ignore[reportIncompatibleVariableOverride]
        point = self._point
        if point is None:
            op, block = self._current_operation, self._block
            assert op is not None and block is not None
            point = self._point = insert_point_before(block, op)
        return point

    @insertion_point.setter
    def insertion_point(self, point: InsertPoint) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._point = point

    def start(self, op: Operation, block: Block) -> None:
        """Rewrite ``op`` (in ``block``) next."""
        self.has_done_action = False
        self._current_operation = op
        self._block = block
        self._point = None


def rewrite_in_order(
    region: Region,
    pattern: RewritePattern,
    visit: Callable[[Operation], None] | None = None,
    ops: list[Operation] | None = None,
) -> None:
    """Apply ``pattern`` once to every op of ``region``, in pre-order (an
    op before the ops nested in it), as ``PatternRewriteWalker(pattern,
    apply_recursively=False).rewrite_region(region)`` does: the ops are the
    ones ``region`` holds when the walk starts, an op a rewrite erased (or
    that was nested in one) is skipped, and an op a rewrite builds is not
    visited. ``visit`` hears each op before its rewrite. Errors propagate
    as raised (the walker adds a print of the whole module as a note).
    ``ops``: ``list(walk_ops(region))``, when the caller listed them.
    ``visit`` hears only the ops of ``region``'s own blocks (its top-level
    ops, for progress), before their rewrite."""
    if ops is None:
        ops = list(walk_ops(region))
    if not ops:
        return
    rewriter = _InOrderRewriter(ops[0])
    start = rewriter.start
    tops = frozenset(map(id, region.blocks)) if visit is not None else frozenset()
    for op in ops:
        block = op.parent
        if block is None:  # erased (erasing an op drops the parents inside it)
            continue
        if tops and id(block) in tops:
            visit(op)  # pyright: ignore[reportOptionalCall]
        start(op, block)
        pattern.match_and_rewrite(op, rewriter)
