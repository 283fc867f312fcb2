"""``usmp.lowering.walk.walk_ops`` visits the ops xDSL's ``walk()`` visits,
in its order, from an op, a block or a region, on kernels lowered to
``scf`` loop nests and converted to ``emitc``; ``block_ops`` (the C
printer's list of a block's ops, read from the links) is the block's own
iterator there."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.parser import Parser

from usmp.dialects import new_context
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.lowering.walk import block_ops, walk_ops
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


def test_block_ops_is_the_block_iterator() -> None:
    module = run_pipeline(
        import_model(read_model_file(_EXAMPLES / "kws_ref_model.tflite")),
        "plan-devices,fold-explicit-padding,fuse-ops,lower-ops,aot-lower-main,usmp,"
        "convert-to-emitc",
    )
    blocks = [b for o in module.walk() for r in o.regions for b in r.blocks]
    assert len(blocks) > 50  # loop bodies, not only function bodies
    for block in blocks:
        ops = block_ops(block)
        assert len(ops) == len(list(block.ops))
        assert all(a is b for a, b in zip(ops, block.ops, strict=True))
    assert block_ops(Block()) == []
