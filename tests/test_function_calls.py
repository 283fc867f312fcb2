"""``FunctionCalls`` (the calls of each function, walked once for the C
names, the prototypes and the DSP preludes of ``emit-c``) lists what a walk
of each function finds, in its order (its own explicit-stack walk), on KWS converted to emitc for a CPU
with the DSP extension (whose operators call helpers)."""

from __future__ import annotations

from pathlib import Path

from usmp.dialects import emitc
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.lowering.function_calls import FunctionCalls
from usmp.testing.run_c import run_pipeline

KWS = Path(__file__).resolve().parents[1] / "examples" / "kws_ref_model.tflite"
PIPELINE = (
    "plan-devices,fold-explicit-padding,fuse-ops,lower-ops{mcpu=cortex-m4},"
    "aot-lower-main,usmp,convert-to-emitc"
)


def test_calls_are_what_a_walk_finds() -> None:
    module = run_pipeline(import_model(read_model_file(KWS)), PIPELINE)
    calls = FunctionCalls()
    functions = [op for op in module.ops if isinstance(op, emitc.FuncOp)]
    seen = {"opaque": 0, "callees": 0}
    for f in functions:
        walked = list(f.walk())
        opaque = [o.callee.data for o in walked if isinstance(o, emitc.CallOpaqueOp)]
        callees = [
            o.callee.root_reference.data for o in walked if isinstance(o, emitc.CallOp)
        ]
        assert calls.opaque(f) == tuple(opaque)
        assert calls.callees(f) == tuple(callees)
        assert calls.opaque(f) is calls.opaque(f)  # walked once
        seen["opaque"] += len(opaque)
        seen["callees"] += len(callees)
    assert seen["opaque"] > 0 and seen["callees"] > 0  # both kinds were there
