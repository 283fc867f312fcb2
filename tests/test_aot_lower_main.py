"""aot-lower-main: the lowered main computes what the relay oracle computes.

Each graph is one relay ``main`` whose callees exist in two flavours with the
same symbol names: relay primitive functions (evaluated by the relay oracle,
``usmp.oracle.relay_interpreter``) and tir prim funcs with scf loops (what
aot-lower-main consumes). The tir module is lowered and run on xDSL's
interpreter (``usmp.oracle.tir_interpreter``); both must agree.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from usmp.dialects import new_context, tir
from usmp.oracle.relay_interpreter import evaluate
from usmp.oracle.tir_interpreter import TirExecutionError, run_tir_main
from usmp.passes import get_all_passes
from usmp.passes.aot_lower_main import AOTLowerMainPass

ROOT = Path(__file__).resolve().parent.parent


def parse(text: str) -> ModuleOp:
    module = Parser(new_context(), text).parse_module()
    module.verify()
    return module


def lower(module: ModuleOp, **options: str) -> ModuleOp:
    AOTLowerMainPass(**options).apply(new_context(), module)
    module.verify()
    return module


# ------------------------------------------------- callee libraries
#
# A callee is named <op>_<shape>, e.g. @add_2x4. Ops (f32, elementwise):
#   add, sub, mul: binary;  relu: unary;
#   split: unary, two results (relu(a), a * a).

_ARITY = {"add": 2, "sub": 2, "mul": 2, "relu": 1, "split": 1}
_CALLEE = re.compile(r"@(add|sub|mul|relu|split)_(\d+(?:x\d+)*)\b")


def _tensor(shape: Sequence[int]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _memref(shape: Sequence[int]) -> str:
    return f"memref<{'x'.join(map(str, shape))}xf32>"


def _relay_callee(op: str, shape: tuple[int, ...]) -> str:
    t = _tensor(shape)
    args = ", ".join(f"%a{i}: {t}" for i in range(_ARITY[op]))
    if op == "split":
        return (
            f"func.func @split_{_dims(shape)}({args}) -> tuple<{t}, {t}> "
            "attributes {relay.primitive} {\n"
            f"  %r = relay.relu %a0 : {t} -> {t}\n"
            f"  %s = relay.multiply %a0, %a0 : ({t}, {t}) -> {t}\n"
            f"  %p = relay.tuple(%r, %s) : ({t}, {t}) -> tuple<{t}, {t}>\n"
            f"  func.return %p : tuple<{t}, {t}>\n}}\n"
        )
    if op == "relu":
        body = f"%r = relay.relu %a0 : {t} -> {t}"
    else:
        relay_op = {"add": "add", "sub": "subtract", "mul": "multiply"}[op]
        body = f"%r = relay.{relay_op} %a0, %a1 : ({t}, {t}) -> {t}"
    return (
        f"func.func @{op}_{_dims(shape)}({args}) -> {t} "
        "attributes {relay.primitive} {\n"
        f"  {body}\n  func.return %r : {t}\n}}\n"
    )


def _tir_callee(op: str, shape: tuple[int, ...]) -> str:
    m = _memref(shape)
    n_in, n_out = _ARITY[op], 2 if op == "split" else 1
    args = [f"%i{k}: {m}" for k in range(n_in)] + [f"%o{k}: {m}" for k in range(n_out)]
    lines = [
        f"func.func @{op}_{_dims(shape)}({', '.join(args)}) "
        "attributes {tir.prim_func} {",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %zero = arith.constant 0.0 : f32",
    ]
    for d, n in enumerate(shape):
        lines.append(f"  %n{d} = arith.constant {n} : index")
    ivs = ", ".join(f"%iv{d}" for d in range(len(shape)))
    for d in range(len(shape)):
        lines.append(f"  scf.for %iv{d} = %c0 to %n{d} step %c1 {{")
    for k in range(n_in):
        lines.append(f"    %x{k} = memref.load %i{k}[{ivs}] : {m}")
    arith = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf"}
    if op in arith:
        results = [f"{arith[op]} %x0, %x1 : f32"]
    elif op == "relu":
        results = ["arith.maximumf %x0, %zero : f32"]
    else:
        results = ["arith.maximumf %x0, %zero : f32", "arith.mulf %x0, %x0 : f32"]
    for k, expr in enumerate(results):
        lines.append(f"    %y{k} = {expr}")
        lines.append(f"    memref.store %y{k}, %o{k}[{ivs}] : {m}")
    lines.extend("  }" for _ in shape)
    lines += ["  func.return", "}", ""]
    return "\n".join(lines)


def _dims(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape))


def with_callees(main: str, flavour: str) -> str:
    """``main`` plus a definition of every callee it names."""
    make = _relay_callee if flavour == "relay" else _tir_callee
    callees = dict.fromkeys(
        (op, tuple(int(d) for d in dims.split("x")))
        for op, dims in _CALLEE.findall(main)
    )
    return "".join(make(op, shape) for op, shape in callees) + main


def check_equivalent(
    main: str, inputs: Sequence[np.ndarray], **options: str
) -> tuple[ModuleOp, list[np.ndarray]]:
    """Lower the tir flavour of ``main``, run it, compare with the relay oracle."""
    expected = evaluate(parse(with_callees(main, "relay")), list(inputs))
    lowered = lower(parse(with_callees(main, "tir")), **options)
    got = run_tir_main(lowered, list(inputs))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=0)
    return lowered, got


def ops_named(module: ModuleOp, name: str) -> list[str]:
    return [op.name for op in module.walk() if op.name == name]


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


# ------------------------------------------------- the graphs

CHAIN = """
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = relay.constant dense<[[0.5, -1.0, 0.25, 2.0], [-0.5, 1.0, 0.0, -2.0]]> : tensor<2x4xf32>
  %0 = relay.call @add_2x4(%x, %c) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = relay.call @relu_2x4(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = relay.call @mul_2x4(%1, %1) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}
"""

DIAMOND = """
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = relay.call @sub_8(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = relay.call @relu_8(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = relay.call @mul_8(%0, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = relay.call @add_8(%1, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %3 : tensor<8xf32>
}
"""

TUPLE_OUTPUT = """
func.func @main(%x: tensor<2x4xf32>) -> tuple<tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>> {
  %0 = relay.call @split_2x4(%x) : (tensor<2x4xf32>) -> tuple<tensor<2x4xf32>, tensor<2x4xf32>>
  %1 = relay.tuple_get_item %0[1] : tuple<tensor<2x4xf32>, tensor<2x4xf32>> -> tensor<2x4xf32>
  %2 = relay.call @sub_2x4(%1, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = relay.tuple_get_item %0[0] : tuple<tensor<2x4xf32>, tensor<2x4xf32>> -> tensor<2x4xf32>
  %t = relay.tuple(%2, %3, %1) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tuple<tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>>
  func.return %t : tuple<tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>>
}
"""

REPEATED_USE = """
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = relay.call @relu_8(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = relay.call @mul_8(%0, %0) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = relay.call @add_8(%0, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = relay.call @sub_8(%2, %0) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %3, %0 : tensor<8xf32>, tensor<8xf32>
}
"""

CONSTANT_OUTPUT = """
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c = relay.constant dense<[1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0]> : tensor<8xf32>
  %0 = relay.call @mul_8(%x, %c) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %c, %0, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
"""

INPUT_AND_DUPLICATE_OUTPUTS = """
func.func @main(%x: tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>, tensor<8xf32>> {
  %0 = relay.call @relu_8(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %t = relay.tuple(%x, %0, %0) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>, tensor<8xf32>>
  func.return %t : tuple<tensor<8xf32>, tensor<8xf32>, tensor<8xf32>>
}
"""

RESHAPES = """
func.func @main(%x: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<2x4xf32>) {
  %0 = relay.call @relu_2x4(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = relay.reshape %0 : tensor<2x4xf32> -> tensor<8xf32>
  %2 = relay.call @mul_8(%1, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = relay.reshape %2 : tensor<8xf32> -> tensor<2x4xf32>
  %4 = relay.call @sub_2x4(%3, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = relay.reshape %4 : tensor<2x4xf32> -> tensor<8xf32>
  %6 = relay.reshape %x : tensor<2x4xf32> -> tensor<8xf32>
  %7 = relay.call @add_8(%5, %6) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %8 = relay.reshape %7 : tensor<8xf32> -> tensor<2x4xf32>
  func.return %5, %8 : tensor<8xf32>, tensor<2x4xf32>
}
"""

DEVICES = """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = relay.call @relu_8(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c">} : tensor<8xf32>
  %2 = relay.device_copy %1 {src = #device.virtual_device<"cpu", 0, target = "c">, dst = #device.virtual_device<"npu", 0, target = "npu">} : tensor<8xf32>
  %3 = relay.call @mul_8(%2, %2) {relay.virtual_device = #device.virtual_device<"npu", 0, target = "npu">} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %3 : tensor<8xf32>
}
"""

GRAPHS = {
    "chain": (CHAIN, [rand(2, 4)]),
    "diamond": (DIAMOND, [rand(8, seed=1), rand(8, seed=2)]),
    "tuple_output": (TUPLE_OUTPUT, [rand(2, 4, seed=3)]),
    "repeated_use": (REPEATED_USE, [rand(8, seed=4)]),
    "constant_output": (CONSTANT_OUTPUT, [rand(8, seed=5)]),
    "input_and_duplicate_outputs": (INPUT_AND_DUPLICATE_OUTPUTS, [rand(8, seed=6)]),
    "reshapes": (RESHAPES, [rand(2, 4, seed=7)]),
    "devices": (DEVICES, [rand(8, seed=8)]),
}


@pytest.mark.parametrize("graph", GRAPHS)
def test_lowered_main_matches_relay_oracle(graph: str) -> None:
    main, inputs = GRAPHS[graph]
    check_equivalent(main, inputs)


@pytest.mark.parametrize("call_type", tir.CALL_TYPES)
def test_call_types_compute_the_same(call_type: str) -> None:
    lowered, _ = check_equivalent(DIAMOND, GRAPHS["diamond"][1], call_type=call_type)
    calls = [op for op in lowered.walk() if isinstance(op, tir.CallOp)]
    assert len(calls) == 4
    assert {c.call_type.data for c in calls} == {call_type}


@pytest.mark.parametrize("graph", GRAPHS)
def test_lowered_main_is_what_usmp_plans(graph: str) -> None:
    """The lowered main is usmp's input: planned into pools (views at
    offsets, aliasing for real in the interpreter) it computes the same."""
    main, inputs = GRAPHS[graph]
    lowered, expected = check_equivalent(main, inputs)
    # the devices graph runs operators on an "npu" target: give it a pool
    pools = "shared:workspace:access=c/rw+npu/rw,flash:constant"
    usmp = get_all_passes()["usmp"]()(pools=pools)  # pyright: ignore[reportCallIssue]
    usmp.apply(new_context(), lowered)
    lowered.verify()
    assert not ops_named(lowered, "tir.allocate")
    assert not ops_named(lowered, "tir.allocate_const")
    for got, want in zip(run_tir_main(lowered, inputs), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_storage_ids_and_copies() -> None:
    """The diamond needs one storage per internal value; returned values take
    the output buffers; only inputs/constants/duplicates are copied."""
    diamond = lower(parse(with_callees(DIAMOND, "tir")))
    assert len(ops_named(diamond, "tir.allocate")) == 3
    assert not ops_named(diamond, "memref.copy")
    constants = lower(parse(with_callees(CONSTANT_OUTPUT, "tir")))
    assert len(ops_named(constants, "tir.allocate_const")) == 1
    assert not ops_named(constants, "tir.allocate")
    assert len(ops_named(constants, "memref.copy")) == 2
    reshapes = lower(parse(with_callees(RESHAPES, "tir")))
    # relu's and mul's results are internal; sub's and add's are returned.
    assert len(ops_named(reshapes, "tir.allocate")) == 2
    assert len(ops_named(reshapes, "tir.call")) == 4
    assert not ops_named(reshapes, "memref.copy")


def test_example_chain_computes_softmax_of_relu_of_biased_input() -> None:
    module = parse((ROOT / "examples" / "chain.mlir").read_text())
    lower(module)
    x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
    (got,) = run_tir_main(module, {"x": x})
    bias = np.array([0.5, -1.0, 0.25, 2.0, -0.5, 1.0, 0.0, -2.0], dtype=np.float32)
    r = np.maximum(x + bias, 0)
    e = np.exp(r - r.max())
    np.testing.assert_allclose(got, e / e.sum(), rtol=1e-6)


def test_lowering_twice_changes_nothing() -> None:
    once = lower(parse(with_callees(TUPLE_OUTPUT, "tir")))
    text = str(once)
    assert str(lower(once)) == text


# ------------------------------------------------- options


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"call_type": "fancy"},
            "call_type 'fancy' is not one of unpacked, packed, cpacked",
        ),
        ({"interface_api": "cpp"}, "interface_api 'cpp' is not one of c, packed"),
        ({"module_name": "my-model"}, "module_name 'my-model' is not a C identifier"),
        ({"module_name": ""}, "module_name '' is not a C identifier"),
    ],
)
def test_invalid_options_are_rejected(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        AOTLowerMainPass(**options)


def test_invalid_option_on_the_command_line() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "usmp.tools.usmp_opt",
            str(ROOT / "examples" / "chain.mlir"),
            "-p",
            "aot-lower-main{call_type=fast}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "call_type 'fast' is not one of unpacked, packed, cpacked" in result.stderr


def test_module_name_names_the_entry() -> None:
    module = lower(parse(with_callees(CHAIN, "tir")), module_name="kws")
    names = [op.sym_name.data for op in module.ops if isinstance(op, FuncOp)]
    assert "tvmgen_kws___tvm_main__" in names and "main" not in names


# ------------------------------------------------- the tir interpreter

POOLS = """
"memref.global"() <{sym_name = "flash", sym_visibility = "private", type = memref<8xi8>, initial_value = dense<[0, 0, -128, 63, 0, 0, 0, 64]> : tensor<8xi8>, constant}> : () -> ()
func.func @tvmgen_default___tvm_main__(%x: memref<4xf32>, %out: memref<2xf32>, %w: memref<2xf32>, %sram: memref<16xi8>, %flash: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["out", "w"], tir.pool_args = ["sram", "flash"]} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %a = memref.view %sram[%c0][] : memref<16xi8> to memref<4xf32>
  %b = memref.view %sram[%c4][] : memref<16xi8> to memref<2xf32>
  %k = memref.view %flash[%c0][] : memref<8xi8> to memref<2xf32>
  "memref.copy"(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "memref.copy"(%b, %out) : (memref<2xf32>, memref<2xf32>) -> ()
  "memref.copy"(%k, %w) : (memref<2xf32>, memref<2xf32>) -> ()
  func.return
}
"""


def test_views_into_pools_alias_and_constant_pools_hold_their_data() -> None:
    x = np.array([1.5, 2.5, 3.5, 4.5], dtype=np.float32)
    out, w = run_tir_main(parse(POOLS), [x])
    np.testing.assert_array_equal(out, x[1:3])  # %b overlaps %a from byte 4
    np.testing.assert_array_equal(w, [1.0, 2.0])  # little-endian f32 bytes


UNWRITTEN = """
func.func private @ext(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func @tvmgen_default___tvm_main__(%x: memref<4xf32>, %output: memref<4xf32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
  %s = tir.allocate {name_hint = "sid_0"} : memref<4xf32>
  tir.call @ext(%s, %output) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
"""


def test_unwritten_storage_reads_as_poison_and_externals_run() -> None:
    def ext(buffers: Sequence[np.ndarray]) -> None:
        source, destination = buffers
        destination[...] = source + 1

    (got,) = run_tir_main(
        parse(UNWRITTEN), [np.zeros(4, np.float32)], externals={"ext": ext}
    )
    assert np.isnan(got).all()
    with pytest.raises(TirExecutionError, match="@ext is only declared"):
        run_tir_main(parse(UNWRITTEN), [np.zeros(4, np.float32)])


FLOAT_OPS = """
func.func @tvmgen_default___tvm_main__(%x: memref<6xf64>, %r: memref<6xf64>, %t: memref<6xf32>, %e: memref<6xf64>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["r", "t", "e"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %x[%i] : memref<6xf64>
    %rounded = math.round %v : f64
    memref.store %rounded, %r[%i] : memref<6xf64>
    %narrow = arith.truncf %v : f64 to f32
    memref.store %narrow, %t[%i] : memref<6xf32>
    %wide = arith.extf %narrow : f32 to f64
    memref.store %wide, %e[%i] : memref<6xf64>
  }
  func.return
}
"""


def test_round_truncf_and_extf() -> None:
    x = np.array([0.5, -0.5, 2.5, -2.4999999, 0.49999999999999994, 1e40])
    r, t, e = run_tir_main(parse(FLOAT_OPS), [x])
    # math.round: ties away from zero, no floor(x + 0.5) double rounding
    np.testing.assert_array_equal(r, [1.0, -1.0, 3.0, -2.0, 0.0, 1e40])
    # truncf rounds to f32 (overflow to inf); extf widens exactly
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(t, x.astype(np.float32))
    assert t[-1] == np.inf and t[3] != x[3]
    np.testing.assert_array_equal(e, t.astype(np.float64))


def test_inputs_are_checked() -> None:
    module = lower(parse(with_callees(CHAIN, "tir")))
    with pytest.raises(TirExecutionError, match="0 inputs given, the model takes 1"):
        run_tir_main(module, [])
    with pytest.raises(TirExecutionError, match="do not match"):
        run_tir_main(module, {"y": rand(2, 4)})
    with pytest.raises(TirExecutionError, match="shape"):
        run_tir_main(module, [rand(8)])
