"""The overlap facts from access functions (``usmp_kernel_symbolic``)
against the enumerating tracer (``usmp_kernel_trace``), the oracle: random
small kernels, random graphs, shared models' kernels. ``benchmarks/overlap.py
--symbolic`` runs the comparison over every shared model and prints it."""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path

import pytest
from xdsl.dialects import func

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_kernel_symbolic import summarize
from usmp.passes.usmp_kernel_trace import KernelTraces, decided
from usmp.testing.fuzz_graphs import generate_from_seed
from usmp.testing.fuzz_run import _apply, pipeline  # pyright: ignore[reportPrivateUsage]
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.symbolic_oracle import compare_kernel, compare_module, random_kernel
from usmp.tools.usmp_compile import main as usmp_compile

KERNELS = (
    Path(__file__).parent / "filecheck" / "passes" / "usmp_buffer_info_overlap.mlir"
)


def _parse(text: str, name: str = "k.mlir"):
    return LocatingParser(new_context(), text, name).parse_module()


def _lowered(model: str, tmp_path: Path):
    with contextlib.redirect_stderr(io.StringIO()):
        status = usmp_compile(
            [str(MODELS_DIR / model), "-o", str(tmp_path), "-q"]
            + ["--stop-after", "aot-lower-main"]
        )
    assert status == 0
    return _parse(next(tmp_path.glob("*.mlir")).read_text())


@pytest.mark.parametrize("batch", range(2))
def test_random_kernels_match_the_trace(batch: int) -> None:
    """Random loop nests (affine loads and stores, guards, two element
    sizes), forwards and backwards: every fact and shift equal to the
    trace's, none the access functions cannot summarise (most write some
    element twice, so the compiler would still trace them)."""
    for seed in range(100 * batch, 100 * batch + 100):
        module = _parse(random_kernel(random.Random(seed)))
        f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
        for backwards in (False, True):
            summarised, _, _, differences = compare_kernel(f, backwards)
            assert summarised, seed
            assert not differences, (seed, differences)


def test_each_kernel_kind() -> None:
    """The shifts the FileCheck test states, from the access functions."""
    fs = {f.sym_name.data: f for f in _parse(KERNELS.read_text()).ops}
    shifts = {}
    for name in ("relu", "transpose", "row_sum", "col_sum"):
        f = fs[name]
        assert isinstance(f, func.FuncOp)
        s = summarize(f, (0, 1))
        assert s is not None
        assert s.reads(0) and not s.writes(0) and s.covered(1)
        shifts[name] = s.max_shift(0, 1)
    assert shifts == {"relu": 0, "transpose": -49, "row_sum": 0, "col_sum": -56}


@pytest.mark.parametrize("seeds", [range(0, 12)])
def test_random_graphs_match_the_trace(seeds: range) -> None:
    """The fuzz generator's graphs, lowered: no difference on any kernel
    (those the access functions do not decide fall back, and are few)."""
    kernels = fallbacks = 0
    for seed in seeds:
        case = generate_from_seed(seed)
        module = _parse(case.text, "fuzz.mlir")
        _apply(module, ",".join(pipeline(case, "")[:-3]))  # to aot-lower-main
        c = compare_module(module)
        assert not c.differences, (seed, c.differences)
        kernels, fallbacks = kernels + 2 * c.kernels, fallbacks + len(c.fallbacks)
    assert fallbacks * 10 <= kernels


@pytest.mark.parametrize(
    "model", ["mlperf_tiny/kws_ref_model.tflite", "tflite_micro/trained_lstm.tflite"]
)
def test_shared_model_kernels_match_the_trace(model: str, tmp_path: Path) -> None:
    """Depthwise and pointwise convolutions with padding, pooling, dense,
    the LSTM (which writes its state every step: left to the trace)."""
    c = compare_module(_lowered(model, tmp_path))
    assert c.pairs > 0
    assert not c.differences, c.differences
    assert not c.fallbacks or "lstm" in model


def test_a_data_dependent_address_falls_back_and_is_counted() -> None:
    """A gather (its address is loaded): no summary; the compiler's facts
    come from the trace, and the fallback is named."""
    module = _parse(
        """
func.func @gather(%idx: memref<4xi32>, %in: memref<8xi8>, %out: memref<4xi8>)
    attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %j = memref.load %idx[%i] : memref<4xi32>
    %k = arith.index_cast %j : i32 to index
    %v = memref.load %in[%k] : memref<8xi8>
    memref.store %v, %out[%i] : memref<4xi8>
  }
  func.return
}
"""
    )
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    assert summarize(f, (0, 1, 2)) is None
    traces = KernelTraces()
    facts = traces.facts(f, (0, 1, 2))
    assert facts is not None and facts.covered(2)
    assert traces.fallbacks == ["gather"]


def test_a_kernel_beyond_the_tracer_budget_is_left_to_it() -> None:
    """25 M iterations: summarised at no cost, but not used (the replay's
    trace would give up on it and count every byte as touched), so the
    overlap stays as the tracer decides it."""
    module = _parse(
        """
func.func @copy(%in: memref<5000x5000xi8>, %out: memref<5000x5000xi8>)
    attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 5000 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %in[%i, %j] : memref<5000x5000xi8>
      memref.store %v, %out[%i, %j] : memref<5000x5000xi8>
    }
  }
  func.return
}
"""
    )
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    s = summarize(f, (0, 1))
    assert s is not None and s.max_shift(0, 1) == 0 and s.covered(1)
    assert s.iterations == 25_000_000
    assert not decided(f, frozenset((0, 1)), s)
