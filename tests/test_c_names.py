"""Names that reach the generated C: keywords, reserved identifiers, names
that collide with generated ones or with each other once mangled.

Every model is compiled through the user's pipeline, built with gcc
(``-std=c99 -Wall -Wextra -Werror -pedantic``, AddressSanitizer) and with g++
(the C must be C++ too), run, and compared with the relay oracle. The names
the C uses must agree between the definition and every use: the struct
fields of ``tvmgen_<m>.h``, ``tvmgen_<m>.c``, the entry function and
``metadata.json`` (``c_interface``).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from usmp.lowering.c_names import RESERVED, Namer, c_identifier, is_reserved
from usmp.oracle.relay_interpreter import evaluate
from usmp.passes.usmp_pools import PoolSpecError, parse_pools_option
from usmp.testing.run_c import run_module, run_pipeline
from usmp.tools.c_library import load, single_source
from usmp.tools.pool_flags import PoolFlagError, parse_pool_flags, split_pool_flags

CXXFLAGS = ("-x", "c++", "-std=c++11", "-O1", "-Wall", "-Wextra", "-Werror")


def two_in_two_out(inputs: list[str], outputs: list[str]) -> str:
    """dense(relu(dense(a + c) * b)) and dense(a + c), with the given input and
    output names: two intermediate buffers live at once (32 bytes)."""
    names = ", ".join(f'"{n}"' for n in inputs)
    results = ", ".join(f'"{n}"' for n in outputs)
    t = "tensor<1x4xf32>"
    w = "tensor<4x4xf32>"
    return f"""
func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}) attributes {{
    relay.input_tensor_names = [{names}], relay.output_tensor_names = [{results}]}} {{
  %c = relay.constant dense<[[0.5, -1.0, 2.0, -3.0]]> : {t}
  %w = relay.constant dense<[[1.0, 0.5, 0.0, -1.0], [0.25, -2.0, 1.0, 0.0],
                             [0.0, 1.0, -0.5, 2.0], [-1.0, 0.0, 0.75, 1.5]]> : {w}
  %0 = relay.add %a, %c : ({t}, {t}) -> {t}
  %1 = relay.dense %0, %w : ({t}, {w}) -> {t}
  %2 = relay.multiply %1, %b : ({t}, {t}) -> {t}
  %3 = relay.relu %2 : {t} -> {t}
  %4 = relay.dense %3, %w : ({t}, {w}) -> {t}
  %5 = relay.dense %0, %w : ({t}, {w}) -> {t}
  func.return %4, %5 : {t}, {t}
}}
"""


def pipeline(module_name: str = "default", pools: str = "") -> str:
    usmp = f'usmp{{pools="{pools}"}}' if pools else "usmp"
    return (
        f"fuse-ops{{module_name={module_name}}},lower-ops,"
        f"aot-lower-main{{module_name={module_name}}},{usmp}"
    )


def check_runs(text: str, passes: str) -> None:
    """gcc (C99, sanitized) and g++ builds agree with the oracle."""
    rng = np.random.default_rng(0)
    module = load(text)
    main = next(iter(module.ops))
    n_inputs = len(main.body.block.args)  # pyright: ignore[reportAttributeAccessIssue]
    inputs = [rng.standard_normal((1, 4)).astype(np.float32) for _ in range(n_inputs)]
    want = evaluate(load(text), inputs)
    for kwargs in (
        {"sanitize": True},
        {"cflags": CXXFLAGS, "compiler": "g++"},
    ):
        got = run_module(text, inputs, passes=passes, **kwargs)  # pyright: ignore[reportArgumentType]
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


NAME_CASES = {
    "keywords": (["default", "for"], ["int", "main"]),
    "cpp_keywords": (["class", "new"], ["template", "this"]),
    "run_locals_and_generated": (
        ["inputs", "while"],
        ["outputs", "tvmgen_default_run"],
    ),
    "reserved_and_library": (["__x", "_X"], ["int8_t", "expf"]),
    "macro_name": (
        ["TVM_DEFAULT_GLOBAL_WORKSPACE_WORKSPACE_BUFFER_SIZE", "USMP_ALIGNED"],
        ["NULL", "o"],
    ),
    "collide_after_mangling": (["default", "default_"], ["for_", "for"]),
}


@pytest.mark.parametrize("case", sorted(NAME_CASES))
def test_tensor_names(case: str) -> None:
    inputs, outputs = NAME_CASES[case]
    check_runs(two_in_two_out(inputs, outputs), pipeline())


@pytest.mark.parametrize(
    "pools",
    [
        "for:workspace:16,int:workspace",  # keywords
        "run:workspace:16,inputs:workspace:16,fused_add:workspace",  # generated names
        "for:workspace:16,for_:workspace,default:constant",  # collide once mangled
    ],
)
def test_pool_names(pools: str) -> None:
    check_runs(two_in_two_out(["x", "y"], ["p", "q"]), pipeline(pools=pools))


@pytest.mark.parametrize("module_name", ["for", "int", "main", "_X", "inputs"])
def test_module_names(module_name: str) -> None:
    check_runs(
        two_in_two_out(["default", "tvmgen_default_run"], ["o", "p"]),
        pipeline(module_name, "sram:workspace:16,dram:workspace"),
    )


def test_names_agree_between_header_source_and_json(tmp_path: Path) -> None:
    """Application-provided pools (U2/U3): the renamed fields and macros in
    tvmgen_default.h are the ones tvmgen_default.c uses and metadata.json reports."""
    text = two_in_two_out(["default", "default_"], ["for", "o"])
    mlir = tmp_path / "model.mlir"
    mlir.write_text(text)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            "usmp-compile",
            str(mlir),
            "-o",
            str(out),
            "-q",
            "--usmp-workspace-pools",
            "for,int",
            "--usmp-workspace-pool-for",
            "size=16",
            "--usmp-parameter-pools",
            "default",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    interface = json.loads((out / "metadata.json").read_text())["c_interface"]
    header = (out / "codegen/host/include/tvmgen_default.h").read_text()
    source = (out / "codegen/host/src/tvmgen_default.c").read_text()
    fields = [t["c_name"] for t in interface["inputs"] + interface["outputs"]]
    assert fields == ["default_", "default_1", "for_", "o"]
    for field in fields:
        assert re.search(rf"\* {field};", header)
        assert f"->{field}" in source
    for pool in interface["pools"]:
        assert not is_reserved(pool["c_name"])
        assert f"#define {pool['size_macro']} " in header
        if pool["provided_by"] == "application":
            assert re.search(rf"\* {pool['c_name']};", header)
            assert f"->{pool['c_name']}" in source
    sources = sorted((out / "codegen/host/src").glob("*.c"))
    include = ["-I", str(out / "codegen/host/include")]
    for compiler, flags in (
        ("gcc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]),
        ("g++", list(CXXFLAGS)),
    ):
        for src in sources:
            built = subprocess.run(
                [compiler, *flags, *include, "-c", str(src), "-o", str(tmp_path / "o")],
                capture_output=True,
                text=True,
                check=False,
            )
            assert built.returncode == 0, built.stderr


EDGE_MODELS = {
    "unused_input": """
func.func @main(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = relay.relu %a : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
""",
    "constant_result": """
func.func @main(%a: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %c = relay.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  func.return %c : tensor<1x4xf32>
}
""",
    "no_inputs": """
func.func @main() -> tensor<1x4xf32> {
  %c = relay.constant dense<[[1.0, -2.0, 3.0, -4.0]]> : tensor<1x4xf32>
  %0 = relay.relu %c : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
""",
    "input_is_output": """
func.func @main(%a: tensor<1x4xf32>) -> tensor<1x4xf32> {
  func.return %a : tensor<1x4xf32>
}
""",
}


@pytest.mark.parametrize("case", sorted(EDGE_MODELS))
@pytest.mark.parametrize("io", [False, True], ids=["io_outside", "io_in_workspace"])
def test_edge_models_compile_and_run(case: str, io: bool) -> None:
    usmp = "usmp{use_workspace_io=true}" if io else "usmp"
    check_runs(EDGE_MODELS[case], f"fuse-ops,lower-ops,aot-lower-main,{usmp}")


def test_single_source_compiles(tmp_path: Path) -> None:
    """``usmp-opt -t c`` of the keyword case is one C99 and C++ file."""
    text = two_in_two_out(["default", "for"], ["int", "main"])
    module = run_pipeline(load(text), pipeline("for", pools="while:workspace"))
    (tmp_path / "model.c").write_text(single_source(module))
    for compiler, flags in (
        ("gcc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]),
        ("g++", list(CXXFLAGS)),
    ):
        built = subprocess.run(
            [compiler, *flags, "-c", str(tmp_path / "model.c"), "-o", "/dev/null"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert built.returncode == 0, built.stderr


def test_c_identifier_and_namer() -> None:
    assert c_identifier("default") == "default_"
    assert c_identifier("__x") == "v__x"
    assert c_identifier("_X") == "v_X"
    assert c_identifier("a-b.c$") == "a_b_c_"
    assert c_identifier("0a") == "_0a"
    assert c_identifier("x") == "x"
    namer = Namer(["x"])
    assert [namer.fresh(n) for n in ("x", "x", "for", "for_", "a-b", "a_b")] == [
        "x_1",
        "x_2",
        "for_",
        "for_1",
        "a_b",
        "a_b_1",
    ]
    assert {"class", "template", "default", "int8_t", "expf", "NULL"} <= RESERVED


def test_namer_is_linear_in_the_names_of_one_base() -> None:
    """The C printer names every value of a 10,000-operator function ``v``,
    ``v_1``, ...: each fresh name continues where the last one of its base
    stopped (it tried v, v_1, ... from the start: quadratic, 3 s of emit-c
    for a 20,000-operator chain), and a scope's names are free again once it
    closes, as before."""

    class Counted(set[str]):
        lookups = 0

        def __contains__(self, name: object) -> bool:
            Counted.lookups += 1
            return super().__contains__(name)

    namer = Namer()
    namer.used = Counted()
    names = [namer.fresh("v") for _ in range(3000)]
    assert names[:3] == ["v", "v_1", "v_2"] and names[-1] == "v_2999"
    assert Counted.lookups <= 2 * 3000, Counted.lookups
    outer = Counted(namer.used)
    assert namer.fresh("w") == "w"
    namer.used = outer  # the scope that took "w" closed
    assert namer.fresh("w") == "w" and namer.fresh("v") == "v_3000"


def test_pools_from_the_module_that_collide_once_mangled() -> None:
    """Pools of ``tir.pools`` (not checked by the option parsers) named
    ``a-b`` and ``a_b``: two arrays, planned apart, and the C runs clean."""
    text = two_in_two_out(["x", "y"], ["p", "q"])
    pools = (
        '#tir.pool_info<"a-b", workspace, size = 16>, #tir.pool_info<"a_b", workspace>'
    )
    module = f"builtin.module attributes {{tir.pools = [{pools}]}} {{\n{text}\n}}"
    c = single_source(run_pipeline(load(module), pipeline()))
    assert "tvmgen_default_a_b[" in c and "tvmgen_default_a_b_1[" in c
    check_runs(module, pipeline())


@pytest.mark.parametrize("name", ["a-b", "a.b", "a$b", "1a", "sr am"])
def test_pool_names_must_be_c_identifiers(name: str) -> None:
    with pytest.raises(PoolSpecError, match="a pool name is a C identifier"):
        parse_pools_option(f"{name}:workspace")
    with pytest.raises(PoolFlagError, match="a pool name is a C identifier"):
        parse_pool_flags(name, None, {}, 16, 16)
    with pytest.raises(PoolFlagError, match="a pool name is a C identifier"):
        split_pool_flags([f"--usmp-workspace-pool-{name}=size=16"])


def test_pool_names_that_differ_only_in_case_are_refused() -> None:
    with pytest.raises(PoolSpecError, match="differ only in letter case"):
        parse_pools_option("sram:workspace,SRAM:workspace")
    with pytest.raises(PoolFlagError, match="differ only in letter case"):
        parse_pool_flags("sram", "SRAM", {}, 16, 16)


def test_keyword_argument_of_the_user_command(tmp_path: Path) -> None:
    """``examples/chain.mlir`` with its input renamed ``%default``: ``usmp-opt
    ... -t c`` compiles as C99 and C++, and the model computes
    softmax(relu(x + bias)) under AddressSanitizer."""
    chain = Path(__file__).parent.parent / "examples" / "chain.mlir"
    text = (
        chain.read_text()
        .replace("%x: tensor", "%default: tensor")
        .replace("(%x, %bias)", "(%default, %bias)")
    )
    source = tmp_path / "kw.mlir"
    source.write_text(text)
    emitted = subprocess.run(
        ["usmp-opt", str(source), "-p", "aot-lower-main,usmp,convert-to-emitc"]
        + ["-t", "c"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert emitted.returncode == 0, emitted.stderr
    assert "float* default_;" in emitted.stdout
    (tmp_path / "model.c").write_text(emitted.stdout)
    for compiler, flags in (
        ("gcc", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]),
        ("g++", list(CXXFLAGS)),
    ):
        built = subprocess.run(
            [compiler, *flags, "-c", str(tmp_path / "model.c"), "-o", "/dev/null"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert built.returncode == 0, built.stderr
    x = np.linspace(-2, 3, 8, dtype=np.float32).reshape(1, 8)
    (got,) = run_module(text, [x], passes="aot-lower-main,usmp", sanitize=True)
    bias = np.array([0.5, -1.0, 0.25, 2.0, -0.5, 1.0, 0.0, -2.0], np.float32)
    r = np.maximum(x + bias, 0)
    e = np.exp(r - r.max())
    np.testing.assert_allclose(got, e / e.sum(), rtol=1e-6)
