"""``docs/tvm-differences.md`` is current: its rows are recomputed here.

For every row whose ``id`` is in ``MEASURED``, the transcribed TVM test case
is run through the project (analysis, planning) and the row's *TVM* and
*ours* cells must say what TVM's test expects and what the project gives;
every other row must name a test (``tests/<file>.py::<name>`` or a FileCheck
file) that exists. A behaviour change that the table does not reflect fails
here with the row to update.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_planning_tvm import FANOUT_CONFLICTS, FANOUT_SIZES, tvm_problem
from tests.test_usmp_tvm_analysis import analysed, pressure
from tests.tvm_usmp_cases import (
    INCEPTION,
    INCEPTION_PRESSURE,
    LINEAR,
    LINEAR_PRESSURE,
    MOBILENET_POOLS,
    MULTIPLE_CALLS,
    MULTIPLE_CALLS_PRESSURE,
    PARALLEL_SERIAL_MIXED,
    RESNET,
    RESNET_PRESSURE,
    RESNET_WORKSPACE,
    Case,
)
from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_plan_memory import plan_memory
from usmp.planning.algorithms import get_algorithm

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs/tvm-differences.md"
FANOUT_TVM = {"greedy_by_size": 190, "greedy_by_conflicts": 320, "hill_climb": 190}
"""test_tir_usmp_algo.py::test_fanout."""


def _bytes(n: int) -> str:
    return f"{n:,} B"


def _pools(fast: int, slow: int) -> str:
    return f"{fast:,} + {slow:,} B"


def _mobilenet(algorithm: str) -> Callable[[], tuple[str, str]]:
    def measure() -> tuple[str, str]:
        analysis = analysed(
            LINEAR,
            "fast_memory:workspace:200704:align=16,slow_memory:workspace:align=16",
        )
        problem = analysis.workspace_problem()
        sizes = get_algorithm(algorithm)(problem).pool_sizes(problem)
        ours = _pools(sizes["fast_memory"], sizes["slow_memory"])
        return _pools(*MOBILENET_POOLS[algorithm]), ours

    return measure


def _resnet(algorithm: str) -> Callable[[], tuple[str, str]]:
    def measure() -> tuple[str, str]:
        problem = analysed(
            RESNET, "global_workspace:workspace:align=16"
        ).workspace_problem()
        size = get_algorithm(algorithm)(problem).pool_sizes(problem)["global_workspace"]
        return _bytes(RESNET_WORKSPACE[algorithm]), _bytes(size)

    return measure


def _fanout(algorithm: str) -> Callable[[], tuple[str, str]]:
    def measure() -> tuple[str, str]:
        problem = tvm_problem(FANOUT_SIZES, FANOUT_CONFLICTS)
        size = get_algorithm(algorithm)(problem).pool_sizes(problem)["global_workspace"]
        return _bytes(FANOUT_TVM[algorithm]), _bytes(size)

    return measure


def _pressure(case: Case, tvm: int) -> Callable[[], tuple[str, str]]:
    return lambda: (_bytes(tvm), _bytes(pressure(analysed(case))))


MERGE_ALLOCATIONS = """
func.func @subroutine(%a: memref<256xi8>, %b: memref<256xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 256 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<256xi8>
    memref.store %v, %b[%i] : memref<256xi8>
  }
  func.return
}
func.func @main(%A: memref<256xi8>, %D: memref<256xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["A"], tir.output_names = ["D"]} {
  %B = tir.allocate {name_hint = "B"} : memref<256xi8>
  %C = tir.allocate {name_hint = "C"} : memref<256xi8>
  tir.call @subroutine(%A, %B) : (memref<256xi8>, memref<256xi8>) -> ()
  tir.call @subroutine(%B, %C) : (memref<256xi8>, memref<256xi8>) -> ()
  tir.call @subroutine(%C, %D) : (memref<256xi8>, memref<256xi8>) -> ()
  func.return
}
"""  # noqa: E501
"""TVM's TestMergeAllocations (test_tir_usmp_transform_convert_pool_
allocations_to_offsets.py): copies through two storage ids; TVM's workspace
is 512 B."""


def _merge_allocations(algorithm: str) -> Callable[[], tuple[str, str]]:
    def measure() -> tuple[str, str]:
        module = LocatingParser(
            new_context(), MERGE_ALLOCATIONS, "m.mlir"
        ).parse_module()
        planned = plan_memory(module, algorithm, False, "")
        assert planned is not None
        return _bytes(512), _bytes(planned.sizes["global_workspace"])

    return measure


MEASURED: dict[str, Callable[[], tuple[str, str]]] = {
    "merge_allocations_greedy_by_size": _merge_allocations("greedy_by_size"),
    "merge_allocations_default": _merge_allocations("best_fit"),
    "linear_pressure": _pressure(LINEAR, LINEAR_PRESSURE),
    "inception_pressure": _pressure(INCEPTION, INCEPTION_PRESSURE),
    "multiple_calls_pressure": _pressure(MULTIPLE_CALLS, MULTIPLE_CALLS_PRESSURE),
    "resnet_pressure": _pressure(RESNET, RESNET_PRESSURE),
    "parallel_serial_mixed": lambda: (
        "2",
        str(len(analysed(PARALLEL_SERIAL_MIXED).buffers)),
    ),
    **{f"mobilenet_{a}": _mobilenet(a) for a in MOBILENET_POOLS},
    **{f"resnet_{a}": _resnet(a) for a in RESNET_WORKSPACE},
    **{f"fanout_{a}": _fanout(a) for a in FANOUT_TVM},
}


def rows() -> dict[str, list[str]]:
    """The table: id -> its cells (behaviour, TVM, ours, why)."""
    found: dict[str, list[str]] = {}
    for line in TABLE.read_text().splitlines():
        match = re.match(r"\| `(\w+)` \|(.*)\|$", line)
        if match:
            found[match.group(1)] = [c.strip() for c in match.group(2).split("|")]
    return found


def test_every_row_has_four_cells_and_a_reason() -> None:
    table = rows()
    assert len(table) >= len(MEASURED)
    for row_id, cells in table.items():
        assert len(cells) == 4, row_id
        why = cells[3]
        assert why.startswith(("same", "deliberate", "not yet done")), row_id


@pytest.mark.parametrize("row_id", sorted(MEASURED))
def test_measured_rows_are_current(row_id: str) -> None:
    table = rows()
    assert row_id in table, f"docs/tvm-differences.md lacks the row `{row_id}`"
    _, tvm_cell, ours_cell, why = table[row_id]
    tvm, ours = MEASURED[row_id]()
    assert (tvm_cell, ours_cell) == (tvm, ours), (
        f"update the row `{row_id}` of docs/tvm-differences.md: TVM {tvm}, ours {ours}"
    )
    assert why.startswith("same") == (tvm == ours), row_id


def test_other_rows_name_an_existing_test() -> None:
    for row_id, cells in rows().items():
        if row_id in MEASURED or cells[3].startswith("not yet done"):
            continue
        refs = re.findall(r"`(tests/[\w/.]+)(?:::(\w+))?`", cells[3])
        assert refs, f"row `{row_id}` names no test"
        for path, name in refs:
            source = ROOT / path
            assert source.exists(), f"row `{row_id}`: {path} does not exist"
            if name:
                assert f"def {name}(" in source.read_text(), f"row `{row_id}`: {name}"
