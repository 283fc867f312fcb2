"""The rewrite patterns of ``lower-ops``: one element pattern per operator
family, requests never left in the IR, producers' locations on their ops."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Block, SSAValue
from xdsl.parser import Parser
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter
from xdsl.utils.exceptions import DiagnosticException

from usmp.dialects import new_context
from usmp.dialects.relay_tflite_ops import QuantizedSoftmaxOp
from usmp.lowering.kernel import ElementOp, ElementPattern, FusedKernel, memref_of
from usmp.lowering.loops import KernelBuilder
from usmp.lowering.prim_func import ELEMENT_PATTERNS, OPERATORS, WHOLE_OPERATORS
from usmp.passes.lower_ops import LowerOpsPass


def test_each_operator_has_one_family() -> None:
    """(That every operator has a lowering: ``tests/test_op_facts.py``.)"""
    counts = Counter(kind for p in ELEMENT_PATTERNS for kind in p.handlers)
    counts.update(list(WHOLE_OPERATORS))
    assert all(n == 1 for n in counts.values()), counts
    assert QuantizedSoftmaxOp in OPERATORS


def test_requests_are_rewritten_at_the_producers_location() -> None:
    module = Parser(
        new_context(),
        """
        func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32>
            attributes {relay.primitive} {
          %s = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("m.mlir":3:5)
          %r = relay.relu %s : tensor<4xf32> -> tensor<4xf32> loc("m.mlir":4:5)
          func.return %r : tensor<4xf32>
        }
        """,
    ).parse_module()
    LowerOpsPass().apply(new_context(), module)
    ops = list(module.walk())
    assert not any(isinstance(op, ElementOp) for op in ops)
    lines = {
        type(op): op.location.line.data
        for op in ops
        if isinstance(op, arith.AddfOp | arith.MaximumfOp)
        and isinstance(op.location, FileLineColLoc)
    }
    assert lines == {arith.AddfOp: 3, arith.MaximumfOp: 4}


_RELU = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %r = relay.relu %x : tensor<4xf32> -> tensor<4xf32> loc("m.mlir":2:3)
  func.return %r : tensor<4xf32>
}
"""


def _kernel(
    patterns: Sequence[type[ElementPattern]],
) -> tuple[FusedKernel, SSAValue]:
    module = Parser(new_context(), _RELU).parse_module()
    function = next(iter(module.ops))
    assert isinstance(function, func.FuncOp)
    block = function.body.blocks[0]
    entry = Block(arg_types=[memref_of(block.args[0].type)])
    kernel = FusedKernel(KernelBuilder(entry), {block.args[0]: entry.args[0]}, patterns)
    relu = block.first_op
    assert relu is not None
    return kernel, relu.results[0]


def test_an_element_no_pattern_computes_is_a_located_error() -> None:
    kernel, relu = _kernel([])
    with pytest.raises(DiagnosticException, match="'relay.relu' has no lowering"):
        kernel.at(relu, [1])


def test_a_pattern_rewrites_an_explicit_request_as_the_kernel_computes() -> None:
    """``at`` calls the matching pattern directly; applied to a request
    ``lower_ops.element`` placed in the IR, the pattern replaces it by the
    same code."""
    direct, relu = _kernel(ELEMENT_PATTERNS)
    direct.at(relu, [1])
    requested, relu = _kernel(ELEMENT_PATTERNS)
    request = ElementOp.get(relu, [1])
    requested.b.block.add_op(request)
    applier = GreedyRewritePatternApplier(
        [p(requested) for p in ELEMENT_PATTERNS], dce_enabled=False
    )
    applier.match_and_rewrite(request, PatternRewriter(request))
    names = [[op.name for op in k.b.block.ops] for k in (direct, requested)]
    assert names[0] == names[1] == ["memref.load", "arith.maximumf"]
    assert request.parent is None


def test_tables_are_shared_by_name_and_equal_values() -> None:
    """``FusedKernel.table``: the same attribute object, or an equal one
    built apart, under one name is one hoisted ``tir.allocate_const``;
    another name or other values get their own (names made unique)."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i32

    from usmp.dialects import tir

    def values(*xs: int) -> DenseIntOrFPElementsAttr:
        return DenseIntOrFPElementsAttr.from_list(TensorType(i32, [len(xs)]), xs)

    entry = Block()
    k = FusedKernel(KernelBuilder(entry), {}, ELEMENT_PATTERNS)
    a = values(1, 2, 3)
    first = k.table("t", a)
    assert k.table("t", a) is first
    assert k.table("t", values(1, 2, 3)) is first  # equal, another object
    other_name = k.table("u", a)
    other_values = k.table("t", values(3, 2, 1))
    assert len({first, other_name, other_values}) == 3
    assert k.table("u", values(1, 2, 3)) is other_name
    k.b.finish()
    allocs = [op for op in entry.ops if isinstance(op, tir.AllocateConstOp)]
    assert [op.name_hint.data for op in allocs] == ["t", "u", "t_1"]


_DEAD = """
func.func @f(%x: tensor<1x3x3x8xi8>, %w: tensor<3x3x1x8xi8>) -> tensor<1x3x3x8xi8>
    attributes {{relay.primitive}} {{
  %c = relay.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64, kernel_layout = #relay<kernel_layout HWIO>}} : (tensor<1x3x3x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x3x3x8xi32>
  %r = relay.cast %c : tensor<1x3x3x8xi32> -> tensor<1x3x3x8xi8>
  %z = relay.clip %r {{a_min = -128.0 : f64, a_max = {hi}.0 : f64}} : tensor<1x3x3x8xi8> -> tensor<1x3x3x8xi8>
  func.return %z : tensor<1x3x3x8xi8>
}}
"""


@pytest.mark.parametrize("hi", [-128, 127])
def test_values_computed_for_nothing_are_erased(hi: int) -> None:
    """A conv2d whose epilogue clamps to one value (the i8 minimum) leaves
    its accumulation unused: the builder sees an op with results and no
    use, and the dead-code walk erases the reduction loops, their loads and
    arithmetic; with the full range, nothing is unused and the walk is
    skipped, the reduction stays."""
    from xdsl.dialects import memref, scf

    from usmp.lowering import prim_func

    module = Parser(new_context(), _DEAD.format(hi=hi)).parse_module()
    function = next(iter(module.ops))
    assert isinstance(function, func.FuncOp)
    builders: list[KernelBuilder] = []

    class Recording(KernelBuilder):
        def __init__(self, entry: Block):
            super().__init__(entry)
            builders.append(self)

    saved = prim_func.KernelBuilder
    prim_func.KernelBuilder = Recording  # type: ignore[misc]
    try:
        lowered = prim_func.lower_primitive(function)
    finally:
        prim_func.KernelBuilder = saved  # type: ignore[misc]
    ops = list(lowered.walk())
    loads = [op for op in ops if isinstance(op, memref.LoadOp)]
    loops = [op for op in ops if isinstance(op, scf.ForOp)]
    for op in ops:  # what is left is used (or has no result)
        assert not op.results or any(r.uses for r in op.results), op
    if hi == -128:
        assert not loads and len(loops) == 3  # the output's loops only
    else:
        assert loads and len(loops) > 3
        assert not builders[0].has_unused_values()


@pytest.mark.parametrize("kind", ["allocate_const", "return", "if"])
def test_ops_built_with_create_are_the_constructors(kind: str) -> None:
    """The ops of a prim func that ``lower-ops`` builds with ``create`` (a
    table's ``tir.allocate_const``, the ``func.return``, a value-yielding
    ``scf.if``) equal the ones the dialects' constructors build, field by
    field (properties in the same order), and print the same."""
    from io import StringIO

    from xdsl.dialects import scf
    from xdsl.dialects.builtin import (
        DenseIntOrFPElementsAttr,
        MemRefType,
        StringAttr,
        TensorType,
        i1,
        i32,
    )
    from xdsl.ir import Region
    from xdsl.printer import Printer

    from tests.test_convert_to_emitc_ir import _fields, _same
    from usmp.dialects import tir
    from usmp.lowering.create import create, create_with_regions

    if kind == "allocate_const":
        values = DenseIntOrFPElementsAttr.from_list(TensorType(i32, [2]), [7, 9])
        t = MemRefType(i32, [2])
        ours = create(
            tir.AllocateConstOp, (), t, name_hint=StringAttr("t"), value=values
        )
        xdsl = tir.AllocateConstOp(t, "t", values)
    elif kind == "return":
        ours, xdsl = create(func.ReturnOp, ()), func.ReturnOp()
    else:
        c, x, y = Block(arg_types=[i1, i32, i32]).args
        built = []
        for mine in (True, False):
            then, otherwise = Block(), Block()
            then.add_op(scf.YieldOp(x))
            otherwise.add_op(scf.YieldOp(y))
            built.append(
                create_with_regions(
                    scf.IfOp, (c,), [i32], [Region(then), Region(otherwise)]
                )
                if mine
                else scf.IfOp(c, [i32], [then], [otherwise])
            )
        ours, xdsl = built
        texts = []
        for op in built:
            text = StringIO()
            Printer(stream=text).print_op(op)
            texts.append(text.getvalue())
        assert texts[0] == texts[1]
        fields = [_fields(op) for op in built]
        for f, op in zip(fields, built, strict=True):
            f["results"] = [("op" if o is op else o, *r) for o, *r in f["results"]]
            f["uses"] = [("op" if o is op else o, k) for o, k in f["uses"]]
            regions = f.pop("regions")
            assert [r.parent for r in regions] == [op, op]
        assert fields[0] == fields[1]
        return
    _same(ours, xdsl)
    assert list(ours.properties) == list(xdsl.properties)
