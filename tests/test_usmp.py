"""usmp end to end: valid plans for every algorithm, and programs that compute
exactly what they computed before planning.

Execution runs on xDSL's interpreter (``usmp.oracle.tir_interpreter``), where
a view shares its pool's bytes and fresh memory is poisoned: a plan that lets
two live buffers overlap clobbers one of them and changes the outputs (the
negative control below shows the harness notices).
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, i8
from xdsl.ir import Operation

from tests.mlir_tools import mlir_bin
from tests.test_usmp_graphs import GRAPHS, random_graph
from usmp.dialects import new_context, tir
from usmp.dialects.tir import INPUT_ALLOCATIONS, OUTPUT_ALLOCATIONS, OUTPUT_TYPES
from usmp.oracle.tir_interpreter import (
    buffer_from_numpy,
    make_interpreter,
    new_buffer,
    numpy_view,
    run_tir_main,
)
from usmp.parsing import LocatingParser
from usmp.passes.usmp import UsmpPass
from usmp.passes.usmp_analysis import analyze
from usmp.passes.usmp_convert_pool_allocations import UsmpConvertPoolAllocationsPass
from usmp.passes.usmp_ir import find_main
from usmp.passes.usmp_plan_memory import PlannedModule, constant_problem, plan_memory
from usmp.passes.usmp_pools import module_pools, resolve_pools
from usmp.passes.usmp_report import benchmark_case, dump_benchmark_case, report_json
from usmp.passes.usmp_validate import read_plan
from usmp.planning.algorithms import ALGORITHMS
from usmp.planning.model import Placement, Plan
from usmp.planning.problem_json import read_problem_json
from usmp.planning.validate import validate_plan

ROOT = Path(__file__).resolve().parent.parent
RANDOM_SEEDS = range(6)


# -- helpers -------------------------------------------------------------------


def parse(text: str) -> ModuleOp:
    module = LocatingParser(new_context(), text, "test.mlir").parse_module()
    module.verify()
    return module


def _inputs(module: ModuleOp, seed: int) -> list[npt.NDArray[Any]]:
    main = find_main(module)
    n_in = len(main.attributes[tir.INPUT_NAMES])  # pyright: ignore
    rng = np.random.default_rng(seed)
    arrays: list[npt.NDArray[Any]] = []
    for t in main.function_type.inputs.data[:n_in]:
        assert isinstance(t, MemRefType)
        arrays.append(rng.integers(-100, 100, t.get_shape(), dtype=np.int8))  # pyright: ignore
    return arrays


def run_main(module: ModuleOp, seed: int) -> list[npt.NDArray[Any]]:
    return run_tir_main(module, _inputs(module, seed))


def planned(module: ModuleOp, **options: Any) -> ModuleOp:
    out = module.clone()
    UsmpPass(**options).apply(new_context(), out)
    out.verify()
    return out


def _global_bytes(module: ModuleOp, name: str) -> bytes:
    for op in module.ops:
        if isinstance(op, memref.GlobalOp) and op.sym_name.data == name:
            return op.initial_value.data.data  # pyright: ignore
    raise AssertionError(f"no memref.global @{name}")


def run_workspace_io(
    module: ModuleOp, inputs: list[npt.NDArray[Any]]
) -> list[npt.NDArray[Any]]:
    """Run an entry function whose inputs/outputs live in the workspace: write
    the inputs into the pool at their recorded offsets, read outputs back."""
    main = find_main(module)
    pools = {p.pool_name.data: p for p in module_pools(module)}
    buffers: dict[str, Any] = {}
    args: list[Any] = []
    for name in main.attributes[tir.POOL_ARGS]:  # pyright: ignore
        pool = pools[name.data]
        type_ = MemRefType(i8, [pool.size.data])
        if pool.kind.data == "constant":
            data = np.frombuffer(_global_bytes(module, name.data), dtype=np.int8)
            buffers[name.data] = buffer_from_numpy(data, type_)
        else:
            buffers[name.data] = new_buffer(type_)
        args.append(buffers[name.data])
    for where, value in zip(main.attributes[INPUT_ALLOCATIONS], inputs, strict=True):  # pyright: ignore
        raw = np.ascontiguousarray(value).view(np.int8).reshape(-1)
        view = numpy_view(buffers[where.pool_name.data])
        view[where.offset.data : where.offset.data + raw.size] = raw
    make_interpreter(module).call_op(main, tuple(args))
    outputs: list[npt.NDArray[Any]] = []
    for where, t in zip(
        main.attributes[OUTPUT_ALLOCATIONS],  # pyright: ignore
        main.attributes[OUTPUT_TYPES],  # pyright: ignore
        strict=True,
    ):
        view = numpy_view(buffers[where.pool_name.data])
        n = int(np.prod(t.get_shape()))
        outputs.append(
            view[where.offset.data : where.offset.data + n]
            .copy()
            .reshape(t.get_shape())
        )
    return outputs


def _cases() -> dict[str, str]:
    cases = dict(GRAPHS)
    cases.update({f"random{seed}": random_graph(seed) for seed in RANDOM_SEEDS})
    return cases


CASES = _cases()


def _static_allocations(module: ModuleOp) -> list[Operation]:
    return [
        op
        for op in module.walk()
        if isinstance(op, (tir.AllocateOp, tir.AllocateConstOp))
    ]


# -- every algorithm plans validly ------------------------------------------------


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_algorithm_gives_a_valid_plan(algorithm: str, case: str) -> None:
    module = parse(CASES[case])
    result = plan_memory(module, algorithm, False, "")
    assert result is not None
    # independent check, from what the IR now records
    analysis = analyze(module, resolve_pools(module, ""), overlap=True)
    recorded = {
        b.name: Placement(b.placement.pool_name.data, b.placement.offset.data)  # pyright: ignore
        for b in (*analysis.buffers, *analysis.constants)
    }
    sizes = {p.pool_name.data: p.size.data for p in module_pools(module)}
    for problem in (analysis.workspace_problem(), constant_problem(analysis)):
        plan = Plan({b.name: recorded[b.name] for b in problem.buffers})
        assert validate_plan(problem, plan, sizes) == []
    before = _plan_signature(result)
    UsmpConvertPoolAllocationsPass().apply(new_context(), module)
    module.verify()
    assert _static_allocations(module) == []
    # the rewritten IR records the same plan, and it validates (usmp-validate)
    assert _plan_signature(read_plan(module)) == before


def _plan_signature(planned: PlannedModule) -> list[tuple[Any, ...]]:
    """The plan without buffer names (a rewrite keeps only SSA name hints)."""
    return sorted(
        (
            b.function,
            b.role,
            planned.placements[b.name].pool,
            planned.placements[b.name].offset,
            b.size,
            b.live,
        )
        for b in (*planned.analysis.buffers, *planned.analysis.constants)
    )


# -- execution equivalence -----------------------------------------------------------


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_usmp_preserves_results(algorithm: str, case: str) -> None:
    module = parse(CASES[case])
    expected = run_main(module, seed=7)
    after = planned(module, algorithm=algorithm)
    assert _static_allocations(after) == []
    for got, want in zip(run_main(after, seed=7), expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", sorted(CASES))
def test_usmp_with_limited_pools_preserves_results(case: str) -> None:
    """A 64-byte first pool forces fallback into the second one."""
    module = parse(CASES[case])
    expected = run_main(module, seed=3)
    after = planned(
        module, pools="tiny:workspace:64,big:workspace,rom:constant:align=1"
    )
    for got, want in zip(run_main(after, seed=3), expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", sorted(CASES))
def test_workspace_io_preserves_results(case: str) -> None:
    module = parse(CASES[case])
    inputs = _inputs(module, seed=5)
    expected = run_tir_main(module, inputs)
    after = planned(module, use_workspace_io=True)
    main = find_main(after)
    assert list(main.function_type.inputs.data) == [
        MemRefType(i8, [p.size.data])
        for p in module_pools(after)
        if p.pool_name.data in [a.data for a in main.attributes[tir.POOL_ARGS]]  # pyright: ignore
    ]
    for got, want in zip(run_workspace_io(after, inputs), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    # the inputs/outputs are found again in the rewritten IR and validate
    roles = [b.role for b in read_plan(after).analysis.buffers]
    assert roles.count("input") == len(inputs)
    assert roles.count("output") == len(expected)


def test_overlapping_plan_is_caught_by_execution() -> None:
    """Negative control: put every workspace buffer at offset 0 (a plan that
    ignores conflicts); the program then computes something else."""
    module = parse(CASES["diamond"])
    expected = run_main(module, seed=2)
    plan_memory(module, "greedy_by_size", False, "")
    for op in module.walk():
        if isinstance(op, tir.AllocateOp):
            assert op.pool_allocation is not None
            op.properties["pool_allocation"] = tir.PoolAllocationAttr(
                op.pool_allocation.pool_name.data, 0
            )
    UsmpConvertPoolAllocationsPass().apply(new_context(), module)
    got = run_main(module, seed=2)
    assert any(not np.array_equal(g, w) for g, w in zip(got, expected, strict=True))


def test_real_model_hello_world() -> None:
    """hello_world_int8 (TFLite Micro) through the whole pipeline: the same
    outputs before and after usmp, for every algorithm."""
    from usmp.frontend.tflite_import import import_model
    from usmp.frontend.tflite_reader import read_model_file
    from usmp.passes import get_all_passes

    path = (
        ROOT.parent / "shared" / "models" / "tflite_micro" / "hello_world_int8.tflite"
    )
    module = import_model(read_model_file(str(path)))
    passes = get_all_passes()
    ctx = new_context()
    for flag in ("fuse-ops", "lower-ops", "aot-lower-main"):
        passes[flag]()().apply(ctx, module)
    module.verify()
    n_constants = sum(isinstance(o, tir.AllocateConstOp) for o in module.walk())
    assert n_constants > 0
    xs = [np.array([[x]], dtype=np.int8) for x in (-128, -40, 0, 17, 127)]
    expected = [run_tir_main(module, [x]) for x in xs]
    for algorithm in sorted(ALGORITHMS):
        after = planned(module, algorithm=algorithm)
        assert _static_allocations(after) == []
        for x, want in zip(xs, expected, strict=True):
            got = run_tir_main(after, [x])
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)


# -- idempotence, report, benchmark cases ---------------------------------------------


@pytest.mark.parametrize("case", ["chain", "multi_pool", "random0"])
def test_usmp_is_idempotent(case: str) -> None:
    once = planned(parse(CASES[case]))
    twice = planned(once)
    assert str(twice) == str(once)


def test_report_files(tmp_path: Path) -> None:
    module = parse(CASES["multi_pool"])
    UsmpPass(algorithm="greedy_by_size", report=str(tmp_path / "plan.json")).apply(
        new_context(), module
    )
    report = json.loads((tmp_path / "plan.json").read_text())
    assert report["algorithm"] == "greedy_by_size"
    pools = {p["name"]: p for p in report["pools"]}
    # (with liveness per statement every workspace buffer fits in dtcm; per
    # call, sram took the rest)
    assert set(pools) == {"dtcm", "flash"}
    for p in pools.values():
        assert 0 < p["lower_bound"] <= p["size"]
        assert p["ratio"] == pytest.approx(p["size"] / p["lower_bound"], abs=1e-3)
    sizes = {p.pool_name.data: p.size.data for p in module_pools(module)}
    assert sizes["sram"] == 0
    assert {n: p["size"] for n, p in pools.items()} == {
        n: size for n, size in sizes.items() if n != "sram"
    }
    for b in report["buffers"]:
        assert b["offset"] + b["size"] <= sizes[b["pool"]]
        assert b["function"] in {"tvmgen_default___tvm_main__", "wide", "narrow"}
    # scratch of an operator called at several steps has several live intervals
    wide = next(b for b in report["buffers"] if b["name"] == "wide/scratch0")
    assert wide["live"] == [[0, 1], [3, 4]]
    for pool in pools:
        svg = ET.parse(tmp_path / f"plan.{pool}.svg").getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        workspace = pools[pool]["kind"] == "workspace"
        for legend in svg.findall('{http://www.w3.org/2000/svg}g[@class="legend"]'):
            svg.remove(legend)  # its swatches look like the marks
        rects = [
            r
            for r in svg.iter("{http://www.w3.org/2000/svg}rect")
            if r.get("fill-opacity") == ("0.75" if workspace else "0.8")
        ]
        titles = [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}title")]
        members = [b for b in report["buffers"] if b["pool"] == pool]
        # a workspace buffer per live interval, a constant per step reading it
        drawn = sum(len(b["live"] if workspace else b["read_at"]) for b in members)
        assert len(rects) == drawn
        # every step is a hover target naming its operator
        for step, callee in enumerate(report["steps"]):
            assert any(t.startswith(f"step {step}: ") and callee in t for t in titles)
        for b in members:
            assert any(t.startswith(f"{b['name']} (") for t in titles)


def test_report_lower_bound_is_the_liveness_peak() -> None:
    module = parse(CASES["chain"])
    result = plan_memory(module, "greedy_by_size", False, "")
    assert result is not None
    report = report_json(result)
    (ws,) = [p for p in report["pools"] if p["kind"] == "workspace"]  # pyright: ignore
    # step 0: conv(x -> sid_0) with its 32 B scratch; step 1: sid_0, sid_1;
    # step 2: conv(sid_1 -> y) with its scratch
    assert ws["lower_bound"] == 8 + 32  # pyright: ignore


def test_benchmark_case_dump(tmp_path: Path) -> None:
    module = parse(CASES["chain"])
    result = plan_memory(module, "greedy_by_size", False, "")
    assert result is not None
    case = benchmark_case(result)
    assert case["pools"] == [
        {"name": "global_workspace", "size_limit": None, "alignment": 16}
    ]
    by_name = {b["name"]: b for b in case["buffers"]}
    assert set(by_name) == {"sid_0", "sid_1", "conv/scratch0"}
    scratch = by_name["conv/scratch0"]
    # live at steps 0 and 2: interval [0, 1), the second call as conflicts
    assert (scratch["start"], scratch["end"]) == (0, 1)
    assert scratch["conflicts"] == ["sid_1"]
    assert scratch["size"] == 32 and scratch["alignment"] == 4
    dump_benchmark_case(result, tmp_path / "cases" / "chain.json")
    problem = read_problem_json(tmp_path / "cases" / "chain.json")
    assert problem == result.analysis.workspace_problem()


def test_composite_leaves_dynamic_allocations() -> None:
    module = parse(
        """
        func.func @main(%x: memref<4xi8>) attributes {tir.prim_func, tir.main,
            tir.input_names = ["x"], tir.output_names = []} {
          %c4 = arith.constant 4 : index
          %d = memref.alloc(%c4) : memref<?xi8>
          %s = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
          memref.dealloc %d : memref<?xi8>
          func.return
        }
        """
    )
    after = planned(module)
    ops = [op.name for op in after.walk()]
    assert "memref.alloc" in ops and "memref.dealloc" in ops
    assert _static_allocations(after) == []
    assert isinstance(find_main(after), func.FuncOp)


def test_cli_aot_lower_main_then_usmp(tmp_path: Path) -> None:
    """``usmp-opt in.mlir -p aot-lower-main,usmp`` on a relay main whose
    operators are tir prim funcs (with scratch): the result computes what
    aot-lower-main's output computes, and real mlir-opt accepts it."""
    from tests.test_usmp_graphs import elementwise_op

    ops = "\n".join(
        [
            elementwise_op("scale", [8], 8, [(12, "i16")], [3], 1),
            elementwise_op("mix", [8, 8], 8, [(8, "i32"), (16, "i16")], [1, -2], 0),
        ]
    )
    source = (
        ops
        + """
func.func @main(%x: tensor<8xi8>) -> tensor<8xi8> {
  %w = relay.constant dense<[1, -1, 2, -2, 3, -3, 4, -4]> : tensor<8xi8>
  %0 = relay.call @scale(%x) : (tensor<8xi8>) -> tensor<8xi8>
  %1 = relay.call @mix(%0, %w) : (tensor<8xi8>, tensor<8xi8>) -> tensor<8xi8>
  %2 = relay.call @mix(%1, %0) : (tensor<8xi8>, tensor<8xi8>) -> tensor<8xi8>
  func.return %2 : tensor<8xi8>
}
"""
    )
    path = tmp_path / "model.mlir"
    path.write_text(source)

    def usmp_opt(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "usmp.tools.usmp_opt", str(path), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    lowered = parse(usmp_opt("-p", "aot-lower-main"))
    planned_text = usmp_opt("-p", "aot-lower-main,usmp")
    after = parse(planned_text)
    assert "tir.allocate" not in planned_text
    assert '"memref.global"() <{sym_name = "global_const"' in planned_text
    for seed in range(3):
        for got, want in zip(
            run_main(after, seed), run_main(lowered, seed), strict=True
        ):
            np.testing.assert_array_equal(got, want)
    mlir = mlir_bin()
    if mlir is not None:
        generic = usmp_opt("-p", "aot-lower-main,usmp", "--print-op-generic")
        done = subprocess.run(
            [str(mlir / "mlir-opt"), "--allow-unregistered-dialect"],
            input=generic,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
