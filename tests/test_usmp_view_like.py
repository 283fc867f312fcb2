"""``usmp_liveness.is_view_like``: the ops that only make another memref of
their operand, as the liveness walks ask about every op of a loop nest."""

from __future__ import annotations

from xdsl.dialects import func

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_liveness import is_view_like

_OPS = """
func.func @f(%pool: memref<64xi8>, %a: memref<2x4xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.view %pool[%c0][] : memref<64xi8> to memref<8xi8>
  %r = memref.reinterpret_cast %a to offset: [0], sizes: [8], strides: [1] : memref<2x4xi8> to memref<8xi8>
  %s = memref.collapse_shape %a [[0, 1]] : memref<2x4xi8> into memref<8xi8>
  %m = memref.alloc() : memref<8xi8>
  %x = memref.load %v[%c1] : memref<8xi8>
  memref.store %x, %r[%c0] : memref<8xi8>
  %i = arith.addi %c0, %c1 : index
  func.return
}
"""


def test_view_like_ops() -> None:
    module = LocatingParser(new_context(), _OPS, "ops.mlir").parse_module()
    f = next(o for o in module.ops if isinstance(o, func.FuncOp))
    verdicts = {
        op.results[0].name_hint if op.results else op.name: is_view_like(op)
        for op in f.body.block.ops
    }
    assert verdicts == {
        "c0": False,
        "c1": False,
        "v": True,
        "r": True,
        "s": True,
        "m": False,  # an allocation makes a memref of no operand
        "x": False,
        "memref.store": False,
        "i": False,
        "func.return": False,
    }
