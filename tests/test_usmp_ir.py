"""The walks of the usmp analyses: ``walk_ops`` (what they walk a loop nest
with) is ``Operation.walk``'s order on real lowered and planned IR, and
``ModuleOps`` lists exactly what a walk of each function finds."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from usmp.dialects.tir import (
    VIRTUAL_DEVICE,
    AllocateConstOp,
    AllocateOp,
    AllocateStateOp,
    CallOp,
)
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.lowering.walk import walk_ops
from usmp.passes.usmp_ir import ModuleOps
from usmp.testing.run_c import run_pipeline

KWS = Path(__file__).resolve().parents[1] / "examples" / "kws_ref_model.tflite"
LOWER = "plan-devices,fold-explicit-padding,fuse-ops,lower-ops,aot-lower-main"


@pytest.fixture(scope="module")
def modules() -> dict[str, ModuleOp]:
    """KWS before usmp (allocations) and after it (pool views)."""
    lowered = run_pipeline(import_model(read_model_file(KWS)), LOWER)
    return {"lowered": lowered, "planned": run_pipeline(lowered, "usmp")}


def _same(a: list[Operation], b: list[Operation]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("stage", ["lowered", "planned"])
def test_walk_ops_is_the_walk_order(modules: dict[str, ModuleOp], stage: str) -> None:
    module = modules[stage]
    assert _same(list(walk_ops(module)), list(module.walk()))
    for top in module.ops:
        assert _same(list(walk_ops(top)), list(top.walk()))
    loops = [o for o in module.walk() if o.regions and not isinstance(o, func.FuncOp)]
    assert len(loops) > 10  # nested loop nests, not only flat bodies
    for loop in loops:
        assert _same(list(walk_ops(loop)), list(loop.walk()))


@pytest.mark.parametrize("stage", ["lowered", "planned"])
def test_module_ops_lists_what_a_walk_finds(
    modules: dict[str, ModuleOp], stage: str
) -> None:
    module = modules[stage]
    ops = ModuleOps.of(module)
    allocations = (AllocateOp, AllocateConstOp, AllocateStateOp)
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    assert sorted(ops.definers) == sorted(f.sym_name.data for f in functions)
    for f in functions:
        name = f.sym_name.data
        walked = list(f.walk())
        definers = [o for o in walked if isinstance(o, (*allocations, memref.ViewOp))]
        calls = [o for o in walked if isinstance(o, (CallOp, func.CallOp))]
        assert _same(list(ops.definers[name]), definers), name
        assert _same(list(ops.calls[name]), calls), name
    walked = list(module.walk())
    assert _same(
        list(ops.allocations), [o for o in walked if isinstance(o, allocations)]
    )
    placed = [
        o
        for o in walked
        if isinstance(o, func.FuncOp) or VIRTUAL_DEVICE in o.attributes
    ]
    assert _same(list(ops.placed), placed)
    # what the lists hold at each stage: allocations before usmp, views after
    has_allocations = stage == "lowered"
    assert bool(ops.allocations) == has_allocations
    assert any(ops.calls.values()) and any(ops.definers.values())
