"""SVDF with its state carried across invocations, against TFLite Micro run
on the same input sequences: the shared keyword-spotting models (int8 with
int16 and with int8 state) and small synthetic models (float, rank 2)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import RELU, ModelBuilder
from usmp.frontend.tflite_import import import_model, import_tflite_bytes
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import build, run_module_sequence
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import (
    FLOAT_OUTPUT_RTOL,
    TFLMSequence,
    random_inputs,
    run_tflm_sequence,
)

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"
MODELS = ("keyword_scrambled", "keyword_scrambled_8bit")
STEPS, RESET = 6, 4


def _inputs(model, steps: int, scale: float = 1.0) -> list[list[np.ndarray]]:  # noqa: ANN001
    sequence = [random_inputs(model, seed) for seed in range(steps)]
    if scale != 1.0:  # smaller integer inputs keep the outputs off saturation
        sequence = [
            [(x.astype(np.float64) * scale).astype(x.dtype) for x in step]
            for step in sequence
        ]
    return sequence


def _equal(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if w.dtype.kind == "f":
            np.testing.assert_allclose(
                g.reshape(w.shape),
                w,
                rtol=FLOAT_OUTPUT_RTOL,
                atol=FLOAT_OUTPUT_RTOL * float(np.abs(w).max() or 1),
                err_msg=f"{what}, tensor {k}",
            )
        else:
            np.testing.assert_array_equal(g.reshape(w.shape), w, f"{what}, tensor {k}")


@pytest.mark.parametrize("name", MODELS)
def test_keyword_model_sequence_oracle_and_c(name: str) -> None:
    """Every SVDF's output and state, and the model's output, at every step
    of a sequence with a reset: the oracle and the C equal TFLite Micro."""
    data = (MODELS_DIR / "tflite_micro" / f"{name}.tflite").read_bytes()
    model = read_model(data, name)
    svdfs = [op for op in model.operators if op.opcode == "SVDF"]
    outputs = [op.outputs[0] for op in svdfs] + list(model.outputs)
    states = [op.inputs[4] for op in svdfs]
    sequence = _inputs(model, STEPS, scale=0.05)
    want = run_tflm_sequence(data, sequence, [RESET], tensors=outputs + states)
    module = import_model(model, outputs=outputs)
    kept: dict[str, np.ndarray] = {}
    for step, x in enumerate(sequence):
        if step == RESET:
            kept.clear()
        got = evaluate(module, x, states=kept)
        got += [kept[model.tensors[i].name] for i in states]
        _equal(got, want[step], f"oracle, step {step}")
    c = run_module_sequence(module, sequence, resets=[RESET], passes=PIPELINE)
    for step in range(STEPS):
        _equal(c[step], want[step][: len(outputs)], f"C, step {step}")
    # the state really carries over: a fresh interpreter on step 1 alone differs
    fresh = run_tflm_sequence(data, [sequence[1]], tensors=states)[0]
    assert any(
        not np.array_equal(f, w)
        for f, w in zip(fresh, want[1][len(outputs) :], strict=True)
    )


def _synthetic_svdf(
    dtype: str, rank: int, batch: int = 2, memory: int = 3, units: int = 3
) -> bytes:
    """x (batch, 5) -> SVDF(rank, RELU for float) -> (batch, units)."""
    rng = np.random.default_rng(7)
    n_input, filters = 5, units * rank
    m = ModelBuilder()
    if dtype == "float32":
        x = m.tensor((batch, n_input), "float32")
        wf = m.tensor(
            (filters, n_input), "float32", rng.standard_normal((filters, n_input))
        )
        wt = m.tensor(
            (filters, memory), "float32", rng.standard_normal((filters, memory))
        )
        bias = m.tensor((units,), "float32", rng.standard_normal(units))
        state = m.tensor((batch, memory * filters), "float32", variable=True)
        y = m.tensor((batch, units), "float32")
        act = RELU
    else:
        wide = dtype == "int16"
        x = m.tensor((batch, n_input), "int8", scale=0.05, zero_point=3)
        wf = m.tensor(
            (filters, n_input),
            "int8",
            rng.integers(-127, 128, (filters, n_input)),
            scale=0.01,
        )
        limit = 3000 if wide else 100
        wt = m.tensor(
            (filters, memory),
            dtype,
            rng.integers(-limit, limit, (filters, memory)),
            scale=0.002,
        )
        state_scale = 0.004 if wide else 0.06
        bias = m.tensor(
            (units,), "int32", rng.integers(-500, 500, units), scale=state_scale * 0.002
        )
        state = m.tensor(
            (batch, memory * filters),
            dtype,
            scale=state_scale,
            zero_point=0 if wide else -7,
            variable=True,
        )
        y = m.tensor((batch, units), "int8", scale=0.02, zero_point=-5)
        act = 0
    m.op(
        "SVDF",
        [x, wf, wt, bias, state],
        [y],
        ("SVDFOptions", {"Rank": rank, "FusedActivationFunction": act}),
    )
    return m.build([x], [y])


@pytest.mark.parametrize("dtype", ["float32", "int16", "int8"])
def test_synthetic_svdf_rank_2_batch_2(dtype: str) -> None:
    data = _synthetic_svdf(dtype, rank=2)
    model = read_model(data, "svdf.tflite")
    sequence = [random_inputs(model, seed) for seed in range(5)]
    want = run_tflm_sequence(data, sequence, [3])
    module = import_tflite_bytes(data, "svdf.tflite")
    kept: dict[str, np.ndarray] = {}
    for step, x in enumerate(sequence):
        if step == 3:
            kept.clear()
        _equal(evaluate(module, x, states=kept), want[step], f"oracle, step {step}")
    c = run_module_sequence(
        module, sequence, resets=[3], passes=PIPELINE, sanitize=True
    )
    for step in range(5):
        _equal(c[step], want[step], f"C, step {step}")


def test_two_instances_interleaved_match_two_interpreters(tmp_path: Path) -> None:
    """Two instances of the int16-state model, each with its own
    application-provided persistent pool (one workspace shared), run
    interleaved on different inputs: equal to two TFLite Micro interpreters."""
    name = "keyword_scrambled"
    data = (MODELS_DIR / "tflite_micro" / f"{name}.tflite").read_bytes()
    model = read_model(data, name)
    first_svdf = next(op for op in model.operators if op.opcode == "SVDF")
    module = import_model(model, outputs=[first_svdf.outputs[0]])
    lib = usmp.compile(
        module,
        pools=[usmp.Pool("sram"), usmp.Pool("state", kind="persistent")],
        output_dir=tmp_path / "out",
    )
    assert lib.plan.persistent_bytes == 512 * 2  # the other layers are dead
    steps = 4
    a_in = [random_inputs(model, 100 + s)[0] // 20 for s in range(steps)]
    b_in = [random_inputs(model, 200 + s)[0] // 20 for s in range(steps)]
    inputs = np.stack([np.stack([a, b]) for a, b in zip(a_in, b_in, strict=True)])
    (tmp_path / "in.bin").write_bytes(inputs.tobytes())
    main = r"""
#include <stdio.h>
#include <string.h>
#include "tvmgen_default.h"
static uint8_t ws[TVM_DEFAULT_SRAM_WORKSPACE_BUFFER_SIZE] __attribute__((aligned(16)));
static uint8_t sa[TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE] __attribute__((aligned(16)));
static uint8_t sb[TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE] __attribute__((aligned(16)));
static int16_t x[STEPS][2][96];
static int8_t y[STEPS][2][64];
static int16_t state_at[2][512];
int main(int argc, char** argv) {
  TVMWorkspaces_default a = { ws, sa }, b = { ws, sb };
  int s;
  FILE* f = fopen(argv[1], "rb");
  if (argc != 3 || f == NULL || fread(x, 1, sizeof x, f) != sizeof x) return 2;
  fclose(f);
  tvmgen_default_init(&a);
  tvmgen_default_init(&b);
  for (s = 0; s < STEPS; ++s) {
    TVMInputs_default ia = { x[s][0] }, ib = { x[s][1] };
    TVMOutputs_default oa = { y[s][0] }, ob = { y[s][1] };
    tvmgen_default_run(&ia, &oa, &a);
    tvmgen_default_run(&ib, &ob, &b);
  }
  memcpy(state_at[0], sa + STATE_OFFSET, sizeof state_at[0]);
  memcpy(state_at[1], sb + STATE_OFFSET, sizeof state_at[1]);
  f = fopen(argv[2], "wb");
  if (f == NULL || fwrite(y, 1, sizeof y, f) != sizeof y) return 3;
  if (fwrite(state_at, 1, sizeof state_at, f) != sizeof state_at) return 3;
  fclose(f);
  return 0;
}
""".replace("STEPS", str(steps)).replace("STATE_OFFSET", "0")
    header = lib.header
    assert "uint8_t* state; /* TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE" in header
    sources = {
        path.name: path.read_text()
        for relative, path in lib.files.items()
        if relative.startswith("codegen/host/")
    }
    sources["two.c"] = main
    exe = build(sources, ["-std=c99", "-Wall", "-Wextra", "-Werror"])
    subprocess.run(
        [str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True
    )
    raw = (tmp_path / "out.bin").read_bytes()
    got = np.frombuffer(raw[: steps * 2 * 64], np.int8).reshape(steps, 2, 1, 64)
    got_states = np.frombuffer(raw[steps * 2 * 64 :], np.int16).reshape(2, 1, 512)
    tensors = [first_svdf.outputs[0], first_svdf.inputs[4]]
    tflm_a, tflm_b = TFLMSequence(data), TFLMSequence(data)
    for s in range(steps):
        want_a, state_a = tflm_a.step([a_in[s]], tensors)
        want_b, state_b = tflm_b.step([b_in[s]], tensors)
        np.testing.assert_array_equal(got[s, 0], want_a, f"instance a, step {s}")
        np.testing.assert_array_equal(got[s, 1], want_b, f"instance b, step {s}")
    np.testing.assert_array_equal(got_states[0], state_a, "state of instance a")
    np.testing.assert_array_equal(got_states[1], state_b, "state of instance b")
    assert not np.array_equal(got_states[0], got_states[1])


def test_compare_tflm_over_steps(capsys: pytest.CaptureFixture[str]) -> None:
    from usmp.testing import compare_tflm

    path = MODELS_DIR / "tflite_micro" / "keyword_scrambled_8bit.tflite"
    assert compare_tflm.main([str(path), "--seeds", "1", "--steps", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("matches TFLite Micro") == 3
    assert "seed 0, step 2, output 0 int32[1, 2]" in out
