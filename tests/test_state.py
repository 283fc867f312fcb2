"""State across invocations: ``relay.state`` -> ``tir.allocate_state`` -> a
persistent pool, ``tvmgen_<model>_init``, C run over sequences of inputs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import usmp
from usmp.testing.run_c import build, run_module_sequence

STATE_MLIR = Path(__file__).parent / "filecheck" / "passes" / "state.mlir"
INITIAL_SUM = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)


def _expected(inputs: list[np.ndarray], resets: tuple[int, ...]) -> list[np.ndarray]:
    """The model of state.mlir in numpy: s += x; y = 2 * s."""
    s = INITIAL_SUM.copy()
    outputs = []
    for k, x in enumerate(inputs):
        if k in resets:
            s = INITIAL_SUM.copy()
        s = s + x
        outputs.append(2 * s)
    return outputs


def test_state_carries_over_and_resets() -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, 4)).astype(np.float32) for _ in range(6)]
    resets = (3,)
    got = run_module_sequence(
        STATE_MLIR.read_text(),
        [[x] for x in inputs],
        resets=resets,
        passes="aot-lower-main,usmp",
        sanitize=True,
    )
    for step, (out, want) in enumerate(
        zip(got, _expected(inputs, resets), strict=True)
    ):
        np.testing.assert_allclose(out[0], want, rtol=1e-6, err_msg=f"step {step}")
    # the reset gives the first step's behaviour back
    assert not np.array_equal(got[1][0], got[4][0] - inputs[4] * 2 + inputs[1] * 2)


def test_two_instances_with_application_state_pools(tmp_path: Path) -> None:
    """Two instances of one model: one shared workspace, two persistent pools
    the application provides, runs interleaved; each follows its own inputs."""
    lib = usmp.compile(
        STATE_MLIR,
        pools=[usmp.Pool("state", kind="persistent")],
        output_dir=tmp_path / "out",
    )
    assert lib.plan.persistent_bytes == 20
    header = lib.header
    assert "TVMWorkspaces_default" in header
    assert "int32_t tvmgen_default_init(TVMWorkspaces_default* workspaces);" in header
    main = r"""
#include <stdio.h>
#include "tvmgen_default.h"
USMP_ALIGNED(16) static uint8_t state_a[TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE];
USMP_ALIGNED(16) static uint8_t state_b[TVM_DEFAULT_STATE_PERSISTENT_BUFFER_SIZE];
int main(void) {
  TVMWorkspaces_default a = { state_a }, b = { state_b };
  float x[4], y[4];
  TVMInputs_default in = { x };
  TVMOutputs_default out = { y };
  int s, i;
  tvmgen_default_init(&a);
  tvmgen_default_init(&b);
  for (s = 0; s < 3; ++s) {
    for (i = 0; i < 4; ++i) x[i] = (float)(s + 1);
    tvmgen_default_run(&in, &out, &a);
    printf("a %g %g %g %g\n", y[0], y[1], y[2], y[3]);
    for (i = 0; i < 4; ++i) x[i] = (float)(-10 * (s + 1));
    tvmgen_default_run(&in, &out, &b);
    printf("b %g %g %g %g\n", y[0], y[1], y[2], y[3]);
  }
  return 0;
}
"""
    sources = {
        path.name: path.read_text()
        for relative, path in lib.files.items()
        if relative.startswith("codegen/host/")
    }
    sources["two.c"] = (
        "#if defined(__GNUC__)\n#define USMP_ALIGNED(n) __attribute__((aligned(n)))\n"
        "#else\n#define USMP_ALIGNED(n)\n#endif\n" + main
    )
    exe = build(sources, ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
    printed = subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    a_in = [np.full((1, 4), s + 1, np.float32) for s in range(3)]
    b_in = [np.full((1, 4), -10 * (s + 1), np.float32) for s in range(3)]
    want_a, want_b = _expected(a_in, ()), _expected(b_in, ())
    for s in range(3):
        got_a = np.array(printed[2 * s].split()[1:], np.float32)
        got_b = np.array(printed[2 * s + 1].split()[1:], np.float32)
        np.testing.assert_allclose(got_a, want_a[s][0], rtol=1e-6)
        np.testing.assert_allclose(got_b, want_b[s][0], rtol=1e-6)


def test_state_needs_a_persistent_pool_that_can_hold_it() -> None:
    from xdsl.utils.exceptions import DiagnosticException

    from usmp.testing.run_c import run_pipeline
    from usmp.tools.c_library import load

    module = load(STATE_MLIR.read_text())
    with pytest.raises(DiagnosticException, match="state 'state_0'.*persistent pool"):
        run_pipeline(
            module, 'aot-lower-main,usmp{pools="sram:workspace,nvm:persistent:8"}'
        )
