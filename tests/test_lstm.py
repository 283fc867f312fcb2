"""UNIDIRECTIONAL_SEQUENCE_LSTM (``relay.lstm``): the shared LSTM models'
LSTM output and model output through the oracle and the generated C, equal to
TFLite Micro (int8 bit for bit, float within 1e-5); synthetic single-LSTM
models for what the models do not exercise (time-major, batch 2, no cell
clip, int8 with other scales); the variants TFLite Micro refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import ModelBuilder, check
from tests.test_models import FLOAT_INTERMEDIATE_RTOL
from usmp.dialects import tir
from usmp.frontend.tflite_import import import_model, import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError, read_model, read_model_file
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import build, run_module, run_module_sequence, run_pipeline
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import (
    difference,
    random_inputs,
    run_tflm,
    run_tflm_sequence,
)
from usmp.tools.c_library import as_emitc

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"
MODELS = (
    "tflite_micro/trained_lstm.tflite",
    "tflite_micro/trained_lstm_int8.tflite",
    "tflite_micro/micro_speech_lstm.tflite",
    "tflite_micro/dtln_noise_suppression.tflite",
)


def _compare_c(data: bytes, name: str, seeds: tuple[int, ...]) -> None:
    """Every operator's output, computed by the generated C, == TFLite Micro."""
    model = read_model(data, name)
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    lowered = as_emitc(run_pipeline(module, PIPELINE))  # once for every seed
    for seed in seeds:
        inputs = random_inputs(model, seed)
        ours = run_module(lowered, inputs)
        reference = run_tflm(data, inputs, produced)
        for index, got, want in zip(produced, ours, reference, strict=True):
            diff = difference(got, want, FLOAT_INTERMEDIATE_RTOL)
            assert diff is None, f"{name}, seed {seed}, tensor #{index}: {diff}"


@pytest.mark.parametrize("name", MODELS)
def test_model_c_matches_tflite_micro(name: str) -> None:
    path = MODELS_DIR / name
    _compare_c(path.read_bytes(), path.name, (0, 1))


def _lstm_model(
    dtype: str,
    *,
    time_major: bool,
    batch: int,
    steps: int = 3,
    n_input: int = 5,
    units: int = 4,
    cell_clip: float = 0.0,
    extra_inputs: dict[int, int] | None = None,
) -> tuple[ModelBuilder, list[int], list[int]]:
    rng = np.random.default_rng(7)
    m = ModelBuilder()
    shape = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    out_shape = (*shape[:2], units)
    if dtype == "int8":
        x = m.tensor(shape, "int8", scale=0.05, zero_point=-3)
        weights = [
            m.tensor(
                (units, n_input if k < 4 else units),
                "int8",
                rng.integers(-127, 128, (units, n_input if k < 4 else units)),
                scale=0.004 + 0.001 * k,
            )
            for k in range(8)
        ]
        biases = [
            m.tensor((units,), "int32", rng.integers(-3000, 3000, units), scale=1e-4)
            for _ in range(4)
        ]
        h = m.tensor((batch, units), "int8", scale=1 / 128, zero_point=2, variable=True)
        c = m.tensor((batch, units), "int16", scale=2.0**-11, variable=True)
        y = m.tensor(out_shape, "int8", scale=1 / 128, zero_point=2)
    elif dtype == "int16":  # 16x8: int16 activations, int8 weights, int64 biases
        x = m.tensor(shape, "int16", scale=1 / 4096)
        weights = [
            m.tensor(
                (units, n_input if k < 4 else units),
                "int8",
                rng.integers(-127, 128, (units, n_input if k < 4 else units)),
                scale=0.004 + 0.001 * k,
            )
            for k in range(8)
        ]
        biases = [
            m.tensor((units,), "int64", rng.integers(-30000, 30000, units), scale=1e-6)
            for _ in range(4)
        ]
        h = m.tensor((batch, units), "int16", scale=1 / 32768, variable=True)
        c = m.tensor((batch, units), "int16", scale=2.0**-11, variable=True)
        y = m.tensor(out_shape, "int16", scale=1 / 32768)
    else:
        x = m.tensor(shape, "float32")
        weights = [
            m.tensor(
                (units, n_input if k < 4 else units),
                "float32",
                rng.normal(0, 0.5, (units, n_input if k < 4 else units)),
            )
            for k in range(8)
        ]
        biases = [
            m.tensor((units,), "float32", rng.normal(0, 0.3, units)) for _ in range(4)
        ]
        h = m.tensor((batch, units), "float32", variable=True)
        c = m.tensor((batch, units), "float32", variable=True)
        y = m.tensor(out_shape, "float32")
    inputs = [x, *weights, -1, -1, -1, *biases, -1, -1, h, c, -1, -1, -1, -1]
    for position, tensor in (extra_inputs or {}).items():
        inputs[position] = tensor
    options: dict[str, Any] = {
        "FusedActivationFunction": 4,
        "CellClip": cell_clip,
        "TimeMajor": time_major,
    }
    m.op(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        inputs,
        [y],
        ("UnidirectionalSequenceLSTMOptions", options),
    )
    return m, [x], [y]


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("time_major", [False, True])
def test_synthetic_lstm_matches_tflite_micro(dtype: str, time_major: bool) -> None:
    """Batch 2 (TFLM's batch-major path runs the rows one after the other,
    its time-major path all rows per step), oracle and C."""
    m, inputs, outputs = _lstm_model(
        dtype, time_major=time_major, batch=2, cell_clip=0.0 if time_major else 0.5
    )
    check(m, inputs, outputs)
    _compare_c(m.build(inputs, outputs), "synthetic.tflite", (0,))


def test_16x8_state_carries_over_like_tflite_micro() -> None:
    """16x8 over a sequence with a reset: the output sequence of every step,
    oracle and C, equal TFLite Micro's."""
    m, inputs, outputs = _lstm_model("int16", time_major=False, batch=2, cell_clip=0.5)
    data = m.build(inputs, outputs)
    model = read_model(data, "lstm16.tflite")
    steps = [random_inputs(model, seed) for seed in range(4)]
    resets = (2,)
    want = run_tflm_sequence(data, steps, resets)
    module = import_model(model)
    kept: dict[str, np.ndarray] = {}
    ours_c = run_module_sequence(module, steps, resets=resets, passes=PIPELINE)
    for k, x in enumerate(steps):
        if k in resets:
            kept.clear()
        (got,) = evaluate(module, x, states=kept)
        np.testing.assert_array_equal(got, want[k][0].reshape(got.shape), f"oracle {k}")
        np.testing.assert_array_equal(ours_c[k][0], got, f"C {k}")
    assert not np.array_equal(want[1][0], run_tflm_sequence(data, steps[1:2])[0][0])


def test_16x8_with_a_zero_point_is_refused() -> None:
    m, inputs, outputs = _lstm_model("int16", time_major=False, batch=1)
    m.tensors[inputs[0]]["zps"] = np.array([5])
    with pytest.raises(TFLiteImportError) as e:
        import_tflite_bytes(m.build(inputs, outputs), "lstm16.tflite")
    assert (
        "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): input 't0' has zero point 5"
        in str(e.value)
    )


def test_peephole_is_refused_with_the_operator() -> None:
    m, inputs, outputs = _lstm_model(
        "float32", time_major=False, batch=1, extra_inputs={10: 12}
    )
    with pytest.raises(
        TFLiteImportError,
        match=r"operator 0 \(UNIDIRECTIONAL_SEQUENCE_LSTM\): peephole weights "
        r"\(inputs 10\): not supported",
    ):
        import_tflite_bytes(m.build(inputs, outputs), "peephole.tflite")


def test_lowered_lstm_has_no_scratch() -> None:
    """The gates are registers, the states (persistent) are updated in place
    and each step's new hidden values go to the output sequence: the LSTM's
    function allocates nothing (TFLite Micro: four B x S gate buffers)."""
    model = read_model_file(MODELS_DIR / MODELS[1])
    lowered = run_pipeline(import_model(model), "fuse-ops,lower-ops")
    assert not [op for op in lowered.walk() if isinstance(op, tir.AllocateOp)]


def _sequence(model: Any, steps: int, seed: int) -> list[list[np.ndarray]]:
    """``steps`` seeded inputs; the last one repeats the first (after a reset
    it must give the first step's outputs again)."""
    inputs = [random_inputs(model, seed + k) for k in range(steps - 1)]
    return [*inputs, inputs[0]]


@pytest.mark.parametrize("name", MODELS)
def test_state_carries_over_like_tflite_micro(name: str) -> None:
    """A sequence of invocations with the state kept (hidden and cell states
    in the persistent pool), a reset before the last: every step's operator
    outputs equal TFLite Micro's interpreter run on the same sequence (oracle
    with a state dict, and the C library), and the step after the reset
    repeats the first step."""
    path = MODELS_DIR / name
    data = path.read_bytes()
    model = read_model(data, path.name)
    tensors = [t for op in model.operators for t in op.outputs]
    module = import_model(model, tensors)
    steps = _sequence(model, 4, seed=11)
    resets = (3,)
    reference = run_tflm_sequence(data, steps, resets, tensors)
    ours_c = run_module_sequence(module, steps, resets=resets, passes=PIPELINE)
    states: dict[str, np.ndarray] = {}
    for k, inputs in enumerate(steps):
        if k in resets:
            states.clear()
        ours = evaluate(module, inputs, states=states)
        for what, got_all in (("oracle", ours), ("C", ours_c[k])):
            for index, got, want in zip(tensors, got_all, reference[k], strict=True):
                diff = difference(got, want, FLOAT_INTERMEDIATE_RTOL)
                assert diff is None, f"{name} step {k}, {what}, tensor #{index}: {diff}"
    # the state matters: the second step differs from a fresh start
    assert any(
        difference(a, b) is not None
        for a, b in zip(reference[1], run_tflm(data, steps[1], tensors), strict=True)
    )
    for got, want in zip(ours_c[3], ours_c[0], strict=True):
        assert np.array_equal(got, want)


def test_two_instances_with_application_state_pools(tmp_path: Path) -> None:
    """Two instances of an int8 LSTM model, each with its own persistent pool
    given by the application, run interleaved: each equals its own TFLite
    Micro interpreter (the LSTM output and the model output, every step)."""
    path = MODELS_DIR / MODELS[1]
    data = path.read_bytes()
    model = read_model(data, path.name)
    tensors = [model.operators[0].outputs[0], *model.outputs]
    lib = usmp.compile(
        import_model(model, tensors),
        pools=[usmp.Pool("state", kind="persistent")],
        output_dir=tmp_path / "out",
    )
    steps = 3
    inputs = {
        who: [random_inputs(model, seed)[0] for seed in range(base, base + steps)]
        for who, base in (("a", 100), ("b", 200))
    }

    def table(name: str, arrays: list[np.ndarray]) -> str:
        rows = ",\n".join("{" + ", ".join(map(str, a.ravel())) + "}" for a in arrays)
        return f"static const int8_t {name}[{steps}][{arrays[0].size}] = {{{rows}}};"

    sizes = [int(np.prod(model.tensors[t].shape)) for t in tensors]
    main = "\n".join(
        [
            "#include <stdio.h>",
            "#include <string.h>",
            '#include "tvmgen_default.h"',
            "static uint8_t state_a[TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE]"
            " __attribute__((aligned(16)));",
            "static uint8_t state_b[TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE]"
            " __attribute__((aligned(16)));",
            table("in_a", inputs["a"]),
            table("in_b", inputs["b"]),
            "static int8_t x[sizeof in_a[0]];",
            *(f"static int8_t y{k}[{n}];" for k, n in enumerate(sizes)),
            "static void print(const char* who) {",
            "  size_t i;",
            '  printf("%s", who);',
            *(
                f'  for (i = 0; i < sizeof y{k}; ++i) printf(" %d", y{k}[i]);'
                for k in range(len(sizes))
            ),
            '  printf("\\n");',
            "}",
            "int main(void) {",
            "  TVMWorkspaces_default a = { state_a }, b = { state_b };",
            "  TVMInputs_default in = { x };",
            f"  TVMOutputs_default out = {{ {', '.join(f'y{k}' for k in range(len(sizes)))} }};",
            "  int s;",
            "  tvmgen_default_init(&a);",
            "  tvmgen_default_init(&b);",
            f"  for (s = 0; s < {steps}; ++s) {{",
            "    memcpy(x, in_a[s], sizeof x);",
            "    tvmgen_default_run(&in, &out, &a);",
            '    print("a");',
            "    memcpy(x, in_b[s], sizeof x);",
            "    tvmgen_default_run(&in, &out, &b);",
            '    print("b");',
            "  }",
            "  return 0;",
            "}",
            "",
        ]
    )
    sources = {
        p.name: p.read_text()
        for relative, p in lib.files.items()
        if relative.startswith("codegen/host/")
    }
    sources["two.c"] = main
    exe = build(sources, ["-std=c99", "-Wall", "-Wextra", "-Werror"])
    printed = subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    reference = {
        who: run_tflm_sequence(data, [[x] for x in xs], tensors=tensors)
        for who, xs in inputs.items()
    }
    for s in range(steps):
        for k, who in enumerate(("a", "b")):
            got = np.array(printed[2 * s + k].split()[1:], np.int64)
            want = np.concatenate([w.ravel() for w in reference[who][s]])
            assert np.array_equal(got, want.astype(np.int64)), f"{who}, step {s}"


def test_lstm_operands_are_named_in_order() -> None:
    """``relay.lstm``'s operands are named fields in ``OPERANDS`` order (no
    ``op.args[13]``); the state operands are the hidden and cell states."""
    from usmp.dialects.relay_lstm import OPERANDS, LstmOp

    names = [name for name, _ in LstmOp.get_irdl_definition().operands]
    assert tuple(names) == OPERANDS
    assert [OPERANDS[i] for i in LstmOp.STATE_OPERANDS] == [
        "hidden_state",
        "cell_state",
    ]
