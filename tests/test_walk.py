"""``block_ops`` (the printer's and the lowering's list of a block's ops,
read from the links) is the block's own iterator on real lowered IR."""

from __future__ import annotations

from pathlib import Path

from xdsl.ir import Block

from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.lowering.walk import block_ops
from usmp.testing.run_c import run_pipeline

KWS = Path(__file__).resolve().parents[1] / "examples" / "kws_ref_model.tflite"


def test_block_ops_is_the_block_iterator() -> None:
    module = run_pipeline(
        import_model(read_model_file(KWS)),
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
