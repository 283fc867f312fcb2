"""``usmp.lowering.walk.walk_ops`` visits the ops xDSL's ``walk()`` visits,
in its order, from an op, a block or a region, on kernels lowered to
``scf`` loop nests and converted to ``emitc``."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from usmp.dialects import new_context
from usmp.lowering.walk import walk_ops
from usmp.testing.run_c import run_pipeline

_EXAMPLES = Path(__file__).parent.parent / "examples"


def parse(text: str) -> ModuleOp:
    return Parser(new_context(), text).parse_module()


@pytest.mark.parametrize(
    "passes",
    ["fuse-ops,lower-ops", "fuse-ops,lower-ops,aot-lower-main,usmp,convert-to-emitc"],
)
def test_walk_ops_is_xdsls_walk(passes: str) -> None:
    module = run_pipeline(parse((_EXAMPLES / "chain.mlir").read_text()), passes)
    every = list(module.walk())
    assert len(every) > 50
    assert list(walk_ops(module)) == every
    nested = [op for op in every if op.regions]
    assert any(o.regions for op in nested for o in op.regions[0].walk() if o is not op)
    for op in nested:
        assert list(walk_ops(op)) == list(op.walk())
        for region in op.regions:
            assert list(walk_ops(region)) == list(region.walk())
            for block in region.blocks:
                assert list(walk_ops(block)) == list(block.walk())


def test_walk_ops_of_a_lone_op() -> None:
    from xdsl.dialects import arith

    op: Operation = arith.ConstantOp.from_int_and_width(1, 32)
    assert list(walk_ops(op)) == [op]
