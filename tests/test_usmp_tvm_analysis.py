"""TVM's USMP buffer info analysis and algorithm tests on the project's IR.

The modules of apache/tvm's ``test_tir_usmp_analysis_extract_bufferinfo.py``
and ``test_tir_usmp_algo.py`` (``tests/tvm_usmp_cases.py``) go through the
project's own analysis (liveness per statement inside the operators), which
must find TVM's conflicts and memory pressure; the planning algorithms then
must reach TVM's pool sizes, and every plan passes the independent validator.
Where the project differs from TVM on purpose the test says so (and
``docs/tvm-differences.md`` lists it).
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.tvm_usmp_cases import (
    ALL_SERIAL,
    INCEPTION,
    INCEPTION_CONFLICTS,
    INCEPTION_PRESSURE,
    LINEAR,
    LINEAR_CONFLICTS,
    LINEAR_PRESSURE,
    MOBILENET_POOLS,
    MULTIPLE_CALLS,
    MULTIPLE_CALLS_CONFLICTS,
    MULTIPLE_CALLS_PRESSURE,
    PARALLEL_SERIAL_MIXED,
    RESNET,
    RESNET_CONFLICTS,
    RESNET_OFFSETS,
    RESNET_PRESSURE,
    RESNET_WORKSPACE,
    Case,
    module_text,
)
from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_analysis import BufferInfoAnalysis, analyze
from usmp.passes.usmp_pools import parse_pools_option, resolve_pools
from usmp.planning.algorithms import get_algorithm
from usmp.planning.lower_bound import interval_peak
from usmp.planning.model import Buffer
from usmp.planning.validate import validate_plan

TVM_ALGORITHMS = ("greedy_by_size", "greedy_by_conflicts", "hill_climb")


def parse(case: Case) -> ModuleOp:
    module = LocatingParser(new_context(), module_text(case), "tvm.mlir").parse_module()
    module.verify()
    return module


def analysed(case: Case, pools: str = "") -> BufferInfoAnalysis:
    module = parse(case)
    return analyze(
        module, parse_pools_option(pools) if pools else resolve_pools(module, "")
    )


def conflicts(analysis: BufferInfoAnalysis) -> dict[str, set[str]]:
    """TVM's view: buffers by their name hint (TVM names a scratch by its
    variable), each with the names it conflicts with."""
    hint = {b.name: b.name_hint for b in analysis.buffers}
    return {
        hint[name]: {hint[o] for o in others}
        for name, others in analysis.conflicts.items()
    }


def pressure(analysis: BufferInfoAnalysis) -> int:
    """TVM's memory pressure: the peak of the bytes live at once."""
    return interval_peak(
        Buffer(f"{b.name}@{s}", b.size, s, e)
        for b in analysis.buffers
        for s, e in b.ticks
    )


@pytest.mark.parametrize(
    ("case", "expected", "peak"),
    [
        (LINEAR, LINEAR_CONFLICTS, LINEAR_PRESSURE),
        (INCEPTION, INCEPTION_CONFLICTS, INCEPTION_PRESSURE),
        (MULTIPLE_CALLS, MULTIPLE_CALLS_CONFLICTS, MULTIPLE_CALLS_PRESSURE),
        (RESNET, RESNET_CONFLICTS, RESNET_PRESSURE),
    ],
    ids=["linear", "inception", "multiple_calls", "resnet"],
)
def test_conflicts_and_pressure_are_tvms(
    case: Case, expected: dict[str, set[str]], peak: int
) -> None:
    """Every buffer TVM's test checks has exactly the conflicts it lists (TVM
    checks inclusion; equality is stronger), and the memory pressure is TVM's."""
    analysis = analysed(case)
    found = conflicts(analysis)
    assert set(expected) <= set(found)
    assert {n: found[n] for n in expected if found[n] != expected[n]} == {}
    assert pressure(analysis) == peak


def test_parallel_loop_allocations_are_not_planned() -> None:
    """test_parallel_serial_mixed_for_loops: with serial loops all three
    allocations are planned (``dummy_allocate`` is never touched, so it is
    never live: the memory pressure is 430,848 B either way). Under a
    ``scf.parallel`` an allocation is per iteration, thread-local, and not
    the planner's: TVM still plans ``Conv2dOutput_8`` (2 buffers), which is
    declared in a serial loop *inside* the parallel one and so would be
    shared by the threads; the project leaves every allocation under a
    parallel loop alone (1 buffer, see docs/tvm-differences.md)."""
    serial = analysed(ALL_SERIAL)
    assert {b.name_hint for b in serial.buffers} == {
        "PaddedInput_8",
        "Conv2dOutput_8",
        "dummy_allocate",
    }
    assert pressure(serial) == 430848
    mixed = analysed(PARALLEL_SERIAL_MIXED)
    assert {b.name_hint for b in mixed.buffers} == {"PaddedInput_8"}
    assert pressure(mixed) == 430592


@pytest.mark.parametrize("algorithm", TVM_ALGORITHMS)
def test_mobilenet_subgraph(algorithm: str) -> None:
    """test_mobilenet_subgraph: a 200,704 B fast pool before an unbounded
    slow one; TVM's sizes for both."""
    analysis = analysed(
        LINEAR, "fast_memory:workspace:200704:align=16,slow_memory:workspace:align=16"
    )
    problem = analysis.workspace_problem()
    plan = get_algorithm(algorithm)(problem)
    assert validate_plan(problem, plan) == []
    sizes = plan.pool_sizes(problem)
    assert (sizes["fast_memory"], sizes["slow_memory"]) == MOBILENET_POOLS[algorithm]


@pytest.mark.parametrize("algorithm", TVM_ALGORITHMS)
def test_resnet_subgraph(algorithm: str) -> None:
    """test_resnet_subgraph: TVM's workspace for each algorithm."""
    analysis = analysed(RESNET, "global_workspace:workspace:align=16")
    problem = analysis.workspace_problem()
    plan = get_algorithm(algorithm)(problem)
    assert validate_plan(problem, plan) == []
    assert plan.pool_sizes(problem)["global_workspace"] == RESNET_WORKSPACE[algorithm]


def test_resnet_conversion_offsets() -> None:
    """test_tir_usmp_transform_convert_pool_allocations_to_offsets.py::
    test_resnet_subgraph: with greedy_by_size every buffer lands at TVM's
    offset (main's storage ids and each operator's scratch)."""
    analysis = analysed(RESNET, "global_workspace:workspace:align=16")
    problem = analysis.workspace_problem()
    plan = get_algorithm("greedy_by_size")(problem)
    hint = {b.name: b.name_hint for b in analysis.buffers}
    offsets = {hint[name]: p.offset for name, p in plan.placements.items()}
    assert offsets == RESNET_OFFSETS
