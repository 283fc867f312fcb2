"""Allowed overlaps: the kernel tracer, the shifts, the replay check, and
random graphs with overlaps under ASan against the oracle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_analysis import analyze
from usmp.passes.usmp_kernel_trace import (
    NEVER,
    ByteTimes,
    max_shift,
    min_shift,
    shift_is_safe,
    trace_kernel,
)
from usmp.passes.usmp_overlap import overlap_violations
from usmp.passes.usmp_pools import resolve_pools
from usmp.planning.algorithms import ALGORITHMS
from usmp.planning.lower_bound import lower_bound, no_alias_bound, overlap_saving
from usmp.planning.model import Buffer, Overlap, Placement, Plan, Pool, Problem
from usmp.planning.validate import validate_plan
from usmp.testing.fuzz_graphs import generate_from_seed
from usmp.testing.fuzz_run import run_batch

KERNELS = (
    Path(__file__).parent / "filecheck" / "passes" / "usmp_buffer_info_overlap.mlir"
)


def _module():
    return LocatingParser(new_context(), KERNELS.read_text(), "k.mlir").parse_module()


def _random_times(
    rng: np.random.Generator, n: int, m: int
) -> tuple[ByteTimes, ByteTimes]:
    last = rng.integers(-1, 40, n)
    first = rng.integers(0, 40, m).astype(np.int64)
    first[rng.random(m) < 0.2] = NEVER
    return ByteTimes(last, np.full(n, NEVER)), ByteTimes(np.full(m, -1), first)


@pytest.mark.parametrize("seed", range(40))
def test_shifts_match_a_byte_by_byte_replay(seed: int) -> None:
    """Every shift at or below ``max_shift`` (at or above ``min_shift``) is
    safe by the replay, and the next one beyond each is not."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 12)), int(rng.integers(1, 12))
    src, dst = _random_times(rng, n, m)
    below, above = max_shift(src, dst), min_shift(src, dst)
    safe = {d: not shift_is_safe(src, dst, d) for d in range(-m - 2, n + 3)}
    assert all(safe[d] for d in safe if d <= below or d >= above)
    if -m < below + 1 < n:
        assert not safe[below + 1]
    if -m < above - 1 < n:
        assert not safe[above - 1]


def test_trace_of_each_kernel_kind() -> None:
    """In place where the order allows it, never where it does not."""
    fs = {f.sym_name.data: f for f in _module().ops if isinstance(f, func.FuncOp)}
    shifts = {}
    for name in ("relu", "transpose", "row_sum", "col_sum"):
        trace = trace_kernel(fs[name], (0, 1))
        assert trace is not None
        shifts[name] = max_shift(trace[0], trace[1])
        assert (trace[0].first_write == NEVER).all()  # inputs only read
        assert (trace[1].first_write != NEVER).all()  # every output byte written
    assert shifts == {"relu": 0, "transpose": -49, "row_sum": 0, "col_sum": -56}


def test_replay_rejects_an_unsafe_in_place_plan() -> None:
    """The IR-level check replays the kernel at the planned addresses: the
    relu in place passes, the transpose in place (a transposing op) and the
    column sum in place (a reduction re-reading its input) do not."""
    module = _module()
    analysis = analyze(module, resolve_pools(module, ""), True)
    assert analysis.functions is not None
    names = [b.name for b in analysis.buffers]
    assert names == ["x", "y", "sid_0", "sid_1", "sid_2", "sid_3"]
    where = {n: Placement("global_workspace", 0) for n in names}
    problems = overlap_violations(analysis, analysis.functions, where)
    assert len(problems) == 2, problems
    assert "'transpose' (step 2) writes 'sid_2' over byte(s) 1," in problems[0]
    assert "'col_sum' (step 3) writes 'sid_3' over byte(s)" in problems[1]
    # the transpose 64 bytes up (disjoint) and the column sum's output 56
    # bytes below its input: safe
    where["sid_2"] = Placement("global_workspace", 64)
    where["sid_1"] = Placement("global_workspace", 0)
    where["sid_3"] = Placement("global_workspace", 8)
    where["sid_2"] = Placement("global_workspace", 64)
    where["sid_3"] = Placement("global_workspace", 8)
    where["y"] = Placement("global_workspace", 8)
    assert overlap_violations(analysis, analysis.functions, where) == []
    where["sid_3"] = Placement("global_workspace", 9)  # 55 below: too high
    where["y"] = Placement("global_workspace", 9)
    assert overlap_violations(analysis, analysis.functions, where)


def test_planners_and_bounds_with_overlaps() -> None:
    """Every algorithm's plan passes the validator; the finer bound lies
    between what overlaps can share and the no-alias bound."""
    buffers = (
        Buffer("a", 100, 0, 2),
        Buffer("b", 100, 1, 3),
        Buffer("c", 200, 2, 4),
        Buffer("d", 50, 3, 5),
    )
    overlaps = (
        Overlap("a", "b", -10),
        Overlap("b", "c", -100),
        Overlap("c", "d", -300, 150),
    )
    problem = Problem(buffers, (Pool("p", alignment=1),), overlaps)
    assert no_alias_bound(problem) == 300
    assert lower_bound(problem) == 200
    assert overlap_saving(100, 100, -10) == 90
    assert overlap_saving(200, 50, -300, 150) == 50
    for name, algorithm in ALGORITHMS.items():
        plan = algorithm(problem)
        assert validate_plan(problem, plan) == [], name
        assert sum(plan.pool_sizes(problem).values()) >= lower_bound(problem)
    best = ALGORITHMS["best_fit"](problem)
    assert best.pool_sizes(problem) == {"p": 200}
    # a hand-made plan breaking a shift is refused
    bad = Plan(
        {
            "a": Placement("p", 0),
            "b": Placement("p", 0),
            "c": Placement("p", 200),
            "d": Placement("p", 300),
        }
    )
    assert any("'a'" in v and "'b'" in v for v in validate_plan(problem, bad))
    without = dataclasses.replace(problem, overlaps=())
    assert validate_plan(without, best)  # it does use the overlaps


@pytest.mark.parametrize("batch", range(2))
def test_random_graphs_with_overlaps_match_the_oracle(batch: int) -> None:
    """Random relay graphs with I/O in the workspace (where most overlaps
    are), every algorithm, overlaps on (the default): C under ASan/UBSan
    equal to the oracle, every plan validated (replays included)."""
    cases = [
        dataclasses.replace(
            generate_from_seed(7000 + 6 * batch + k), use_workspace_io=True
        )
        for k in range(6)
    ]
    failures = [r for r in run_batch(cases) if r.failure is not None]
    assert all(
        r.failure is not None and "fits in no candidate pool" in r.failure.message
        for r in failures
    ), [(r.case.name, r.failure) for r in failures]


def test_no_overlap_between_types_that_may_not_alias() -> None:
    """An int32 -> int16 elementwise kernel is in place by its access order,
    but C's aliasing rules let a compiler reorder an int32_t read and an
    int16_t write: no overlap is allowed (an int8 output may alias)."""
    text = """
    func.func @narrow(%in: memref<8xi32>, %out: memref<8xOUT>) attributes {tir.prim_func} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      scf.for %i = %c0 to %c8 step %c1 {
        %v = memref.load %in[%i] : memref<8xi32>
        %n = arith.trunci %v : i32 to OUT
        memref.store %n, %out[%i] : memref<8xOUT>
      }
      func.return
    }
    func.func @main(%x: memref<8xi32>, %y: memref<8xOUT>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
      tir.call @narrow(%x, %y) : (memref<8xi32>, memref<8xOUT>) -> ()
      func.return
    }
    """
    found = {}
    for out in ("i16", "i8"):
        module = LocatingParser(
            new_context(), text.replace("OUT", out), "n.mlir"
        ).parse_module()
        found[out] = analyze(module, resolve_pools(module, ""), True, True).overlaps
    assert found == {"i16": (), "i8": (Overlap("x", "y", 3, None),)}


CONSUMED = KERNELS.with_name("usmp_buffer_info_consumed_input.mlir")


def test_check_of_a_stage_consuming_its_input() -> None:
    """Two stripes read rows 0..4 and 3..7 of the input x (16-byte rows):
    the second stripe's output may lie on x's first three rows (bytes the
    second stripe no longer reads), not one byte further; the first
    stripe's output may not lie on rows the second stripe still reads."""
    module = LocatingParser(
        new_context(), CONSUMED.read_text(), "c.mlir"
    ).parse_module()
    analysis = analyze(module, resolve_pools(module, ""), True, True)
    assert analysis.functions is not None
    assert Overlap("x", "sid_1", -32, None) in analysis.overlaps
    assert not any(o.target == "sid_0" for o in analysis.overlaps)
    problem = analysis.workspace_problem()

    def check(where: dict[str, int]) -> list[str]:
        plan = {n: Placement("global_workspace", o) for n, o in where.items()}
        found = validate_plan(problem, Plan(plan))
        replayed = overlap_violations(analysis, analysis.functions or {}, plan)
        assert bool(found) == bool(replayed), (found, replayed)
        return replayed

    assert check({"x": 112, "y": 240, "sid_0": 0, "sid_1": 80}) == []
    late = check({"x": 112, "y": 240, "sid_0": 0, "sid_1": 81})
    assert (
        len(late) == 1
        and (
            "'sid_1' (first written at step 1) is placed over byte(s) 48..48 of 'x', "
            "which are still accessed at step 1"
        )
        in late[0]
    )
    early = check({"x": 112, "y": 272, "sid_0": 192, "sid_1": 32})
    assert (
        len(early) == 1
        and (
            "'sid_0' (first written at step 0) is placed over byte(s) 80..127 of "
            "'x', which are still accessed at step 1"
        )
        in early[0]
    )
