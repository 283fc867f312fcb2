# ruff: noqa: E501  (MLIR source text)
"""The whole pipeline on random relay graphs (``usmp.testing.fuzz_graphs``).

Each hypothesis example is a batch of random cases (int8 and float graphs,
random pools, every planning algorithm, I/O in the workspace or not) built
into one C program with ASan/UBSan and compared with the numpy oracle
(``usmp.testing.fuzz_run``); every plan also passes ``usmp-validate``, and a
pool too small for a buffer must give a located diagnostic. Bounded and
derandomized for CI; ``benchmarks/fuzz.py`` runs many more.

The regression tests below are minimised cases the fuzzer found.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from usmp.testing.fuzz_graphs import Case, PoolDraw, generate_from_seed
from usmp.testing.fuzz_run import run_batch

BATCH = 6


def _failures(cases: list[Case]) -> list[str]:
    return [
        f"{r.case.name} [{r.failure.stage}] {r.failure.message}\n"
        f"pools={r.pools!r} algorithm={r.case.algorithm} "
        f"use_workspace_io={r.case.use_workspace_io} max_depth={r.case.max_depth}\n"
        f"{r.case.text}"
        for r in run_batch(cases)
        if r.failure is not None
    ]


@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],  # a batch is too slow to shrink
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(0, 2**31 - 1))
def test_random_graphs_compile_run_and_match_the_oracle(first: int) -> None:
    """Cases ``first .. first + BATCH - 1``; a failure names its case
    ``fz<seed>``: ``python benchmarks/fuzz.py --seed <seed> --examples 1``
    replays it and writes its reproducer."""
    failures = _failures([generate_from_seed(first + k) for k in range(BATCH)])
    assert not failures, "\n\n".join(failures)


# -- regressions found by the fuzzer ------------------------------------------------


def _case(text: str, inputs: list[np.ndarray], **options: object) -> Case:
    defaults: dict[str, object] = dict(
        algorithm="best_fit",
        use_workspace_io=False,
        max_depth=256,
        pools=PoolDraw("default", 1, (100,), (16,), False),
    )
    defaults.update(options)
    return Case(name="reg", text=text, inputs=inputs, **defaults)  # type: ignore[arg-type]


DEAD_OPERATOR = """
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %dead = relay.relu %x : tensor<1x4xf32> -> tensor<1x4xf32>
  %y = relay.add %x, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
"""
"""fuse-ops failed ('internal error: fused group has 0 outputs') on a relay
op whose result is unused."""

SELF_EXTREMUM = """
func.func @main(%x: tensor<2x3xi8>, %f: tensor<2x3xf32>) -> (tensor<2x3xi8>, tensor<2x3xf32>) {
  %y = relay.maximum %x, %x : (tensor<2x3xi8>, tensor<2x3xi8>) -> tensor<2x3xi8>
  %g = relay.minimum %f, %f : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y, %g : tensor<2x3xi8>, tensor<2x3xf32>
}
"""
"""maximum(x, x) became C `(v > v) ? v : v`: gcc -Werror=tautological-compare."""

SOFTMAX_OF_ONE = """
func.func @main(%x: tensor<2x1xi8>) -> tensor<2x1xi8> {
  %y = relay.quantized_softmax %x {input_multiplier = 1515870810 : i64, input_left_shift = 22 : i64, diff_min = -248 : i64} : tensor<2x1xi8> -> tensor<2x1xi8>
  func.return %y : tensor<2x1xi8>
}
"""
"""An int8 softmax over an axis of length 1: its max reduction became C
`(-128 > v) ? -128 : v` on an int8_t, which gcc rejects (-Wtype-limits)."""

CLIP_TO_TYPE_BOUND = """
func.func @main(%x: tensor<2x3xi8>) -> (tensor<2x3xi8>, tensor<2x3xi8>) {
  %hi = relay.clip %x {a_min = 1.270000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<2x3xi8> -> tensor<2x3xi8>
  %lo = relay.clip %x {a_min = -1.280000e+02 : f64, a_max = -1.280000e+02 : f64} : tensor<2x3xi8> -> tensor<2x3xi8>
  func.return %hi, %lo : tensor<2x3xi8>, tensor<2x3xi8>
}
"""
"""An int8 clip to [127, 127] (fuzz seed 1128): max(v, 127) became C
`(v > 127) ? v : 127` on an int8_t, which gcc rejects (-Wtype-limits); the
bound that absorbs a max/min is the result."""


@pytest.mark.parametrize(
    "text, inputs",
    [
        (DEAD_OPERATOR, [np.array([[1, -2, 3, -4]], dtype=np.float32)]),
        (
            SELF_EXTREMUM,
            [
                np.array([[-128, -1, 0], [1, 2, 127]], dtype=np.int8),
                np.array([[1, np.nan, -2], [0, 3, -0.0]], dtype=np.float32),
            ],
        ),
        (SOFTMAX_OF_ONE, [np.array([[-128], [127]], dtype=np.int8)]),
        (
            CLIP_TO_TYPE_BOUND,
            [np.array([[-128, -1, 0], [1, 126, 127]], dtype=np.int8)],
        ),
    ],
    ids=["dead_operator", "self_extremum", "softmax_of_one", "clip_to_type_bound"],
)
def test_fuzzer_regressions(text: str, inputs: list[np.ndarray]) -> None:
    failures = _failures([_case(text, inputs)])
    assert not failures, "\n\n".join(failures)


def test_generator_reshapes_keep_the_batch() -> None:
    """Seed 71000811 reshaped a 2x3 value to 2x1x1x3 and then to 1x1x1x3
    (the 4-D reshapes dropped the batch): the generator failed to build its
    own graph. Every reshape keeps the element count; the case runs."""
    case = generate_from_seed(71000811)
    assert "tensor<2x1x1x3xi8>" in case.text
    (result,) = run_batch([case])
    assert result.failure is None, result.failure
