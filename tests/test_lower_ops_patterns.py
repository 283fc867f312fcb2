"""The rewrite patterns of ``lower-ops``: one element pattern per operator
family, requests never left in the IR, producers' locations on their ops."""

from __future__ import annotations

from collections import Counter

from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.parser import Parser

from usmp.dialects import new_context
from usmp.dialects.relay_tflite_ops import QuantizedSoftmaxOp
from usmp.lowering.kernel import ElementOp
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
