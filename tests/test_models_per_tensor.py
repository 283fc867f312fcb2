"""Every tensor of every supported real model, not only its outputs.

A classifier's output is a softmax that is 0 or 1 for most inputs, so a
rounding error inside the network rarely reaches it. Here every intermediate
tensor is compared, on inputs with the structure of real data
(``tests.model_inputs``: smooth fields over the input quantisation range,
and real speech for the two keyword models):

* the numpy oracle against TFLite Micro (its interpreter preserves every
  tensor): the module imported with every operator output returned; integer
  tensors bit for bit, float tensors within 1e-4 of their range;
* the generated C against the oracle (every model but the float VWW): the
  model's own ``fuse-ops`` groups, with ``@main`` returning every group's
  result as well, lowered, planned, built with gcc and run; every result bit
  for bit (integers) or within 1e-4 (floats). The groups are exactly the production module's, so every
  kernel checked is one the compiled model runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp, ReturnOp

from tests.model_inputs import mfcc_features, speech_features, structured_inputs
from usmp.dialects import relay
from usmp.dialects.relay import OUTPUT_QUANTIZATION, OUTPUT_TENSOR_NAMES
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import Model, read_model_file
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.testing.tflm_reference import difference, run_reference
from usmp.tools.c_library import as_emitc

FLOAT_RTOL = 1e-4
"""Float tensors: summation orders differ between the kernels."""

KWS = "mlperf_tiny/kws_ref_model.tflite"
MICRO_SPEECH = "tflite_micro/micro_speech_quantized.tflite"
C_MODELS = [m for m in SUPPORTED_MODELS if m != "mlperf_tiny/vww_96_float.tflite"]
"""Through C: every model but the float VWW (its float kernels are those of
the float KWS and ResNet-8, and it would cost a quarter of this file's time)."""


def model_inputs(name: str, model: Model) -> dict[str, list[np.ndarray]]:
    """The inputs each model is checked on: one structured input, and real
    speech for the keyword models."""
    inputs = {"structured": structured_inputs(model, seed=0)}
    if name == MICRO_SPEECH:
        inputs["yes.wav"] = [speech_features("yes")]
    if name == KWS:
        q = model.tensors[model.inputs[0]].quantization
        assert q is not None
        inputs["no.wav"] = [mfcc_features("no", q.scales[0], q.zero_points[0])]
    return inputs


def expose_group_results(module: ModuleOp) -> ModuleOp:
    """``module`` after ``fuse-ops``, with ``@main`` also returning the result
    of every ``relay.call`` (each fused group's output) it does not return
    yet, after the model's own outputs."""
    fused = run_pipeline(module, "fuse-ops")
    main = next(
        op for op in fused.ops if isinstance(op, FuncOp) and op.sym_name.data == "main"
    )
    ret = main.body.block.last_op
    assert isinstance(ret, ReturnOp)
    returned = list(ret.operands)
    extra = [
        r
        for op in main.body.block.ops
        if isinstance(op, relay.CallOp)
        for r in op.results
        if r not in returned
    ]
    ret.operands = [*returned, *extra]
    main.function_type = FunctionType.from_lists(
        main.function_type.inputs.data, [v.type for v in ret.operands]
    )
    names = main.attributes.get(OUTPUT_TENSOR_NAMES)
    if isinstance(names, ArrayAttr):
        main.attributes[OUTPUT_TENSOR_NAMES] = ArrayAttr(
            [*names.data, *(StringAttr(f"group_result_{k}") for k in range(len(extra)))]
        )
    quantization = main.attributes.get(OUTPUT_QUANTIZATION)
    if isinstance(quantization, ArrayAttr):  # the group results: not described
        main.attributes[OUTPUT_QUANTIZATION] = ArrayAttr(
            [*quantization.data, *(DictionaryAttr({}) for _ in extra)]
        )
    fused.verify()
    return fused


def assert_same(
    what: str, got: Sequence[np.ndarray], want: Sequence[np.ndarray], names: list[str]
) -> None:
    assert len(got) == len(want) == len(names)
    problems = [
        f"{name}: {problem}"
        for name, g, w in zip(names, got, want, strict=True)
        if (problem := difference(g, w, FLOAT_RTOL)) is not None
    ]
    assert not problems, f"{what}: {len(problems)} tensors differ: " + "; ".join(
        problems
    )


@pytest.mark.parametrize("name", SUPPORTED_MODELS)
def test_oracle_every_tensor_matches_tflite_micro(name: str) -> None:
    path = MODELS_DIR / name
    model = read_model_file(path)
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    labels = [f"tensor #{t} '{model.tensors[t].name}'" for t in produced]
    for kind, inputs in model_inputs(name, model).items():
        ours = evaluate(module, inputs)
        reference = run_reference(path.read_bytes(), inputs, produced)
        assert_same(f"{name} on {kind} input", ours, reference, labels)


@pytest.mark.parametrize("name", C_MODELS)
def test_c_every_group_result_matches_oracle(name: str) -> None:
    model = read_model_file(MODELS_DIR / name)
    module = expose_group_results(import_model(model))
    lowered = as_emitc(run_pipeline(module, "lower-ops,aot-lower-main,usmp"))
    for kind, inputs in model_inputs(name, model).items():  # the C built once
        wanted = evaluate(module, inputs)
        got = run_module(lowered, inputs)
        labels = [f"output {k}" for k in range(len(model.outputs))]
        labels += [f"group result {k}" for k in range(len(wanted) - len(labels))]
        assert len(wanted) > len(model.outputs) or len(model.operators) == 1
        assert_same(f"{name} on {kind} input", got, wanted, labels)
