"""Real models through relay main -> fuse-ops -> lower-ops -> aot-lower-main.

The imported TFLite model is evaluated by the numpy oracle and by TFLite
Micro; the compiled program must give the same output, bit for bit for int8
models (to float rounding for float ones):

* hello_world_int8 runs on xDSL's interpreter (``run_tir_main``), so this
  check does not depend on the C path;
* KWS, ResNet-8 (int8, with residual adds) and the float KWS run as C
  (``usmp.testing.run_c``, after ``usmp``).

Memory is the product: after lower-ops no operator allocates scratch, the
constant pool holds the weights plus the per-channel requantisation tables
only, and KWS's planned workspace is TFLite Micro's arena (16,000 B; TVM's
own flow needs 56,192 B).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tests.test_lower_ops import lower
from tests.test_models import MODELS_DIR
from usmp.dialects import new_context, tir
from usmp.frontend.tflite_import import import_tflite
from usmp.oracle.relay_interpreter import evaluate
from usmp.oracle.tir_interpreter import run_tir_main
from usmp.passes.aot_lower_main import AOTLowerMainPass
from usmp.passes.usmp import UsmpPass
from usmp.testing.run_c import run_module


def _input(path: Path, seed: int) -> np.ndarray:
    interpreter = runtime.Interpreter.from_file(str(path), arena_size=1 << 20)
    detail = interpreter.get_input_details(0)
    shape, dtype = tuple(detail["shape"]), np.dtype(detail["dtype"])
    rng = np.random.default_rng(seed)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape, dtype=dtype)


def _tflm(path: Path, x: np.ndarray) -> np.ndarray:
    interpreter = runtime.Interpreter.from_file(str(path), arena_size=1 << 20)
    interpreter.set_input(x, 0)
    interpreter.invoke()
    return interpreter.get_output(0)


def _operators(module: ModuleOp) -> list[func.FuncOp]:
    return [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and tir.PRIM_FUNC in f.attributes
    ]


def _compare(got: np.ndarray, expected: np.ndarray, reference: np.ndarray) -> None:
    got = got.reshape(expected.shape)
    if expected.dtype.kind == "f":
        scale = float(np.abs(reference).max()) or 1.0
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * scale)
        np.testing.assert_allclose(
            got, reference.reshape(got.shape), rtol=0, atol=1e-4 * scale
        )
    else:
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got, reference.reshape(got.shape))


def test_hello_world_int8_on_the_interpreter() -> None:
    path = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
    module = import_tflite(path)
    x = _input(path, seed=3)
    (expected,) = evaluate(module, [x])
    lowered = lower(module)
    assert len(_operators(lowered)) == 3  # one per FULLY_CONNECTED + epilogue
    AOTLowerMainPass().apply(new_context(), lowered)
    (got,) = run_tir_main(lowered, [x])
    _compare(got, expected, _tflm(path, x))


@pytest.mark.parametrize(
    "model",
    [
        "mlperf_tiny/kws_ref_model.tflite",
        "mlperf_tiny/pretrainedResnet_quant.tflite",
        "mlperf_tiny/converted/kws_ref_model_float32_full.tflite",
    ],
)
def test_model_in_c(model: str) -> None:
    path = MODELS_DIR / model
    module = import_tflite(path)
    x = _input(path, seed=0)
    (expected,) = evaluate(module, [x])
    lowered = lower(module)
    for operator in _operators(lowered):
        assert not any(isinstance(op, tir.AllocateOp) for op in operator.walk()), (
            f"@{operator.sym_name.data} allocates scratch"
        )
    (got,) = run_module(lowered, [x], passes="aot-lower-main,usmp")
    _compare(got, expected, _tflm(path, x))


def test_kws_memory_matches_tflite_micro() -> None:
    """No scratch, no widened copies: KWS's workspace without overlaps is
    TFLM's 16,000 B arena (8,448 B with them) and its constants are the weights plus 9 x 64 x (4 + 1) bytes of
    per-channel multiplier / shift tables."""
    module = lower(import_tflite(MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"))
    tables = [
        op
        for operator in _operators(module)
        for op in operator.walk()
        if isinstance(op, tir.AllocateConstOp)
    ]
    assert sum(_bytes(op.result.type) for op in tables) == 9 * 64 * (4 + 1)
    ctx = new_context()
    AOTLowerMainPass().apply(ctx, module)
    planned = module.clone()
    UsmpPass(overlap=False).apply(ctx, module)
    UsmpPass().apply(ctx, planned)
    for m, size in ((module, 16000), (planned, 8448)):
        pools = {p.pool_name.data: p for p in m.attributes[tir.POOLS]}  # type: ignore[union-attr]
        workspace = [p for p in pools.values() if p.kind.data == "workspace"]
        assert [p.size.data for p in workspace] == [size]


def _bytes(t: object) -> int:
    from xdsl.dialects.builtin import MemRefType

    assert isinstance(t, MemRefType)
    return int(np.prod(t.get_shape())) * t.get_element_type().bitwidth // 8  # type: ignore[union-attr]
