"""The numpy hybrid FULLY_CONNECTED (``oracle/hybrid.py``) against LiteRT's
reference kernels (``ai-edge-litert``, ``BUILTIN_REF``) on the shared hybrid
model ToyCar: every operator's output, bit for bit, and the whole chain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend.tflite_reader import Operator, read_model_file
from usmp.oracle.hybrid import hybrid_fully_connected, symmetric_quantize_row
from usmp.testing.shared_models import MODELS_DIR

TOYCAR = MODELS_DIR / "mlperf_tiny" / "model_ToyCar_quant.tflite"


def _fully_connected_ops(path: Path) -> Iterator[tuple[Operator, float]]:
    model = read_model_file(path)
    for op in model.operators:
        assert op.opcode == "FULLY_CONNECTED"
        assert not op.options.AsymmetricQuantizeInputs()
        quant = model.tensors[op.inputs[1]].quantization
        assert quant is not None and not quant.per_channel
        yield op, quant.scale


@pytest.mark.parametrize("seed", [0, 1])
def test_toycar_every_operator_equals_litert_reference(seed):
    interp = Interpreter(
        model_path=str(TOYCAR),
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    interp.allocate_tensors()
    detail = interp.get_input_details()[0]
    x = np.random.default_rng(seed).standard_normal(detail["shape"]).astype(np.float32)
    interp.set_tensor(detail["index"], x)
    interp.invoke()
    chained, expected = x, x
    ops = list(_fully_connected_ops(TOYCAR))
    assert len(ops) == 10
    for op, scale in ops:
        inputs, output = list(op.inputs), op.outputs[0]
        act = op.options.FusedActivationFunction()
        w = interp.get_tensor(inputs[1])
        bias = (
            interp.get_tensor(inputs[2]) if len(inputs) > 2 and inputs[2] >= 0 else None
        )
        expected = interp.get_tensor(output)
        alone = hybrid_fully_connected(
            interp.get_tensor(inputs[0]), w, scale, bias, act
        )
        np.testing.assert_array_equal(alone.reshape(expected.shape), expected)
        chained = hybrid_fully_connected(chained, w, scale, bias, act)
    np.testing.assert_array_equal(chained.reshape(expected.shape), expected)


def test_symmetric_quantize_row_edges():
    q, scale = symmetric_quantize_row(np.zeros(5, np.float32))
    assert scale == 1 and not q.any()
    # range 127: 2.5 and -2.5 are ties, rounded away from zero (not to even)
    q, scale = symmetric_quantize_row(np.array([127.0, 2.5, -2.5, -1.5], np.float32))
    assert q.tolist() == [127, 3, -3, -2]
    assert scale == 1


def _litert(model: bytes, x: np.ndarray) -> np.ndarray:
    interp = Interpreter(
        model_content=model,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
    )
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


@pytest.mark.parametrize("act", [0, 1, 3])
def test_single_operator_equals_litert_reference(act):
    """Batch rows: random, one with ties, all zeros (LiteRT's scale-1 case)."""
    rng = np.random.default_rng(act)
    weights = rng.integers(-127, 128, (5, 7)).astype(np.int8)
    bias = rng.standard_normal(5).astype(np.float32)
    m = ModelBuilder()
    x = m.tensor((4, 7), "float32")
    w = m.tensor((5, 7), "int8", weights, scale=0.0173)
    b = m.tensor((5,), "float32", bias)
    y = m.tensor((4, 5), "float32")
    options = dict(FusedActivationFunction=act)
    m.op("FULLY_CONNECTED", [x, w, b], [y], ("FullyConnectedOptions", options))
    data = rng.standard_normal((4, 7)).astype(np.float32) * 3
    data[1] = [127, 2.5, -2.5, 0.5, -1.5, 63.5, 0]
    data[3] = 0
    expected = _litert(m.build([x], [y]), data)
    got = hybrid_fully_connected(data, weights, 0.0173, bias, act)
    np.testing.assert_array_equal(got, expected)
