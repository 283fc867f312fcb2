"""plan-devices beyond the FileCheck cases (tests/filecheck/passes/plan_devices*.mlir):
TVM's test_stack_overflow (a long chain), and real models: every operator placed,
nothing copied, a second run changes nothing."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from usmp.dialects import new_context, relay
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.run_c import run_pipeline
from usmp.testing.shared_models import MODELS_DIR

DEFAULT = relay.VirtualDeviceAttr()
STRUCTURAL = (relay.TupleOp, relay.TupleGetItemOp, relay.OnDeviceOp, relay.DeviceCopyOp)


def _check_planned(module: ModuleOp) -> None:
    """Every tensor-producing relay op on the default device, no copy left."""
    relay_ops = [op for op in module.walk() if op.name.startswith("relay.")]
    assert relay_ops
    for op in relay_ops:
        assert not isinstance(op, relay.OnDeviceOp | relay.DeviceCopyOp), op.name
        if not isinstance(op, STRUCTURAL) and op.results:
            assert op.attributes[relay.VIRTUAL_DEVICE] == DEFAULT, op.name


def test_tvm_stack_overflow() -> None:
    """TVM's test_stack_overflow: 1555 chained adds plan without recursion."""
    t = "tensor<5x7xf32>"
    lines = [f"func.func @main(%a: {t}, %b: {t}, %c: {t}, %d: {t}) -> {t} {{"]
    lines.append(f"  %0 = relay.add %a, %b : ({t}, {t}) -> {t}")
    lines.append(f"  %1 = relay.add %c, %d : ({t}, {t}) -> {t}")
    for i in range(2, 1555):
        lines.append(f"  %{i} = relay.add %{i - 1}, %{i - 2} : ({t}, {t}) -> {t}")
    lines += [f"  func.return %1554 : {t}", "}"]
    module = Parser(new_context(), "\n".join(lines)).parse_module()
    once = run_pipeline(module, "plan-devices")
    _check_planned(once)
    assert str(run_pipeline(once.clone(), "plan-devices")) == str(once)


@pytest.mark.parametrize(
    "model",
    [
        "mlperf_tiny/kws_ref_model.tflite",
        "tflite_micro/trained_lstm_int8.tflite",
        "tflite_micro/micro_speech_quantized.tflite",
    ],
)
def test_models_single_device_and_idempotent(model: str) -> None:
    module = import_model(read_model_file(MODELS_DIR / model))
    once = run_pipeline(module, "plan-devices")
    _check_planned(once)
    assert str(run_pipeline(once.clone(), "plan-devices")) == str(once)
